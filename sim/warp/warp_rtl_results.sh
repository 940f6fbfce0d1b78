#!/usr/bin/env bash
# Throughput with and without the Warp Engine on the RTL (the paper's Table 4), beside the cycle model: for every
# example of build/examples/xdp, its `hwxdp gen` trace of PACKETS packets runs on the reference machine (`interp`,
# which names the paths), on the hXDP module's RTL alone (`hxdp-rtl`), on the engine and the module in Verilog
# (`warp-rtl`), and on their cycle models (`hxdp`, `warp`), the rules fitted to the trace (`--warp-profile`) as in
# scripts/warp-results.sh. Prints one Markdown table (docs/results.md, "Program warping on the RTL"): per program the
# most frequent path (verdict, exit instruction, instructions: what the reference machine shows of it) with its mean
# cycles and Mpps at 250 MHz on each machine, and the packets whose cycles differ between warp-rtl and warp.
# Usage: sim/warp/warp_rtl_results.sh [PACKETS]   (run `make build examples` first; HWXDP names another binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
packets=${1:-200}
hwxdp=${HWXDP:-target/release/hwxdp}
. scripts/workload.sh
work=build/warp-rtl
mkdir -p "$work"
for obj in build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  profile=(--warp-profile "$dir/trace.pcap")
  for backend in interp hxdp hxdp-rtl; do
    "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/$backend" --backend "$backend" > "$dir/$backend.txt"
  done
  for backend in warp warp-rtl; do
    "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/$backend" --backend "$backend" "${profile[@]}" > "$dir/$backend.txt"
  done
done
python3 - "$work" <<'PY'
import glob, json, os, sys
work = sys.argv[1]
PAPER = {"l2_acl": "5.43 -> 9.26", "router": "2.66 -> 3.47", "tunnel": "2.21 -> 2.84", "nat": "1.89 -> 2.34",
         "katran_lb": "0.90 -> 2.08"}
MHZ = 250.0
def lines(path):
    return [json.loads(l) for l in open(path)]
def mean(run, pkts):
    return sum(run[i]["cycles"] for i in pkts) / len(pkts)
def pair(run_a, run_b, pkts):
    x, y = mean(run_a, pkts), mean(run_b, pkts)
    return f"{x:.1f} -> {y:.1f} | {MHZ / x:.2f} -> {MHZ / y:.2f} ({x / y:.2f}x)"
print("| program | paper, Mpps (Table 4) | most frequent path: packets, verdict | RTL cycles hxdp-rtl -> warp-rtl | "
      "RTL Mpps at 250 MHz | model cycles hxdp -> warp | model Mpps | packets with warp-rtl cycles != warp |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
for d in sorted(glob.glob(f"{work}/*/warp-rtl/stats.json")):
    base = os.path.dirname(os.path.dirname(d))
    prog = os.path.basename(base)
    it, hr, wr, hm, wm = (lines(f"{base}/{b}/packets.jsonl") for b in ("interp", "hxdp-rtl", "warp-rtl", "hxdp", "warp"))
    paths = {}
    for i, p in enumerate(it):
        paths.setdefault((p["verdict"], (p["exit"] or {}).get("insn"), p["insns"]), []).append(i)
    (verdict, _, _), top = max(paths.items(), key=lambda kv: len(kv[1]))
    differ = sum(1 for a, b in zip(wr, wm) if a["cycles"] != b["cycles"])
    print(f"| {prog} | {PAPER.get(prog, '-')} | {len(top)}, {verdict[4:]} | {pair(hr, wr, top)} | "
          f"{pair(hm, wm, top)} | {differ} of {len(wr)} |")
PY
