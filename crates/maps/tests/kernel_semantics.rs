//! Creation checks and errno results of every map type, table-driven: each row states the expected result, and the
//! running kernel must agree with both the row and the model.

mod common;

use common::kernel::{pin_to_cpu, KernelMap};
use common::spec;
use hwxdp_maps::abi::{errno::*, map_flags as mf, map_type as mt};
use hwxdp_maps::{MapStore, Maps};

fn model_create(t: u32, ks: u32, vs: u32, max: u32, flags: u32) -> Result<Maps, i32> {
    Maps::new(&[spec("m", t, ks, vs, max, flags)], 2).map_err(|e| e.errno)
}

#[test]
fn creation_checks_match_the_kernel() {
    const PAGE: u32 = 4096;
    #[rustfmt::skip]
    let rows: &[(u32, u32, u32, u32, u32, i32)] = &[
        // type, key, value, max_entries, flags, expected errno (0 = created)
        (mt::ARRAY, 4, 8, 16, 0, 0),
        (mt::ARRAY, 8, 8, 16, 0, EINVAL),
        (mt::ARRAY, 4, 0, 16, 0, EINVAL),
        (mt::ARRAY, 4, 8, 0, 0, EINVAL),
        (mt::ARRAY, 4, 8, 16, mf::NO_PREALLOC, EINVAL),
        (mt::ARRAY, 4, 8, 16, mf::MMAPABLE, 0),
        (mt::ARRAY, 4, 8, 16, mf::RDONLY_PROG | mf::WRONLY_PROG, EINVAL),
        (mt::ARRAY, 4, 8, 16, mf::RDONLY | mf::WRONLY, EINVAL),
        (mt::PERCPU_ARRAY, 4, 8, 16, mf::MMAPABLE, EINVAL),
        (mt::PERCPU_ARRAY, 4, 40000, 4, 0, E2BIG),
        (mt::HASH, 4, 8, 16, 0, 0),
        (mt::HASH, 0, 8, 16, 0, EINVAL),
        (mt::HASH, 4, 8, 16, mf::NO_COMMON_LRU, EINVAL),
        (mt::HASH, 4, 8, 16, mf::MMAPABLE, EINVAL),
        (mt::PERCPU_HASH, 4, 8, 16, mf::NO_PREALLOC, 0),
        (mt::LRU_HASH, 4, 8, 16, mf::NO_PREALLOC, ENOTSUPP),
        (mt::LRU_PERCPU_HASH, 4, 8, 16, mf::NO_COMMON_LRU, 0),
        (mt::LPM_TRIE, 8, 8, 16, mf::NO_PREALLOC, 0),
        (mt::LPM_TRIE, 8, 8, 16, 0, EINVAL),
        (mt::LPM_TRIE, 4, 8, 16, mf::NO_PREALLOC, EINVAL),
        (mt::LPM_TRIE, 261, 8, 16, mf::NO_PREALLOC, EINVAL),
        (mt::LPM_TRIE, 260, 8, 16, mf::NO_PREALLOC, 0),
        (mt::PROG_ARRAY, 4, 4, 8, 0, 0),
        (mt::PROG_ARRAY, 4, 8, 8, 0, EINVAL),
        (mt::PROG_ARRAY, 4, 4, 8, mf::RDONLY_PROG, EINVAL),
        (mt::DEVMAP, 4, 4, 8, 0, 0),
        (mt::DEVMAP, 4, 8, 8, 0, 0),
        (mt::DEVMAP, 4, 6, 8, 0, EINVAL),
        (mt::DEVMAP_HASH, 4, 8, 8, mf::NO_PREALLOC, EINVAL),
        (mt::CPUMAP, 4, 4, 2, 0, 0),
        (mt::CPUMAP, 8, 4, 2, 0, EINVAL),
        (mt::XSKMAP, 4, 4, 4, 0, 0),
        (mt::XSKMAP, 4, 8, 4, 0, EINVAL),
        (mt::RINGBUF, 0, 0, PAGE, 0, 0),
        (mt::RINGBUF, 0, 0, 4 * PAGE, 0, 0),
        (mt::RINGBUF, 0, 0, 3 * PAGE, 0, EINVAL),
        (mt::RINGBUF, 0, 0, 2048, 0, EINVAL),
        (mt::RINGBUF, 4, 0, PAGE, 0, EINVAL),
    ];
    for &(t, ks, vs, max, flags, want) in rows {
        let row = format!("type {t} key {ks} value {vs} max {max} flags {flags:#x}");
        let kernel = KernelMap::try_create(t, ks, vs, max, flags)
            .map(|_| 0)
            .unwrap_or_else(|e| e);
        let model = model_create(t, ks, vs, max, flags)
            .map(|_| 0)
            .unwrap_or_else(|e| e);
        assert_eq!(kernel, want, "{row}: kernel");
        assert_eq!(model, want, "{row}: model");
    }
}

