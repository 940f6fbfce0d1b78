//! Names of the kernel's BPF ABI numbers that messages show: helper functions by id (`enum bpf_func_id`) and map
//! types (`enum bpf_map_type`). Every crate names helpers and map types through these two tables, so a message says
//! `bpf_get_current_pid_tgid (14)` and `BPF_MAP_TYPE_ARRAY_OF_MAPS`, never a bare number.

/// The kernel's helper functions, indexed by helper id (`BPF_FUNC_*`): `bpf_` and the name the kernel's UAPI gives
/// (id 0, `BPF_FUNC_unspec`, is no helper). The kernel added no helpers after `bpf_cgrp_storage_delete` (211); newer
/// functions are kfuncs.
pub const HELPER_NAMES: [&str; 212] = [
    "bpf_unspec",                         // 0
    "bpf_map_lookup_elem",                // 1
    "bpf_map_update_elem",                // 2
    "bpf_map_delete_elem",                // 3
    "bpf_probe_read",                     // 4
    "bpf_ktime_get_ns",                   // 5
    "bpf_trace_printk",                   // 6
    "bpf_get_prandom_u32",                // 7
    "bpf_get_smp_processor_id",           // 8
    "bpf_skb_store_bytes",                // 9
    "bpf_l3_csum_replace",                // 10
    "bpf_l4_csum_replace",                // 11
    "bpf_tail_call",                      // 12
    "bpf_clone_redirect",                 // 13
    "bpf_get_current_pid_tgid",           // 14
    "bpf_get_current_uid_gid",            // 15
    "bpf_get_current_comm",               // 16
    "bpf_get_cgroup_classid",             // 17
    "bpf_skb_vlan_push",                  // 18
    "bpf_skb_vlan_pop",                   // 19
    "bpf_skb_get_tunnel_key",             // 20
    "bpf_skb_set_tunnel_key",             // 21
    "bpf_perf_event_read",                // 22
    "bpf_redirect",                       // 23
    "bpf_get_route_realm",                // 24
    "bpf_perf_event_output",              // 25
    "bpf_skb_load_bytes",                 // 26
    "bpf_get_stackid",                    // 27
    "bpf_csum_diff",                      // 28
    "bpf_skb_get_tunnel_opt",             // 29
    "bpf_skb_set_tunnel_opt",             // 30
    "bpf_skb_change_proto",               // 31
    "bpf_skb_change_type",                // 32
    "bpf_skb_under_cgroup",               // 33
    "bpf_get_hash_recalc",                // 34
    "bpf_get_current_task",               // 35
    "bpf_probe_write_user",               // 36
    "bpf_current_task_under_cgroup",      // 37
    "bpf_skb_change_tail",                // 38
    "bpf_skb_pull_data",                  // 39
    "bpf_csum_update",                    // 40
    "bpf_set_hash_invalid",               // 41
    "bpf_get_numa_node_id",               // 42
    "bpf_skb_change_head",                // 43
    "bpf_xdp_adjust_head",                // 44
    "bpf_probe_read_str",                 // 45
    "bpf_get_socket_cookie",              // 46
    "bpf_get_socket_uid",                 // 47
    "bpf_set_hash",                       // 48
    "bpf_setsockopt",                     // 49
    "bpf_skb_adjust_room",                // 50
    "bpf_redirect_map",                   // 51
    "bpf_sk_redirect_map",                // 52
    "bpf_sock_map_update",                // 53
    "bpf_xdp_adjust_meta",                // 54
    "bpf_perf_event_read_value",          // 55
    "bpf_perf_prog_read_value",           // 56
    "bpf_getsockopt",                     // 57
    "bpf_override_return",                // 58
    "bpf_sock_ops_cb_flags_set",          // 59
    "bpf_msg_redirect_map",               // 60
    "bpf_msg_apply_bytes",                // 61
    "bpf_msg_cork_bytes",                 // 62
    "bpf_msg_pull_data",                  // 63
    "bpf_bind",                           // 64
    "bpf_xdp_adjust_tail",                // 65
    "bpf_skb_get_xfrm_state",             // 66
    "bpf_get_stack",                      // 67
    "bpf_skb_load_bytes_relative",        // 68
    "bpf_fib_lookup",                     // 69
    "bpf_sock_hash_update",               // 70
    "bpf_msg_redirect_hash",              // 71
    "bpf_sk_redirect_hash",               // 72
    "bpf_lwt_push_encap",                 // 73
    "bpf_lwt_seg6_store_bytes",           // 74
    "bpf_lwt_seg6_adjust_srh",            // 75
    "bpf_lwt_seg6_action",                // 76
    "bpf_rc_repeat",                      // 77
    "bpf_rc_keydown",                     // 78
    "bpf_skb_cgroup_id",                  // 79
    "bpf_get_current_cgroup_id",          // 80
    "bpf_get_local_storage",              // 81
    "bpf_sk_select_reuseport",            // 82
    "bpf_skb_ancestor_cgroup_id",         // 83
    "bpf_sk_lookup_tcp",                  // 84
    "bpf_sk_lookup_udp",                  // 85
    "bpf_sk_release",                     // 86
    "bpf_map_push_elem",                  // 87
    "bpf_map_pop_elem",                   // 88
    "bpf_map_peek_elem",                  // 89
    "bpf_msg_push_data",                  // 90
    "bpf_msg_pop_data",                   // 91
    "bpf_rc_pointer_rel",                 // 92
    "bpf_spin_lock",                      // 93
    "bpf_spin_unlock",                    // 94
    "bpf_sk_fullsock",                    // 95
    "bpf_tcp_sock",                       // 96
    "bpf_skb_ecn_set_ce",                 // 97
    "bpf_get_listener_sock",              // 98
    "bpf_skc_lookup_tcp",                 // 99
    "bpf_tcp_check_syncookie",            // 100
    "bpf_sysctl_get_name",                // 101
    "bpf_sysctl_get_current_value",       // 102
    "bpf_sysctl_get_new_value",           // 103
    "bpf_sysctl_set_new_value",           // 104
    "bpf_strtol",                         // 105
    "bpf_strtoul",                        // 106
    "bpf_sk_storage_get",                 // 107
    "bpf_sk_storage_delete",              // 108
    "bpf_send_signal",                    // 109
    "bpf_tcp_gen_syncookie",              // 110
    "bpf_skb_output",                     // 111
    "bpf_probe_read_user",                // 112
    "bpf_probe_read_kernel",              // 113
    "bpf_probe_read_user_str",            // 114
    "bpf_probe_read_kernel_str",          // 115
    "bpf_tcp_send_ack",                   // 116
    "bpf_send_signal_thread",             // 117
    "bpf_jiffies64",                      // 118
    "bpf_read_branch_records",            // 119
    "bpf_get_ns_current_pid_tgid",        // 120
    "bpf_xdp_output",                     // 121
    "bpf_get_netns_cookie",               // 122
    "bpf_get_current_ancestor_cgroup_id", // 123
    "bpf_sk_assign",                      // 124
    "bpf_ktime_get_boot_ns",              // 125
    "bpf_seq_printf",                     // 126
    "bpf_seq_write",                      // 127
    "bpf_sk_cgroup_id",                   // 128
    "bpf_sk_ancestor_cgroup_id",          // 129
    "bpf_ringbuf_output",                 // 130
    "bpf_ringbuf_reserve",                // 131
    "bpf_ringbuf_submit",                 // 132
    "bpf_ringbuf_discard",                // 133
    "bpf_ringbuf_query",                  // 134
    "bpf_csum_level",                     // 135
    "bpf_skc_to_tcp6_sock",               // 136
    "bpf_skc_to_tcp_sock",                // 137
    "bpf_skc_to_tcp_timewait_sock",       // 138
    "bpf_skc_to_tcp_request_sock",        // 139
    "bpf_skc_to_udp6_sock",               // 140
    "bpf_get_task_stack",                 // 141
    "bpf_load_hdr_opt",                   // 142
    "bpf_store_hdr_opt",                  // 143
    "bpf_reserve_hdr_opt",                // 144
    "bpf_inode_storage_get",              // 145
    "bpf_inode_storage_delete",           // 146
    "bpf_d_path",                         // 147
    "bpf_copy_from_user",                 // 148
    "bpf_snprintf_btf",                   // 149
    "bpf_seq_printf_btf",                 // 150
    "bpf_skb_cgroup_classid",             // 151
    "bpf_redirect_neigh",                 // 152
    "bpf_per_cpu_ptr",                    // 153
    "bpf_this_cpu_ptr",                   // 154
    "bpf_redirect_peer",                  // 155
    "bpf_task_storage_get",               // 156
    "bpf_task_storage_delete",            // 157
    "bpf_get_current_task_btf",           // 158
    "bpf_bprm_opts_set",                  // 159
    "bpf_ktime_get_coarse_ns",            // 160
    "bpf_ima_inode_hash",                 // 161
    "bpf_sock_from_file",                 // 162
    "bpf_check_mtu",                      // 163
    "bpf_for_each_map_elem",              // 164
    "bpf_snprintf",                       // 165
    "bpf_sys_bpf",                        // 166
    "bpf_btf_find_by_name_kind",          // 167
    "bpf_sys_close",                      // 168
    "bpf_timer_init",                     // 169
    "bpf_timer_set_callback",             // 170
    "bpf_timer_start",                    // 171
    "bpf_timer_cancel",                   // 172
    "bpf_get_func_ip",                    // 173
    "bpf_get_attach_cookie",              // 174
    "bpf_task_pt_regs",                   // 175
    "bpf_get_branch_snapshot",            // 176
    "bpf_trace_vprintk",                  // 177
    "bpf_skc_to_unix_sock",               // 178
    "bpf_kallsyms_lookup_name",           // 179
    "bpf_find_vma",                       // 180
    "bpf_loop",                           // 181
    "bpf_strncmp",                        // 182
    "bpf_get_func_arg",                   // 183
    "bpf_get_func_ret",                   // 184
    "bpf_get_func_arg_cnt",               // 185
    "bpf_get_retval",                     // 186
    "bpf_set_retval",                     // 187
    "bpf_xdp_get_buff_len",               // 188
    "bpf_xdp_load_bytes",                 // 189
    "bpf_xdp_store_bytes",                // 190
    "bpf_copy_from_user_task",            // 191
    "bpf_skb_set_tstamp",                 // 192
    "bpf_ima_file_hash",                  // 193
    "bpf_kptr_xchg",                      // 194
    "bpf_map_lookup_percpu_elem",         // 195
    "bpf_skc_to_mptcp_sock",              // 196
    "bpf_dynptr_from_mem",                // 197
    "bpf_ringbuf_reserve_dynptr",         // 198
    "bpf_ringbuf_submit_dynptr",          // 199
    "bpf_ringbuf_discard_dynptr",         // 200
    "bpf_dynptr_read",                    // 201
    "bpf_dynptr_write",                   // 202
    "bpf_dynptr_data",                    // 203
    "bpf_tcp_raw_gen_syncookie_ipv4",     // 204
    "bpf_tcp_raw_gen_syncookie_ipv6",     // 205
    "bpf_tcp_raw_check_syncookie_ipv4",   // 206
    "bpf_tcp_raw_check_syncookie_ipv6",   // 207
    "bpf_ktime_get_tai_ns",               // 208
    "bpf_user_ringbuf_drain",             // 209
    "bpf_cgrp_storage_get",               // 210
    "bpf_cgrp_storage_delete",            // 211
];

