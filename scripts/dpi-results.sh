#!/usr/bin/env bash
# The DPI examples' cost per payload byte: for each example of examples/dpi and frames of 64, 512 and 1500 bytes
# (IPv4, TCP to port 80, a payload of lowercase letters that no rule matches, so the fast scan alone runs), the
# reference machine's instructions per packet and per payload byte, the marginal instructions per byte between the
# 64- and 1500-byte frames, and the kernel JIT's ns per packet (`hwxdp bench`, root).
# Usage: scripts/dpi-results.sh [PACKETS]   (run `make build examples` first; needs python3 and jq; HWXDP=path overrides
# target/release/hwxdp). Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
HWXDP=${HWXDP:-target/release/hwxdp}
PACKETS=${1:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for size in 64 512 1500; do
    python3 - "$work/f$size.pcap" "$size" "$PACKETS" <<'PY'
import random, struct, sys
path, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(size)
with open(path, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i in range(count):
        payload = bytes(random.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(size - 54))
        tcp = struct.pack("!HHIIBBHHH", 40000, 80, 1, 0, 0x50, 0x18, 65535, 0, 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        frame = bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]) + b"\x08\x00" + ip + tcp
        f.write(struct.pack("<IIII", 1700000000, i, len(frame), len(frame)) + frame)
PY
done

echo "| example | states | frame bytes | payload bytes | instructions/packet | per payload byte | marginal per byte | kernel ns/packet |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for obj in build/examples/dpi/*.o; do
    name=$(basename "$obj" .o)
    states=$("$HWXDP" dpi "examples/dpi/$name.rules" -o "$work/$name.o" | sed -n 's/.* \([0-9]*\) states (.*/\1/p' | head -n 1)
    first=""
    for size in 64 512 1500; do
        json=$("$HWXDP" bench "$obj" --pcap "$work/f$size.pcap" --json)
        insns=$(jq -r '.backends.interp.insns_per_packet' <<<"$json")
        ns=$(jq -r '.backends.kernel.ns_per_packet' <<<"$json")
        payload=$((size - 54))
        if [ -z "$first" ]; then first="$insns $payload"; fi
        read -r insns0 payload0 <<<"$first"
        marginal=$(awk -v a="$insns" -v b="$insns0" -v p="$payload" -v q="$payload0" 'BEGIN { if (p > q) printf "%.2f", (a - b) / (p - q); else printf "—" }')
        per=$(awk -v a="$insns" -v p="$payload" 'BEGIN { printf "%.2f", a / p }')
        printf '| %s | %s | %d | %d | %.0f | %s | %s | %.0f |\n' "$name" "$states" "$size" "$payload" "$insns" "$per" "$marginal" "$ns"
    done
done
