use std::path::{Path, PathBuf};

use loam::api::{self, Solved};
use loam::output::{self, PlanWritten, WarmStart};
use loam::problem::planar::PlanarTerrainConfig;
use loam::solver::{self, IterationInfo, SolveReport, SolveSettings};
use loam::transcription::PhaseTrajectory;

use super::interrupt::{self, Interrupted};
use super::{progress, ProblemArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Where to write the results (default: runs/<problem name>). A folder that holds another
    /// plan has that plan's files moved into DIR/archive/<its plan_id>/ first.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
    /// Start IPOPT from the plan in RUN_DIR (a folder `loam solve` or `loam sweep` wrote): the
    /// same robot's plan on any mesh, resampled; on a wrench space also its plan on another
    /// ground (the relaxation runs from it first).
    #[arg(long, value_name = "RUN_DIR")]
    warm_start: Option<PathBuf>,
    /// Replay the converged plan on its own contact model and, while
    /// it departs from the plan by more than TOL (relative, in the centre of mass's peak rise
    /// and the distance), solve again with every interval halved, started from the coarser
    /// plan (at most --refine-rounds times). The final mesh is in solution.json's problem.
    #[arg(long, value_name = "TOL")]
    refine: Option<f64>,
    /// The most refinements --refine makes.
    #[arg(long, default_value_t = 3, value_name = "N")]
    refine_rounds: usize,
}

type Progress<'a> = Option<&'a mut dyn FnMut(&IterationInfo) -> bool>;

/// `loam solve`: the arguments checked, then `loam::api::solve` (every robot on every contact
/// model through one entry point), its run folder written by `Solved::write`, and the
/// summary printed here.
pub fn run(args: Args) -> anyhow::Result<u8> {
    // Ctrl-C stops IPOPT at its next iteration; solve_logged then cleans up.
    interrupt::install();
    let problem = args.problem.load_any()?;
    let file = &args.problem.file;
    // The command line's own arguments, refused in its own words before anything is solved.
    if let Some(tol) = args.refine {
        if !(tol.is_finite() && tol > 0.0) {
            return Err(super::BadInput(format!(
                "--refine {tol}: accepted, a tolerance > 0 (a relative error, e.g. 0.01)"
            ))
            .into());
        }
    }
    if let PlanarTerrainConfig::WrenchSpace(_) = &problem.terrain {
        if args.refine.is_some() {
            return Err(super::BadInput(
                "--refine: a plan on a wrench space is replayed by the MDP step, not refined yet"
                    .into(),
            )
            .into());
        }
    }
    let refine = args.refine.map(|tolerance| api::Refine {
        tolerance,
        rounds: args.refine_rounds,
    });
    let out = out_dir(&args, problem.name())?;
    let (solved, log) = solve_logged(
        &out,
        args.quiet,
        api::solver_options(&problem),
        |settings, on_iteration| {
            api::solve(
                &problem,
                file,
                api::SolveOptions {
                    log_file: settings.log_file.clone(),
                    refine,
                    warm_start: args.warm_start.clone(),
                    on_iteration,
                },
            )
        },
    )?;
    let provenance = solved.provenance();
    if args.warm_start.is_some() && !matches!(provenance.warm_start, WarmStart::Plan { .. }) {
        eprintln!("the warm start did not converge; solved again from the problem's initial_guess");
    }
    let written = solved.write(&out.path, provenance, Some(&log))?;
    if !args.quiet {
        print_solved(&solved, &out.path, &written);
    }
    let converged = solved.report().converged;
    // A refinement that did not reach its tolerance is a failure (exit 1), its best plan
    // written; said whatever --quiet says.
    let unrefined = {
        let (problem, rounds) = (&solved.problem, &solved.rounds);
        {
            let tol = args.refine.or(problem.mesh.as_ref().map(|m| m.tolerance));
            let kept = rounds.iter().find(|r| r.kept);
            match (tol, kept) {
                (Some(tol), Some(kept)) if kept.converged && !(kept.error <= tol) => {
                    let errors: Vec<String> = rounds
                        .iter()
                        .map(|r| {
                            let nodes: Vec<String> =
                                r.nodes.iter().map(|n| n.to_string()).collect();
                            format!("{} nodes {:.2} %", nodes.join("+"), 100.0 * r.error)
                        })
                        .collect();
                    eprintln!(
                        "the replay is still {:.2} % off (tolerance {:.2} %) after {} \
                         refinements (mesh.max_rounds or --refine-rounds): {}; the plan kept \
                         (the smallest error) is written, not converged to the tolerance",
                        100.0 * kept.error,
                        100.0 * tol,
                        rounds.len() - 1,
                        errors.join(", ")
                    );
                    true
                }
                _ => false,
            }
        }
    };
    Ok(if converged && !unrefined { 0 } else { 1 })
}

