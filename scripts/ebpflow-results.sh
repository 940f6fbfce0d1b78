#!/usr/bin/env bash
# The eBPFlow cycle model's throughput table for docs/results.md ("eBPFlow (cycle model)"): every example's Mpps on
# one port of the NIC (--ports 1) with 1 and 4 engines, at 64, 512 and 1500-byte frames (hwxdp gen --frame-bytes:
# the example's own trace, frames longer than the size left out, the rest padded), at the thesis's 166.67 MHz,
# against 10 Gb/s line rate (14.88 Mpps at 64 B: 84 bytes a frame on the wire with preamble and gap). Also the
# engines per port each example needs at 64 B for 100 Gb/s (148.8 Mpps), the firewall against the thesis's
# 6.95 Gb/s (one port, 4 engines) and the mean coprocessor wait.
#
# Then the thesis's network functions (Table 5.1: examples/ebpflow and the regex ones of examples/dpi) on traces of
# their main path written here (nf_trace: pktgen-like UDP or TCP frames of exactly 64, 512 or 1500 bytes, payload
# filling the frame, all on port 0 of a 2-port NIC so that what a function forwards leaves by port 1): Mpps and Gb/s
# on the wire per port with 1 and 4 engines, the engines per port for 100 Gb/s, where an engine's cycles go, and the
# stateful firewall on one port with 4 engines against the thesis's 6.95 Gb/s.
#
# --rtl-swaps: 1000 program swaps under traffic on the NIC's RTL (--backend ebpflow-rtl, 2 ports of 2 engines, 2000
# packets of lpm_forward's trace over the two ports, swapping between lpm_forward and wire every second packet):
# packets lost, packets that ran another program than the one meant (each packet against the program it was meant
# to run, alone on the reference machine), the swaps made and the NIC cycles against the same trace without swaps;
# then verify against the kernel when bpf() is there.
#
# Usage: scripts/ebpflow-results.sh [--nf | --rtl-swaps] [OUT.md]   (--nf: the network functions' table only; needs
# build/examples: make examples; runs $HWXDP, else the newest build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# $HWXDP, else the newer of the release and debug builds.
hwxdp=${HWXDP:-$(ls -t "$root"/target/release/hwxdp "$root"/target/debug/hwxdp 2>/dev/null | head -1)}
[ -x "$hwxdp" ] || { echo "build hwxdp first (cargo build --release -p hwxdp)" >&2; exit 2; }
nf_only=false
rtl_swaps=false
if [ "${1:-}" = --nf ]; then nf_only=true; shift; fi
if [ "${1:-}" = --rtl-swaps ]; then rtl_swaps=true; shift; fi
out=${1:-/dev/stdout}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mhz=166.67
packets=2000

# Mpps of port 0 in stats.json of run DIR.
rate() {
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%.2f" % (s["figures"]["port0_packets_per_cycle"]*float(sys.argv[2])))' "$1/stats.json" "$mhz"
}
field() {
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%.1f" % s["figures"][sys.argv[2]])' "$1/stats.json" "$2"
}

