//! Running the real binary from the test binaries that drive `loam` end to end.
#![allow(dead_code)] // each test binary uses its own part

use std::path::Path;
use std::process::Command;

/// What a run of the binary gave back.
pub struct Output {
    /// The exit code; None when a signal ended it.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The exit code of a run that exited (not ended by a signal).
    pub fn code(&self) -> i32 {
        self.status.expect("loam exited by a signal")
    }

    /// Everything, for assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "exit code {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `loam ARGS` in `dir`.
pub fn loam(dir: &Path, args: &[&str]) -> Output {
    loam_with_env(dir, args, &[])
}

/// Runs `loam ARGS` in `dir` with the environment variables `env` set.
pub fn loam_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .expect("run loam");
    Output {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Starts `loam ARGS` in `dir` and sends it SIGINT as soon as `ready` holds (polled every
/// 2 ms); returns what it printed. Panics if it finished first or `ready` never held within
/// ten minutes.
pub fn interrupt_when(dir: &Path, args: &[&str], ready: impl Fn() -> bool) -> Output {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loam");
    let started = Instant::now();
    loop {
        if ready() {
            // SAFETY: kill(2) on our own child, which has not been waited for.
            let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            assert_eq!(sent, 0, "SIGINT not sent");
            break;
        }
        if let Some(status) = child.try_wait().expect("poll loam") {
            panic!("loam {args:?} finished ({status}) before it could be interrupted");
        }
        assert!(started.elapsed() < Duration::from_secs(600), "no progress");
        std::thread::sleep(Duration::from_millis(2));
    }
    let output = child.wait_with_output().expect("wait for loam");
    Output {
        status: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A JSON file, parsed.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Writes `json`, the record loam keeps beside a CSV made from a plan (a replay, a DEM
/// replay): the `plan_id` of the plan in `plan_dir` (none without one) and the CSV's hash, as
/// `loam simulate` records them. For tests that draw synthetic replays.
pub fn write_record(json: &Path, csv: &Path, plan_dir: Option<&Path>) {
    let mut record = serde_json::Map::new();
    if let Some(dir) = plan_dir {
        let solution = read_json(&dir.join("solution.json"));
        record.insert("plan_id".into(), solution["plan_id"].clone());
    }
    let bytes = std::fs::read(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    record.insert(
        "csv_sha256".into(),
        loam::output::identity::content_hash(&bytes).into(),
    );
    std::fs::write(json, serde_json::Value::Object(record).to_string()).expect("write record");
}

/// A shipped problem file (`problems/NAME`), as an absolute path.
pub fn shipped(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(name)
        .to_str()
        .expect("UTF-8 path")
        .to_owned()
}

/// The shipped problem files (`problems/*.yaml`) but those on a wrench space, sorted: every
/// one is a fixture.
pub fn shipped_problems() -> Vec<std::path::PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .expect("problems/")
        .map(|e| e.expect("problems/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        // Plans on a wrench space have their own tests (tests/suite/wrench_rail.rs,
        // tests/suite/wrench_hop.rs): their replay is the MDP simulator's, run by `loam solve`.
        .filter(|p| !on_wrench_space(p))
        .collect();
    files.sort();
    files
}

/// `loam solve FILE --out OUT -q`, which must exit 0; returns OUT's `solution.json`.
pub fn solve_to(file: &Path, out: &Path) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file_arg = file.to_str().expect("UTF-8 path");
    let out_arg = out.to_str().expect("UTF-8 path");
    let solve = loam(dir, &["solve", file_arg, "--out", out_arg, "-q"]);
    assert_eq!(
        solve.status,
        Some(0),
        "{}: {}",
        file.display(),
        solve.stderr
    );
    read_json(&out.join("solution.json"))
}

/// Asserts the exit code and that stderr holds every needle.
pub fn assert_exit(output: &Output, code: i32, needles: &[&str]) {
    assert_eq!(output.status, Some(code), "{}", output.dump());
    for needle in needles {
        assert!(
            output.stderr.contains(needle),
            "{needle:?} not in stderr:\n{}",
            output.dump()
        );
    }
}

/// The files `loam simulate --terrain FILE` wrote for FILE: `replay-on-<stem>-*.csv` and
/// its record beside it.
pub fn replay_on(run: &Path, stem: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let csv = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("replay-on-{stem}-")) && name.ends_with(".csv")
        })
        .unwrap_or_else(|| panic!("no replay-on-{stem}-*.csv in {}", run.display()));
    let json = csv.with_extension("json");
    (csv, json)
}

/// Whether a shipped problem plans on a wrench-space terrain.
pub fn on_wrench_space(file: &Path) -> bool {
    std::fs::read_to_string(file).is_ok_and(|text| text.contains("model: wrench_space"))
}

/// Writes [`COARSE_BED`] as `coarse.yaml` in `dir` and pours it into `coarse.bed` with
/// `loam dem prepare` (which must exit 0).
pub fn prepare_coarse_bed(dir: &Path) {
    std::fs::write(dir.join("coarse.yaml"), COARSE_BED).expect("write the scene");
    let out = loam(dir, &["dem", "prepare", "coarse.yaml", "-o", "coarse.bed"]);
    assert_eq!(out.status, Some(0), "{}", out.dump());
}

/// A DEM bed scene that pours in under a second (a 2 cm layer of 4 mm grains in a 5 cm
/// cylinder): for the mechanics of the DEM commands, not their physics.
pub const COARSE_BED: &str = "container: { shape: cylinder, radius: 0.05 }\n\
     grains: { radius: 0.004, density: 1000, friction: 0.5, fill_height: 0.02, seed: 3 }\n\
     settle: { kinetic_energy: 1.0e-8, max_time: 1.0 }\n";
