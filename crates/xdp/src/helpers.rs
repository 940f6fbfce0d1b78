//! Kernel helper functions, by the kernel's helper ids, with the kernel's semantics and return values.

use crate::exec::{Vm, MAX_TAIL_CALLS};
use crate::fault::FaultKind;
use crate::machine::{Clock, Environment};
use crate::region::{self, Region};
use crate::{fib, printk, Verdict};
use hwxdp_maps::MapStore;

/// The helpers the reference machine implements, by kernel id ([`hwxdp_ebpf::abi::HELPER_NAMES`] names them).
pub const HELPERS: &[i32] = &[
    1, 2, 3, 5, 6, 7, 8, 12, 23, 25, 28, 44, 51, 54, 65, 69, 93, 94, 130, 131, 132, 133, 188, 189,
    190,
];

/// The conformance suite's "unwind" helper.
pub const UNWIND: i32 = 5;

/// The one runtime function (a `call` with src 2, by BTF id) of the conformance environment: the suite's
/// `call_runtime` test calls it and expects 0 back. RFC 9669 leaves runtime functions to the platform; this is the
/// plugin's platform, and the XDP environment has none (the kernel's kfuncs are refused when loading).
pub const CONFORMANCE_RUNTIME_FUNCTION: i64 = 42;

/// The name of a helper the machine implements in `environment`.
pub fn helper_in(environment: Environment, id: i32) -> Option<&'static str> {
    match environment {
        Environment::Xdp => helper_name(id),
        Environment::Conformance => (id == UNWIND).then_some("unwind"),
    }
}

/// The kernel's name of an XDP helper the machine implements (`None` for any other id).
pub fn helper_name(id: i32) -> Option<&'static str> {
    HELPERS
        .contains(&id)
        .then(|| hwxdp_ebpf::helper_name(id))
        .flatten()
}

const EINVAL: u64 = (-22i64) as u64;
const EFAULT: u64 = (-14i64) as u64;
const EAGAIN: u64 = (-11i64) as u64;
/// Flags of `bpf_redirect_map` for devmaps: broadcast and exclude-ingress.
const BPF_F_BROADCAST: u64 = 1 << 3;
const BPF_F_EXCLUDE_INGRESS: u64 = 1 << 4;
/// The wake-up flags of ring buffer helpers.
const BPF_RB_NO_WAKEUP: u64 = 1;
const BPF_RB_FORCE_WAKEUP: u64 = 2;
/// `BPF_MAP_TYPE_DEVMAP` and `BPF_MAP_TYPE_DEVMAP_HASH`.
const DEVMAP_TYPES: [u32; 2] = [14, 25];
const REDIRECT_TYPES: [u32; 4] = [14, 25, 16, 17];
const PROG_ARRAY: u32 = 3;
const RINGBUF: u32 = 27;
const PERF_EVENT_ARRAY: u32 = 4;
/// `BPF_MAP_TYPE_ARRAY_OF_MAPS` and `BPF_MAP_TYPE_HASH_OF_MAPS`.
const OUTER_TYPES: [u32; 2] = [12, 13];
/// `BPF_F_INDEX_MASK` and `BPF_F_CTXLEN_MASK` of `bpf_perf_event_output`.
const BPF_F_INDEX_MASK: u64 = 0xffff_ffff;
const BPF_F_CTXLEN_MASK: u64 = 0xf_ffff << 32;

fn fault(helper: &'static str, message: impl Into<String>) -> FaultKind {
    FaultKind::Helper {
        helper,
        message: message.into(),
    }
}