/// The kernel's map types, indexed by `BPF_MAP_TYPE_*` value (0, `BPF_MAP_TYPE_UNSPEC`, is no map type).
pub const MAP_TYPE_NAMES: [&str; 35] = [
    "BPF_MAP_TYPE_UNSPEC",                // 0
    "BPF_MAP_TYPE_HASH",                  // 1
    "BPF_MAP_TYPE_ARRAY",                 // 2
    "BPF_MAP_TYPE_PROG_ARRAY",            // 3
    "BPF_MAP_TYPE_PERF_EVENT_ARRAY",      // 4
    "BPF_MAP_TYPE_PERCPU_HASH",           // 5
    "BPF_MAP_TYPE_PERCPU_ARRAY",          // 6
    "BPF_MAP_TYPE_STACK_TRACE",           // 7
    "BPF_MAP_TYPE_CGROUP_ARRAY",          // 8
    "BPF_MAP_TYPE_LRU_HASH",              // 9
    "BPF_MAP_TYPE_LRU_PERCPU_HASH",       // 10
    "BPF_MAP_TYPE_LPM_TRIE",              // 11
    "BPF_MAP_TYPE_ARRAY_OF_MAPS",         // 12
    "BPF_MAP_TYPE_HASH_OF_MAPS",          // 13
    "BPF_MAP_TYPE_DEVMAP",                // 14
    "BPF_MAP_TYPE_SOCKMAP",               // 15
    "BPF_MAP_TYPE_CPUMAP",                // 16
    "BPF_MAP_TYPE_XSKMAP",                // 17
    "BPF_MAP_TYPE_SOCKHASH",              // 18
    "BPF_MAP_TYPE_CGROUP_STORAGE",        // 19
    "BPF_MAP_TYPE_REUSEPORT_SOCKARRAY",   // 20
    "BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE", // 21
    "BPF_MAP_TYPE_QUEUE",                 // 22
    "BPF_MAP_TYPE_STACK",                 // 23
    "BPF_MAP_TYPE_SK_STORAGE",            // 24
    "BPF_MAP_TYPE_DEVMAP_HASH",           // 25
    "BPF_MAP_TYPE_STRUCT_OPS",            // 26
    "BPF_MAP_TYPE_RINGBUF",               // 27
    "BPF_MAP_TYPE_INODE_STORAGE",         // 28
    "BPF_MAP_TYPE_TASK_STORAGE",          // 29
    "BPF_MAP_TYPE_BLOOM_FILTER",          // 30
    "BPF_MAP_TYPE_USER_RINGBUF",          // 31
    "BPF_MAP_TYPE_CGRP_STORAGE",          // 32
    "BPF_MAP_TYPE_ARENA",                 // 33
    "BPF_MAP_TYPE_INSN_ARRAY",            // 34
];

