//! Waveforms (`--vcd`) of both Verilator backends: which packets to record, the clock the waveform's time follows,
//! and joining the pieces of one recording that several simulation runs wrote.
//!
//! A waveform's time is the hardware's: one clock period per cycle at [`VcdRequest::clock_mhz`] (156.25 MHz gives
//! 6.4 ns, `$timescale 1ps` and a rising edge every 6400 units), starting at 0 with the first cycle recorded.

use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The `--vcd` request: a file, the packets whose simulation it records and the clock its time follows.
#[derive(Clone, Debug, PartialEq)]
pub struct VcdRequest {
    /// The waveform file; a missing directory is created.
    pub path: PathBuf,
    /// Packets (counted from 0 in the order they are run) recorded.
    pub packets: Range<u64>,
    /// The clock in MHz: the waveform has one period of it per cycle (e.g.
    /// `hwxdp_hxdp::timing::CLOCK_PAPER_MHZ`, 156.25 MHz, 6.4 ns).
    pub clock_mhz: f64,
}

/// Why a waveform cannot be recorded as asked.
#[derive(Debug, thiserror::Error)]
pub enum VcdError {
    /// A `--vcd-packets` range that holds no packet.
    #[error("--vcd-packets {start}..{end}: the range holds no packet")]
    Range {
        /// First packet.
        start: u64,
        /// One past the last.
        end: u64,
    },
    /// A clock that has no period of at least 2 fs (not a positive, finite number of MHz up to 500 GHz).
    #[error("--vcd: a clock of {mhz} MHz has no period to give the waveform")]
    Clock {
        /// The clock asked for.
        mhz: f64,
    },
    /// The waveform's directory could not be created.
    #[error("--vcd {path}: cannot create the directory {dir}: {source}")]
    Directory {
        /// The waveform file.
        path: PathBuf,
        /// The directory.
        dir: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// A piece of a waveform could not be read or added to the waveform.
    #[error("--vcd {path}: cannot add {part}: {source}")]
    Join {
        /// The waveform file.
        path: PathBuf,
        /// The piece.
        part: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

/// The unit of a waveform's time and half a clock period in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timescale {
    /// `1ps`, or `1fs` for a clock whose half period is not a whole number of picoseconds.
    pub(crate) unit: &'static str,
    /// Half a clock period in `unit`s: the clock falls at even multiples, rises at odd ones.
    pub(crate) half: u64,
}

impl VcdRequest {
    /// Checks the request and creates the waveform's directory; returns the timescale of its clock.
    pub(crate) fn prepare(&self) -> Result<Timescale, VcdError> {
        if self.packets.is_empty() {
            return Err(VcdError::Range {
                start: self.packets.start,
                end: self.packets.end,
            });
        }
        let scale = timescale(self.clock_mhz)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| VcdError::Directory {
                path: self.path.clone(),
                dir: dir.to_path_buf(),
                source,
            })?;
        }
        Ok(scale)
    }
}

/// The timescale of a `clock_mhz` clock: picoseconds when half its period is a whole number of them (156.25 and
/// 250 MHz: 3200 and 2000 ps), else femtoseconds, rounded to the nearest.
pub(crate) fn timescale(clock_mhz: f64) -> Result<Timescale, VcdError> {
    if !clock_mhz.is_finite() || clock_mhz <= 0.0 {
        return Err(VcdError::Clock { mhz: clock_mhz });
    }
    // One MHz is a period of 1e9 fs.
    let half_fs = 5e8 / clock_mhz;
    if half_fs.round() < 1.0 || half_fs > 1e15 {
        return Err(VcdError::Clock { mhz: clock_mhz });
    }
    let half_ps = half_fs / 1000.0;
    if (half_ps - half_ps.round()).abs() < 1e-9 * half_ps.max(1.0) {
        return Ok(Timescale {
            unit: "1ps",
            half: half_ps.round() as u64,
        });
    }
    Ok(Timescale {
        unit: "1fs",
        half: half_fs.round() as u64,
    })
}

/// Parses `--vcd-packets`: `A..B` (B excluded), `A..=B`, or one packet `A`.
pub fn parse_packet_range(text: &str) -> Result<Range<u64>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| format!("{s:?} is not a packet number"))
    };
    let range = if let Some((a, b)) = text.split_once("..=") {
        number(a)?..number(b)?.saturating_add(1)
    } else if let Some((a, b)) = text.split_once("..") {
        number(a)?..number(b)?
    } else {
        let a = number(text)?;
        a..a + 1
    };
    if range.is_empty() {
        return Err(format!("{text}: the range holds no packet"));
    }
    Ok(range)
}

