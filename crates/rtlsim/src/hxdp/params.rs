//! The hXDP module's build parameters, what an image needs of them, and the check that it fits.
//!
//! One parameter set ([`Params::for_lanes`]) serves every bundled example, so a single cached Verilator build (per lane
//! count) runs them all; a program that needs more is refused before the harness starts, naming the parameter.

use hwxdp_hxdp::isa::{Image, MapConfig};
use hwxdp_maps::abi::map_type;
use hwxdp_xdp::fib::RouteTable;

use super::HxdpRtlError;

/// The parameters of `hxdp.sv` the driver chooses (its `-G` overrides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Slots per bundle.
    pub lanes: usize,
    /// Instruction memory depth in bundles.
    pub imem_bundles: usize,
    /// Maps of one program.
    pub maps: usize,
    /// Widest key in bytes.
    pub key_bytes: usize,
    /// Widest value in bytes (a multiple of 8).
    pub value_bytes: usize,
    /// CAM entries of the LPM_TRIE maps together (`ENTRIES`: a power of two, at least [`MIN_CAM_ENTRIES`]); the
    /// other map types need none.
    pub cam_entries: usize,
    /// LRU list nodes of the LRU_HASH maps together (`LRU_NODES`: a power of two, at least [`MIN_CAM_ENTRIES`]).
    pub lru_nodes: usize,
    /// Slots of the HASH, PERCPU_HASH and LRU_HASH maps together (`HASH_SLOTS`: hashed buckets and slot keys in block
    /// RAM).
    pub hash_slots: usize,
    /// 8-byte value rows of all maps together (a power of two, at least `cam_entries`).
    pub mem_words: usize,
    /// Program table entries (the programs of one object, tail-call targets).
    pub progs: usize,
    /// Routes `bpf_fib_lookup` consults.
    pub routes: usize,
    /// Devices besides the built-in loopback device.
    pub devices: usize,
    /// Resolved neighbours.
    pub neighbors: usize,
    /// The possible CPUs of the kernel the module imitates: the common LRU sizes its refills by them
    /// (`maps.sv`'s `POSSIBLE_CPUS`), so it must be the reference maps' CPU count.
    pub possible_cpus: usize,
}

/// The smallest CAM the module is built with (`maps.sv` needs at least two entries): images without LRU_HASH or
/// LPM_TRIE maps get this one.
pub const MIN_CAM_ENTRIES: usize = 4;

impl Params {
    /// The parameter set for `lanes` lanes and images without LRU_HASH or LPM_TRIE maps, large enough for every
    /// such program of `examples/xdp` and `examples/p4` (`cargo test -p hwxdp --test hxdp_rtl -- every_example_fits
    /// --nocapture` prints what each needs): a CAM of [`MIN_CAM_ENTRIES`]. The largest needs: vlan_filter's 40-byte
    /// keys, fib_forward's 72-byte values, xdp_l3_chain's hash slots and 4297 value rows (powers of two above: 8192),
    /// xdp_mpls_switch's 404 bundles. [`Params::for_image`] sizes the CAM to an image's maps.
    pub fn for_lanes(lanes: usize) -> Params {
        Params {
            lanes,
            imem_bundles: 1024,
            maps: 8,
            key_bytes: 40,
            value_bytes: 72,
            cam_entries: MIN_CAM_ENTRIES,
            lru_nodes: MIN_CAM_ENTRIES,
            hash_slots: 8192,
            mem_words: 8192,
            progs: 16,
            routes: 32,
            devices: 4,
            neighbors: 16,
            possible_cpus: 1,
        }
    }

    /// The parameters for an image that `needs` these: those of [`Params::for_lanes`] with a CAM only as big as the
    /// image's LPM_TRIE maps and LRU lists only as long as its LRU_HASH maps (each the power of two at or above
    /// their entries, at least [`MIN_CAM_ENTRIES`]), so images without such maps share one build and the others get
    /// a CAM and lists of their size.
    pub fn for_image(lanes: usize, needs: &Needs) -> Params {
        let size = |n: u64| {
            let n = usize::try_from(n)
                .unwrap_or(usize::MAX)
                .max(MIN_CAM_ENTRIES);
            n.checked_next_power_of_two().unwrap_or(n)
        };
        Params {
            cam_entries: size(needs.cam_entries),
            lru_nodes: size(needs.lru_nodes),
            ..Params::for_lanes(lanes)
        }
    }