/// The kernel's name of helper `id` (`bpf_get_current_pid_tgid` for 14), `None` for an id that is no helper.
pub fn helper_name(id: i32) -> Option<&'static str> {
    usize::try_from(id)
        .ok()
        .filter(|&i| i > 0)
        .and_then(|i| HELPER_NAMES.get(i).copied())
}

/// The id of the helper the kernel calls `name`.
pub fn helper_id(name: &str) -> Option<i32> {
    let at = HELPER_NAMES.iter().skip(1).position(|&n| n == name)?;
    i32::try_from(at + 1).ok()
}

/// Helper `id` as messages name it: `bpf_get_current_pid_tgid (14)`, or `unknown helper 300` for an id the kernel
/// has no helper for.
pub fn helper_label(id: i32) -> String {
    match helper_name(id) {
        Some(name) => format!("{name} ({id})"),
        None => format!("unknown helper {id}"),
    }
}

/// The kernel's name of map type `map_type` (`BPF_MAP_TYPE_ARRAY_OF_MAPS` for 12), `None` for a value that is no map
/// type.
pub fn map_type_name(map_type: u32) -> Option<&'static str> {
    usize::try_from(map_type)
        .ok()
        .filter(|&i| i > 0)
        .and_then(|i| MAP_TYPE_NAMES.get(i).copied())
}

