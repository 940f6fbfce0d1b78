//! Loading an object into the kernel and pairing libbpf's maps and programs with the `ObjectSpec`'s.

use crate::cpu::{pin_to_cpu0, possible_cpus};
use crate::error::errno_text;
use crate::log::{captured_log, captured_tail, failed_part, start_capture};
use crate::KernelError;
use hwxdp_object::{MapKind, MapSpec, ObjectSpec};
use libbpf_rs::libbpf_sys;
use libbpf_rs::{
    AsRawLibbpf, MapCore, Object, ObjectBuilder, OpenObject, ProgramAttachType, ProgramType,
};
use std::os::fd::AsRawFd;
use std::os::fd::{AsFd, OwnedFd};

/// Object name given to libbpf, which prefixes its global-data map names with it (`hwxdp.rodata`).
const OBJECT_NAME: &str = "hwxdp";
/// Longest map name the kernel keeps (`BPF_OBJ_NAME_LEN - 1`); libbpf truncates global-data map names to it.
const MAX_MAP_NAME: usize = 15;

/// One program of the object as loaded in the kernel.
#[derive(Debug)]
pub(crate) struct LoadedProgram {
    /// The program's fd, what `PROG_ARRAY` updates take.
    pub(crate) fd: OwnedFd,
    /// The kernel's program id, what `PROG_ARRAY` lookups return.
    pub(crate) id: u32,
}

/// One object loaded in the running kernel, with one of its XDP programs chosen to run.
///
/// Every XDP program of the object is loaded (tail calls need the siblings); programs of other types are not. Map
/// indices follow [`ObjectSpec::maps`]. Loading pins the calling thread to CPU 0 (see [`KernelProgram::load`]): use a
/// `KernelProgram` from the thread that loaded it.
#[derive(Debug)]
pub struct KernelProgram {
    /// Perf buffers of the PERF_EVENT_ARRAY maps, by map index (dropped before the maps they write into).
    pub(crate) perf: Vec<(usize, crate::perf::PerfReader)>,
    /// Keeps every map and program of the object alive, including maps the spec does not list (`.kconfig`, ...).
    _object: Object,
    pub(crate) specs: Vec<MapSpec>,
    /// Map fds by spec map index.
    pub(crate) maps: Vec<OwnedFd>,
    /// Loaded programs by spec program index; `None` for programs that are not XDP.
    pub(crate) programs: Vec<Option<LoadedProgram>>,
    /// Spec index of the program [`KernelProgram::test_run`] runs.
    pub(crate) chosen: usize,
    /// Function name of the chosen program.
    pub(crate) chosen_name: String,
    pub(crate) possible_cpus: usize,
}

impl KernelProgram {
    /// Opens `elf` with libbpf, loads every XDP program of it, and chooses `program` (a function name, or a section
    /// name, as [`ObjectSpec::program`] resolves it) to run.
    ///
    /// Pins the calling thread to CPU 0 first, so that the program under `BPF_PROG_TEST_RUN` and userspace map
    /// updates touch per-CPU maps and LRU lists on CPU 0 only, as the reference machine models them.
    pub fn load(
        elf: &[u8],
        spec: &ObjectSpec,
        program: &str,
    ) -> Result<KernelProgram, KernelError> {
        Self::load_with_globals(elf, spec, program, &[])
    }

    /// [`KernelProgram::load`], with the initial values of global-data maps (by spec map index) replaced before load.
    /// libbpf freezes `.rodata` at load, so this is the only way to set read-only globals.
    pub fn load_with_globals(
        elf: &[u8],
        spec: &ObjectSpec,
        program: &str,
        globals: &[(usize, &[u8])],
    ) -> Result<KernelProgram, KernelError> {
        pin_to_cpu0()?;
        let possible_cpus = possible_cpus()?;
        let xdp_in_spec: Vec<String> = spec.programs.iter().map(|p| p.name.clone()).collect();
        let chosen = spec
            .program(Some(program))
            .and_then(|p| spec.programs.iter().position(|q| q.name == p.name))
            .ok_or_else(|| KernelError::ProgramNotFound {
                name: program.to_string(),
                available: xdp_in_spec.clone(),
            })?;

        start_capture();
        let mut open = ObjectBuilder::default()
            .name(OBJECT_NAME)
            .and_then(|b| b.open_memory(elf))
            .map_err(|e| KernelError::Open {
                message: e.to_string(),
                log: captured_tail(),
            })?;
        let xdp_names = select_xdp_programs(&mut open);
        unpin_maps(&mut open);
        let chosen_name = &spec.programs[chosen].name;
        if !xdp_names.contains(chosen_name) {
            return Err(KernelError::ProgramNotFound {
                name: program.to_string(),
                available: xdp_names,
            });
        }
        set_globals(&mut open, spec, globals)?;
        let object = open.load().map_err(|e| KernelError::Load {
            what: failed_part(),
            reason: reason_of(&e),
            log: captured_tail(),
            verifier_log: captured_log(),
        })?;

        let maps = spec
            .maps
            .iter()
            .map(|m| find_map(&object, m))
            .collect::<Result<Vec<_>, _>>()?;
        let programs = spec
            .programs
            .iter()
            .map(|p| find_program(&object, &p.name))
            .collect::<Result<Vec<_>, _>>()?;
        let perf = crate::perf::open_all(&spec.maps, &maps)?;
        Ok(KernelProgram {
            perf,
            _object: object,
            specs: spec.maps.clone(),
            maps,
            programs,
            chosen,
            chosen_name: chosen_name.clone(),
            possible_cpus,
        })
    }

