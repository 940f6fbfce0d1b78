//! STF ("simple test framework") scripts of the P4 tools, for programs compiled by this crate: the grammar
//! ([`parse()`]), the map entries table commands become ([`Encoder`], following the map layout of `docs/p4.md`), and the
//! matching of output packets against `expect` lines ([`Matcher`]). Pure: no I/O; the `hwxdp stf` command runs them.
//!
//! ```
//! use hwxdp_p4::stf::{parse, Command};
//! let script = parse("t.stf", "# forward\npacket 1 0011 2233\nexpect 1 0011 **33 $\n").unwrap();
//! assert_eq!(script.len(), 2);
//! assert!(matches!(script[0], (2, Command::Packet { port: 1, .. })));
//! ```
//!
//! Departures from the P4 tools, all documented where they apply: `expect PORT` without data stands for exactly one
//! packet of any content; counters hold one `u32` per index, which `check_counter` compares whether `packets` or
//! `bytes` is written; `add` entry handles (`= NAME`) and `remove` are not supported.

mod encode;
mod expect;
mod keys;
mod parse;

pub use encode::{CounterRef, Encoder, MapWrite, TERNARY_MAX_PRIORITY};
pub use expect::{Failure, Matcher};
pub use parse::parse;

use thiserror::Error;

/// An error in an STF script, shown as `file:line: message`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}:{line}: {message}")]
pub struct StfError {
    /// The script's file name as given.
    pub file: String,
    /// 1-based line of the command.
    pub line: usize,
    /// One short lower-case sentence.
    pub message: String,
}

impl StfError {
    /// An error at `line` of `file`.
    pub fn new(file: &str, line: usize, message: impl Into<String>) -> StfError {
        StfError {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// A parsed script: every command with its 1-based line, in file order.
pub type Script = Vec<(usize, Command)>;

/// One STF command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `packet PORT HEX`: a packet arrives on `port`.
    Packet {
        /// The test port it arrives on (the runner maps test port `p` to interface index `p + 1`).
        port: u32,
        /// The packet's bytes.
        data: Vec<u8>,
    },
    /// `expect PORT [HEX]`: the next packet sent out on `port` looks like this (`None`: any packet).
    Expect {
        /// The test port it leaves on.
        port: u32,
        /// What the packet must look like, or `None` for any content.
        pattern: Option<Pattern>,
    },
    /// `add TABLE [PRIO] key:VALUE ... ACTION(arg:VALUE, ...)`, or `add VALUE_SET key:VALUE ...` (no action): an
    /// element of a parser's `value_set`.
    Add {
        /// The table, as written (possibly qualified, `pipe.tbl`).
        table: String,
        /// The priority of a ternary entry: of the matching entries the numerically highest wins.
        priority: Option<u32>,
        /// Key fields as written (full key expression or a suffix of it) with their values.
        keys: Vec<(String, KeyValue)>,
        /// The action and its arguments; `None` for an element of a value set.
        action: Option<ActionCall>,
    },
    /// `setdefault TABLE ACTION(args)`.
    SetDefault {
        /// The table, as written.
        table: String,
        /// The action and its arguments.
        action: ActionCall,
    },
    /// `check_counter NAME(INDEX) [bytes|packets] OP N`.
    CheckCounter {
        /// The counter instance, as written.
        counter: String,
        /// The index.
        index: u32,
        /// `packets` or `bytes` if written (both read the one count a `CounterArray` keeps).
        kind: Option<CountKind>,
        /// The comparison.
        op: CmpOp,
        /// The number compared with.
        value: u64,
    },
    /// `wait`: a no-op here, packets run synchronously.
    Wait,
}

/// An action with named arguments, `set_nhop(port:2, mac:0x001122334455)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionCall {
    /// The action's name as written (possibly qualified, `pipe.set_nhop`).
    pub name: String,
    /// Arguments by parameter name, in the order written.
    pub args: Vec<(String, u128)>,
}

/// The value given for one key field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyValue {
    /// A number; bits written as `*` (hex nibbles or binary digits) are in `dont_care`.
    Value {
        /// The value, `*` digits read as 0.
        value: u128,
        /// Bits that may take any value.
        dont_care: u128,
    },
    /// `VALUE&&&MASK`.
    Masked {
        /// The value.
        value: u128,
        /// Bits that must match.
        mask: u128,
    },
    /// `VALUE/LEN`.
    Prefix {
        /// The value.
        value: u128,
        /// How many leading bits of the field must match.
        len: u32,
    },
}

/// `packets` or `bytes` of `check_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountKind {
    /// `packets`.
    Packets,
    /// `bytes`.
    Bytes,
}

/// The comparison of `check_counter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
}

impl CmpOp {
    /// Whether `actual OP expected` holds.
    pub fn holds(self, actual: u64, expected: u64) -> bool {
        match self {
            CmpOp::Eq => actual == expected,
            CmpOp::Ne => actual != expected,
            CmpOp::Lt => actual < expected,
            CmpOp::Gt => actual > expected,
            CmpOp::Le => actual <= expected,
            CmpOp::Ge => actual >= expected,
        }
    }

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Gt => ">",
            CmpOp::Le => "<=",
            CmpOp::Ge => ">=",
        }
    }
}

/// What an expected packet looks like: hex nibbles, `None` for a `*` wildcard. Without `exact` the packet may be
/// longer than the pattern (prefix match); with it (a trailing `$`) its length must be the pattern's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// The nibbles, most significant first.
    pub nibbles: Vec<Option<u8>>,
    /// The packet must end where the pattern ends.
    pub exact: bool,
}
