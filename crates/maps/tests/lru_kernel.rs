//! LRU eviction compared with the running kernel: the same updates and deletes, issued from the same CPUs, must leave
//! the same survivors and return the same errors. Userspace updates do not set reference bits, so these scenarios
//! exercise the lists, local free/pending lists, batch shrinking, stealing and the per-CPU LRU.

mod common;

use common::kernel::{pin_to_cpu, KernelMap};
use common::spec;
use hwxdp_maps::abi::{map_flags, map_type};
use hwxdp_maps::{MapStore, Maps};

#[derive(Clone, Copy, Debug)]
enum Op {
    Update { cpu: usize, key: u32, flags: u64 },
    Delete { cpu: usize, key: u32 },
}

/// Runs `ops` on a kernel map and on the model; compares every result and the survivors after every op.
fn compare(map_type: u32, max_entries: u32, flags: u32, ops: &[Op]) {
    let value_size = 8u32;
    let cpus = 2;
    let kernel = KernelMap::create(map_type, 4, value_size, max_entries, flags);
    let mut model = Maps::new(
        &[spec("lru", map_type, 4, value_size, max_entries, flags)],
        cpus,
    )
    .expect("model");
    let percpu = map_type == map_type::LRU_PERCPU_HASH;
    let syscall_value = if percpu { 8 * cpus } else { 8 };
    for (step, op) in ops.iter().enumerate() {
        let (kr, mr) = match *op {
            Op::Update { cpu, key, flags } => {
                let value = vec![key as u8; syscall_value];
                pin_to_cpu(cpu);
                model.set_cpu(cpu);
                let kr = kernel.update(&key.to_le_bytes(), &value, flags);
                let mr = model
                    .update(0, &key.to_le_bytes(), &value, flags)
                    .map_err(|e| e.errno);
                (kr, mr)
            }
            Op::Delete { cpu, key } => {
                pin_to_cpu(cpu);
                model.set_cpu(cpu);
                (
                    kernel.delete(&key.to_le_bytes()),
                    model.delete(0, &key.to_le_bytes()).map_err(|e| e.errno),
                )
            }
        };
        assert_eq!(mr, kr, "step {step} {op:?}: result differs from the kernel");
        let model_keys: Vec<Vec<u8>> = model
            .entries(0)
            .expect("entries")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            model_keys,
            kernel.keys(),
            "step {step} {op:?}: survivors differ from the kernel"
        );
    }
}

fn inserts(cpu_of: impl Fn(u32) -> usize, keys: std::ops::Range<u32>) -> Vec<Op> {
    keys.map(|key| Op::Update {
        cpu: cpu_of(key),
        key,
        flags: 0,
    })
    .collect()
}

#[test]
fn lru_hash_twice_max_entries_on_one_cpu() {
    compare(map_type::LRU_HASH, 8, 0, &inserts(|_| 0, 0..16));
    compare(map_type::LRU_HASH, 64, 0, &inserts(|_| 1, 0..128));
}

#[test]
fn lru_hash_inserts_alternating_cpus_steal_from_each_other() {
    compare(
        map_type::LRU_HASH,
        16,
        0,
        &inserts(|k| (k % 2) as usize, 0..48),
    );
    compare(
        map_type::LRU_HASH,
        5,
        0,
        &inserts(|k| (k / 3 % 2) as usize, 0..30),
    );
}

#[test]
fn lru_hash_replacing_values_pops_a_node_first() {
    let mut ops = Vec::new();
    for key in 0..40u32 {
        ops.push(Op::Update {
            cpu: 0,
            key,
            flags: 0,
        });
        if key % 3 == 0 {
            ops.push(Op::Update {
                cpu: (key % 2) as usize,
                key: key / 2,
                flags: 0,
            });
        }
        if key % 5 == 0 {
            ops.push(Op::Update {
                cpu: 1,
                key: key / 3,
                flags: 1,
            });
            ops.push(Op::Update {
                cpu: 0,
                key: key + 1000,
                flags: 2,
            });
        }
    }
    compare(map_type::LRU_HASH, 12, 0, &ops);
}

#[test]
fn lru_hash_deletes_return_nodes_to_the_right_lists() {
    let mut ops = Vec::new();
    for key in 0..60u32 {
        ops.push(Op::Update {
            cpu: (key % 2) as usize,
            key,
            flags: 0,
        });
        if key % 4 == 3 {
            ops.push(Op::Delete {
                cpu: 0,
                key: key - 2,
            });
            ops.push(Op::Delete {
                cpu: 1,
                key: key / 2,
            });
        }
    }
    compare(map_type::LRU_HASH, 10, 0, &ops);
}

#[test]
fn lru_percpu_hash_evicts_like_the_kernel() {
    let mut ops = inserts(|k| (k % 2) as usize, 0..40);
    ops.push(Op::Update {
        cpu: 0,
        key: 39,
        flags: 2,
    });
    ops.push(Op::Update {
        cpu: 1,
        key: 38,
        flags: 1,
    });
    ops.extend(inserts(|_| 1, 100..120));
    compare(map_type::LRU_PERCPU_HASH, 16, 0, &ops);
}

#[test]
fn per_cpu_lru_lists_are_independent_and_round_max_entries() {
    compare(
        map_type::LRU_HASH,
        15,
        map_flags::NO_COMMON_LRU,
        &inserts(|k| (k % 3 % 2) as usize, 0..60),
    );
    let mut ops = inserts(|_| 0, 0..20);
    ops.extend(inserts(|_| 1, 20..50));
    ops.push(Op::Delete { cpu: 0, key: 45 });
    ops.extend(inserts(|_| 0, 50..55));
    compare(map_type::LRU_PERCPU_HASH, 8, map_flags::NO_COMMON_LRU, &ops);
}

#[test]
fn long_pseudo_random_workload_matches_the_kernel() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut ops = Vec::new();
    for _ in 0..1500 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let cpu = (x >> 40) as usize % 2;
        let key = (x % 300) as u32;
        ops.push(match (x >> 20) % 10 {
            0 => Op::Delete { cpu, key },
            1 => Op::Update { cpu, key, flags: 1 },
            2 => Op::Update { cpu, key, flags: 2 },
            _ => Op::Update { cpu, key, flags: 0 },
        });
    }
    compare(map_type::LRU_HASH, 100, 0, &ops);
    compare(map_type::LRU_HASH, 100, map_flags::NO_COMMON_LRU, &ops);
}