    /// Function name of the program [`KernelProgram::test_run`] runs.
    pub fn chosen_name(&self) -> &str {
        &self.chosen_name
    }

    /// The fd of the program [`KernelProgram::test_run`] runs.
    pub(crate) fn chosen_fd(&self) -> Result<&OwnedFd, KernelError> {
        self.programs
            .get(self.chosen)
            .and_then(Option::as_ref)
            .map(|p| &p.fd)
            .ok_or_else(|| KernelError::BadMap {
                index: self.chosen,
                reason: "chosen program is not loaded".to_string(),
            })
    }
}

/// A libbpf-rs error as `<errno text> (errno N)`: libbpf-rs only shows the errno inside its message (`... (os error
/// 13)`).
fn reason_of(error: &libbpf_rs::Error) -> String {
    let message = error.to_string();
    let errno = message
        .rsplit_once("(os error ")
        .and_then(|(_, rest)| rest.split(')').next())
        .and_then(|n| n.parse::<i32>().ok());
    match errno {
        Some(errno) => format!("{} (errno {errno})", errno_text(errno)),
        None => message.to_lowercase(),
    }
}

/// Turns autoload on for the XDP programs and off for the others; returns the XDP programs' names.
///
/// Old objects (the kernel's own samples among them) name their sections `xdp1`, `xdp_icmp` and the like, which libbpf
/// 1.x no longer maps to a program type: any section starting with `xdp` is taken as XDP, as older loaders did.
fn select_xdp_programs(open: &mut OpenObject) -> Vec<String> {
    let mut names = Vec::new();
    for mut prog in open.progs_mut() {
        let legacy_xdp = matches!(prog.prog_type(), ProgramType::Unspec)
            && prog.section().to_string_lossy().starts_with("xdp");
        if legacy_xdp {
            prog.set_prog_type(ProgramType::Xdp);
            prog.set_attach_type(ProgramAttachType::Xdp);
        }
        let xdp = matches!(prog.prog_type(), ProgramType::Xdp);
        prog.set_autoload(xdp);
        if xdp {
            names.push(prog.name().to_string_lossy().into_owned());
        }
    }
    names
}

/// Clears the pin path libbpf gives maps declared with `__uint(pinning, LIBBPF_PIN_BY_NAME)`: libbpf would otherwise
/// reuse a map already pinned under `/sys/fs/bpf` (with whatever an earlier run left in it) and pin new ones there,
/// while every run must start from fresh maps, as the reference machine does, and leave nothing behind.
fn unpin_maps(open: &mut OpenObject) {
    for map in open.maps_mut() {
        // SAFETY: the pointer comes from a live map of the open object; a null path is libbpf's way to unset it, and
        // that call cannot fail.
        unsafe {
            libbpf_sys::bpf_map__set_pin_path(map.as_libbpf_object().as_ptr(), std::ptr::null());
        }
    }
}