/// Appends the changes recorded in the waveform `part` (everything after its `$enddefinitions $end`) to the waveform
/// `path`, which has the same signals, then removes `part`. The pieces' times must follow each other.
pub(crate) fn append(path: &Path, part: &Path) -> Result<(), VcdError> {
    let join = |source| VcdError::Join {
        path: path.to_path_buf(),
        part: part.to_path_buf(),
        source,
    };
    let mut text = Vec::new();
    std::fs::File::open(part)
        .and_then(|mut f| f.read_to_end(&mut text))
        .map_err(join)?;
    const END: &[u8] = b"$enddefinitions";
    let body = text
        .windows(END.len())
        .position(|w| w == END)
        .and_then(|at| {
            let after = at + END.len();
            let close = text[after..].windows(4).position(|w| w == b"$end")?;
            Some(after + close + 4)
        })
        .ok_or_else(|| {
            join(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "no $enddefinitions $end: not a VCD file",
            ))
        })?;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(&text[body..]))
        .map_err(join)?;
    std::fs::remove_file(part).map_err(join)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_ranges_parse_in_three_shapes() {
        assert_eq!(parse_packet_range("0..1"), Ok(0..1));
        assert_eq!(parse_packet_range("3..=5"), Ok(3..6));
        assert_eq!(parse_packet_range("7"), Ok(7..8));
        assert_eq!(
            parse_packet_range("5..5"),
            Err("5..5: the range holds no packet".into())
        );
        assert_eq!(
            parse_packet_range("a..2"),
            Err("\"a\" is not a packet number".into())
        );
    }

    #[test]
    fn the_timescale_follows_the_clock() {
        let ps = |half| Timescale { unit: "1ps", half };
        // 156.25 MHz: 6.4 ns a cycle.
        assert_eq!(timescale(156.25).expect("clock"), ps(3200));
        assert_eq!(timescale(250.0).expect("clock"), ps(2000));
        assert_eq!(timescale(1.0).expect("clock"), ps(500_000));
        // 300 MHz: 3333.33 ps, in femtoseconds.
        assert_eq!(
            timescale(300.0).expect("clock"),
            Timescale {
                unit: "1fs",
                half: 1_666_667
            }
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e12] {
            assert!(timescale(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_request_creates_its_directory_or_names_it() {
        let dir = std::env::temp_dir().join(format!("rtlsim-vcd-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let request = VcdRequest {
            path: dir.join("a/b/w.vcd"),
            packets: 0..1,
            clock_mhz: 250.0,
        };
        request.prepare().expect("prepared");
        assert!(dir.join("a/b").is_dir());
        std::fs::write(dir.join("file"), "").expect("write");
        let blocked = VcdRequest {
            path: dir.join("file/w.vcd"),
            ..request.clone()
        };
        let err = blocked.prepare().expect_err("a file is in the way");
        assert!(
            err.to_string().starts_with(&format!(
                "--vcd {}/file/w.vcd: cannot create the directory {}/file: ",
                dir.display(),
                dir.display()
            )),
            "{err}"
        );
        let empty = VcdRequest {
            packets: 3..3,
            ..request
        };
        assert_eq!(
            empty.prepare().expect_err("empty").to_string(),
            "--vcd-packets 3..3: the range holds no packet"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn pieces_are_appended_without_their_header() {
        let dir = std::env::temp_dir().join(format!("rtlsim-vcd-join-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let (path, part) = (dir.join("w.vcd"), dir.join("w.part"));
        let header = "$timescale 1ps $end\n$var wire 1 ! clk_i $end\n $enddefinitions $end\n";
        std::fs::write(&path, format!("{header}#0\n0!\n#10\n1!\n")).expect("write");
        std::fs::write(&part, format!("{header}#20\n0!\n#30\n1!\n")).expect("write");
        append(&path, &part).expect("joined");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            format!("{header}#0\n0!\n#10\n1!\n\n#20\n0!\n#30\n1!\n")
        );
        assert!(!part.exists());
        std::fs::write(&part, "garbage").expect("write");
        assert!(append(&path, &part).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
