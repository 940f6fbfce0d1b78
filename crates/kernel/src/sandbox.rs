//! A private network namespace for the calling thread, with the interfaces packets claim to arrive on.

use crate::KernelError;
use std::fs::File;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Command;

/// Where `ip` may live when it is not on `PATH` (root's `PATH` usually has `/usr/sbin`, others' may not).
const IP_COMMANDS: [&str; 3] = ["ip", "/usr/sbin/ip", "/sbin/ip"];
/// Link types for the devices, in order of preference: both do nothing with packets. Some kernels (Firecracker's) are
/// built without `dummy`.
const LINK_TYPES: [&str; 2] = ["dummy", "ifb"];
/// The loopback device every new network namespace has.
const LOOPBACK_IFINDEX: u32 = 1;

/// The calling thread inside a fresh network namespace holding dummy interfaces with chosen ifindexes and queue
/// counts.
///
/// `BPF_PROG_TEST_RUN` resolves `xdp_md.ingress_ifindex` in the caller's network namespace and rejects an
/// `rx_queue_index` at or beyond the device's receive queues; `DEVMAP` updates resolve ifindexes there too. The
/// namespace belongs to the thread that entered it (so this type is not `Send`); dropping the sandbox returns the
/// thread to its previous namespace, and the namespace and its devices vanish with their last user.
#[derive(Debug)]
pub struct Sandbox {
    original: OwnedFd,
    devices: Vec<(u32, u32)>,
    _per_thread: PhantomData<*const ()>,
}

impl Sandbox {
    /// Moves the calling thread into a new network namespace and creates there, for each `(ifindex, rx_queues)`, a
    /// device `hwxdp<ifindex>` with that ifindex and that many receive and transmit queues, set up: a `dummy`, or an
    /// `ifb` when the kernel has no `dummy` driver. Ifindex 1 is the namespace's own loopback device, which has one
    /// queue.
    pub fn enter(devices: &[(u32, u32)]) -> Result<Sandbox, KernelError> {
        for &(ifindex, queues) in devices {
            if ifindex == 0 || queues == 0 {
                return Err(sandbox_error(
                    format!("device {ifindex}"),
                    format!("ifindex {ifindex} with {queues} queues: both must be at least 1"),
                ));
            }
            if ifindex == LOOPBACK_IFINDEX && queues != 1 {
                return Err(sandbox_error(
                    "device 1",
                    format!("ifindex 1 is the loopback device, which has 1 queue, not {queues}"),
                ));
            }
        }
        let original = File::open("/proc/thread-self/ns/net")
            .map_err(|e| sandbox_error("open /proc/thread-self/ns/net", e.to_string()))?;
        // SAFETY: unshare has no memory effects; CLONE_NEWNET only changes this thread's network namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(sandbox_error(
                "unshare(CLONE_NEWNET)",
                std::io::Error::last_os_error().to_string().to_lowercase(),
            ));
        }
        // From here on, dropping the sandbox puts the thread back where it was, whatever fails next.
        let sandbox = Sandbox {
            original: original.into(),
            devices: devices.to_vec(),
            _per_thread: PhantomData,
        };
        run_ip(&["link", "set", "lo", "up"])?;
        for &(ifindex, queues) in devices {
            if ifindex == LOOPBACK_IFINDEX {
                continue;
            }
            let name = format!("hwxdp{ifindex}");
            let (index, queues) = (ifindex.to_string(), queues.to_string());
            add_device(&name, &index, &queues)?;
            run_ip(&["link", "set", &name, "up"])?;
        }
        Ok(sandbox)
    }

    /// The `(ifindex, rx_queues)` pairs the sandbox was made with.
    pub fn devices(&self) -> &[(u32, u32)] {
        &self.devices
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // SAFETY: `original` is an open namespace fd owned by self. If setns fails the thread stays in the sandbox,
        // which has no effect on other threads; drop cannot report it.
        unsafe {
            libc::setns(self.original.as_raw_fd(), libc::CLONE_NEWNET);
        }
    }
}

/// Adds the device with the first link type the kernel knows.
fn add_device(name: &str, index: &str, queues: &str) -> Result<(), KernelError> {
    let mut last_error = None;
    for link_type in LINK_TYPES {
        let args = [
            "link",
            "add",
            "name",
            name,
            "index",
            index,
            "numrxqueues",
            queues,
            "numtxqueues",
            queues,
            "type",
            link_type,
        ];
        match run_ip(&args) {
            Ok(()) => return Ok(()),
            Err(KernelError::Sandbox { step, message })
                if message.contains("Unknown device type") =>
            {
                last_error = Some(KernelError::Sandbox { step, message });
            }
            Err(e) => return Err(e),
        }
    }
    Err(last_error
        .unwrap_or_else(|| sandbox_error(format!("device {name}"), "no link type to try")))
}

pub(crate) fn sandbox_error(step: impl Into<String>, message: impl Into<String>) -> KernelError {
    KernelError::Sandbox {
        step: step.into(),
        message: message.into(),
    }
}

/// Runs `ip args...` as a child of this thread, so that it works in this thread's network namespace.
pub(crate) fn run_ip(args: &[&str]) -> Result<(), KernelError> {
    let step = format!("ip {}", args.join(" "));
    let mut not_found = None;
    for ip in IP_COMMANDS {
        match Command::new(ip).args(args).output() {
            Ok(out) if out.status.success() => return Ok(()),
            Ok(out) => {
                let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
                return Err(sandbox_error(step, format!("{} ({})", stderr, out.status)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => not_found = Some(e),
            Err(e) => return Err(sandbox_error(step, e.to_string())),
        }
    }
    let reason = not_found.map_or_else(String::new, |e| e.to_string());
    Err(sandbox_error(
        step,
        format!("iproute2's ip command not found: {reason}"),
    ))
}
