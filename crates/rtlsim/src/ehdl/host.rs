//! The maps between the reference machine's representation ([`Maps`], the userspace view) and the pipeline's map
//! blocks, through the host port (address layout in docs/ehdl.md, "Ports"):
//!
//! - ARRAY (and DEVMAP) values at byte `index * value_size`;
//! - HASH and LPM_TRIE entries in CAM slots: the key at `0x4000_0000 + slot * stride` (stride: the key size rounded up
//!   to 8, 16, 32 or 64; an LPM key is `{prefixlen, data}` as userspace gives it), the value at `slot * value_size`
//!   and the valid bit at `0x8000_0000 + slot`;
//! - PROG_ARRAY slots as 4-byte words at `index * 4`: 1 + the program's index in the object's program list, 0 for an
//!   empty slot (the pipeline only reads them, so they are not read back);
//! - RINGBUF data at byte `pos mod size`, the producer position at `size` and the consumer position at `size + 8`:
//!   read back, the records between the two are handed over ([`Rings`]) and the next load frees their space.
//!
//! The pipeline is one CPU: a per-CPU map's block holds the copy of the CPU the reference machine runs on
//! (`Config::cpu`); read back, that copy replaces the CPU's in the syscall view and the other CPUs keep what userspace
//! wrote (zero for an entry the program created).

use std::collections::{BTreeMap, BTreeSet};

use hwxdp_maps::abi::{is_percpu, map_type};
use hwxdp_maps::{MapStore, Maps};
use hwxdp_object::MapSpec;

use super::tb::{write_bytes, Dump, HostWrite};
use super::EhdlRtlError;

/// Where a HASH block's keys start in host address space.
const KEYS: u32 = 0x4000_0000;
/// Where its valid bits start.
const VALID: u32 = 0x8000_0000;

/// How a map's block is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Values indexed by the key (ARRAY, PERCPU_ARRAY).
    Array,
    /// Interfaces indexed by the key, nonzero when present (DEVMAP).
    Devmap,
    /// Keys in a CAM, values by slot (HASH, PERCPU_HASH, LPM_TRIE).
    Cam,
    /// Program words by slot, 1 + the program index, 0 when empty (PROG_ARRAY, read by inlined tail calls).
    ProgArray,
    /// A ring of records (RINGBUF), written by `bpf_ringbuf_output`.
    Ring,
}

/// The records the pipeline's ring buffers hold that the host has read back, and how far it has read each ring.
#[derive(Debug, Default)]
pub(super) struct Rings {
    /// Records read back and not handed out yet, oldest first, per map.
    pub(super) records: BTreeMap<u32, Vec<Vec<u8>>>,
    /// Per ring, its data size and the position up to which it has been read (its consumer position for the next
    /// load).
    read: BTreeMap<u32, (u32, u64)>,
}

impl Rings {
    /// The host-port writes that free what has been read and carry each ring over into the next batch: its
    /// consumer position and, because every batch starts a fresh simulation whose producer position is 0, its
    /// producer position too (both where the last batch's records ended).
    pub(super) fn frees(&self) -> Vec<HostWrite> {
        self.read
            .iter()
            .flat_map(|(&map, &(size, pos))| {
                [size, size + 8].map(|addr| HostWrite {
                    map,
                    addr,
                    data: pos,
                    mask: 0xff,
                })
            })
            .collect()
    }