/// Calls helper `id` with the arguments in r1-r5 and returns r0.
pub(crate) fn call(vm: &mut Vm, id: i32) -> Result<u64, FaultKind> {
    let [_, a1, a2, a3, a4, a5, ..] = vm.regs;
    if vm.env.environment == Environment::Conformance {
        if id != UNWIND {
            return Err(fault(
                "conformance",
                format!("helper {id} does not exist in the conformance environment"),
            ));
        }
        vm.unwound = a1 == 0;
        return Ok(a1);
    }
    // Only diagnostics need the name: look it up when one is made, not on every call.
    let name = || hwxdp_ebpf::helper_name(id).unwrap_or("unknown");
    match id {
        1 => {
            let map = map_arg(vm, id, a1, None)?;
            let key = take_arg(vm, 0, a2, vm.maps.specs()[map].key_size as usize)?;
            if OUTER_TYPES.contains(&vm.maps.specs()[map].map_type) {
                // A map of maps gives the inner map itself, which only helpers take.
                let inner = vm.maps.inner_map(map, &key);
                vm.scratch[0] = key;
                return Ok(inner.map_or(0, region::map_handle));
            }
            let found = vm.maps.lookup_slot(map, &key);
            vm.scratch[0] = key;
            Ok(found.map_or(0, |slot| region::map_value(map, slot, 0)))
        }
        2 => {
            let map = map_arg(vm, id, a1, None)?;
            let spec = &vm.maps.specs()[map];
            let (ks, vs) = (spec.key_size as usize, spec.value_size as usize);
            let key = take_arg(vm, 0, a2, ks)?;
            let value = take_arg(vm, 1, a3, vs)?;
            if let Err(e) = vm.maps.check_prog_write(map, &key) {
                return Err(FaultKind::MapMemory {
                    message: e.to_string(),
                });
            }
            let result = vm.maps.prog_update(map, &key, &value, a4);
            *vm.scratch = [key, value];
            Ok(result as u64)
        }
        3 => {
            let map = map_arg(vm, id, a1, None)?;
            let key = take_arg(vm, 0, a2, vm.maps.specs()[map].key_size as usize)?;
            let result = vm.maps.prog_delete(map, &key);
            vm.scratch[0] = key;
            Ok(result as u64)
        }
        5 => Ok(match vm.env.clock {
            Clock::Virtual => vm.env.packet_time.wrapping_add(vm.outcome.insns),
            Clock::Monotonic => monotonic_ns(),
        }),
        6 => {
            let len = a2 as usize;
            let fmt = read_arg(vm, a1, len)?;
            match printk::format(&fmt, &[a3, a4, a5], |addr, out| string_at(vm, addr, out)) {
                Some(line) => {
                    let n = line.len() as u64;
                    vm.outcome.printk.push(line);
                    Ok(n)
                }
                None => Ok(EINVAL),
            }
        }
        7 => {
            // xorshift64*: any fixed generator will do, the kernel's output cannot be matched anyway.
            let mut x = vm.env.rng;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            vm.env.rng = x;
            Ok((x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32 as u64)
        }
        8 => Ok(vm.env.cpu as u64),
        12 => {
            let map = map_arg(vm, id, a2, Some(&[PROG_ARRAY]))?;
            if vm.tail_calls < MAX_TAIL_CALLS {
                if let Some(prog) = vm.maps.prog_array_get(map, a3 as u32) {
                    let prog = prog as usize;
                    if vm.program_ok(prog) {
                        vm.tail_calls += 1;
                        vm.tail_call_to = Some(prog);
                        vm.regs[1] = region::context();
                    } else {
                        return Err(fault(
                            name(),
                            format!("program {prog} in the program array cannot run"),
                        ));
                    }
                }
            }
            // On failure the kernel falls through without touching r0.
            Ok(vm.regs[0])
        }
        23 => {
            if a2 != 0 {
                return Ok(Verdict::Aborted.retval() as u64);
            }
            vm.outcome.redirect = Some((None, a1 as u32 as u64));
            Ok(Verdict::Redirect.retval() as u64)
        }
        25 => perf_event_output(vm, a2, a3, a4, a5),
        28 => csum_diff(vm, a1, a2, a3, a4, a5),
        44 => Ok(vm.buff.adjust_head(a2 as i32 as i64) as u64),
        51 => {
            let map = map_arg(vm, id, a1, Some(&REDIRECT_TYPES))?;
            let action_mask = 3;
            let map_flags = if DEVMAP_TYPES.contains(&vm.maps.specs()[map].map_type) {
                BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS
            } else {
                0
            };
            if a3 & !(action_mask | map_flags) != 0 {
                return Ok(Verdict::Aborted.retval() as u64);
            }
            let key = a2 as u32;
            if !vm.maps.redirect_lookup(map, key) && a3 & BPF_F_BROADCAST == 0 {
                return Ok(a3 & action_mask);
            }
            vm.outcome.redirect = Some((Some(map), key as u64));
            Ok(Verdict::Redirect.retval() as u64)
        }
        54 => Ok(vm.buff.adjust_meta(a2 as i32 as i64) as u64),
        65 => Ok(vm.buff.adjust_tail(a2 as i32 as i64) as u64),
        69 => {
            let flags = a4 as u32;
            if let Some(err) = fib::check_call(a3 as i32 as i64, flags) {
                return Ok(err as u64);
            }
            if flags & !fib::SUPPORTED_FLAGS != 0 {
                return Err(fault(
                    name(),
                    format!("flags {flags:#x} (SRC, TBID, MARK) are not modelled"),
                ));
            }
            let mut params = [0u8; fib::PARAMS_SIZE];
            vm.read_into(a2, &mut params)?;
            let r = vm.env.routes.lookup(&mut params, flags);
            vm.write_from(a2, &params)?;
            Ok(r as u64)
        }
        93 | 94 => {
            if region::region(a1) != Region::MapValue {
                return Err(fault(
                    name(),
                    format!("lock at {} is not in a map value", region::describe(a1)),
                ));
            }
            vm.bytes(a1, 4, "load")?;
            Ok(0)
        }
        130 => {
            let map = map_arg(vm, id, a1, Some(&[RINGBUF]))?;
            if a4 & !(BPF_RB_NO_WAKEUP | BPF_RB_FORCE_WAKEUP) != 0 {
                return Ok(EINVAL);
            }
            let data = read_arg(vm, a2, a3 as usize)?;
            let r = vm.maps.ringbuf_output(map, &data, a4);
            Ok(if r < 0 { EAGAIN } else { r as u64 })
        }
        131 => {
            let map = map_arg(vm, id, a1, Some(&[RINGBUF]))?;
            Ok(match vm.maps.ringbuf_reserve(map, a2, a3) {
                Some(slot) => region::map_value(map, slot, 0),
                None => 0,
            })
        }
        132 | 133 => {
            if region::region(a1) != Region::MapValue {
                return Err(fault(
                    name(),
                    format!("{} is not a ring buffer record", region::describe(a1)),
                ));
            }
            let (map, slot, off) = region::split_map_value(a1);
            if off != 0 || vm.maps.specs().get(map).map(|m| m.map_type) != Some(RINGBUF) {
                return Err(fault(
                    name(),
                    format!("{} is not a ring buffer record", region::describe(a1)),
                ));
            }
            vm.maps.ringbuf_commit(map, slot, id == 133);
            Ok(0)
        }
        188 => {
            let (_, data, end) = vm.buff.offsets();
            Ok((end - data) as u64)
        }
        189 | 190 => {
            let (off, len) = (a2 as u32 as usize, a4 as u32 as usize);
            if off > 0xffff || len > 0xffff {
                return Ok(EFAULT);
            }
            let (_, data, end) = vm.buff.offsets();
            if off + len > end - data {
                return Ok(EINVAL);
            }
            let at = region::packet(data + off);
            if id == 189 {
                let bytes = read_arg(vm, at, len)?;
                vm.write_from(a3, &bytes)?;
            } else {
                let bytes = read_arg(vm, a3, len)?;
                vm.write_from(at, &bytes)?;
            }
            Ok(0)
        }
        _ => Err(fault(
            name(),
            match hwxdp_ebpf::helper_name(id) {
                Some(_) => "not supported by the reference machine".to_string(),
                None => format!("the kernel has no helper {id}"),
            },
        )),
    }
}

/// `bpf_xdp_event_output`: a sample of `size` bytes at `data`, then the first `flags & BPF_F_CTXLEN_MASK` bytes of
/// the packet, into the perf event of the CPU `flags & BPF_F_INDEX_MASK` names (`BPF_F_CURRENT_CPU`: this one).
fn perf_event_output(
    vm: &mut Vm,
    map_arg_value: u64,
    flags: u64,
    data: u64,
    size: u64,
) -> Result<u64, FaultKind> {
    let map = map_arg(vm, 25, map_arg_value, Some(&[PERF_EVENT_ARRAY]))?;
    if !vm.env.perf_consumer {
        return Err(fault(
            "bpf_perf_event_output",
            "this backend does not read perf event arrays (their samples would be lost)",
        ));
    }
    if flags & !(BPF_F_CTXLEN_MASK | BPF_F_INDEX_MASK) != 0 {
        return Ok(EINVAL);
    }
    let packet_bytes = ((flags & BPF_F_CTXLEN_MASK) >> 32) as usize;
    let (_, start, end) = vm.buff.offsets();
    if packet_bytes > end - start {
        return Ok(EFAULT);
    }
    let mut sample = read_arg(vm, data, size as usize)?;
    if packet_bytes > 0 {
        sample.extend_from_slice(&read_arg(vm, region::packet(start), packet_bytes)?);
    }
    Ok(vm
        .maps
        .perf_output(map, flags as u32, &sample, packet_bytes) as u64)
}

/// The map index in a map-handle argument, checked against the map types the helper accepts.
fn map_arg(vm: &Vm, id: i32, arg: u64, types: Option<&[u32]>) -> Result<usize, FaultKind> {
    let helper = || hwxdp_ebpf::helper_name(id).unwrap_or("unknown");
    if region::region(arg) != Region::MapHandle {
        return Err(fault(
            helper(),
            format!("{} is not a map", region::describe(arg)),
        ));
    }
    let map = region::offset(arg) as usize;
    let spec = vm
        .maps
        .specs()
        .get(map)
        .ok_or_else(|| fault(helper(), format!("no map {map}")))?;
    if let Some(types) = types {
        if !types.contains(&spec.map_type) {
            return Err(fault(
                helper(),
                format!(
                    "map {} has type {}",
                    spec.name,
                    hwxdp_ebpf::map_type_label(spec.map_type)
                ),
            ));
        }
    }
    Ok(map)
}

/// Reads a helper's buffer argument into the machine's scratch buffer `which` without allocating; the caller puts the
/// buffer back into `vm.scratch[which]` when done with it.
fn take_arg(vm: &mut Vm, which: usize, addr: u64, len: usize) -> Result<Vec<u8>, FaultKind> {
    let mut buf = std::mem::take(&mut vm.scratch[which]);
    buf.clear();
    if len > 0 {
        buf.extend_from_slice(vm.bytes(addr, len, "load")?);
    }
    Ok(buf)
}

fn read_arg(vm: &mut Vm, addr: u64, len: usize) -> Result<Vec<u8>, FaultKind> {
    if len == 0 {
        // Helpers taking a size accept any pointer, NULL included, with size 0.
        return Ok(Vec::new());
    }
    // Bounds first: the size comes from a register and may be anything, the region it names may not.
    Ok(vm.bytes(addr, len, "load")?.to_vec())
}

/// Reads a NUL-terminated string for `%s`, at most `out`'s capacity; unreadable memory gives `None`.
fn string_at(vm: &mut Vm, addr: u64, max: usize) -> Option<String> {
    let mut s = Vec::new();
    for i in 0..max as u64 {
        let b = vm.load(addr.wrapping_add(i), 1).ok()? as u8;
        if b == 0 {
            break;
        }
        s.push(b);
    }
    Some(String::from_utf8_lossy(&s).into_owned())
}

/// `bpf_csum_diff` as kernels since 6.12 compute it on every architecture: `csum_partial` of `to` (seeded), minus
/// `csum_partial` of `from`, folded to 16 bits. The fold matters: programs that fold the result only once would
/// otherwise see a carry the kernel never hands them.
fn csum_diff(
    vm: &mut Vm,
    from: u64,
    from_size: u64,
    to: u64,
    to_size: u64,
    seed: u64,
) -> Result<u64, FaultKind> {
    let (from_size, to_size) = (from_size as u32 as usize, to_size as u32 as usize);
    if (from_size | to_size) & 3 != 0 || from_size + to_size > 512 {
        return Ok(EINVAL);
    }
    let words = |bytes: Vec<u8>| -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    };
    let from_words = words(read_arg(vm, from, from_size)?);
    let to_words = words(read_arg(vm, to, to_size)?);
    let seed = seed as u32;
    let sum = match (from_size, to_size) {
        (0, 0) => seed,
        (0, _) => csum_partial(&to_words, seed),
        (_, 0) => !csum_partial(&from_words, !seed),
        _ => csum_add(csum_partial(&to_words, seed), !csum_partial(&from_words, 0)),
    };
    Ok(csum_fold16(sum) as u64)
}

