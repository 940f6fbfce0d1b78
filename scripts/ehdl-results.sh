#!/usr/bin/env bash
# The eHDL front-end table of docs/results.md: per example program, eBPF instructions, pipeline ops, stages, maximum
# and mean ILP, NOP and helper stages, and live-state bits summed over stage boundaries with state pruning on and off.
# Usage: scripts/ehdl-results.sh [DATA_WIDTH_BITS]   (run `make build examples` first; needs jq; HWXDP=path overrides
# the binary, default target/release/hwxdp)
set -euo pipefail
cd "$(dirname "$0")/.."
width=${1:-512}
hwxdp=${HWXDP:-target/release/hwxdp}
work=build/ehdl-results
mkdir -p "$work"

echo "| program | eBPF insns | ops | stages | max ILP | mean ILP | NOP stages | helper stages | dynamic packet accesses | state bits, pruned | state bits, unpruned | pruned/unpruned |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for obj in build/examples/xdp/*.o; do
  # Every program of the object (tail_dispatch has three), by the symbols the disassembly names.
  programs=$("$hwxdp" disasm "$obj" | sed -n -E 's/^[0-9a-f]+ <([A-Za-z_][A-Za-z0-9_]*)>:$/\1/p' | sort -u)
  for p in $programs; do
    if ! "$hwxdp" compile --target ehdl --data-width "$width" -p "$p" "$obj" -o "$work" > /dev/null 2>&1; then
      continue  # a bpf-to-bpf callee, not a program
    fi
    jq -r '.summary | "| \(.program) | \(.ebpf_insns) | \(.ops) | \(.stages) | \(.max_ilp) | \(.mean_ilp * 100 | round / 100) | \(.nop_stages) | \(.helper_stages) | \(.dynamic_packet_accesses) | \(.state_bits_pruned) | \(.state_bits_unpruned) | \(.state_bits_pruned * 1000 / .state_bits_unpruned | round / 10)% |"' \
      "$work/$p.ehdl.json"
  done
done
