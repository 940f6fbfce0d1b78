#!/usr/bin/env bash
# The eHDL resource table of docs/results.md ("eHDL: resources with and without state pruning"): per example
# program whose Verilog generates, `hwxdp synth --target ehdl --device DEVICE` (Yosys synth_xilinx out of context,
# -noiopad) with state pruning on and off, one run at a time with a time limit, then LUT/FF/BRAM/URAM, the
# unpruned/pruned ratios, the stage flip-flops the generator wrote (before synthesis removes unread and constant
# ones) and Yosys' CPU time; a second table gives every figure with its share of the device, the logic levels of the
# longest path, the Fmax estimate from them (docs/rtl.md, "Synthesis") and the verdicts.
# Usage: scripts/ehdl-synth-results.sh [DATA_WIDTH_BITS]   (run `make build examples` first; needs jq)
# HWXDP overrides the binary (default target/release/hwxdp), WORK the directory of the runs (default build/ehdl-synth),
# LIMIT the seconds per run (default 1200), DEVICE the device (default xcu50), PROGRAMS the
# list ("object:program ..."). A run whose JSON is already in build/ehdl-synth/, or that hit the limit (recorded in
# NAME-VARIANT-WIDTH.timeout, "timeout" in the table), is not repeated (FORCE=1 repeats it). TABLE_ONLY=1 prints
# the table from the runs already there without starting any. VARIANTS="pruned" (or "unpruned") runs one variant only,
# e.g. to learn first whether every program synthesizes at all.
set -euo pipefail
cd "$(dirname "$0")/.."
width=${1:-512}
hwxdp=${HWXDP:-target/release/hwxdp}
limit=${LIMIT:-1200}
device=${DEVICE:-xcu50}
work=${WORK:-build/ehdl-synth}
mkdir -p "$work"
# Smallest first (pipeline stages and map bytes), so that a long run holds up as little as possible.
programs=${PROGRAMS:-"tail_dispatch:tail_ipv6 ethertype_counter:ethertype_counter redirect_fwd:redirect_fwd \
tail_dispatch:tail_ipv4 tail_dispatch:tail_dispatch icmp_reply:icmp_reply l2_acl:l2_acl rxq_counter:rxq_counter \
xdp1_drop:xdp1_drop xdp2_macswap:xdp2_macswap tunnel:tunnel katran_lb:katran_lb fib_forward:fib_forward \
router:router rate_limiter:rate_limiter firewall:firewall vlan_filter:vlan_filter nat:nat"}

