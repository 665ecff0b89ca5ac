//! Solving a sweep's points: each by `loam solve` then `loam simulate`, in processes of their
//! own, then marked done with its row of `sweep.csv` (`point.rs`).
//!
//! The work is dealt in units, `jobs` at a time: a cold sweep's unit is one point; a warm
//! sweep's is a chain (the first --vary's values at one value of the others), whose points run
//! in order, each but the first by `loam solve --warm-start <the previous point's folder>`
//! when that plan converged, cold otherwise. `loam solve` records the start in the plan's
//! `solution.json` (`provenance.warm_start`: the neighbour's `plan_id` and folder, or the
//! problem's own guess where the warm start did not converge and was solved again cold). A
//! resumed chain starts its next point from the last one kept, as the uninterrupted run does.
//!
//! A solve that does not converge (exit 1) is recorded and not replayed; one that converged
//! but missed its mesh tolerance (exit 1 too) is replayed and marked (`mesh_tolerance_met`);
//! bad input (exit 2) stops the sweep. A point on a wrench space is replayed by its solve (the
//! MDP replay at the plan's step, `replay.json`; a gait's over three strides), so it is not
//! simulated again.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context;
use indicatif::ProgressBar;
use serde_json::Value;

use super::points::Point;
use super::{point, row};
use crate::cli::{interrupt, BadInput};

/// Solves the points not yet `done`, units of them `jobs` at a time, and fills in `done`.
/// Returns early, leaving the rest undone, on Ctrl-C or at the first error.
pub(super) fn solve_all(
    file: &Path,
    points: &[Point],
    done: &mut [Option<Vec<String>>],
    jobs: usize,
    bar: &ProgressBar,
) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating the loam binary")?;
    // Units: a point that follows no other starts one (a shard holds whole chains, in order).
    let mut units: Vec<Vec<usize>> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        match (p.after, units.last_mut()) {
            (Some(_), Some(unit)) => unit.push(i),
            _ => units.push(vec![i]),
        }
    }
    let kept: Vec<bool> = done.iter().map(Option::is_some).collect();
    units.retain(|unit| unit.iter().any(|&i| !kept[i]));
    let next = AtomicUsize::new(0);
    let failure = Mutex::new(None);
    let finished = Mutex::new(Vec::new());
    let stop = || interrupt::requested() || failure.lock().unwrap().is_some();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(units.len()) {
            scope.spawn(|| loop {
                let Some(unit) = units.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                for &i in unit {
                    if stop() {
                        return;
                    }
                    if kept[i] {
                        continue;
                    }
                    let point = &points[i];
                    // From the neighbour's plan where it converged.
                    let start = point
                        .after
                        .map(|j| points[j].dir.as_path())
                        .filter(|dir| converged(dir));
                    bar.set_message(point.label.clone());
                    match solve_point(&exe, file, point, start) {
                        Ok(Some(lines)) => {
                            finished.lock().unwrap().push((i, lines));
                            bar.inc(1);
                        }
                        Ok(None) => return,
                        Err(e) => {
                            failure.lock().unwrap().get_or_insert(e);
                            return;
                        }
                    }
                }
            });
        }
    });
    for (i, lines) in finished.into_inner().unwrap() {
        done[i] = Some(lines);
    }
    match failure.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The `solution.json` in `dir`, if it reads.
fn solution(dir: &Path) -> Option<Value> {
    std::fs::read_to_string(dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
}

/// Whether the plan in `dir` converged.
fn converged(dir: &Path) -> bool {
    solution(dir).is_some_and(|s| s["converged"] == Value::Bool(true))
}

/// `loam solve FILE --out DIR -q --set O...`: one point's solve, to be run by `exe`.
fn solve_command(exe: &Path, file: &Path, dir: &Path, overrides: &[String]) -> Command {
    let mut command = Command::new(exe);
    command
        .arg("solve")
        .arg(file)
        .arg("--out")
        .arg(dir)
        .arg("-q");
    for o in overrides {
        command.arg("--set").arg(o);
    }
    command
}

/// One point: `loam solve` (from `start`'s plan, if any), `loam simulate` where it applies,
/// then its row and its marker. Its lines of `sweep.csv`; None when Ctrl-C stopped it (its
/// folder then lacks the marker and is redone).
fn solve_point(
    exe: &Path,
    file: &Path,
    point: &Point,
    start: Option<&Path>,
) -> anyhow::Result<Option<Vec<String>>> {
    point::begin(&point.dir)?;
    let mut solve = solve_command(exe, file, &point.dir, &point.overrides);
    if let Some(start) = start {
        solve.arg("--warm-start").arg(start);
    }
    let Some(code) = run_child(solve, &point.dir, "loam solve")? else {
        return Ok(None);
    };
    let solved = solution(&point.dir);
    let converged = solved
        .as_ref()
        .is_some_and(|s| s["converged"] == Value::Bool(true));
    // A plan on a wrench space: its solve wrote its MDP replay (`replay.json`).
    let on_sand = solved
        .as_ref()
        .is_some_and(|s| s["problem"]["terrain"]["model"] == "wrench_space");
    if (code == 0 || converged) && !on_sand {
        let mut simulate = Command::new(exe);
        simulate.arg("simulate").arg(&point.dir).arg("-q");
        if run_child(simulate, &point.dir, "loam simulate")?.is_none() {
            return Ok(None);
        }
    }
    let lines = vec![row::row_of(point)?];
    point::finish(&point.dir, &point.identity, point.index + 1, &lines)?;
    Ok(Some(lines))
}

/// Runs `command` in a process group of its own (Ctrl-C on the terminal reaches this process
/// alone, which passes it on and cleans up after it): its exit code when 0 or 1, None when
/// Ctrl-C stopped it, an error (with its stderr) otherwise, bad input for exit 2.
fn run_child(mut command: Command, dir: &Path, what: &str) -> anyhow::Result<Option<i32>> {
    use std::os::unix::process::CommandExt;
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().with_context(|| format!("running {what}"))?;
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .with_context(|| format!("waiting for {what}"))?
        {
            break Some(status);
        }
        if interrupt::requested() {
            interrupt::forward(&child);
            child
                .wait()
                .with_context(|| format!("waiting for {what}"))?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = reader.join().unwrap_or_default();
    let status = match status {
        // Stopped by us, or by the signal that stopped us (Slurm signals every process).
        Some(status) if !interrupt::requested() || matches!(status.code(), Some(0..=2)) => status,
        _ => {
            point::remove_temporaries(dir);
            return Ok(None);
        }
    };
    match status.code() {
        Some(code @ (0 | 1)) => Ok(Some(code)),
        Some(2) => Err(BadInput(format!("{what} {}: {}", dir.display(), stderr.trim())).into()),
        _ => anyhow::bail!(
            "{what} {}: ended with {status}: {}",
            dir.display(),
            stderr.trim()
        ),
    }
}
