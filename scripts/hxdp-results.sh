#!/usr/bin/env bash
# The hXDP tables of docs/results.md: per example (eBPF instructions, bundles, static IPC, cycles per packet on its
# `hwxdp gen` trace, Mpps at 156.25 and 250 MHz), the lane sweep, and each compiler pass alone (with the paper's three
# programs, examples/xdp/hxdp_*.c, first).
# Usage: scripts/hxdp-results.sh [PACKETS]   (run `make build examples` first; needs python3)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1200}
hwxdp=target/release/hwxdp
. scripts/workload.sh
work=build/hxdp-results
mkdir -p "$work"
passes=(bounds zeroing byte-loads three-operand six-byte exit rename code-motion speculation parallel-branches)
all=$(IFS=,; echo "${passes[*]}")

# bundles OBJ [compile flags...]: the entry program's bundle count.
bundles() {
  local obj=$1; shift
  "$hwxdp" compile --target hxdp "$obj" -o "$work/compile" "$@" | sed -n 1p | sed -E 's/.* ([0-9]+) bundles.*/\1/'
}

echo "| program | eBPF insns | bundles | static IPC | cycles/packet (mean) | Mpps @156.25 MHz | Mpps @250 MHz |"
echo "|---|---|---|---|---|---|---|"
for obj in build/examples/xdp/*.o; do
  name=$(basename "$obj" .o)
  dir="$work/$name"
  workload "$obj" "$dir" "$packets"
  "$hwxdp" run "$obj" "${extra[@]}" --backend hxdp -o "$dir/run" > /dev/null
  report=$("$hwxdp" compile --target hxdp "$obj" -o "$dir/compile" | sed -n 1p)
  python3 - "$dir/run/stats.json" "$report" <<'PY'
import json, re, sys
stats = json.load(open(sys.argv[1]))
mpps = {m["clock_mhz"]: m["mpps"] for m in stats["mpps"]}
m = re.match(r"(\S+): (\d+) eBPF instructions.*; (\d+) bundles of \d+ lanes; static IPC ([\d.]+)", sys.argv[2])
name, insns, bundles, ipc = m.groups()
print(f"| {name} | {insns} | {bundles} | {ipc} | {stats['cycles_per_packet']['mean']:.1f} | "
      f"{mpps[156.25]:.2f} | {mpps[250.0]:.2f} |")
PY
done

selected=(hxdp_parse_drop hxdp_macswap_tx hxdp_firewall xdp1_drop xdp2_macswap firewall katran_lb tunnel nat router vlan_filter)
echo
echo "Lane sweep (bundles of the entry program):"
echo
echo "| program | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 |"
echo "|---|---|---|---|---|---|---|---|---|"
for name in "${selected[@]}"; do
  row="| $name |"
  for lanes in 1 2 3 4 5 6 7 8; do
    row+=" $(bundles "build/examples/xdp/$name.o" --lanes "$lanes") |"
  done
  echo "$row"
done

echo
echo "Each pass alone (4 lanes), bundles; 'none' = every pass off:"
echo
header="| program | none |"; rule="|---|---|"
for p in "${passes[@]}"; do header+=" $p |"; rule+="---|"; done
echo "$header all |"; echo "$rule---|"
for name in "${selected[@]}"; do
  obj="build/examples/xdp/$name.o"
  row="| $name | $(bundles "$obj" --disable "$all") |"
  for p in "${passes[@]}"; do
    others=$(printf '%s\n' "${passes[@]}" | grep -vx "$p" | paste -sd,)
    row+=" $(bundles "$obj" --disable "$others") |"
  done
  echo "$row $(bundles "$obj") |"
done