#[test]
fn unsupported_map_types_are_refused_by_name() {
    let err = Maps::new(&[spec("socks", 15, 4, 4, 2, 0)], 2).expect_err("sockmap");
    assert_eq!(err.map, "socks");
    assert_eq!(err.errno, EINVAL);
    assert_eq!(
        err.message,
        "map type BPF_MAP_TYPE_SOCKMAP is not supported by hwxdp"
    );
    assert_eq!(
        err.to_string(),
        "map socks: map type BPF_MAP_TYPE_SOCKMAP is not supported by hwxdp"
    );
}

/// One syscall and its expected result: Ok(value read back for lookups) or the errno.
#[derive(Clone, Debug)]
enum Op {
    Update(Vec<u8>, Vec<u8>, u64, i32),
    Delete(Vec<u8>, i32),
    Lookup(Vec<u8>, Result<Vec<u8>, i32>),
}

use Op::*;

fn k4(i: u32) -> Vec<u8> {
    i.to_le_bytes().to_vec()
}

fn val(bytes: &[u8]) -> Vec<u8> {
    bytes.to_vec()
}

/// Runs `ops` on the kernel and the model from CPU 0, checking each against its row; then compares all entries.
fn run(t: u32, ks: u32, vs: u32, max: u32, flags: u32, ops: &[Op]) {
    pin_to_cpu(0);
    let kernel = KernelMap::create(t, ks, vs, max, flags);
    let mut model = model_create(t, ks, vs, max, flags).expect("model map");
    let value_len = if hwxdp_maps::abi::is_percpu(t) {
        vs.div_ceil(8) as usize * 8 * 2
    } else {
        vs as usize
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            Update(key, value, f, want) => {
                let kr = kernel.update(key, value, *f).err().unwrap_or(0);
                let mr = model.update(0, key, value, *f).err().map_or(0, |e| e.errno);
                assert_eq!((kr, mr), (*want, *want), "op {i} {op:?}: (kernel, model)");
            }
            Delete(key, want) => {
                let kr = kernel.delete(key).err().unwrap_or(0);
                let mr = model.delete(0, key).err().map_or(0, |e| e.errno);
                assert_eq!((kr, mr), (*want, *want), "op {i} {op:?}: (kernel, model)");
            }
            Lookup(key, want) => {
                let kr = kernel.lookup(key, value_len);
                let mr = match model.lookup(0, key) {
                    Ok(Some(v)) => Ok(v),
                    Ok(None) => Err(ENOENT),
                    Err(e) => Err(e.errno),
                };
                assert_eq!(&kr, want, "op {i} {op:?}: kernel");
                assert_eq!(&mr, want, "op {i} {op:?}: model");
            }
        }
    }
    let model_entries = model.entries(0).expect("entries");
    let kernel_keys = kernel.keys();
    let model_keys: Vec<Vec<u8>> = model_entries.iter().map(|(k, _)| k.clone()).collect();
    if t != mt::DEVMAP && t != mt::CPUMAP && t != mt::ARRAY && t != mt::PERCPU_ARRAY {
        // Array-like maps list every index through get_next_key; the model lists present entries only.
        assert_eq!(model_keys, kernel_keys, "keys after all ops");
    }
    for (key, value) in &model_entries {
        assert_eq!(
            kernel.lookup(key, value_len).as_ref(),
            Ok(value),
            "value of key {key:?}"
        );
    }
}

#[test]
fn array_errnos() {
    let v8 = val(&[1, 2, 3, 4, 5, 6, 7, 8]);
    run(
        mt::ARRAY,
        4,
        8,
        4,
        0,
        &[
            Update(k4(0), v8.clone(), 0, 0),
            Update(k4(3), v8.clone(), 2, 0),
            Update(k4(4), v8.clone(), 0, E2BIG),
            Update(k4(1), v8.clone(), 1, EEXIST),
            Update(k4(1), v8.clone(), 3, EINVAL),
            Update(k4(1), v8.clone(), 4, EINVAL),
            Update(k4(9), v8.clone(), 8, EINVAL),
            Delete(k4(0), EINVAL),
            Lookup(k4(0), Ok(v8.clone())),
            Lookup(k4(2), Ok(vec![0; 8])),
            Lookup(k4(4), Err(ENOENT)),
        ],
    );
}

