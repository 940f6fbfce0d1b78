//! The build cache: one build per distinct input, safe under concurrent callers, and clear errors when it cannot
//! build.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use hwxdp_rtlsim::{build, BuildSpec, RtlError};

const INVERTER: &str =
    "`default_nettype none\n// Inverts one bit.\nmodule inverter (\n  input  logic a_i,\n  \
                        output logic y_o\n);\n  assign y_o = ~a_i;\nendmodule\n";

const INVERTER_TB: &str = r#"// Prints the inverter's output for inputs 0 and 1.
#include <cstdio>
#include "Vinverter.h"
#include "verilated.h"
int main(int argc, char** argv) {
    VerilatedContext context;
    context.commandArgs(argc, argv);
    Vinverter top(&context);
    for (int a = 0; a < 2; ++a) {
        top.a_i = a;
        top.eval();
        std::printf("%d", static_cast<int>(top.y_o));
    }
    std::printf("\n");
    top.final();
    return 0;
}
"#;

/// A fresh scratch directory for one test, holding an `rtl/` tree, a testbench and a target directory.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).expect("clear scratch dir");
    }
    fs::create_dir_all(dir.join("rtl/unit")).expect("scratch rtl dir");
    fs::write(dir.join("inverter_tb.cpp"), INVERTER_TB).expect("write testbench");
    dir
}

fn inverter_spec(dir: &Path, source: &str) -> BuildSpec {
    fs::write(dir.join("rtl/unit/inverter.sv"), source).expect("write source");
    BuildSpec::new(
        "inverter",
        dir.join("rtl"),
        dir.join("inverter_tb.cpp"),
        dir.join("target"),
    )
    .source("unit/inverter.sv")
}

#[test]
fn a_model_is_built_once_even_when_asked_for_concurrently() {
    let dir = scratch("rtlsim-cache");
    let spec = inverter_spec(&dir, INVERTER);

    let builds: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2).map(|_| scope.spawn(|| build(&spec))).collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .expect("build thread")
                    .unwrap_or_else(|err| panic!("{err}"))
            })
            .collect()
    });
    assert_eq!(builds[0].executable, builds[1].executable);
    assert_eq!(
        builds.iter().filter(|model| !model.reused).count(),
        1,
        "exactly one of two concurrent requests runs verilator"
    );
    let model = &builds[0];
    assert!(model.dir.starts_with(dir.join("target/rtlsim")));
    let dir_name = model
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("dir name");
    assert!(dir_name.starts_with("inverter-"), "{dir_name}");

    let output = Command::new(&model.executable)
        .output()
        .expect("model runs");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "10\n");

    let built_at = fs::metadata(&model.executable)
        .and_then(|m| m.modified())
        .expect("mtime");
    let again = build(&spec).unwrap_or_else(|err| panic!("{err}"));
    assert!(again.reused, "an unchanged model is not rebuilt");
    assert_eq!(again.executable, model.executable);
    let still = fs::metadata(&again.executable)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(built_at, still, "the cached executable was not rewritten");

    // No temporary build directories are left behind.
    let leftovers: Vec<_> = fs::read_dir(dir.join("target/rtlsim"))
        .expect("cache dir")
        .map(|entry| entry.expect("entry").file_name())
        .filter(|name| name.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Any change to a source gives a different model.
    let changed = inverter_spec(
        &dir,
        &INVERTER.replace("Inverts one bit.", "Inverts a bit."),
    );
    let rebuilt = build(&changed).unwrap_or_else(|err| panic!("{err}"));
    assert!(!rebuilt.reused);
    assert_ne!(rebuilt.dir, model.dir);
}

