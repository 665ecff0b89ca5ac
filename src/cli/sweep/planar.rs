//! `loam sweep` of a planar robot's problem: every combination of the `--vary` values planned
//! by `loam solve` and replayed by `loam simulate`, each point in processes of its own, `jobs`
//! at a time, into `OUT/<field=value-...>/`. `sweep.csv` has one row per point: a column for
//! every varied field, the solve's status and key figures, and the replay's distance and
//! peak rise against the plan's. `loam plot OUT` draws them (`plot::planar_sweep`). A sweep
//! that varies the ground also replays every plan on every ground of the sweep
//! (`replays.rs`: `replays.csv`, the paper's Fig. 5).
//!
//! Not for planar problems (refused, exit 2): `--warm-start` and `--shard` (the hopper's
//! chains and slices). A point on a wrench space is replayed by its solve (the MDP replay at
//! the plan's step, `replay.json`; a gait's over three strides), so it is not simulated again.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Context;
use loam::problem::planar::PlanarProblem;
use serde_json::Value;

use super::{combinations, Args, Axis};
use crate::cli::{interrupt, BadInput};

/// One combination: its values, overrides and folder.
pub(super) struct Point {
    pub(super) varied: Vec<(String, String)>,
    overrides: Vec<String>,
    pub(super) dir: PathBuf,
}

/// The figures of `sweep.csv` after the varied fields, in order.
const FIGURES: [&str; 17] = [
    "converged",
    "status",
    "iterations",
    "objective",
    "distance_m",
    "com_rise_m",
    "duration_s",
    "replay_distance_m",
    "replay_distance_error_rel",
    "planned_com_peak_m",
    "replay_com_peak_m",
    "replay_com_peak_error_rel",
    "cost_of_transport",
    "mesh_tolerance_met",
    "planned_apex_rise_m",
    "replay_apex_rise_m",
    "replay_apex_rise_error_rel",
];

