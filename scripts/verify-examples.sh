#!/usr/bin/env bash
# The long differential run: every example with a trace of N packets (default 20000) from seed S (default 7), through
# the kernel and the reference machine with `hwxdp verify`. Needs root; run `make build examples` first.
# Usage: scripts/verify-examples.sh [PACKETS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-20000}
seed=${2:-7}
hwxdp=target/release/hwxdp
. scripts/workload.sh
failed=0
for obj in build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  dir="build/verify/$name"
  workload "$obj" "$dir" "$packets" --seed "$seed"
  "$hwxdp" verify "$obj" "${extra[@]}" || failed=$((failed + 1))
done
[ "$failed" -eq 0 ] || { echo "$failed programs differ" >&2; exit 1; }
