#!/usr/bin/env bash
# The eBPFlow cycle model's throughput table for docs/results.md ("eBPFlow (cycle model)"): every example's Mpps on
# one port of the NIC (--ports 1) with 1 and 4 engines, at 64, 512 and 1500-byte frames (hwxdp gen --frame-bytes:
# the example's own trace, frames longer than the size left out, the rest padded), at the thesis's 166.67 MHz,
# against 10 Gb/s line rate (14.88 Mpps at 64 B: 84 bytes a frame on the wire with preamble and gap). Also the
# engines per port each example needs at 64 B for 100 Gb/s (148.8 Mpps), the firewall against the thesis's
# 6.95 Gb/s (one port, 4 engines) and the mean coprocessor wait.
#
# Usage: scripts/ebpflow-results.sh [OUT.md]   (needs build/examples: make examples; runs $HWXDP, else the newest
# build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# $HWXDP, else the newer of the release and debug builds.
hwxdp=${HWXDP:-$(ls -t "$root"/target/release/hwxdp "$root"/target/debug/hwxdp 2>/dev/null | head -1)}
[ -x "$hwxdp" ] || { echo "build hwxdp first (cargo build --release -p hwxdp)" >&2; exit 2; }
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
} >"$out"
