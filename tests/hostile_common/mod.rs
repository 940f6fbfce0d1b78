//! Shared by the `hostile_*` suites: a minimal BPF ELF writer for generated objects, and a runner that puts the
//! `hwxdp` binary under an address-space limit and times it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `R_BPF_64_32`: a bpf-to-bpf call's relocation.
const R_BPF_64_32: u64 = 10;
const SHT_PROGBITS: u32 = 1;
const SHT_SYMTAB: u32 = 2;
const SHT_STRTAB: u32 = 3;
const SHT_REL: u32 = 9;
const SHF_ALLOC: u64 = 2;
const SHF_EXECINSTR: u64 = 4;
const SHF_INFO_LINK: u64 = 0x40;
const STT_FUNC: u8 = 2;
const STB_LOCAL: u8 = 0;
const STB_GLOBAL: u8 = 1;

/// One 8-byte instruction: opcode, dst, src, off, imm.
pub fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[0] = code;
    b[1] = (src << 4) | (dst & 0xf);
    b[2..4].copy_from_slice(&off.to_le_bytes());
    b[4..8].copy_from_slice(&imm.to_le_bytes());
    b
}

/// `call imm` to a bpf function (`src == 1`), `imm` slots after the next instruction.
pub fn call(imm: i32) -> [u8; 8] {
    insn(0x85, 0, 1, 0, imm)
}

/// `exit`.
pub fn exit() -> [u8; 8] {
    insn(0x95, 0, 0, 0, 0)
}

/// `r0 = imm`.
pub fn mov_r0(imm: i32) -> [u8; 8] {
    insn(0xb7, 0, 0, 0, imm)
}

/// A function symbol of a code section being built.
pub struct Func {
    /// Symbol name.
    pub name: String,
    /// First byte in its section.
    pub value: u64,
    /// Size in bytes.
    pub size: u64,
    /// Global (a program, outside `.text`) or local.
    pub global: bool,
}

/// A code section being built: its bytes, functions and call relocations (byte offset, symbol name).
pub struct CodeSec {
    /// Section name, e.g. `xdp` or `.text`.
    pub name: String,
    /// Instructions.
    pub code: Vec<u8>,
    /// Functions, in any order.
    pub funcs: Vec<Func>,
    /// `R_BPF_64_32` relocations: byte offset of the call and the function symbol it calls.
    pub calls: Vec<(u64, String)>,
}

/// A growing byte buffer with the string-table helpers ELF needs.
struct StrTab(Vec<u8>);

impl StrTab {
    fn new() -> Self {
        StrTab(vec![0])
    }
    fn add(&mut self, s: &str) -> u32 {
        let off = self.0.len() as u32;
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        off
    }
}

