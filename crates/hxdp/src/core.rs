//! A cycle-level model of the Sephirot core executing an hXDP image.
//!
//! A bundle executes in three phases that mirror the pipeline: every lane reads its operands from the register file
//! as it was before the bundle and loads are performed (decode pre-fetches memory); then the bundle's helper call, if
//! any; then stores in lane order and all register results commit. Among the control ops of a bundle the lowest lane
//! whose jump is taken (exits are always taken) decides the next bundle; none taken falls through to the next row.
//! Memory, maps and helpers are the reference machine's ([`hwxdp_xdp::Hosted`]), so results are identical.

use crate::isa::{Image, Op, EXIT_IMM, LDX6, STX6};
use crate::timing::*;
use crate::CompileError;
use hwxdp_ebpf::opcode::*;
use hwxdp_ebpf::STACK_SIZE;
use hwxdp_object::ObjectSpec;
use hwxdp_xdp::maps::MapStore;
use hwxdp_xdp::region::{self, Region};
use hwxdp_xdp::{
    alu, Config, FaultKind, Hosted, Machine, Outcome, Resume, ResumeValue, Verdict, XdpBuff, XdpMd,
};

/// Cycle figures over the packets run so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoreStats {
    /// Packets run.
    pub packets: u64,
    /// Cycles over all packets.
    pub cycles: u64,
    /// Fewest cycles of one packet.
    pub min: u64,
    /// Most cycles of one packet.
    pub max: u64,
    /// Bundles issued over all packets.
    pub bundles: u64,
}

impl CoreStats {
    /// Mean cycles per packet.
    pub fn mean(&self) -> f64 {
        if self.packets == 0 {
            0.0
        } else {
            self.cycles as f64 / self.packets as f64
        }
    }
}

/// How one packet's run ended.
enum End {
    Verdict(u32),
    Fault(FaultKind),
}

struct Frame {
    return_pc: usize,
    saved: [u64; 4],
}

/// The hXDP core with its image, maps and helpers (`--backend hxdp` in `hwxdp_backend`).
pub struct HxdpCore {
    image: Image,
    machine: Machine,
    entry: usize,
    last_cycles: u64,
    stats: CoreStats,
    last_fault: Option<String>,
    last_calls: Vec<(i32, u64)>,
    /// What the helpers of the last packet recorded: its redirect target and printk lines.
    last_hosted: Outcome,
    packet_present: bool,
    /// The maps module's buckets of each HASH and PERCPU_HASH map (their latencies depend on them).
    buckets: Vec<Option<Buckets>>,
    /// The maps may have changed outside a packet (`machine_mut`): the buckets are rebuilt before the next one.
    buckets_stale: bool,
}

