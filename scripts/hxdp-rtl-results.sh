#!/usr/bin/env bash
# The "hXDP RTL: cycles per packet" table of docs/results.md: per example, on its `hwxdp gen` trace, the mean cycles
# per packet of the whole hXDP module in Verilator (`run --backend hxdp-rtl`) beside the cycle model's
# (`run --backend hxdp`), their difference, Mpps at 156.25 and 250 MHz from the RTL's cycles, and the kernel JIT's
# packets per second (`bench --json`, BPF_PROG_TEST_RUN on this machine; "-" where the kernel refuses to run it).
# The RTL simulates at roughly 0.3 ms per cycle, so traces are short (PACKETS, default 200).
# Usage: scripts/hxdp-rtl-results.sh [PACKETS] [EXAMPLE...]   (run `make build examples` first; needs jq; HWXDP=path
# overrides the binary, default target/release/hwxdp)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-200}
shift || true
hwxdp=${HWXDP:-target/release/hwxdp}
. scripts/workload.sh
work=build/hxdp-rtl-results
mkdir -p "$work"

if [ $# -gt 0 ]; then
  objs=()
  for name in "$@"; do objs+=("build/examples/xdp/$name.o"); done
else
  objs=(build/examples/xdp/*.o)
fi

echo "| program | packets | RTL cycles/packet | model cycles/packet | RTL vs model | RTL Mpps @156.25 MHz | RTL Mpps @250 MHz | kernel JIT Mpps |"
echo "|---|---|---|---|---|---|---|---|"
for obj in "${objs[@]}"; do
  name=$(basename "$obj" .o)
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  "$hwxdp" run "$obj" "${extra[@]}" --backend hxdp -o "$dir/model" > /dev/null
  "$hwxdp" run "$obj" "${extra[@]}" --backend hxdp-rtl -o "$dir/rtl" > /dev/null
  # The kernel's figure only (the reference machine's timing is not used): a short minimum run.
  if "$hwxdp" bench "$obj" "${extra[@]}" --json --min-ms 1 --kernel-samples 50 > "$dir/bench.json" 2> "$dir/bench.err"; then
    kernel=$(jq -r ".backends.kernel.packets_per_second // empty" "$dir/bench.json")
  else
    kernel=
  fi
  jq -r --arg name "$name" --arg kernel "$kernel" -n \
    --slurpfile rtl "$dir/rtl/stats.json" --slurpfile model "$dir/model/stats.json" '
    def r2: . * 100 | round / 100;
    def r1: . * 10 | round / 10;
    ($rtl[0].cycles_per_packet.mean) as $r | ($model[0].cycles_per_packet.mean) as $m |
    "| \($name) | \($rtl[0].packets) | \($r | r1) | \($m | r1) | \((($r - $m) / $m * 100) | r1)% | " +
    "\(156.25 / $r | r2) | \(250 / $r | r2) | " +
    (if $kernel == "" then "-" else ($kernel | tonumber / 1e6 | r2 | tostring) end) + " |"'
done
