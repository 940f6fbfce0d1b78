#!/usr/bin/env bash
# Program warping on every example: `hwxdp gen` writes its trace, `hwxdp compile --target warp --pcap` warps the
# program with the paper's engine (Table 5), checks the warped run against the plain one packet by packet and counts
# the processor's eBPF instructions per path. Prints two Markdown tables (the ones in docs/results.md): the engine
# each program needs (the paper's Table 2) and the instructions per path without and with warping (its Figure 5),
# the paths of each program by frequency in the trace, at most TOP of them.
# Usage: scripts/warp-results.sh [PACKETS] [TOP]   (run `make build examples` first)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1200}
top=${2:-4}
hwxdp=target/release/hwxdp
. scripts/workload.sh
work=build/warp
mkdir -p "$work"
for obj in build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  "$hwxdp" compile --target warp "$obj" -o "$dir/out" "${extra[@]}" > "$dir/compile.txt"
done
python3 - "$work" "$top" <<'PY'
import glob, json, os, sys
work, top = sys.argv[1], int(sys.argv[2])
reports = sorted(glob.glob(f"{work}/*/out/*.report.json"))
print("| program | eBPF insns | rules (verdicts) | TCAM entries | key bytes | extractors | max stack bytes | restore points | walk depth | limited by |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for path in reports:
    r = json.load(open(path))
    prog = os.path.basename(path)[: -len(".report.json")]
    depth = "all" if r["depth"] is None else r["depth"]
    limited = r["limited_by"][0].split(" (")[0] if r["limited_by"] else "-"
    print(f"| {prog} | {r['insns']} | {r['rules']} ({r['verdict_rules']}) | {r['tcam_entries']} | {r['key_bytes']} | "
          f"{r['key_extractors']} | {r['stack_bytes']} | {len(r['restore_slots'])} | {depth} | {limited} |")
print()
print("| program | packets | insns/packet plain | warped | reduction | most frequent paths: packets, plain -> warped insns (reduction) |")
print("| --- | ---: | ---: | ---: | ---: | --- |")
for path in sorted(glob.glob(f"{work}/*/out/*.paths.json")):
    prog = os.path.basename(path)[: -len(".paths.json")]
    paths = json.load(open(path))
    n = sum(p["packets"] for p in paths)
    plain = sum(p["plain"] * p["packets"] for p in paths) / n
    warped = sum(p["warped"] * p["packets"] for p in paths) / n
    cells = [f"{p['packets']}: {p['plain']} -> {p['warped']} ({p['reduction_percent']:.0f}%)" for p in paths[:top]]
    print(f"| {prog} | {n} | {plain:.1f} | {warped:.1f} | {100 * (plain - warped) / plain:.1f}% | {'; '.join(cells)} |")
PY