#[test]
fn percpu_array_takes_and_shows_every_cpu_padded() {
    let both = val(&[1, 2, 3, 0, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0]);
    run(
        mt::PERCPU_ARRAY,
        4,
        3,
        2,
        0,
        &[
            Update(k4(1), both.clone(), 0, 0),
            Lookup(k4(1), Ok(both.clone())),
            Lookup(k4(0), Ok(vec![0; 16])),
            Update(k4(2), both.clone(), 0, E2BIG),
            Update(k4(0), both.clone(), 1, EEXIST),
            Delete(k4(0), EINVAL),
        ],
    );
}

#[test]
fn hash_errnos_and_full_map() {
    let a = val(&[0xaa; 8]);
    let b = val(&[0xbb; 8]);
    for flags in [0, mf::NO_PREALLOC] {
        run(
            mt::HASH,
            4,
            8,
            2,
            flags,
            &[
                Update(k4(1), a.clone(), 2, ENOENT),
                Update(k4(1), a.clone(), 1, 0),
                Update(k4(1), b.clone(), 1, EEXIST),
                Update(k4(2), a.clone(), 0, 0),
                Update(k4(3), a.clone(), 0, E2BIG),
                Update(k4(3), a.clone(), 1, E2BIG),
                // Replacing a value in a full map still works (the kernel uses a spare element).
                Update(k4(2), b.clone(), 0, 0),
                Update(k4(2), b.clone(), 2, 0),
                Update(k4(2), b.clone(), 3, EINVAL),
                Update(k4(2), b.clone(), 4, EINVAL),
                Delete(k4(7), ENOENT),
                Delete(k4(1), 0),
                Update(k4(3), a.clone(), 0, 0),
                Lookup(k4(2), Ok(b.clone())),
                Lookup(k4(1), Err(ENOENT)),
            ],
        );
    }
}

