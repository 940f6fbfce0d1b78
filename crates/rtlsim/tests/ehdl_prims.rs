//! The eHDL primitives (`rtl/ehdl/`) against the reference machine's semantics, through Verilator.
//!
//! Each test writes a wrapper module `ehdl_unit` that instantiates one primitive at many parameter settings (the
//! templates are specialised by parameters, so every setting is its own circuit), packs their ports into one input
//! and one output vector, and drives it through `sim/ehdl/ehdl_unit_tb.cpp` one vector per line. The expected
//! outputs come from `hwxdp_xdp::alu` (ALU, conditions, byte swaps) or from byte-level models of the frames.

mod common;

use common::Rng;
use hwxdp_rtlsim::ehdl::VERILATOR_FLAGS;
use hwxdp_rtlsim::BuildSpec;
use std::fmt::Write as _;
use std::path::PathBuf;

/// A bit vector, least significant bit first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Bits(Vec<bool>);

impl Bits {
    fn push(&mut self, width: usize, value: u64) {
        for i in 0..width {
            self.0.push(i < 64 && (value >> i) & 1 == 1);
        }
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.push(8, *b as u64);
        }
    }

    /// Hex, most significant digit first, padded to `width` bits.
    fn hex(&self, width: usize) -> String {
        assert!(
            self.0.len() <= width,
            "{} input bits, port has {width}",
            self.0.len()
        );
        let mut out = String::new();
        for d in (0..width / 4).rev() {
            let mut v = 0;
            for b in 0..4 {
                if self.0.get(4 * d + b).copied().unwrap_or(false) {
                    v |= 1 << b;
                }
            }
            write!(out, "{v:x}").expect("string");
        }
        out
    }

    fn from_hex(text: &str) -> Bits {
        let mut bits = Vec::new();
        for c in text.chars().rev() {
            let d = c.to_digit(16).expect("hex output");
            for b in 0..4 {
                bits.push((d >> b) & 1 == 1);
            }
        }
        Bits(bits)
    }

    fn get(&self, at: usize, width: usize) -> u64 {
        (0..width.min(64)).fold(0, |v, i| v | (self.0[at + i] as u64) << i)
    }

    fn bytes(&self, at: usize, n: usize) -> Vec<u8> {
        (0..n).map(|i| self.get(at + 8 * i, 8) as u8).collect()
    }
}

/// A wrapper under construction: input fields (name, width) and output parts (expression, width), both from bit 0.
#[derive(Default)]
struct Wrapper {
    inputs: Vec<(String, usize)>,
    body: String,
    outputs: Vec<(String, usize)>,
}

/// A port width for `bits`: a multiple of 32 above 64, so Verilator makes it a VlWide the testbench can index.
fn port_width(bits: usize) -> usize {
    bits.div_ceil(32).max(3) * 32
}

impl Wrapper {
    fn input(&mut self, name: &str, width: usize) {
        self.inputs.push((name.to_string(), width));
    }

    fn output(&mut self, expr: String, width: usize) {
        self.outputs.push((expr, width));
    }

    fn in_width(&self) -> usize {
        port_width(self.inputs.iter().map(|(_, w)| w).sum())
    }

    fn out_width(&self) -> usize {
        port_width(self.outputs.iter().map(|(_, w)| w).sum())
    }

    fn text(&self) -> String {
        let (iw, ow) = (self.in_width(), self.out_width());
        let mut s = format!(
            "`default_nettype none\n// Test wrapper around eHDL primitives (written by crates/rtlsim/tests/ehdl_prims.rs).\n\
             module ehdl_unit (\n  input  logic clk_i,\n  input  logic rst_ni,\n  input  logic [{}:0] in_i,\n  \
             output logic [{}:0] out_o\n);\n",
            iw - 1,
            ow - 1
        );
        let mut at = 0;
        for (name, w) in &self.inputs {
            writeln!(
                s,
                "  logic [{}:0] {name};\n  assign {name} = in_i[{at} +: {w}];",
                w - 1
            )
            .expect("string");
            at += w;
        }
        s += &self.body;
        let used: usize = self.outputs.iter().map(|(_, w)| w).sum();
        let mut parts: Vec<String> = self.outputs.iter().rev().map(|(e, _)| e.clone()).collect();
        if used < ow {
            parts.insert(0, format!("{}'d0", ow - used));
        }
        writeln!(s, "  assign out_o = {{{}}};", parts.join(", ")).expect("string");
        s += "  // Padding bits of in_i, and the clock of combinational wrappers.\n  logic unused_in;\n  \
              assign unused_in = ^{in_i, clk_i, rst_ni};\nendmodule\n";
        s
    }

    /// Builds the wrapper with the primitives and runs one line per input vector.
    fn run(&self, test: &str, vectors: &[Bits]) -> Vec<Bits> {
        let root = common::workspace_root();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ehdl-unit-{test}"));
        std::fs::create_dir_all(dir.join("ehdl")).expect("temp dir");
        let mut spec = BuildSpec::new(
            "ehdl_unit",
            &dir,
            root.join("sim/ehdl/ehdl_unit_tb.cpp"),
            common::target_dir(),
        )
        .flags(VERILATOR_FLAGS);
        // The primitives, and the shared blocks of rtl/common/ (the RAMs of ehdl_map_ram).
        let mut prims: Vec<_> = ["rtl/ehdl", "rtl/common"]
            .iter()
            .flat_map(|d| std::fs::read_dir(root.join(d)).expect("rtl directory"))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "sv"))
            .collect();
        prims.sort();
        for p in prims {
            let name = p.file_name().expect("name").to_owned();
            std::fs::copy(&p, dir.join("ehdl").join(&name)).expect("copy primitive");
            spec = spec.source(PathBuf::from("ehdl").join(name));
        }
        std::fs::write(dir.join("ehdl_unit.sv"), self.text()).expect("write wrapper");
        spec = spec.source("ehdl_unit.sv");
        let iw = self.in_width();
        let input: String = vectors.iter().map(|v| v.hex(iw) + "\n").collect();
        let lines = common::run_testbench(&spec, input);
        assert_eq!(lines.len(), vectors.len(), "one output line per vector");
        lines.iter().map(|l| Bits::from_hex(l)).collect()
    }
}

fn alu_cases() -> Vec<(u8, bool, i16, u32, bool)> {
    // (op nibble, wide, off, end bits, end swap)
    let mut cases = Vec::new();
    for op in 0u8..=12 {
        for wide in [false, true] {
            cases.push((op, wide, 0, 64, false));
        }
    }
    for wide in [false, true] {
        cases.push((3, wide, 1, 64, false));
        cases.push((9, wide, 1, 64, false));
        cases.push((11, wide, 8, 64, false));
        cases.push((11, wide, 16, 64, false));
    }
    cases.push((11, true, 32, 64, false));
    for bits in [16, 32, 64] {
        for swap in [false, true] {
            cases.push((13, false, 0, bits, swap));
        }
    }
    cases
}

#[test]
fn alu_template_matches_the_reference_alu() {
    let cases = alu_cases();
    let mut w = Wrapper::default();
    w.input("a", 64);
    w.input("b", 64);
    w.input("old", 64);
    w.input("en", 1);
    for (i, (op, wide, off, bits, swap)) in cases.iter().enumerate() {
        writeln!(
            w.body,
            "  logic [63:0] res{i};\n  ehdl_alu #(.OP({op}), .WIDE({}), .OFF({off}), .END_BITS({bits}), .END_SWAP({})) \
             u_alu{i} (.en_i(en[0]), .a_i(a), .b_i(b), .old_i(old), .res_o(res{i}));",
            *wide as u8, *swap as u8
        )
        .expect("string");
        w.output(format!("res{i}"), 64);
    }
    let mut rng = Rng(0x005e_eda1);
    let edges = [
        0u64,
        1,
        2,
        31,
        32,
        63,
        64,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        1 << 63,
        u64::MAX,
        u64::MAX - 1,
    ];
    let mut vectors = Vec::new();
    let mut operands = Vec::new();
    for &a in &edges {
        for &b in &edges {
            operands.push((a, b, rng.next(), true));
        }
    }
    for _ in 0..3000 {
        let en = rng.below(8) != 0;
        operands.push((rng.operand(), rng.operand(), rng.next(), en));
    }
    for &(a, b, old, en) in &operands {
        let mut v = Bits::default();
        v.push(64, a);
        v.push(64, b);
        v.push(64, old);
        v.push(1, en as u64);
        vectors.push(v);
    }
    let out = w.run("alu", &vectors);
    for (&(a, b, old, en), got) in operands.iter().zip(&out) {
        for (i, &(op, wide, off, bits, swap)) in cases.iter().enumerate() {
            let want = if !en {
                old
            } else if op == 13 {
                hwxdp_xdp::alu::endian(a, bits as i64, swap).expect("end")
            } else if wide {
                hwxdp_xdp::alu::alu64(op << 4, off, a, b).expect("alu64")
            } else {
                hwxdp_xdp::alu::alu32(op << 4, off, a, b).expect("alu32")
            };
            assert_eq!(
                got.get(64 * i, 64),
                want,
                "op {op:#x} wide {wide} off {off} end {bits}/{swap}: a {a:#x} b {b:#x} en {en}"
            );
        }
    }
}

#[test]
fn cond_template_matches_the_reference_conditions() {
    let conds = [1u8, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13];
    let mut w = Wrapper::default();
    w.input("a", 64);
    w.input("b", 64);
    w.input("en", 1);
    let mut cases = Vec::new();
    for &c in &conds {
        for wide in [false, true] {
            let i = cases.len();
            writeln!(
                w.body,
                "  logic t{i};\n  ehdl_cond #(.COND({c}), .WIDE({})) u_c{i} (.en_i(en[0]), .a_i(a), .b_i(b), .taken_o(t{i}));",
                wide as u8
            )
            .expect("string");
            w.output(format!("t{i}"), 1);
            cases.push((c, wide));
        }
    }
    let mut rng = Rng(0xc0d);
    let mut operands = Vec::new();
    for _ in 0..2000 {
        let a = rng.operand();
        // Equal and near-equal operands often, so == and <= see both outcomes.
        let b = match rng.below(4) {
            0 => a,
            1 => a ^ (1 << rng.below(64)),
            _ => rng.operand(),
        };
        operands.push((a, b, rng.below(6) != 0));
    }
    let vectors: Vec<Bits> = operands
        .iter()
        .map(|&(a, b, en)| {
            let mut v = Bits::default();
            v.push(64, a);
            v.push(64, b);
            v.push(1, en as u64);
            v
        })
        .collect();
    let out = w.run("cond", &vectors);
    for (&(a, b, en), got) in operands.iter().zip(&out) {
        for (i, &(c, wide)) in cases.iter().enumerate() {
            let want = en && hwxdp_xdp::alu::condition(c << 4, wide, a, b).expect("condition");
            assert_eq!(
                got.get(i, 1) == 1,
                want,
                "cond {c:#x} wide {wide}: a {a:#x} b {b:#x} en {en}"
            );
        }
    }
}

/// Frame width of the load/store tests: 16-byte frames keep the wrappers small while every offset is covered.
const DW: usize = 128;

