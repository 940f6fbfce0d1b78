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
reports = json.load(open(sys.argv[1]))
for r in reports if isinstance(reports, list) else [reports]:
    k, i = r["backends"]["kernel"], r["backends"]["interp"]
    print(f"| {r['program']} | {i['insns_per_packet']:.1f} | {k['ns_per_packet']:.1f} | "
          f"{i['ns_per_packet']:.1f} | {i['ns_per_insn']:.2f} | {i['over_kernel']:.1f}x |")
PY
done
