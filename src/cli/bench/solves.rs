//! The planner's benchmarks: solves against the paper's baseline, warm against cold sweeps.

use std::path::PathBuf;
use std::time::Instant;

use loam::planner;
use loam::problem::{self, InitialGuess, Problem};
use loam::solver::{OptionValue, SolveSettings};

use super::Args;

#[derive(clap::Args)]
pub struct SweepArgs {
    /// Problem files (default: every problems/*.yaml).
    files: Vec<PathBuf>,
    /// The heights: START:STOP:STEP in metres.
    #[arg(long, default_value = "0.03:0.10:0.01")]
    heights: String,
    /// Sweeps per configuration.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
}

struct Sample {
    setup: f64,
    solve: f64,
    iterations: usize,
    converged: bool,
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
        "{:<22} {:<9} {:>5} {:>18} {:>22} {:>10}",
        "problem", "config", "runs", "set-up ms (range)", "solve ms (range)", "iterations"
    );
    for file in files {
        let problem = problem::load(&file, &[])?;
        let name = file
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let loam = measure(&problem, args.repeat, false)?;
        let baseline = measure(&problem, args.repeat, true)?;
        for (config, samples) in [("loam", &loam), ("baseline", &baseline)] {
            print_row(&name, config, samples);
        }
        let total = |s: &[Sample]| median(s.iter().map(|x| x.setup + x.solve).collect());
        println!(
            "{:<22} {} (median total)",
            "",
            time_ratio("loam", total(&loam), "baseline", total(&baseline))
        );
    }
    println!(
        "baseline: all-zero initial guess and IPOPT's default barrier strategy, as in the paper;"
    );
    println!("the paper reports 6.4 ± 3.8 s per solve.");
    Ok(0)
}

fn measure(problem: &Problem, repeat: usize, baseline: bool) -> anyhow::Result<Vec<Sample>> {
    let mut problem = problem.clone();
    let mut settings = SolveSettings {
        options: planner::solver_options(&problem),
        ..SolveSettings::default()
    };
    if baseline {
        problem.initial_guess = InitialGuess::Zero;
        settings
            .options
            .push(("mu_strategy".into(), OptionValue::Str("monotone".into())));
    }
    (0..repeat.max(1))
        .map(|_| {
            let started = Instant::now();
            let (jump, mut nlp) = planner::transcribe(&problem)?;
            let x0 = jump.initial_guess(problem.initial_guess, &nlp);
            let setup = started.elapsed().as_secs_f64();
            let report = loam::solver::solve(&mut nlp, &x0, &settings, None, None)?;
            Ok(Sample {
                setup,
                solve: report.solve_seconds,
                iterations: report.iterations,
                converged: report.converged,
            })
        })
        .collect()
}

fn print_row(name: &str, config: &str, samples: &[Sample]) {
    let ms = |f: fn(&Sample) -> f64| -> (f64, f64, f64) {
        let v: Vec<f64> = samples.iter().map(|s| f(s) * 1e3).collect();
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(0.0, f64::max);
        (median(v), lo, hi)
    };
    let (s, s_lo, s_hi) = ms(|s| s.setup);
    let (v, v_lo, v_hi) = ms(|s| s.solve);
    let iterations = median(samples.iter().map(|s| s.iterations as f64).collect());
    let failed = samples.iter().filter(|s| !s.converged).count();
    println!(
        "{name:<22} {config:<9} {:>5} {s:>7.1} ({s_lo:.1}-{s_hi:.1}) {v:>9.1} ({v_lo:.1}-{v_hi:.1}) {iterations:>10.0}{}",
        samples.len(),
        if failed > 0 { format!("  {failed} NOT CONVERGED") } else { String::new() }
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

fn median(mut v: Vec<f64>) -> f64 {
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
    let axis = super::super::sweep::parse_axis(&format!("task.apex_height={}", args.heights))?;
    println!(
        "{:<22} {:<6} {:>5} {:>20} {:>11} {:>10}",
        "problem", "start", "runs", "sweep ms (range)", "iterations", "converged"
    );
    for file in files {
        let problems: Vec<Problem> = axis
            .values
            .iter()
            .map(|h| problem::load(&file, &[format!("task.apex_height={h}")]))
            .collect::<Result<_, _>>()?;
        let name = file
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let mut runs: [Vec<(f64, usize, usize)>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..args.repeat.max(1) {
            for (slot, warm) in [(0, false), (1, true)] {
                let started = Instant::now();
                let (mut iterations, mut converged) = (0, 0);
                super::super::sweep::solve_in_order(problems.iter(), warm, |_, plan| {
                    iterations += plan.report.iterations;
                    converged += plan.report.converged as usize;
                    Ok(())
                })?;
                runs[slot].push((started.elapsed().as_secs_f64(), iterations, converged));
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
    }
    println!("a warm solve that does not converge is re-solved cold; its time counts.");
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::time_ratio;

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
