#!/usr/bin/env bash
# What the two code-generation choices of `hwxdp p4c` buy (docs/results.md, "P4 programs: ..."). For each program,
# four objects: default (fields that are only copied/compared/keyed stay in network order, the deparser writes back
# only the headers the program may change), `--convert-all-fields` only, `--writeback-all` only, and both (the
# P4C-XDP baseline). For each object: static eBPF instructions (lines of `hwxdp disasm`, so an lddw counts as one),
# instructions executed per packet and packets per second of the kernel's JIT and of the reference machine
# (`hwxdp bench --json`). The four variants of a program are benched in the same run, interleaved round by round,
# and the median over the rounds is reported; the ratio is kernel Mpps over the baseline's.
#
# The workload is the program's main path only: the STF packets of examples/p4/PROG.stf that are expected back
# (XDP_TX of a rewritten packet), cycled to PACKETS packets, with the STF's table entries written into a maps file
# (`bpftool map dump -j` shape, the layout of docs/p4.md). `hwxdp gen` is not used: for these objects it writes a
# generic mix (about half of which the program drops or passes) and no table entries, so the table programs would
# never hit.
#
# BPF_PROG_TEST_RUN with `repeat` runs the program again on the packet the previous run rewrote, so the workload is
# made a fixed point of the program: xdp_snat also gets an entry for each public address that translates it to
# itself (same instructions: same lookup, same csum_replace4 calls), and xdp_lpm_router's packets start with TTL 255
# so that REPEAT <= 253 runs all decrement and route (the TTL <= 1 early exit is never taken). The script checks on
# the reference machine that every packet, and every packet the program sends back, leaves by XDP_TX, and that the
# four variants send identical bytes.
#
# Usage: scripts/p4-results.sh [PROGRAM ...]   (needs root for the kernel half)
#   env: ROUNDS (default 5) bench runs per variant, REPEAT (default 250) kernel repetitions per sampled packet,
#        PACKETS (default 500) trace length, MIN_MS (default 1000) reference-machine time per bench run.
set -euo pipefail
cd "$(dirname "$0")/.."

hwxdp=target/release/hwxdp
work=build/p4-results
rounds=${ROUNDS:-5}
repeat=${REPEAT:-250}
packets=${PACKETS:-500}
min_ms=${MIN_MS:-1000}
if [ $# -gt 0 ]; then programs=("$@"); else programs=(xdp_mac_swap xdp_snat xdp_lpm_router); fi
variants=(default convert-all-fields writeback-all baseline)

# Prints the command (to stderr, so that stdout stays the table) and runs it.
run() {
  echo "+ $*" >&2
  "$@"
}

variant_flags() {
  case $1 in
    default) ;;
    convert-all-fields) echo --convert-all-fields ;;
    writeback-all) echo --writeback-all ;;
    baseline) echo --convert-all-fields --writeback-all ;;
    *) echo "unknown variant $1" >&2; return 1 ;;
  esac
}

if [ "$repeat" -gt 253 ]; then
  echo "REPEAT=$repeat: the kernel would re-run xdp_lpm_router on packets whose TTL has run out (at most 253)" >&2
  exit 1
fi
[ -x "$hwxdp" ] || run cargo build --release -p hwxdp
mkdir -p "$work"