/// Map type `map_type` as messages name it: `BPF_MAP_TYPE_ARRAY_OF_MAPS`, or `unknown map type 99` for a value the
/// kernel has no map type for.
pub fn map_type_label(map_type: u32) -> String {
    match map_type_name(map_type) {
        Some(name) => name.to_string(),
        None => format!("unknown map type {map_type}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_are_named_with_their_id() {
        assert_eq!(helper_label(14), "bpf_get_current_pid_tgid (14)");
        assert_eq!(helper_label(1), "bpf_map_lookup_elem (1)");
        assert_eq!(helper_label(190), "bpf_xdp_store_bytes (190)");
        assert_eq!(helper_label(211), "bpf_cgrp_storage_delete (211)");
        assert_eq!(helper_label(0), "unknown helper 0");
        assert_eq!(helper_label(212), "unknown helper 212");
        assert_eq!(helper_label(-1), "unknown helper -1");
        assert_eq!(helper_id("bpf_fib_lookup"), Some(69));
        assert_eq!(helper_id("bpf_unspec"), None);
        assert_eq!(helper_id("decode"), None);
    }

    #[test]
    fn map_types_are_named_as_the_kernel_names_them() {
        assert_eq!(map_type_label(12), "BPF_MAP_TYPE_ARRAY_OF_MAPS");
        assert_eq!(map_type_label(1), "BPF_MAP_TYPE_HASH");
        assert_eq!(map_type_label(27), "BPF_MAP_TYPE_RINGBUF");
        assert_eq!(map_type_label(0), "unknown map type 0");
        assert_eq!(map_type_label(99), "unknown map type 99");
    }
}