# nf_trace NF BYTES OUT.pcap: N frames of exactly BYTES bytes (classic pcap, all on one port) along NF's main path:
# wire, lpm_forward (destinations over its routes), ddos (UDP from 256 sources, under the budget), stateful_firewall
# (outbound TCP of 256 connections from the inside port), bittorrent/sql_* (TCP to port 80 with an HTTP request
# padded with text to the frame's end, no attack: the whole payload is scanned).
nf_trace() {
  python3 - "$1" "$2" "$3" "$packets" <<'PY'
import struct, sys
nf, size, path, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def frame(i, proto, src, dst, sport, dport, text):
    l4len = 8 if proto == 17 else 20
    room = size - 14 - 20 - l4len
    payload = (text * (room // max(len(text), 1) + 1))[:room]
    if proto == 17:
        l4 = struct.pack("!HHHH", sport, dport, 8 + room, 0) + payload
    else:
        l4 = struct.pack("!HHIIBBHHH", sport, dport, i, 0, 0x50, 0x18, 0xffff, 0, 0) + payload
    pseudo = bytes(src) + bytes(dst) + struct.pack("!BBH", 0, proto, len(l4))
    c = csum(pseudo + l4)
    at = 6 if proto == 17 else 16
    l4 = l4[:at] + struct.pack("!H", c or 0xffff) + l4[at + 2:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), i & 0xffff, 0x4000, 64, proto, 0, bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]) + b"\x08\x00" + ip + l4

http = b"GET /index.html?user=42 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: bench/1.0\r\nAccept: text/html\r\n\r\n"
routes = [[10, 1, 2, 3], [10, 200, 0, 1], [10, 70, 0, 1], [203, 0, 5, 5]]
out = [struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)]
for i in range(n):
    if nf == "lpm_forward":
        f = frame(i, 17, [192, 0, 2, i & 0xff], routes[i % 4], 1000, 2000, b"x")
    elif nf == "ddos":
        f = frame(i, 17, [198, 51, i % 256 // 16, i % 16], [10, 0, 0, 1], 40000, 53, b"x")
    elif nf == "stateful_firewall":
        f = frame(i, 6, [10, 0, i % 256, 1], [203, 0, 113, 1], 10000 + i % 256, 80, b"x")
    elif nf in ("bittorrent", "sql_tautology", "sql_sleep"):
        f = frame(i, 6, [192, 0, 2, 1], [10, 0, 0, 80], 40000, 80, http[:-2] + b"a" * 2000)
    else:
        f = frame(i, 17, [10, 0, 0, 1], [10, 0, 0, 2], 1, 2, b"x")
    assert len(f) == size, (nf, len(f))
    out.append(struct.pack("<IIII", 1700000000, i, len(f), len(f)) + f)
open(path, "wb").write(b"".join(out))
PY
}

# figure RUNDIR EXPR: EXPR of stats.json's s (a dict) and the clock m, printed.
figure() {
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]+"/stats.json")); m=float(sys.argv[3]); print(eval(sys.argv[2]))' "$1" "$2" "$mhz"
}

# The network functions' table (see the header).
nf_table() {
  echo "| function | 64 B, 1 engine | 64 B, 4 engines | 512 B, 1 | 512 B, 4 | 1500 B, 1 | 1500 B, 4 | 64 B, 4 engines: of 10 Gb/s | engines for 100 Gb/s at 64 B | instructions a packet | cycles a packet (64 B, 1 engine) | of which coprocessor | DM_FIFO wait | coprocessor cap (64 B) |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  local nf obj size g dir args fw=""
  for nf in wire stateful_firewall lpm_forward ddos bittorrent sql_tautology sql_sleep; do
    obj=$root/build/examples/ebpflow/$nf.o
    [ -f "$obj" ] || obj=$root/build/examples/dpi/$nf.o
    args=()
    [ "$nf" = lpm_forward ] && args=(--maps "$root/examples/ebpflow/lpm_forward.maps.json")
    local row="| $nf"
    for size in 64 512 1500; do
      dir=$work/nf-$nf-$size
      mkdir -p "$dir"
      nf_trace "$nf" "$size" "$dir/trace.pcap"
      for g in 1 4; do
        "$hwxdp" run "$obj" --pcap "$dir/trace.pcap" "${args[@]}" --backend ebpflow --ports 2 \
          --engines-per-port "$g" --clock-mhz "$mhz" -o "$dir/run$g" >/dev/null
        row="$row | $(figure "$dir/run$g" "'%.2f Mpps, %.2f Gb/s' % (s['figures']['port0_packets_per_cycle']*m, s['figures']['port0_packets_per_cycle']*m*($size+20)*8/1000)")"
      done
    done
    local d1=$work/nf-$nf-64/run1 d4=$work/nf-$nf-64/run4
    row="$row | $(figure "$d4" "'%.0f %%' % (100*s['figures']['port0_packets_per_cycle']*m/14.88)")"
    row="$row | $(figure "$d1" "__import__('math').ceil(148.81/(s['figures']['port0_packets_per_cycle']*m))")"
    row="$row | $(figure "$d1" "'%.1f' % s['insns_per_packet']['mean']")"
    row="$row | $(figure "$d1" "'%.1f' % s['cycles_per_packet']['mean']")"
    row="$row | $(figure "$d1" "'%.1f' % s['figures']['coproc_wait']")"
    row="$row | $(figure "$d1" "'%.1f' % s['figures']['fifo_wait']")"
    row="$row | $(figure "$d1" "'%.1f Mpps' % (m/s['figures']['coproc_wait']) if s['figures']['coproc_wait'] else '-'")"
    echo "$row |"
    [ "$nf" = stateful_firewall ] && fw=$(figure "$d4" "s['figures']['port0_packets_per_cycle']*m")
  done
  echo
  python3 -c "m=$fw; print('Stateful firewall (examples/ebpflow), one port in, 4 engines, 64-byte frames: %.2f Mpps = %.2f Gb/s on the wire (84 bytes a frame), %.2f Gb/s of frames; the thesis: 6.95 Gb/s (hXDP 4.36, x86 4.97).' % (m, m*84*8/1000, m*64*8/1000))"
}