impl HxdpCore {
    /// Loads `image` compiled from `spec`, to run program `program` (name or section; `None` when the object has one).
    pub fn new(
        image: Image,
        spec: &ObjectSpec,
        program: Option<&str>,
        config: &Config,
    ) -> Result<HxdpCore, CompileError> {
        let machine = Machine::new(spec, program, config)?;
        let name = machine.entry().name.clone();
        let entry = spec
            .programs
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| CompileError::Mismatch(format!("no program {name}")))?;
        if image.entries.len() != spec.programs.len() || image.maps.len() != spec.maps.len() {
            return Err(CompileError::Mismatch(format!(
                "{} programs and {} maps, the object has {} and {}",
                image.entries.len(),
                image.maps.len(),
                spec.programs.len(),
                spec.maps.len()
            )));
        }
        for (i, (m, s)) in image.maps.iter().zip(&spec.maps).enumerate() {
            if (m.map_type, m.key_size, m.value_size, m.max_entries)
                != (s.map_type, s.key_size, s.value_size, s.max_entries)
            {
                return Err(CompileError::Mismatch(format!(
                    "map {i} ({}) differs from the object",
                    s.name
                )));
            }
        }
        if image.entries[entry] as usize >= image.bundles.len() {
            return Err(CompileError::Mismatch(format!(
                "program {name} is not in the image"
            )));
        }
        Ok(HxdpCore {
            image,
            machine,
            entry,
            last_cycles: 0,
            stats: CoreStats::default(),
            last_fault: None,
            last_calls: Vec::new(),
            last_hosted: Outcome::default(),
            packet_present: false,
            buckets: Vec::new(),
            buckets_stale: true,
        })
    }

    /// The reference machine holding the maps (for preloading and dumping).
    pub fn machine_mut(&mut self) -> &mut Machine {
        self.buckets_stale = true;
        &mut self.machine
    }

    /// The records waiting in ring buffer map `map`, taken out. Ring buffers are not hash maps, so unlike
    /// [`HxdpCore::machine_mut`] this leaves the maps module's buckets valid (a backend drains after every packet).
    pub fn ringbuf_drain(&mut self, map: usize) -> Vec<Vec<u8>> {
        self.machine.maps_mut().ringbuf_drain(map)
    }

    /// The samples waiting in perf event array `map`, CPU by CPU, taken out; like [`HxdpCore::ringbuf_drain`] this
    /// leaves the maps module's buckets valid.
    pub fn perf_drain(&mut self, map: usize) -> Vec<hwxdp_xdp::maps::perf::Sample> {
        self.machine.maps_mut().perf_drain(map)
    }

    /// Says that the backend reads the core's perf event arrays ([`HxdpCore::perf_drain`]), so that
    /// `bpf_perf_event_output` writes samples rather than faulting ([`Machine::read_perf_samples`]).
    pub fn read_perf_samples(&mut self) {
        self.machine.read_perf_samples();
    }

    /// Rebuilds the buckets of the hash maps from the keys the maps hold.
    fn rebuild_buckets(&mut self) {
        let maps = self.machine.maps_mut();
        self.buckets = self
            .image
            .maps
            .iter()
            .enumerate()
            .map(|(i, m)| {
                in_buckets(m.map_type).then(|| {
                    let mut b = Buckets::new(m.max_entries);
                    for (key, _) in maps.entries(i).unwrap_or_default() {
                        b.insert(&key);
                    }
                    b
                })
            })
            .collect();
        self.buckets_stale = false;
    }

    /// The image the core runs.
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Sets the arrival time of the next packet (virtual clock).
    pub fn set_time(&mut self, ns: u64) {
        self.machine.set_time(ns);
    }

    /// Cycle figures so far.
    pub fn stats(&self) -> &CoreStats {
        &self.stats
    }

    /// The helper calls of the last packet: (helper id, the cycle of the call as virtual time counts it, which is
    /// the core's `run_cycles_o` in the cycle it raises `hcall_o`).
    pub fn last_helper_calls(&self) -> &[(i32, u64)] {
        &self.last_calls
    }

    /// With `true`, every packet byte counts as stored when the packet starts (a core whose packet buffer is
    /// filled before it starts, `pkt_ready_i` at the page's end): no waits for frames. By default frames arrive one
    /// per cycle from the start (the APS's early start).
    pub fn set_packet_present(&mut self, present: bool) {
        self.packet_present = present;
    }

    /// Why the last packet was aborted by a fault, if it was.
    pub fn last_fault(&self) -> Option<&str> {
        self.last_fault.as_deref()
    }

    /// Cycles the last packet took.
    pub fn last_cycles(&self) -> u64 {
        self.last_cycles
    }

    /// Where the last packet was redirected: (map index or `None` for `bpf_redirect`, key).
    pub fn last_redirect(&self) -> Option<(Option<usize>, u64)> {
        self.last_hosted.redirect
    }

    /// The `bpf_trace_printk` lines of the last packet, taken.
    pub fn take_printk(&mut self) -> Vec<String> {
        std::mem::take(&mut self.last_hosted.printk)
    }

    /// Runs one packet; returns the verdict (faults give `XDP_ABORTED`).
    pub fn run_packet(&mut self, buff: &mut XdpBuff, md: &XdpMd) -> Verdict {
        let entry = self.image.entries[self.entry] as usize;
        self.run_from(buff, md, entry, None)
    }

    /// Runs one packet from a context a Warp Engine restored (`docs/warp.md`): Sephirot starts at `bundle` (an
    /// entry point of the image, [`crate::Compiled::entry_bundle`] of the resume's slot) with r0-r9 as `resume`
    /// gives them (the others 0, r10 the frame pointer) and the frame zeroed, then the resume's stack writes made in
    /// order. Cycles count from there: the skipped part ran in the engine. Returns the verdict (faults give
    /// `XDP_ABORTED`), or an error when the bundle is outside the image or a stack write outside the frame.
    pub fn run_resumed(
        &mut self,
        buff: &mut XdpBuff,
        md: &XdpMd,
        bundle: u32,
        resume: &Resume,
    ) -> Result<Verdict, CompileError> {
        if bundle as usize >= self.image.bundles.len() {
            return Err(CompileError::Mismatch(format!(
                "entry bundle {bundle} is past the image's {} bundles",
                self.image.bundles.len()
            )));
        }
        let mut regs = [0u64; 10];
        regs[0] = resume.r0.unwrap_or(0);
        for (r, v) in resume.regs.iter().enumerate() {
            regs[r + 1] = v.map_or(0, |v| resolve(v, buff));
        }
        let mut stack: Vec<StackStore> = Vec::with_capacity(resume.stack.len());
        for w in &resume.stack {
            let fits = (1..=8).contains(&w.size)
                && w.off >= -(STACK_SIZE as i64)
                && w.off + w.size as i64 <= 0;
            if !fits {
                return Err(CompileError::Mismatch(format!(
                    "restore writes {} bytes at r10{:+}, outside the {STACK_SIZE}-byte frame",
                    w.size, w.off
                )));
            }
            let addr = region::stack((STACK_SIZE as i64 + w.off) as usize);
            stack.push((addr, w.size as usize, resolve(w.value, buff)));
        }
        Ok(self.run_from(buff, md, bundle as usize, Some((&regs, &stack))))
    }

    /// Runs one packet from bundle `entry`; with `restore`, r0-r9 are set to its registers and its stores of
    /// (address, bytes, value) are made into the zeroed frame first.
    fn run_from(
        &mut self,
        buff: &mut XdpBuff,
        md: &XdpMd,
        entry: usize,
        restore: Option<(&[u64; 10], &[StackStore])>,
    ) -> Verdict {
        let (meta, data, data_end) = buff.offsets();
        if self.buckets_stale {
            self.rebuild_buckets();
        }
        let mut hosted = self.machine.hosted(buff, md);
        if let Some((regs, stack)) = restore {
            hosted.regs()[0..10].copy_from_slice(regs);
            for &(addr, size, value) in stack {
                // The frame is the machine's own, inside the 512 bytes: the stores cannot fail.
                let stored = hosted.store(addr, size, value);
                debug_assert!(stored.is_ok(), "{stored:?}");
            }
        }
        let mut run = Run {
            image: &self.image,
            cycles: START_CYCLES,
            bundles: 0,
            data,
            frames: data_end.saturating_sub(data).div_ceil(FRAME_BYTES) as u64,
            present: self.packet_present,
            calls: Vec::new(),
            bounds: PacketBounds {
                meta: meta as u64,
                data: data as u64,
                end: data_end as u64,
                high: data_end as u64,
            },
            tail_calls: 0,
            buckets: &mut self.buckets,
        };
        let end = run.execute(&mut hosted, entry);
        self.last_hosted = hosted.finish();
        self.last_calls = std::mem::take(&mut run.calls);
        // The input queue moves the next packet's frames while this one runs, so only the core's busy time counts
        // (waits for frames not yet arrived are in it, see `wait_for_packet`).
        let cycles = run.cycles;
        self.last_cycles = cycles;
        let s = &mut self.stats;
        s.min = if s.packets == 0 {
            cycles
        } else {
            s.min.min(cycles)
        };
        s.max = s.max.max(cycles);
        s.packets += 1;
        s.cycles += cycles;
        s.bundles += run.bundles;
        match end {
            End::Verdict(v) => {
                self.last_fault = None;
                Verdict::from_retval(v)
            }
            End::Fault(f) => {
                self.last_fault = Some(f.to_string());
                Verdict::from_retval(0)
            }
        }
    }
}

