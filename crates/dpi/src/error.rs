//! The errors of the DPI front end: every one names the rule (its line in the rules file) it is about.

use thiserror::Error;

/// Why a rules file could not be compiled.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DpiError {
    /// A line that is neither a rule of our format nor of the Snort subset.
    #[error("line {line}: {message}")]
    Syntax {
        /// The rule's line in the rules file, from 1.
        line: usize,
        /// What is wrong, in a few words.
        message: String,
    },
    /// A Snort keyword (rule option, action or header part) outside the subset we compile.
    #[error("line {line}: unsupported Snort keyword `{keyword}`: {reason}")]
    Unsupported {
        /// The rule's line.
        line: usize,
        /// The keyword as written.
        keyword: String,
        /// Why, or what to write instead.
        reason: String,
    },
    /// A regular expression the parser refuses, or one we cannot compile (look-around, empty match).
    #[error("line {line}: pattern `{pattern}`: {reason}")]
    Pattern {
        /// The rule's line.
        line: usize,
        /// The pattern as written, its first 80 characters and its length when longer.
        pattern: String,
        /// Why it is refused.
        reason: String,
    },
    /// The DFA of a rule set grew past the size limit.
    #[error(
        "line {line}: the DFA of this rule{} exceeds the size limit of {limit} bytes (--dfa-limit): {reason}",
        if *alone { "" } else { " with the rules before it that scan the same packets" }
    )]
    DfaTooBig {
        /// The line of the rule whose addition crossed the limit.
        line: usize,
        /// The limit in bytes.
        limit: usize,
        /// The rule's own patterns are over the limit (not only together with earlier rules).
        alone: bool,
        /// regex-automata's words.
        reason: String,
    },
    /// The DFA of one rule alone is too big.
    #[error("the DFAs have {states} states together, more than the {max} a table of 16-bit entries holds (one bit is the match flag)")]
    TooManyStates {
        /// States the rule set needs.
        states: usize,
        /// The most the generator supports.
        max: usize,
    },
    /// More patterns than the 64-bit match mask has bits.
    #[error(
        "line {line}: more than {max} patterns in the rules file (each content or pcre is one)"
    )]
    TooManyPatterns {
        /// The line of the first pattern past the limit.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// A scan limit outside what the generator and the kernel verifier accept.
    #[error("--max-payload {value}: {reason}")]
    PayloadLimit {
        /// The limit asked for.
        value: usize,
        /// Why it is refused.
        reason: String,
    },
    /// `--form branch` for a fast automaton whose branch code would be too long.
    #[error("--form branch: the fast automaton has {live} live states, more than the {max} the branch form is generated for (a block per state and byte of a chunk; an eBPF jump reaches 32,767 instructions at most): use --form table or auto")]
    BranchTooBig {
        /// Live states of the fast automaton.
        live: usize,
        /// The most the branch form takes.
        max: usize,
    },
    /// A rules file without a rule.
    #[error("no rules: the file has only comments and blank lines")]
    Empty,
    /// Reading the rules or writing the outputs failed.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's words.
        message: String,
    },
    /// clang could not build the generated C (a bug of the generator).
    #[error("{c_file}: clang failed on the generated C: {message}")]
    Clang {
        /// The C file to look at.
        c_file: String,
        /// clang's first error line, or why clang did not run.
        message: String,
    },
}
