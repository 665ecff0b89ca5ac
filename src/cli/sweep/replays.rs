//! A sweep that varies the ground replays every plan on the ground of every value of that axis
//! too (the paper's Fig. 5: each jump planned on one ground, replayed on its own and on the
//! other): `OUT/replays.csv`, one row per plan and ground (`loam::sweep::table`), from which
//! `loam plot OUT` draws the achieved-against-commanded figure. An unsharded sweep writes it
//! when its plans are done, `loam sweep merge` when it joins the shards: it needs every
//! ground's point.
//!
//! The axis is the one whose path is `terrain` or lies under it (`terrain.friction`); the
//! other grounds of a point are those of the points that differ from it in that axis alone,
//! and a replay on one reads its `solution.json`'s terrain section, as `loam simulate RUN
//! --terrain FILE` does (it writes `replay-on-solution-<hash>.{csv,json}` in the plan's
//! folder). The replays run in this process, `jobs` at a time (no CasADi: threads are safe).
//!
//! Choices: written for a task with an apex rise only (`task.apex_rise`: the figure's axes);
//! a ground is labelled `rigid` or its medium's name on the
//! bed (`poppy_seeds`), `spring` for the spring ground; two grounds of one model (a sweep
//! over `terrain.friction`) share a label, so their rows are told apart only by order (the
//! axis's) and `loam plot` does not draw them. A plan that did not converge, or a replay
//! that fails, keeps its row with no achieved apex (the figure counts it as failed).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::Context;
use loam::api::{simulate, SimulateOptions};
use serde_json::Value;

use loam::sweep::table::Row;

use super::points::Point;
use super::Axis;

/// The sweep's axis that varies the ground, if any.
pub(super) fn terrain_axis(axes: &[Axis]) -> Option<usize> {
    axes.iter()
        .position(|a| a.path == "terrain" || a.path.starts_with("terrain."))
}

/// The label of a planar run's ground (`problem.terrain` of its `solution.json`).
pub(super) fn ground_label(terrain: &Value) -> String {
    match terrain["model"].as_str().unwrap_or("") {
        "added_mass" => terrain["medium"]
            .as_str()
            .unwrap_or("added_mass")
            .to_string(),
        other => other.to_string(),
    }
}

fn read_json(path: &Path) -> Option<Value> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
}

/// Replays every point's plan on the grounds of its axis-neighbours and writes
/// `out/replays.csv`: its path and rows; `None` (nothing written) when the task has no apex
/// rise.
pub(super) fn write(
    points: &[Point],
    axes: &[Axis],
    axis: usize,
    out: &Path,
    jobs: usize,
) -> anyhow::Result<Option<(PathBuf, Vec<Row>)>> {
    let solutions: Vec<Value> = points
        .iter()
        .map(|p| {
            let path = p.dir.join("solution.json");
            read_json(&path).with_context(|| format!("{}: no solution.json", p.dir.display()))
        })
        .collect::<anyhow::Result<_>>()?;
    if solutions
        .iter()
        .any(|s| s["problem"]["task"]["apex_rise"].as_f64().is_none())
    {
        return Ok(None);
    }
    // The points by their values off the axis.
    let key = |p: &Point| -> Vec<String> {
        p.varied
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != axis)
            .map(|(_, (_, v))| v.clone())
            .collect()
    };
    let mut groups: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
    for (i, p) in points.iter().enumerate() {
        groups.entry(key(p)).or_default().push(i);
    }
    // Work: (plan, ground's point), the own ground included.
    let mut work = Vec::new();
    for (i, p) in points.iter().enumerate() {
        for &j in &groups[&key(p)] {
            work.push((i, j));
        }
    }
    let rows = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(work.len()).max(1) {
            scope.spawn(|| loop {
                let Some(&(i, j)) = work.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let achieved = replay_on(&points[i], &points[j], i == j);
                rows.lock().unwrap().push((i, j, achieved));
            });
        }
    });
    // In the sweep's order: by plan, then by the ground's point (the axis's order).
    let mut rows: Vec<(usize, usize, Option<f64>)> = rows.into_inner().unwrap();
    rows.sort_by_key(|&(i, j, _)| (i, j));

    let mut lines = vec![loam::sweep::table::header(axes)];
    let mut table = Vec::new();
    for (plan, ground, achieved) in rows {
        let (point, solution) = (&points[plan], &solutions[plan]);
        let replay_terrain = ground_label(&solutions[ground]["problem"]["terrain"]);
        let number = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
        let target = number(&solution["problem"]["task"]["apex_rise"]);
        let row = Row {
            plan_terrain: ground_label(&solution["problem"]["terrain"]),
            target,
            status: solution["status"].as_str().unwrap_or("").to_string(),
            converged: solution["converged"] == Value::Bool(true),
            planned: target,
            solve_s: number(&solution["timing_s"]["total"]),
            iterations: solution["iterations"].as_u64().unwrap_or(0),
            objective: number(&solution["objective"]),
            varied: point.varied.clone(),
            replay_terrain,
            achieved,
            run_dir: loam::sweep::table::run_dir(&point.dir, out),
        };
        lines.push(row.csv_line());
        table.push(row);
    }
    let path = out.join("replays.csv");
    loam::output::write_atomic(&path, (lines.join("\n") + "\n").as_bytes())?;
    Ok(Some((path, table)))
}

/// The apex rise `plan`'s replay reached on `ground`'s terrain: its own replay (made by the
/// sweep) or one made here; `None` where the plan was not replayed or the replay gave none.
fn replay_on(plan: &Point, ground: &Point, own: bool) -> Option<f64> {
    let replay = if own {
        read_json(&plan.dir.join("replay.json"))?
    } else {
        // Only a plan the sweep replayed on its own ground (it converged) goes elsewhere.
        plan.dir.join("replay.json").is_file().then_some(())?;
        let options = SimulateOptions {
            terrain: Some(ground.dir.join("solution.json").display().to_string()),
            ..SimulateOptions::default()
        };
        let simulated = simulate(&plan.dir, &options).ok()?;
        read_json(&simulated.json)?
    };
    replay["achieved_apex_rise_m"].as_f64()
}