struct Run<'a> {
    image: &'a Image,
    cycles: u64,
    bundles: u64,
    /// Page offset of the packet's first byte at entry.
    data: usize,
    /// Frames the packet arrives in (32 bytes each).
    frames: u64,
    /// The whole packet is stored at the start: no arrival waits.
    present: bool,
    /// (helper id, cycle of the call) of every helper call.
    calls: Vec<(i32, u64)>,
    /// The packet's page offsets as the APS holds them (moved by the adjust helpers).
    bounds: PacketBounds,
    /// Successful tail calls so far.
    tail_calls: u64,
    /// The hash maps' buckets, kept in step with the packet's map updates and deletes.
    buckets: &'a mut Vec<Option<Buckets>>,
}

/// What decode sees of the previous bundle while it is in execute (nothing after a taken transfer: squashed).
#[derive(Default)]
struct Prev {
    /// Registers written, with their lanes (none for helper results).
    writes: Vec<(u8, Option<usize>)>,
    /// Every store and atomic: (address, bytes).
    stores: Vec<(u64, u64)>,
}

impl Prev {
    /// Stores through the data bus (packet and map value) take their lanes' bus ports.
    fn bus_stores(&self) -> usize {
        self.stores.iter().filter(|&&(a, _)| on_bus(a)).count()
    }