    /// These parameters for a kernel with `possible_cpus` possible CPUs (the machine's `Config::possible_cpus`).
    pub fn with_possible_cpus(self, possible_cpus: usize) -> Params {
        Params {
            possible_cpus,
            ..self
        }
    }

    /// Verilator's `-G` overrides for these parameters.
    pub fn flags(&self) -> Vec<String> {
        [
            ("LANES", self.lanes),
            ("IMEM_BUNDLES", self.imem_bundles),
            ("MAPS", self.maps),
            ("KEY_BYTES", self.key_bytes),
            ("VALUE_BYTES", self.value_bytes),
            ("ENTRIES", self.cam_entries),
            ("LRU_NODES", self.lru_nodes),
            ("HASH_SLOTS", self.hash_slots),
            ("MEM_WORDS", self.mem_words),
            ("PROGS", self.progs),
            ("ROUTES", self.routes),
            ("DEVICES", self.devices),
            ("NEIGHBORS", self.neighbors),
            ("POSSIBLE_CPUS", self.possible_cpus),
        ]
        .iter()
        .map(|(name, value)| format!("-G{name}={value}"))
        .collect()
    }
}

/// Slots the maps module numbers for a map and how many value rows and CAM entries they take (`rtl/sephirot/maps.sv`'s
/// header: "Storage" and "Slots"); `None` for a type it does not lay out (RINGBUF has no storage there either).
pub fn layout(m: &MapConfig) -> Option<Layout> {
    let n = u64::from(m.max_entries);
    let rows = u64::from(m.value_size).div_ceil(8);
    let (slots, cam, hash, rows) = match m.map_type {
        map_type::ARRAY | map_type::PERCPU_ARRAY => (n, 0, 0, rows),
        // The kernel's preallocated hash keeps one spare element for replacing updates; the trie one for failed ones.
        // A per-CPU hash updates in place. Hash and LRU maps live in the hashed buckets, LPM maps in the CAM.
        map_type::HASH => (n + 1, 0, n + 1, rows),
        map_type::PERCPU_HASH | map_type::LRU_HASH => (n, 0, n, rows),
        map_type::LPM_TRIE => (n + 1, n + 1, 0, rows),
        // Each value is followed by a presence byte.
        map_type::PROG_ARRAY | map_type::DEVMAP => {
            (n, 0, 0, (u64::from(m.value_size) + 1).div_ceil(8))
        }
        _ => return None,
    };
    Some(Layout {
        slots,
        cam,
        lru: if m.map_type == map_type::LRU_HASH {
            n
        } else {
            0
        },
        hash,
        rows: slots * rows,
    })
}

/// Where a map lives in the maps module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Slots (what `host_slot` reads).
    pub slots: u64,
    /// CAM entries (LPM_TRIE).
    pub cam: u64,
    /// LRU list nodes (LRU_HASH).
    pub lru: u64,
    /// Hash slots (HASH, PERCPU_HASH, LRU_HASH).
    pub hash: u64,
    /// 8-byte value rows.
    pub rows: u64,
}

/// Whether the driver reads a map of this type back from the hardware after packets: the ones programs write.
/// Programs cannot change PROG_ARRAY and DEVMAP maps (the driver keeps userspace's writes), and a RINGBUF has no
/// elements.
pub fn read_back(t: u32) -> bool {
    matches!(
        t,
        map_type::ARRAY
            | map_type::PERCPU_ARRAY
            | map_type::HASH
            | map_type::PERCPU_HASH
            | map_type::LRU_HASH
            | map_type::LPM_TRIE
    )
}

/// What an image needs of the parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Bundles of instruction memory.
    pub bundles: u64,
    /// Maps.
    pub maps: u64,
    /// Widest key.
    pub key_bytes: u64,
    /// Widest value.
    pub value_bytes: u64,
    /// CAM entries (LPM_TRIE maps).
    pub cam_entries: u64,
    /// LRU list nodes (LRU_HASH maps).
    pub lru_nodes: u64,
    /// Hash slots (HASH, PERCPU_HASH and LRU_HASH maps).
    pub hash_slots: u64,
    /// Value rows.
    pub mem_words: u64,
    /// Programs.
    pub progs: u64,
    /// Routes.
    pub routes: u64,
    /// Devices.
    pub devices: u64,
    /// Neighbours.
    pub neighbors: u64,
}

