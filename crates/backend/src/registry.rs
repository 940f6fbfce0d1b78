//! `--backend NAME` to a constructor: one line per backend.

use crate::{Backend, BackendError, Setup};

/// A registered backend.
pub struct Entry {
    /// The name `--backend` takes.
    pub name: &'static str,
    /// One line for `--help`.
    pub about: &'static str,
    /// The options of [`crate::Options`] it takes, as spelled on the command line (`--lanes`, ...).
    pub options: &'static [&'static str],
    /// Whether it needs the running kernel (root and the `bpf()` syscall).
    pub needs_kernel: bool,
    /// Whether it runs the whole trace as one batch (so it reads ring buffers only after the trace).
    pub whole_trace: bool,
    /// Creates it.
    pub create: fn(&Setup) -> Result<Box<dyn Backend>, BackendError>,
}

/// Every backend, in the order reports list them.
pub const REGISTRY: &[Entry] = &[
    crate::kernel::ENTRY,
    crate::interp::ENTRY,
    crate::hxdp::MODEL,
    crate::hxdp::RTL,
    crate::ehdl::RTL,
    crate::warp::ENTRY,
    crate::warp::INTERP,
    crate::warp::RTL,
    crate::ebpflow::ENTRY,
    crate::ebpflow_rtl::ENTRY,
];

/// The backend called `name`.
pub fn find(name: &str) -> Result<&'static Entry, BackendError> {
    REGISTRY
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| BackendError::Unknown {
            name: name.to_string(),
            known: names().join(", "),
        })
}

/// Every registered name.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// `--help` text listing the backends, one a line.
pub fn help() -> String {
    let width = REGISTRY.iter().map(|e| e.name.len()).max().unwrap_or(0);
    REGISTRY
        .iter()
        .map(|e| format!("  {:width$}  {}", e.name, e.about))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Refuses each option in `given` (as spelled on the command line) that none of `chosen` takes.
pub fn check_options(
    chosen: &[&'static Entry],
    given: &[&'static str],
) -> Result<(), BackendError> {
    for &option in given {
        if chosen.iter().any(|e| e.options.contains(&option)) {
            continue;
        }
        let owners: Vec<&str> = REGISTRY
            .iter()
            .filter(|e| e.options.contains(&option))
            .map(|e| e.name)
            .collect();
        let chosen: Vec<&str> = chosen.iter().map(|e| e.name).collect();
        return Err(BackendError::Option {
            option,
            owners: owners.join(" or "),
            chosen: chosen.join(", "),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backend_of_the_architecture_is_registered_once() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names,
            [
                "ebpflow",
                "ebpflow-rtl",
                "ehdl-rtl",
                "hxdp",
                "hxdp-rtl",
                "interp",
                "kernel",
                "warp",
                "warp-interp",
                "warp-rtl"
            ]
        );
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = find("fpga").err().expect("no such backend").to_string();
        assert!(err.contains("\"fpga\""), "{err}");
        assert!(err.contains("interp") && err.contains("ehdl-rtl"), "{err}");
    }

    #[test]
    fn an_option_no_chosen_backend_takes_is_refused_naming_its_owners() {
        let interp = find("interp").unwrap();
        let err = check_options(&[interp], &["--lanes"])
            .expect_err("interp has no lanes")
            .to_string();
        assert_eq!(
            err,
            "--lanes is an option of --backend hxdp or hxdp-rtl, not of interp"
        );
        check_options(&[interp, find("hxdp").unwrap()], &["--lanes"]).expect("hxdp takes it");
        check_options(&[find("ehdl-rtl").unwrap()], &["--data-width", "--hazards"])
            .expect("ehdl-rtl");
    }
}
