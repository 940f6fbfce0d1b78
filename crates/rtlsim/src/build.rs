//! Cached Verilator builds: one directory per distinct set of inputs, filled once and then reused.
//!
//! A build happens in a private temporary directory that is renamed into place only when the executable exists, so
//! a cache directory is either complete or absent. Inside one process, two threads asking for the same model wait for
//! one build, while different models build side by side (Verilator's translation runs on one core, so a second build
//! uses the other); between processes, the rename decides which of two identical builds is kept.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::hash::KeyHasher;
use crate::tool::{self, problem_lines};
use crate::RtlError;

/// The Debian package providing `verilator`.
pub(crate) const VERILATOR_PACKAGE: &str = "verilator";

/// Flags of every build; they are part of the cache key. `-O2` (Verilator's own optimisation level) keeps the C++
/// small enough to compile quickly while the generated model stays fast. The C++ of the evaluation code is compiled
/// at `-O1` instead of Verilator's `-Os`, in functions split at 2000 statements: on a pipeline with two hash maps
/// that takes a third less compile time (112 s against 177 s of CPU) for a model a quarter slower (3000 packets in
/// 4.3 s against 3.4 s), and the tests build far more models than they run packets.
const BASE_FLAGS: &[&str] = &[
    "--cc",
    "--exe",
    "--build",
    "-O2",
    "-Wall",
    "--output-split-cfuncs",
    "2000",
    "-MAKEFLAGS",
    "OPT_FAST=-O1",
];

/// The compiler cache every build uses when it is installed. Each model compiles Verilator's run-time library and
/// its testbench again, the same sources with the same flags; with ccache the second model onwards takes them
/// from the cache (a small unit model: 3.2 s of CPU instead of 9.5). The cache is not part of the model's key: it
/// changes how long a build takes, not what it builds. It lives in `<cache_dir>/ccache/` unless `CCACHE_DIR` says
/// otherwise.
const COMPILER_CACHE: &str = "ccache";

/// Parallel jobs for the C++ compile; the build machines have two cores.
const BUILD_JOBS: &str = "2";

/// One lock per model (its cache directory) within this process, so a model is built once.
static MODEL_LOCKS: Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>> = Mutex::new(BTreeMap::new());

/// The lock of the model cached in `dir`.
fn model_lock(dir: &Path) -> Arc<Mutex<()>> {
    let mut locks = MODEL_LOCKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    locks.entry(dir.to_path_buf()).or_default().clone()
}

/// Makes temporary directory names unique within this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// What to build: Verilog sources, read from a directory or given by their text, and one C++ testbench.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSpec {
    /// The top module, also the name of the executable (`<top>_sim`).
    pub top: String,
    /// The directory `sources` are read from (the repository's `rtl/` for the unit tests).
    pub rtl_root: PathBuf,
    /// Verilog files (and `.vlt` waiver files) relative to `rtl_root`, in the order Verilator reads them.
    pub sources: Vec<PathBuf>,
    /// Sources given by their text instead of read from `rtl_root` (embedded in the binary, or generated): a relative
    /// path, as for `sources`, and the text. Verilator reads them after `sources`, in this order; a model is the same
    /// (and cached once) whether its sources came from files or texts.
    pub texts: Vec<(PathBuf, Cow<'static, str>)>,
    /// The C++ testbench providing `main`; only its file name counts when `testbench_text` is given.
    pub testbench: PathBuf,
    /// The testbench's text, when it is not read from `testbench`.
    pub testbench_text: Option<Cow<'static, str>>,
    /// The directory models are cached in, as `<cache_dir>/<top>-<hash>/` ([`crate::cache_dir`] for what users
    /// run; [`BuildSpec::new`] takes a Cargo target directory and caches under its `rtlsim/`).
    pub cache_dir: PathBuf,
    /// Extra Verilator flags, appended after the standard ones.
    pub flags: Vec<String>,
    /// The Verilator program to run, `verilator` from `PATH` unless overridden.
    pub verilator: PathBuf,
}

