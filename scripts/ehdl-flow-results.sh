#!/usr/bin/env bash
# The eHDL hazard table of docs/results.md: each stateful example's generated pipeline (512 bits) under Verilator
# (`hwxdp run --backend ehdl-rtl`) on minimum-size traffic (frames of at most 64 bytes: one beat each) over 50,000
# Zipf-popular flows and over a single flow, beside the eHDL paper's appendix-A model for the same pipeline
# (`hwxdp compile --target ehdl` writes it as <program>.hazards.json).
# Usage: scripts/ehdl-flow-results.sh [PACKETS]   (run `make build examples` first; needs jq; HWXDP=path overrides
# the binary, default target/release/hwxdp; PROGRAMS="nat katran_lb" measures only those; HAZARDS=flush runs the
# pipelines with flush evaluation and replay, and the sixth column counts flushes per packet instead). A program
# without stall checks (e.g. PROGRAMS="l2_acl router") is measured too, with "-" for the model's columns.
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-2000}
hwxdp=${HWXDP:-target/release/hwxdp}
work=build/ehdl-flow-results
mkdir -p "$work"

hazards=${HAZARDS:-stall}
if [ "$hazards" = flush ]; then per="flushes per packet"; else per="stall cycles per packet"; fi
echo "| program | L | K (paper) | trace | packets per cycle | $per | Mpps @250 MHz | model: our stalls | model: paper's flush |"
echo "|---|---|---|---|---|---|---|---|---|"
# The model columns of a program without stall checks.
echo '{"hazard_distance": "-", "paper_flushed_stages": "-"}' > "$work/no-model.json"
for p in ${PROGRAMS:-ethertype_counter xdp1_drop xdp2_macswap vlan_filter firewall rate_limiter nat katran_lb fib_forward}; do
  obj=build/examples/xdp/$p.o
  "$hwxdp" compile --target ehdl "$obj" -o "$work/compile" > /dev/null 2>&1 || { echo "| $p | refused by the generator | | | | | | | |"; continue; }
  model="$work/compile/$p.hazards.json"
  # A program without stall checks is measured the same way; it has no hazard model to set beside it.
  [ -f "$model" ] || model="$work/no-model.json"
  for trace in zipf one; do
    flows=$([ $trace = zipf ] && echo 50000 || echo 1)
    dir="$work/$p-$trace"
    "$hwxdp" gen "$obj" --flows "$flows" -n "$packets" --max-frame-bytes 64 -o "$dir" > /dev/null
    maps=()
    [ -f "$dir/maps.json" ] && maps=(--maps "$dir/maps.json")
    [ -f "$dir/routes.json" ] && maps+=(--routes "$dir/routes.json")
    "$hwxdp" run "$obj" --backend ehdl-rtl --hazards "$hazards" --pcap "$dir/trace.pcap" "${maps[@]}" -o "$dir/run" \
      > /dev/null
    case_key=$([ $trace = zipf ] && echo zipf || echo single_flow)
    label=$([ $trace = zipf ] && echo "50k Zipf flows" || echo "1 flow")
    jq -r --slurpfile m "$model" --arg p "$p" --arg tr "$label" --arg k "$case_key" --arg hz "$hazards" '
      (.figures + {packets_per_cycle}) as $e | $m[0] as $h | $h[$k] as $c |
      (if $hz == "flush" then $e.flushes else $e.stall_cycles end) as $per |
      "| \($p) | \($h.hazard_distance) | \($h.paper_flushed_stages) | \($tr) | \($e.packets_per_cycle * 1000 | round / 1000) | \(($per / .packets) * 100 | round / 100) | \($e.packets_per_cycle * 250 | round) | \(if $c then "\($c.stall_mpps | round) Mpps" else "-" end) | \(if $c then "\($c.flush_mpps | round) Mpps" else "-" end) |"' \
      "$dir/run/stats.json"
  done
done
