//! Where a map's values live: registers (`ehdl_map_mem`) or block RAM (`ehdl_map_ram`), and the addresses a RAM
//! block needs a cycle early.
//!
//! A RAM read is registered, so a port that reads presents its address in the cycle before its access: the same
//! expression over the next values of the stage's input boundary registers (`go ? d : q`, so a held stage presents
//! its own address again). `ehdl_map_ram` forwards the writes in flight (the previous cycle's through its delay
//! register, this cycle's of an earlier port combinationally), so a read sees what the register block would give.
//!
//! The choice, per map (the first rule that applies):
//! - flush and replay (`--hazards flush`) keeps registers: a replay reloads boundaries from a buffer, which the
//!   early address does not follow;
//! - up to [`REG_BYTES`] value bytes stay in registers: fewer flip-flops than one RAM copy's smallest block;
//! - more than [`MAX_BANKS`] ports that write keep registers, and so does a live value table over
//!   [`MAX_LVT_BITS`] bits (see below);
//! - a reading port whose address is not a function of its boundary registers keeps registers;
//! - otherwise block RAM: a RAM has one write port, so each writing port gets a bank of its own, and each bank a
//!   copy per reading port and one for the host, each copy two RAMs (even and odd 8-byte rows) of `ceil(rows / 2)`
//!   words of 64 bits: `2 * max(1, writers) * (readers + 1)` RAMs, `8 * ceil(rows / 2)` bytes each. With two or more
//!   writers a live value table of `rows * 8 * ceil(log2(writers))` flip-flops says which bank wrote each byte
//!   last (still an eighth of the register block or less). Yosys maps each RAM to RAMB18E2/RAMB36E2 (or URAM288
//!   for deep ones).
//!
//! Register blocks keep their 64 KiB limit ([`MAX_REG_BYTES`]); RAM blocks have none but the device's memory.

use super::maps::MapPort;
use super::stage::Gen;
use std::collections::BTreeMap;
use std::fmt;

/// Value bytes up to which a map stays in registers.
pub const REG_BYTES: u64 = 256;
/// The largest map the register block holds.
pub const MAX_REG_BYTES: u64 = 1 << 16;
/// Block RAM bytes of an Alveo U50 (1,344 RAMB36 of 4,608 bytes and 640 URAM288 of 36,864 bytes): the most a map's
/// copies may take.
pub const DEVICE_RAM_BYTES: u64 = 1344 * 4608 + 640 * 36864;
/// The most writing ports (banks) a RAM block takes.
pub const MAX_BANKS: usize = 8;
/// The largest live value table (flip-flops) a RAM block with several writers keeps.
pub const MAX_LVT_BITS: u64 = 1 << 17;
/// Rows per RAM (even or odd half) from which the copies are counted as URAM288 (4K x 72) rather than BRAM.
const URAM_ROWS: u64 = 4096;

/// Where one map's values live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Flip-flops in banks of 16 rows (`ehdl_map_mem`).
    Regs,
    /// Block RAM (`ehdl_map_ram`), RAMB18E2/RAMB36E2.
    Bram,
    /// Block RAM deep enough for URAM288.
    Uram,
}

impl fmt::Display for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Storage::Regs => "regs",
            Storage::Bram => "bram",
            Storage::Uram => "uram",
        })
    }
}

/// One map's value block: its name, where it lives and why, and for RAM the copies and their bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapStorage {
    /// The map's name.
    pub map: String,
    /// Registers or RAM.
    pub storage: Storage,
    /// The rule that chose it (see the module comment).
    pub why: String,
    /// RAM copies (two per reading port and two for the host; 0 for registers).
    pub rams: u32,
    /// Bytes of all copies (0 for registers).
    pub ram_bytes: u64,
}

impl fmt::Display for MapStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.map, self.storage, self.why)
    }
}

