//! The reference machine's memory, maps and helpers driven from outside its interpreter loop, for hardware models
//! that execute their own instruction format but must give the same answers (the hXDP core model).

use crate::exec::{Vm, STACK_BYTES};
use crate::fault::FaultKind;
use crate::machine::{Machine, Outcome};
use crate::{XdpBuff, XdpMd};
use hwxdp_ebpf::STACK_SIZE;

/// One packet's run whose instructions a caller executes: registers, region-checked memory access and helper calls
/// with exactly the reference machine's semantics.
pub struct Hosted<'a> {
    vm: Vm<'a>,
}

impl Machine {
    /// Starts a packet for an external executor: r1 points to the context and r10 to the top of the first frame.
    pub fn hosted<'a>(&'a mut self, buff: &'a mut XdpBuff, md: &XdpMd) -> Hosted<'a> {
        let mut vm = Vm::new(self, buff, md);
        vm.regs[1] = crate::region::context();
        vm.regs[10] = crate::region::stack(STACK_SIZE);
        Hosted { vm }
    }
}

impl Hosted<'_> {
    /// r0-r10 (padded to 16 entries).
    pub fn regs(&mut self) -> &mut [u64; 16] {
        &mut self.vm.regs
    }

    /// Loads `size` (1, 2, 4 or 8) bytes little-endian from a tagged address, context fields included.
    pub fn load(&mut self, addr: u64, size: usize) -> Result<u64, FaultKind> {
        self.vm.load(addr, size)
    }

    /// Stores the low `size` (1, 2, 4 or 8) bytes of `value` at a tagged address.
    pub fn store(&mut self, addr: u64, size: usize, value: u64) -> Result<(), FaultKind> {
        self.vm.store(addr, size, value)
    }

    /// The `size` bytes at a tagged packet, stack or map-value address, bounds-checked as the interpreter does.
    pub fn bytes(
        &mut self,
        addr: u64,
        size: usize,
        access: &'static str,
    ) -> Result<&mut [u8], FaultKind> {
        self.vm.bytes(addr, size, access)
    }

    /// Calls helper `id` with arguments in r1-r5 and returns what it leaves in r0. `now` is the executor's count of
    /// work done so far, which virtual time (`bpf_ktime_get_ns`) adds to the packet's arrival time.
    pub fn call_helper(&mut self, id: i32, now: u64) -> Result<u64, FaultKind> {
        self.vm.outcome.insns = now;
        crate::helpers::call(&mut self.vm, id)
    }

    /// The maps, read-only (a hardware model's timing reads what the last helper call did to them).
    pub fn maps(&self) -> &hwxdp_maps::Maps {
        self.vm.maps
    }

    /// The program a successful `bpf_tail_call` continues in (index into the object's programs), once.
    pub fn take_tail_call(&mut self) -> Option<usize> {
        self.vm.tail_call_to.take()
    }

    /// Ends the packet: clears the stack for the next one and returns what the helpers recorded (redirect target,
    /// printk lines). The caller sets the verdict.
    pub fn finish(self) -> Outcome {
        let used = STACK_BYTES.min(self.vm.stack.len());
        self.vm.stack[..used].fill(0);
        self.vm.outcome
    }
}
