//! The pipeline IR: what a Verilog generator instantiates.
//!
//! A [`Pipeline`] is a sequence of [`Stage`]s. Stage `k` reads the state at boundary `k` (its input registers) and
//! writes the state at boundary `k + 1`; an [`Op`] in stage `k` reads its source registers from boundary `k` and its
//! results appear at boundary `k + 1` (no chaining inside a stage). Every op runs under the predicate of its block
//! ([`PredDef`]); a disabled op leaves its destination as it was. Two ops of one stage that write the same register
//! are either on exclusive paths or ordered by program order: the later op (higher [`Op::insn`]) wins.

use hwxdp_analysis::{MemRegion, RegSet, StackBytes};
use serde::Serialize;

/// The memory region of an instruction (eHDL's instruction label).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "region", rename_all = "snake_case")]
pub enum Label {
    /// No memory access.
    None,
    /// The packet at a byte offset from `data` (`None`: computed at run time).
    Packet {
        /// Offset from `data`.
        offset: Option<i64>,
    },
    /// The metadata area before `data`.
    PacketMeta {
        /// Offset from `data_meta`.
        offset: Option<i64>,
    },
    /// The stack at an r10-relative offset (`None`: computed at run time).
    Stack {
        /// Offset from r10.
        offset: Option<i64>,
    },
    /// A field of `struct xdp_md`.
    Context {
        /// Byte offset into the struct.
        offset: Option<i64>,
    },
    /// A value of map `map` (the pointer is a run-time value).
    MapValue {
        /// Map index in the object.
        map: u32,
        /// Offset into the value, when constant.
        offset: Option<i64>,
    },
    /// A helper that works on map `map` (lookup, update, delete...).
    Map {
        /// Map index in the object.
        map: u32,
    },
    /// A memory access the region analysis could not place.
    Unknown,
}

impl Label {
    /// The label of a region from the analysis.
    pub fn from_region(r: MemRegion) -> Label {
        match r {
            MemRegion::Packet { offset } => Label::Packet { offset },
            MemRegion::PacketMeta { offset } => Label::PacketMeta { offset },
            MemRegion::Stack { offset, .. } => Label::Stack { offset },
            MemRegion::Context { offset } => Label::Context { offset },
            MemRegion::MapValue { map, offset } => Label::MapValue { map, offset },
            MemRegion::Unknown => Label::Unknown,
        }
    }

    /// The short name the diagrams print.
    pub fn name(self) -> String {
        let at = |o: Option<i64>| match o {
            Some(o) if o < 0 => format!("{o}"),
            Some(o) => format!("+{o}"),
            None => "+?".into(),
        };
        match self {
            Label::None => "-".into(),
            Label::Packet { offset } => format!("pkt{}", at(offset)),
            Label::PacketMeta { offset } => format!("meta{}", at(offset)),
            Label::Stack { offset } => format!("stack{}", at(offset)),
            Label::Context { offset } => format!("ctx{}", at(offset)),
            Label::MapValue { map, offset } => format!("map{map}{}", at(offset)),
            Label::Map { map } => format!("map{map}"),
            Label::Unknown => "unknown".into(),
        }
    }
}

/// A helper argument known at compile time, wired into the helper block as a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "const", content = "value", rename_all = "snake_case")]
pub enum ArgConst {
    /// A number.
    Scalar(i64),
    /// A pointer into the stack, r10-relative.
    Stack(i64),
    /// A pointer into the packet, from `data`.
    Packet(i64),
    /// A pointer into the metadata, from `data_meta`.
    Meta(i64),
    /// The context pointer.
    Ctx,
    /// A map, by index in the object.
    Map(u32),
}

impl std::fmt::Display for ArgConst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgConst::Scalar(c) => write!(f, "{c}"),
            ArgConst::Stack(o) => write!(f, "stack{o}"),
            ArgConst::Packet(o) => write!(f, "pkt+{o}"),
            ArgConst::Meta(o) => write!(f, "meta+{o}"),
            ArgConst::Ctx => f.write_str("ctx"),
            ArgConst::Map(m) => write!(f, "map{m}"),
        }
    }
}

