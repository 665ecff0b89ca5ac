//! The DEM peers, LIGGGHTS and YADE, timed on the settled shipped bed at rest by
//! `bench/peers/run.sh speed` (results/dem/peers/README.md), for `loam bench dem` to report
//! beside loam's own figure. A peer that is not installed is skipped, with a note.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// One measurement: a JSON line printed by `bench/peers/run.sh speed`.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct PeerSpeed {
    /// "liggghts" or "yade".
    pub peer: String,
    pub version: Option<String>,
    /// The bed's name in bench/peers/common.py ("shipped", "large"); absent in older lines,
    /// which timed the shipped bed.
    #[serde(default)]
    pub bed: Option<String>,
    /// MPI processes (LIGGGHTS).
    pub processes: Option<usize>,
    /// Threads (YADE's -j).
    pub threads: Option<usize>,
    pub grains: usize,
    pub steps: usize,
    /// Wall time of the timed steps [s].
    pub wall_s: f64,
    pub particle_steps_per_s: f64,
}

/// The script: beside the sources loam was built from, else under the current directory.
fn script() -> Option<PathBuf> {
    let relative = PathBuf::from("bench/peers/run.sh");
    [
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(&relative),
        relative,
    ]
    .into_iter()
    .find(|path| path.is_file())
}

/// Runs the peers' speed measurement and returns what they measured: nothing (after a note
/// on stderr) when the script, bash or every peer is missing. `grain_hints` are the grain
/// counts of the beds loam timed; a peer measured on none of them (within 1 %) is flagged.
pub fn run_peer_speed(grain_hints: &[usize]) -> Vec<PeerSpeed> {
    let Some(script) = script() else {
        eprintln!("peers skipped: bench/peers/run.sh not found (run from the repository)");
        return Vec::new();
    };
    let output = match Command::new("bash")
        .arg(&script)
        .arg("speed")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
    {
        Ok(output) => output,
        Err(error) => {
            eprintln!("peers skipped: could not run {}: {error}", script.display());
            return Vec::new();
        }
    };
    let speeds = parse(&String::from_utf8_lossy(&output.stdout));
    if !output.status.success() {
        eprintln!(
            "peers: {} speed failed ({})",
            script.display(),
            output.status
        );
    }
    for speed in &speeds {
        let matched = grain_hints
            .iter()
            .any(|&hint| speed.grains.abs_diff(hint) * 100 <= hint.max(1));
        if !grain_hints.is_empty() && !matched {
            eprintln!(
                "peers: {} timed {} grains, loam's beds have {grain_hints:?}",
                speed.peer, speed.grains
            );
        }
    }
    speeds
}

/// The measurements among the script's stdout lines; other lines ("skipped: yade not
/// installed") are passed on to stderr.
fn parse(stdout: &str) -> Vec<PeerSpeed> {
    let mut speeds = Vec::new();
    for line in stdout.lines().map(str::trim) {
        if line.starts_with('{') {
            match serde_json::from_str::<PeerSpeed>(line) {
                Ok(speed) => speeds.push(speed),
                Err(error) => eprintln!("peers: unreadable measurement '{line}': {error}"),
            }
        } else if !line.is_empty() {
            eprintln!("peers: {line}");
        }
    }
    speeds
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed measurements (results/dem/peers/speed.jsonl, the script's stdout) read
    /// back: every line a measurement of the shipped or the large bed with a positive speed
    /// that is its grains x steps / wall time.
    #[test]
    fn committed_speed_lines_parse() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/results/dem/peers/speed.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        let speeds = parse(&format!("skipped: a peer not installed\n{text}"));
        assert_eq!(
            speeds.len(),
            text.lines().filter(|l| !l.trim().is_empty()).count()
        );
        assert!(speeds.iter().any(|s| s.peer == "liggghts"));
        for s in &speeds {
            // The shipped bed (older lines name no bed) or the large one.
            match s.bed.as_deref() {
                None | Some("shipped") => assert_eq!(s.grains, 13_977, "{}", s.peer),
                Some(bed) => assert_eq!((bed, s.grains), ("large", 66_535), "{}", s.peer),
            }
            let expected = (s.grains * s.steps) as f64 / s.wall_s;
            assert!(
                (s.particle_steps_per_s / expected - 1.0).abs() < 1e-4,
                "{}",
                s.peer
            );
        }
    }
}