# 1000 swaps between lpm_forward and wire under traffic on the RTL.
rtl_swaps_report() {
  local lpm=$root/build/examples/ebpflow/lpm_forward.o wire=$root/build/examples/ebpflow/wire.o
  local maps=$root/examples/ebpflow/lpm_forward.maps.json d=$work/rtl-swaps
  local nic=(--backend ebpflow-rtl --ports 2 --engines-per-port 2)
  "$hwxdp" gen "$lpm" -o "$d" -n "$packets" --ports 2 >/dev/null
  local trace=(--pcap "$d/trace.pcapng")
  "$hwxdp" run "$lpm" "${trace[@]}" --maps "$maps" -o "$d/lpm" >/dev/null
  "$hwxdp" run "$wire" "${trace[@]}" -o "$d/wire" >/dev/null
  # Swap i (1..1000) at packet 2i - 1: to wire when i is odd, back to lpm_forward when even.
  local swaps=() i
  for i in $(seq 1 1000); do
    if [ $((i % 2)) = 1 ]; then swaps+=(--swap-at "$((2 * i - 1)):$wire"); else swaps+=(--swap-at "$((2 * i - 1)):$lpm"); fi
  done
  local start=$SECONDS
  "$hwxdp" run "$lpm" "${trace[@]}" --maps "$maps" "${nic[@]}" "${swaps[@]}" -o "$d/swapped" >/dev/null
  local took=$((SECONDS - start))
  "$hwxdp" run "$lpm" "${trace[@]}" --maps "$maps" "${nic[@]}" -o "$d/plain" >/dev/null
  python3 - "$d" "$packets" "$took" <<'PY'
import json, sys
d, n, took = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def log(run):
    return [json.loads(l) for l in open(f"{d}/{run}/packets.jsonl")]
def what(p):
    return (p["verdict"], (p.get("redirect") or {}).get("ifindex"))
alone = {"lpm": log("lpm"), "wire": log("wire")}
got = log("swapped")
meant = lambda k: "wire" if k >= 1 and ((k + 1) // 2) % 2 == 1 else "lpm"
wrong = sum(1 for k, p in enumerate(got) if what(p) != what(alone[meant(k)][k]))
differ = sum(1 for k in range(n) if what(alone["lpm"][k]) != what(alone["wire"][k]))
s = json.load(open(f"{d}/swapped/stats.json"))["figures"]
plain = json.load(open(f"{d}/plain/stats.json"))["figures"]
print(f"1000 swaps under traffic on the RTL (--backend ebpflow-rtl, 2 ports x 2 engines, {n} packets, lpm_forward <-> wire, "
      f"the programs differ on {differ} packets): {int(s['swaps'])} swaps made, {n - len(got)} packets lost, {wrong} on "
      f"another program than meant; {int(s['nic_cycles'])} NIC cycles against {int(plain['nic_cycles'])} without swaps; "
      f"{took} s for the run.")
PY
  if "$hwxdp" verify "$lpm" "${trace[@]}" --maps "$maps" "${nic[@]}" "${swaps[@]}" >"$d/verify.txt" 2>&1; then
    grep -o '[0-9]* packets identical[^;]*' "$d/verify.txt" | head -1 | sed 's/^/verify against the kernel: /'
  else
    echo "verify against the kernel failed or bpf() is not available:"; tail -3 "$d/verify.txt"
  fi
}

if $rtl_swaps; then rtl_swaps_report >"$out"; exit 0; fi
if $nf_only; then nf_table >"$out"; exit 0; fi
{
echo "| example | 64 B, 1 engine | 64 B, 4 engines | 512 B, 1 | 512 B, 4 | 1500 B, 1 | 1500 B, 4 | 64 B: of 10 Gb/s line rate (4 engines) | engines for 100 Gb/s at 64 B | cycles a packet (64 B) | coprocessor wait (64 B, 4 engines) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for obj in "$root"/build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  extra=()
  [ "$name" = rxq_counter ] && extra=(--ifindex 5 --rx-queues 128)
  row="| $name"
  declare -A r=()
  for size in 64 512 1500; do
    dir=$work/$name-$size
    if ! "$hwxdp" gen "$obj" -o "$dir" -n "$packets" --frame-bytes "$size" >/dev/null 2>&1; then
      r[$size,1]="-"; r[$size,4]="-"; continue
    fi
    args=(--pcap "$dir/trace.pcap")
    [ -f "$dir/maps.json" ] && args+=(--maps "$dir/maps.json")
    [ -f "$dir/routes.json" ] && args+=(--routes "$dir/routes.json")
    for g in 1 4; do
      "$hwxdp" run "$obj" "${args[@]}" "${extra[@]}" --backend ebpflow --ports 1 --engines-per-port "$g" \
        --clock-mhz "$mhz" -o "$dir/run$g" >/dev/null
      r[$size,$g]=$(rate "$dir/run$g")
    done
  done
  d64=$work/$name-64
  line="-"; need="-"; cyc="-"; wait="-"
  if [ "${r[64,4]}" != "-" ]; then
    line=$(python3 -c "print('%.0f %%' % (100*${r[64,4]}/14.88))")
    # Engines for 148.8 Mpps at 64 B: from one engine's rate (the coprocessor shared by them all may cap it).
    need=$(python3 -c "import math; print(math.ceil(148.8/${r[64,1]}))")
    cyc=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%.1f" % s["cycles_per_packet"]["mean"])' "$d64/run1/stats.json")
    wait=$(field "$d64/run4" coproc_wait)
  fi
  echo "$row | ${r[64,1]} | ${r[64,4]} | ${r[512,1]} | ${r[512,4]} | ${r[1500,1]} | ${r[1500,4]} | $line | $need | $cyc | $wait |"
  if [ "$name" = firewall ] && [ "${r[64,4]}" != "-" ]; then
    fw=${r[64,4]}
  fi
done
if [ -n "${fw:-}" ]; then
  echo
  python3 -c "m=$fw; print('Firewall, one port, 4 engines, 64-byte frames: %.2f Mpps = %.2f Gb/s on the wire (84 bytes a frame), %.2f Gb/s of frames; the thesis: 6.95 Gb/s (hXDP 4.36, x86 4.97).' % (m, m*84*8/1000, m*64*8/1000))"
fi
echo
nf_table
} >"$out"
