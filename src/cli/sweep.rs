//! `loam sweep FILE --vary PATH=RANGE`: solve a problem over a grid of values, replay every
//! plan on its own terrain and on the other, and write `sweep.csv` and its figures.
//!
//! Cold sweeps solve in parallel, one `loam solve` process per plan: CasADi's expression graph
//! and MUMPS are not safe to share between threads, processes are. Warm-started sweeps solve
//! in order in this process, each from its neighbour's primal and dual solution.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use loam::output;
use loam::planner::{self, Plan};
use loam::problem::{self, Problem, TerrainModel};
use loam::sim::replay::terrain_label;
use loam::solver::SolveSettings;

use super::simulate;
use super::BadInput;

#[derive(clap::Args)]
pub struct Args {
    /// The problem file (YAML).
    pub file: PathBuf,
    /// A field and its values: `task.apex_height=0.03:0.10:0.01` (start:stop:step, stop
    /// included) or `terrain.model=rigid,added_mass` (a list). Repeatable: every combination
    /// is solved; the first --vary changes fastest.
    #[arg(long = "vary", value_name = "PATH=RANGE", required = true)]
    pub vary: Vec<String>,
    /// Start each solve from the previous one's solution (solved in order, in this process).
    #[arg(long)]
    pub warm_start: bool,
    /// Fixed overrides applied to every point: --set phases.0.nodes=41 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
    /// Output folder (default: runs/<problem name>-sweep).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Parallel solves for a cold sweep (default: the available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// One varied field.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

/// Parses `PATH=start:stop:step` or `PATH=a,b,c` (or a single `PATH=value`).
pub fn parse_axis(spec: &str) -> Result<Axis, BadInput> {
    let bad = |why: &str| {
        BadInput(format!(
            "--vary {spec}: {why}; write PATH=START:STOP:STEP (e.g. task.apex_height=0.03:0.10:0.01) or PATH=A,B,C"
        ))
    };
    let (path, range) = spec.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(bad("no field path before `=`"));
    }
    let values: Vec<String> = if range.contains(':') {
        let parts: Vec<&str> = range.split(':').collect();
        if parts.len() != 3 {
            return Err(bad("a range has three parts"));
        }
        let number = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("`{s}` is not a number")))
        };
        let (start, stop, step) = (number(parts[0])?, number(parts[1])?, number(parts[2])?);
        if step <= 0.0 {
            return Err(bad("the step must be positive"));
        }
        if stop < start {
            return Err(bad("the stop is below the start"));
        }
        let count = ((stop - start) / step + 1e-9).floor() as usize + 1;
        if count > 10_000 {
            return Err(bad(&format!("{count} values are too many")));
        }
        // Printed with the step's decimals so that 0.03 + 2·0.01 is written 0.05.
        let decimals = decimals_of(parts[2]).max(decimals_of(parts[0]));
        (0..count)
            .map(|k| format!("{:.*}", decimals, start + k as f64 * step))
            .collect()
    } else {
        range.split(',').map(|v| v.trim().to_string()).collect()
    };
    if values.iter().any(String::is_empty) {
        return Err(bad("an empty value"));
    }
    Ok(Axis {
        path: path.to_string(),
        values,
    })
}

fn decimals_of(number: &str) -> usize {
    let number = number.trim();
    match number.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            let e: i64 = exponent.parse().unwrap_or(0);
            (decimals_of(mantissa) as i64 - e).max(0) as usize
        }
        None => number.split_once('.').map_or(0, |(_, f)| f.len()),
    }
}