    /// A store to a map value: its fault would only come back in commit.
    fn map_store(&self) -> bool {
        self.stores
            .iter()
            .any(|&(a, _)| region::region(a) == Region::MapValue)
    }
}

/// Helper id of `bpf_tail_call`.
const TAIL_CALL_HELPER: i32 = 12;
/// Helper ids of `bpf_xdp_adjust_head`, `_meta` and `_tail`.
const ADJUST_HEAD_HELPER: i32 = 44;
const ADJUST_META_HELPER: i32 = 54;
const ADJUST_TAIL_HELPER: i32 = 65;
/// `BPF_MAP_TYPE_DEVMAP`.
const DEVMAP_TYPE: u32 = 14;
/// BPF_MAP_TYPE_LRU_HASH.
const LRU_HASH_TYPE: u32 = 9;
/// r0 of a map update that found no LRU node (-ENOMEM).
const ENOMEM_R0: u64 = -12i64 as u64;

/// Tag-2 and tag-4 addresses go through the data bus (context and stack are inside the core).
fn on_bus(addr: u64) -> bool {
    matches!(region::region(addr), Region::Packet | Region::MapValue)
}

fn is_atomic(op: &Op) -> bool {
    op.class() == CLASS_STX && op.code & 0xe0 == MODE_ATOMIC
}

/// The address a load, store or atomic accesses, operands from `r`.
fn access_addr(op: &Op, r: &[u64; 16]) -> u64 {
    let base = if op.is_load() { op.src } else { op.dst };
    r[base as usize & 15].wrapping_add(op.off as i64 as u64)
}

