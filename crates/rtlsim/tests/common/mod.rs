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

/// A VCD waveform as a reader sees it: the timescale, every signal (scope path and name, identifier code) and every
/// value change in file order.
#[derive(Debug, Default)]
pub struct Vcd {
    /// The `$timescale` text, e.g. `1ps`.
    pub timescale: String,
    /// (`scope.path.name`, identifier code) of every `$var`.
    pub signals: Vec<(String, String)>,
    /// Every `#time` stamp, in file order.
    pub times: Vec<u64>,
    /// (time, identifier code, value) of every change, in file order.
    pub changes: Vec<(u64, String, String)>,
}

impl Vcd {
    /// The identifier code of the signal whose name (last path element) is `name`, in the outermost scope that has
    /// one.
    pub fn code(&self, name: &str) -> Option<&str> {
        self.signals
            .iter()
            .filter(|(path, _)| path.rsplit('.').next() == Some(name))
            .min_by_key(|(path, _)| path.matches('.').count())
            .map(|(_, code)| code.as_str())
    }

    /// The changes of signal `name`: (time, value).
    pub fn changes_of(&self, name: &str) -> Vec<(u64, &str)> {
        let Some(code) = self.code(name) else {
            return Vec::new();
        };
        self.changes
            .iter()
            .filter(|(_, c, _)| c == code)
            .map(|(t, _, v)| (*t, v.as_str()))
            .collect()
    }
}

/// Parses a VCD file (IEEE 1364 section 18): the header's `$timescale`, `$scope`/`$upscope` and `$var` sections,
/// then time stamps and scalar, vector and real value changes; fails on anything else, a change before the first
/// time stamp, a change of an undeclared signal or time going backwards.
pub fn parse_vcd(text: &str) -> Result<Vcd, String> {
    let mut vcd = Vcd::default();
    let mut words = text.split_whitespace();
    let mut scopes: Vec<String> = Vec::new();
    // Everything up to `$end` of the section just opened.
    fn section<'a>(words: &mut impl Iterator<Item = &'a str>) -> Result<Vec<&'a str>, String> {
        let mut body = Vec::new();
        for w in words.by_ref() {
            if w == "$end" {
                return Ok(body);
            }
            body.push(w);
        }
        Err("a section without $end".into())
    }
    loop {
        let Some(w) = words.next() else {
            return Err("no $enddefinitions".into());
        };
        match w {
            "$timescale" => vcd.timescale = section(&mut words)?.concat(),
            "$scope" => {
                let body = section(&mut words)?;
                scopes.push(body.get(1).ok_or("$scope without a name")?.to_string());
            }
            "$upscope" => {
                section(&mut words)?;
                scopes.pop().ok_or("$upscope without $scope")?;
            }
            "$var" => {
                let body = section(&mut words)?;
                if body.len() < 4 {
                    return Err(format!("short $var: {body:?}"));
                }
                let mut path = scopes.join(".");
                path.push('.');
                path.push_str(body[3]);
                vcd.signals.push((path, body[2].to_string()));
            }
            "$enddefinitions" => {
                section(&mut words)?;
                break;
            }
            "$version" | "$date" | "$comment" => {
                section(&mut words)?;
            }
            other => return Err(format!("unexpected {other:?} in the header")),
        }
    }
    let known: std::collections::BTreeSet<String> =
        vcd.signals.iter().map(|(_, c)| c.clone()).collect();
    let mut time: Option<u64> = None;
    let change = |vcd: &mut Vcd, time: Option<u64>, code: &str, value: &str| {
        let t = time.ok_or("a change before the first time stamp")?;
        if !known.contains(code) {
            return Err(format!("a change of undeclared signal {code:?}"));
        }
        vcd.changes.push((t, code.to_string(), value.to_string()));
        Ok::<(), String>(())
    };
    while let Some(w) = words.next() {
        if let Some(t) = w.strip_prefix('#') {
            let t: u64 = t.parse().map_err(|_| format!("bad time stamp {w:?}"))?;
            if time.is_some_and(|last| t < last) {
                return Err(format!("time goes back to {t}"));
            }
            time = Some(t);
            vcd.times.push(t);
        } else if matches!(
            w,
            "$dumpvars" | "$dumpall" | "$dumpon" | "$dumpoff" | "$end"
        ) {
        } else if let Some(bits) = w.strip_prefix(['b', 'B', 'r', 'R']) {
            let code = words.next().ok_or("a vector value without a signal")?;
            change(&mut vcd, time, code, bits)?;
        } else if let Some(code) = w.strip_prefix(['0', '1', 'x', 'X', 'z', 'Z']) {
            change(&mut vcd, time, code, &w[..1])?;
        } else {
            return Err(format!("unexpected {w:?} among the changes"));
        }
    }
    Ok(vcd)
}

/// Checks that `vcd` is a waveform of a clock `clk_i` with half period `half` in `unit`s, starting at time 0:
/// the first stamp is `#0`, the clock falls at even multiples of `half` and rises at odd ones, every stamp is a
/// multiple of `half`, and `signals` are declared.
pub fn check_waves(vcd: &Vcd, unit: &str, half: u64, signals: &[&str]) {
    assert_eq!(vcd.timescale, unit, "$timescale");
    assert_eq!(vcd.times.first(), Some(&0), "the waveform starts at #0");
    for s in signals.iter().chain(&["clk_i"]) {
        assert!(vcd.code(s).is_some(), "no signal {s} in the waveform");
    }
    assert!(
        vcd.times.iter().all(|t| t % half == 0),
        "a time stamp off the half periods of {half}"
    );
    let clock = vcd.changes_of("clk_i");
    assert!(clock.len() >= 4, "the clock barely changes: {clock:?}");
    for (t, v) in &clock {
        let want = if (t / half) % 2 == 1 { "1" } else { "0" };
        assert_eq!(*v, want, "clk_i at {t}");
    }
}
