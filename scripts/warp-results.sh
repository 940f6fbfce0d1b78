#!/usr/bin/env bash
# Program warping on every example: `hwxdp gen` writes its trace, `hwxdp compile --target warp --pcap` warps the
# program with the paper's engine (Table 5), checks the warped run against the plain one packet by packet and counts
# the processor's eBPF instructions per path. Prints two Markdown tables (the ones in docs/results.md): the engine
# each program needs (the paper's Table 2) and the instructions per path without and with warping (its Figure 5),
# the paths of each program by frequency in the trace, at most TOP of them. A third table runs each trace (the DPI
# examples' too) on the hXDP cycle model alone (`--backend hxdp`) and behind the Warp Engine (`--backend warp`) and
# gives cycles per packet and Mpps at 250 MHz on the most frequent path and on the most frequent DROP path (the paper's
# Table 4), and the bundles the entry points cost. The rules of `compile --pcap` and of these `--backend warp` runs
# are fitted to the trace (`--warp-profile`: TCAM entries spent on its frequent paths). A fourth table gives the
# processor's instructions per packet behind rules fitted without and with the profile (`--backend warp-interp`),
# the paper's Figure 5 beside them, and a fifth Mpps at 250 MHz with one engine feeding N = 1, 2, 4, 8 hXDP cores
# (`--backend warp --cores N`). A sixth gives the paper's Table 4 paths by the paper's own selection beside its
# speed-ups. WARP_EXAMPLES="nat router ..." limits the runs to those examples (build/warp keeps the others' results).
# Usage: [HWXDP=path/to/hwxdp] scripts/warp-results.sh [PACKETS] [TOP]   (run `make build examples` first)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1200}
top=${2:-4}
hwxdp=${HWXDP:-target/release/hwxdp}
. scripts/workload.sh
work=build/warp
mkdir -p "$work"
selected() { [ -z "${WARP_EXAMPLES:-}" ] || [[ " $WARP_EXAMPLES " == *" $1 "* ]]; }
for obj in build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  selected "$name" || continue
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  "$hwxdp" compile --target warp "$obj" -o "$dir/out" "${extra[@]}" > "$dir/compile.txt"
done
for obj in build/examples/xdp/*.o build/examples/dpi/*.o; do
  name=$(basename "$obj" .o)
  selected "$name" || continue
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  for backend in interp hxdp; do
    "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/$backend" --backend "$backend" > "$dir/$backend.txt"
  done
  profile=(--warp-profile "$dir/trace.pcap")
  "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/warp" --backend warp "${profile[@]}" > "$dir/warp.txt"
  "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/warp-interp-plain" --backend warp-interp > "$dir/warp-interp-plain.txt"
  "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/warp-interp" --backend warp-interp "${profile[@]}" > "$dir/warp-interp.txt"
  for cores in 2 4 8; do
    "$hwxdp" run "$obj" "${extra[@]}" -o "$dir/warp-cores$cores" --backend warp "${profile[@]}" --cores "$cores" \
      > "$dir/warp-cores$cores.txt"
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
    # The tool's own rate: the engine's pipelined packet a clock against the core (packets_per_cycle) for warp.
    trace_mpps = lambda b: (MHZ * stats[b]["packets_per_cycle"] if stats[b].get("packets_per_cycle")
                            else mpps(stats[b]["cycles_per_packet"]["mean"]))
    f = stats["warp"]["figures"]
    print(f"| {prog} | {PAPER.get(prog, '-')} | {len(top_pkts)}, {verdict[4:]} | {cell(top_pkts, hx, wp)} | {drop} | "
          f"{trace_mpps('hxdp'):.2f} -> {trace_mpps('warp'):.2f} | {f['entry_points']} | "
          f"{f['bundles_plain']} -> {f['bundles']} |")

# The paper's Table 4 path by the paper's own selection (section 6.4), on the example that stands for each of its
# programs: the path of a successful lookup for L2 ACL, DNAT and Katran; the most common forwarded path for Router
# (IPv4) and Tunnel (IPv4 encapsulated, XDP_TX); for Suricata (its XDP bypass filter: vlan_filter) the worst case for
# warping, the path of at least 1% of the packets with the most hXDP cycles, and a drop path the engine decides
# alone (the paper's "100% instruction reduction" row). "speed-up" is ours against the paper's.
SELECT = [("l2_acl", "L2 ACL [#1]", 9.26 / 5.43, "XDP_PASS", "frequent"),
          ("router", "Router [#7]", 3.47 / 2.66, "XDP_TX", "frequent"),
          ("tunnel", "Tunnel [#4]", 2.84 / 2.21, "XDP_TX", "frequent"),
          ("nat", "DNAT [#2]", 2.34 / 1.89, "XDP_TX", "frequent"),
          ("katran_lb", "Katran [#11]", 2.08 / 0.90, "XDP_TX", "frequent"),
          ("vlan_filter", "Suricata [#46]", 10.86 / 3.52, None, "worst"),
          ("vlan_filter", "Suricata [#23] (DROP)", 82.87 / 4.31, "XDP_DROP", "engine")]
print()
print("| paper's program [path] | paper's speed-up | our example: path (packets, verdict, eBPF insns) | "
      "cycles/packet hxdp -> warp | Mpps at 250 MHz hxdp -> warp | our speed-up | beats the paper's |")
print("| --- | ---: | --- | ---: | ---: | ---: | --- |")
for prog, label, paper_x, verdict, how in SELECT:
    base = f"{work}/{prog}"
    if not os.path.exists(f"{base}/warp/packets.jsonl"):
        continue
    it, hx, wp = (lines(f"{base}/{b}/packets.jsonl") for b in ("interp", "hxdp", "warp"))
    paths = {}
    for i, p in enumerate(it):
        paths.setdefault((p["verdict"], (p["exit"] or {}).get("insn"), p["insns"]), []).append(i)
    mean = lambda run, pk: sum(run[i]["cycles"] for i in pk) / len(pk)
    cands = [(k, pk) for k, pk in paths.items() if verdict is None or k[0] == verdict]
    if how == "frequent":
        cands.sort(key=lambda kv: -len(kv[1]))
    elif how == "worst":
        cands = [kv for kv in cands if len(kv[1]) * 100 >= len(it)]
        cands.sort(key=lambda kv: -mean(hx, kv[1]))
    else:
        cands = [kv for kv in cands if mean(wp, kv[1]) <= 1.0]
        cands.sort(key=lambda kv: -len(kv[1]))
    if not cands:
        print(f"| {label} | {paper_x:.2f}x | {prog}: no such path in the trace | - | - | - | - |")
        continue
    (v, _, n), pk = cands[0]
    a, b = mean(hx, pk), mean(wp, pk)
    ours = mpps(b) / mpps(a)
    print(f"| {label} | {paper_x:.2f}x | {prog}: {len(pk)}, {v[4:]}, {n} | {a:.1f} -> {b:.1f} | "
          f"{mpps(a):.2f} -> {mpps(b):.2f} | {ours:.2f}x | {'yes' if ours > paper_x else 'no'} |")

# Instructions per packet behind rules fitted without and with the trace's profile (warp-interp), per path.
FIG5 = {"router": "Router 51-57%", "tunnel": "Tunnel 28-33%", "nat": "DNAT 21-31%", "katran_lb": "Katran 16.8-34.7%",
        "snort": "Suricata 82-100%"}
print()
print("| program | paper (Figure 5) | insns/packet plain | warped, unprofiled -> profiled | reduction | "
      "most frequent paths: packets, plain: unprofiled -> profiled |")
print("| --- | --- | ---: | ---: | ---: | --- |")
for d in sorted(glob.glob(f"{work}/*/warp-interp/stats.json")):
    base = os.path.dirname(os.path.dirname(d))
    prog = os.path.basename(base)
    it, un, pr = (lines(f"{base}/{b}/packets.jsonl") for b in ("interp", "warp-interp-plain", "warp-interp"))
    paths = {}
    for i, p in enumerate(it):
        paths.setdefault((p["verdict"], (p["exit"] or {}).get("insn"), p["insns"]), []).append(i)
    ranked = sorted(paths.items(), key=lambda kv: -len(kv[1]))
    mean = lambda run, pk: sum(run[i]["insns"] for i in pk) / len(pk)
    allp = range(len(it))
    pl, a, b = mean(it, allp), mean(un, allp), mean(pr, allp)
    red = lambda x: 100 * (pl - x) / pl if pl else 0.0
    cells = []
    for (_, _, n), pk in ranked[:top]:
        x, y = mean(un, pk), mean(pr, pk)
        cells.append(f"{len(pk)}, {n}: {x:.0f} -> {y:.0f} ({100 * (n - x) / n:.0f}% -> {100 * (n - y) / n:.0f}%)")
    print(f"| {prog} | {FIG5.get(prog, '-')} | {pl:.1f} | {a:.1f} -> {b:.1f} | {red(a):.1f}% -> {red(b):.1f}% | "
          f"{'; '.join(cells)} |")

# One engine feeding N cores (shared maps, map effects in packet order): Mpps at 250 MHz over the whole trace.
print()
print("| program | core cycles/packet (mean over the trace) | Mpps N=1 | N=2 | N=4 | N=8 | N=8, strict round robin |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for d in sorted(glob.glob(f"{work}/*/warp-cores8/stats.json")):
    base = os.path.dirname(os.path.dirname(d))
    prog = os.path.basename(base)
    runs = [json.load(open(f"{base}/{b}/stats.json")) for b in ("warp", "warp-cores2", "warp-cores4", "warp-cores8")]
    rate = lambda st: MHZ * st["packets_per_cycle"]
    rr = MHZ * runs[-1]["figures"]["round_robin_packets_per_cycle"]
    print(f"| {prog} | {runs[0]['figures']['core_cycles']:.1f} | " + " | ".join(f"{rate(r):.2f}" for r in runs)
          + f" | {rr:.2f} |")
PY