/// Replaces the initial values of global-data maps before load.
fn set_globals(
    open: &mut OpenObject,
    spec: &ObjectSpec,
    globals: &[(usize, &[u8])],
) -> Result<(), KernelError> {
    for &(index, bytes) in globals {
        let map_spec = spec.maps.get(index).ok_or_else(|| KernelError::BadMap {
            index,
            reason: format!("the object has {} maps", spec.maps.len()),
        })?;
        if map_spec.kind != MapKind::Global {
            return Err(KernelError::MapMismatch {
                map: map_spec.name.clone(),
                reason: "only global-data maps have an initial value".to_string(),
            });
        }
        let mut open_map = open
            .maps_mut()
            .find(|m| {
                // SAFETY: the pointer comes from a live map of the open object.
                let internal =
                    unsafe { libbpf_sys::bpf_map__is_internal(m.as_libbpf_object().as_ptr()) };
                name_matches(map_spec, &m.name().to_string_lossy(), internal)
            })
            .ok_or_else(|| missing(map_spec))?;
        if bytes.len() != map_spec.value_size as usize {
            return Err(KernelError::MapMismatch {
                map: map_spec.name.clone(),
                reason: format!(
                    "initial value of {} bytes for a section of {} bytes",
                    bytes.len(),
                    map_spec.value_size
                ),
            });
        }
        open_map
            .set_initial_value(bytes)
            .map_err(|e| KernelError::MapMismatch {
                map: map_spec.name.clone(),
                reason: format!("cannot set initial value: {e}"),
            })?;
    }
    Ok(())
}

fn missing(map_spec: &MapSpec) -> KernelError {
    KernelError::MapMismatch {
        map: map_spec.name.clone(),
        reason: "libbpf has no such map in the object".to_string(),
    }
}

/// Whether libbpf's map `name` is the spec's map. User maps keep their symbol name; libbpf names a global-data map
/// after its section, prefixed with the object name for `.data`/`.rodata`/`.bss`, and truncated to 15 characters.
fn name_matches(spec: &MapSpec, name: &str, internal: bool) -> bool {
    if spec.kind != MapKind::Global {
        return !internal && name == spec.name;
    }
    let section = spec.name.get(..MAX_MAP_NAME).unwrap_or(&spec.name);
    internal
        && name
            .strip_suffix(section)
            .is_some_and(|prefix| !prefix.contains('.'))
}

/// The loaded map for `map_spec`, checked against it.
fn find_map(object: &Object, map_spec: &MapSpec) -> Result<OwnedFd, KernelError> {
    let map = object
        .maps()
        .find(|m| {
            // SAFETY: the pointer comes from a live map of the loaded object.
            let internal =
                unsafe { libbpf_sys::bpf_map__is_internal(m.as_libbpf_object().as_ptr()) };
            name_matches(map_spec, &m.name().to_string_lossy(), internal)
        })
        .ok_or_else(|| missing(map_spec))?;
    // SAFETY: the pointer comes from a live map of the loaded object.
    let map_type = unsafe { libbpf_sys::bpf_map__type(map.as_libbpf_object().as_ptr()) };
    let found = (map_type, map.key_size(), map.value_size());
    let expected = (map_spec.map_type, map_spec.key_size, map_spec.value_size);
    if found != expected {
        return Err(KernelError::MapMismatch {
            map: map_spec.name.clone(),
            reason: format!(
                "libbpf has type {} key {} value {}, the spec type {} key {} value {}",
                hwxdp_ebpf::map_type_label(found.0),
                found.1,
                found.2,
                hwxdp_ebpf::map_type_label(expected.0),
                expected.1,
                expected.2
            ),
        });
    }
    map.as_fd()
        .try_clone_to_owned()
        .map_err(|e| KernelError::Syscall {
            op: format!("dup of map {} fd", map_spec.name),
            errno: e.raw_os_error().unwrap_or(0),
        })
}

/// The loaded program called `name`, or `None` when libbpf did not load it (not XDP).
fn find_program(object: &Object, name: &str) -> Result<Option<LoadedProgram>, KernelError> {
    let Some(prog) = object
        .progs()
        .find(|p| p.name().to_string_lossy() == name && p.autoload())
    else {
        return Ok(None);
    };
    let fd = prog
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| KernelError::Syscall {
            op: format!("dup of program {name} fd"),
            errno: e.raw_os_error().unwrap_or(0),
        })?;
    let id = program_id(&fd).map_err(|errno| KernelError::Syscall {
        op: format!("BPF_OBJ_GET_INFO_BY_FD of program {name}"),
        errno,
    })?;
    Ok(Some(LoadedProgram { fd, id }))
}

/// The kernel's id of the program behind `fd`, or the positive errno.
fn program_id(fd: &OwnedFd) -> Result<u32, i32> {
    // SAFETY: bpf_prog_info is plain data; zeroed asks the kernel for nothing but the fixed fields, and the pointers
    // passed are to live locals of the sizes given.
    unsafe {
        let mut info: libbpf_sys::bpf_prog_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libbpf_sys::bpf_prog_info>() as u32;
        let rc = libbpf_sys::bpf_prog_get_info_by_fd(fd.as_raw_fd(), &mut info, &mut len);
        if rc < 0 {
            return Err(-rc);
        }
        Ok(info.id)
    }
}