/// What an operation is, for the choice of hardware template.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OpKind {
    /// Register-to-register arithmetic (also `lddw` constants and sign-extending moves).
    Alu,
    /// `dst = a op b`: a move fused into the arithmetic that followed it (three-operand form).
    Alu3 {
        /// The move's source register.
        a: u8,
    },
    /// A load; the address is a constant when the label has an offset and the region is not a map value.
    Load,
    /// A store.
    Store,
    /// An atomic read-modify-write.
    Atomic,
    /// A conditional jump turned into a predicate computation: its output is "the jump is taken", the jump's
    /// condition on its two operands.
    Cond,
    /// A packet bounds check turned into a compare of the packet length with a constant. Like every condition op
    /// its output is "the jump is taken": `len < ensured` when `taken_if_short`, else `len >= ensured`.
    LenCheck {
        /// Bytes the passing side may access.
        ensured: i64,
        /// Whether the checked area is the metadata (`data_meta + N > data`; its length is `data - data_meta`).
        meta: bool,
        /// Whether the jump goes to the fail side (taken when the packet is too short).
        taken_if_short: bool,
    },
    /// A helper call: a block of its own with R1-R5 in, R0 out; one instance per call site.
    Helper {
        /// Kernel helper id.
        id: i32,
        /// The helper's name.
        name: String,
        /// Which call of this helper in the program (0, 1, ...): each gets its own block.
        instance: u32,
        /// Arguments (among R1-R5) that are compile-time constants; the others come from the registers it reads.
        consts: Vec<(u8, ArgConst)>,
    },
    /// `exit`: the packet's verdict is register `reg` (R0, or the source of a fused `r0 = rY`), or the constant
    /// `imm` of a fused `r0 = imm`.
    Exit {
        /// The register holding the verdict.
        reg: u8,
        /// The verdict, when it is a constant (then no register is read).
        imm: Option<i64>,
    },
}

/// One operation of the pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Op {
    /// Index in [`Pipeline::ops`].
    pub id: u32,
    /// The instruction of the flattened program (program order).
    pub insn: u32,
    /// The instruction of the original program it comes from, by slot index (as `hwxdp disasm` numbers it).
    pub origin: u32,
    /// The flattened instructions fused into this op (besides `insn`).
    pub fused: Vec<u32>,
    /// What it is.
    #[serde(flatten)]
    pub kind: OpKind,
    /// The instruction as text (fused form where fused).
    pub text: String,
    /// The predicate it runs under.
    pub pred: u32,
    /// Memory region.
    pub label: Label,
    /// For a load, store or atomic through a map value pointer: the flattened instruction of the lookup that
    /// returned it, when the analysis knows the one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer_lookup: Option<u32>,
    /// Registers read (never r10, which is a constant; never base registers of constant addresses).
    #[serde(serialize_with = "ser_regs")]
    pub reads: RegSet,
    /// Registers written (for helper calls R0 and the clobbered R1-R5).
    #[serde(serialize_with = "ser_regs")]
    pub writes: RegSet,
    /// Packet frames `[first, last]` the access touches, when the packet offset is known.
    pub frames: Option<(u32, u32)>,
    /// For packet accesses and length checks: how far `bpf_xdp_adjust_head` has moved `data` from the packet's
    /// first arriving byte (negative: bytes prepended); `None` when unknown or not a packet op.
    pub data_shift: Option<i64>,
    /// Stage.
    pub stage: u32,
}

impl Op {
    /// For a helper call, the map its R1 names when that is a constant.
    pub fn map_arg(&self) -> Option<u32> {
        let OpKind::Helper { consts, .. } = &self.kind else {
            return None;
        };
        consts.iter().find_map(|c| match c {
            (1, ArgConst::Map(m)) => Some(*m),
            _ => None,
        })
    }
}

/// A predicate: the condition under which one block (and every block control-equivalent to it) runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PredDef {
    /// Its id; predicate 0 is the entry's (the packet is valid).
    pub id: u32,
    /// The block of the flattened program that leads it (its first instruction).
    pub block_insn: u32,
    /// Disjunction of incoming edges: `(source predicate, condition op and the polarity that takes the edge)`;
    /// `None` for an unconditional edge. Empty for predicate 0.
    pub terms: Vec<(u32, Option<(u32, bool)>)>,
    /// The first stage whose input boundary has it.
    pub ready: u32,
}