#[test]
fn packet_and_stack_loads_read_the_addressed_bytes() {
    let mut w = Wrapper::default();
    w.input("lo", DW);
    w.input("hi", DW);
    w.input("old", 64);
    w.input("en", 1);
    let mut cases = Vec::new();
    for off in 0..DW / 8 {
        for size in [1usize, 2, 4, 8] {
            for signed in [false, true] {
                if signed && size == 8 {
                    continue;
                }
                let i = cases.len();
                writeln!(
                    w.body,
                    "  logic [63:0] r{i};\n  ehdl_pkt_load #(.DW({DW}), .OFF({off}), .SIZE({size}), .SIGNED({})) \
                     u_l{i} (.en_i(en[0]), .lo_i(lo), .hi_i(hi), .old_i(old), .res_o(r{i}));",
                    signed as u8
                )
                .expect("string");
                w.output(format!("r{i}"), 64);
                cases.push((off, size, signed, false));
            }
        }
    }
    // The stack template reads the op's bytes, here the low bytes of lo.
    for size in [1usize, 2, 4, 8] {
        for signed in [false, true] {
            let i = cases.len();
            writeln!(
                w.body,
                "  logic [63:0] r{i};\n  ehdl_stack_load #(.SIZE({size}), .SIGNED({})) u_s{i} (.en_i(en[0]), \
                 .bytes_i(lo[{}:0]), .old_i(old), .res_o(r{i}));",
                signed as u8,
                8 * size - 1
            )
            .expect("string");
            w.output(format!("r{i}"), 64);
            cases.push((0, size, signed, true));
        }
    }
    let mut rng = Rng(0x10ad);
    let mut frames = Vec::new();
    for _ in 0..300 {
        frames.push((rng.bytes(2 * DW / 8), rng.next(), rng.below(5) != 0));
    }
    let vectors: Vec<Bits> = frames
        .iter()
        .map(|(bytes, old, en)| {
            let mut v = Bits::default();
            v.push_bytes(bytes);
            v.push(64, *old);
            v.push(1, *en as u64);
            v
        })
        .collect();
    let out = w.run("load", &vectors);
    for ((bytes, old, en), got) in frames.iter().zip(&out) {
        for (i, &(off, size, signed, stack)) in cases.iter().enumerate() {
            let raw = (0..size).fold(0u64, |v, b| v | (bytes[off + b] as u64) << (8 * b));
            let bits = 8 * size as u32;
            let value = if signed && bits < 64 {
                (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64
            } else {
                raw
            };
            let want = if *en { value } else { *old };
            assert_eq!(
                got.get(64 * i, 64),
                want,
                "off {off} size {size} signed {signed} stack {stack}"
            );
        }
    }
}

#[test]
fn packet_and_stack_stores_write_only_their_bytes_of_their_frames() {
    const FIDX: u64 = 3;
    let fb = DW / 8;
    let mut w = Wrapper::default();
    w.input("val", 64);
    w.input("lo_fidx", 8);
    w.input("hi_fidx", 8);
    w.input("en", 1);
    w.input("old", 64);
    let mut cases = Vec::new();
    for off in 0..fb {
        for size in [1usize, 2, 4, 8] {
            let i = cases.len();
            writeln!(
                w.body,
                "  logic [{m}:0] ld{i}, hd{i};\n  logic [{k}:0] lm{i}, hm{i};\n  ehdl_pkt_store #(.DW({DW}), .FW(8), \
                 .OFF({off}), .SIZE({size}), .FIDX({FIDX})) u_s{i} (.en_i(en[0]), .val_i(val), .lo_fidx_i(lo_fidx), \
                 .hi_fidx_i(hi_fidx), .lo_data_o(ld{i}), .lo_mask_o(lm{i}), .hi_data_o(hd{i}), .hi_mask_o(hm{i}));",
                m = DW - 1,
                k = fb - 1
            )
            .expect("string");
            for (e, wd) in [
                (format!("ld{i}"), DW),
                (format!("lm{i}"), fb),
                (format!("hd{i}"), DW),
                (format!("hm{i}"), fb),
            ] {
                w.output(e, wd);
            }
            cases.push((off, size));
        }
    }
    let stack_at = cases.len() * 2 * (DW + fb);
    for size in [1usize, 2, 4, 8] {
        writeln!(
            w.body,
            "  logic [{m}:0] st{size};\n  ehdl_stack_store #(.SIZE({size})) u_st{size} (.en_i(en[0]), .val_i(val), \
             .old_i(old[{m}:0]), .bytes_o(st{size}));",
            m = 8 * size - 1
        )
        .expect("string");
        w.output(format!("st{size}"), 8 * size);
    }
    let mut rng = Rng(0x5707e);
    let mut inputs = Vec::new();
    for _ in 0..200 {
        let fidx = |rng: &mut Rng| {
            if rng.below(3) == 0 {
                rng.below(8)
            } else {
                FIDX
            }
        };
        let lo = fidx(&mut rng);
        let hi = if rng.below(3) == 0 {
            rng.below(8)
        } else {
            FIDX + 1
        };
        inputs.push((rng.next(), lo, hi, rng.below(5) != 0, rng.next()));
    }
    let vectors: Vec<Bits> = inputs
        .iter()
        .map(|&(val, lo, hi, en, old)| {
            let mut v = Bits::default();
            v.push(64, val);
            v.push(8, lo);
            v.push(8, hi);
            v.push(1, en as u64);
            v.push(64, old);
            v
        })
        .collect();
    let out = w.run("store", &vectors);
    for (&(val, lo, hi, en, old), got) in inputs.iter().zip(&out) {
        for (i, &(off, size)) in cases.iter().enumerate() {
            let base = i * 2 * (DW + fb);
            let mut want = [vec![0u8; 2 * fb], vec![0u8; 2 * fb]]; // data, mask over both frames
            for b in 0..size {
                want[0][off + b] = (val >> (8 * b)) as u8;
                want[1][off + b] = 1;
            }
            for (half, ok, at) in [
                (0, en && lo == FIDX, base),
                (1, en && hi == FIDX + 1, base + DW + fb),
            ] {
                let data: Vec<u8> = (0..fb)
                    .map(|b| if ok { want[0][half * fb + b] } else { 0 })
                    .collect();
                let mask: u64 = (0..fb).fold(0, |m, b| {
                    m | ((ok && want[1][half * fb + b] == 1) as u64) << b
                });
                assert_eq!(
                    got.bytes(at, fb),
                    data,
                    "store off {off} size {size} half {half}: data"
                );
                assert_eq!(
                    got.get(at + DW, fb),
                    mask,
                    "store off {off} size {size} half {half}: mask"
                );
            }
        }
        let mut at = stack_at;
        for size in [1usize, 2, 4, 8] {
            let bits = 8 * size;
            let m = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            let want = if en { val & m } else { old & m };
            assert_eq!(got.get(at, bits), want, "stack store size {size}");
            at += bits;
        }
    }
}

#[test]
fn exit_and_packet_length_templates() {
    let mut w = Wrapper::default();
    w.input("val", 64);
    w.input("old", 32);
    w.input("en", 1);
    w.input("len", 16);
    w.input("ended", 1);
    w.input("last", 1);
    w.input("keep", 64);
    w.body += "  logic [31:0] verdict;\n  ehdl_exit u_exit (.en_i(en[0]), .val_i(val), .old_i(old), .verdict_o(verdict));\n\
               logic [15:0] len_o;\n  logic ended_o;\n  ehdl_pkt_len #(.DW(512), .LW(16)) u_len (.len_i(len), \
               .ended_i(ended[0]), .keep_i(keep), .last_i(last[0]), .len_o(len_o), .ended_o(ended_o));\n";
    w.output("verdict".into(), 32);
    w.output("len_o".into(), 16);
    w.output("ended_o".into(), 1);
    let mut rng = Rng(0xe417);
    let mut inputs = Vec::new();
    for _ in 0..500 {
        let n = rng.below(65);
        let keep = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        inputs.push((
            rng.next(),
            rng.next() as u32,
            rng.below(2) == 1,
            rng.below(4000),
            rng.below(2) == 1,
            rng.below(2) == 1,
            keep,
            n,
        ));
    }
    let vectors: Vec<Bits> = inputs
        .iter()
        .map(|&(val, old, en, len, ended, last, keep, _)| {
            let mut v = Bits::default();
            v.push(64, val);
            v.push(32, old as u64);
            v.push(1, en as u64);
            v.push(16, len);
            v.push(1, ended as u64);
            v.push(1, last as u64);
            v.push(64, keep);
            v
        })
        .collect();
    let out = w.run("exit_len", &vectors);
    for (&(val, old, en, len, ended, last, _, n), got) in inputs.iter().zip(&out) {
        assert_eq!(
            got.get(0, 32),
            if en { val & 0xffff_ffff } else { old as u64 },
            "exit"
        );
        assert_eq!(got.get(32, 16), if ended { len } else { len + n }, "length");
        assert_eq!(got.get(48, 1) == 1, ended || last, "ended");
    }
}

#[test]
fn frame_chain_moves_on_advance_and_merges_store_bytes() {
    // Two frame registers in a row; the second takes writes. Each vector is one cycle.
    let fb = DW / 8;
    let mut w = Wrapper::default();
    w.input("adv", 1);
    w.input("valid", 1);
    w.input("data", DW);
    w.input("keep", fb);
    w.input("last", 1);
    w.input("fidx", 8);
    w.input("wdata", DW);
    w.input("wmask", fb);
    writeln!(
        w.body,
        "  logic v0, v1, l0, l1;\n  logic [{m}:0] d0, d1;\n  logic [{k}:0] k0, k1;\n  logic [7:0] f0, f1;\n  \
         ehdl_frame_stage #(.DW({DW}), .FW(8)) u_f0 (.clk_i(clk_i), .rst_ni(rst_ni), .adv_i(adv[0]), .valid_i(valid[0]), \
         .data_i(data), .keep_i(keep), .last_i(last[0]), .fidx_i(fidx), .wdata_i({DW}'d0), .wmask_i({fb}'d0), \
         .valid_o(v0), .data_o(d0), .keep_o(k0), .last_o(l0), .fidx_o(f0));\n  \
         ehdl_frame_stage #(.DW({DW}), .FW(8)) u_f1 (.clk_i(clk_i), .rst_ni(rst_ni), .adv_i(adv[0]), .valid_i(v0), \
         .data_i(d0), .keep_i(k0), .last_i(l0), .fidx_i(f0), .wdata_i(wdata), .wmask_i(wmask), \
         .valid_o(v1), .data_o(d1), .keep_o(k1), .last_o(l1), .fidx_o(f1));",
        m = DW - 1,
        k = fb - 1
    )
    .expect("string");
    for (e, wd) in [("v1", 1), ("d1", DW), ("k1", fb), ("l1", 1), ("f1", 8)] {
        w.output(e.into(), wd);
    }
    #[derive(Clone, Default, PartialEq, Debug)]
    struct Frame {
        valid: bool,
        data: Vec<u8>,
        keep: u64,
        last: bool,
        fidx: u64,
    }
    let mut rng = Rng(0xf4a3e);
    let mut regs = [Frame::default(), Frame::default()];
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    for cycle in 0..400 {
        let adv = rng.below(4) != 0;
        let input = Frame {
            valid: rng.below(3) != 0,
            data: rng.bytes(fb),
            keep: rng.below(1 << fb),
            last: rng.below(2) == 1,
            fidx: rng.below(256),
        };
        let wdata = rng.bytes(fb);
        let wmask = rng.below(1 << fb);
        let mut v = Bits::default();
        v.push(1, adv as u64);
        v.push(1, input.valid as u64);
        v.push_bytes(&input.data);
        v.push(fb, input.keep);
        v.push(1, input.last as u64);
        v.push(8, input.fidx);
        v.push_bytes(&wdata);
        v.push(fb, wmask);
        vectors.push(v);
        // Printed before the edge: the second register as it is now (invalid frames only show their valid bit,
        // and nothing before both registers were loaded).
        expected.push((cycle, regs[1].clone()));
        if adv {
            let mut moved = regs[0].clone();
            if !moved.data.is_empty() {
                for (b, byte) in wdata.iter().enumerate() {
                    if (wmask >> b) & 1 == 1 {
                        moved.data[b] = *byte;
                    }
                }
            }
            regs = [input, moved];
        }
    }
    let out = w.run("frame", &vectors);
    for ((cycle, want), got) in expected.iter().zip(&out) {
        assert_eq!(got.get(0, 1) == 1, want.valid, "cycle {cycle}: valid");
        if want.valid {
            let frame = Frame {
                valid: true,
                data: got.bytes(1, fb),
                keep: got.get(1 + DW, fb),
                last: got.get(1 + DW + fb, 1) == 1,
                fidx: got.get(2 + DW + fb, 8),
            };
            assert_eq!(&frame, want, "cycle {cycle}");
        }
    }
}

#[test]
fn output_fifo_keeps_order_and_offers_until_taken() {
    // ehdl_axis_out at 64 data bits: random pushes (only while space_o, as the pipeline does) and random ready.
    let mut w = Wrapper::default();
    w.input("push", 1);
    w.input("data", 64);
    w.input("user", 32);
    w.input("ready", 1);
    w.body += "  logic space, valid, last_o;\n  logic [63:0] data_o;\n  logic [7:0] keep_o;\n  logic [31:0] user_o;\n  \
               ehdl_axis_out #(.DW(64), .UW(32)) u_out (.clk_i(clk_i), .rst_ni(rst_ni), .push_i(push[0] & space), \
               .data_i(data), .keep_i(data[7:0]), .last_i(data[8]), .user_i(user), .space_o(space), \
               .m_axis_tvalid_o(valid), .m_axis_tdata_o(data_o), .m_axis_tkeep_o(keep_o), .m_axis_tlast_o(last_o), \
               .m_axis_tuser_o(user_o), .m_axis_tready_i(ready[0]));\n";
    for (e, wd) in [
        ("space", 1),
        ("valid", 1),
        ("data_o", 64),
        ("keep_o", 8),
        ("last_o", 1),
        ("user_o", 32),
    ] {
        w.output(e.into(), wd);
    }
    let mut rng = Rng(0xf1f0);
    let mut queue: std::collections::VecDeque<(u64, u64)> = Default::default();
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..2000 {
        let (push, ready) = (rng.below(3) != 0, rng.below(3) != 0);
        let (data, user) = (rng.next(), rng.next() & 0xffff_ffff);
        let mut v = Bits::default();
        v.push(1, push as u64);
        v.push(64, data);
        v.push(32, user);
        v.push(1, ready as u64);
        vectors.push(v);
        let space = queue.len() < 2;
        expected.push((space, queue.front().copied()));
        let popped = ready && !queue.is_empty();
        if popped {
            queue.pop_front();
        }
        if push && space {
            queue.push_back((data, user));
        }
    }
    let out = w.run("axis_out", &vectors);
    for (i, ((space, head), got)) in expected.iter().zip(&out).enumerate() {
        assert_eq!(got.get(0, 1) == 1, *space, "cycle {i}: space");
        assert_eq!(got.get(1, 1) == 1, head.is_some(), "cycle {i}: valid");
        if let Some((data, user)) = head {
            assert_eq!(got.get(2, 64), *data, "cycle {i}: data");
            assert_eq!(got.get(66, 8), data & 0xff, "cycle {i}: keep");
            assert_eq!(got.get(74, 1), (data >> 8) & 1, "cycle {i}: last");
            assert_eq!(got.get(75, 32), *user, "cycle {i}: user");
        }
    }
}

#[test]
fn array_lookup_gives_the_value_pointer_or_null() {
    let cases = [(0u64, 4u64, 16u64), (2, 64, 8), (5, 1, 24)];
    let mut w = Wrapper::default();
    w.input("key", 32);
    w.input("old", 64);
    w.input("en", 1);
    for (i, (map, entries, vsize)) in cases.iter().enumerate() {
        writeln!(
            w.body,
            "  logic [63:0] r{i};\n  ehdl_array_lookup #(.MAP_ID({map}), .ENTRIES({entries}), .VALUE_SIZE({vsize})) \
             u_l{i} (.en_i(en[0]), .key_i(key), .old_i(old), .r0_o(r{i}));"
        )
        .expect("string");
        w.output(format!("r{i}"), 64);
    }
    let mut rng = Rng(0xa77a);
    let inputs: Vec<(u64, u64, bool)> = (0..300)
        .map(|_| {
            let key = match rng.below(3) {
                0 => rng.next() & 0xffff_ffff,
                _ => rng.below(70),
            };
            (key, rng.next(), rng.below(5) != 0)
        })
        .collect();
    let vectors: Vec<Bits> = inputs
        .iter()
        .map(|&(key, old, en)| {
            let mut v = Bits::default();
            v.push(32, key);
            v.push(64, old);
            v.push(1, en as u64);
            v
        })
        .collect();
    let out = w.run("array_lookup", &vectors);
    for (&(key, old, en), got) in inputs.iter().zip(&out) {
        for (i, &(map, entries, vsize)) in cases.iter().enumerate() {
            let ptr = if key < entries {
                ((map + 1) << 32) + key * vsize
            } else {
                0
            };
            assert_eq!(
                got.get(64 * i, 64),
                if en { ptr } else { old },
                "map {map} key {key}"
            );
        }
    }
}

#[test]
fn map_memory_applies_ports_in_order_and_serves_the_host() {
    // Whole 8-byte rows, three ports.
    map_memory_case(40, 3, 8, 0, 0b111, 0x3a95);
}

#[test]
fn map_memory_with_a_partial_last_row_and_two_ports() {
    // 44 bytes: the last row has 4 bytes, the others must read 0 and never be written.
    map_memory_case(44, 2, 7, 0, 0b11, 0x51d3);
}

#[test]
fn map_memory_accesses_straddle_its_banks() {
    // 300 bytes: two banks of 16 rows and one of 6 (the last row half used); the hot accesses start 4 bytes before
    // the end of bank 0, so they straddle rows 15 and 16 and the two banks' outputs meet in one read.
    map_memory_case(300, 3, 9, 124, 0b111, 0x77c1);
}

#[test]
fn map_memory_ignores_the_write_enables_of_read_only_ports() {
    // WRITES = 0b101: port 1 is a load (the generator ties its enable to 0, here it toggles); its reads still see
    // port 0's writes and port 2 still sees port 0's, never port 1's.
    map_memory_case(300, 3, 9, 124, 0b101, 0x5eed);
}

/// `ehdl_map_mem` with `bytes` bytes, `np` ports (those in the bit mask `writes` may write) and `aw` address bits
/// against a byte model over 1500 cycles of random, often overlapping and row-straddling accesses (most of them at
/// `hot` + 0, 8 or 16, some anywhere, some past the end).
fn map_memory_case(bytes: usize, np: usize, aw: usize, hot: usize, writes: u64, seed: u64) {
    let mut w = Wrapper::default();
    w.input("we", np);
    w.input("op", 3 * np);
    w.input("addr", aw * np);
    w.input("wdata", 64 * np);
    w.input("wmask", 8 * np);
    w.input("hwe", 1);
    w.input("haddr", aw);
    w.input("hwdata", 64);
    w.input("hwmask", 8);
    w.body += &format!(
        "  logic [{}:0] rdata;\n  logic [63:0] hrdata;\n  ehdl_map_mem #(.BYTES({bytes}), .NP({np}), .AW({aw}), .WRITES({np}'d{writes})) u_m (\
         .clk_i(clk_i), .rst_ni(rst_ni), .we_i(we), .op_i(op), .addr_i(addr), .wdata_i(wdata), .wmask_i(wmask), \
         .rdata_o(rdata), .host_we_i(hwe), .host_addr_i(haddr), .host_wdata_i(hwdata), .host_wmask_i(hwmask), \
         .host_rdata_o(hrdata));\n",
        64 * np - 1
    );
    w.output("rdata".into(), 64 * np);
    w.output("hrdata".into(), 64);
    struct Port {
        we: bool,
        op: u64,
        addr: usize,
        wdata: u64,
        wmask: u64,
    }
    let read = |mem: &[u8], a: usize| {
        (0..8).fold(0u64, |v, b| {
            v | (mem.get(a + b).copied().unwrap_or(0) as u64) << (8 * b)
        })
    };
    let mut rng = Rng(seed);
    let mut mem = vec![0u8; bytes];
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    for _ in 0..1500 {
        let ports: Vec<Port> = (0..np)
            .map(|_| Port {
                we: rng.below(2) == 1,
                op: rng.below(6),
                // Overlapping addresses often, and sometimes past the end.
                addr: if rng.below(4) == 0 {
                    rng.below_usize(bytes + 8)
                } else {
                    hot + 8 * rng.below_usize(3)
                },
                wdata: rng.operand(),
                wmask: [0xff, 0x0f, 0x03, 0x01, rng.below(256)][rng.below_usize(5)],
            })
            .collect();
        let (hwe, haddr, hwdata, hwmask) = (
            rng.below(4) == 0,
            rng.below_usize(bytes + 4),
            rng.next(),
            rng.below(256),
        );
        let mut v = Bits::default();
        for p in &ports {
            v.push(1, p.we as u64);
        }
        for p in &ports {
            v.push(3, p.op);
        }
        for p in &ports {
            v.push(aw, p.addr as u64);
        }
        for p in &ports {
            v.push(64, p.wdata);
        }
        for p in &ports {
            v.push(8, p.wmask);
        }
        v.push(1, hwe as u64);
        v.push(aw, haddr as u64);
        v.push(64, hwdata);
        v.push(8, hwmask);
        vectors.push(v);
        let host_read = read(&mem, haddr);
        let mut next = mem.clone();
        let mut rdata = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            let old = read(&next, p.addr);
            rdata.push(old);
            let upd = match p.op {
                1 => old.wrapping_add(p.wdata),
                2 => old | p.wdata,
                3 => old & p.wdata,
                4 => old ^ p.wdata,
                _ => p.wdata,
            };
            for b in 0..8 {
                if p.we && (writes >> i) & 1 == 1 && (p.wmask >> b) & 1 == 1 && p.addr + b < bytes {
                    next[p.addr + b] = (upd >> (8 * b)) as u8;
                }
            }
        }
        if hwe {
            for b in 0..8 {
                if (hwmask >> b) & 1 == 1 && haddr + b < bytes {
                    next[haddr + b] = (hwdata >> (8 * b)) as u8;
                }
            }
        }
        expected.push((rdata, host_read));
        mem = next;
    }
    let out = w.run(&format!("map_mem_{bytes}_{np}_{writes}"), &vectors);
    for (i, ((rdata, host), got)) in expected.iter().zip(&out).enumerate() {
        for (p, r) in rdata.iter().enumerate() {
            assert_eq!(got.get(64 * p, 64), *r, "cycle {i}: port {p} read");
        }
        assert_eq!(got.get(64 * np, 64), *host, "cycle {i}: host read");
    }
}