/// A plan's stages (`strategy: two_stage`; a wrench space's relaxation and full solve).
fn print_stages(stages: &[loam::planner::StageOutcome]) {
    for (k, stage) in stages.iter().enumerate() {
        println!(
            "{:15}{}: {} after {} iterations, objective {:.6e}",
            if k == 0 { "two stages" } else { "" },
            stage.stage,
            stage.status,
            stage.iterations,
            stage.objective
        );
    }
}

/// The summary of a solve: what the plan achieved, in each kind's terms.
fn print_solved(solved: &Solved, out: &Path, written: &PlanWritten) {
    let Solved {
        problem,
        plan,
        rounds,
        wrench_space,
        ..
    } = solved;
    let task: Vec<String> = {
        {
            for (k, round) in rounds.iter().enumerate() {
                println!(
                    "{:15}nodes {:?}: {} after {} iterations, objective {:.6e}, replay off by {:.2} %{}",
                    if k == 0 { "refinement" } else { "" },
                    round.nodes,
                    if round.converged {
                        "converged"
                    } else {
                        "not converged"
                    },
                    round.iterations,
                    round.objective,
                    100.0 * round.error,
                    if round.kept && rounds.len() > 1 { " (kept)" } else { "" }
                );
            }
            for (k, start) in plan.starts.iter().enumerate() {
                let held: Vec<String> = start
                    .held_durations
                    .iter()
                    .map(|d| d.map_or("free".into(), |d| format!("{:.0} ms", d * 1e3)))
                    .collect();
                println!(
                    "{:15}{}: {} after {} iterations, objective {:.6e}{}",
                    if k == 0 { "starts" } else { "" },
                    if held.is_empty() {
                        "the file's set-up".to_string()
                    } else {
                        format!("durations held at [{}]", held.join(", "))
                    },
                    start.status,
                    start.iterations,
                    start.objective,
                    if start.kept { " (kept)" } else { "" }
                );
            }
            print_stages(&plan.stages);
            let key = output::planar::key_figures(plan);
            let mut lines = vec![
                format!(
                    "objective      {:.6e} ({})",
                    plan.report.objective,
                    serde_json::to_value(problem.task.objective)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ),
                format!(
                    "distance       {:.4} m, centre of mass rise {:.4} m, duration {:.3} s",
                    key.distance_m, key.com_rise_m, key.duration_s
                ),
            ];
            let mut gait = Vec::new();
            if let Some(cot) = key.cost_of_transport {
                gait.push(format!("cost of transport {cot:.4}"));
            }
            if let Some(r) = key.periodicity_residual {
                gait.push(format!("periodicity residual {r:.1e}"));
            }
            if !gait.is_empty() {
                lines.push(format!("gait           {}", gait.join(", ")));
            }
            match wrench_space {
                // On a wrench space: the solve's MDP replay (the plan's own step on the
                // ground), a gait's stride by stride.
                Some((mdp, _)) => {
                    let replay = &mdp.record;
                    lines.push(format!(
                        "MDP replay     distance {:.4} m, ground nodes within {:.1e} (open loop, replay.csv)",
                        replay.distance_m, replay.ground_difference
                    ));
                    if let (Some(target), Some(replayed)) =
                        (problem.task.apex_rise, replay.apex_rise_m)
                    {
                        lines.push(format!(
                            "apex rise      {:.2} mm planned (vertical), MDP replay {:.2} mm",
                            target * 1e3,
                            replayed * 1e3
                        ));
                    }
                    for s in &replay.strides {
                        lines.push(format!(
                            "{:15}stride {}: length {:.4} m ({:+.2} %), apex {:.4} m ({:+.2} %)",
                            if s.stride == 1 { "MDP strides" } else { "" },
                            s.stride,
                            s.length_m,
                            100.0 * (s.length_m - s.planned_length_m) / s.planned_length_m,
                            s.apex_m,
                            100.0 * (s.apex_m - s.planned_apex_m) / s.planned_apex_m,
                        ));
                    }
                }
                None => {
                    let e = plan.planner.interval_errors(&plan.trajectory);
                    lines.push(format!(
                        "mesh error     {:.2e} at most ({} in phase {}, interval {}), {:.2e} summed over its {} intervals (relative, MODEL.md 5.3)",
                        e.max,
                        e.worst_state,
                        e.worst_phase,
                        e.worst_interval,
                        e.total,
                        e.intervals.iter().map(Vec::len).sum::<usize>()
                    ));
                }
            }
            lines
        }
    };
    print_summary(
        solved.report(),
        solved.setup_seconds(),
        solved.phases(),
        &task,
        out,
        written,
    );
}