#[test]
fn percpu_hash_errnos() {
    let v = val(&[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
    run(
        mt::PERCPU_HASH,
        4,
        4,
        1,
        0,
        &[
            Update(k4(5), v.clone(), 0, 0),
            Update(k4(6), v.clone(), 0, E2BIG),
            Update(k4(5), v.clone(), 1, EEXIST),
            Update(k4(5), v.clone(), 4, EINVAL),
            Lookup(k4(5), Ok(v.clone())),
            Delete(k4(5), 0),
            Delete(k4(5), ENOENT),
        ],
    );
}

fn lpm_key(prefixlen: u32, addr: [u8; 4]) -> Vec<u8> {
    let mut k = prefixlen.to_le_bytes().to_vec();
    k.extend_from_slice(&addr);
    k
}

#[test]
fn lpm_trie_longest_match_and_errnos() {
    let v = |x: u8| vec![x, 0, 0, 0];
    run(
        mt::LPM_TRIE,
        8,
        4,
        4,
        mf::NO_PREALLOC,
        &[
            Update(lpm_key(8, [10, 0, 0, 0]), v(1), 0, 0),
            Update(lpm_key(16, [10, 1, 0, 0]), v(2), 0, 0),
            // Bytes beyond the prefix are stored as given.
            Update(lpm_key(24, [10, 1, 2, 99]), v(3), 0, 0),
            Update(lpm_key(16, [10, 1, 7, 7]), v(4), 1, EEXIST),
            Update(lpm_key(12, [10, 16, 0, 0]), v(5), 2, ENOENT),
            Update(lpm_key(33, [10, 0, 0, 0]), v(6), 0, EINVAL),
            Update(lpm_key(0, [0, 0, 0, 0]), v(7), 0, 0),
            Update(lpm_key(32, [192, 168, 0, 1]), v(8), 0, ENOSPC),
            // Replacing an existing prefix in a full trie is fine.
            Update(lpm_key(16, [10, 1, 0, 0]), v(9), 2, 0),
            Update(lpm_key(16, [10, 1, 0, 0]), v(9), 4, EINVAL),
            Lookup(lpm_key(32, [10, 1, 2, 3]), Ok(v(3))),
            Lookup(lpm_key(32, [10, 1, 3, 3]), Ok(v(9))),
            Lookup(lpm_key(32, [10, 2, 3, 3]), Ok(v(1))),
            Lookup(lpm_key(32, [11, 2, 3, 3]), Ok(v(7))),
            Lookup(lpm_key(20, [10, 1, 2, 3]), Ok(v(9))),
            Delete(lpm_key(16, [10, 1, 0, 0]), 0),
            Lookup(lpm_key(32, [10, 1, 3, 3]), Ok(v(1))),
            Lookup(lpm_key(32, [10, 1, 2, 3]), Ok(v(3))),
            Delete(lpm_key(16, [10, 1, 0, 0]), ENOENT),
            Delete(lpm_key(20, [10, 1, 2, 0]), ENOENT),
            Delete(lpm_key(40, [10, 1, 2, 0]), EINVAL),
            Delete(lpm_key(0, [0, 0, 0, 0]), 0),
            Lookup(lpm_key(32, [11, 2, 3, 3]), Err(ENOENT)),
            Update(lpm_key(32, [192, 168, 0, 1]), v(8), 0, 0),
            Update(lpm_key(31, [192, 168, 0, 0]), v(10), 0, 0),
            Update(lpm_key(1, [128, 0, 0, 0]), v(11), 0, ENOSPC),
        ],
    );
}

#[test]
fn devmap_cpumap_and_devmap_hash_errnos() {
    let dev = |ifindex: u32, fd: i32| {
        let mut v = ifindex.to_le_bytes().to_vec();
        v.extend_from_slice(&fd.to_le_bytes());
        v
    };
    run(
        mt::DEVMAP,
        4,
        8,
        4,
        0,
        &[
            Update(k4(0), dev(1, -1), 0, 0),
            Lookup(k4(0), Ok(dev(1, 0))),
            Update(k4(1), dev(1, 0), 1, EEXIST),
            Update(k4(4), dev(1, 0), 0, E2BIG),
            Update(k4(1), dev(1, 0), 3, EINVAL),
            Update(k4(1), dev(0, 5), 0, EINVAL),
            Lookup(k4(1), Err(ENOENT)),
            Update(k4(0), dev(0, -1), 0, 0),
            Lookup(k4(0), Err(ENOENT)),
            Delete(k4(2), 0),
            Delete(k4(4), EINVAL),
        ],
    );
    run(
        mt::DEVMAP_HASH,
        4,
        4,
        2,
        0,
        &[
            Update(k4(7), k4(1), 2, 0),
            Update(k4(7), k4(1), 1, EEXIST),
            Update(k4(8), k4(0), 0, EINVAL),
            Update(k4(8), k4(1), 0, 0),
            Update(k4(9), k4(1), 0, E2BIG),
            Delete(k4(9), ENOENT),
            Delete(k4(7), 0),
            Lookup(k4(8), Ok(k4(1))),
        ],
    );
    run(
        mt::CPUMAP,
        4,
        4,
        4,
        0,
        &[
            Update(k4(0), k4(192), 0, 0),
            Lookup(k4(0), Ok(k4(192))),
            Update(k4(1), k4(16385), 0, EOVERFLOW),
            Update(k4(1), k4(64), 1, EEXIST),
            Update(k4(3), k4(64), 0, ENODEV),
            Update(k4(4), k4(64), 0, E2BIG),
            Update(k4(0), k4(0), 0, 0),
            Lookup(k4(0), Err(ENOENT)),
            Delete(k4(5), EINVAL),
        ],
    );
}

#[test]
fn ringbuf_and_xskmap_refuse_userspace_element_access() {
    let mut maps = Maps::new(
        &[
            spec("rb", mt::RINGBUF, 0, 0, 4096, 0),
            spec("xsks", mt::XSKMAP, 4, 4, 4, 0),
        ],
        2,
    )
    .expect("maps");
    assert_eq!(maps.lookup(0, &[]).map_err(|e| e.errno), Err(ENOTSUPP));
    assert_eq!(
        maps.update(0, &[], &[], 0).map_err(|e| e.errno),
        Err(ENOTSUPP)
    );
    assert_eq!(maps.lookup(1, &k4(0)).map_err(|e| e.errno), Err(EOPNOTSUPP));
    assert_eq!(maps.entries(0), Ok(vec![]));
    maps.update(1, &k4(2), &k4(33), 0)
        .expect("socket fd stored");
    assert_eq!(
        maps.update(1, &k4(2), &k4(33), 0).map_err(|e| e.errno),
        Err(EBUSY)
    );
    assert_eq!(
        maps.update(1, &k4(2), &k4(34), 1).map_err(|e| e.errno),
        Err(EEXIST)
    );
    assert_eq!(
        maps.update(1, &k4(3), &k4(34), 2).map_err(|e| e.errno),
        Err(ENOENT)
    );
    assert_eq!(maps.entries(1), Ok(vec![]));
    assert!(maps.redirect_lookup(1, 2));
    assert!(!maps.redirect_lookup(1, 3));
    assert_eq!(maps.delete(1, &k4(9)).map_err(|e| e.errno), Err(EINVAL));
    maps.delete(1, &k4(2)).expect("delete");
    assert!(!maps.redirect_lookup(1, 2));
}