#[test]
fn map_ram_reads_early_addresses_and_forwards_writes_in_flight() {
    // 40 bytes (5 rows: 3 even, 2 odd), three ports, the middle one writing: port 2 sees its writes in the same
    // cycle, port 0 one cycle later (through the delay register).
    map_ram_case(40, 3, 8, 0, (0b010, 0b111, 0b111, 0b000), 0x3a95);
}

#[test]
fn map_ram_with_a_partial_last_row_and_the_first_port_writing() {
    // 44 bytes: the last row has 4 bytes, the others must read 0 and never be written.
    map_ram_case(44, 2, 7, 0, (0b01, 0b11, 0b11, 0b00), 0x51d3);
}

#[test]
fn map_ram_straddles_rows_of_both_parities() {
    // 300 bytes (38 rows); the hot accesses start 4 bytes before row 16 and straddle an even and an odd row.
    map_ram_case(300, 3, 9, 124, (0b100, 0b111, 0b111, 0b000), 0x77c1);
}

#[test]
fn map_ram_without_a_pipeline_writer_and_a_port_that_never_reads() {
    // Only the host writes; port 1 has no copy of the RAMs and reads 0.
    map_ram_case(300, 3, 9, 124, (0, 0b101, 0b111, 0), 0x5eed);
}

#[test]
fn map_ram_with_three_writers_keeps_the_last_writer_of_each_byte() {
    // Three banks and a live value table: every port writes (port 1 never reads), overlapping bytes in one cycle and
    // across cycles, the host writing through bank 0.
    map_ram_case(300, 4, 9, 124, (0b1101, 0b1101, 0b1111, 0b0000), 0x1357);
    map_ram_case(40, 3, 8, 0, (0b111, 0b111, 0b111, 0b000), 0x2468);
}

#[test]
fn map_ram_ports_outside_atomic_store_their_data_whatever_op_they_get() {
    // A plain store (not in ATOMIC) writes its data even when op_i asks for an update, ahead of a later reader as
    // xdp1_drop's store and load, in EARLY (its next address on raddr, as the generator presents it: its forwarding
    // into the later port's read is decided a cycle early); then an atomic writer, a plain store outside EARLY
    // (compared in the cycle) and a plain writer that reads, in one block.
    map_ram_case(300, 2, 9, 124, (0b01, 0b10, 0b00, 0b01), 0x0a70);
    map_ram_case(300, 3, 9, 124, (0b111, 0b101, 0b001, 0b000), 0x1a71);
}

/// `ehdl_map_ram` with `bytes` bytes, `np` ports (the bit masks: those in `writes` writing, those in `reads`
/// reading, those in `atomic` updating as `op` says, the others storing their data) and `aw` address bits against a
/// byte model over 1500 cycles of random, often overlapping and row-straddling accesses, each port's address
/// presented a cycle early (`raddr` is the next cycle's `addr`; runs of one address stand for a held stage). The
/// host reads one cycle after its address; its writes are dropped in cycles the first writing port writes. Writers
/// in `early` have their forwarding decided from `raddr` a cycle early, the others in the cycle.
fn map_ram_case(
    bytes: usize,
    np: usize,
    aw: usize,
    hot: usize,
    (writes, reads, atomic, early): (u64, u64, u64, u64),
    seed: u64,
) {
    let mut w = Wrapper::default();
    w.input("raddr", aw * np);
    w.input("we", np);
    w.input("op", 3 * np);
    w.input("addr", aw * np);
    w.input("wdata", 64 * np);
    w.input("wmask", 8 * np);
    w.input("hwe", 1);
    w.input("haddr", aw);
    w.input("hwdata", 64);
    w.input("hwmask", 8);
    w.body += &format!(
        "  logic [{}:0] rdata;\n  logic [63:0] hrdata;\n  logic hdrop;\n  ehdl_map_ram #(.BYTES({bytes}), .NP({np}), .AW({aw}), \
         .WRITES({np}'d{writes}), .READS({np}'d{reads}), .ATOMIC({np}'d{atomic}), .EARLY({np}'d{early})) u_m (.clk_i(clk_i), .rst_ni(rst_ni), .raddr_i(raddr), .we_i(we), \
         .op_i(op), .addr_i(addr), .wdata_i(wdata), .wmask_i(wmask), .rdata_o(rdata), .host_we_i(hwe), \
         .host_addr_i(haddr), .host_wdata_i(hwdata), .host_wmask_i(hwmask), .host_rdata_o(hrdata), .host_drop_o(hdrop));\n",
        64 * np - 1
    );
    w.output("rdata".into(), 64 * np);
    w.output("hrdata".into(), 64);
    w.output("hdrop".into(), 1);
    struct Port {
        we: bool,
        op: u64,
        addr: usize,
        wdata: u64,
        wmask: u64,
    }
    let read = |mem: &[u8], a: usize| {
        (0..8).fold(0u64, |v, b| {
            v | (mem.get(a + b).copied().unwrap_or(0) as u64) << (8 * b)
        })
    };
    let first_writer = (0..np).find(|&i| (writes >> i) & 1 == 1);
    let mut rng = Rng(seed);
    // Every cycle's port operations first: each vector carries the next cycle's addresses.
    let mut cycles: Vec<Vec<Port>> = Vec::new();
    for _ in 0..1500 {
        let hold = rng.below(4) == 0 && !cycles.is_empty();
        let ports: Vec<Port> = (0..np)
            .map(|i| Port {
                // Nothing writes in the first cycle: the addresses before it were not presented early.
                we: rng.below(2) == 1 && !cycles.is_empty(),
                op: rng.below(6),
                addr: if hold {
                    cycles.last().map_or(0, |c: &Vec<Port>| c[i].addr)
                } else if rng.below(4) == 0 {
                    rng.below_usize(bytes + 8)
                } else {
                    hot + 8 * rng.below_usize(3) + [0, 0, 3][rng.below_usize(3)]
                },
                wdata: rng.operand(),
                wmask: [0xff, 0x0f, 0x03, 0x01, 0x00, rng.below(256)][rng.below_usize(6)],
            })
            .collect();
        cycles.push(ports);
    }
    let mut mem = vec![0u8; bytes];
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    let mut prev_haddr = 0;
    for (t, ports) in cycles.iter().enumerate() {
        let (hwe, haddr, hwdata, hwmask) = (
            rng.below(3) == 0,
            rng.below_usize(bytes + 4),
            rng.next(),
            rng.below(256),
        );
        let mut v = Bits::default();
        for i in 0..np {
            v.push(aw, cycles.get(t + 1).map_or(0, |c| c[i].addr) as u64);
        }
        for p in ports {
            v.push(1, p.we as u64);
        }
        for p in ports {
            v.push(3, p.op);
        }
        for p in ports {
            v.push(aw, p.addr as u64);
        }
        for p in ports {
            v.push(64, p.wdata);
        }
        for p in ports {
            v.push(8, p.wmask);
        }
        v.push(1, hwe as u64);
        v.push(aw, haddr as u64);
        v.push(64, hwdata);
        v.push(8, hwmask);
        vectors.push(v);
        let host_read = read(&mem, prev_haddr);
        prev_haddr = haddr;
        let mut next = mem.clone();
        let mut rdata = Vec::new();
        let mut piped = false;
        for (i, p) in ports.iter().enumerate() {
            let old = read(&next, p.addr);
            rdata.push(if (reads >> i) & 1 == 1 { old } else { 0 });
            if (writes >> i) & 1 == 0 || !p.we || p.wmask == 0 {
                continue;
            }
            piped |= Some(i) == first_writer;
            let op = if (atomic >> i) & 1 == 1 { p.op } else { 0 };
            let upd = match op {
                1 => old.wrapping_add(p.wdata),
                2 => old | p.wdata,
                3 => old & p.wdata,
                4 => old ^ p.wdata,
                _ => p.wdata,
            };
            for b in 0..8 {
                if (p.wmask >> b) & 1 == 1 && p.addr + b < bytes {
                    next[p.addr + b] = (upd >> (8 * b)) as u8;
                }
            }
        }
        if hwe && !piped {
            for b in 0..8 {
                if (hwmask >> b) & 1 == 1 && haddr + b < bytes {
                    next[haddr + b] = (hwdata >> (8 * b)) as u8;
                }
            }
        }
        expected.push((rdata, host_read, hwe && piped));
        mem = next;
    }
    let out = w.run(
        &format!("map_ram_{bytes}_{np}_{writes}_{reads}_{atomic}_{early}"),
        &vectors,
    );
    for (i, ((rdata, host, drop), got)) in expected.iter().zip(&out).enumerate() {
        for (p, r) in rdata.iter().enumerate() {
            assert_eq!(got.get(64 * p, 64), *r, "cycle {i}: port {p} read");
        }
        assert_eq!(got.get(64 * np, 64), *host, "cycle {i}: host read");
        assert_eq!(
            got.get(64 * np + 64, 1),
            *drop as u64,
            "cycle {i}: host write dropped"
        );
    }
}

#[test]
fn hash_map_cam_looks_up_updates_deletes_in_port_order_and_serves_the_host() {
    hash_map_case(5, 3, 8, 0xca11);
}

#[test]
fn hash_map_cam_finds_keys_and_free_slots_across_its_banks() {
    // 37 entries: two banks of 16 slots and one of 5, so the lowest free slot and a port's key are often in
    // different banks, and slots written this cycle by the other port lie in any of them.
    hash_map_case(37, 6, 10, 0xca12);
}