impl Run<'_> {
    /// Ends the packet with a fault found in execute.
    fn fault(&mut self, f: FaultKind) -> End {
        self.cycles += FAULT_CYCLES;
        End::Fault(f)
    }

    fn execute(&mut self, vm: &mut Hosted, entry: usize) -> End {
        let mut pc = entry;
        let mut frames: Vec<Frame> = Vec::new();
        let mut prev = Prev::default();
        loop {
            let Some(bundle) = self.image.bundles.get(pc) else {
                // The fetch past the image's end counts as a bundle; execute finds it empty-handed.
                self.cycles += BUNDLE_CYCLES;
                return self.fault(FaultKind::FellOff);
            };
            self.bundles += 1;
            if self.bundles > BUNDLE_BUDGET {
                return End::Fault(FaultKind::Budget {
                    budget: BUNDLE_BUDGET,
                });
            }
            self.cycles += BUNDLE_CYCLES;
            let snap = *vm.regs();
            // Decode: the bundle waits for the previous one (cross-lane operands, bus hazards) and for packet bytes.
            let cross_lane = bundle.ops().any(|(lane, op)| {
                let r = crate::ir::reads(op);
                prev.writes
                    .iter()
                    .any(|&(reg, l)| r & (1 << reg) != 0 && l.is_some_and(|l| l != lane))
            });
            let bus_reads: Vec<(u64, u64)> = bundle
                .ops()
                .filter(|(_, op)| op.is_load() || is_atomic(op))
                .map(|(_, op)| (access_addr(op, &snap), op.access_size() as u64))
                .filter(|&(a, _)| on_bus(a))
                .collect();
            let bus_hazard = prev.bus_stores() + bus_reads.len() > self.image.lanes
                || bus_reads.iter().any(|&(a, n)| {
                    prev.stores
                        .iter()
                        .any(|&(b, m)| a < b.wrapping_add(m) && b < a.wrapping_add(n))
                });
            if cross_lane {
                self.cycles += CROSS_LANE_STALL_CYCLES;
            } else if bus_hazard {
                self.cycles += BUS_HAZARD_CYCLES;
            }
            for &(addr, size) in &bus_reads {
                // Only a load that succeeds reads bytes; one outside the packet faults without waiting.
                if vm.bytes(addr, size as usize, "load").is_ok() {
                    self.wait_for_packet(addr, size as usize);
                }
            }
            // Execute: a bundle with a division waits for the shared divider before anything of it happens.
            if bundle.ops().any(|(_, op)| crate::sched::is_div(op)) {
                self.cycles += DIV_CYCLES;
            }
            let mut pending: Vec<(u8, u64)> = Vec::new();
            let mut writes_now: Vec<(u8, Option<usize>)> = Vec::new();
            // Phase 1: operands and loads.
            for (lane, op) in bundle.ops() {
                if op.is_alu() || op.is_lddw() {
                    match alu_value(op, &snap) {
                        Some(v) => pending.push((op.dst, v)),
                        None => return self.fault(invalid(op)),
                    }
                    writes_now.push((op.dst, Some(lane)));
                } else if op.is_load() {
                    let addr = access_addr(op, &snap);
                    match load(vm, op, addr) {
                        Ok(v) => pending.push((op.dst, v)),
                        Err(f) => {
                            return match (op.fault_verdict(), region::region(addr)) {
                                (Some(v), Region::Packet) => {
                                    self.cycles += FAULT_CYCLES;
                                    End::Verdict(v)
                                }
                                _ => self.fault(f),
                            }
                        }
                    }
                    writes_now.push((op.dst, Some(lane)));
                }
            }
            // Phase 2: the helper call.
            let mut tail_call = None;
            if let Some((_, op)) = bundle.ops().find(|(_, o)| o.is_helper_call()) {
                let id = op.imm as i32;
                let call = self.cycles + HELPER_CALL_STAGE_CYCLES;
                self.calls.push((id, call));
                vm.regs().copy_from_slice(&snap);
                let handle = if id == TAIL_CALL_HELPER {
                    snap[2]
                } else {
                    snap[1]
                };
                let map = self.map_shape(handle);
                // A DEVMAP lookup's latency depends on whether its index is in range.
                let key_index = match map {
                    Some(m) if id == 1 && m.map_type == DEVMAP_TYPE => vm
                        .bytes(snap[2], 4, "load")
                        .ok()
                        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                    _ => None,
                };
                // A hash or LRU map operation's latency depends on the bucket rows its key's probe reads.
                let hash_key = match map {
                    Some(m) if (1..=3).contains(&id) && in_buckets(m.map_type) => vm
                        .bytes(snap[2], m.key_size as usize, "load")
                        .ok()
                        .map(|b| b.to_vec()),
                    _ => None,
                };
                let map_index = region::offset(handle) as usize;
                let hash_rows = hash_key.as_ref().and_then(|k| {
                    let b = self.buckets.get_mut(map_index)?.as_mut()?;
                    Some(b.rows(k))
                });
                let result = vm.call_helper(id, call);
                // An LRU update's latency depends on the steps its node took (a refill of the local free list), the
                // keys it evicted and its own key's rows; it leaves the buckets as the update left the map.
                let lru_update = matches!(map, Some(m) if id == 2 && m.map_type == LRU_HASH_TYPE);
                let lru_steps = match (lru_update, &hash_key) {
                    (true, Some(k)) => {
                        let maps = vm.maps();
                        let steps = maps.lru_pop_steps(map_index).unwrap_or(0);
                        let evicted = maps.lru_evicted(map_index).unwrap_or(&[]);
                        let r0 = result.as_ref().ok().copied();
                        let taken = steps > 0 && r0 != Some(ENOMEM_R0);
                        match self.buckets.get_mut(map_index) {
                            Some(Some(b)) => Some(lru_update_cycles(
                                b,
                                steps,
                                evicted,
                                k,
                                taken,
                                r0 == Some(0),
                            )),
                            _ => Some(steps),
                        }
                    }
                    _ => None,
                };
                if let (Some(k), Ok(0), false) = (&hash_key, &result, lru_update) {
                    if let Some(Some(b)) = self.buckets.get_mut(map_index) {
                        match id {
                            2 => b.insert(k),
                            3 => b.remove(k),
                            _ => {}
                        }
                    }
                }
                let latency = helper_latency(&HelperCall {
                    id,
                    args: [snap[1], snap[2], snap[3], snap[4], snap[5]],
                    r0: result.as_ref().ok().copied(),
                    map,
                    key_index,
                    hash_rows,
                    lru_steps,
                    tail_calls: self.tail_calls,
                    cycle: call + HELPER_REGISTER_CYCLES,
                    lanes: self.image.lanes,
                    bounds: self.bounds,
                    ready: &|addr, bytes| self.ready(addr, bytes),
                });
                self.cycles += HELPER_REGISTER_CYCLES + latency;
                if let Ok(0) = result {
                    self.adjusted(id, snap[2]);
                }
                match result {
                    // bpf_tail_call leaves r0 as it was (the reference's helper hands it back unchanged; the core's
                    // helper bus does not carry r0), so a same-bundle write of r0 would stand.
                    Ok(_) if id == TAIL_CALL_HELPER => {}
                    Ok(r0) => {
                        pending.push((0, r0));
                        writes_now.push((0, None));
                    }
                    Err(f) => return self.fault(f),
                }
                tail_call = vm.take_tail_call();
                if tail_call.is_some() {
                    self.tail_calls += 1;
                    // The helper pointed r1 at the context for the next program.
                    let r1 = vm.regs()[1];
                    pending.push((1, r1));
                }
            }
            // Phase 3: stores in lane order, then register results.
            let mut stores_now = Vec::new();
            for (lane, op) in bundle.ops() {
                if !op.is_store() {
                    continue;
                }
                let addr = access_addr(op, &snap);
                stores_now.push((addr, op.access_size() as u64));
                match store(vm, op, addr, &snap) {
                    Ok(Some((reg, v))) => {
                        pending.push((reg, v));
                        writes_now.push((reg, Some(lane)));
                    }
                    Ok(None) => {}
                    Err(f) if region::region(addr) == Region::MapValue && !is_atomic(op) => {
                        self.cycles += BUS_STORE_FAULT_CYCLES;
                        return End::Fault(f);
                    }
                    Err(f) => return self.fault(f),
                }
            }
            {
                let regs = vm.regs();
                for (reg, v) in pending {
                    regs[reg as usize & 15] = v;
                }
            }
            let last = std::mem::replace(
                &mut prev,
                Prev {
                    writes: writes_now,
                    stores: stores_now,
                },
            );
            // Control: a tail call first, then the lowest lane whose transfer happens.
            if let Some(next) = tail_call {
                match self.image.entries.get(next) {
                    Some(&e) if (e as usize) < self.image.bundles.len() => {
                        // As the reference machine: the stack and the call frames stay (the tail-called program's
                        // exit returns to the caller of the function that tail-called), r1 is the context.
                        pc = e as usize;
                        self.cycles += TAKEN_BRANCH_CYCLES;
                        prev = Prev::default();
                        continue;
                    }
                    _ => {
                        return self.fault(FaultKind::Helper {
                            helper: "bpf_tail_call",
                            message: format!("program {next} is not in the hxdp image"),
                        })
                    }
                }
            }
            let mut next_pc = pc + 1;
            for (_, op) in bundle.ops() {
                let r = &snap;
                if op.is_exit() {
                    if op.code == EXIT_IMM {
                        vm.regs()[0] = op.imm as u64;
                    }
                    match frames.pop() {
                        Some(f) => {
                            let regs = vm.regs();
                            regs[6..10].copy_from_slice(&f.saved);
                            regs[10] = regs[10].wrapping_sub(STACK_SIZE as u64);
                            next_pc = f.return_pc;
                            self.cycles += TAKEN_BRANCH_CYCLES;
                            prev = Prev::default();
                            break;
                        }
                        None => {
                            let early =
                                op.code == EXIT_IMM && bundle.count() == 1 && !last.map_store();
                            self.cycles += if early {
                                EARLY_EXIT_CYCLES
                            } else {
                                DRAIN_CYCLES
                            };
                            return End::Verdict(vm.regs()[0] as u32);
                        }
                    }
                }
                if op.is_local_call() {
                    if frames.len() + 1 >= hwxdp_xdp::MAX_CALL_FRAMES {
                        return self.fault(FaultKind::CallDepth {
                            max: hwxdp_xdp::MAX_CALL_FRAMES,
                        });
                    }
                    let regs = vm.regs();
                    let mut saved = [0; 4];
                    saved.copy_from_slice(&regs[6..10]);
                    frames.push(Frame {
                        return_pc: pc + 1,
                        saved,
                    });
                    regs[10] = regs[10].wrapping_add(STACK_SIZE as u64);
                    next_pc = op.imm as usize;
                    self.cycles += TAKEN_BRANCH_CYCLES;
                    prev = Prev::default();
                    break;
                }
                let taken = if op.is_ja() {
                    true
                } else if op.is_cond_jump() {
                    let wide = op.class() == CLASS_JMP;
                    let b = if op.code & SRC_X != 0 {
                        r[op.src as usize & 15]
                    } else {
                        op.imm as u64
                    };
                    match alu::condition(op.code & 0xf0, wide, r[op.dst as usize & 15], b) {
                        Some(t) => t,
                        None => return self.fault(invalid(op)),
                    }
                } else {
                    false
                };
                if taken {
                    next_pc = op.off as u16 as usize;
                    self.cycles += TAKEN_BRANCH_CYCLES;
                    prev = Prev::default();
                    break;
                }
            }
            pc = next_pc;
        }
    }

    /// The first cycle a read of `bytes` bytes at `addr` may go out: packet bytes once their frame is stored (frame
    /// k is written in cycle k - 1 + START_CYCLES and readable from the next), anything else at once.
    fn ready(&self, addr: u64, bytes: u64) -> u64 {
        if self.present || region::region(addr) != Region::Packet {
            return 0;
        }
        let end = (region::offset(addr) + bytes).saturating_sub(self.data as u64);
        // Bytes past the packet's arrival (a grown tail) are there once the last frame is.
        let frame = end.div_ceil(FRAME_BYTES as u64).min(self.frames);
        if frame == 0 {
            0
        } else {
            frame + START_CYCLES
        }
    }

    /// The map a helper's handle argument names, if it is one of the image's maps (else the helper module faults).
    fn map_shape(&self, handle: u64) -> Option<MapShape> {
        if region::region(handle) != Region::MapHandle {
            return None;
        }
        let m = self.image.maps.get(region::offset(handle) as usize)?;
        Some(MapShape {
            map_type: m.map_type,
            key_size: m.key_size,
            value_size: m.value_size,
            max_entries: m.max_entries,
        })
    }

    /// Follows a successful adjust helper (`delta` its r2) in the packet's bounds, as the APS moves them.
    fn adjusted(&mut self, id: i32, delta: u64) {
        let delta = delta as u32 as i32 as i64;
        let b = &mut self.bounds;
        let moved = |v: u64| (v as i64 + delta) as u64;
        match id {
            ADJUST_HEAD_HELPER => {
                b.data = moved(b.data);
                b.meta = moved(b.meta);
            }
            ADJUST_META_HELPER => b.meta = moved(b.meta),
            ADJUST_TAIL_HELPER => {
                b.end = moved(b.end);
                b.high = b.high.max(b.end);
            }
            _ => {}
        }
    }

    /// Early start: stalls decode until the frame holding the last byte of a packet load is stored.
    fn wait_for_packet(&mut self, addr: u64, size: usize) {
        if self.present || region::region(addr) != Region::Packet {
            return;
        }
        let end = (region::offset(addr) as usize + size).saturating_sub(self.data);
        // Bytes past the packet's arrival (a grown tail) are there once the last frame is.
        let frame = (end.div_ceil(FRAME_BYTES) as u64).min(self.frames);
        // Frame k (from 1) is written in cycle k - 1 + START_CYCLES and read from the next; the load goes out in
        // decode. Bytes before the packet's data (frame 0) are there from the start.
        let ready = if frame == 0 {
            0
        } else {
            (frame + START_CYCLES).saturating_sub(LOAD_ISSUE_CYCLES)
        };
        if self.cycles < ready {
            self.cycles = ready;
        }
    }
}

