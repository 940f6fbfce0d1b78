//! The Warp Engine's design parameters (Table 5 of the warping paper), each configurable.

use serde::{Deserialize, Serialize};

/// What the engine the rules are made for can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Bytes of the packet the key and the restores can read (the splitter's chunk).
    pub chunk: u16,
    /// Bytes of the lookup key.
    pub key_bytes: u16,
    /// Key extractor stages: different places of the chunk (or the length) the key is built from.
    pub key_extractors: u16,
    /// Bytes one key extractor reads.
    pub key_read: u16,
    /// TCAM entries.
    pub tcam_entries: u16,
    /// Stack extractor stages: values one restore writes into the stack.
    pub stack_extractors: u16,
    /// Bytes one stack extractor writes.
    pub stack_read: u16,
    /// Bytes of the stack buffer: the span of frame bytes one restore can write.
    pub stack_buffer: u16,
    /// Register extractor stages: registers (of r1-r9) one restore can set.
    pub reg_extractors: u16,
    /// Bytes of the chunk one register extractor reads.
    pub reg_read: u16,
    /// Most TCAM entries one range compare may expand to before it is left to the processor.
    pub range_entries: u16,
    /// Whether a restore may set r0 to a constant from its action line (1) or needs r0 dead (0): r0 holding the
    /// verdict a program's checks fall through to is live from its first instructions (snort, nat, katran_lb).
    #[serde(default = "r0_const_default")]
    pub r0_const: u16,
}

fn r0_const_default() -> u16 {
    1
}

impl Default for Params {
    /// The paper's configuration.
    fn default() -> Self {
        Params {
            chunk: 128,
            key_bytes: 16,
            key_extractors: 12,
            key_read: 2,
            tcam_entries: 64,
            stack_extractors: 10,
            stack_read: 8,
            stack_buffer: 136,
            reg_extractors: 9,
            reg_read: 8,
            range_entries: 16,
            r0_const: 1,
        }
    }
}

impl Params {
    /// The parameter names `set` takes, in Table 5's order.
    pub const NAMES: [&'static str; 12] = [
        "chunk",
        "key-bytes",
        "key-extractors",
        "key-read",
        "tcam-entries",
        "stack-extractors",
        "stack-read",
        "stack-buffer",
        "reg-extractors",
        "reg-read",
        "range-entries",
        "r0-const",
    ];

    /// Sets parameter `name` (one of [`Params::NAMES`]); false for an unknown name.
    pub fn set(&mut self, name: &str, value: u16) -> bool {
        let field = match name {
            "chunk" => &mut self.chunk,
            "key-bytes" => &mut self.key_bytes,
            "key-extractors" => &mut self.key_extractors,
            "key-read" => &mut self.key_read,
            "tcam-entries" => &mut self.tcam_entries,
            "stack-extractors" => &mut self.stack_extractors,
            "stack-read" => &mut self.stack_read,
            "stack-buffer" => &mut self.stack_buffer,
            "reg-extractors" => &mut self.reg_extractors,
            "reg-read" => &mut self.reg_read,
            "range-entries" => &mut self.range_entries,
            "r0-const" => &mut self.r0_const,
            _ => return false,
        };
        *field = value;
        true
    }
}
