//! `loam bench` on a planar robot's problem: the file as it stands against one stage and two
//! stages (docs/MODEL.md 5.2), interleaved so that all see the same machine state; medians of
//! set-up, solve and total, the iterations, and the objective each reaches, with a line where
//! two configurations end at different optima (a time is only comparable between equal ends).
//! A problem with `mesh:` adds a fourth row, the file's solve with its mesh refinement (the
//! replays that measure each round included): what refinement costs beside the solve.

use std::path::Path;
use std::time::Instant;

use loam::planner::planar;
use loam::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use loam::problem::Strategy;
use loam::solver::SolveSettings;

use super::solves::{median, print_row, time_ratio, Sample};

const CONFIGS: [&str; 4] = ["file", "1-stage", "2-stage", "refined"];

/// Times `problem` (read from `file`) in the three configurations, `repeat` times each.
/// A wrench-space problem is skipped with the reason: the configurations compared here (one
/// stage, two stages) are the closed-form grounds'; on a wrench space the plan is always the
/// relaxation then the full problem, and one solve takes tens of seconds (`loam solve` reports
/// its time).
pub fn bench(name: &str, problem: &PlanarProblem, repeat: usize) -> anyhow::Result<()> {
    if matches!(problem.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
        println!(
            "{name:<22} skipped: a wrench-space terrain, solved in one way (the relaxation, \
             then maximum dissipation) in tens of seconds; `loam solve` reports its time"
        );
        return Ok(());
    }
    let mut configs = vec![
        problem.clone(),
        PlanarProblem {
            strategy: Strategy::OneStage,
            stage_one: None,
            ..problem.clone()
        },
        PlanarProblem {
            strategy: Strategy::TwoStage,
            ..problem.clone()
        },
    ];
    if problem.mesh.is_some() {
        configs.push(problem.clone());
    }
    let mut samples: Vec<Vec<Sample>> = (0..configs.len()).map(|_| Vec::new()).collect();
    for _ in 0..repeat.max(1) {
        for (k, (config, out)) in configs.iter().zip(samples.iter_mut()).enumerate() {
            out.push(solve(config, k == 3)?);
        }
    }
    for (config, samples) in CONFIGS.iter().zip(&samples) {
        print_row(name, config, samples);
    }
    let total = |s: &[Sample]| median(s.iter().map(Sample::total).collect());
    println!(
        "{:<22} {} (median totals)",
        "",
        time_ratio("2-stage", total(&samples[2]), "1-stage", total(&samples[1]))
    );
    let (one, two) = (samples[1][0].objective, samples[2][0].objective);
    if (one - two).abs() > 1e-6 * one.abs().max(1e-12) {
        println!(
            "{:<22} different optima: 1-stage {one:.7}, 2-stage {two:.7} ({}): their times \
             compare different plans",
            "",
            if two < one {
                "2-stage lower"
            } else {
                "1-stage lower"
            }
        );
    }
    Ok(())
}

/// One solve as `loam solve` runs it (output aside); with `refined`, followed by the
/// problem's mesh refinement (its rounds' solves and replays in the time, their iterations
/// summed, the last round's plan's objective).
fn solve(problem: &PlanarProblem, refined: bool) -> anyhow::Result<Sample> {
    let settings = SolveSettings {
        options: planar::solver_options(problem),
        ..SolveSettings::default()
    };
    let started = Instant::now();
    let mut plan = planar::plan(problem, &settings, None)?;
    let setup = plan.setup_seconds;
    let mut iterations = plan.report.iterations;
    if let (true, Some(mesh)) = (refined, &problem.mesh) {
        let (_, refined, rounds) = planar::refine::refine(
            problem,
            plan,
            &settings,
            mesh.tolerance,
            mesh.max_rounds,
            &mut loam::api::replay_error,
            None,
        )?;
        iterations = rounds.iter().map(|r| r.iterations).sum();
        plan = refined;
    }
    let total = started.elapsed().as_secs_f64();
    Ok(Sample {
        setup,
        solve: total - setup,
        iterations,
        converged: plan.report.converged,
        objective: plan.report.objective,
    })
}

/// The problem in `file`.
pub fn load(file: &Path) -> anyhow::Result<Option<PlanarProblem>> {
    Ok(Some(loam::problem::load_any(file, &[])?))
}
