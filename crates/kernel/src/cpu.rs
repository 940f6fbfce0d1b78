//! CPUs: how many the kernel sizes per-CPU values for, and pinning to CPU 0.

use crate::KernelError;

const POSSIBLE: &str = "/sys/devices/system/cpu/possible";

/// Number of possible CPUs, from `/sys/devices/system/cpu/possible` (e.g. `0-3` or `0,2-5`): the number of values a
/// per-CPU map shows to userspace.
pub fn possible_cpus() -> Result<usize, KernelError> {
    let text = std::fs::read_to_string(POSSIBLE).map_err(|e| KernelError::Unavailable {
        reason: format!("cannot read {POSSIBLE}: {e}"),
    })?;
    parse_cpu_list(text.trim()).ok_or_else(|| KernelError::Unavailable {
        reason: format!("{POSSIBLE} holds {:?}, not a cpu list", text.trim()),
    })
}

/// Counts the CPUs of a kernel cpu list such as `0-3,6`.
fn parse_cpu_list(list: &str) -> Option<usize> {
    let mut count = 0usize;
    for range in list.split(',') {
        let (first, last) = match range.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
            None => {
                let cpu = range.parse::<usize>().ok()?;
                (cpu, cpu)
            }
        };
        count = count.checked_add(last.checked_sub(first)?.checked_add(1)?)?;
    }
    (count > 0).then_some(count)
}

/// Pins the calling thread to CPU 0.
///
/// Per-CPU maps and the LRU maps' per-CPU free lists are then touched on CPU 0 only, by the program under
/// `BPF_PROG_TEST_RUN` (which runs on the caller's CPU) and by userspace updates alike, so that what the kernel shows
/// is deterministic and comparable with the reference machine.
pub(crate) fn pin_to_cpu0() -> Result<(), KernelError> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set, and the pointer passed is to a live local.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(KernelError::last_os("sched_setaffinity to cpu 0"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_cpu_list;

    #[test]
    fn cpu_lists_count_every_range() {
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-3"), Some(4));
        assert_eq!(parse_cpu_list("0,2-5"), Some(5));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("x"), None);
    }
}