struct Shdr {
    name: u32,
    kind: u32,
    flags: u64,
    data: Vec<u8>,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// Writes a 64-bit little-endian BPF ELF object with the given code sections, a `license` and a symbol table.
/// Section indices: 0 null, 1 `.shstrtab`, 2 `.strtab`, 3 `.symtab`, 4 `license`, then each code section followed by
/// its `.rel` section when it has calls.
pub fn write_elf(sections: &[CodeSec]) -> Vec<u8> {
    let mut shstr = StrTab::new();
    let mut strtab = StrTab::new();
    let mut shdrs: Vec<Shdr> = Vec::new();
    let mut index_of_code = Vec::new();
    let mut next = 5u32;
    for sec in sections {
        index_of_code.push(next);
        next += if sec.calls.is_empty() { 1 } else { 2 };
    }
    // Symbols: locals first (null, then local functions), then globals, as ELF requires.
    let mut locals: Vec<(u32, u8, u16, u64, u64, String)> = Vec::new();
    let mut globals = Vec::new();
    for (k, sec) in sections.iter().enumerate() {
        for f in &sec.funcs {
            let entry = (
                0,
                STT_FUNC | ((if f.global { STB_GLOBAL } else { STB_LOCAL }) << 4),
                index_of_code[k] as u16,
                f.value,
                f.size,
                f.name.clone(),
            );
            if f.global {
                globals.push(entry);
            } else {
                locals.push(entry);
            }
        }
    }
    let first_global = locals.len() as u32 + 1;
    let mut sym_index = std::collections::HashMap::new();
    let mut symtab = vec![0u8; 24];
    for (i, (_, info, shndx, value, size, name)) in locals.iter().chain(&globals).enumerate() {
        sym_index.insert(name.clone(), i as u64 + 1);
        symtab.extend_from_slice(&strtab.add(name).to_le_bytes());
        symtab.push(*info);
        symtab.push(0);
        symtab.extend_from_slice(&shndx.to_le_bytes());
        symtab.extend_from_slice(&value.to_le_bytes());
        symtab.extend_from_slice(&size.to_le_bytes());
    }
    let plain = |name: u32, kind: u32, data: Vec<u8>| Shdr {
        name,
        kind,
        flags: 0,
        data,
        link: 0,
        info: 0,
        align: 1,
        entsize: 0,
    };
    shdrs.push(plain(0, 0, Vec::new()));
    let shstrtab_name = shstr.add(".shstrtab");
    shdrs.push(plain(shstrtab_name, SHT_STRTAB, Vec::new()));
    let strtab_name = shstr.add(".strtab");
    shdrs.push(plain(strtab_name, SHT_STRTAB, strtab.0));
    let mut sym = plain(shstr.add(".symtab"), SHT_SYMTAB, symtab);
    sym.link = 2;
    sym.info = first_global;
    sym.align = 8;
    sym.entsize = 24;
    shdrs.push(sym);
    let mut license = plain(shstr.add("license"), SHT_PROGBITS, b"GPL\0".to_vec());
    license.flags = SHF_ALLOC | 2;
    shdrs.push(license);
    for (k, sec) in sections.iter().enumerate() {
        let mut code = plain(shstr.add(&sec.name), SHT_PROGBITS, sec.code.clone());
        code.flags = SHF_ALLOC | SHF_EXECINSTR;
        code.align = 8;
        shdrs.push(code);
        if !sec.calls.is_empty() {
            let mut rels = Vec::with_capacity(sec.calls.len() * 16);
            for (offset, target) in &sec.calls {
                rels.extend_from_slice(&offset.to_le_bytes());
                rels.extend_from_slice(&((sym_index[target] << 32) | R_BPF_64_32).to_le_bytes());
            }
            let mut rel = plain(shstr.add(&format!(".rel{}", sec.name)), SHT_REL, rels);
            rel.flags = SHF_INFO_LINK;
            rel.link = 3;
            rel.info = index_of_code[k];
            rel.align = 8;
            rel.entsize = 16;
            shdrs.push(rel);
        }
    }
    shdrs[1].data = shstr.0;
    serialize(shdrs)
}

fn serialize(shdrs: Vec<Shdr>) -> Vec<u8> {
    let mut out = vec![0u8; 64];
    let mut offsets = Vec::with_capacity(shdrs.len());
    for s in &shdrs {
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        offsets.push(out.len() as u64);
        out.extend_from_slice(&s.data);
    }
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    let shoff = out.len() as u64;
    for (s, off) in shdrs.iter().zip(&offsets) {
        out.extend_from_slice(&s.name.to_le_bytes());
        out.extend_from_slice(&s.kind.to_le_bytes());
        out.extend_from_slice(&s.flags.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&(if s.kind == 0 { 0 } else { *off }).to_le_bytes());
        out.extend_from_slice(&(s.data.len() as u64).to_le_bytes());
        out.extend_from_slice(&s.link.to_le_bytes());
        out.extend_from_slice(&s.info.to_le_bytes());
        out.extend_from_slice(&s.align.to_le_bytes());
        out.extend_from_slice(&s.entsize.to_le_bytes());
    }
    let h = &mut out[..64];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // ELFCLASS64
    h[5] = 1; // little endian
    h[6] = 1; // EV_CURRENT
    h[16..18].copy_from_slice(&1u16.to_le_bytes()); // ET_REL
    h[18..20].copy_from_slice(&247u16.to_le_bytes()); // EM_BPF
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[40..48].copy_from_slice(&shoff.to_le_bytes());
    h[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    h[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    h[60..62].copy_from_slice(&(shdrs.len() as u16).to_le_bytes());
    h[62..64].copy_from_slice(&1u16.to_le_bytes()); // e_shstrndx
    out
}

/// `programs` XDP programs in one `xdp` section, each calling `hub` in `.text`, which calls each of `leaves` leaf
/// functions in turn (so the call depth is 2, within the kernel's 8) and returns XDP_PASS. Linked, every program holds
/// the hub and every leaf.
pub fn shared_callees(programs: usize, leaves: usize) -> Vec<u8> {
    let mut text = CodeSec {
        name: ".text".into(),
        code: Vec::new(),
        funcs: Vec::new(),
        calls: Vec::new(),
    };
    // The hub: one call per leaf, then r0 = XDP_PASS, exit. Leaf i (2 slots) starts at slot hub_len + 2i.
    let hub_len = leaves + 2;
    for i in 0..leaves {
        let target = hub_len + 2 * i;
        text.code
            .extend_from_slice(&call((target - (i + 1)) as i32));
    }
    text.code.extend_from_slice(&mov_r0(2));
    text.code.extend_from_slice(&exit());
    text.funcs.push(Func {
        name: "hub".into(),
        value: 0,
        size: hub_len as u64 * 8,
        global: false,
    });
    for i in 0..leaves {
        let start = text.code.len() as u64;
        text.code.extend_from_slice(&mov_r0(i as i32));
        text.code.extend_from_slice(&exit());
        text.funcs.push(Func {
            name: format!("f{i}"),
            value: start,
            size: 16,
            global: false,
        });
    }
    let mut xdp = CodeSec {
        name: "xdp".into(),
        code: Vec::new(),
        funcs: Vec::new(),
        calls: Vec::new(),
    };
    for p in 0..programs {
        let start = xdp.code.len() as u64;
        xdp.calls.push((start, "hub".into()));
        xdp.code.extend_from_slice(&call(-1));
        xdp.code.extend_from_slice(&exit());
        xdp.funcs.push(Func {
            name: format!("p{p}"),
            value: start,
            size: 16,
            global: true,
        });
    }
    write_elf(&[text, xdp])
}

/// A pcap of one 60-byte IPv4/UDP frame, written to `one.pcap` in `dir`.
pub fn one_packet_pcap(dir: &Scratch) -> PathBuf {
    let mut bytes = Vec::new();
    // Header: magic, version 2.4, zone, sigfigs, snaplen, LINKTYPE_ETHERNET.
    bytes.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    bytes.extend_from_slice(&2u16.to_le_bytes());
    bytes.extend_from_slice(&4u16.to_le_bytes());
    for word in [0u32, 0, 65535, 1] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    let mut frame = vec![0u8; 60];
    frame[12..14].copy_from_slice(&[0x08, 0x00]);
    frame[14] = 0x45;
    frame[16..18].copy_from_slice(&46u16.to_be_bytes());
    frame[22] = 64;
    frame[23] = 17;
    for word in [0u32, 0, 60, 60] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes.extend_from_slice(&frame);
    dir.write("one.pcap", &bytes)
}

/// `sections` program sections `xdp/s<i>`, each holding one program that returns XDP_PASS.
pub fn many_sections(sections: usize) -> Vec<u8> {
    let secs: Vec<CodeSec> = (0..sections)
        .map(|i| {
            let mut code = mov_r0(2).to_vec();
            code.extend_from_slice(&exit());
            CodeSec {
                name: format!("xdp/s{i}"),
                code,
                funcs: vec![Func {
                    name: format!("s{i}"),
                    value: 0,
                    size: 16,
                    global: true,
                }],
                calls: Vec::new(),
            }
        })
        .collect();
    write_elf(&secs)
}

/// A scratch directory for one suite, removed by the caller's [`Scratch`] drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory under the system temp dir named after `suite`.
    pub fn new(suite: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("hwxdp-{suite}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// Writes `bytes` to `name` in the directory and returns its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What one run of the binary did.
pub struct Run {
    /// Exit status code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
    /// User plus system CPU time of the process (from `/usr/bin/time`): what the ratios compare, as it does not
    /// depend on how loaded the machine is.
    pub cpu: Duration,
    /// Peak resident set size in KiB (from `/usr/bin/time`).
    pub max_rss_kib: u64,
}

/// Runs `hwxdp ARGS` under `prlimit --as=<limit_mib> MiB` (so a blow-up fails the run instead of the machine) and
/// `/usr/bin/time` (for its CPU time and peak memory).
pub fn hwxdp_limited(limit_mib: u64, args: &[&str]) -> Run {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let usage = std::env::temp_dir().join(format!("hwxdp-usage-{}-{n}", std::process::id()));
    let start = Instant::now();
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", limit_mib << 20))
        .arg("--")
        .arg("/usr/bin/time")
        .arg("-f")
        .arg("%U %S %M")
        .arg("-o")
        .arg(&usage)
        .arg(env!("CARGO_BIN_EXE_hwxdp"))
        .args(args)
        .output()
        .expect("prlimit (util-linux) and /usr/bin/time (GNU time) run");
    let elapsed = start.elapsed();
    let text = std::fs::read_to_string(&usage).expect("/usr/bin/time wrote its report");
    let _ = std::fs::remove_file(&usage);
    // A killed child makes time write "Command terminated by signal N" first; the figures are on the last line.
    let fields: Vec<&str> = text
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let [user, sys, rss] = fields[..] else {
        panic!("unexpected /usr/bin/time report: {text}");
    };
    let seconds = |s: &str| s.parse::<f64>().expect("seconds");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed,
        cpu: Duration::from_secs_f64(seconds(user) + seconds(sys)),
        max_rss_kib: rss.parse().expect("KiB"),
    }
}

/// The path as a `&str` for an argument list.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

/// The shape of a generated program for the compiler scaling tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One block: ALU operations on r5-r9 and a packet byte load every 16 of them.
    Straight,
    /// A chain of small diamonds: `if rX > K goto +1; rX += rY; rY ^= K`, with the same loads.
    Branchy,
}

/// An XDP program `prog` of about `insns` instructions of `shape` (a bounds check of 64 bytes, then the body, then
/// `r0 = r5 & 3; exit`; the same shapes as `scripts/compile-scaling.sh` generates), which the kernel's verifier accepts, in a one-program object.
pub fn generated_program(insns: usize, shape: Shape) -> Vec<u8> {
    let regs = [5u8, 6, 7, 8, 9];
    let mut prologue = vec![
        insn(0x61, 2, 1, 0, 0), // r2 = data
        insn(0x61, 3, 1, 4, 0), // r3 = data_end
        insn(0xbf, 4, 2, 0, 0), // r4 = r2
        insn(0x07, 4, 0, 0, 64),
        insn(0xb7, 0, 0, 0, 2),
    ];
    for &r in &regs {
        prologue.push(insn(0xb7, r, 0, 0, i32::from(r)));
    }
    let mut body: Vec<[u8; 8]> = Vec::new();
    let mut k = 0usize;
    while body.len() + prologue.len() + 4 < insns {
        let d = regs[k % 5];
        let s = regs[(k * 3 + 1) % 5];
        let imm = (k & 0xffff) as i32;
        match shape {
            Shape::Branchy => {
                body.push(insn(0x25, d, 0, 1, (k & 0xff) as i32)); // if d > K goto +1
                body.push(insn(0x0f, d, s, 0, 0)); // d += s
                body.push(insn(0xa7, s, 0, 0, imm)); // s ^= K
            }
            Shape::Straight => body.push(match k % 5 {
                0 => insn(0x07, d, 0, 0, imm), // d += K
                1 => insn(0x0f, d, s, 0, 0),   // d += s
                2 => insn(0xaf, d, s, 0, 0),   // d ^= s
                3 => insn(0xa7, d, 0, 0, imm), // d ^= K
                _ => insn(0x5f, d, s, 0, 0),   // d &= s
            }),
        }
        if k % 16 == 15 {
            body.push(insn(0x71, d, 2, (k % 60) as i16, 0)); // d = *(u8 *)(r2 + off)
        }
        k += 1;
    }
    // Short frames end here with XDP_PASS: if r4 <= r3 goto +1; exit (a jump over the body would not reach).
    prologue.push(insn(0xbd, 4, 3, 1, 0));
    prologue.push(exit());
    let mut code = Vec::new();
    for i in prologue.iter().chain(&body) {
        code.extend_from_slice(i);
    }
    code.extend_from_slice(&insn(0xbf, 0, 5, 0, 0)); // r0 = r5
    code.extend_from_slice(&insn(0x57, 0, 0, 0, 3)); // r0 &= 3
    code.extend_from_slice(&exit());
    let size = code.len() as u64;
    write_elf(&[CodeSec {
        name: "xdp".into(),
        code,
        funcs: vec![Func {
            name: "prog".into(),
            value: 0,
            size,
            global: true,
        }],
        calls: Vec::new(),
    }])
}