/// One's complement addition of two 32-bit partial sums.
fn csum_add(a: u32, b: u32) -> u32 {
    let (s, carry) = a.overflowing_add(b);
    s + carry as u32
}

/// `csum_from32to16`: folds a 32-bit partial sum to 16 bits with the end-around carry.
fn csum_fold16(sum: u32) -> u16 {
    (sum.wrapping_add(sum.rotate_right(16)) >> 16) as u16
}

/// x86-64 `csum_partial` over 32-bit words: a 64-bit end-around-carry sum folded to 32 bits.
pub fn csum_partial(words: &[u32], seed: u32) -> u32 {
    let mut sum: u64 = seed as u64;
    for pair in words.chunks(2) {
        let lo = pair[0] as u64;
        let hi = pair.get(1).copied().unwrap_or(0) as u64;
        let (s, carry) = sum.overflowing_add(hi << 32 | lo);
        sum = s + carry as u64;
    }
    csum_add((sum >> 32) as u32, sum as u32)
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csum_partial_folds_like_x86() {
        assert_eq!(csum_partial(&[], 0x1234), 0x1234);
        assert_eq!(csum_partial(&[0xffff_ffff, 1], 0), 1);
        assert_eq!(csum_partial(&[1, 0xffff_fffe], 0), 0xffff_ffff);
        assert_eq!(
            csum_partial(&[0x8000_0000, 0x8000_0000, 0x8000_0000], 0),
            0x8000_0001
        );
    }
}