    /// Takes ring `map`'s records from a dump of its data area and positions (`size + 16` bytes), as the kernel's
    /// consumer reads them: from the consumer position to the producer's, each record an 8-byte header (the length
    /// in its low 28 bits) and its data, padded to 8 bytes.
    fn take(&mut self, map: u32, size: u32, dump: &[u8]) -> Result<(), String> {
        let word = |at: usize| -> u64 {
            let mut b = [0u8; 8];
            b.copy_from_slice(&dump[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let n = size as usize;
        let (prod, mut pos) = (word(n), word(n + 8));
        if prod < pos || prod - pos > u64::from(size) {
            return Err(format!(
                "ring {map}: producer position {prod} and consumer position {pos} do not fit a {size}-byte ring"
            ));
        }
        let out = self.records.entry(map).or_default();
        while pos < prod {
            let at = (pos % u64::from(size)) as usize;
            let header = (0..4).fold(0u32, |v, i| v | u32::from(dump[(at + i) % n]) << (8 * i));
            let len = (header & 0x0fff_ffff) as usize;
            out.push((0..len).map(|i| dump[(at + 8 + i) % n]).collect());
            pos += (len as u64 + 8).next_multiple_of(8);
        }
        self.read.insert(map, (size, prod));
        Ok(())
    }
}

/// The block layout of a map type the generator builds blocks for.
pub(super) fn kind(spec: &MapSpec) -> Option<Kind> {
    match spec.map_type {
        map_type::ARRAY | map_type::PERCPU_ARRAY => Some(Kind::Array),
        map_type::DEVMAP => Some(Kind::Devmap),
        map_type::PROG_ARRAY => Some(Kind::ProgArray),
        map_type::RINGBUF => Some(Kind::Ring),
        map_type::HASH
        | map_type::PERCPU_HASH
        | map_type::LRU_HASH
        | map_type::LRU_PERCPU_HASH
        | map_type::LPM_TRIE => Some(Kind::Cam),
        _ => None,
    }
}

/// An LRU_HASH or LRU_PERCPU_HASH map.
fn is_lru(spec: &MapSpec) -> bool {
    matches!(
        spec.map_type,
        map_type::LRU_HASH | map_type::LRU_PERCPU_HASH
    )
}

/// The key stride of a CAM block.
fn stride(spec: &MapSpec) -> u32 {
    [8u32, 16, 32, 64]
        .into_iter()
        .find(|&k| k >= spec.key_size)
        .unwrap_or(64)
}

/// Slots of a map's block: a CAM's `max_entries`, hashed buckets' ways and stash
/// (`hwxdp_ehdl::verilog::key_slots`), an ARRAY's or ring's `max_entries`.
fn slots(spec: &MapSpec) -> u32 {
    if kind(spec) == Some(Kind::Cam) {
        hwxdp_ehdl::verilog::key_slots(spec)
    } else {
        spec.max_entries
    }
}

/// `rtl/common/hash32.sv`: CRC-32 (polynomial 0x04C11DB7, initial value 0, no final xor) over the key's bytes from
/// the last to the first, each byte's bit 7 first.
fn hash32(key: &[u8]) -> u32 {
    let mut c = 0u32;
    for &byte in key.iter().rev() {
        for i in (0..8).rev() {
            let fb = (c >> 31) ^ ((u32::from(byte) >> i) & 1);
            c = (c << 1) ^ if fb != 0 { 0x04C1_1DB7 } else { 0 };
        }
    }
    c
}

/// The slot a key takes as the pipeline's block would place it: a CAM's next slot in order; with hashed buckets
/// (`rtl/ehdl/ehdl_hash_bkt.sv`) the lowest free way of bucket `hash32(key) % buckets`, else the lowest free stash
/// slot. `taken` marks the slots already given.
fn place(spec: &MapSpec, key: &[u8], taken: &mut Vec<bool>) -> Result<u32, String> {
    let n = slots(spec) as usize;
    taken.resize(n, false);
    let candidates: Vec<usize> = match hwxdp_ehdl::verilog::key_buckets(spec) {
        Some(b) => {
            let bucket = (hash32(key) % b.buckets) as usize;
            let ways = b.ways as usize;
            let ram = (b.buckets * b.ways) as usize;
            (bucket * ways..(bucket + 1) * ways).chain(ram..n).collect()
        }
        None => (0..n).collect(),
    };
    let slot = candidates.into_iter().find(|&s| !taken[s]).ok_or_else(|| {
        format!(
            "map {}: no free slot for a key in its bucket or the stash (the pipeline's block would overflow)",
            spec.name
        )
    })?;
    taken[slot] = true;
    Ok(slot as u32)
}

/// The map views one CPU's copy of.
struct View {
    cpu: usize,
    possible_cpus: usize,
}

impl View {
    /// CPU `cpu`'s value inside a syscall-view value.
    fn hardware<'a>(&self, spec: &MapSpec, value: &'a [u8]) -> &'a [u8] {
        let size = spec.value_size as usize;
        let at = if is_percpu(spec.map_type) {
            self.cpu * size.next_multiple_of(8)
        } else {
            0
        };
        value.get(at..at + size).unwrap_or(&[])
    }

    /// The syscall-view value with CPU `cpu`'s copy replaced by `hardware` (the others from `old`, else zero).
    fn merged(&self, spec: &MapSpec, old: Option<Vec<u8>>, hardware: &[u8]) -> Vec<u8> {
        if !is_percpu(spec.map_type) {
            return hardware.to_vec();
        }
        let step = (spec.value_size as usize).next_multiple_of(8);
        let mut v = old.unwrap_or_else(|| vec![0; step * self.possible_cpus]);
        let at = self.cpu * step;
        v[at..at + hardware.len()].copy_from_slice(hardware);
        v
    }
}

/// The host-port writes that give the blocks of `blocks` the contents `maps` holds; a PROG_ARRAY slot may name only
/// the programs the pipeline inlined as tail-call targets (`targets`).
pub(super) fn load(
    maps: &mut Maps,
    blocks: &BTreeSet<u32>,
    cpu: usize,
    targets: &[u32],
) -> Result<Vec<HostWrite>, EhdlRtlError> {
    let view = View {
        cpu,
        possible_cpus: maps.possible_cpus(),
    };
    let mut out = Vec::new();
    for &m in blocks {
        let spec = maps.specs()[m as usize].clone();
        let Some(kind) = kind(&spec).filter(|k| *k != Kind::Ring) else {
            continue; // a ring starts empty; `Rings::frees` gives back what was read
        };
        let vsize = spec.value_size;
        let entries = maps.entries(m as usize)?;
        if is_lru(&spec) && !entries.is_empty() {
            // The LRU block keeps the reference's lists of nodes; a key written into a slot would be missing there.
            return Err(EhdlRtlError::Program(format!(
                "map {}: an LRU map cannot be loaded through the eHDL pipeline's host port ({} entries to load)",
                spec.name,
                entries.len()
            )));
        }
        let mut taken = Vec::new();
        for (key, value) in entries {
            let value = view.hardware(&spec, &value);
            match kind {
                Kind::Array | Kind::Devmap => {
                    let index = index_of(&key);
                    write_bytes(&mut out, m, index * vsize, value, false);
                }
                Kind::ProgArray => {
                    let prog = index_of(value);
                    if !targets.contains(&prog) {
                        return Err(EhdlRtlError::Program(format!(
                            "map {}: slot {} holds program {prog}, which the pipeline did not inline as a tail-call \
                             target (it inlined {targets:?}: programs without tail calls of their own)",
                            spec.name,
                            index_of(&key)
                        )));
                    }
                    let word = (prog + 1).to_le_bytes();
                    write_bytes(&mut out, m, index_of(&key) * 4, &word, false);
                }
                Kind::Ring => {}
                Kind::Cam => {
                    let slot = place(&spec, &key, &mut taken).map_err(EhdlRtlError::Program)?;
                    write_bytes(&mut out, m, KEYS + slot * stride(&spec), &key, true);
                    write_bytes(&mut out, m, slot * vsize, value, false);
                    out.push(HostWrite {
                        map: m,
                        addr: VALID + slot,
                        data: 1,
                        mask: 1,
                    });
                }
            }
        }
    }
    Ok(out)
}

fn index_of(key: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    let n = key.len().min(4);
    b[..n].copy_from_slice(&key[..n]);
    u32::from_le_bytes(b)
}

/// The dumps that read every block back: per map, its values, then for a CAM its keys and each slot's valid bit.
pub(super) fn dumps(specs: &[MapSpec], blocks: &BTreeSet<u32>) -> Vec<Dump> {
    let mut out = Vec::new();
    for &m in blocks {
        let spec = &specs[m as usize];
        let Some(kind) = kind(spec).filter(|k| *k != Kind::ProgArray) else {
            continue;
        };
        if kind == Kind::Ring {
            out.push(Dump {
                map: m,
                bytes: spec.max_entries + 16,
                base: 0,
            });
            continue;
        }
        let n = slots(spec);
        out.push(Dump {
            map: m,
            bytes: n * spec.value_size,
            base: 0,
        });
        if kind == Kind::Cam {
            out.push(Dump {
                map: m,
                bytes: n * stride(spec),
                base: KEYS,
            });
            out.extend((0..n).map(|s| Dump {
                map: m,
                bytes: 1,
                base: VALID + s,
            }));
        }
    }
    out
}

/// Applies the dumps `read` (answers to [`dumps`], in order) to `maps`, so that it holds what the blocks hold, and
/// takes the rings' new records into `rings`.
pub(super) fn store(
    maps: &mut Maps,
    blocks: &BTreeSet<u32>,
    cpu: usize,
    read: &[Vec<u8>],
    rings: &mut Rings,
) -> Result<(), String> {
    let view = View {
        cpu,
        possible_cpus: maps.possible_cpus(),
    };
    let mut next = read.iter();
    let mut take = |what: &str, len: usize| -> Result<&[u8], String> {
        let d = next
            .next()
            .ok_or_else(|| format!("the dump of {what} is missing"))?;
        d.get(..len)
            .ok_or_else(|| format!("the dump of {what} has {} bytes, not {len}", d.len()))
    };
    for &m in blocks {
        let spec = maps.specs()[m as usize].clone();
        let Some(kind) = kind(&spec).filter(|k| *k != Kind::ProgArray) else {
            continue;
        };
        let (n, vsize) = (slots(&spec) as usize, spec.value_size as usize);
        if kind == Kind::Ring {
            let dump = take(&spec.name, n + 16)?;
            rings.take(m, spec.max_entries, dump)?;
            continue;
        }
        let values = take(&spec.name, n * vsize)?.to_vec();
        let fail = |e: hwxdp_maps::MapError| e.to_string();
        let mut hardware: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        match kind {
            Kind::Array => {
                for i in 0..n {
                    hardware.insert(
                        (i as u32).to_le_bytes().to_vec(),
                        values[i * vsize..(i + 1) * vsize].to_vec(),
                    );
                }
            }
            Kind::Devmap => {
                for i in 0..n {
                    let v = &values[i * vsize..(i + 1) * vsize];
                    if index_of(v) != 0 {
                        hardware.insert((i as u32).to_le_bytes().to_vec(), v.to_vec());
                    }
                }
            }
            Kind::ProgArray | Kind::Ring => {}
            Kind::Cam => {
                let ks = stride(&spec) as usize;
                let keys = take(&spec.name, n * ks)?.to_vec();
                for s in 0..n {
                    if take(&spec.name, 1)?[0] & 1 == 1 {
                        hardware.insert(
                            keys[s * ks..s * ks + spec.key_size as usize].to_vec(),
                            values[s * vsize..(s + 1) * vsize].to_vec(),
                        );
                    }
                }
            }
        }
        let m = m as usize;
        let now: BTreeMap<Vec<u8>, Vec<u8>> = maps.entries(m).map_err(fail)?.into_iter().collect();
        if kind != Kind::Array {
            for key in now.keys().filter(|k| !hardware.contains_key(*k)) {
                maps.delete(m, key).map_err(fail)?;
            }
        }
        for (key, value) in hardware {
            let old = now.get(&key).cloned();
            if old.as_deref().map(|o| view.hardware(&spec, o)) == Some(&value[..]) {
                continue;
            }
            let full = view.merged(&spec, old, &value);
            maps.update(m, &key, &full, 0).map_err(fail)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps() -> Maps {
        let specs = [
            MapSpec::new("arr", map_type::PERCPU_ARRAY, 4, 12, 3),
            MapSpec::new("h", map_type::HASH, 2, 4, 4),
            MapSpec::new("unused", map_type::HASH, 4, 4, 4),
        ];
        let mut m = Maps::new(&specs, 2).expect("maps");
        m.set_cpu(1);
        m
    }

    #[test]
    fn a_load_read_back_unchanged_changes_nothing_and_programs_writes_come_back() {
        let mut m = maps();
        let mut v = vec![0u8; 32];
        v[16..28].copy_from_slice(&[7; 12]);
        m.update(0, &1u32.to_le_bytes(), &v, 0).expect("array");
        m.update(1, &[5, 0], &[1, 2, 3, 4], 0).expect("hash");
        m.update(1, &[6, 0], &[9, 9, 9, 9], 0).expect("hash");
        let blocks: BTreeSet<u32> = [0, 1].into();
        let writes = load(&mut m, &blocks, 1, &[]).expect("load");
        // CPU 1's copy of index 1 at 12..24; the two hash entries in slots 0 and 1.
        assert!(writes.contains(&HostWrite {
            map: 0,
            addr: 12,
            data: 0x0707_0707_0707_0707,
            mask: 0xff
        }));
        assert!(writes.contains(&HostWrite {
            map: 1,
            addr: KEYS + 8,
            data: 6,
            mask: 3
        }));
        assert!(writes.contains(&HostWrite {
            map: 1,
            addr: VALID + 1,
            data: 1,
            mask: 1
        }));
        let d = dumps(m.specs(), &blocks);
        assert_eq!(d.len(), 1 + 2 + 4);
        // The hardware after the packets: index 2 counted, hash key 5 gone, key 8 in slot 3, key 6 changed.
        let mut arr = vec![0u8; 36];
        arr[12..24].copy_from_slice(&[7; 12]);
        arr[24] = 1;
        let mut keys = vec![0u8; 32];
        keys[8] = 6;
        keys[24] = 8;
        let mut vals = vec![0u8; 16];
        vals[4..8].copy_from_slice(&[1, 1, 1, 1]);
        vals[12..16].copy_from_slice(&[2, 2, 2, 2]);
        let read = vec![arr, vals, keys, vec![0], vec![1], vec![0], vec![1]];
        store(&mut m, &blocks, 1, &read, &mut Rings::default()).expect("store");
        let arr = m.entries(0).expect("entries");
        assert_eq!(arr[1].1[16..28], [7; 12]);
        assert_eq!(arr[2].1[16], 1);
        assert_eq!(arr[2].1[0], 0, "CPU 0 keeps its copy");
        let h = m.entries(1).expect("entries");
        assert_eq!(
            h,
            [
                (vec![6, 0], vec![1, 1, 1, 1]),
                (vec![8, 0], vec![2, 2, 2, 2])
            ]
        );
        assert!(
            store(&mut m, &blocks, 1, &read[..3], &mut Rings::default()).is_err(),
            "a dump missing"
        );
    }

    #[test]
    fn prog_array_slots_load_as_program_index_plus_one_and_only_inlined_targets() {
        let specs = [MapSpec::new("jt", map_type::PROG_ARRAY, 4, 4, 4)];
        let mut m = Maps::new(&specs, 1).expect("maps");
        m.update(0, &1u32.to_le_bytes(), &0u32.to_le_bytes(), 0)
            .expect("slot 1");
        m.update(0, &3u32.to_le_bytes(), &2u32.to_le_bytes(), 0)
            .expect("slot 3");
        let blocks: BTreeSet<u32> = [0].into();
        let writes = load(&mut m, &blocks, 0, &[0, 2]).expect("load");
        // Empty slots 0 and 2 stay 0 (the block resets to zero); slot 1 holds program 0, slot 3 program 2.
        assert_eq!(
            writes,
            [
                HostWrite {
                    map: 0,
                    addr: 4,
                    data: 1,
                    mask: 0x0f
                },
                HostWrite {
                    map: 0,
                    addr: 12,
                    data: 3,
                    mask: 0x0f
                }
            ]
        );
        assert!(dumps(m.specs(), &blocks).is_empty(), "not read back");
        let err = load(&mut m, &blocks, 0, &[0]).expect_err("program 2 is not inlined");
        assert!(err.to_string().contains("slot 3 holds program 2"), "{err}");
    }

    #[test]
    fn ring_records_are_read_from_the_consumer_to_the_producer_and_freed_next_load() {
        // A 32-byte ring: a 5-byte record at position 24 wraps around the end, then a 3-byte one.
        let size = 32u32;
        let mut dump = vec![0u8; size as usize + 16];
        let mut put = |pos: usize, bytes: &[u8]| {
            for (i, b) in bytes.iter().enumerate() {
                dump[(pos + i) % size as usize] = *b;
            }
        };
        put(24, &[5, 0, 0, 0]);
        put(32, b"hello");
        put(40, &[3, 0, 0, 0]);
        put(48, b"abc");
        dump[32] = 56; // producer position
        dump[40] = 24; // consumer position
        let mut rings = Rings::default();
        rings.take(4, size, &dump).expect("fits");
        assert_eq!(rings.records[&4], vec![b"hello".to_vec(), b"abc".to_vec()]);
        // The next batch is a fresh simulation: both positions carry over, so it appends after these records.
        let at = |addr| HostWrite {
            map: 4,
            addr,
            data: 56,
            mask: 0xff,
        };
        assert_eq!(rings.frees(), vec![at(32), at(40)]);
        dump[32] = 23; // a producer behind the consumer
        let err = rings.take(4, size, &dump).expect_err("bad positions");
        assert!(err.contains("ring 4"), "{err}");
    }
}