impl BuildSpec {
    /// A spec with no sources yet, no extra flags and `verilator` from `PATH`, cached under `<target_dir>/rtlsim/`
    /// (the tests' cache: every test binary that builds a model shares it; set `cache_dir` to cache elsewhere).
    pub fn new(
        top: impl Into<String>,
        rtl_root: impl Into<PathBuf>,
        testbench: impl Into<PathBuf>,
        target_dir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            top: top.into(),
            rtl_root: rtl_root.into(),
            sources: Vec::new(),
            texts: Vec::new(),
            testbench: testbench.into(),
            testbench_text: None,
            cache_dir: target_dir.into().join("rtlsim"),
            flags: Vec::new(),
            verilator: PathBuf::from("verilator"),
        }
    }

    /// Adds a source file, relative to `rtl_root`.
    pub fn source(mut self, relative: impl Into<PathBuf>) -> Self {
        self.sources.push(relative.into());
        self
    }

    /// Adds a source given by its text, under the relative path `relative`.
    pub fn text(
        mut self,
        relative: impl Into<PathBuf>,
        text: impl Into<Cow<'static, str>>,
    ) -> Self {
        self.texts.push((relative.into(), text.into()));
        self
    }

    /// Appends Verilator flags.
    pub fn flags(mut self, flags: &[&str]) -> Self {
        self.flags.extend(flags.iter().map(|flag| flag.to_string()));
        self
    }
}

/// A built Verilator model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// The simulation executable.
    pub executable: PathBuf,
    /// The cache directory holding the copied inputs and Verilator's output.
    pub dir: PathBuf,
    /// True when the model came from the cache and Verilator did not run.
    pub reused: bool,
}

/// One input file, as read once for both the hash and the copy.
struct Input {
    relative: PathBuf,
    bytes: Vec<u8>,
}

/// Builds the model `spec` describes, or returns the cached one when the sources, testbench, Verilator version and
/// flags are all unchanged.
pub fn build(spec: &BuildSpec) -> Result<Model, RtlError> {
    build_announced(spec, &mut || {})
}

/// [`build`], calling `announce` right before Verilator runs (so never for a cached model).
pub(crate) fn build_announced(
    spec: &BuildSpec,
    announce: &mut dyn FnMut(),
) -> Result<Model, RtlError> {
    if spec.sources.is_empty() && spec.texts.is_empty() {
        return Err(RtlError::NoSources {
            top: spec.top.clone(),
        });
    }
    let sources = read_sources(spec)?;
    let testbench = match &spec.testbench_text {
        Some(text) => text.as_bytes().to_vec(),
        None => read_file(&spec.testbench)?,
    };
    let version = tool::run(&spec.verilator, VERILATOR_PACKAGE, ["--version"], None)?;
    if !version.success {
        return Err(RtlError::Build {
            top: spec.top.clone(),
            log: problem_lines(&version.text),
        });
    }

    let mut key = KeyHasher::new();
    key.field(spec.top.as_bytes());
    key.field(version.text.trim().as_bytes());
    for flag in BASE_FLAGS {
        key.field(flag.as_bytes());
    }
    for flag in &spec.flags {
        key.field(flag.as_bytes());
    }
    for input in &sources {
        key.field(input.relative.to_string_lossy().as_bytes());
        key.field(&input.bytes);
    }
    let testbench_name = testbench_name(spec)?;
    key.field(testbench_name.as_bytes());
    key.field(&testbench);

    let cache = &spec.cache_dir;
    let name = format!("{}-{}", spec.top, key.hex());
    let dir = cache.join(&name);
    let executable = executable_in(&dir, &spec.top);

    let lock = model_lock(&dir);
    let _guard = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if executable.is_file() {
        return Ok(Model {
            executable,
            dir,
            reused: true,
        });
    }
    let temp = cache.join(format!(
        ".{name}.{}.{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    announce();
    let built = fill_and_build(spec, &temp, &sources, &testbench_name, &testbench);
    if let Err(err) = built {
        // A failed build leaves nothing behind; its log is in the error.
        let _ = fs::remove_dir_all(&temp);
        return Err(err);
    }
    publish(&temp, &dir, &executable)?;
    Ok(Model {
        executable,
        dir,
        reused: false,
    })
}

/// [`build_announced`] under an exclusive lock on the file `.<lock>.lock` of the cache directory: [`build`]
/// serialises builds within one process, this across processes (test suites start many `hwxdp` processes at once),
/// so a second process asking for the same model waits for the first's build and then finds it cached instead of
/// building it again.
pub(crate) fn locked_build(
    spec: &BuildSpec,
    lock: &str,
    announce: &mut dyn FnMut(),
) -> Result<Model, RtlError> {
    use std::os::fd::AsRawFd;
    let dir = &spec.cache_dir;
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| RtlError::Io {
            action,
            path,
            source,
        }
    };
    fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
    let path = dir.join(format!(".{lock}.lock"));
    let file = fs::File::create(&path).map_err(io("cannot create", &path))?;
    // SAFETY: flock on a descriptor this function owns; it is released when `file` is closed.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io("cannot lock", &path)(std::io::Error::last_os_error()));
    }
    let model = build_announced(spec, announce);
    drop(file);
    model
}

fn executable_in(dir: &Path, top: &str) -> PathBuf {
    dir.join("obj").join(format!("{top}_sim"))
}