/// A restore's store into the frame: (address, bytes, value).
type StackStore = (u64, usize, u64);

/// The core's 64-bit value of a restored value for the packet in `buff` (the reference machine's addresses, which
/// the core shares).
fn resolve(v: ResumeValue, buff: &XdpBuff) -> u64 {
    let (_, data, end) = buff.offsets();
    let at = |base: usize, off: i64| (base as i64).wrapping_add(off) as u64;
    match v {
        ResumeValue::Scalar(v) => v,
        ResumeValue::Context => region::context(),
        ResumeValue::Packet(off) => region::packet(0).wrapping_add(at(data, off)),
        ResumeValue::PacketEnd(off) => region::packet(0).wrapping_add(at(end, off)),
        ResumeValue::Stack(off) => region::stack(0).wrapping_add(at(STACK_SIZE, off)),
        ResumeValue::Map(m) => region::map_handle(m as usize),
    }
}

fn invalid(op: &Op) -> FaultKind {
    FaultKind::Helper {
        helper: "decode",
        message: format!("invalid hxdp op {:#04x}", op.code),
    }
}

/// The result of an ALU op or `lddw`, operands from `r`.
fn alu_value(op: &Op, r: &[u64; 16]) -> Option<u64> {
    if op.is_lddw() {
        return Some(match op.src {
            PSEUDO_MAP_FD => region::map_handle((op.imm & 0xffff_ffff) as usize),
            PSEUDO_MAP_VALUE => {
                region::map_value((op.imm & 0xffff_ffff) as usize, 0, (op.imm >> 32) as u32)
            }
            _ => op.imm as u64,
        });
    }
    let wide = op.class() == CLASS_ALU64;
    let operation = op.code & 0xf0;
    let x = op.code & SRC_X != 0;
    let first = r[op.a.unwrap_or(op.dst) as usize & 15];
    if operation == ALU_END {
        return alu::endian(first, op.imm, wide || x);
    }
    let s = if x {
        r[op.src as usize & 15]
    } else {
        op.imm as u64
    };
    if wide {
        alu::alu64(operation, op.off, first, s)
    } else {
        alu::alu32(operation, op.off, first, s)
    }
}