/// Replaces every identifier of `expr` by its next value from `next`; `None` when one has none (a signal of the
/// stage itself). Sized literals (`64'h1f`, `15'd0`) and casts (`8'(x)`) pass unchanged.
pub(super) fn substitute(expr: &str, next: &BTreeMap<String, String>) -> Option<String> {
    let cs: Vec<char> = expr.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_ascii_digit() {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            if i < cs.len()
                && cs[i] == '\''
                && cs.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic())
            {
                i += 2;
                while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                    i += 1;
                }
            }
            out.extend(&cs[start..i]);
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            let id: String = cs[start..i].iter().collect();
            out += &format!("({})", next.get(&id)?);
        } else {
            out.push(c);
            i += 1;
        }
    }
    Some(out)
}

impl Gen<'_> {
    /// `expr` (over the signals of a stage) as the value it will have in the next cycle, for a RAM address
    /// presented early; `None` when it reads anything but boundary registers and constants.
    ///
    /// When every signal `expr` reads is a register of boundaries advancing on one condition `go`, the result is
    /// `go ? expr(d) : expr(q)`: the arithmetic of the address runs on both inputs of the multiplexer, beside the
    /// stall checks that decide `go`, rather than after it.
    pub(super) fn early_of(&self, expr: &str) -> Option<String> {
        let mut gos: Vec<&String> = self
            .next_split
            .iter()
            .filter(|(name, _)| expr.contains(name.as_str()))
            .map(|(_, (go, _))| go)
            .collect();
        gos.sort();
        gos.dedup();
        if let [go] = gos[..] {
            let of = |f: &dyn Fn(&String, &String) -> String| -> BTreeMap<String, String> {
                self.next_split
                    .iter()
                    .filter(|(_, (g, _))| g == go)
                    .map(|(name, (_, d))| (name.clone(), f(name, d)))
                    .collect()
            };
            let adv = substitute(expr, &of(&|_, d| d.clone()));
            let held = substitute(expr, &of(&|name, _| name.clone()));
            if let (Some(adv), Some(held)) = (adv, held) {
                return Some(format!("({go} ? ({adv}) : ({held}))"));
            }
        }
        substitute(expr, &self.next_vals)
    }

    /// Where map `m`'s values go, given its ports (see the module comment).
    pub(super) fn choose_storage(&self, m: u32, ports: &[MapPort]) -> MapStorage {
        let spec = &self.maps[m as usize];
        let (bytes, _) = super::maps::geometry(spec);
        let writers = ports.iter().filter(|p| p.we != "1'b0").count();
        let late = ports.iter().find(|p| p.reads && p.early.is_none());
        let regs = |why: String| MapStorage {
            map: spec.name.clone(),
            storage: Storage::Regs,
            why,
            rams: 0,
            ram_bytes: 0,
        };
        if self.flush_stage.is_some() {
            return regs(
                "flush and replay reloads boundaries the early RAM address does not follow".into(),
            );
        }
        if bytes <= REG_BYTES {
            return regs(format!(
                "{bytes} bytes, at most {REG_BYTES}: registers are smaller than a RAM"
            ));
        }
        let lvt = if writers > 1 {
            bytes.div_ceil(8) * 8 * (usize::BITS - (writers - 1).leading_zeros()) as u64
        } else {
            0
        };
        if writers > MAX_BANKS {
            return regs(format!(
                "{writers} ports write; a RAM block takes up to {MAX_BANKS}"
            ));
        }
        if lvt > MAX_LVT_BITS {
            return regs(format!(
                "{writers} ports write: a live value table of {lvt} bits, over {MAX_LVT_BITS}"
            ));
        }
        if let Some(p) = late {
            return regs(format!(
                "the address of instruction {} is computed in its stage, not known a cycle early",
                p.insn
            ));
        }
        let readers = ports.iter().filter(|p| p.reads).count() as u32;
        let rams = 2 * (writers.max(1) as u32) * (readers + 1);
        let rows = bytes.div_ceil(8).div_ceil(2);
        let storage = if rows >= URAM_ROWS {
            Storage::Uram
        } else {
            Storage::Bram
        };
        MapStorage {
            map: spec.name.clone(),
            storage,
            why: format!(
                "{bytes} bytes, {writers} writing and {readers} reading port(s): {rams} RAMs of {rows} x 64 bits{}",
                if lvt > 0 {
                    format!(", a {lvt}-bit live value table")
                } else {
                    String::new()
                }
            ),
            rams,
            ram_bytes: rams as u64 * rows * 8,
        }
    }
}
