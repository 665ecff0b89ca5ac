//! One plan of a sweep on disk, and how a re-run knows it is done.
//!
//! A plan's folder is complete when its marker `sweep_point.json` is there and names the same
//! plan (a hash of the resolved problem and of how it was started). The marker is written
//! last, after the solution, the replays and (warm sweeps) the warm start, each of them
//! written whole by a rename; it is removed first when a plan is redone. So a folder without
//! its marker, or with another plan's, is solved again, and one with it is never touched.

use std::path::Path;

use anyhow::Context;
use loam::output;
use loam::solver::Multipliers;
use serde::{Deserialize, Serialize};

/// The marker of a finished plan.
pub const MARKER: &str = "sweep_point.json";
/// A warm sweep's primal and dual solution of the plan, for its neighbour (also after a
/// resume): little-endian f64, exact.
pub const WARM_START: &str = "warm_start.bin";

#[derive(Serialize, Deserialize)]
struct Marker {
    /// Hash of the resolved problem and the start (see [`identity`]).
    identity: String,
    /// 1-based index of the combination in the whole sweep.
    combination: usize,
    /// Its lines of `sweep.csv`, as written.
    rows: Vec<String>,
}

/// FNV-1a, 64 bits, in hex: a stable name for a text (the same on every machine and build).
pub fn fingerprint(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= byte as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The rows of a finished plan whose marker carries `identity`, or None: not started, half
/// written, or another plan's.
pub fn finished(dir: &Path, identity: &str, warm: bool) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    let marker: Marker = serde_json::from_str(&text).ok()?;
    let files = ["solution.json", "trajectory.csv"];
    let present =
        files.iter().all(|f| dir.join(f).is_file()) && (!warm || dir.join(WARM_START).is_file());
    (marker.identity == identity && present).then_some(marker.rows)
}

/// Before a plan is (re)done: its marker and warm start go first, so that an interruption
/// from here on leaves a folder that the next run redoes.
pub fn begin(dir: &Path) -> anyhow::Result<()> {
    for name in [MARKER, WARM_START] {
        match std::fs::remove_file(dir.join(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", dir.join(name).display()))
            }
            _ => {}
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

/// The last write of a finished plan.
pub fn finish(
    dir: &Path,
    identity: &str,
    combination: usize,
    rows: &[String],
) -> anyhow::Result<()> {
    let marker = Marker {
        identity: identity.to_string(),
        combination,
        rows: rows.to_vec(),
    };
    let json = serde_json::to_string_pretty(&marker).expect("a marker serializes");
    output::write_atomic(&dir.join(MARKER), json.as_bytes())?;
    Ok(())
}

/// A plan's solution as a warm start for the next one.
pub struct WarmStart {
    pub x: Vec<f64>,
    pub multipliers: Multipliers,
    pub converged: bool,
}

impl WarmStart {
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let m = &self.multipliers;
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"loamwarm");
        bytes.push(self.converged as u8);
        for part in [&self.x, &m.g, &m.x_lower, &m.x_upper] {
            bytes.extend_from_slice(&(part.len() as u64).to_le_bytes());
            for v in part.iter() {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
        }
        output::write_atomic(&dir.join(WARM_START), &bytes)?;
        Ok(())
    }

    pub fn read(dir: &Path) -> anyhow::Result<WarmStart> {
        let path = dir.join(WARM_START);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let damaged = || {
            anyhow::anyhow!(
                "{} is damaged; remove the folder to redo it",
                path.display()
            )
        };
        let rest = bytes.strip_prefix(b"loamwarm").ok_or_else(damaged)?;
        let (&converged, mut rest) = rest.split_first().ok_or_else(damaged)?;
        let mut parts = Vec::new();
        for _ in 0..4 {
            let (len, tail) = rest.split_at_checked(8).ok_or_else(damaged)?;
            let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
            let (values, tail) = tail
                .split_at_checked(len.checked_mul(8).ok_or_else(damaged)?)
                .ok_or_else(damaged)?;
            parts.push(
                values
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                    .collect::<Vec<f64>>(),
            );
            rest = tail;
        }
        let [x, g, x_lower, x_upper]: [Vec<f64>; 4] = parts.try_into().expect("four parts");
        Ok(WarmStart {
            x,
            multipliers: Multipliers {
                g,
                x_lower,
                x_upper,
            },
            converged: converged == 1,
        })
    }
}

/// Removes what an interrupted plan left in its folder: IPOPT's log being written by
/// `loam solve` (`.ipopt.log.tmp<pid>`) and any result file caught between its write and
/// its rename (`<name>.<ext>.tmp<pid>`).
pub fn remove_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        if is_temporary(&path) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

fn is_temporary(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.rsplit_once(".tmp")
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_those_of_loams_atomic_writes() {
        for name in [
            ".ipopt.log.tmp1234",
            "solution.json.tmp99",
            "replay.csv.tmp7",
        ] {
            assert!(is_temporary(Path::new(name)), "{name}");
        }
        for name in ["ipopt.log", "solution.json", "a.tmp", "notes.tmpx1"] {
            assert!(!is_temporary(Path::new(name)), "{name}");
        }
    }

    #[test]
    fn a_warm_start_reads_back_bit_for_bit() {
        let dir = std::env::temp_dir().join(format!("loam-warm-start-{}", std::process::id()));
        let start = WarmStart {
            x: vec![0.1, -3.0e-300, f64::MAX],
            multipliers: Multipliers {
                g: vec![1.0 / 3.0],
                x_lower: vec![0.0, 1e-12, 2.0],
                x_upper: vec![5.0, 6.0, 7.0],
            },
            converged: true,
        };
        start.write(&dir).unwrap();
        let back = WarmStart::read(&dir).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            (back.x, back.multipliers, back.converged),
            (start.x, start.multipliers, true)
        );
    }

    #[test]
    fn fingerprints_are_stable() {
        // FNV-1a's published test vector.
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
    }
}
