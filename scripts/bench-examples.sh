#!/usr/bin/env bash
# Benchmarks every example: `hwxdp gen` writes its trace, `hwxdp bench --json` times the kernel's JIT and the reference
# machine on it side by side. Prints a Markdown table (the one in docs/results.md). Needs root for the kernel half.
# Usage: scripts/bench-examples.sh [PACKETS]   (run `make build examples` first)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1200}
hwxdp=target/release/hwxdp
. scripts/workload.sh
work=build/bench
mkdir -p "$work"
echo "| program | insns/packet | kernel ns/packet | interp ns/packet | interp ns/insn | interp / kernel |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for obj in build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  "$hwxdp" bench "$obj" "${extra[@]}" --json > "$dir/bench.json"
  python3 - "$dir/bench.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"| {r['program']} | {r['insns_per_packet']:.1f} | {r['kernel_ns_per_packet']:.1f} | "
      f"{r['interp_ns_per_packet']:.1f} | {r['interp_ns_per_insn']:.2f} | {r['interp_over_kernel']:.1f}x |")
PY
done
