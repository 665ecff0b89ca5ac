//! The planner's benchmarks: loam's solves against the paper's baseline and a CasADi-Python
//! peer, warm against cold sweeps.

use std::path::{Path, PathBuf};
use std::time::Instant;

use loam::planner;
use loam::problem::{self, InitialGuess, Problem};
use loam::solver::{OptionValue, SolveSettings};

use super::peer;
use super::Args;

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
    /// Building the NLP (and the solver object, for the peer) and the initial guess [s].
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

const CONFIGS: [&str; 5] = ["loam", "previous", "baseline", "peer", "loam-ldl"];

/// The configurations loam itself runs.
#[derive(Clone, Copy, PartialEq)]
enum Config {
    /// The problem file as it stands, loam's defaults.
    Loam,
    /// loam's defaults before the rest guess (commit 37eb56e): the ballistic guess.
    Previous,
    /// The paper's set-up.
    Baseline,
    /// loam's defaults with loam's own linear solver (`linear_solver: loam`).
    OwnLinearSolver,
}

pub fn run_solves(files: Vec<PathBuf>, repeat: usize) -> anyhow::Result<u8> {
    let args = Args {
        what: None,
        files,
        repeat,
    };
    let files = if args.files.is_empty() {
        shipped_problems()?
    } else {
        args.files
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
    let mut guesses = Vec::new();
    for file in files {
        let name = stem(&file);
        let Some(problem) = hopper_problem(&file, &[])? else {
            if let Some(planar) = super::planar::load(&file)? {
                super::planar::bench(&name, &planar, args.repeat)?;
            }
            continue;
        };
        let guess = serde_json::to_value(problem.initial_guess)?;
        guesses.push(format!("{name} {}", guess.as_str().unwrap_or_default()));
        // Interleaved (loam, previous, baseline, loam-ldl, peer, loam, ...) so that all
        // five see the same machine state; the peer solves with the IPOPT options loam's own
        // solve ran with.
        let mut samples: [Vec<Sample>; 5] = Default::default();
        let (mut startup, mut peer_failed) = (Vec::new(), None);
        for _ in 0..args.repeat.max(1) {
            let (sample, options) = solve_loam(&problem, Config::Loam)?;
            samples[0].push(sample);
            samples[1].push(solve_loam(&problem, Config::Previous)?.0);
            samples[2].push(solve_loam(&problem, Config::Baseline)?.0);
            samples[4].push(solve_loam(&problem, Config::OwnLinearSolver)?.0);
            if peer_failed.is_some() {
                continue;
            }
            let input = serde_json::json!({"problem": &problem, "solver_options": options});
            match peer::solve(&input) {
                Ok(run) => {
                    startup.push(run.startup);
                    samples[3].push(Sample {
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
        for (config, samples) in CONFIGS.iter().zip(&samples) {
            if !samples.is_empty() {
                print_row(&name, config, samples);
            }
        }
        let total = |s: &[Sample]| median(s.iter().map(Sample::total).collect());
        println!(
            "{:<22} {} (median totals)",
            "",
            time_ratio("loam-ldl", total(&samples[4]), "loam", total(&samples[0]))
        );
        for (other, k) in [("previous", 1), ("baseline", 2)] {
            println!(
                "{:<22} {} (median totals)",
                "",
                time_ratio("loam", total(&samples[0]), other, total(&samples[k]))
            );
        }
        // A time compares plans only where they are the same plan.
        let reference = samples[0][0].objective;
        for (config, samples) in CONFIGS.iter().zip(&samples).skip(1) {
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
                samples[3].len(),
                args.repeat.max(1)
            ),
            None => {
                println!(
                    "{:<22} {} (median totals)",
                    "",
                    time_ratio("loam", total(&samples[0]), "peer", total(&samples[3]))
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
    }
    println!(
        "loam: each problem as its file states it, with loam's IPOPT options (initial guess: {}).
previous: loam's defaults before the rest guess became the default (initial_guess: ballistic).
baseline: the paper's set-up in loam: all-zero initial guess, IPOPT's monotone barrier; the
  paper reports 6.4 ± 3.8 s per solve.
peer: bench/peer/hopper_casadi.py, the same NLP written by hand with CasADi's Python API (SX
  expressions, one casadi.nlpsol), solved by the same IPOPT with loam's options from the
  all-zero guess; set-up (building the NLP and the nlpsol object) and solve are timed inside
  its python3 process, whose start-up is shown apart.
loam-ldl: loam's defaults with loam's own linear solver (linear_solver: loam, a multifrontal
  LDLᵀ with threshold pivoting) in place of MUMPS.
file, 1-stage, 2-stage (a planar robot's problem): as its file states it, then with
  strategy: one_stage and two_stage (docs/MODEL.md 5.2). Problems on a wrench-space terrain
  are skipped, with the reason.
refined (a planar problem with `mesh:`): the file's solve and then its mesh refinement, the
  rounds' solves and replays in the time and their iterations summed.
Where two configurations end at different optima a line says so: their times compare
  different plans.
Times are set-up + solve = total; a ratio is loam's median total over the other's: above 1
loam takes longer (is slower), below 1 it is faster. Iterations: median (range).",
        guesses.join(", ")
    );
    Ok(0)
}

/// Why planar problems are not benchmarked here.
const PLANAR: &str = "a planar robot; `loam bench sweep` times the hopper's height \
                      sweep (`loam bench FILE` times a planar problem's solve)";

/// The hopper problem in `file`, or None for a planar robot's (before the overrides, which
/// may name hopper fields).
fn hopper_problem(_file: &Path, _overrides: &[String]) -> anyhow::Result<Option<Problem>> {
    // The hopper's own schema is gone; its problems are planar ones (being reworked).
    Ok(None)
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// One loam solve in one configuration; also the IPOPT options it ran with.
fn solve_loam(_problem: &Problem, _config: Config) -> anyhow::Result<(Sample, Options)> {
    anyhow::bail!("the hopper's own planner is gone")
}

type Options = std::collections::BTreeMap<String, OptionValue>;

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
    let axis = loam::sweep::parse_axis(&format!("task.apex_height={}", args.heights))
        .map_err(|e| super::super::BadInput(e.to_string()))?;
    println!(
        "{:<22} {:<6} {:>5} {:>20} {:>11} {:>10}",
        "problem", "start", "runs", "sweep ms (range)", "iterations", "converged"
    );
    for file in files {
        let name = stem(&file);
        let problems: Option<Vec<Problem>> = axis
            .values
            .iter()
            .map(|h| {
                let mut overrides = args.sets.clone();
                overrides.push(format!("task.apex_height={h}"));
                hopper_problem(&file, &overrides).transpose()
            })
            .collect::<Option<anyhow::Result<_>>>()
            .transpose()?;
        let Some(problems) = problems else {
            println!("{name:<22} skipped: {PLANAR}");
            continue;
        };
        let mut runs: [Vec<(f64, usize, usize)>; 2] = [Vec::new(), Vec::new()];
        // Per height, converged and objective, from each start's first run (solves repeat
        // exactly).
        let mut optima: [Vec<(bool, f64)>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..args.repeat.max(1) {
            for (slot, warm) in [(0, false), (1, true)] {
                let started = Instant::now();
                let (mut iterations, mut converged) = (0, 0);
                let mut ends = Vec::new();
                let _ = (warm, &mut iterations, &mut converged, &mut ends);
                anyhow::bail!("the hopper's own planner is gone");
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