impl Needs {
    /// What `image` needs, with `routes` for `bpf_fib_lookup`.
    pub fn of(image: &Image, routes: &RouteTable) -> Needs {
        let mut n = Needs {
            bundles: image.bundles.len() as u64,
            maps: image.maps.len() as u64,
            progs: image.entries.len() as u64,
            routes: routes.routes.len() as u64,
            devices: routes.devices.len() as u64,
            neighbors: routes.neighbors.len() as u64,
            ..Needs::default()
        };
        for m in &image.maps {
            n.key_bytes = n.key_bytes.max(u64::from(m.key_size));
            n.value_bytes = n.value_bytes.max(u64::from(m.value_size));
            if let Some(l) = layout(m) {
                n.cam_entries += l.cam;
                n.lru_nodes += l.lru;
                n.hash_slots += l.hash;
                n.mem_words += l.rows;
            }
        }
        n
    }

    /// The largest of two needs, field by field.
    pub fn max(self, o: Needs) -> Needs {
        Needs {
            bundles: self.bundles.max(o.bundles),
            maps: self.maps.max(o.maps),
            key_bytes: self.key_bytes.max(o.key_bytes),
            value_bytes: self.value_bytes.max(o.value_bytes),
            cam_entries: self.cam_entries.max(o.cam_entries),
            lru_nodes: self.lru_nodes.max(o.lru_nodes),
            hash_slots: self.hash_slots.max(o.hash_slots),
            mem_words: self.mem_words.max(o.mem_words),
            progs: self.progs.max(o.progs),
            routes: self.routes.max(o.routes),
            devices: self.devices.max(o.devices),
            neighbors: self.neighbors.max(o.neighbors),
        }
    }