/// `ehdl_hash_map` (two ports, one probe, 6-byte keys, `entries` slots, `sw` slot bits, `aw` host address bits)
/// against a model over 2000 cycles: lookups, updates with every flag and deletes of keys from a pool slightly
/// larger than the map, host reads and writes of keys and valid bits.
fn hash_map_case(entries: usize, sw: usize, aw: usize, seed: u64) {
    const KB: usize = 6;
    const KS: usize = 8;
    let pool_size = entries + 2;
    let mut w = Wrapper::default();
    w.input("keys", 2 * 8 * KB);
    w.input("kind", 2);
    w.input("en", 2);
    w.input("flags", 4);
    w.input("del", 2);
    w.input("hwe", 1);
    w.input("hvalid", 1);
    w.input("haddr", aw);
    w.input("hwdata", 64);
    w.input("hwmask", 8);
    w.input("probe", 8 * KB);
    w.body += &format!(
        "  logic [1:0] hit;\n  logic [{}:0] slot;\n  logic [15:0] err;\n  logic [63:0] hrdata;\n  \
         logic [1:0] busy;\n  logic [0:0] phit;\n  logic [{}:0] pslot;\n  \
         ehdl_hash_map #(.ENTRIES({entries}), .KEY_BYTES({KB}), .NP(2), .SW({sw}), .AW({aw})) u_h (.clk_i(clk_i), \
         .rst_ni(rst_ni), .kind_i(kind), .del_i(del), .en_i(en), .req_i(2'b11), .key_i(keys), .flags_i(flags), \
         .hit_o(hit), .slot_o(slot), .err_o(err), .busy_o(busy), .probe_key_i(probe), .probe_hit_o(phit), \
         .probe_slot_o(pslot), .host_we_i(hwe[0]), .host_valid_i(hvalid[0]), .host_addr_i(haddr), .host_wdata_i(hwdata), \
         .host_wmask_i(hwmask), .host_rdata_o(hrdata));\n",
        2 * sw - 1,
        sw - 1
    );
    w.output("hit".into(), 2);
    w.output("slot".into(), 2 * sw);
    w.output("err".into(), 16);
    w.output("hrdata".into(), 64);
    w.output("busy".into(), 2);
    w.output("phit".into(), 1);
    w.output("pslot".into(), sw);
    let mut rng = Rng(seed);
    // Keys drawn from a small set, so slots collide, lookups hit and the map fills up.
    let pool: Vec<Vec<u8>> = (0..pool_size).map(|_| rng.bytes(KB)).collect();
    let mut keys = vec![vec![0u8; KB]; entries];
    let mut valid = vec![false; entries];
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    let (mut hits, mut inserts, mut deletes, mut probed) = (0, 0, 0, 0);
    for _ in 0..2000 {
        let look: Vec<Vec<u8>> = (0..2)
            .map(|_| {
                if rng.below(5) == 0 {
                    rng.bytes(KB)
                } else {
                    pool[rng.below_usize(pool_size)].clone()
                }
            })
            .collect();
        let kind: Vec<bool> = (0..2).map(|_| rng.below(3) == 0).collect();
        let en: Vec<bool> = (0..2).map(|_| rng.below(4) != 0).collect();
        let flags: Vec<u64> = (0..2).map(|_| rng.below(3)).collect();
        let del: Vec<bool> = (0..2).map(|_| rng.below(4) == 0).collect();
        let hvalid = rng.below(3) == 0;
        let haddr = if hvalid {
            rng.below_usize(entries + 2)
        } else {
            KS * rng.below_usize(entries + 1) + [0, 0, 2, 5][rng.below_usize(4)]
        };
        // The host mostly clears valid bits, so the pipeline's inserts find room.
        let hwe = rng.below(4) == 0;
        let mut hwdata = if hvalid { rng.below(4) / 3 } else { rng.next() };
        if !hvalid && rng.below(2) == 0 {
            let k = &pool[rng.below_usize(pool_size)];
            hwdata = k
                .iter()
                .enumerate()
                .fold(0, |v, (i, b)| v | (*b as u64) << (8 * i));
        }
        let hwmask = [0xff, 0x3f, 0x01, rng.below(256)][rng.below_usize(4)];
        let mut v = Bits::default();
        for k in &look {
            v.push_bytes(k);
        }
        v.push(1, kind[0] as u64);
        v.push(1, kind[1] as u64);
        v.push(1, en[0] as u64);
        v.push(1, en[1] as u64);
        v.push(2, flags[0]);
        v.push(2, flags[1]);
        v.push(1, del[0] as u64);
        v.push(1, del[1] as u64);
        v.push(1, hwe as u64);
        v.push(1, hvalid as u64);
        v.push(aw, haddr as u64);
        v.push(64, hwdata);
        v.push(8, hwmask);
        // The probe sees the table before this cycle's writes.
        let probe = pool[rng.below_usize(pool_size)].clone();
        v.push_bytes(&probe);
        let probe_slot = (0..entries).find(|&e| valid[e] && keys[e] == probe);
        probed += probe_slot.is_some() as usize;
        vectors.push(v);
        let hread = if hvalid {
            (haddr < entries && valid[haddr]) as u64
        } else {
            (0..8).fold(0u64, |v, b| {
                let (s, kb) = ((haddr + b) / KS, (haddr + b) % KS);
                let byte = if s < entries && kb < KB {
                    keys[s][kb]
                } else {
                    0
                };
                v | (byte as u64) << (8 * b)
            })
        };
        let mut want = Vec::new();
        for p in 0..2 {
            let found = (0..entries).find(|&e| valid[e] && keys[e] == look[p]);
            let free = (0..entries).find(|&e| !valid[e]);
            let (hit, slot, err) = if !kind[p] {
                (found.is_some(), found, 0)
            } else if del[p] {
                match found {
                    Some(f) => {
                        if en[p] {
                            valid[f] = false;
                            deletes += 1;
                        }
                        (false, None, 0)
                    }
                    None => (false, None, 2),
                }
            } else if let Some(f) = found {
                if flags[p] == 1 {
                    (false, None, 17)
                } else {
                    (en[p], Some(f), 0)
                }
            } else if flags[p] == 2 {
                (false, None, 2)
            } else if let Some(f) = free {
                if en[p] {
                    valid[f] = true;
                    keys[f] = look[p].clone();
                    inserts += 1;
                }
                (en[p], Some(f), 0)
            } else {
                (false, None, 7)
            };
            hits += hit as usize;
            want.push((hit, slot, err));
        }
        expected.push((want, hread, probe_slot));
        if hwe {
            if hvalid {
                if haddr < entries && hwmask & 1 == 1 {
                    valid[haddr] = hwdata & 1 == 1;
                }
            } else {
                for b in 0..8 {
                    let (s, kb) = ((haddr + b) / KS, (haddr + b) % KS);
                    if s < entries && kb < KB && (hwmask >> b) & 1 == 1 {
                        keys[s][kb] = (hwdata >> (8 * b)) as u8;
                    }
                }
            }
        }
    }
    let out = w.run(&format!("hash_map_{entries}"), &vectors);
    for (i, ((want, hread, probe_slot), got)) in expected.iter().zip(&out).enumerate() {
        let (err_at, hread_at) = (2 + 2 * sw, 18 + 2 * sw);
        let (busy_at, phit_at) = (82 + 2 * sw, 84 + 2 * sw);
        let probe = (got.get(phit_at, 1) == 1).then(|| got.get(phit_at + 1, sw) as usize);
        assert_eq!(probe, *probe_slot, "cycle {i}: probe");
        for (p, (hit, slot, err)) in want.iter().enumerate() {
            assert_eq!(got.get(p, 1) == 1, *hit, "cycle {i}: port {p} hit");
            if *hit {
                assert_eq!(
                    Some(got.get(2 + sw * p, sw) as usize),
                    *slot,
                    "cycle {i}: port {p} slot"
                );
            }
            assert_eq!(
                got.get(err_at + 8 * p, 8),
                *err,
                "cycle {i}: port {p} errno"
            );
        }
        assert_eq!(got.get(hread_at, 64), *hread, "cycle {i}: host read");
        assert_eq!(
            got.get(busy_at, 2),
            0,
            "cycle {i}: a HASH block is never busy"
        );
    }
    assert!(
        hits > 200 && inserts > 20 && deletes > 20 && probed > 200,
        "{hits} hits, {inserts} inserts, {deletes} deletes, {probed} probes found their key"
    );
}