/// One pipeline stage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stage {
    /// Its index (= the cycle after the packet's first frame enters).
    pub index: u32,
    /// Ops, by id, in program order.
    pub ops: Vec<u32>,
    /// A helper block stage.
    pub helper: bool,
    /// No op: only there to wait for a packet frame.
    pub nop: bool,
    /// The highest packet frame this stage's ops touch, if any.
    pub frame: Option<u32>,
    /// Live registers at the stage's input boundary.
    #[serde(serialize_with = "ser_regs")]
    pub live_regs: RegSet,
    /// Live stack bytes at the input boundary.
    #[serde(serialize_with = "ser_stack")]
    pub live_stack: StackBytes,
    /// Predicates live at the input boundary.
    pub live_preds: Vec<u32>,
    /// Condition ops (by id) whose outputs are carried at the input boundary, until the predicates using them form.
    pub live_conds: Vec<u32>,
}

impl Stage {
    /// Bits of program state at the input boundary: 64 per register, 8 per stack byte.
    pub fn state_bits(&self) -> u64 {
        let regs = self.live_regs.iter().count() as u64;
        let bytes: i64 = self.live_stack.runs().iter().map(|(lo, hi)| hi - lo).sum();
        regs * 64 + bytes as u64 * 8
    }
}

/// Figures of one pipeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The program's name.
    pub program: String,
    /// Instructions of the original program.
    pub ebpf_insns: usize,
    /// Instructions after inlining and unrolling.
    pub flat_insns: usize,
    /// Ops in the pipeline (after fusion and dead-address removal; no jumps).
    pub ops: usize,
    /// Stages, NOP stages included.
    pub stages: usize,
    /// NOP stages.
    pub nop_stages: usize,
    /// Helper stages.
    pub helper_stages: usize,
    /// Most ops in one stage.
    pub max_ilp: usize,
    /// Ops per non-NOP stage.
    pub mean_ilp: f64,
    /// Sum over stage boundaries of live register and stack bits, with state pruning.
    pub state_bits_pruned: u64,
    /// The same without pruning: 11 registers and 512 stack bytes at every boundary.
    pub state_bits_unpruned: u64,
    /// The largest boundary, in bits, with pruning.
    pub max_boundary_bits: u64,
    /// Packet accesses whose offset is only known at run time.
    pub dynamic_packet_accesses: usize,
    /// The deepest packet frame accessed.
    pub last_frame: Option<u32>,
    /// Data width in bits.
    pub data_width: u32,
    /// Loops unrolled.
    pub loops_unrolled: usize,
    /// Calls inlined.
    pub calls_inlined: usize,
}

/// A program as a pipeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pipeline {
    /// Figures.
    pub summary: Summary,
    /// Predicates.
    pub preds: Vec<PredDef>,
    /// Ops, in program order.
    pub ops: Vec<Op>,
    /// Stages.
    pub stages: Vec<Stage>,
    /// Instructions of the flattened program that became no op, with the reason.
    pub removed: Vec<(u32, String)>,
    /// Loops unrolled.
    pub loops: Vec<crate::flatten::Unrolled>,
    /// The programs (indices in the object's program list) inlined as tail-call targets: the host may put only these
    /// in a PROG_ARRAY slot.
    pub tail_targets: Vec<u32>,
    /// The flattened program's instructions, which [`Op::insn`] indexes (the Verilog generator decodes them).
    #[serde(skip)]
    pub insns: Vec<hwxdp_ebpf::Insn>,
}

/// Bits of program state with pruning off, per boundary: 11 64-bit registers and 512 stack bytes.
pub const UNPRUNED_BOUNDARY_BITS: u64 = 11 * 64 + 512 * 8;

fn ser_regs<S: serde::Serializer>(r: &RegSet, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(r.iter())
}

fn ser_stack<S: serde::Serializer>(b: &StackBytes, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(b.runs())
}