fn load(vm: &mut Hosted, op: &Op, addr: u64) -> Result<u64, FaultKind> {
    let size = op.access_size();
    if op.code == LDX6 {
        let b = vm.bytes(addr, 6, "load")?;
        let mut v = [0u8; 8];
        v[..6].copy_from_slice(&b[..6]);
        return Ok(u64::from_le_bytes(v));
    }
    let v = vm.load(addr, size)?;
    Ok(if op.code & 0xe0 == MODE_MEMSX {
        match size {
            1 => v as i8 as i64 as u64,
            2 => v as i16 as i64 as u64,
            4 => v as i32 as i64 as u64,
            _ => v,
        }
    } else {
        v
    })
}

/// Performs a store or atomic; returns a register an atomic writes back.
fn store(
    vm: &mut Hosted,
    op: &Op,
    addr: u64,
    r: &[u64; 16],
) -> Result<Option<(u8, u64)>, FaultKind> {
    let size = op.access_size();
    if op.code == STX6 {
        let v = r[op.src as usize & 15].to_le_bytes();
        vm.bytes(addr, 6, "store")?.copy_from_slice(&v[..6]);
        return Ok(None);
    }
    if op.class() == CLASS_ST {
        vm.store(addr, size, op.imm as u64)?;
        return Ok(None);
    }
    if op.code & 0xe0 != MODE_ATOMIC {
        vm.store(addr, size, r[op.src as usize & 15])?;
        return Ok(None);
    }
    if size != 4 && size != 8 {
        return Err(invalid(op));
    }
    let old = vm.load(addr, size)?;
    let narrow = |v: u64| if size == 4 { v as u32 as u64 } else { v };
    let operand = narrow(r[op.src as usize & 15]);
    let imm = op.imm as i32;
    if imm == ATOMIC_CMPXCHG {
        if old == narrow(r[0]) {
            vm.store(addr, size, operand)?;
        }
        return Ok(Some((0, old)));
    }
    if imm & !ATOMIC_FETCH == 0xe0 && imm & ATOMIC_FETCH == 0 {
        return Err(invalid(op));
    }
    let new = alu::atomic_rmw(imm, old, operand).ok_or_else(|| invalid(op))?;
    vm.store(addr, size, new)?;
    Ok((imm & ATOMIC_FETCH != 0).then_some((op.src, old)))
}
