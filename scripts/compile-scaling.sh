#!/bin/bash
# Compile time of `hwxdp compile --target hxdp|ehdl|warp` on generated programs of 1k, 4k, 16k, 64k and 1M
# instructions, straight-line and branchy (issue 30): CPU time (user + system), its growth per 4 times the
# instructions, peak RSS and exit status, as the markdown table of docs/results.md ("Compiler scaling").
#
# The programs are the shapes of tests/compile_scaling.rs (`hostile_common::generated_program`), written here by a
# few lines of Python: a 64-byte bounds check, then the body, then r0 = r5 & 3; exit. Straight-line: ALU operations
# on r5-r9 with a packet byte load every 16. Branchy: a chain of diamonds (if rX > K goto +1; rX += rY; rY ^= K).
#
# Usage: scripts/compile-scaling.sh [SIZES...]   (default 1000 4000 16000 64000 1000000)
# Env: HWXDP (binary, default target/release/hwxdp), TARGETS (default "hxdp ehdl warp"), TIMEOUT (s, default 600).
set -u
cd "$(dirname "$0")/.."
HWXDP=${HWXDP:-target/release/hwxdp}
TARGETS=${TARGETS:-hxdp ehdl warp}
TIMEOUT=${TIMEOUT:-600}
SIZES=${*:-1000 4000 16000 64000 1000000}
work=$(mktemp -d /tmp/hwxdp-compile-scaling.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -x "$HWXDP" ] || { echo "no $HWXDP: cargo build --release -p hwxdp" >&2; exit 1; }

cat > "$work/gen.py" <<'EOF'
import struct, sys
def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack('<BBhi', code, (src << 4) | dst, off, imm)
def program(n, shape):
    regs = [5, 6, 7, 8, 9]
    pro = [insn(0x61, 2, 1, 0, 0), insn(0x61, 3, 1, 4, 0), insn(0xbf, 4, 2), insn(0x07, 4, 0, 0, 64),
           insn(0xb7, 0, 0, 0, 2)]
    pro += [insn(0xb7, r, 0, 0, r) for r in regs]
    body, k = [], 0
    while len(body) + len(pro) + 4 < n:
        d, s, imm = regs[k % 5], regs[(k * 3 + 1) % 5], k & 0xffff
        if shape == 'branchy':
            body += [insn(0x25, d, 0, 1, k & 0xff), insn(0x0f, d, s), insn(0xa7, s, 0, 0, imm)]
        else:
            body.append([insn(0x07, d, 0, 0, imm), insn(0x0f, d, s), insn(0xaf, d, s), insn(0xa7, d, 0, 0, imm),
                         insn(0x5f, d, s)][k % 5])
        if k % 16 == 15:
            body.append(insn(0x71, d, 2, k % 60, 0))
        k += 1
    pro += [insn(0xbd, 4, 3, 1, 0), insn(0x95)]  # short frames: if r4 <= r3 goto +1; exit (r0 = XDP_PASS)
    return b''.join(pro + body + [insn(0xbf, 0, 5), insn(0x57, 0, 0, 0, 3), insn(0x95)])
def strtab(names):
    out, offs = b'\0', {}
    for s in names:
        offs[s] = len(out)
        out += s.encode() + b'\0'
    return out, offs
def elf(code, name='prog'):
    shstr, so = strtab(['.shstrtab', '.strtab', '.symtab', 'license', 'xdp'])
    st, to = strtab([name])
    sym = b'\0' * 24 + struct.pack('<IBBHQQ', to[name], 0x12, 0, 5, 0, len(code))
    secs = [(0, 0, 0, b'', 0, 0, 1, 0), (so['.shstrtab'], 3, 0, shstr, 0, 0, 1, 0),
            (so['.strtab'], 3, 0, st, 0, 0, 1, 0), (so['.symtab'], 2, 0, sym, 2, 1, 8, 24),
            (so['license'], 1, 3, b'GPL\0', 0, 0, 1, 0), (so['xdp'], 1, 6, code, 0, 0, 8, 0)]
    out, offs = bytearray(64), []
    for s in secs:
        while len(out) % 8:
            out.append(0)
        offs.append(len(out))
        out += s[3]
    while len(out) % 8:
        out.append(0)
    shoff = len(out)
    for s, o in zip(secs, offs):
        out += struct.pack('<IIQQQQIIQQ', s[0], s[1], s[2], 0, o if s[1] else 0, len(s[3]), s[4], s[5], s[6], s[7])
    out[:64] = b'\x7fELF' + bytes([2, 1, 1]) + b'\0' * 9 + struct.pack(
        '<HHIQQQIHHHHHH', 1, 247, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(secs), 1)
    return bytes(out)
open(sys.argv[3], 'wb').write(elf(program(int(sys.argv[1]), sys.argv[2])))
EOF

echo "| target | shape | instructions | CPU (s) | growth per 4x | peak RSS (MB) | exit |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for target in $TARGETS; do
    for shape in straight branchy; do
        prev_n=""; prev_t=""
        for n in $SIZES; do
            obj="$work/$shape-$n.o"
            [ -f "$obj" ] || python3 "$work/gen.py" "$n" "$shape" "$obj"
            rm -rf "$work/out"
            /usr/bin/time -f "%U %S %M" -o "$work/usage" timeout "$TIMEOUT" nice "$HWXDP" compile "$obj" \
                --target "$target" -o "$work/out" > "$work/stdout" 2> "$work/stderr"
            code=$?
            read -r user sys rss < <(tail -1 "$work/usage")
            cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
            growth="—"
            if [ -n "$prev_t" ]; then
                # The ratio scaled to 4 times the instructions: (t / t_prev)^(log 4 / log(n / n_prev)).
                growth=$(python3 -c "import math; t=max($cpu, 0.005); p=max($prev_t, 0.005); \
print(f'{(t / p) ** (math.log(4) / math.log($n / $prev_n)):.1f} x')")
            fi
            case $code in
                0) status=0 ;;
                124) status="timeout after ${TIMEOUT} s" ;;
                *) status="$code: $(grep -v '^Command exited' "$work/stderr" | head -1 | sed "s|^hwxdp: ||; s|$work/||" | cut -c1-200)" ;;
            esac
            note=$(grep "large program" "$work/stdout" | head -2 | sed 's/^[^:]*: large program: //' | paste -sd ';' -)
            [ -n "$note" ] && status="$status ($note)"
            echo "| $target | $shape | $n | $cpu | $growth | $((rss / 1024)) | $status |"
            prev_n=$n; prev_t=$cpu
        done
    done
done