fn read_file(path: &Path) -> Result<Vec<u8>, RtlError> {
    fs::read(path).map_err(|source| RtlError::Io {
        action: "cannot read",
        path: path.to_path_buf(),
        source,
    })
}

/// The sources read from `rtl_root`, then the texts; every path must stay inside the build directory.
fn read_sources(spec: &BuildSpec) -> Result<Vec<Input>, RtlError> {
    let inside = |relative: &Path| {
        let inside = relative
            .components()
            .all(|component| matches!(component, Component::Normal(_)));
        if !inside || relative.as_os_str().is_empty() {
            return Err(RtlError::SourceOutsideRoot {
                path: relative.to_path_buf(),
            });
        }
        Ok(())
    };
    let mut inputs = Vec::with_capacity(spec.sources.len() + spec.texts.len());
    for relative in &spec.sources {
        inside(relative)?;
        inputs.push(Input {
            relative: relative.clone(),
            bytes: read_file(&spec.rtl_root.join(relative))?,
        });
    }
    for (relative, text) in &spec.texts {
        inside(relative)?;
        inputs.push(Input {
            relative: relative.clone(),
            bytes: text.as_bytes().to_vec(),
        });
    }
    Ok(inputs)
}

fn testbench_name(spec: &BuildSpec) -> Result<String, RtlError> {
    spec.testbench
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or_else(|| RtlError::Io {
            action: "testbench has no file name",
            path: spec.testbench.clone(),
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RtlError> {
    let io_error = |source| RtlError::Io {
        action: "cannot write",
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_error)?;
    }
    fs::write(path, bytes).map_err(io_error)
}

/// Copies the inputs into `temp` and runs Verilator there.
fn fill_and_build(
    spec: &BuildSpec,
    temp: &Path,
    sources: &[Input],
    testbench_name: &str,
    testbench: &[u8],
) -> Result<(), RtlError> {
    let mut args: Vec<String> = BASE_FLAGS.iter().map(|flag| flag.to_string()).collect();
    args.extend([
        "-j".to_string(),
        BUILD_JOBS.to_string(),
        "--top-module".to_string(),
        spec.top.clone(),
        "--prefix".to_string(),
        format!("V{}", spec.top),
        "--Mdir".to_string(),
        "obj".to_string(),
        "-o".to_string(),
        format!("{}_sim", spec.top),
    ]);
    args.extend(spec.flags.iter().cloned());
    for input in sources {
        let copy = Path::new("rtl").join(&input.relative);
        write_file(&temp.join(&copy), &input.bytes)?;
        args.push(copy.to_string_lossy().into_owned());
    }
    let bench = Path::new("sim").join(testbench_name);
    write_file(&temp.join(&bench), testbench)?;
    args.push(bench.to_string_lossy().into_owned());

    // Verilator runs in `temp`, so the compiler cache's path must not be relative.
    let cache_dir = std::path::absolute(&spec.cache_dir)
        .unwrap_or_else(|_| spec.cache_dir.clone())
        .join(COMPILER_CACHE);
    let mut env = Vec::new();
    if on_path(COMPILER_CACHE) {
        args.extend([
            "-MAKEFLAGS".to_string(),
            format!("OBJCACHE={COMPILER_CACHE}"),
        ]);
        if std::env::var_os("CCACHE_DIR").is_none() {
            env.push(("CCACHE_DIR", cache_dir.as_os_str()));
        }
    }
    let finished = tool::run_with_env(&spec.verilator, VERILATOR_PACKAGE, &args, Some(temp), &env)?;
    if finished.success && executable_in(temp, &spec.top).is_file() {
        return Ok(());
    }
    Err(RtlError::Build {
        top: spec.top.clone(),
        log: problem_lines(&finished.text),
    })
}

/// Whether `program` is an executable file in one of the directories of `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Renames the finished build into place. When another process published the same model first, its copy is kept and
/// ours discarded; a directory left without an executable (by hand, since builds never leave one) is replaced.
fn publish(temp: &Path, dir: &Path, executable: &Path) -> Result<(), RtlError> {
    let io_error = |source| RtlError::Io {
        action: "cannot publish model to",
        path: dir.to_path_buf(),
        source,
    };
    if fs::rename(temp, dir).is_ok() {
        return Ok(());
    }
    if executable.is_file() {
        let _ = fs::remove_dir_all(temp);
        return Ok(());
    }
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(io_error)?;
    }
    let renamed = fs::rename(temp, dir).map_err(io_error);
    if renamed.is_err() {
        let _ = fs::remove_dir_all(temp);
    }
    renamed
}