#[test]
fn a_failed_build_reports_verilators_errors_and_caches_nothing() {
    let dir = scratch("rtlsim-broken");
    let spec = inverter_spec(&dir, &INVERTER.replace("~a_i", "~missing_i"));
    match build(&spec) {
        Err(RtlError::Build { top, log }) => {
            assert_eq!(top, "inverter");
            assert!(log.contains("%Error"), "{log}");
            assert!(log.contains("missing_i"), "{log}");
        }
        other => panic!("expected a build error, got {other:?}"),
    }
    let cache = dir.join("target/rtlsim");
    let left = fs::read_dir(&cache)
        .map(|entries| {
            entries
                .filter(|entry| entry.as_ref().map_or(true, |e| e.file_name() != "ccache"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(
        left,
        0,
        "a failed build leaves nothing in {}",
        cache.display()
    );
}

#[test]
fn different_models_share_compiled_objects_through_the_compiler_cache() {
    let dir = scratch("rtlsim-ccache");
    let first = build(&inverter_spec(&dir, INVERTER)).unwrap_or_else(|err| panic!("{err}"));
    let other = inverter_spec(
        &dir,
        &INVERTER.replace("assign y_o = ~a_i;", "assign y_o = !a_i;"),
    );
    let second = build(&other).unwrap_or_else(|err| panic!("{err}"));
    assert!(!first.reused && !second.reused);
    assert_ne!(first.dir, second.dir, "two different models");

    // Verilator's run-time library is compiled once, for the first model; the second takes it from the cache.
    let cache_dir = std::env::var_os("CCACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.join("target/rtlsim/ccache"));
    let stats = Command::new("ccache")
        .arg("--print-stats")
        .env("CCACHE_DIR", &cache_dir)
        .output()
        .expect("ccache runs (scripts/install-deps.sh installs it)");
    let text = String::from_utf8_lossy(&stats.stdout);
    let hits: u64 = text
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .filter(|(name, _)| matches!(*name, "direct_cache_hit" | "preprocessed_cache_hit"))
        .filter_map(|(_, count)| count.trim().parse::<u64>().ok())
        .sum();
    assert!(
        hits >= 1,
        "no compiler cache hits in {}:\n{text}",
        cache_dir.display()
    );
}

/// A stand-in for Verilator: `--version` answers; a build of top T marks `T.started` in the directory `MARKS`,
/// waits (up to a minute) until the other build of the test has marked its start too, then writes a model that
/// prints T. Two builds in this process therefore finish only if they run side by side.
const OVERLAPPING_VERILATOR: &str = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "Verilator stand-in"; exit 0; fi
top=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--top-module" ]; then top=$2; fi
  shift
done
touch "$MARKS/$top.started"
other=alpha
[ "$top" = alpha ] && other=beta
i=0
while [ ! -e "$MARKS/$other.started" ]; do
  i=$((i + 1))
  if [ $i -gt 600 ]; then echo "%Error: $top built alone: $other never started" >&2; exit 1; fi
  sleep 0.1
done
mkdir -p obj
printf '#!/bin/sh\necho %s\n' "$top" > "obj/${top}_sim"
chmod +x "obj/${top}_sim"
"#;

#[test]
fn different_models_build_side_by_side() {
    let dir = scratch("rtlsim-side-by-side");
    let marks = dir.join("marks");
    fs::create_dir_all(&marks).expect("marks dir");
    let fake = dir.join("verilator");
    fs::write(
        &fake,
        OVERLAPPING_VERILATOR.replace("$MARKS", &marks.display().to_string()),
    )
    .expect("write stand-in");
    let mut mode = fs::metadata(&fake).expect("stand-in").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    fs::set_permissions(&fake, mode).expect("chmod stand-in");
    let specs: Vec<BuildSpec> = ["alpha", "beta"]
        .into_iter()
        .map(|top| {
            fs::write(
                dir.join(format!("rtl/unit/{top}.sv")),
                format!("module {top};\nendmodule\n"),
            )
            .expect("write source");
            let mut spec = BuildSpec::new(
                top,
                dir.join("rtl"),
                dir.join("inverter_tb.cpp"),
                dir.join("target"),
            )
            .source(format!("unit/{top}.sv"));
            spec.verilator = fake.clone();
            spec
        })
        .collect();
    let outputs: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = specs
            .iter()
            .map(|spec| scope.spawn(|| build(spec)))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                let model = handle
                    .join()
                    .expect("build thread")
                    .unwrap_or_else(|err| panic!("{err}"));
                let out = Command::new(&model.executable)
                    .output()
                    .expect("model runs");
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            })
            .collect()
    });
    assert_eq!(outputs, ["alpha", "beta"]);
}

#[test]
fn a_missing_verilator_names_the_package_to_install() {
    let dir = scratch("rtlsim-no-verilator");
    let mut spec = inverter_spec(&dir, INVERTER);
    spec.verilator = PathBuf::from("hwxdp-test-no-such-verilator");
    let err = build(&spec).expect_err("no such program");
    assert!(
        matches!(
            err,
            RtlError::ToolMissing {
                package: "verilator",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("install the debian package `verilator`"),
        "{err}"
    );
}

#[test]
fn sources_must_exist_and_stay_inside_the_rtl_root() {
    let dir = scratch("rtlsim-bad-sources");
    let spec = inverter_spec(&dir, INVERTER);

    let mut none = spec.clone();
    none.sources.clear();
    assert!(matches!(build(&none), Err(RtlError::NoSources { .. })));

    let escaping = spec.clone().source("../inverter_tb.cpp");
    assert!(matches!(
        build(&escaping),
        Err(RtlError::SourceOutsideRoot { .. })
    ));

    let missing = spec.clone().source("unit/absent.sv");
    let err = build(&missing).expect_err("absent source");
    assert!(err.to_string().contains("absent.sv"), "{err}");
}