# workload PROG DIR: DIR/trace.pcap (+ DIR/maps.json) from the program's STF script; DIR/expected.hex holds the bytes
# the STF expects back for the packets of one cycle.
workload() {
  run python3 - "examples/p4/$1.stf" "$1" "$2" "$packets" <<'PY'
import json, re, struct, sys

stf, prog, out, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

# The tables of each program as docs/p4.md lays them out: match kind, key widths in bits, and per action its position
# in the table's `actions` list and its parameter widths in bits.
SPECS = {
    "xdp_mac_swap": {"tables": {}},
    "xdp_snat": {
        "tables": {"snat": ("exact", [32], {"translate": (0, [32, 48]), "NoAction": (1, [])})},
        # BPF_PROG_TEST_RUN repeats run on the translated packet: make the public addresses translate to themselves.
        "extra": [
            "add snat srcAddr:0xcb007105 translate(public_addr:0xcb007105, router_mac:0x02000000fe01)",
            "add snat srcAddr:0xcb007106 translate(public_addr:0xcb007106, router_mac:0x02000000fe01)",
        ],
    },
    "xdp_lpm_router": {
        "tables": {"ipv4_lpm": ("lpm", [32], {"set_nhop": (0, [48, 48, 32]), "to_kernel": (1, [])})},
        "ttl": 255,  # every repetition decrements it
    },
    "xdp_ttl_table": {"tables": {}},
    "xdp_icmp_echo": {"tables": {}},
}
if prog not in SPECS:
    sys.exit(f"{prog}: no table layout in scripts/p4-results.sh (add it to SPECS)")
spec = SPECS[prog]

def num(text):
    return int(text, 0)

def be(value, bits):
    return list(value.to_bytes((bits + 7) // 8, "big"))

lines = [l.split("#", 1)[0].strip() for l in open(stf)]
lines = [l for l in lines if l]

maps = {}
for line in [l for l in lines if l.startswith("add ")] + spec.get("extra", []):
    m = re.fullmatch(r"add\s+(\S+)\s+(.*?)\s*(\w+)\((.*)\)", line)
    if not m:
        sys.exit(f"{stf}: cannot read {line!r}")
    table, keys, action, args = m.groups()
    if table not in spec["tables"]:
        sys.exit(f"{stf}: table {table} is not in the layout of {prog}")
    kind, widths, actions = spec["tables"][table]
    fields = [k.split(":", 1)[1] for k in keys.split()]
    if len(fields) != len(widths):
        sys.exit(f"{line!r}: {len(widths)} key fields expected")
    if kind == "exact":
        key = sum((be(num(f), w) for f, w in zip(fields, widths)), [])
    elif kind == "lpm" and len(widths) == 1:
        value, plen = fields[0].split("/")
        key = list(struct.pack("<I", int(plen))) + be(num(value), widths[0])
    else:
        sys.exit(f"{table}: match kind {kind} with {len(widths)} fields is not handled here")
    index, params = actions[action]
    vals = [num(a.split(":", 1)[1]) for a in args.split(",") if a.strip()]
    if len(vals) != len(params):
        sys.exit(f"{line!r}: {action} takes {len(params)} parameters")
    value = list(struct.pack("<I", index)) + sum((be(v, w) for v, w in zip(vals, params)), [])
    size = 4 + max(sum((w + 7) // 8 for w in p) for _, p in actions.values())
    value += [0] * (size - len(value))
    maps.setdefault(table, []).append({"key": [f"0x{b:02x}" for b in key], "value": [f"0x{b:02x}" for b in value]})

# The main path: the packets the STF expects back (an `expect` line stands right before its packet).
main, expected = [], []
for prev, line in zip(lines, lines[1:]):
    if prev.startswith("expect ") and line.startswith("packet "):
        main.append(bytearray.fromhex("".join(line.split()[2:])))
        expected.append("".join(prev.split()[2:]).rstrip("$").lower())
if not main:
    sys.exit(f"{stf}: no packet is expected back")
if "ttl" in spec:
    for p in main:
        assert p[12:14] == b"\x08\x00" and p[14] == 0x45, "IPv4 without options expected"
        p[22] = spec["ttl"]
        p[24:26] = b"\0\0"
        s = sum(int.from_bytes(p[i:i + 2], "big") for i in range(14, 34, 2))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        p[24:26] = (~s & 0xFFFF).to_bytes(2, "big")
    expected = None  # the STF's expectations were for other TTLs

with open(f"{out}/trace.pcap", "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i in range(count):
        p = main[i % len(main)]
        f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(p), len(p)) + bytes(p))
if maps:
    json.dump(maps, open(f"{out}/maps.json", "w"), indent=1)
with open(f"{out}/expected.hex", "w") as f:
    for e in expected or []:
        f.write(e + "\n")
print(f"{out}/trace.pcap: {count} packets cycling {len(main)} main-path packets of {stf}"
      + (f"; {out}/maps.json: {sum(len(v) for v in maps.values())} entries" if maps else ""), file=sys.stderr)
PY
}

# check_tx OBJ DIR OUT: every packet of DIR/trace.pcap leaves OBJ by XDP_TX on the reference machine, and so does every
# packet sent back when it is run again (what the kernel's repetitions do); OUT/tx.pcap is kept.
check_tx() {
  local obj=$1 dir=$2 out=$3 maps=()
  [ -f "$dir/maps.json" ] && maps=(--maps "$dir/maps.json")
  run "$hwxdp" run "$obj" --pcap "$dir/trace.pcap" "${maps[@]}" -o "$out" > /dev/null
  run "$hwxdp" run "$obj" --pcap "$out/tx.pcap" "${maps[@]}" -o "$out/again" > /dev/null
  python3 - "$out/stats.json" "$out/again/stats.json" "$packets" <<'PY'
import json, sys
for path in sys.argv[1:3]:
    v = json.load(open(path))["verdicts"]
    if v["tx"] != int(sys.argv[3]):
        sys.exit(f"{path}: {v}: not every packet takes the main path (XDP_TX)")
PY
}

# tx_bytes PCAP: the packets of a pcap as hex, one a line.
tx_bytes() {
  python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
order = next((o for o in "<>" if struct.unpack(o + "I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D)), None)
assert order, f"{sys.argv[1]}: not a classic pcap"
off = 24
while off < len(data):
    incl = struct.unpack(order + "I", data[off + 8:off + 12])[0]
    print(data[off + 16:off + 16 + incl].hex())
    off += 16 + incl
PY
}

for prog in "${programs[@]}"; do
  dir=$work/$prog
  mkdir -p "$dir"
  workload "$prog" "$dir"
  maps=()
  [ -f "$dir/maps.json" ] && maps=(--maps "$dir/maps.json")
  for v in "${variants[@]}"; do
    read -ra flags <<< "$(variant_flags "$v")"
    run "$hwxdp" p4c "examples/p4/$prog.p4" -o "$dir/$v.o" "${flags[@]}" > /dev/null
    run "$hwxdp" disasm "$dir/$v.o" > "$dir/$v.disasm"
    check_tx "$dir/$v.o" "$dir" "$dir/run-$v"
    tx_bytes "$dir/run-$v/tx.pcap" > "$dir/run-$v/tx.hex"
    if ! cmp -s "$dir/run-default/tx.hex" "$dir/run-$v/tx.hex"; then
      echo "$prog: $v sends other bytes than the default variant (see $dir/run-*/tx.hex)" >&2
      exit 1
    fi
  done
  # The STF's expectations hold for the packets of the first cycle (not checked where the script changed them).
  if [ -s "$dir/expected.hex" ]; then
    n=$(wc -l < "$dir/expected.hex")
    if ! diff <(head -n "$n" "$dir/run-default/tx.hex") "$dir/expected.hex" > /dev/null; then
      echo "$prog: the packets sent back are not the ones $prog.stf expects" >&2
      exit 1
    fi
  fi
  for ((r = 1; r <= rounds; r++)); do
    for v in "${variants[@]}"; do
      run "$hwxdp" bench "$dir/$v.o" --pcap "$dir/trace.pcap" "${maps[@]}" --repeat "$repeat" \
        --kernel-samples "$packets" --min-ms "$min_ms" --json > "$dir/bench-$v-$r.json"
    done
  done
done

python3 - "$work" "$rounds" "${programs[@]}" <<'PY'
import json, re, statistics, sys

work, rounds, programs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
variants = ["default", "convert-all-fields", "writeback-all", "baseline"]
rows = []
for prog in programs:
    base = None
    for v in reversed(variants):  # baseline first, for the ratios
        text = open(f"{work}/{prog}/{v}.disasm").read()
        insns = len(re.findall(r"^\s*\d+:\t", text, re.M))
        benches = [json.load(open(f"{work}/{prog}/bench-{v}-{r}.json")) for r in range(1, rounds + 1)]
        kns = [b["backends"]["kernel"]["ns_per_packet"] for b in benches]
        ins = [b["backends"]["interp"]["ns_per_packet"] for b in benches]
        row = {
            "program": prog,
            "options": v,
            "instructions": insns,
            "insns_per_packet": benches[0]["backends"]["interp"]["insns_per_packet"],
            "kernel_ns_per_packet": statistics.median(kns),
            "kernel_ns_per_packet_runs": kns,
            "kernel_mpps": 1e3 / statistics.median(kns),
            "kernel_spread": (max(kns) - min(kns)) / statistics.median(kns),
            "interp_ns_per_packet": statistics.median(ins),
            "interp_mpps": 1e3 / statistics.median(ins),
        }
        if v == "baseline":
            base = row
        row["kernel_ratio_to_baseline"] = row["kernel_mpps"] / base["kernel_mpps"]
        row["interp_ratio_to_baseline"] = row["interp_mpps"] / base["interp_mpps"]
        rows.append(row)
order = {v: i for i, v in enumerate(variants)}
rows.sort(key=lambda r: (programs.index(r["program"]), order[r["options"]]))
json.dump({"rounds": rounds, "rows": rows}, open(f"{work}/results.json", "w"), indent=1)
print("| program | options | instructions | insns/packet | kernel Mpps | kernel / baseline | kernel spread "
      "| reference Mpps | reference / baseline |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    print(f"| {r['program']} | {r['options']} | {r['instructions']} | {r['insns_per_packet']:.0f} | "
          f"{r['kernel_mpps']:.1f} | {r['kernel_ratio_to_baseline']:.2f}x | {100 * r['kernel_spread']:.0f}% | "
          f"{r['interp_mpps']:.2f} | {r['interp_ratio_to_baseline']:.2f}x |")
print(f"\n{work}/results.json written", file=sys.stderr)
PY