/// The results folder and whether this run created it. User runs land in runs/ (ignored by
/// git); results/ is written only by results/regenerate.sh.
struct OutDir {
    path: PathBuf,
    created: bool,
}

fn out_dir(args: &Args, name: &str) -> anyhow::Result<OutDir> {
    let path = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(name));
    let created = !path.exists();
    // Before the solve: an unwritable folder is found now (exit 3), not after it.
    loam::output::ensure_writable(&path)?;
    Ok(OutDir { path, created })
}

/// Runs `solve` with IPOPT's log in a temporary file of `out` (returned with the plan, for the
/// writer to move in as `ipopt.log`; removed when the solve fails) and the iterations shown on
/// a terminal. On Ctrl-C (or SIGTERM) IPOPT stops at its next iteration and this returns
/// [`Interrupted`] with the folder as it was: no log, no result, and no folder if the run
/// created it.
fn solve_logged<P, E: Into<anyhow::Error>>(
    out: &OutDir,
    quiet: bool,
    options: Vec<(String, solver::OptionValue)>,
    solve: impl FnOnce(&SolveSettings, Progress) -> Result<P, E>,
) -> anyhow::Result<(P, PathBuf)> {
    let log = out
        .path
        .join(format!(".ipopt.log.tmp{}", std::process::id()));
    // IPOPT appends each solve of the run (a warm start and its retry, `best`'s starts).
    std::fs::remove_file(&log).ok();
    let settings = SolveSettings {
        options,
        log_file: Some(log.clone()),
        ..SolveSettings::default()
    };
    let bar = progress::spinner(quiet, "solving");
    let mut last_iteration = 0;
    let mut shown = progress::ipopt(&bar, "IPOPT");
    let mut on_iteration = |info: &IterationInfo| {
        last_iteration = info.iteration;
        shown(info)
    };
    let plan = solve(&settings, Some(&mut on_iteration));
    bar.finish_and_clear();
    if interrupt::requested() {
        std::fs::remove_file(&log).ok();
        if out.created {
            // Only if still empty: nothing of anyone else's goes.
            std::fs::remove_dir(&out.path).ok();
        }
        return Err(Interrupted(format!(
            "IPOPT stopped at iteration {last_iteration}; nothing was written to {}",
            out.path.display()
        ))
        .into());
    }
    match plan {
        Ok(plan) => Ok((plan, log)),
        Err(e) => {
            // Bad input found while setting up (a data file, a warm start) or a failed solve:
            // the log goes, and the folder if this run made it (only if still empty).
            std::fs::remove_file(&log).ok();
            if out.created {
                std::fs::remove_dir(&out.path).ok();
            }
            Err(e.into())
        }
    }
}

/// The console summary of a solve; `task` holds the lines that say what the plan achieved.
fn print_summary(
    r: &SolveReport,
    setup_seconds: f64,
    phases: &[PhaseTrajectory],
    task: &[String],
    out: &Path,
    written: &PlanWritten,
) {
    let verdict = if r.converged {
        "converged"
    } else {
        "NOT CONVERGED"
    };
    println!(
        "{verdict}: IPOPT {} after {} iterations",
        r.status, r.iterations
    );
    for line in task {
        println!("  {line}");
    }
    let phases: Vec<String> = phases
        .iter()
        .map(|p| format!("{} {:.1} ms", p.name, p.duration * 1e3))
        .collect();
    println!("  phases         {}", phases.join(", "));
    println!("  max violation  {:.2e}", r.max_violation);
    let binding: Vec<String> = r
        .binding
        .iter()
        .map(|(name, n)| format!("{name} ({n})"))
        .collect();
    println!(
        "  binding        {}",
        if binding.is_empty() {
            "none".to_string()
        } else {
            binding.join(", ")
        }
    );
    println!(
        "  time           {:.1} ms set-up + {:.1} ms solve",
        setup_seconds * 1e3,
        r.solve_seconds * 1e3
    );
    if !r.converged {
        println!("  worst violated constraints (best iterate kept, marked not converged):");
        for v in r.violations.iter().take(8) {
            println!(
                "    {:<60} {:+.3e}  bounds [{:.3e}, {:.3e}]",
                v.name, v.value, v.lower, v.upper
            );
        }
    }
    println!(
        "  wrote          {}/{{solution.json, trajectory.csv, ipopt.log}} (plan {})",
        out.display(),
        written.plan_id
    );
    if let Some(archived) = &written.archived {
        println!(
            "  archived       the folder's previous plan ({}) to {}/",
            archived.moved.join(", "),
            archived.to.display()
        );
    }
}
