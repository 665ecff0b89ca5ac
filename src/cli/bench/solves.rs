//! The planner's benchmarks: every problem's solve in its configurations (`planar.rs`), the
//! hopper's against a CasADi-Python peer (`peer.rs`), warm against cold sweeps.

use std::path::{Path, PathBuf};
use std::time::Instant;

use loam::planner::planar;
use loam::problem;
use loam::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use loam::solver::{OptionValue, SolveSettings};

use super::peer::{self, Refusal};

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Problem files (default: every problems/*.yaml).
    files: Vec<PathBuf>,
    /// The heights: START:STOP:STEP in metres, in the order the warm chain solves them
    /// (from the top down by default: a chain follows its first plan's local optimum, and
    /// from the highest jump down it reaches the cold plans' optima or better).
    #[arg(long, default_value = "0.10:0.03:0.01")]
    heights: String,
    /// Sweeps per configuration.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Overrides of every problem's fields, as for `loam solve`
    /// (e.g. `--set solver.linear_solver=loam`).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
}

/// One solve, timed from outside the solver as `loam solve` runs it (output aside).
pub(super) struct Sample {
    /// Building the NLP (and the solver objects, for the peer) and the initial guess [s].
    pub setup: f64,
    /// The solve call [s].
    pub solve: f64,
    pub iterations: usize,
    pub converged: bool,
    pub objective: f64,
}

impl Sample {
    pub fn total(&self) -> f64 {
        self.setup + self.solve
    }
}

/// The hopper's rows against its peer, in the order they are solved.
const PEER_CONFIGS: [&str; 3] = ["loam", "loam-ldl", "peer"];

/// Benchmarks each problem in `files` (every problems/*.yaml by default), with the `--set`
/// overrides `sets`, `repeat` times per configuration.
pub fn run_solves(files: Vec<PathBuf>, repeat: usize, sets: &[String]) -> anyhow::Result<u8> {
    let files = if files.is_empty() {
        shipped_problems()?
    } else {
        files
    };
    println!(
        "{:<22} {:<9} {:>4} {:>22} {:>22} {:>22} {:>15} {:>10}",
        "problem",
        "config",
        "runs",
        "set-up ms (range)",
        "solve ms (range)",
        "total ms (range)",
        "iterations",
        "objective"
    );
    for file in files {
        let name = stem(&file);
        let problem = problem::load_any(&file, sets)?;
        super::planar::bench(&name, &problem, repeat)?;
        // (A wrench-space problem was skipped above, with the reason.)
        if matches!(problem.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
            continue;
        }
        match peer::input(&problem) {
            Ok(input) => against_peer(&name, &problem, &input, repeat)?,
            Err(Refusal::NotHopper(_)) => {}
            Err(why) => println!("{name:<22} no peer: {why}"),
        }
    }
    println!(
        "file, 1-stage, 2-stage (every problem): as its file states it, then with strategy:
  one_stage and two_stage (docs/MODEL.md 5.2). Problems on a wrench-space terrain are skipped,
  with the reason.
refined (a problem with `mesh:`): the file's solve and then its mesh refinement, the rounds'
  solves and replays in the time and their iterations summed.
For the hopper's robot file (robots/hopper.yaml), three more, interleaved:
loam: the file's solve again (its mesh, not refined), beside the peer's.
loam-ldl: the same with loam's own linear solver (linear_solver: loam, a multifrontal LDLᵀ
  with threshold pivoting) in place of MUMPS.
peer: bench/peer/hopper_casadi.py, the same optimal control problem written by hand with
  CasADi's Python API in the hopper's own coordinates (explicit dynamics, SX expressions, one
  casadi.nlpsol per stage), solved by the same IPOPT with loam's options from its own rest
  guess, in the file's strategy (two stages: the durations loam's first stage holds, then
  released with the multipliers); set-up (building the NLP and the nlpsol objects) and solve
  are timed inside its python3 process, whose start-up is shown apart.
Where two configurations end at different optima a line says so: their times compare
  different plans.
Times are set-up + solve = total; a ratio is the first's median total over the second's:
  above 1 the first takes longer (is slower), below 1 it is faster. Iterations: median
  (range), of every stage."
    );
    Ok(0)
}

/// The hopper's file solved by loam (with MUMPS and with its own linear solver) and by the
/// peer, interleaved so that all three see the same machine state; rows, ratios, and a line
/// where an optimum differs from loam's.
fn against_peer(
    name: &str,
    problem: &PlanarProblem,
    input: &serde_json::Value,
    repeat: usize,
) -> anyhow::Result<()> {
    let settings = SolveSettings {
        options: planar::solver_options(problem),
        ..SolveSettings::default()
    };
    let mut ldl = settings.clone();
    ldl.options
        .push(("linear_solver".into(), OptionValue::Str("loam".into())));
    let mut samples: [Vec<Sample>; 3] = Default::default();
    let (mut startup, mut peer_failed) = (Vec::new(), None);
    for _ in 0..repeat.max(1) {
        samples[0].push(solve_planar(problem, &settings)?);
        samples[1].push(solve_planar(problem, &ldl)?);
        if peer_failed.is_some() {
            continue;
        }
        match peer::solve(input) {
            Ok(run) => {
                startup.push(run.startup);
                samples[2].push(Sample {
                    setup: run.setup,
                    solve: run.solve,
                    iterations: run.iterations,
                    converged: run.converged,
                    objective: run.objective,
                });
            }
            Err(e) => peer_failed = Some(e),
        }
    }
    for (config, samples) in PEER_CONFIGS.iter().zip(&samples) {
        if !samples.is_empty() {
            print_row(name, config, samples);
        }
    }
    let total = |s: &[Sample]| median(s.iter().map(Sample::total).collect());
    println!(
        "{:<22} {} (median totals)",
        "",
        time_ratio("loam-ldl", total(&samples[1]), "loam", total(&samples[0]))
    );
    // A time compares plans only where they are the same plan.
    let reference = samples[0][0].objective;
    for (config, samples) in PEER_CONFIGS.iter().zip(&samples).skip(1) {
        if let Some(first) = samples.first() {
            if (first.objective - reference).abs() > 1e-6 * reference.abs().max(1e-12) {
                println!(
                    "{:<22} different optima: loam {reference:.7}, {config} {:.7}",
                    "", first.objective
                );
            }
        }
    }
    match peer_failed {
        Some(e) => println!(
            "{:<22} peer failed after {} of {} runs: {e:#}",
            "",
            samples[2].len(),
            repeat.max(1)
        ),
        None => {
            println!(
                "{:<22} {} (median totals)",
                "",
                time_ratio("loam", total(&samples[0]), "peer", total(&samples[2]))
            );
            let (lo, hi) = range(&startup);
            println!(
                "{:<22} peer's python3 process start-up (import casadi, IPOPT's plugin, JSON), \
                 not in its total: {:.0} ms ({:.0}-{:.0})",
                "",
                median(startup.clone()) * 1e3,
                lo * 1e3,
                hi * 1e3
            );
        }
    }
    Ok(())
}

/// One planar solve as `loam solve` runs it on the file's mesh (output and refinement aside).
fn solve_planar(problem: &PlanarProblem, settings: &SolveSettings) -> anyhow::Result<Sample> {
    let started = Instant::now();
    let plan = planar::plan(problem, settings, None)?;
    let total = started.elapsed().as_secs_f64();
    Ok(Sample {
        setup: plan.setup_seconds,
        solve: total - plan.setup_seconds,
        iterations: plan.report.iterations,
        converged: plan.report.converged,
        objective: plan.report.objective,
    })
}

/// `loam bench --peer-input`: the peer's input for each file, one JSON line each.
pub fn print_peer_inputs(files: &[PathBuf], sets: &[String]) -> anyhow::Result<u8> {
    if files.is_empty() {
        return Err(super::super::BadInput(
            "--peer-input: name the problem files (e.g. problems/hopper_granular.yaml)".into(),
        )
        .into());
    }
    for file in files {
        let problem = problem::load_any(file, sets)?;
        let input = peer::input(&problem)
            .map_err(|why| super::super::BadInput(format!("{}: {why}", file.display())))?;
        println!("{input}");
    }
    Ok(0)
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

fn range(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

pub(super) fn print_row(name: &str, config: &str, samples: &[Sample]) {
    let ms = |f: fn(&Sample) -> f64| -> String {
        let v: Vec<f64> = samples.iter().map(|s| f(s) * 1e3).collect();
        let (lo, hi) = range(&v);
        format!("{:.1} ({lo:.1}-{hi:.1})", median(v))
    };
    let iterations: Vec<f64> = samples.iter().map(|s| s.iterations as f64).collect();
    let (lo, hi) = range(&iterations);
    let failed = samples.iter().filter(|s| !s.converged).count();
    println!(
        "{name:<22} {config:<9} {:>4} {:>22} {:>22} {:>22} {:>15} {:>10.6}{}",
        samples.len(),
        ms(|s| s.setup),
        ms(|s| s.solve),
        ms(Sample::total),
        format!("{:.0} ({lo:.0}-{hi:.0})", median(iterations)),
        samples[0].objective,
        if failed > 0 {
            format!("  {failed} NOT CONVERGED")
        } else {
            String::new()
        }
    );
}

/// `subject/reference time R: subject is slower` (R > 1) or `... faster` (R < 1): the ratio
/// is always the subject's time over the reference's, and the word follows from it.
pub fn time_ratio(subject: &str, subject_s: f64, reference: &str, reference_s: f64) -> String {
    let ratio = subject_s / reference_s;
    let verdict = if !ratio.is_finite() {
        "not comparable".to_string()
    } else if format!("{ratio:.2}") == "1.00" {
        format!("{subject} and {reference} take the same time")
    } else if ratio > 1.0 {
        format!("{subject} is slower ({ratio:.2}x the time)")
    } else {
        format!("{subject} is faster ({:.2}x the speed)", 1.0 / ratio)
    };
    format!("{subject}/{reference} time {ratio:.2}: {verdict}")
}

pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn shipped_problems() -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("problems")
        .map_err(|e| {
            super::super::BadInput(format!(
                "cannot read problems/ ({e}); run from the repository root or name files"
            ))
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Cold against warm-started sweeps over the same heights, alternating so that both see the
/// same machine state; medians of the total wall time, with iterations summed over the sweep.
pub fn run_sweep(args: SweepArgs) -> anyhow::Result<u8> {
    let files = if args.files.is_empty() {
        shipped_problems()?
    } else {
        args.files
    };
    let axis = loam::sweep::parse_axis(&format!("task.apex_rise={}", args.heights))
        .map_err(|e| super::super::BadInput(e.to_string()))?;
    println!(
        "{:<22} {:<6} {:>5} {:>20} {:>11} {:>10}",
        "problem", "start", "runs", "sweep ms (range)", "iterations", "converged"
    );
    for file in files {
        let name = stem(&file);
        let mut problems = Vec::new();
        for h in &axis.values {
            let mut overrides = args.sets.clone();
            overrides.push(format!("task.apex_rise={h}"));
            let problem = problem::load_any(&file, &overrides)?;
            if problem.task.apex_rise.is_none()
                || matches!(problem.terrain, PlanarTerrainConfig::WrenchSpace(_))
            {
                println!(
                    "{name:<22} skipped: a sweep of apex rises on a closed-form ground \
                     (`task.apex_rise`; a wrench space is planned from its file)"
                );
                problems.clear();
                break;
            }
            problems.push(problem);
        }
        if problems.is_empty() {
            continue;
        }
        let mut runs: [Vec<(f64, usize, usize)>; 2] = [Vec::new(), Vec::new()];
        // Per height, converged and objective, from each start's first run (solves repeat
        // exactly).
        let mut optima: [Vec<(bool, f64)>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..args.repeat.max(1) {
            for (slot, warm) in [(0, false), (1, true)] {
                let started = Instant::now();
                let (mut iterations, mut converged) = (0, 0);
                let mut ends = Vec::new();
                // Each height from the one before when that plan converged (the same mesh, so
                // its trajectory is a start as it is), re-solved cold when the warm solve fails.
                let mut previous: Option<loam::planner::planar::PlanarPlan> = None;
                for problem in &problems {
                    let settings = SolveSettings {
                        options: loam::planner::planar::solver_options(problem),
                        ..SolveSettings::default()
                    };
                    let start = previous
                        .as_ref()
                        .filter(|p| warm && p.report.converged)
                        .map(|p| p.trajectory.clone());
                    let mut plan =
                        loam::planner::planar::plan_from(problem, &settings, start.as_ref(), None)?;
                    if start.is_some() && !plan.report.converged {
                        iterations += plan.report.iterations;
                        plan = loam::planner::planar::plan(problem, &settings, None)?;
                    }
                    iterations += plan.report.iterations;
                    converged += plan.report.converged as usize;
                    ends.push((plan.report.converged, plan.report.objective));
                    previous = Some(plan);
                }
                runs[slot].push((started.elapsed().as_secs_f64(), iterations, converged));
                if optima[slot].is_empty() {
                    optima[slot] = ends;
                }
            }
        }
        let mut medians = [0.0; 2];
        for (slot, label) in [(0, "cold"), (1, "warm")] {
            let times: Vec<f64> = runs[slot].iter().map(|r| r.0 * 1e3).collect();
            let lo = times.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = times.iter().cloned().fold(0.0, f64::max);
            medians[slot] = median(times);
            let (_, iterations, converged) = runs[slot][0];
            println!(
                "{name:<22} {label:<6} {:>5} {:>8.0} ({lo:.0}-{hi:.0}) {iterations:>11} {converged:>6}/{}",
                runs[slot].len(),
                medians[slot],
                problems.len()
            );
        }
        println!(
            "{:<22} {} (median wall time)",
            "",
            time_ratio("warm", medians[1], "cold", medians[0])
        );
        println!("{:<22} {}", "", compare_optima(&optima[0], &optima[1]));
    }
    println!(
        "a warm solve that does not converge is re-solved cold; its time counts. A warm plan \
         follows its neighbour's local optimum, which may be another than the cold solve's."
    );
    Ok(0)
}

/// How the warm sweep's optima compare with the cold one's, height by height, over the
/// heights where both converged: the same (within 1e-6 relative), worse or better, with the
/// largest difference each way.
fn compare_optima(cold: &[(bool, f64)], warm: &[(bool, f64)]) -> String {
    let (mut same, mut worse, mut better) = (0, 0, 0);
    let (mut most_worse, mut most_better): (f64, f64) = (0.0, 0.0);
    let mut both = 0;
    for (&(cold_ok, c), &(warm_ok, w)) in cold.iter().zip(warm) {
        if !(cold_ok && warm_ok) {
            continue;
        }
        both += 1;
        let change = (w - c) / c.abs().max(f64::MIN_POSITIVE);
        if change.abs() <= 1e-6 {
            same += 1;
        } else if change > 0.0 {
            worse += 1;
            most_worse = most_worse.max(change);
        } else {
            better += 1;
            most_better = most_better.max(-change);
        }
    }
    let mut parts = vec![format!("the same optimum at {same}")];
    if worse > 0 {
        parts.push(format!(
            "a worse one at {worse} (up to {:+.1} %)",
            100.0 * most_worse
        ));
    }
    if better > 0 {
        parts.push(format!(
            "a better one at {better} (up to {:+.1} %)",
            -100.0 * most_better
        ));
    }
    format!(
        "warm plans against cold, of {both} heights converged in both: {}",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::{compare_optima, time_ratio};

    #[test]
    fn warm_optima_are_counted_against_cold_ones() {
        let cold = [
            (true, 1.0),
            (true, 2.0),
            (true, 4.0),
            (false, 1.0),
            (true, 5.0),
        ];
        let warm = [
            (true, 1.0),
            (true, 3.0),
            (true, 3.0),
            (true, 9.0),
            (true, 5.0 + 1e-9),
        ];
        assert_eq!(
            compare_optima(&cold, &warm),
            "warm plans against cold, of 4 heights converged in both: the same optimum at 2, \
             a worse one at 1 (up to +50.0 %), a better one at 1 (up to -25.0 %)"
        );
    }

    #[test]
    fn a_ratio_above_one_is_slower_and_below_one_faster() {
        // The reported case: loam 1.6x the baseline's time was printed "0.64x faster".
        let slow = time_ratio("loam", 1.6, "baseline", 1.0);
        assert_eq!(
            slow,
            "loam/baseline time 1.60: loam is slower (1.60x the time)"
        );
        let fast = time_ratio("loam", 0.5, "baseline", 1.0);
        assert_eq!(
            fast,
            "loam/baseline time 0.50: loam is faster (2.00x the speed)"
        );
        assert!(time_ratio("warm", 1.0, "cold", 1.0).contains("the same time"));
        assert!(!time_ratio("warm", 1.0, "cold", 0.0).contains("faster"));
    }
}
