#!/usr/bin/env bash
# The DPI examples' cost per payload byte: for each example of examples/dpi and frames of 64, 512 and 1500 bytes
# (IPv4, TCP to port 80, a payload of lowercase letters that no rule matches, so the fast scan alone runs), the
# reference machine's instructions per packet and per scanned payload byte, the marginal instructions per scanned byte
# from the 64-byte frame on, and the kernel JIT's ns per packet (`hwxdp bench`, root), in the table form and in the
# branch form, both at the default scan limit of 1500 bytes (an example whose automaton is too big for the branch
# form, snort's, has the table form only).
# Usage: scripts/dpi-results.sh [PACKETS]   (run `make build` first; needs python3 and jq; HWXDP=path overrides
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

echo "| example | form | states (live) | scan limit | frame bytes | payload bytes | instructions/packet | per payload byte | marginal per byte | kernel ns/packet |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for rules in examples/dpi/*.rules; do
    name=$(basename "$rules" .rules)
    for form in table branch; do
        obj="$work/$name-$form.o"
        built=""
        # Older generators limited the branch form's scan (docs/dpi.md): try 1500, then less.
        for limit in 1500 600 256 128; do
            if report=$("$HWXDP" dpi "$rules" -o "$obj" --form "$form" --max-payload "$limit" 2>/dev/null); then built=$limit; break; fi
        done
        [ -n "$built" ] || continue
        states=$(sed -n 's/.* \([0-9]*\) states (.*/\1/p' <<<"$report" | head -n 1)
        live=$(sed -n 's/.*form, \([0-9]*\) live states.*/\1/p' <<<"$report" | head -n 1)
        first=""
        for size in 64 512 1500; do
            json=$("$HWXDP" bench "$obj" --pcap "$work/f$size.pcap" --json)
            insns=$(jq -r '.backends.interp.insns_per_packet' <<<"$json")
            ns=$(jq -r '.backends.kernel.ns_per_packet' <<<"$json")
            payload=$((size - 54))
            scanned=$((payload < built ? payload : built))
            if [ -z "$first" ]; then first="$insns $scanned"; fi
            read -r insns0 scanned0 <<<"$first"
            marginal=$(awk -v a="$insns" -v b="$insns0" -v p="$scanned" -v q="$scanned0" 'BEGIN { if (p > q) printf "%.2f", (a - b) / (p - q); else printf "—" }')
            per=$(awk -v a="$insns" -v p="$scanned" 'BEGIN { printf "%.2f", a / p }')
            printf '| %s | %s | %s (%s) | %d | %d | %d | %.0f | %s | %s | %.0f |\n' "$name" "$form" "$states" "$live" "$built" "$size" "$payload" "$insns" "$per" "$marginal" "$ns"
        done
    done
done