/// Every combination of the axes' values, the first axis changing fastest.
pub fn combinations(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    // Built from the last axis inwards, so that the first axis is the innermost loop.
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes.iter().rev() {
        combos = combos
            .into_iter()
            .flat_map(|outer| {
                axis.values.iter().map(move |v| {
                    let mut c = outer.clone();
                    c.push((axis.path.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    for c in &mut combos {
        c.reverse();
    }
    combos
}

/// One point of the sweep, loaded and validated.
struct Point {
    problem: Problem,
    overrides: Vec<String>,
    dir: PathBuf,
    /// (path, value) of every --vary at this point, in --vary order.
    varied: Vec<(String, String)>,
}

/// One row of sweep.csv.
struct Row {
    plan_terrain: String,
    target: f64,
    status: String,
    converged: bool,
    planned: f64,
    solve_s: f64,
    iterations: u64,
    /// ½∫u² dt of the plan, from its solution.json (NaN if absent).
    objective: f64,
    /// (path, value) of every --vary.
    varied: Vec<(String, String)>,
    replay_terrain: String,
    achieved: Option<f64>,
    run_dir: String,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let axes: Vec<Axis> = args
        .vary
        .iter()
        .map(|s| parse_axis(s))
        .collect::<Result<_, _>>()?;
    let base = super::ProblemArgs {
        file: args.file.clone(),
        overrides: args.overrides.clone(),
    }
    .load()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("{}-sweep", base.name())));

    // Every point is loaded and validated before anything is solved or written.
    let mut points = Vec::new();
    for combo in combinations(&axes) {
        let mut overrides = args.overrides.clone();
        overrides.extend(combo.iter().map(|(p, v)| format!("{p}={v}")));
        let problem = problem::load(&args.file, &overrides)?;
        let label: Vec<String> = combo
            .iter()
            .map(|(p, v)| format!("{}={v}", p.rsplit('.').next().unwrap_or(p)))
            .collect();
        let dir = out.join(format!(
            "{}-{}",
            terrain_label(&problem.terrain),
            label.join("-")
        ));
        points.push(Point {
            problem,
            overrides,
            dir,
            varied: combo,
        });
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let started = Instant::now();
    let bar = progress(points.len() as u64, args.quiet, "solving");
    if args.warm_start {
        solve_warm(&points, &bar)?;
    } else {
        let jobs = args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        solve_cold(&args.file, &points, jobs.max(1), &bar)?;
    }
    bar.finish_and_clear();
    let solve_seconds = started.elapsed().as_secs_f64();

    let bar = progress(points.len() as u64, args.quiet, "replaying");
    let rows = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(point) = points.get(i) else { break };
                match replay_point(point, &out) {
                    Ok(r) => rows.lock().unwrap().push((i, r)),
                    Err(e) => {
                        error.lock().unwrap().get_or_insert(e);
                    }
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = error.into_inner().unwrap() {
        return Err(e);
    }
    let mut rows = rows.into_inner().unwrap();
    rows.sort_by_key(|(i, _)| *i);
    let rows: Vec<Row> = rows.into_iter().flat_map(|(_, r)| r).collect();
    output::write_atomic(&out.join("sweep.csv"), sweep_csv(&rows).as_bytes())?;

    if !args.quiet {
        print_table(&rows);
        println!(
            "{} plans solved in {:.2} s ({}), replayed on two terrains each; wrote {}",
            points.len(),
            solve_seconds,
            if args.warm_start {
                "warm-started in order".to_string()
            } else {
                "cold, in parallel".to_string()
            },
            out.join("sweep.csv").display()
        );
    }
    Ok(0)
}

fn progress(len: u64, quiet: bool, what: &'static str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} {elapsed_precise}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_message(what);
    bar
}

/// Solves each point in its own `loam solve` process, `jobs` at a time.
fn solve_cold(file: &Path, points: &[Point], jobs: usize, bar: &ProgressBar) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locating the loam binary")?;
    let next = AtomicUsize::new(0);
    let failure = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(points.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(point) = points.get(i) else { break };
                let mut command = Command::new(&exe);
                command
                    .arg("solve")
                    .arg(file)
                    .arg("--out")
                    .arg(&point.dir)
                    .arg("-q");
                for o in &point.overrides {
                    command.arg("--set").arg(o);
                }
                match command.output() {
                    // 0: converged, 1: not converged (a status, recorded in the run).
                    Ok(o) if matches!(o.status.code(), Some(0 | 1)) => {}
                    Ok(o) => {
                        failure.lock().unwrap().get_or_insert(anyhow::anyhow!(
                            "solving {}: {}",
                            point.dir.display(),
                            String::from_utf8_lossy(&o.stderr).trim()
                        ));
                    }
                    Err(e) => {
                        failure
                            .lock()
                            .unwrap()
                            .get_or_insert(anyhow::anyhow!("running {}: {e}", exe.display()));
                    }
                }
                bar.inc(1);
            });
        }
    });
    match failure.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Solves the points in order, each from the previous solution when the NLPs have the same
/// shape.
fn solve_warm(points: &[Point], bar: &ProgressBar) -> anyhow::Result<()> {
    solve_in_order(points.iter().map(|p| &p.problem), true, |i, plan| {
        let point = &points[i];
        output::write_run(&point.dir, &point.problem, plan)?;
        bar.inc(1);
        Ok(())
    })
}

/// Solves `problems` in this process, in order; with `warm`, each from the previous plan's
/// primal and dual solution when the NLP has the same size. Calls `each` with every plan.
pub fn solve_in_order<'a>(
    problems: impl Iterator<Item = &'a Problem>,
    warm: bool,
    mut each: impl FnMut(usize, &Plan) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut previous: Option<(Plan, TerrainModel)> = None;
    for (i, problem) in problems.enumerate() {
        // Only a converged neighbour on the same terrain model is a good start (planner::plan
        // also ignores a start of another NLP shape).
        let start = previous
            .as_ref()
            .filter(|(p, model)| warm && p.report.converged && *model == problem.terrain.model)
            .map(|(p, _)| (p.report.x.as_slice(), &p.report.multipliers));
        let mut options = planner::solver_options(problem);
        if start.is_some() {
            options.extend(warm_start_options());
        }
        let settings = SolveSettings {
            options,
            ..SolveSettings::default()
        };
        let mut plan = planner::plan(problem, &settings, start, None)?;
        if start.is_some() && !plan.report.converged {
            // A warm start can mislead IPOPT (e.g. into declaring a reachable height
            // infeasible); the cold solve decides.
            let settings = SolveSettings {
                options: planner::solver_options(problem),
                ..SolveSettings::default()
            };
            plan = planner::plan(problem, &settings, None, None)?;
        }
        each(i, &plan)?;
        previous = Some((plan, problem.terrain.model));
    }
    Ok(())
}

/// IPOPT's options for a warm start: take the given point and multipliers, start the barrier
/// small since the neighbour's solution is nearly optimal, and give up early.
///
/// Measured on the granular sweep 30..80 mm (iterations per point after the first): bound push
/// 1e-6 / μ₀ 1e-4: 45, 8, 13, 36; 1e-4 / 1e-3: 13, 10, 8, 38; 1e-3 / 1e-2: 11, 8, 20, 46;
/// 1e-2 / 1e-1: 16, 10, 11, 43. Every setting failed 80 mm from the 70 mm plan (a different
/// local solution; the cold solve converges) after 220-290 iterations, hence the cap: warm
/// solves that converge take under 50.
pub fn warm_start_options() -> Vec<(String, loam::solver::OptionValue)> {
    use loam::solver::OptionValue::{Int, Num, Str};
    vec![
        ("warm_start_init_point".into(), Str("yes".into())),
        ("warm_start_bound_push".into(), Num(1e-4)),
        ("warm_start_mult_bound_push".into(), Num(1e-4)),
        ("mu_init".into(), Num(1e-3)),
        ("max_iter".into(), Int(WARM_MAX_ITERATIONS)),
    ]
}

/// Iterations a warm start gets before the cold solve takes over.
pub const WARM_MAX_ITERATIONS: i64 = 100;

/// The other terrain of the paper's comparison: rigid for a granular plan, the file's medium
/// for a rigid plan.
fn other_terrain(problem: &Problem) -> problem::Terrain {
    let mut other = problem.terrain.clone();
    other.model = match problem.terrain.model {
        TerrainModel::Rigid => TerrainModel::AddedMass,
        TerrainModel::AddedMass => TerrainModel::Rigid,
    };
    other
}

fn replay_point(point: &Point, out: &Path) -> anyhow::Result<Vec<Row>> {
    let plan = simulate::read_plan(&point.dir)?;
    let objective = std::fs::read_to_string(point.dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get("objective").and_then(serde_json::Value::as_f64))
        .unwrap_or(f64::NAN);
    let mut rows = Vec::new();
    for terrain in [point.problem.terrain.clone(), other_terrain(&point.problem)] {
        let settings = loam::sim::reduced::Settings::default();
        // A plan that did not converge may not replay at all; its row records no apex.
        let achieved = simulate::replay_and_write(&plan, &terrain, settings)
            .ok()
            .and_then(|s| s.apex_rise_m);
        rows.push(Row {
            plan_terrain: terrain_label(&point.problem.terrain),
            target: point.problem.task.apex_height,
            status: plan.status.clone(),
            converged: plan.converged,
            planned: plan.apex_rise,
            solve_s: plan.solve_seconds,
            iterations: plan.iterations,
            objective,
            varied: point.varied.clone(),
            replay_terrain: terrain_label(&terrain),
            achieved,
            run_dir: point
                .dir
                .strip_prefix(out)
                .unwrap_or(&point.dir)
                .display()
                .to_string(),
        });
    }
    Ok(rows)
}

/// `sweep.csv`: the fixed columns (their order is stable), then `objective` and one column per
/// --vary named by its path, holding the value as given.
fn sweep_csv(rows: &[Row]) -> String {
    let mut s = String::from(
        "plan_terrain,apex_target_m,status,converged,planned_apex_m,solve_s,iterations,replay_terrain,achieved_apex_m,error_m,run_dir,objective",
    );
    if let Some(first) = rows.first() {
        for (path, _) in &first.varied {
            s.push(',');
            s.push_str(path);
        }
    }
    s.push('\n');
    for r in rows {
        let (achieved, error) = match r.achieved {
            Some(a) => (format!("{a:.6e}"), format!("{:.6e}", a - r.target)),
            None => ("nan".into(), "nan".into()),
        };
        s.push_str(&format!(
            "{},{:.6},{},{},{:.6e},{:.4},{},{},{achieved},{error},{},{:.6e}",
            r.plan_terrain,
            r.target,
            r.status,
            r.converged,
            r.planned,
            r.solve_s,
            r.iterations,
            r.replay_terrain,
            r.run_dir,
            r.objective
        ));
        for (_, value) in &r.varied {
            s.push(',');
            s.push_str(value);
        }
        s.push('\n');
    }
    s
}

fn print_table(rows: &[Row]) {
    // One column per varied field (its last path segment), as wide as its values.
    let varied: Vec<(String, usize)> = rows
        .first()
        .map(|r| {
            r.varied
                .iter()
                .enumerate()
                .map(|(k, (path, _))| {
                    let name = path.rsplit('.').next().unwrap_or(path).to_string();
                    let width = rows
                        .iter()
                        .map(|r| r.varied[k].1.len())
                        .chain([name.len()])
                        .max()
                        .unwrap_or(0);
                    (name, width)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut header = String::new();
    for (name, width) in &varied {
        header += &format!("{name:<width$} ");
    }
    println!(
        "{header}{:<12} {:>10} {:>10} {:<14} {:>12} {:>9} {:>12} {:>6} {:>8}",
        "plan",
        "target mm",
        "converged",
        "replayed on",
        "achieved mm",
        "error %",
        "objective",
        "iter",
        "solve s"
    );
    for r in rows {
        let (achieved, error) = match r.achieved {
            Some(a) => (
                format!("{:.1}", a * 1e3),
                format!("{:+.1}", 100.0 * (a - r.target) / r.target),
            ),
            None => ("-".into(), "-".into()),
        };
        let mut values = String::new();
        for ((_, width), (_, value)) in varied.iter().zip(&r.varied) {
            values += &format!("{value:<width$} ");
        }
        println!(
            "{values}{:<12} {:>10.1} {:>10} {:<14} {:>12} {:>9} {:>12.4e} {:>6} {:>8.3}",
            r.plan_terrain,
            r.target * 1e3,
            r.converged,
            r.replay_terrain,
            achieved,
            error,
            r.objective,
            r.iterations,
            r.solve_s
        );
    }
    // Mean absolute apex error per (plan, replay) group, the numbers of the paper's Fig. 5.
    let mut groups: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.plan_terrain.clone(), r.replay_terrain.clone()))
        .collect();
    groups.sort();
    groups.dedup();
    for (plan, on) in groups {
        let errors: Vec<f64> = rows
            .iter()
            .filter(|r| r.plan_terrain == plan && r.replay_terrain == on && r.converged)
            .filter_map(|r| r.achieved.map(|a| (a - r.target).abs()))
            .collect();
        if !errors.is_empty() {
            println!(
                "{plan} plans on {on}: mean absolute apex error {:.1} mm over {} converged plans",
                1e3 * errors.iter().sum::<f64>() / errors.len() as f64,
                errors.len()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_include_their_stop_and_print_cleanly() {
        let a = parse_axis("task.apex_height=0.03:0.10:0.01").unwrap();
        assert_eq!(a.path, "task.apex_height");
        assert_eq!(a.values.len(), 8);
        assert_eq!(a.values[2], "0.05");
        assert_eq!(a.values[7], "0.10");
    }

    #[test]
    fn malformed_ranges_are_refused() {
        for spec in [
            "task.apex_height",
            "=1,2",
            "task.apex_height=0.03:0.10",
            "task.apex_height=0.03:x:0.01",
            "task.apex_height=0.10:0.03:0.01",
            "task.apex_height=0.03:0.10:0",
            "task.apex_height=0.03,,0.04",
        ] {
            assert!(parse_axis(spec).is_err(), "{spec}");
        }
    }

    #[test]
    fn the_first_axis_changes_fastest() {
        let axes = [parse_axis("a=1,2,3").unwrap(), parse_axis("b=x,y").unwrap()];
        let combos = combinations(&axes);
        let firsts: Vec<&str> = combos.iter().map(|c| c[0].1.as_str()).collect();
        assert_eq!(firsts, ["1", "2", "3", "1", "2", "3"]);
        assert_eq!(combos[3][1].1, "y");
    }
}