pub fn run(args: &Args, file: &Path, axes: &[Axis], out: &Path) -> anyhow::Result<u8> {
    let refuse = |why: &str| -> anyhow::Error {
        BadInput(format!(
            "{}: a planar robot's problem: {why}",
            file.display()
        ))
        .into()
    };
    if args.warm_start {
        return Err(refuse(
            "--warm-start chains the hopper's plans; a planar sweep solves each point cold",
        ));
    }
    if args.shard.is_some() {
        return Err(refuse("--shard slices the hopper's sweeps only"));
    }
    // Every point is loaded and validated before anything is solved or written.
    let mut points = Vec::new();
    for varied in combinations(axes) {
        let mut overrides = args.overrides.clone();
        overrides.extend(varied.iter().map(|(p, v)| format!("{p}={v}")));
        let problem = loam::problem::load_any(file, &overrides)?;
        check(&problem).map_err(|why| refuse(&why))?;
        // A section's value (`{model: rigid}`) names its folder by its words
        // (`terrain=model_rigid`).
        let name: Vec<String> = varied
            .iter()
            .map(|(p, v)| {
                let words: Vec<&str> = v
                    .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '-'))
                    .filter(|w| !w.is_empty())
                    .collect();
                format!("{}={}", p.rsplit('.').next().unwrap_or(p), words.join("_"))
            })
            .collect();
        points.push(Point {
            dir: out.join(name.join("-")),
            varied,
            overrides,
        });
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let exe = std::env::current_exe().context("locating the loam binary")?;
    let next = AtomicUsize::new(0);
    let failure = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(points.len()) {
            scope.spawn(|| loop {
                if interrupt::requested() || failure.lock().unwrap().is_some() {
                    break;
                }
                let Some(point) = points.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                if let Err(e) = solve_and_replay(&exe, file, point) {
                    failure.lock().unwrap().get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    if interrupt::requested() {
        anyhow::bail!("interrupted: sweep.csv was not written");
    }
    let mut csv: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    csv.push("run".into());
    csv.extend(FIGURES.iter().map(|f| f.to_string()));
    let mut lines = vec![csv.join(",")];
    let mut all_converged = true;
    for point in &points {
        let (row, converged) = row_of(point)?;
        all_converged &= converged;
        let row: Vec<String> = row.iter().map(|f| loam::output::csv_field(f)).collect();
        lines.push(row.join(","));
    }
    let path = out.join("sweep.csv");
    loam::output::write_atomic(&path, (lines.join("\n") + "\n").as_bytes())?;
    // A sweep over grounds replays every plan on each of them (`replays.rs`).
    let replays = match super::replays::terrain_axis(axes) {
        Some(axis) => super::replays::write(&points, axes, axis, out, jobs)?,
        None => None,
    };
    if !args.quiet {
        for line in &lines {
            println!("{line}");
        }
        println!("wrote {}", path.display());
        if let Some(replays) = replays {
            println!(
                "wrote {} (every plan replayed on every ground of the sweep)",
                replays.display()
            );
        }
    }
    Ok(if all_converged { 0 } else { 1 })
}

/// What a planar sweep does not do, by the problem it is given.
fn check(problem: &PlanarProblem) -> Result<(), String> {
    loam::solver::check_options(&loam::planner::planar::solver_options(problem))
        .map_err(|e| format!("solver: {e}"))
}

/// `loam solve` then `loam simulate` on one point, in processes of their own. A solve that
/// does not converge (exit 1) is recorded, and not replayed; one that converged but missed
/// its mesh tolerance (exit 1 too) is replayed, and marked (`mesh_tolerance_met`); bad
/// input (exit 2) stops the sweep.
fn solve_and_replay(exe: &Path, file: &Path, point: &Point) -> anyhow::Result<()> {
    let solve = super::solve_command(exe, file, &point.dir, &point.overrides);
    let code = run_quietly(solve, &point.dir, "loam solve")?;
    let converged = || {
        std::fs::read_to_string(point.dir.join("solution.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|s| s["converged"] == Value::Bool(true))
    };
    // A plan on a wrench space: its solve wrote its MDP replay (`replay.json`).
    let on_sand = || {
        std::fs::read_to_string(point.dir.join("solution.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|s| s["problem"]["terrain"]["model"] == "wrench_space")
    };
    if (code == 0 || converged()) && !on_sand() {
        let mut simulate = Command::new(exe);
        simulate.arg("simulate").arg(&point.dir).arg("-q");
        run_quietly(simulate, &point.dir, "loam simulate")?;
    }
    Ok(())
}

/// Runs `command`; its exit code when 0 or 1, an error (with its stderr) otherwise.
fn run_quietly(mut command: Command, dir: &Path, what: &str) -> anyhow::Result<i32> {
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {what}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(code @ (0 | 1)) => Ok(code),
        Some(2) => Err(BadInput(format!("{what} {}: {}", dir.display(), stderr.trim())).into()),
        _ => anyhow::bail!(
            "{what} {}: ended with {}: {}",
            dir.display(),
            output.status,
            stderr.trim()
        ),
    }
}

/// A point's row of `sweep.csv` (empty replay columns when it was not replayed) and whether
/// it converged.
fn row_of(point: &Point) -> anyhow::Result<(Vec<String>, bool)> {
    let read = |name: &str| -> anyhow::Result<Option<Value>> {
        let path = point.dir.join(name);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        Ok(Some(serde_json::from_str(&text).with_context(|| {
            format!("{} is not JSON", path.display())
        })?))
    };
    let solution = read("solution.json")?
        .with_context(|| format!("{}: no solution.json", point.dir.display()))?;
    let replay = read("replay.json")?.unwrap_or(Value::Null);
    let text = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut row: Vec<String> = point.varied.iter().map(|(_, v)| v.clone()).collect();
    row.push(
        point
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let key = &solution["key_figures"];
    // A gait's replay runs several strides: its distance is the worst stride's and its peak
    // the apex height above the ground (the plan's, and the worst stride's), as the plan's
    // distance is one period's and its peak rise, apex to apex, 0.
    let [replay_distance, distance_error, planned_peak, replay_peak, peak_error] =
        match replay["strides"].as_array() {
            Some(strides) if !strides.is_empty() => {
                let worst = |key: &str| {
                    strides
                        .iter()
                        .max_by(|a, b| {
                            let e = |s: &Value| s[key].as_f64().unwrap_or(f64::NAN);
                            e(a).total_cmp(&e(b))
                        })
                        .expect("a stride")
                };
                let (length, apex) = (worst("length_error_rel"), worst("apex_error_rel"));
                [
                    length["length_m"].clone(),
                    length["length_error_rel"].clone(),
                    apex["planned_apex_m"].clone(),
                    apex["apex_m"].clone(),
                    apex["apex_error_rel"].clone(),
                ]
            }
            _ => [
                // The MDP record of a wrench-space plan's solve names it `distance_m`.
                match &replay["achieved_distance_m"] {
                    Value::Null => replay["distance_m"].clone(),
                    achieved => achieved.clone(),
                },
                replay["distance_error_rel"].clone(),
                replay["planned_com_peak_m"].clone(),
                replay["achieved_com_peak_m"].clone(),
                replay["com_peak_error_rel"].clone(),
            ],
        };
    row.extend(
        [
            &solution["converged"],
            &solution["status"],
            &solution["iterations"],
            &solution["objective"],
            &key["distance_m"],
            &key["com_rise_m"],
            &key["duration_s"],
            &replay_distance,
            &distance_error,
            &planned_peak,
            &replay_peak,
            &peak_error,
            &key["cost_of_transport"],
            &solution["mesh_tolerance_met"],
            &replay["planned_apex_rise_m"],
            &replay["achieved_apex_rise_m"],
            &replay["apex_rise_error_rel"],
        ]
        .into_iter()
        .map(text),
    );
    Ok((row, solution["converged"] == Value::Bool(true)))
}
