//! Real clang output: the listing of a clang-built XDP object equals llvm-objdump's, for LLVM 14 and for LLVM 19 -mcpu=v4.

mod common;

use common::llvm::{run, scratch};
use hwxdp_ebpf::listing;

/// An XDP program with a helper call, a map reference, a bpf-to-bpf call, a loop, an atomic add and byte swaps.
const XDP_C: &str = r#"
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, __u64); } cnt SEC(".maps");
static __attribute__((noinline)) int sum(unsigned char *p, unsigned char *e) {
  int s = 0;
  for (int i = 0; i < 32; i++) { if (p + i + 1 > e) break; s += (signed char)p[i]; }
  return s;
}
SEC("xdp") int prog(struct xdp_md *ctx) {
  unsigned char *d = (void *)(long)ctx->data, *e = (void *)(long)ctx->data_end;
  struct ethhdr *eth = (void *)d;
  if ((void *)(eth + 1) > (void *)e) return XDP_DROP;
  __u32 k = bpf_ntohs(eth->h_proto) & 3;
  __u64 *v = bpf_map_lookup_elem(&cnt, &k);
#ifdef V4
  if (v) __sync_fetch_and_add(v, sum(d, e) / (int)(k | 1));
#else
  if (v) __sync_fetch_and_add(v, (unsigned)sum(d, e) / (k | 1));
#endif
  if (eth->h_proto == bpf_htons(ETH_P_IP)) return XDP_PASS;
  return (long)d & 1 ? XDP_TX : XDP_PASS;
}
char _l[] SEC("license") = "GPL";
"#;

/// The defined, non-section symbols of `section` as `(slot, name)`.
fn section_symbols(table: &str, section: &str) -> Vec<(usize, String)> {
    table
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once('\t')?;
            let fields: Vec<&str> = left.split_whitespace().collect();
            if fields.len() < 2 {
                return None;
            }
            let (addr, flags, sec) = (
                fields.first()?,
                &fields[1..fields.len() - 1],
                fields.last()?,
            );
            if *sec != section || flags.iter().any(|f| f.contains('d')) {
                return None;
            }
            let name = right.split_whitespace().nth(1)?;
            Some((
                u64::from_str_radix(addr, 16).ok()? as usize / 8,
                name.to_string(),
            ))
        })
        .collect()
}

fn check_clang_object(name: &str, clang: &str, extra: &[&str], objdump: &[&str]) {
    let c = scratch(&format!("{name}.c"));
    let o = scratch(&format!("{name}.o"));
    std::fs::write(&c, XDP_C).expect("write C source");
    let (c, o) = (
        c.to_str().expect("utf-8 path"),
        o.to_str().expect("utf-8 path"),
    );
    // The multiarch include directory holds asm/types.h, which linux/bpf.h needs; a fresh Debian machine has no
    // /usr/include/asm (only gcc-multilib provides that link).
    let arch_include = format!("-I/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let mut args = vec![
        "-O2",
        "-g",
        "-target",
        "bpf",
        &arch_include,
        "-c",
        c,
        "-o",
        o,
    ];
    args.extend_from_slice(extra);
    run(clang, &args);
    let table = run("llvm-objdump-19", &["-t", o]);
    let mut args = objdump.to_vec();
    args.push(o);
    let dump = run(objdump[0], &args[1..]);
    for section in [".text", "xdp"] {
        let bin = scratch(&format!("{name}{section}.bin"));
        let bin = bin.to_str().expect("utf-8 path");
        run(
            "llvm-objcopy-19",
            &["-O", "binary", &format!("--only-section={section}"), o, bin],
        );
        let insns = hwxdp_ebpf::decode(&std::fs::read(bin).expect("read section"))
            .expect("clang output decodes");
        let header = format!("Disassembly of section {section}:\n");
        let body = &dump[dump.find(&header).expect("section in dump") + header.len()..];
        let body = &body[..body.find("\nDisassembly of section").unwrap_or(body.len())];
        assert_eq!(
            listing(&insns, &section_symbols(&table, section)),
            body,
            "{name} {section}"
        );
    }
}

#[test]
fn clang_14_object_lists_like_llvm_objdump_14() {
    check_clang_object("clang14", "clang", &[], &["llvm-objdump", "-d"]);
}

#[test]
fn clang_19_v4_object_lists_like_llvm_objdump_19() {
    check_clang_object(
        "clang19",
        "clang-19",
        &["-mcpu=v4", "-DV4"],
        &["llvm-objdump-19", "-d", "--no-print-imm-hex"],
    );
}
