//! The CasADi-Python peer: `bench/peer/hopper_casadi.py`, the hopper's jump transcribed by
//! hand with CasADi's Python API and solved by the same IPOPT through `casadi.nlpsol` from the
//! all-zero guess. Each solve is its own `python3` process, the way a researcher runs it.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

/// The script, compiled in so that the bench runs the one it was built with.
const SCRIPT: &str = include_str!("../../../bench/peer/hopper_casadi.py");

/// Where `import casadi` finds the CasADi (and IPOPT) loam links, with NumPy (build.rs).
const PYTHONPATH: &str = env!("LOAM_CASADI_PYTHONPATH");

/// One solve by the peer, timed as loam's are.
pub struct PeerRun {
    /// Building the NLP and the `nlpsol` object, inside the process [s].
    pub setup: f64,
    /// The solver call, inside the process [s].
    pub solve: f64,
    pub iterations: usize,
    pub converged: bool,
    pub objective: f64,
    /// The process's wall time less set-up and solve: Python's start-up, `import casadi`,
    /// loading IPOPT's plugin, reading and writing the JSON [s].
    pub startup: f64,
}

#[derive(serde::Deserialize)]
struct Report {
    objective: f64,
    iterations: usize,
    converged: bool,
    setup_s: f64,
    solve_s: f64,
}

/// Solves `input` (`{"problem": ..., "solver_options": ...}`, the script's input) once.
pub fn solve(input: &serde_json::Value) -> anyhow::Result<PeerRun> {
    if PYTHONPATH.is_empty() {
        bail!("the CasADi loam was built against (LOAM_CASADI_DIR) is not a Python package");
    }
    let path = match std::env::var_os("PYTHONPATH") {
        Some(user) if !user.is_empty() => {
            let mut path = std::ffi::OsString::from(PYTHONPATH);
            path.push(":");
            path.push(user);
            path
        }
        _ => PYTHONPATH.into(),
    };
    let started = Instant::now();
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .env("PYTHONPATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run python3")?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.to_string().as_bytes())
        .context("cannot hand the problem to python3")?;
    let output = child.wait_with_output().context("python3")?;
    let wall = started.elapsed().as_secs_f64();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        bail!(
            "bench/peer/hopper_casadi.py failed ({}): {}",
            output.status,
            last.unwrap_or("no message")
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty());
    let report: Report = serde_json::from_str(line.unwrap_or_default())
        .with_context(|| format!("bench/peer/hopper_casadi.py printed {line:?}"))?;
    Ok(PeerRun {
        setup: report.setup_s,
        solve: report.solve_s,
        iterations: report.iterations,
        converged: report.converged,
        objective: report.objective,
        startup: wall - report.setup_s - report.solve_s,
    })
}