    /// Refuses an image that needs more than `p` has, naming the first parameter it exceeds.
    pub fn check(&self, p: &Params) -> Result<(), HxdpRtlError> {
        let limits = [
            (
                "IMEM_BUNDLES",
                "bundles of instruction memory",
                self.bundles,
                p.imem_bundles,
            ),
            ("MAPS", "maps", self.maps, p.maps),
            ("KEY_BYTES", "key bytes", self.key_bytes, p.key_bytes),
            (
                "VALUE_BYTES",
                "value bytes",
                self.value_bytes,
                p.value_bytes,
            ),
            (
                "ENTRIES",
                "CAM entries of LPM maps",
                self.cam_entries,
                p.cam_entries,
            ),
            ("LRU_NODES", "LRU list nodes", self.lru_nodes, p.lru_nodes),
            (
                "HASH_SLOTS",
                "slots of hash maps",
                self.hash_slots,
                p.hash_slots,
            ),
            (
                "MEM_WORDS",
                "8-byte map value rows",
                self.mem_words,
                p.mem_words,
            ),
            ("PROGS", "programs", self.progs, p.progs),
            ("ROUTES", "routes", self.routes, p.routes),
            ("DEVICES", "devices", self.devices, p.devices),
            ("NEIGHBORS", "neighbours", self.neighbors, p.neighbors),
        ];
        for (param, what, need, have) in limits {
            if need > have as u64 {
                return Err(HxdpRtlError::TooBig {
                    param,
                    what,
                    need,
                    have: have as u64,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwxdp_hxdp::isa::Bundle;

    fn map(map_type: u32, key_size: u32, value_size: u32, max_entries: u32) -> MapConfig {
        MapConfig {
            map_type,
            key_size,
            value_size,
            max_entries,
            flags: 0,
        }
    }

    fn image(bundles: usize, maps: Vec<MapConfig>) -> Image {
        Image {
            lanes: 4,
            bundles: vec![Bundle::empty(4); bundles],
            entries: vec![0],
            maps,
        }
    }

    #[test]
    fn needs_count_slots_as_the_maps_module_lays_them_out() {
        let n = Needs::of(
            &image(
                7,
                vec![
                    map(map_type::HASH, 16, 8, 1024),
                    map(map_type::ARRAY, 4, 24, 10),
                    map(map_type::LRU_HASH, 13, 12, 64),
                    map(map_type::LPM_TRIE, 8, 4, 256),
                    map(map_type::PERCPU_ARRAY, 4, 8, 3),
                    map(map_type::RINGBUF, 0, 0, 4096),
                ],
            ),
            &RouteTable::default(),
        );
        assert_eq!(
            n,
            Needs {
                bundles: 7,
                maps: 6,
                key_bytes: 16,
                value_bytes: 24,
                cam_entries: 257,
                lru_nodes: 64,
                hash_slots: 1025 + 64,
                mem_words: 1025 + 10 * 3 + 64 * 2 + 257 + 3,
                progs: 1,
                ..Needs::default()
            }
        );
    }

    #[test]
    fn too_big_names_the_parameter_and_both_figures() {
        let p = Params::for_lanes(4);
        let none = RouteTable::default();
        let fits = image(10, vec![map(map_type::HASH, 4, 8, 32)]);
        assert!(Needs::of(&fits, &none).check(&p).is_ok());
        let long = image(p.imem_bundles + 1, vec![]);
        let err = Needs::of(&long, &none).check(&p).expect_err("too long");
        assert_eq!(
            err.to_string(),
            format!(
                "program too big for the hardware: it needs {} bundles of instruction memory, the hXDP module is \
                 built with IMEM_BUNDLES = {}",
                p.imem_bundles + 1,
                p.imem_bundles
            )
        );
        let wide = image(1, vec![map(map_type::HASH, 4, 8, p.hash_slots as u32)]);
        let err = Needs::of(&wide, &none)
            .check(&p)
            .expect_err("too many slots");
        assert!(err.to_string().contains("HASH_SLOTS"), "{err}");
        let lru = image(1, vec![map(map_type::LRU_HASH, 4, 8, 64)]);
        let err = Needs::of(&lru, &none)
            .check(&p)
            .expect_err("no lists for it");
        assert!(err.to_string().contains("LRU_NODES = 4"), "{err}");
    }

    #[test]
    fn the_cam_is_sized_to_the_lru_and_lpm_maps_of_the_image() {
        let none = RouteTable::default();
        let plain = Needs::of(&image(1, vec![map(map_type::HASH, 4, 8, 1000)]), &none);
        assert_eq!(Params::for_image(4, &plain), Params::for_lanes(4));
        assert_eq!(Params::for_image(4, &plain).cam_entries, MIN_CAM_ENTRIES);
        let both = image(
            1,
            vec![
                map(map_type::LRU_HASH, 13, 12, 64),
                map(map_type::LPM_TRIE, 8, 4, 256),
            ],
        );
        let needs = Needs::of(&both, &none);
        let p = Params::for_image(4, &needs);
        assert_eq!(p.cam_entries, 512, "257 entries, the power of two above");
        assert_eq!(
            p.lru_nodes, 64,
            "the LRU map's nodes, in the buckets, not the CAM"
        );
        assert!(needs.check(&p).is_ok());
        assert!(p.flags().contains(&"-GENTRIES=512".to_string()));
        assert!(p.flags().contains(&"-GLRU_NODES=64".to_string()));
    }

    #[test]
    fn parameters_become_verilator_overrides() {
        let flags = Params::for_lanes(2).flags();
        assert_eq!(flags[0], "-GLANES=2");
        assert!(flags.contains(&"-GENTRIES=4".to_string()));
        assert!(flags.contains(&"-GHASH_SLOTS=8192".to_string()));
        let p = Params::for_lanes(4);
        assert!(p.cam_entries.is_power_of_two() && p.mem_words.is_power_of_two());
        assert!(p.mem_words >= p.cam_entries && p.value_bytes.is_multiple_of(8));
    }

    #[test]
    fn program_and_device_arrays_take_a_presence_byte_and_ring_buffers_nothing() {
        let n = Needs::of(
            &image(
                1,
                vec![
                    map(map_type::PROG_ARRAY, 4, 4, 4),
                    map(map_type::DEVMAP, 4, 8, 64),
                    map(map_type::RINGBUF, 0, 0, 4096),
                ],
            ),
            &RouteTable::default(),
        );
        assert_eq!(
            (n.cam_entries, n.hash_slots, n.mem_words),
            (0, 0, 4 + 64 * 2)
        );
        assert!(read_back(map_type::PERCPU_HASH) && !read_back(map_type::DEVMAP));
    }
}
