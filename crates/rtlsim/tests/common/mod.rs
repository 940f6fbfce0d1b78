//! Paths, the seeded random generator and the testbench runner shared by the integration tests.

// Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use hwxdp_rtlsim::{build, BuildSpec};

/// The repository root, two levels above this crate.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
}

/// Cargo's target directory: `CARGO_TARGET_DIR` when set (relative to the workspace root), else `target/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// The build of `top` with its unit testbench `sim/unit/<top>_tb.cpp`, over the repository's `rtl/` tree and
/// cached in the target directory; no sources yet.
pub fn unit_spec(top: &str) -> BuildSpec {
    let root = workspace_root();
    BuildSpec::new(
        top,
        root.join("rtl"),
        root.join(format!("sim/unit/{top}_tb.cpp")),
        target_dir(),
    )
}

/// Builds the model `spec` describes (or takes it from the cache), writes `input` (its command lines, each ending in
/// a newline) to its stdin and returns its stdout lines; panics when it fails to build, start or exit successfully.
pub fn run_testbench(spec: &BuildSpec, input: String) -> Vec<String> {
    let top = &spec.top;
    let model = build(spec).unwrap_or_else(|err| panic!("{err}"));
    let mut child = Command::new(&model.executable)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("the {top} model does not start: {err}"));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Writing from another thread keeps a full stdout pipe from blocking the model while we still write.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let lines: Vec<String> = BufReader::new(stdout)
        .lines()
        .map(|line| line.expect("model output is text"))
        .collect();
    writer
        .join()
        .expect("writer thread")
        .unwrap_or_else(|err| panic!("writing the {top} model's input: {err}"));
    let status = child
        .wait()
        .unwrap_or_else(|err| panic!("the {top} model does not exit: {err}"));
    assert!(status.success(), "{top} model failed: {status}");
    lines
}

/// Bytes as a string of hex pairs (the testbenches' input format).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// [`hex`], with `-` for no bytes (where a testbench reads an empty field).
pub fn hex_or_dash(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        "-".into()
    } else {
        hex(bytes)
    }
}

/// Bytes from a string of hex pairs.
pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex byte"))
        .collect()
}

/// xorshift64*: a fixed seed gives the same sequence on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value below `n`, from one `next`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// `below` for sizes, indices and addresses.
    pub fn below_usize(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// `n` random bytes, one `next` each.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// An access width: mostly the eBPF sizes and 6 (a MAC address), sometimes any value of the 4-bit port.
    pub fn width(&mut self) -> u8 {
        match self.below_usize(8) {
            0 => self.below_usize(16) as u8,
            _ => [1, 2, 4, 6, 8][self.below_usize(5)],
        }
    }

    /// An ALU operand: mostly uniform values, sometimes small ones, so that small divisors and shift amounts come
    /// up often.
    pub fn operand(&mut self) -> u64 {
        match self.next() % 4 {
            0 => self.next() % 70,
            1 => (self.next() % 70).wrapping_neg(),
            _ => self.next(),
        }
    }
}
