//! The one helper-name table and the one map-type-name table (`hwxdp_ebpf::abi`) match the kernel's UAPI as
//! libbpf's bindings give it.

use hwxdp_ebpf::abi::{HELPER_NAMES, MAP_TYPE_NAMES};
use hwxdp_ebpf::{helper_label, map_type_label};
use libbpf_rs::libbpf_sys as sys;

#[test]
fn the_tables_cover_every_helper_and_map_type_of_the_uapi() {
    assert_eq!(HELPER_NAMES.len(), sys::__BPF_FUNC_MAX_ID as usize);
    assert_eq!(MAP_TYPE_NAMES.len(), sys::__MAX_BPF_MAP_TYPE as usize);
    for (id, name) in [
        (sys::BPF_FUNC_map_lookup_elem, "bpf_map_lookup_elem"),
        (
            sys::BPF_FUNC_get_current_pid_tgid,
            "bpf_get_current_pid_tgid",
        ),
        (sys::BPF_FUNC_redirect_map, "bpf_redirect_map"),
        (sys::BPF_FUNC_fib_lookup, "bpf_fib_lookup"),
        (sys::BPF_FUNC_ringbuf_output, "bpf_ringbuf_output"),
        (sys::BPF_FUNC_xdp_store_bytes, "bpf_xdp_store_bytes"),
        (sys::BPF_FUNC_user_ringbuf_drain, "bpf_user_ringbuf_drain"),
        (sys::BPF_FUNC_cgrp_storage_delete, "bpf_cgrp_storage_delete"),
    ] {
        assert_eq!(HELPER_NAMES[id as usize], name);
        assert_eq!(helper_label(id as i32), format!("{name} ({id})"));
    }
    for (t, name) in [
        (sys::BPF_MAP_TYPE_HASH, "BPF_MAP_TYPE_HASH"),
        (
            sys::BPF_MAP_TYPE_ARRAY_OF_MAPS,
            "BPF_MAP_TYPE_ARRAY_OF_MAPS",
        ),
        (sys::BPF_MAP_TYPE_DEVMAP_HASH, "BPF_MAP_TYPE_DEVMAP_HASH"),
        (sys::BPF_MAP_TYPE_RINGBUF, "BPF_MAP_TYPE_RINGBUF"),
        (sys::BPF_MAP_TYPE_USER_RINGBUF, "BPF_MAP_TYPE_USER_RINGBUF"),
        (sys::BPF_MAP_TYPE_ARENA, "BPF_MAP_TYPE_ARENA"),
    ] {
        assert_eq!(MAP_TYPE_NAMES[t as usize], name);
        assert_eq!(map_type_label(t), name);
    }
}