#[test]
fn run_time_offset_loads_and_stores_reach_the_available_frames() {
    const NF: usize = 3;
    let fb = DW / 8;
    let mut w = Wrapper::default();
    w.input("frames", NF * DW);
    w.input("addr", 16);
    w.input("val", 64);
    w.input("fidx", 8 * NF);
    w.input("en", 1);
    let sizes = [(1usize, false), (2, true), (4, false), (8, false)];
    for (i, (size, signed)) in sizes.iter().enumerate() {
        writeln!(
            w.body,
            "  logic [63:0] r{i};\n  logic lm{i}, sm{i};\n  logic [{}:0] sd{i};\n  logic [{}:0] sk{i};\n  \
             ehdl_pkt_load_dyn #(.DW({DW}), .NF({NF}), .SIZE({size}), .SIGNED({})) u_l{i} (.en_i(en[0]), \
             .frames_i(frames), .addr_i(addr), .old_i(val), .res_o(r{i}), .miss_o(lm{i}));\n  \
             ehdl_pkt_store_dyn #(.DW({DW}), .FW(8), .NF({NF}), .SIZE({size})) u_s{i} (.en_i(en[0]), .addr_i(addr), \
             .val_i(val), .fidx_i(fidx), .data_o(sd{i}), .mask_o(sk{i}), .miss_o(sm{i}));",
            NF * DW - 1,
            NF * fb - 1,
            *signed as u8
        )
        .expect("string");
        for (e, wd) in [
            (format!("r{i}"), 64),
            (format!("lm{i}"), 1),
            (format!("sd{i}"), NF * DW),
            (format!("sk{i}"), NF * fb),
            (format!("sm{i}"), 1),
        ] {
            w.output(e, wd);
        }
    }
    let mut rng = Rng(0xd1a);
    let mut inputs = Vec::new();
    for _ in 0..400 {
        let fidx: Vec<u64> = (0..NF as u64)
            .map(|f| if rng.below(4) == 0 { rng.below(5) } else { f })
            .collect();
        inputs.push((
            rng.bytes(NF * fb),
            rng.below_usize(NF * fb + 6),
            rng.next(),
            fidx,
            rng.below(5) != 0,
        ));
    }
    let vectors: Vec<Bits> = inputs
        .iter()
        .map(|(frames, addr, val, fidx, en)| {
            let mut v = Bits::default();
            v.push_bytes(frames);
            v.push(16, *addr as u64);
            v.push(64, *val);
            for f in fidx {
                v.push(8, *f);
            }
            v.push(1, *en as u64);
            v
        })
        .collect();
    let out = w.run("dyn", &vectors);
    let per = 64 + 1 + NF * DW + NF * fb + 1;
    for ((frames, addr, val, fidx, en), got) in inputs.iter().zip(&out) {
        for (i, &(size, signed)) in sizes.iter().enumerate() {
            let base = i * per;
            let miss = addr + size > NF * fb;
            let raw = (0..size).fold(0u64, |v, b| {
                v | (*frames.get(addr + b).unwrap_or(&0) as u64) << (8 * b)
            });
            let bits = 8 * size as u32;
            let value = if signed && bits < 64 {
                (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64
            } else {
                raw
            };
            assert_eq!(
                got.get(base, 64),
                if *en { value } else { *val },
                "load size {size} at {addr}"
            );
            assert_eq!(
                got.get(base + 64, 1) == 1,
                *en && miss,
                "load miss size {size} at {addr}"
            );
            let mut data = vec![0u8; NF * fb];
            let mut mask = vec![false; NF * fb];
            for b in 0..size {
                let at = addr + b;
                if *en && at < NF * fb && fidx[at / fb] == (at / fb) as u64 {
                    data[at] = (val >> (8 * b)) as u8;
                    mask[at] = true;
                }
            }
            assert_eq!(
                got.bytes(base + 65, NF * fb),
                data,
                "store data size {size} at {addr}"
            );
            for (j, m) in mask.iter().enumerate() {
                assert_eq!(
                    got.get(base + 65 + NF * DW + j, 1) == 1,
                    *m,
                    "store mask byte {j}"
                );
            }
            assert_eq!(
                got.get(base + 65 + NF * DW + NF * fb, 1) == 1,
                *en && miss,
                "store miss"
            );
        }
    }
}

#[test]
fn lpm_cam_finds_the_longest_matching_prefix() {
    lpm_case(6, 3, 0x19a);
}

#[test]
fn lpm_cam_finds_the_longest_prefix_across_its_banks() {
    // 21 entries: banks of 16 and 5 slots; equal prefixes in both banks must give the lower slot.
    lpm_case(21, 5, 0x19b);
}

/// An LPM_TRIE block (`ehdl_hash_map` with `LPM = 1`, 8-byte keys, `entries` slots, `sw` slot bits) against a model:
/// 1500 cycles of lookups of addresses near a few nested prefixes while the host rewrites keys and valid bits.
fn lpm_case(entries: usize, sw: usize, seed: u64) {
    let mut w = Wrapper::default();
    w.input("key", 64);
    w.input("hwe", 1);
    w.input("hvalid", 1);
    w.input("haddr", 8);
    w.input("hwdata", 64);
    w.body += &format!(
        "  logic hit;\n  logic [{}:0] slot;\n  logic [7:0] err;\n  logic [63:0] hrdata;\n  logic busy;\n  \
         logic phit;\n  logic [{}:0] pslot;\n  logic unused_probe;\n  assign unused_probe = ^{{phit, pslot}};\n  \
         ehdl_hash_map #(.ENTRIES({entries}), .KEY_BYTES(8), .NP(1), .SW({sw}), .AW(8), .LPM(1)) u_h (.clk_i(clk_i), \
         .rst_ni(rst_ni), .kind_i(1'b0), .del_i(1'b0), .en_i(1'b0), .req_i(1'b0), .key_i(key), .flags_i(2'd0), \
         .hit_o(hit), .slot_o(slot), .busy_o(busy), .probe_key_i(64'd0), .probe_hit_o(phit), .probe_slot_o(pslot), \
         .err_o(err), .host_we_i(hwe[0]), .host_valid_i(hvalid[0]), .host_addr_i(haddr), .host_wdata_i(hwdata), \
         .host_wmask_i(8'hff), .host_rdata_o(hrdata));\n",
        sw - 1,
        sw - 1
    );
    w.output("hit".into(), 1);
    w.output("slot".into(), sw);
    w.output("err".into(), 8);
    w.output("hrdata".into(), 64);
    w.output("busy".into(), 1);
    // Keys are {prefixlen (LE), 4 address bytes}; nested prefixes of a few bases, addresses near them.
    let mut rng = Rng(seed);
    let bases = [[10u8, 1, 2, 3], [10, 1, 200, 3], [192, 168, 5, 9]];
    let matches = |plen: u32, data: &[u8; 4], addr: &[u8; 4]| {
        (0..plen as usize)
            .all(|i| (data[i / 8] >> (7 - i % 8)) & 1 == (addr[i / 8] >> (7 - i % 8)) & 1)
    };
    let mut keys = vec![(0u32, [0u8; 4]); entries];
    let mut valid = vec![false; entries];
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    let mut hits = 0;
    for cycle in 0..1500 {
        let mut addr = bases[rng.below_usize(3)];
        addr[rng.below_usize(4)] ^= 1 << rng.below(8);
        let klen = if rng.below(4) == 0 {
            rng.below(33) as u32
        } else {
            32
        };
        let key = (klen as u64) | (u32::from_le_bytes(addr) as u64) << 32;
        let slot = rng.below_usize(entries);
        let (hwe, hvalid, haddr, hwdata) = match cycle % 3 {
            0 => (true, true, slot, rng.below(2)),
            1 => {
                let d = bases[rng.below_usize(3)];
                let plen = [0u32, 8, 16, 20, 24, 32][rng.below_usize(6)];
                (
                    true,
                    false,
                    8 * slot,
                    (plen as u64) | (u32::from_le_bytes(d) as u64) << 32,
                )
            }
            _ => (false, false, 0, 0),
        };
        let mut v = Bits::default();
        v.push(64, key);
        v.push(1, hwe as u64);
        v.push(1, hvalid as u64);
        v.push(8, haddr as u64);
        v.push(64, hwdata);
        vectors.push(v);
        let mut best: Option<(u32, usize)> = None;
        for e in 0..entries {
            let (plen, data) = keys[e];
            if valid[e]
                && plen <= klen
                && matches(plen, &data, &addr)
                && best.is_none_or(|(b, _)| plen > b)
            {
                best = Some((plen, e));
            }
        }
        hits += best.is_some() as usize;
        expected.push(best.map(|(_, e)| e));
        if hwe && hvalid {
            valid[haddr] = hwdata & 1 == 1;
        } else if hwe {
            keys[haddr / 8] = (hwdata as u32, ((hwdata >> 32) as u32).to_le_bytes());
        }
    }
    let out = w.run(&format!("lpm_{entries}"), &vectors);
    for (i, (want, got)) in expected.iter().zip(&out).enumerate() {
        assert_eq!(got.get(0, 1) == 1, want.is_some(), "cycle {i}: hit");
        if let Some(e) = want {
            assert_eq!(got.get(1, sw) as usize, *e, "cycle {i}: slot");
        }
    }
    assert!(hits > 200, "{hits} hits");
}

/// One LRU block (`ehdl_hash_map` with `LRU = 1`) against the reference machine's LRU map (`hwxdp_maps`, the kernel's
/// bpf_lru_list.c ported): random program lookups, updates (every flag) and deletes over more keys than entries, one
/// operation per window of cycles. A wrapper register holds the operation on its port until the block lets it commit
/// (`en = req & ~busy`). Every lookup's slot is the reference's node, every update's errno is the reference's and a
/// successful one's slot is the node holding the value the reference wrote, and after each operation the host port's
/// valid bits and keys are exactly the reference's entries.
fn lru_block_matches_the_reference_lru(map_type: u32, entries: usize, cpus: usize, seed: u64) {
    use hwxdp_maps::{MapStore, Maps};
    use hwxdp_object::{MapKind, MapSpec};
    const KB: usize = 6;
    // An operation walks the lists, longer in a larger map.
    let window: usize = 96.max(48 + 4 * entries);
    let sw = (usize::BITS - (entries - 1).leading_zeros()).max(1) as usize;
    // LRU_PERCPU_HASH takes the per-CPU update path whatever the CPU count; slots are node * cpus + cpu (CPU 0
    // here).
    let percpu = map_type == 10;
    let copies = if map_type == 10 { cpus as u32 } else { 1 };
    let mut w = Wrapper::default();
    w.input("start", 1);
    w.input("port", 1);
    w.input("kind_in", 1);
    w.input("del_in", 1);
    w.input("flags_in", 2);
    w.input("key_in", 8 * KB);
    w.input("hvalid", 1);
    w.input("haddr", 8);
    w.body += &format!(
        "  logic op_v_q, op_port_q, op_kind_q, op_del_q;\n  logic [1:0] op_flags_q;\n  logic [{kw}:0] op_key_q;\n  \
         logic [1:0] kind, del, en, req, hit, busy;\n  logic [3:0] flags;\n  logic [{kk}:0] keys;\n  \
         logic [{sw2}:0] slot;\n  logic [15:0] err;\n  logic [63:0] hrdata;\n  logic commit;\n  \
         always_ff @(posedge clk_i or negedge rst_ni) begin\n    if (!rst_ni) begin\n      op_v_q <= 1'b0;\n    \
         end else if (start[0]) begin\n      op_v_q <= 1'b1;\n      op_port_q <= port[0];\n      \
         op_kind_q <= kind_in[0];\n      op_del_q <= del_in[0];\n      op_flags_q <= flags_in;\n      op_key_q <= key_in;\n    \
         end else if (commit) begin\n      op_v_q <= 1'b0;\n    end\n  end\n  \
         assign req = op_port_q ? {{op_v_q, 1'b0}} : {{1'b0, op_v_q}};\n  \
         assign kind = op_port_q ? {{op_kind_q, 1'b0}} : {{1'b0, op_kind_q}};\n  \
         assign del = op_port_q ? {{op_del_q, 1'b0}} : {{1'b0, op_del_q}};\n  \
         assign flags = op_port_q ? {{op_flags_q, 2'd0}} : {{2'd0, op_flags_q}};\n  \
         assign keys = op_port_q ? {{op_key_q, {kb}'d0}} : {{{kb}'d0, op_key_q}};\n  \
         assign en = req & ~busy;\n  assign commit = |en;\n  \
         logic phit;\n  logic [{sw}-1:0] pslot;\n  logic unused_probe;\n  assign unused_probe = ^{{phit, pslot}};\n  \
         ehdl_hash_map #(.ENTRIES({entries}), .KEY_BYTES({KB}), .NP(2), .SW({sw}), .AW(8), .LRU(1), \
         .PERCPU({pc}), .CPUS({cpus})) u_h (.clk_i(clk_i), .rst_ni(rst_ni), .kind_i(kind), .del_i(del), .en_i(en), \
         .req_i(req), .key_i(keys), .flags_i(flags), .hit_o(hit), .slot_o(slot), .err_o(err), .busy_o(busy), \
         .probe_key_i('0), .probe_hit_o(phit), .probe_slot_o(pslot), .host_we_i(1'b0), .host_valid_i(hvalid[0]), .host_addr_i(haddr), .host_wdata_i(64'd0), \
         .host_wmask_i(8'd0), .host_rdata_o(hrdata));\n",
        kw = 8 * KB - 1,
        kk = 16 * KB - 1,
        kb = 8 * KB,
        sw2 = 2 * sw - 1,
        pc = percpu as u8,
    );
    w.output("commit".into(), 1);
    w.output("op_port_q ? hit[1] : hit[0]".into(), 1);
    w.output(
        format!("op_port_q ? slot[{sw} +: {sw}] : slot[0 +: {sw}]"),
        sw,
    );
    w.output("op_port_q ? err[15:8] : err[7:0]".into(), 8);
    w.output("hrdata".into(), 64);
    let spec = MapSpec {
        name: "lru".into(),
        map_type,
        key_size: KB as u32,
        value_size: 8,
        max_entries: entries as u32,
        map_flags: 0,
        kind: MapKind::BtfDefined,
        initial_value: None,
        outer: None,
    };
    let mut maps = Maps::new(&[spec], cpus).expect("lru map");
    let mut rng = Rng(seed);
    let pool: Vec<Vec<u8>> = (0..entries + 4).map(|_| rng.bytes(KB)).collect();
    // Per operation: (kind, slot if it is checked, errno); then the window's host reads.
    let mut vectors = Vec::new();
    let mut want = Vec::new();
    let mut stamp = 0u64;
    let (mut evictions, mut hits, mut refused) = (0, 0, 0);
    for _ in 0..700 {
        let key = pool[rng.below_usize(pool.len())].clone();
        let op = rng.below(20);
        let (kind, del, flags) = match op {
            0..=7 => (0, 0, 0),
            8..=16 => (1, 0, [0, 0, 0, 1, 2][rng.below_usize(5)]),
            _ => (1, 1, 0),
        };
        let before: Vec<Vec<u8>> = maps
            .entries(0)
            .expect("entries")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let outcome = if kind == 0 {
            let s = maps.lookup_slot(0, &key).map(|s| s / copies);
            hits += s.is_some() as usize;
            (s.is_some(), s, 0u64)
        } else if del == 1 {
            let r = maps.prog_delete(0, &key);
            (false, None, (-r) as u64)
        } else {
            stamp += 1;
            let r = maps.prog_update(0, &key, &stamp.to_le_bytes(), flags);
            refused += (r != 0) as usize;
            let node = (0..entries as u32 * copies)
                .find(|&s| maps.value(0, s) == stamp.to_le_bytes())
                .map(|s| s / copies);
            (r == 0, if r == 0 { node } else { None }, (-r) as u64)
        };
        let table: Vec<Vec<u8>> = maps
            .entries(0)
            .expect("entries")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        // An entry other than the key itself left the table.
        evictions += before.iter().any(|k| *k != key && !table.contains(k)) as usize;
        let port = rng.below(2);
        for c in 0..window {
            let mut v = Bits::default();
            v.push(1, (c == 0) as u64);
            v.push(1, port);
            v.push(1, kind);
            v.push(1, del);
            v.push(2, flags);
            v.push_bytes(&key);
            // The last 2 * entries cycles read the valid bits, then the keys.
            let r = c as isize - (window - 2 * entries) as isize;
            let (hv, ha) = match r {
                r if r < 0 => (1, 0),
                r if (r as usize) < entries => (1, r as u64),
                r => (0, 8 * (r as u64 - entries as u64)),
            };
            v.push(1, hv);
            v.push(8, ha);
            vectors.push(v);
        }
        want.push((kind, outcome, table));
    }
    let out = w.run(&format!("lru_{map_type}_{entries}_{cpus}"), &vectors);
    for (i, (kind, (hit, slot, err), table)) in want.iter().enumerate() {
        let lines = &out[i * window..(i + 1) * window];
        let commits: Vec<usize> = (0..window).filter(|&c| lines[c].get(0, 1) == 1).collect();
        assert_eq!(
            commits.len(),
            1,
            "op {i}: one commit in its window, got {commits:?}"
        );
        let c = commits[0];
        assert!(
            c < window - 2 * entries,
            "op {i}: committed at cycle {c} of its window"
        );
        let got = &lines[c];
        assert_eq!(got.get(1, 1) == 1, *hit, "op {i} (kind {kind}): hit");
        if let Some(s) = slot {
            assert_eq!(
                got.get(2, sw),
                *s as u64,
                "map type {map_type}, {entries} entries, {cpus} cpus: op {i} (kind {kind}): slot (node)"
            );
        }
        assert_eq!(got.get(2 + sw, 8), *err, "op {i} (kind {kind}): errno");
        let mut hw: Vec<Vec<u8>> = (0..entries)
            .filter(|&s| lines[window - 2 * entries + s].get(10 + sw, 1) == 1)
            .map(|s| lines[window - entries + s].bytes(10 + sw, KB))
            .collect();
        hw.sort();
        let mut table = table.clone();
        table.sort();
        assert_eq!(hw, table, "op {i} (kind {kind}): the table after it");
    }
    assert!(
        evictions > 10 && hits > 50 && refused > 20,
        "{evictions} evictions, {hits} lookup hits, {refused} refused updates"
    );
}

#[test]
fn lru_hash_block_evicts_as_the_reference() {
    lru_block_matches_the_reference_lru(9, 8, 1, 0x1e0);
    lru_block_matches_the_reference_lru(9, 3, 1, 0x1e1);
    // Two banks of CAM slots (16 and 4): evictions and reinsertions cross them.
    lru_block_matches_the_reference_lru(9, 20, 1, 0x1e5);
}

#[test]
fn lru_hash_block_with_two_possible_cpus_and_percpu_values() {
    lru_block_matches_the_reference_lru(9, 8, 2, 0x1e2);
    lru_block_matches_the_reference_lru(10, 6, 1, 0x1e3);
    lru_block_matches_the_reference_lru(10, 6, 2, 0x1e4);
}

/// The RINGBUF block against the reference machine's ring buffer (`hwxdp_maps`): two ports output records of 1 to
/// 40 bytes, fitting or not exactly when the reference's `bpf_ringbuf_output` returns 0 or -EAGAIN; now and then the
/// host reads the producer position and the data area, parses the records from the consumer position on (the
/// kernel's layout) and frees them by writing the consumer position, and they are exactly the reference's drained
/// records.
#[test]
fn ringbuf_block_keeps_the_reference_records_and_space() {
    use hwxdp_maps::Maps;
    use hwxdp_object::{MapKind, MapSpec};
    const SIZE: usize = 4096;
    const MAXW: usize = 5;
    let mut w = Wrapper::default();
    w.input("en", 2);
    w.input("len", 32);
    w.input("data", 2 * 64 * MAXW);
    w.input("hwe", 1);
    w.input("haddr", 14);
    w.input("hwdata", 64);
    w.body += &format!(
        "  logic [1:0] ok;\n  logic [63:0] hrdata;\n  \
         ehdl_ringbuf #(.SIZE({SIZE}), .NP(2), .MAXW({MAXW}), .AW(14)) u_r (.clk_i(clk_i), .rst_ni(rst_ni), \
         .en_i(en), .len_i(len), .data_i(data), .ok_o(ok), .host_we_i(hwe[0]), .host_addr_i(haddr), \
         .host_wdata_i(hwdata), .host_wmask_i(8'hff), .host_rdata_o(hrdata));\n"
    );
    w.output("ok".into(), 2);
    w.output("hrdata".into(), 64);
    let spec = MapSpec {
        name: "rb".into(),
        map_type: 27,
        key_size: 0,
        value_size: 0,
        max_entries: SIZE as u32,
        map_flags: 0,
        kind: MapKind::BtfDefined,
        initial_value: None,
        outer: None,
    };
    let mut maps = Maps::new(&[spec], 1).expect("ring buffer");
    let mut rng = Rng(0x71b);
    let mut vectors = Vec::new();
    // Per cycle, the ok bits expected (None in drain cycles); per drain, its first cycle and the records.
    let mut want_ok = Vec::new();
    let mut drains = Vec::new();
    let (mut prod, mut full) = (0u64, 0);
    for round in 0..12 {
        for _ in 0..150 {
            let en: Vec<bool> = (0..2).map(|_| rng.below(3) != 0).collect();
            let lens: Vec<usize> = (0..2).map(|_| 1 + rng.below_usize(8 * MAXW)).collect();
            let data: Vec<Vec<u8>> = (0..2).map(|_| rng.bytes(8 * MAXW)).collect();
            let mut ok = Vec::new();
            for p in 0..2 {
                // The block's ok is the fit, enabled or not; a disabled port does not change the reference.
                let mut probe = maps.clone();
                let fits = probe.ringbuf_output(0, &data[p][..lens[p]], 0) == 0;
                if en[p] {
                    maps.ringbuf_output(0, &data[p][..lens[p]], 0);
                    if fits {
                        prod += (lens[p] as u64 + 15) & !7;
                    } else {
                        full += 1;
                    }
                }
                ok.push(fits);
            }
            let mut v = Bits::default();
            v.push(1, en[0] as u64);
            v.push(1, en[1] as u64);
            v.push(16, lens[0] as u64);
            v.push(16, lens[1] as u64);
            v.push_bytes(&data[0]);
            v.push_bytes(&data[1]);
            vectors.push(v);
            want_ok.push(Some(ok));
        }
        if round % 3 == 2 {
            continue; // let the ring fill up across rounds
        }
        // Drain: the consumer position, the producer position, the data area, then the consumer write.
        drains.push((vectors.len(), maps.ringbuf_drain(0)));
        for a in [SIZE + 8, SIZE].into_iter().chain((0..SIZE).step_by(8)) {
            let mut v = Bits::default();
            v.push(34, 0);
            v.push(2 * 64 * MAXW, 0);
            v.push(1, 0);
            v.push(14, a as u64);
            vectors.push(v);
            want_ok.push(None);
        }
        let mut v = Bits::default();
        v.push(34, 0);
        v.push(2 * 64 * MAXW, 0);
        v.push(1, 1);
        v.push(14, SIZE as u64 + 8);
        v.push(64, prod);
        vectors.push(v);
        want_ok.push(None);
    }
    let out = w.run("ringbuf", &vectors);
    for (i, (want, got)) in want_ok.iter().zip(&out).enumerate() {
        if let Some(ok) = want {
            for (p, fits) in ok.iter().enumerate() {
                assert_eq!(got.get(p, 1) == 1, *fits, "cycle {i}: port {p} fits");
            }
        }
    }
    let mut total = 0;
    for (at, records) in &drains {
        let cons = out[*at].get(2, 64);
        let prod = out[at + 1].get(2, 64);
        let area: Vec<u8> = (0..SIZE / 8)
            .flat_map(|wd| out[at + 2 + wd].bytes(2, 8))
            .collect();
        let mut got = Vec::new();
        let mut pos = cons;
        while pos < prod {
            let off = (pos as usize) % SIZE;
            let hdr = u32::from_le_bytes(area[off..off + 4].try_into().expect("header"));
            let pg = u32::from_le_bytes(area[off + 4..off + 8].try_into().expect("pg_off"));
            assert_eq!(pg, 3 + (off as u32 >> 12), "record at {pos}: pg_off");
            let len = hdr as usize;
            got.push(
                (0..len)
                    .map(|i| area[(off + 8 + i) % SIZE])
                    .collect::<Vec<u8>>(),
            );
            pos += (len as u64 + 15) & !7;
        }
        assert_eq!(&got, records, "drain at cycle {at}");
        total += records.len();
    }
    assert!(
        total > 300 && full > 50,
        "{total} records drained, {full} refused"
    );
}

/// The host writes both positions of a fresh ring (each batch is a new simulation): the block reads them back and its
/// next record lands there, so records carry on where the last batch's ended instead of the producer restarting at 0.
#[test]
fn ringbuf_block_resumes_at_written_positions() {
    const SIZE: u64 = 64;
    let mut w = Wrapper::default();
    w.input("en", 1);
    w.input("len", 16);
    w.input("data", 64);
    w.input("hwe", 1);
    w.input("haddr", 8);
    w.input("hwdata", 64);
    w.body += &format!(
        "  logic ok;\n  logic [63:0] hrdata;\n  \
         ehdl_ringbuf #(.SIZE({SIZE}), .NP(1), .MAXW(1), .AW(8)) u_r (.clk_i(clk_i), .rst_ni(rst_ni), \
         .en_i(en), .len_i(len), .data_i(data), .ok_o(ok), .host_we_i(hwe[0]), .host_addr_i(haddr), \
         .host_wdata_i(hwdata), .host_wmask_i(8'hff), .host_rdata_o(hrdata));\n"
    );
    w.output("ok".into(), 1);
    w.output("hrdata".into(), 64);
    let cycle = |en: u64, len: u64, hwe: u64, addr: u64, wdata: u64| {
        let mut v = Bits::default();
        v.push(1, en);
        v.push(16, len);
        v.push(64, 0x1122_3344_5566_7788);
        v.push(1, hwe);
        v.push(8, addr);
        v.push(64, wdata);
        v
    };
    let vectors = vec![
        cycle(0, 0, 1, SIZE, 1000),
        cycle(0, 0, 1, SIZE + 8, 1000),
        cycle(0, 0, 0, SIZE, 0),
        cycle(0, 0, 0, SIZE + 8, 0),
        cycle(1, 8, 0, SIZE, 0),
        cycle(0, 0, 0, SIZE, 0),
    ];
    let out = w.run("ringbuf_resume", &vectors);
    assert_eq!(out[2].get(1, 64), 1000, "producer position read back");
    assert_eq!(out[3].get(1, 64), 1000, "consumer position read back");
    assert_eq!(out[4].get(0, 1), 1, "an 8-byte record fits the empty ring");
    assert_eq!(
        out[5].get(1, 64),
        1016,
        "the record follows the written producer position"
    );
}

/// A random route table that fits the eHDL block, its addresses drawn from small pools so that lookups hit nested
/// prefixes, equal prefixes of different metrics, gateways with and without neighbours and the loopback device.
fn random_route_table(rng: &mut Rng) -> hwxdp_xdp::fib::RouteTable {
    use hwxdp_ehdl::verilog::{FIB_DEVICES, FIB_NEIGHBORS, FIB_ROUTES};
    use hwxdp_xdp::fib::{Device, Neighbor, Route, RouteKind, RouteTable};
    use std::net::IpAddr;
    let ifx = |rng: &mut Rng| [1u32, 2, 3, 4, 9][rng.below_usize(5)];
    let mut t = RouteTable::default();
    for _ in 0..rng.below_usize(FIB_DEVICES + 1) {
        t.devices.push(Device {
            ifindex: [1u32, 2, 3, 4][rng.below_usize(4)],
            mac: [2, 0, 0, 0, rng.below(256) as u8, rng.below(256) as u8],
            mtu: [1500u32, 1400, 100, 9000, 70000, 1280, 1000][rng.below_usize(7)],
        });
    }
    for _ in 0..rng.below_usize(FIB_ROUTES + 1) {
        let v6 = rng.below(2) == 1;
        let prefix = pool_addr(rng, v6);
        let len = if v6 {
            [0u8, 16, 32, 48, 64, 120, 128, 200][rng.below_usize(8)]
        } else {
            [0u8, 8, 16, 24, 28, 32, 40][rng.below_usize(7)]
        };
        let gw_v6 = v6 || rng.below(5) == 0;
        let gateway = (rng.below(2) == 1).then(|| pool_addr(rng, gw_v6));
        let kind = match rng.below(6) {
            0 => RouteKind::Blackhole,
            1 => RouteKind::Unreachable,
            2 => RouteKind::Prohibit,
            _ => RouteKind::Unicast {
                ifindex: ifx(rng),
                gateway,
            },
        };
        t.routes.push(Route {
            prefix,
            len,
            kind,
            metric: [0u32, 5, 100, 1024][rng.below_usize(4)],
        });
    }
    for _ in 0..rng.below_usize(FIB_NEIGHBORS + 1) {
        let v6 = rng.below(2) == 1;
        let ip: IpAddr = if rng.below(6) == 0 {
            IpAddr::from([0u8; 4])
        } else {
            pool_addr(rng, v6)
        };
        t.neighbors.push(Neighbor {
            ip,
            ifindex: ifx(rng),
            mac: [2, 0, 0, 1, rng.below(256) as u8, rng.below(256) as u8],
        });
    }
    t
}

/// An address from a small pool of the family (the last bytes sometimes random).
fn pool_addr(rng: &mut Rng, v6: bool) -> std::net::IpAddr {
    if v6 {
        let mut b = [
            0x20,
            0x01,
            0x0d,
            0xb8,
            0,
            rng.below(3) as u8,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            1,
        ];
        match rng.below(6) {
            0 => b[0] = 0xfe,
            1 => b[15] = rng.below(256) as u8,
            2 => b[7] = rng.below(2) as u8,
            3 => b = [0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            _ => {}
        }
        std::net::IpAddr::from(b)
    } else {
        let a = [
            [10u8, rng.below(3) as u8, 0, 5],
            [10, 0, rng.below(2) as u8, rng.below(256) as u8],
            [127, 0, 0, 1],
            [127, 255, 255, 255],
            [127, 3, 0, 0],
            [192, 168, 0, 1],
            [0, 0, 0, 0],
        ][rng.below_usize(7)];
        std::net::IpAddr::from(a)
    }
}

/// `ehdl_fib` against `RouteTable::lookup`: random tables written through the host port (every slot, so each table
/// replaces the last), then random lookups (families, ingress devices, OUTPUT/SKIP_NEIGH/DIRECT flags, tot_len
/// around the MTUs, bad plen and flags), each compared in its cycle: the return value and all 64 bytes written back.
#[test]
fn fib_block_answers_as_the_reference_route_table() {
    use hwxdp_rtlsim::ehdl::fib_table_writes;
    use hwxdp_xdp::fib::{check_call, PARAMS_SIZE};
    let mut w = Wrapper::default();
    w.input("hwe", 1);
    w.input("haddr", 16);
    w.input("hwdata", 64);
    w.input("hwmask", 8);
    w.input("params", 512);
    w.input("plen", 64);
    w.input("flags", 64);
    w.body += "  logic [63:0] ret;\n  logic [511:0] params_out;\n  ehdl_fib u_f (.clk_i(clk_i), .rst_ni(rst_ni), \
               .host_we_i(hwe), .host_addr_i(haddr), .host_wdata_i(hwdata), .host_wmask_i(hwmask), \
               .params_i(params), .plen_i(plen), .flags_i(flags), .ret_o(ret), .params_o(params_out));\n";
    w.output("ret".into(), 64);
    w.output("params_out".into(), 512);
    let mut rng = Rng(0x6669_625f_6568_646c);
    let mut vectors = Vec::new();
    // (vector index, expected return value, expected struct)
    let mut checks: Vec<(usize, i64, [u8; PARAMS_SIZE])> = Vec::new();
    let mut answers = std::collections::BTreeMap::new();
    for _ in 0..12 {
        let table = random_route_table(&mut rng);
        for (addr, data, mask) in fib_table_writes(&table).expect("fits") {
            let mut v = Bits::default();
            v.push(1, 1);
            v.push(16, addr as u64);
            v.push(64, data);
            v.push(8, mask as u64);
            v.push_bytes(&[0; 64]);
            v.push(64, 64);
            v.push(64, 0);
            vectors.push(v);
        }
        for _ in 0..300 {
            let mut p: [u8; PARAMS_SIZE] = rng.bytes(PARAMS_SIZE).try_into().expect("64 bytes");
            let v6 = rng.below(2) == 1;
            p[0] = match rng.below(10) {
                0 => rng.below(256) as u8,
                _ if v6 => 10,
                _ => 2,
            };
            let mtu_like =
                [64u16, 1000, 1280, 1400, 1401, 1500, 1501, 9000, 65535][rng.below_usize(9)];
            p[6..8].copy_from_slice(&mtu_like.to_le_bytes());
            let ifx = [1u32, 2, 3, 4, 9][rng.below_usize(5)];
            p[8..12].copy_from_slice(&ifx.to_le_bytes());
            for (at, n) in [(16usize, 16usize), (32, 16)] {
                let a = pool_addr(&mut rng, v6);
                p[at..at + n].fill(0);
                match a {
                    std::net::IpAddr::V4(a) => p[at..at + 4].copy_from_slice(&a.octets()),
                    std::net::IpAddr::V6(a) => p[at..at + 16].copy_from_slice(&a.octets()),
                }
            }
            let flags: u64 = match rng.below(12) {
                0 => 1 << rng.below(40) | rng.below(8),
                1 => 0xffff_ffff_0000_0000 | rng.below(8),
                _ => rng.below(8),
            };
            let plen: u64 = match rng.below(12) {
                0 => 63,
                1 => 0xffff_ffff,
                2 => 0x1_0000_0000 | 64,
                _ => 64,
            };
            let mut want = p;
            let ret = match check_call(plen as i32 as i64, flags as u32) {
                Some(e) => e,
                None => {
                    let r = table.lookup(&mut want, flags as u32);
                    *answers.entry(r).or_insert(0usize) += 1;
                    r
                }
            };
            let mut v = Bits::default();
            v.push(1, 0);
            v.push(16, 0);
            v.push(64, 0);
            v.push(8, 0);
            v.push_bytes(&p);
            v.push(64, plen);
            v.push(64, flags);
            checks.push((vectors.len(), ret, want));
            vectors.push(v);
        }
    }
    // Every answer of the reference occurs (FWD_DISABLED cannot).
    for r in [0i64, 1, 2, 3, 4, 7, 8, -19, -97] {
        assert!(
            answers.get(&r).copied().unwrap_or(0) > 0,
            "no lookup answered {r}: {answers:?}"
        );
    }
    let out = w.run("fib", &vectors);
    for (i, ret, want) in checks {
        assert_eq!(
            (out[i].get(0, 64) as i64, out[i].bytes(64, 64)),
            (ret, want.to_vec()),
            "vector {i}"
        );
    }
}

/// A packet for `ehdl_head_realign`: its input frames and sideband, and the beats it must leave as.
struct RealignPacket {
    in_len: usize,
    frames: Vec<Vec<u8>>,
    shift: i64,
    len: usize,
    ext: Vec<u8>,
    user: (u64, u64),
    /// Per input frame, the beat (bytes under keep, last) that leaves in the cycle it is pushed.
    beat_at: Vec<Option<(Vec<u8>, bool)>>,
    /// The beat left after the last frame, which leaves under hold.
    held: Option<(Vec<u8>, bool)>,
    /// Every output byte, in order.
    out: Vec<u8>,
    passthrough: bool,
}

impl RealignPacket {
    /// A random packet of 14..300 bytes at `fb` bytes per frame with `ext` extension bytes; shift 0 and the whole
    /// packet when `passthrough`, else a shift in [-ext, in_len - 14] (often 0, negative, or past a frame) and
    /// mostly the bytes to the packet's end, sometimes fewer.
    fn random(rng: &mut Rng, fb: usize, ext: usize, passthrough: bool) -> RealignPacket {
        let in_len = 14 + rng.below_usize(287);
        let max = in_len as i64 - 14;
        let shift = match (passthrough, rng.below(5)) {
            (true, _) | (false, 0) => 0,
            (false, 1) => -1 - rng.below(ext as u64) as i64,
            (false, 2) => (1 + rng.below(2 * fb as u64 + 3) as i64).min(max),
            (false, 3) => [-(ext as i64), fb as i64, 2 * fb as i64][rng.below_usize(3)].min(max),
            _ => -(ext as i64) + rng.below((max + ext as i64 + 1) as u64) as i64,
        };
        let room = (in_len as i64 - shift) as usize;
        // Fewer bytes: often within one beat, so that one-beat packets leave before the frame after the shift.
        let len = match (passthrough, rng.below(8)) {
            (true, _) | (false, 2..) => room,
            (false, 0) => 1 + rng.below_usize(room.min(fb)),
            (false, 1) => 1 + rng.below_usize(room),
        };
        // The last frame's bytes past the packet are garbage: the realigner must not emit them.
        let nf = in_len.div_ceil(fb);
        let frames: Vec<Vec<u8>> = (0..nf).map(|_| rng.bytes(fb)).collect();
        let ext_bytes = rng.bytes(ext);
        let user = (rng.next(), rng.next() & 0x3ff);
        let v: Vec<u8> = ext_bytes
            .iter()
            .chain(frames.iter().flatten())
            .copied()
            .collect();
        let start = (ext as i64 + shift) as usize;
        let out = v[start..start + len].to_vec();
        // Beat k leaves with the frame holding its last byte (frame -1, the extension, counts as frame 0), but
        // never in the cycle of beat k - 1; one that falls after the last frame leaves under hold.
        let mut beat_at = vec![None; nf];
        let mut held = None;
        let mut next = 0usize;
        for (k, chunk) in out.chunks(fb).enumerate() {
            let end = shift + (k * fb + chunk.len()) as i64 - 1;
            let ready = end.div_euclid(fb as i64).max(0) as usize;
            let at = ready.max(next);
            let beat = (chunk.to_vec(), (k + 1) * fb >= len);
            if at < nf {
                beat_at[at] = Some(beat);
            } else {
                assert!(at == nf && held.is_none(), "two beats after the last frame");
                held = Some(beat);
            }
            next = at + 1;
        }
        RealignPacket {
            in_len,
            frames,
            shift,
            len,
            ext: ext_bytes,
            user,
            beat_at,
            held,
            out,
            passthrough,
        }
    }
}

/// The driver and model of one `ehdl_head_realign` instance in the head_realign test.
struct RealignLane {
    fb: usize,
    ext: usize,
    rng: Rng,
    cur: Option<RealignPacket>,
    frame: usize,
    /// The beat the model holds for, from the cycle after the last frame until it is pushed.
    held: Option<(Vec<u8>, bool, (u64, u64))>,
    /// Packets started, their output bytes in order.
    sent: Vec<Vec<u8>>,
    /// Coverage: negative shifts, shifts of a frame or more, fewer bytes than the packet has, holds, one-beat
    /// packets that leave before the frame their beat would start in.
    counts: [usize; 5],
}

/// What one lane must show in one cycle.
struct RealignExpect {
    hold: bool,
    beat: Option<(Vec<u8>, bool, (u64, u64))>,
    /// A frame of a pass-through packet was pushed: its beat must leave in this very cycle.
    passthrough: bool,
}

impl RealignLane {
    /// Appends this cycle's inputs (push, first, last, space, shift, len, user, data, ext) to `v` and returns the
    /// outputs the model expects; `steady` drives pass-through packets with no gaps and the FIFO always free.
    fn cycle(&mut self, v: &mut Bits, steady: bool) -> RealignExpect {
        let space = steady || self.rng.below(4) != 0;
        let want = steady || self.rng.below(4) != 0;
        if self.held.is_none() && self.cur.is_none() {
            let p = RealignPacket::random(&mut self.rng, self.fb, self.ext, steady);
            let fb = self.fb as i64;
            // The frame a beat starting at the shift would leave with; a one-beat packet may leave earlier.
            let steady_frame = (p.shift + fb - 1).div_euclid(fb);
            let first_beat = p.beat_at.iter().position(Option::is_some);
            for (c, hit) in [
                p.shift < 0,
                p.shift >= fb,
                (p.len as i64) < p.in_len as i64 - p.shift,
                p.held.is_some(),
                p.shift > 0 && first_beat.is_some_and(|f| (f as i64) < steady_frame),
            ]
            .into_iter()
            .enumerate()
            {
                self.counts[c] += hit as usize;
            }
            self.sent.push(p.out.clone());
            self.cur = Some(p);
            self.frame = 0;
        }
        let mut expect = RealignExpect {
            hold: self.held.is_some(),
            beat: None,
            passthrough: false,
        };
        // Garbage in the sideband of frames other than the first, and in the frame of idle cycles.
        let (mut first, mut last) = (false, false);
        let mut shift = self.rng.next() & 0xffff;
        let mut len = self.rng.next() & 0xffff;
        let mut user = (self.rng.next(), self.rng.next() & 0x3ff);
        let mut data = self.rng.bytes(self.fb);
        let mut ext = self.rng.bytes(self.ext);
        if self.held.is_some() {
            if space {
                expect.beat = self.held.take();
            }
        } else if let Some(p) = &self.cur {
            let f = self.frame;
            first = f == 0;
            last = f + 1 == p.frames.len();
            data = p.frames[f].clone();
            if first {
                shift = p.shift as u64 & 0xffff;
                len = p.len as u64;
                user = p.user;
                ext = p.ext.clone();
            }
            if want && space {
                expect.beat = p.beat_at[f].clone().map(|(b, l)| (b, l, p.user));
                expect.passthrough = p.passthrough;
                self.frame += 1;
                if last {
                    self.held = p.held.clone().map(|(b, l)| (b, l, p.user));
                    self.cur = None;
                }
            }
        }
        v.push(1, want as u64);
        v.push(1, first as u64);
        v.push(1, last as u64);
        v.push(1, space as u64);
        v.push(16, shift);
        v.push(16, len);
        v.push(64, user.0);
        v.push(10, user.1);
        v.push_bytes(&data);
        v.push_bytes(&ext);
        expect
    }
}

#[test]
fn head_realign_emits_the_moved_packet_in_aligned_beats() {
    // (DW, EXT): every bus width the generator uses, the extension a whole frame or less.
    const LANES: [(usize, usize); 5] = [(64, 8), (128, 16), (128, 8), (512, 64), (512, 40)];
    const CYCLES: usize = 12000;
    // The cycles in which every lane sends pass-through packets back to back into a free FIFO.
    const STEADY: std::ops::Range<usize> = 3000..3400;
    let mut w = Wrapper::default();
    for (i, (dw, ext)) in LANES.iter().enumerate() {
        for (name, width) in [
            ("push", 1),
            ("first", 1),
            ("last", 1),
            ("space", 1),
            ("shift", 16),
            ("len", 16),
            ("user", 74),
            ("data", *dw),
            ("ext", 8 * ext),
        ] {
            w.input(&format!("{name}{i}"), width);
        }
        // The pipeline pushes only while space_i and not hold_o; the model must agree on hold_o anyway.
        writeln!(
            w.body,
            "  logic hold{i}, pusho{i}, lasto{i};\n  logic [{k}:0] keepo{i};\n  logic [73:0] usero{i};\n  \
             logic [{m}:0] datao{i};\n  \
             ehdl_head_realign #(.DW({dw}), .EXT({ext}), .LW(16), .UW(74)) u_r{i} (.clk_i(clk_i), .rst_ni(rst_ni), \
             .push_i(push{i}[0] & space{i}[0] & ~hold{i}), .data_i(data{i}), .first_i(first{i}[0]), \
             .last_i(last{i}[0]), .shift_i(shift{i}), .len_i(len{i}), .ext_i(ext{i}), .user_i(user{i}), \
             .space_i(space{i}[0]), .hold_o(hold{i}), .push_o(pusho{i}), .data_o(datao{i}), .keep_o(keepo{i}), \
             .last_o(lasto{i}), .user_o(usero{i}));",
            k = dw / 8 - 1,
            m = dw - 1
        )
        .expect("string");
        for (e, wd) in [
            (format!("hold{i}"), 1),
            (format!("pusho{i}"), 1),
            (format!("lasto{i}"), 1),
            (format!("keepo{i}"), dw / 8),
            (format!("usero{i}"), 74),
            (format!("datao{i}"), *dw),
        ] {
            w.output(e, wd);
        }
    }
    let mut lanes: Vec<RealignLane> = LANES
        .iter()
        .enumerate()
        .map(|(i, (dw, ext))| RealignLane {
            fb: dw / 8,
            ext: *ext,
            rng: Rng(0x4ead_0000 + i as u64),
            cur: None,
            frame: 0,
            held: None,
            sent: Vec::new(),
            counts: [0; 5],
        })
        .collect();
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    for cycle in 0..CYCLES {
        let mut v = Bits::default();
        let steady = STEADY.contains(&cycle);
        expected.push(
            lanes
                .iter_mut()
                .map(|l| l.cycle(&mut v, steady))
                .collect::<Vec<_>>(),
        );
        vectors.push(v);
    }
    let out = w.run("head_realign", &vectors);
    let mut at = 0;
    for (i, lane) in lanes.iter().enumerate() {
        let fb = lane.fb;
        let mut got_packets: Vec<Vec<u8>> = Vec::new();
        let mut bytes = Vec::new();
        let mut steady_from = None;
        for (cycle, (want, got)) in expected.iter().map(|e| &e[i]).zip(&out).enumerate() {
            let what = format!("lane {i} (DW {}, EXT {}) cycle {cycle}", 8 * fb, lane.ext);
            assert_eq!(got.get(at, 1) == 1, want.hold, "{what}: hold_o");
            assert_eq!(
                got.get(at + 1, 1) == 1,
                want.beat.is_some(),
                "{what}: push_o"
            );
            let Some((beat, last, user)) = &want.beat else {
                continue;
            };
            let keep: Vec<bool> = (0..fb).map(|b| got.get(at + 3 + b, 1) == 1).collect();
            let want_keep: Vec<bool> = (0..fb).map(|b| b < beat.len()).collect();
            assert_eq!(keep, want_keep, "{what}: keep_o");
            assert_eq!(got.get(at + 2, 1) == 1, *last, "{what}: last_o");
            let u = at + 3 + fb;
            assert_eq!(
                (got.get(u, 64), got.get(u + 64, 10)),
                *user,
                "{what}: user_o"
            );
            let data = got.bytes(u + 74, beat.len());
            assert_eq!(&data, beat, "{what}: data_o");
            bytes.extend_from_slice(&data);
            if *last {
                got_packets.push(std::mem::take(&mut bytes));
            }
            if STEADY.contains(&cycle) && want.passthrough && steady_from.is_none() {
                steady_from = Some(cycle);
            }
        }
        // Back to back with shift 0: a beat out in every cycle a frame comes in, with no hold.
        let from = steady_from.expect("pass-through packets in the steady cycles");
        for cycle in from..STEADY.end {
            let what = format!("lane {i} steady cycle {cycle}");
            assert!(expected[cycle][i].passthrough, "{what}: a frame pushed");
            assert_eq!(out[cycle].get(at, 2), 2, "{what}: push_o without hold_o");
        }
        // Whole packets in order: every one sent but the last (maybe still in flight when the run ends).
        assert!(
            got_packets.len() + 1 >= lane.sent.len(),
            "lane {i}: packets lost"
        );
        assert_eq!(
            got_packets[..],
            lane.sent[..got_packets.len()],
            "lane {i}: packets"
        );
        assert!(
            got_packets.len() > 100,
            "lane {i}: {} packets",
            got_packets.len()
        );
        for (c, n) in lane.counts.iter().enumerate() {
            assert!(*n > 0, "lane {i}: coverage {c} {:?}", lane.counts);
        }
        at += 3 + fb + 74 + 8 * fb;
    }
}

#[test]
fn replay_buffer_offers_beats_in_order_and_again_after_a_rewind() {
    // ehdl_replay at 64 data bits, an 8-bit sideband and 8 entries: random input, takes, beats passed straight on
    // while nothing is offered (as an elastic buffer does), commits of taken beats and rewinds over taken,
    // uncommitted ones (as a flush does), against a model of the three positions.
    let mut w = Wrapper::default();
    w.input("sv", 1);
    w.input("sdata", 64);
    w.input("slast", 1);
    w.input("suser", 8);
    w.input("take", 1);
    w.input("pass", 1);
    w.input("commit", 1);
    w.input("rewind", 1);
    w.input("n", 4);
    w.body += "  logic ready, valid, last_o;\n  logic [63:0] data_o;\n  logic [7:0] keep_o, user_o;\n  \
               ehdl_replay #(.DW(64), .UW(8), .DEPTH(8), .PW(4)) u_r (.clk_i(clk_i), .rst_ni(rst_ni), \
               .s_valid_i(sv[0]), .s_data_i(sdata), .s_keep_i(sdata[7:0]), .s_last_i(slast[0]), .s_user_i(suser), \
               .s_ready_o(ready), .valid_o(valid), .data_o(data_o), .keep_o(keep_o), .last_o(last_o), \
               .user_o(user_o), .take_i(take[0]), .pass_i(pass[0]), .commit_i(commit[0]), .rewind_i(rewind[0]), .rewind_n_i(n));\n";
    for (e, wd) in [
        ("ready", 1),
        ("valid", 1),
        ("data_o", 64),
        ("keep_o", 8),
        ("last_o", 1),
        ("user_o", 8),
    ] {
        w.output(e.into(), wd);
    }
    let mut rng = Rng(0x5e91);
    let mut beats: Vec<(u64, u64, u64)> = Vec::new(); // (data, last, user) by position
    let (mut wr, mut rd, mut base) = (0u64, 0u64, 0u64);
    let (mut vectors, mut expected) = (Vec::new(), Vec::new());
    let (mut rewinds, mut again, mut passed) = (0, 0, 0);
    for _ in 0..3000 {
        let sv = rng.below(3) != 0;
        let (data, last, user) = (rng.next(), rng.below(2), rng.below(256));
        let ready = wr - base < 8;
        let valid = rd < wr;
        expected.push((ready, valid.then(|| beats[rd as usize])));
        let rewind = rd > base && rng.below(8) == 0;
        let n = if rewind { 1 + rng.below(rd - base) } else { 0 };
        let take = !rewind && rng.below(4) != 0;
        let pass = !valid && !rewind && rng.below(2) == 0;
        let after = if rewind {
            rd - n
        } else if (take && valid) || (pass && sv && ready) {
            rd + 1
        } else {
            rd
        };
        let commit = base < after && rng.below(3) == 0;
        let mut v = Bits::default();
        v.push(1, sv as u64);
        v.push(64, data);
        v.push(1, last);
        v.push(8, user);
        v.push(1, take as u64);
        v.push(1, pass as u64);
        v.push(1, commit as u64);
        v.push(1, rewind as u64);
        v.push(4, n);
        vectors.push(v);
        rewinds += rewind as usize;
        again += n as usize;
        passed += (pass && sv && ready) as usize;
        rd = after;
        base += commit as u64;
        if sv && ready {
            beats.push((data, last, user));
            wr += 1;
        }
    }
    let out = w.run("replay", &vectors);
    for (i, ((ready, head), got)) in expected.iter().zip(&out).enumerate() {
        assert_eq!(got.get(0, 1) == 1, *ready, "cycle {i}: s_ready");
        assert_eq!(got.get(1, 1) == 1, head.is_some(), "cycle {i}: valid");
        if let Some((data, last, user)) = head {
            assert_eq!(got.get(2, 64), *data, "cycle {i}: data");
            assert_eq!(got.get(66, 8), data & 0xff, "cycle {i}: keep");
            assert_eq!(got.get(74, 1), *last, "cycle {i}: last");
            assert_eq!(got.get(75, 8), *user, "cycle {i}: user");
        }
    }
    assert!(
        rewinds > 100 && again > 200 && passed > 50,
        "{rewinds} rewinds over {again} beats, {passed} passed"
    );
}

/// rtl/common/hash32.sv: CRC-32 (0x04C11DB7, initial 0, no final xor) over the key's bytes from the last to the
/// first, each byte's bit 7 first.
fn hash32(key: &[u8]) -> u32 {
    let mut c = 0u32;
    for b in key.iter().rev() {
        for i in (0..8).rev() {
            let fb = (c >> 31) ^ u32::from((b >> i) & 1);
            c = (c << 1) ^ if fb == 1 { 0x04C1_1DB7 } else { 0 };
        }
    }
    c
}

#[test]
fn hash_buckets_look_up_update_delete_in_port_order_with_keys_a_cycle_early() {
    // 4 buckets of 2 ways and 2 stash slots for 9 entries: buckets fill, keys go to the stash, and a full bucket
    // and stash below max_entries is an overflow.
    hash_bkt_case(9, 4, 2, 2, 0xb0c1);
}

#[test]
fn hash_buckets_at_the_generators_sizing_never_overflow() {
    // 16 entries in 4 buckets of 8 ways (twice the slots, as the generator sizes them): the map fills to
    // max_entries (E2BIG there) without an overflow.
    hash_bkt_case(16, 4, 8, 4, 0xb0c2);
}

/// `ehdl_hash_bkt` (two inserting ports, one probe, 6-byte keys) against a model over 2000 cycles: the keys a
/// cycle early, lookups, updates with every flag and deletes of keys from a pool slightly larger than the map, the
/// count's E2BIG, the stash and overflows, host reads (one cycle late) and writes of key words and valid bits.
fn hash_bkt_case(entries: usize, buckets: usize, ways: usize, stash: usize, seed: u64) {
    const KB: usize = 6;
    const KS: usize = 8;
    let rams = buckets * ways;
    let slots = rams + stash;
    let sw = usize::BITS as usize - slots.leading_zeros() as usize;
    let aw = 10;
    let pool_size = entries + 3;
    let mut w = Wrapper::default();
    w.input("keys", 2 * 8 * KB);
    w.input("rkeys", 2 * 8 * KB);
    w.input("kind", 2);
    w.input("en", 2);
    w.input("flags", 4);
    w.input("del", 2);
    w.input("hwe", 1);
    w.input("hvalid", 1);
    w.input("haddr", aw);
    w.input("hwdata", 64);
    w.input("hwmask", 8);
    w.input("probe", 8 * KB);
    w.input("rprobe", 8 * KB);
    w.body += &format!(
        "  logic [1:0] hit;\n  logic [{}:0] slot;\n  logic [15:0] err;\n  logic [63:0] hrdata;\n  \
         logic [0:0] phit;\n  logic [{}:0] pslot;\n  logic ovf, hdrop;\n  \
         ehdl_hash_bkt #(.ENTRIES({entries}), .KEY_BYTES({KB}), .NP(2), .BUCKETS({buckets}), .WAYS({ways}), \
         .STASH({stash}), .SW({sw}), .AW({aw}), .WRITES(2'b11), .NQ(1)) u_h (.clk_i(clk_i), .rst_ni(rst_ni), \
         .kind_i(kind), .del_i(del), .en_i(en), .rkey_i(rkeys), .key_i(keys), .flags_i(flags), .hit_o(hit), \
         .slot_o(slot), .err_o(err), .rprobe_key_i(rprobe), .probe_key_i(probe), .probe_hit_o(phit), \
         .probe_slot_o(pslot), .overflow_o(ovf), .host_we_i(hwe[0]), .host_valid_i(hvalid[0]), \
         .host_addr_i(haddr), .host_wdata_i(hwdata), .host_wmask_i(hwmask), .host_rdata_o(hrdata), \
         .host_drop_o(hdrop));\n",
        2 * sw - 1,
        sw - 1
    );
    w.output("hit".into(), 2);
    w.output("slot".into(), 2 * sw);
    w.output("err".into(), 16);
    w.output("hrdata".into(), 64);
    w.output("phit".into(), 1);
    w.output("pslot".into(), sw);
    w.output("ovf".into(), 1);
    w.output("hdrop".into(), 1);
    let mut rng = Rng(seed);
    let pool: Vec<Vec<u8>> = (0..pool_size).map(|_| rng.bytes(KB)).collect();
    let bucket = |k: &[u8]| hash32(k) as usize % buckets;
    const CYCLES: usize = 2000;
    let pick = |rng: &mut Rng| {
        if rng.below(6) == 0 {
            rng.bytes(KB)
        } else {
            pool[rng.below_usize(pool_size)].clone()
        }
    };
    let looks: Vec<[Vec<u8>; 2]> = (0..=CYCLES)
        .map(|_| [pick(&mut rng), pick(&mut rng)])
        .collect();
    let probes: Vec<Vec<u8>> = (0..=CYCLES)
        .map(|_| pool[rng.below_usize(pool_size)].clone())
        .collect();
    let mut keys = vec![vec![0u8; KB]; slots];
    let mut valid = vec![false; slots];
    let mut count = 0usize;
    let mut overflow = false;
    let mut vectors = Vec::new();
    let mut expected = Vec::new();
    let mut hread_next = 0u64;
    let mut hist: Vec<String> = Vec::new();
    let (mut hits, mut inserts, mut deletes, mut probed, mut big, mut stashed) = (0, 0, 0, 0, 0, 0);
    for t in 0..CYCLES {
        let look = &looks[t];
        let kind: Vec<bool> = (0..2).map(|_| rng.below(2) != 0).collect();
        // Cycle 0 has no early key before it (the RAMs read during reset): it does nothing and is not checked.
        let en: Vec<bool> = (0..2).map(|_| rng.below(4) != 0 && t > 0).collect();
        let flags: Vec<u64> = (0..2).map(|_| rng.below(3)).collect();
        let del: Vec<bool> = (0..2).map(|_| rng.below(2) == 0).collect();
        let hvalid = rng.below(3) == 0;
        let haddr = if hvalid {
            rng.below_usize(slots + 2)
        } else {
            KS * rng.below_usize(slots + 1)
        };
        let hwe = rng.below(6) == 0 && t > 0;
        let mut hwdata = if hvalid { rng.below(4) / 3 } else { rng.next() };
        if !hvalid && rng.below(2) == 0 {
            let k = &pool[rng.below_usize(pool_size)];
            hwdata = k
                .iter()
                .enumerate()
                .fold(0, |v, (i, b)| v | (*b as u64) << (8 * i));
        }
        // The host writes whole keys (a key word here: 6-byte keys), as the harness loads a map.
        let hwmask = if hvalid {
            [0xff, 0x01, rng.below(256)][rng.below_usize(3)]
        } else {
            [0xff, 0x3f][rng.below_usize(2)]
        };
        let mut v = Bits::default();
        for k in look.iter().chain(looks[t + 1].iter()) {
            v.push_bytes(k);
        }
        for bits in [&kind, &en] {
            v.push(1, bits[0] as u64);
            v.push(1, bits[1] as u64);
        }
        v.push(2, flags[0]);
        v.push(2, flags[1]);
        v.push(1, del[0] as u64);
        v.push(1, del[1] as u64);
        v.push(1, hwe as u64);
        v.push(1, hvalid as u64);
        v.push(aw, haddr as u64);
        v.push(64, hwdata);
        v.push(8, hwmask);
        v.push_bytes(&probes[t]);
        v.push_bytes(&probes[t + 1]);
        vectors.push(v);
        // Where a key is: a way of its bucket (lowest first), else the stash.
        let find = |keys: &[Vec<u8>], valid: &[bool], k: &[u8]| {
            let b = bucket(k);
            (b * ways..(b + 1) * ways)
                .chain(rams..slots)
                .find(|&s| valid[s] && keys[s] == k)
        };
        let probe_slot = find(&keys, &valid, &probes[t]);
        probed += probe_slot.is_some() as usize;
        // The overflow flag is a register: it shows an overflow from the next cycle on.
        let overflow_before = overflow;
        let mut want = Vec::new();
        let mut port0_ram_insert = false;
        for p in 0..2 {
            let found = find(&keys, &valid, &look[p]);
            let b = bucket(&look[p]);
            let free = (b * ways..(b + 1) * ways)
                .chain(rams..slots)
                .find(|&s| !valid[s]);
            let (hit, slot, err) = if !kind[p] {
                (found.is_some(), found, 0)
            } else if del[p] {
                match found {
                    Some(f) => {
                        if en[p] {
                            valid[f] = false;
                            count -= 1;
                            deletes += 1;
                        }
                        (false, None, 0)
                    }
                    None => (false, None, 2),
                }
            } else if let Some(f) = found {
                if flags[p] == 1 {
                    (false, None, 17)
                } else {
                    (en[p], Some(f), 0)
                }
            } else if flags[p] == 2 {
                (false, None, 2)
            } else if count >= entries || free.is_none() {
                overflow |= count < entries && en[p];
                big += 1;
                (false, None, 7)
            } else {
                let f = free.expect("free");
                if en[p] {
                    valid[f] = true;
                    keys[f] = look[p].clone();
                    count += 1;
                    inserts += 1;
                    stashed += (f >= rams) as usize;
                    port0_ram_insert |= p == 0 && f < rams;
                }
                (en[p], Some(f), 0)
            };
            hits += hit as usize;
            want.push((hit, slot, err));
        }
        let drop = hwe && !hvalid && haddr / KS < rams && port0_ram_insert && {
            (0..KB).any(|j| (hwmask >> (j % 8)) & 1 == 1)
        };
        expected.push((want, hread_next, probe_slot, overflow_before, drop));
        hist.push(format!("t{t}: hwe {hwe} hvalid {hvalid} haddr {haddr} mask {hwmask:x} data {hwdata:x} ins {port0_ram_insert}"));
        if hwe {
            if hvalid {
                if haddr < slots && hwmask & 1 == 1 {
                    let new = hwdata & 1 == 1;
                    count = count + new as usize - valid[haddr] as usize;
                    valid[haddr] = new;
                }
            } else if !drop {
                if let Some(key) = keys.get_mut(haddr / KS) {
                    for (j, byte) in key.iter_mut().enumerate() {
                        if (hwmask >> j) & 1 == 1 {
                            *byte = (hwdata >> (8 * j)) as u8;
                        }
                    }
                }
            }
        }
        // The host's read shows in the next cycle, with this cycle's writes.
        hread_next = if hvalid {
            (haddr < slots && valid[haddr]) as u64
        } else {
            let s = haddr / KS;
            (0..KB).fold(0u64, |v, j| {
                v | (if s < slots { keys[s][j] as u64 } else { 0 }) << (8 * j)
            })
        };
    }
    let out = w.run(&format!("hash_bkt_{entries}_{buckets}_{ways}"), &vectors);
    let (err_at, hread_at) = (2 + 2 * sw, 18 + 2 * sw);
    let phit_at = 82 + 2 * sw;
    let (ovf_at, drop_at) = (phit_at + 1 + sw, phit_at + 2 + sw);
    for (i, ((want, hread, probe_slot, ovf, drop), got)) in
        expected.iter().zip(&out).enumerate().skip(1)
    {
        let probe = (got.get(phit_at, 1) == 1).then(|| got.get(phit_at + 1, sw) as usize);
        assert_eq!(probe, *probe_slot, "cycle {i}: probe");
        for (p, (hit, slot, err)) in want.iter().enumerate() {
            assert_eq!(got.get(p, 1) == 1, *hit, "cycle {i}: port {p} hit");
            if *hit {
                assert_eq!(
                    Some(got.get(2 + sw * p, sw) as usize),
                    *slot,
                    "cycle {i}: port {p} slot"
                );
            }
            assert_eq!(
                got.get(err_at + 8 * p, 8),
                *err,
                "cycle {i}: port {p} errno"
            );
        }
        assert_eq!(
            got.get(hread_at, 64),
            *hread,
            "cycle {i}: host read {}",
            hist[i.saturating_sub(3)..=i].join("\n")
        );
        assert_eq!(got.get(ovf_at, 1) == 1, *ovf, "cycle {i}: overflow");
        assert_eq!(got.get(drop_at, 1) == 1, *drop, "cycle {i}: host drop");
    }
    assert!(
        hits > 120 && inserts > 20 && deletes > 20 && probed > 100 && big > 10,
        "{hits} hits, {inserts} inserts, {deletes} deletes, {probed} probes found, {big} E2BIG"
    );
    if buckets * ways < 2 * entries {
        assert!(
            stashed > 5 && overflow,
            "{stashed} stashed, overflow {overflow}"
        );
    } else {
        assert!(!overflow, "sized as the generator sizes it");
    }
}
