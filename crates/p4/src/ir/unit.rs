//! The parser, the control and what the control declares: actions, tables, counters.

use super::{ActionId, Expr, KeysetElem, LocalId, StateId, Stmt};
use crate::diag::Span;

/// Which architecture model the program's `main` instantiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// `xdp(parser, switch, deparser) main;` of `xdp_model.p4`.
    Xdp,
    /// `ebpfFilter(parser, filter) main;` of `ebpf_model.p4`.
    EbpfFilter,
}

/// The parser: states, the first being `start`.
#[derive(Clone, Debug, PartialEq)]
pub struct Parser {
    /// The parser's name.
    pub name: String,
    /// Its states; [`Parser::START`] is `start`. The parser's own variable declarations (outside any state) are
    /// [`Stmt::Declare`]s at the beginning of `start`'s statements.
    pub states: Vec<State>,
    /// Its `value_set` instances; a [`SelectCase::value_set`] is an index into them.
    pub value_sets: Vec<ValueSet>,
}

/// A `value_set<T>(size)` of the parser: a set of key tuples the control plane fills (a hash map, docs/p4.md), which
/// a `select` case matches when its keys are in it.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueSet {
    /// The instance's name (the map's name).
    pub name: String,
    /// The element's fields and their widths in bits: `field0` for a `bit<N>`, `field0`, `field1`, ... for a tuple,
    /// the field names of a struct or header.
    pub fields: Vec<(String, u32)>,
    /// `size`: how many elements the set holds.
    pub size: u32,
    /// The name of its `@name("...")` annotation (a leading `.` removed), if any.
    pub annotated: Option<String>,
    /// Where it was declared.
    pub span: Span,
}

impl ValueSet {
    /// The size of the map's key in bytes: every field big-endian in `ceil(width / 8)` bytes, packed.
    pub fn key_bytes(&self) -> u32 {
        self.fields.iter().map(|(_, w)| w.div_ceil(8)).sum()
    }
}

impl Parser {
    /// The index of the `start` state.
    pub const START: StateId = 0;
}

/// A parser state.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The state's name.
    pub name: String,
    /// Its statements (extract, advance, verify, assignments, declarations, `if`).
    pub stmts: Vec<Stmt>,
    /// Where it goes next.
    pub transition: Transition,
}

/// Where a parser state goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `accept`: parsing is done.
    Accept,
    /// `reject`: parsing failed; the packet is dropped (XDP model) or not accepted (filter model).
    Reject,
    /// Another state.
    State(StateId),
}

/// The end of a state.
#[derive(Clone, Debug, PartialEq)]
pub enum Transition {
    /// `transition name;`.
    Direct(Target),
    /// `transition select(keys) { cases }`; no matching case rejects with `error.NoMatch`.
    Select {
        /// The selected values.
        keys: Vec<Expr>,
        /// The cases in order; the first that matches wins.
        cases: Vec<SelectCase>,
    },
}

/// One case of a select.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectCase {
    /// One keyset per key (`default` is `Any` for every key; so is a value set's case).
    pub keysets: Vec<KeysetElem>,
    /// The case is a value set (an index into [`Parser::value_sets`]): it matches when the keys are in the set.
    pub value_set: Option<usize>,
    /// Where it goes.
    pub target: Target,
}

/// The control: its actions, tables and counters, and its `apply` block.
#[derive(Clone, Debug, PartialEq)]
pub struct Control {
    /// The control's name.
    pub name: String,
    /// Every action the control can run, `NoAction` included when used.
    pub actions: Vec<Action>,
    /// Its tables.
    pub tables: Vec<Table>,
    /// Its `CounterArray` instances.
    pub counters: Vec<Counter>,
    /// The `apply` block. The control's own variable declarations (outside `apply`, read and written by actions
    /// too) come first, as [`Stmt::Declare`]s in declaration order, so they run before anything else.
    pub apply: Vec<Stmt>,
}

/// An action.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// The action's name.
    pub name: String,
    /// Its parameters, all directionless (action data): locals set before the body runs.
    pub params: Vec<LocalId>,
    /// Its body.
    pub body: Vec<Stmt>,
    /// The name of its `@name("...")` annotation (a leading `.` removed), which STF scripts may use too.
    pub annotated: Option<String>,
    /// Where it was declared.
    pub span: Span,
}

/// How a table key is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    /// `exact`.
    Exact,
    /// `lpm`.
    Lpm,
    /// `ternary`.
    Ternary,
}