for item in $programs; do
  [ "${TABLE_ONLY:-0}" = 1 ] && break
  obj=build/examples/xdp/${item%%:*}.o
  p=${item#*:}
  for variant in ${VARIANTS:-pruned unpruned}; do
    out=$work/$p-$variant-$width.json
    if { [ -s "$out" ] || [ -e "$work/$p-$variant-$width.timeout" ]; } && [ "${FORCE:-0}" != 1 ]; then
      continue
    fi
    rm -f "$work/$p-$variant-$width.timeout" "$work/$p-$variant-$width.failed"
    flags=()
    [ "$variant" = unpruned ] && flags+=(--no-prune)
    echo "synthesizing $p ($variant, $width bits)" >&2
    status=0
    timeout "$limit" "$hwxdp" synth --target ehdl "$obj" -p "$p" --data-width "$width" --device "$device" \
      "${flags[@]}" -o "$out" \
      > "$work/$p-$variant-$width.txt" 2>&1 || status=$?
    if [ "$status" = 124 ]; then
      echo "$limit" > "$work/$p-$variant-$width.timeout"
      rm -f "$out"
    elif [ "$status" != 0 ]; then
      cp "$work/$p-$variant-$width.txt" "$work/$p-$variant-$width.failed"
      rm -f "$out"
    fi
  done
done

# One cell: a field of a run, "timeout", "failed" (the reason in NAME-VARIANT.failed) or "not run".
cell() {
  local base=$work/$1-$2-$width
  if [ -s "$base.json" ]; then jq -r ".$3" "$base.json"
  elif [ -e "$base.timeout" ]; then echo "timeout ($(cat "$base.timeout") s)"
  elif [ -e "$base.failed" ]; then echo "failed"
  else echo "not run"; fi
}
ratio() {
  if [[ "$1" =~ ^[0-9.]+$ && "$2" =~ ^[0-9.]+$ ]] && [ "$(echo "$1 > 0" | bc)" = 1 ]; then
    printf "%+.1f%%" "$(echo "($2 / $1 - 1) * 100" | bc -l)"
  else
    echo "-"
  fi
}

# Yosys' CPU time from its log (the wall clock depends on what else the machine runs).
cpu() {
  local log=$work/$1-$2-$width.yosys.log
  if [ -s "$work/$1-$2-$width.json" ]; then
    sed -n -E 's/.*CPU: user ([0-9.]+)s.*/\1/p' "$log" | tail -1
  else echo "-"; fi
}

echo "| program | stages | LUT pruned | LUT unpruned | FF pruned | FF unpruned | BRAM36 pruned | BRAM36 unpruned | URAM pruned | URAM unpruned | LUT | FF | BRAM | state FFs generated (pruned / unpruned) | Yosys CPU s (pruned / unpruned) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for item in $programs; do
  p=${item#*:}
  lp=$(cell "$p" pruned lut); lu=$(cell "$p" unpruned lut)
  fp=$(cell "$p" pruned ff); fu=$(cell "$p" unpruned ff)
  bp=$(cell "$p" pruned bram36); bu=$(cell "$p" unpruned bram36)
  up=$(cell "$p" pruned uram); uu=$(cell "$p" unpruned uram)
  st=$(cat "$work/$p-pruned-$width.json" "$work/$p-unpruned-$width.json" 2>/dev/null | jq -r .stages | head -1 || true)
  st=${st:--}
  gp=$(cell "$p" pruned state_flops); gu=$(cell "$p" unpruned state_flops)
  echo "| $p | $st | $lp | $lu | $fp | $fu | $bp | $bu | $up | $uu | $(ratio "$lp" "$lu") | $(ratio "$fp" "$fu") | $(ratio "$bp" "$bu") | $gp / $gu | $(cpu "$p" pruned) / $(cpu "$p" unpruned) |"
done

# Both variants with each figure's share of the device (from the runs' JSON, `share_percent`), the logic levels of
# the longest path, the Fmax estimate and whether it fits and meets 250 MHz; where each map's values live.
pct() {
  local base=$work/$1-$2-$width.json
  if [ -s "$base" ]; then printf "%s (%.1f%%)" "$(jq -r ".$3" "$base")" "$(jq -r ".share_percent.$4" "$base")"
  else cell "$1" "$2" "$3"; fi
}
verdict() {
  local base=$work/$1-$2-$width.json
  if [ -s "$base" ]; then
    jq -r '(if .fits then "fits" else "does not fit" end) + ", " +
           (if .meets_clock then "meets" else "under" end) + " \(.target_clock_mhz) MHz"' "$base"
  else echo "-"; fi
}
echo
echo "Shares of the $device (\`hwxdp synth --device $device\`, out of context):"
echo
echo "| program | variant | LUT | FF | BRAM36 | URAM | logic levels | Fmax estimate (MHz) | verdict | maps |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for item in $programs; do
  p=${item#*:}
  for variant in ${VARIANTS:-pruned unpruned}; do
    base=$work/$p-$variant-$width.json
    maps=$( [ -s "$base" ] && jq -r '[.maps[]? | "\(.map): \(.storage)"] | join(", ")' "$base" || echo "-")
    echo "| $p | $variant | $(pct "$p" "$variant" lut LUT) | $(pct "$p" "$variant" ff FF) | \
$(pct "$p" "$variant" bram36 BRAM) | $(pct "$p" "$variant" uram URAM) | $(cell "$p" "$variant" logic_levels) | \
$(cell "$p" "$variant" fmax_estimate_mhz) | $(verdict "$p" "$variant") | ${maps:--} |"
  done
done
