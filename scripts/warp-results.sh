#!/usr/bin/env bash
# Program warping on every example: `hwxdp gen` writes its trace, `hwxdp compile --target warp --pcap` warps the
# program with the paper's engine (Table 5), checks the warped run against the plain one packet by packet and counts
# the processor's eBPF instructions per path. Prints two Markdown tables (the ones in docs/results.md): the engine
# each program needs (the paper's Table 2) and the instructions per path without and with warping (its Figure 5),
# the paths of each program by frequency in the trace, at most TOP of them. A third table runs each trace (the DPI
# examples' too) on the hXDP cycle model alone (`--backend hxdp`) and behind the Warp Engine (`--backend warp`) and
# gives cycles per packet and Mpps at 250 MHz on the most frequent path and on the most frequent DROP path (the paper's
# Table 4), and the bundles the entry points cost.
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
for obj in build/examples/xdp/*.o build/examples/dpi/*.o; do
  name=$(basename "$obj" .o)
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  for backend in interp hxdp warp; do
    "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/$backend" --backend "$backend" > "$dir/$backend.txt"
  done
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

# Throughput (the paper's Table 4). A path is what the reference machine shows of it: verdict, exit instruction and
# instructions executed; its packets' mean cycles on each backend give Mpps at 250 MHz.
PAPER = {"l2_acl": "L2 ACL 5.43 -> 9.26", "router": "Router 2.66 -> 3.47", "tunnel": "Tunnel 2.21 -> 2.84",
         "nat": "DNAT 1.89 -> 2.34", "katran_lb": "Katran 0.90 -> 2.08",
         "snort": "Suricata 3.52 -> 10.86; drop 4.31 -> 82.87"}
MHZ = 250.0
def lines(path):
    return [json.loads(l) for l in open(path)]
def mpps(c):
    return MHZ / c if c > 0 else 0.0
def cell(pkts, hx, wp):
    a = sum(hx[i]["cycles"] for i in pkts) / len(pkts)
    b = sum(wp[i]["cycles"] for i in pkts) / len(pkts)
    return f"{a:.1f} -> {b:.1f} | {mpps(a):.2f} -> {mpps(b):.2f} ({mpps(b) / mpps(a):.2f}x)"
print()
print("| program | paper, Mpps (Table 4) | most frequent path: packets, verdict | cycles/packet hxdp -> warp | "
      "Mpps at 250 MHz hxdp -> warp | most frequent DROP path: packets | cycles hxdp -> warp | Mpps hxdp -> warp | "
      "trace Mpps hxdp -> warp | entry points | bundles without -> with |")
print("| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
for d in sorted(glob.glob(f"{work}/*/warp/stats.json")):
    base = os.path.dirname(os.path.dirname(d))
    prog = os.path.basename(base)
    it, hx, wp = (lines(f"{base}/{b}/packets.jsonl") for b in ("interp", "hxdp", "warp"))
    paths = {}
    for i, p in enumerate(it):
        key = (p["verdict"], (p["exit"] or {}).get("insn"), p["insns"])
        paths.setdefault(key, []).append(i)
    ranked = sorted(paths.items(), key=lambda kv: -len(kv[1]))
    (verdict, _, _), top_pkts = ranked[0]
    drops = [kv for kv in ranked if kv[0][0] == "XDP_DROP"]
    if drops:
        dc = cell(drops[0][1], hx, wp).split(" | ")
        drop = f"{len(drops[0][1])} | {dc[0]} | {dc[1]}"
    else:
        drop = "- | - | -"
    stats = {b: json.load(open(f"{base}/{b}/stats.json")) for b in ("hxdp", "warp")}
    mean = lambda b: stats[b]["cycles_per_packet"]["mean"]
    f = stats["warp"]["figures"]
    print(f"| {prog} | {PAPER.get(prog, '-')} | {len(top_pkts)}, {verdict[4:]} | {cell(top_pkts, hx, wp)} | {drop} | "
          f"{mpps(mean('hxdp')):.2f} -> {mpps(mean('warp')):.2f} | {f['entry_points']} | "
          f"{f['bundles_plain']} -> {f['bundles']} |")
PY