/// One field of a table key.
#[derive(Clone, Debug, PartialEq)]
pub struct TableKey {
    /// The key as written, e.g. `hd.ipv4.dstAddr` (STF files name key fields by it, or by its last component).
    pub name: String,
    /// The value matched, of type `Bit`/`Int`/`Bool`/serializable enum.
    pub expr: Expr,
    /// How it is matched.
    pub kind: MatchKind,
    /// Its width in bits.
    pub width: u32,
    /// The name of its `@name("...")` annotation (before the expression or after the match kind), if any.
    pub annotated: Option<String>,
}

/// `implementation = ...` of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableImpl {
    /// No implementation given: the map type follows from the key (hash, LPM trie, or ternary array).
    Default,
    /// `array_table(size)`: an array map indexed by the (single, exact) key.
    Array,
    /// `hash_table(size)`.
    Hash,
}

/// A `const entries` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstEntry {
    /// One keyset per key.
    pub keys: Vec<KeysetElem>,
    /// The action run on a match.
    pub action: ActionId,
    /// Its arguments, folded to constants, one per action parameter.
    pub args: Vec<u128>,
}

/// A table.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// The table's name (the map's name).
    pub name: String,
    /// The key fields in order; empty for a keyless table (which always runs its default action).
    pub keys: Vec<TableKey>,
    /// The actions it may run, in the order of its `actions` list (an action's position is its number in maps).
    pub actions: Vec<ActionId>,
    /// The default action and its arguments (`NoAction` when none is given).
    pub default_action: (ActionId, Vec<u128>),
    /// `const default_action`: the control plane may not change it.
    pub default_is_const: bool,
    /// `const entries`, in priority order (the first that matches wins).
    pub entries: Vec<ConstEntry>,
    /// The actions of `actions` with directional parameters, bound there (`a(h.f)`): whenever the table runs the
    /// action, the copy-in statements run before its body and the copy-out ones after it.
    pub bindings: Vec<(ActionId, Vec<Stmt>, Vec<Stmt>)>,
    /// `size`, default 1024.
    pub size: u32,
    /// `implementation`.
    pub implementation: TableImpl,
    /// The name of its `@name("...")` annotation (a leading `.` removed), if any.
    pub annotated: Option<String>,
    /// Where it was declared.
    pub span: Span,
}

/// Which map holds a table's entries: the "Tables" rows of docs/p4.md ("Maps of a compiled program").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// No key: only the default action runs; there is no entries map.
    Keyless,
    /// `const entries`: compiled into the program; there is no entries map.
    Const,
    /// `BPF_MAP_TYPE_HASH` keyed by the fields.
    Hash,
    /// `BPF_MAP_TYPE_ARRAY` indexed by the single exact field.
    Array,
    /// `BPF_MAP_TYPE_LPM_TRIE`: prefix length, exact fields, the lpm field.
    Lpm,
    /// `BPF_MAP_TYPE_ARRAY` of ranked slots (rank, fields, masks, action value) scanned in order.
    Ternary,
}

impl Table {
    /// The map docs/p4.md ("Maps of a compiled program", "Tables") gives the table. The checker has rejected what
    /// the contract has no map for: several `lpm` fields, `array_table` with more than one field or a non-`exact`
    /// one. A `hash_table` with an `lpm` or `ternary` field is stored as those keys are.
    pub fn storage(&self) -> Storage {
        if self.keys.is_empty() {
            Storage::Keyless
        } else if !self.entries.is_empty() {
            Storage::Const
        } else if self.keys.iter().any(|k| k.kind == MatchKind::Ternary) {
            Storage::Ternary
        } else if self.keys.iter().any(|k| k.kind == MatchKind::Lpm) {
            Storage::Lpm
        } else if self.implementation == TableImpl::Array && self.keys.len() == 1 {
            Storage::Array
        } else {
            Storage::Hash
        }
    }

    /// The key fields as docs/p4.md packs them: `(index in keys, byte offset)` in map order, each field taking
    /// `ceil(width / 8)` bytes; and the key's size in bytes. The order is the key's, except that an LPM trie has
    /// its `exact` fields before the `lpm` field. Offsets do not count an LPM trie's `u32 prefixlen`.
    pub fn key_layout(&self) -> (Vec<(usize, u32)>, u32) {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        if self.storage() == Storage::Lpm {
            order.sort_by_key(|&i| self.keys[i].kind == MatchKind::Lpm);
        }
        let mut off = 0;
        let mut out = Vec::new();
        for i in order {
            out.push((i, off));
            off += self.keys[i].width.div_ceil(8);
        }
        (out, off)
    }
}

/// A `CounterArray(max_index, sparse)` instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    /// The instance's name (the map's name).
    pub name: String,
    /// `max_index`: the number of counters.
    pub size: u32,
    /// `sparse`: a hash map instead of an array.
    pub sparse: bool,
}
