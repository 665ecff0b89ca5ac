//! One plan of a sweep on disk, and how a re-run knows it is done.
//!
//! A plan's folder is complete when its marker `sweep_point.json` is there and names the same
//! plan (a hash of the resolved problem and of how it was started). The marker is written
//! last, after the solution and the replays, each of them written whole by a rename; it is removed first when a plan is redone. So a folder without
//! its marker, or with another plan's, is solved again, and one with it is never touched.

use std::path::Path;

use anyhow::Context;
use loam::output;
use serde::{Deserialize, Serialize};

/// The marker of a finished plan.
pub const MARKER: &str = "sweep_point.json";

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
pub fn finished(dir: &Path, identity: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(MARKER)).ok()?;
    let marker: Marker = serde_json::from_str(&text).ok()?;
    let files = ["solution.json", "trajectory.csv"];
    let present = files.iter().all(|f| dir.join(f).is_file());
    (marker.identity == identity && present).then_some(marker.rows)
}

/// Before a plan is (re)done: its marker goes first, so that an interruption from here on
/// leaves a folder that the next run redoes.
pub fn begin(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(dir.join(MARKER)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing {}", dir.join(MARKER).display()))
        }
        _ => {}
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
    fn fingerprints_are_stable() {
        // FNV-1a's published test vector.
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
    }
}
