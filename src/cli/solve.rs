use std::path::{Path, PathBuf};

use loam::output::{self, PlanWritten, Provenance, WarmStart};
use loam::planner::{self, PlanError};
use loam::problem::planar::PlanarProblem;
use loam::problem::AnyProblem;
use loam::solver::{self, IterationInfo, SolveReport, SolveSettings};
use loam::transcription::PhaseTrajectory;

use super::interrupt::{self, Interrupted};
use super::{progress, warm_start, ProblemArgs};

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
    /// Start IPOPT from the plan in RUN_DIR (a folder `loam solve` or `loam sweep` wrote, with
    /// the same node counts and scheme): its nodes, moved onto this problem's rest state
    /// (another terrain: by the foot's rest depth), and its multipliers by row name.
    #[arg(long, value_name = "RUN_DIR")]
    warm_start: Option<PathBuf>,
    /// A planar robot's problem: replay the converged plan on its own contact model and, while
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

pub fn run(args: Args) -> anyhow::Result<u8> {
    // Ctrl-C stops IPOPT at its next iteration; solve_logged then cleans up.
    interrupt::install();
    let problem = match args.problem.load_any()? {
        AnyProblem::Hopper(problem) => problem,
        AnyProblem::Planar(problem) => return run_planar(&args, &problem),
    };
    if args.refine.is_some() {
        return Err(super::BadInput(format!(
            "--refine: {} is the hopper's own problem, which is not refined; the hopper as a \
             robot file is (problems/hopper_jump.yaml)",
            args.problem.file.display()
        ))
        .into());
    }
    if problem.terrain.model == loam::problem::TerrainModel::WrenchSpace {
        return run_rail(&args, &problem);
    }
    let start = match &args.warm_start {
        Some(dir) => {
            let (start, source) = warm_start::read(dir)?;
            warm_start::check(&start, &problem, dir)?;
            Some((start, source))
        }
        None => None,
    };
    let out = out_dir(&args, problem.name())?;
    let ((plan, warm), log) = solve_logged(
        &out,
        args.quiet,
        planner::solver_options(&problem),
        |s, p| planner::warm_start::plan_from(&problem, s, start.as_ref().map(|s| &s.0), p),
    )?;
    if start.is_some() && !warm && !args.quiet {
        eprintln!("the warm start did not converge; solved again from the problem's initial_guess");
    }
    let source = start.map(|(_, source)| source);
    let provenance = Provenance::new(warm_start::provenance(&problem, source, warm));
    let written = output::write_run_with(&out.path, &problem, &plan, provenance, Some(&log))?;
    if !args.quiet {
        let mut task = vec![
            format!("objective      {:.6e} (½∫u² dt)", plan.report.objective),
            format!(
                "apex rise      {:.2} mm (target {:.2} mm)",
                plan.apex_rise * 1e3,
                plan.jump.task.apex_height * 1e3
            ),
        ];
        for (k, start) in plan.starts.iter().enumerate() {
            task.push(format!(
                "{:15}from {}: {} after {} iterations, objective {:.6e}{}",
                if k == 0 { "starts" } else { "" },
                start.guess.name(),
                start.status,
                start.iterations,
                start.objective,
                if start.kept { " (kept)" } else { "" }
            ));
        }
        print_summary(
            &plan.report,
            plan.setup_seconds,
            &plan.trajectory.phases,
            &task,
            &out.path,
            &written,
        );
    }
    Ok(if plan.report.converged { 0 } else { 1 })
}

/// A planar robot's problem: the same steps, the planar planner and outputs.
fn run_planar(args: &Args, problem: &PlanarProblem) -> anyhow::Result<u8> {
    use loam::planner::planar;
    if let loam::problem::planar::PlanarTerrainConfig::WrenchSpace(_) = &problem.terrain {
        if args.warm_start.is_some() {
            return Err(super::BadInput(format!(
                "--warm-start: {} plans on a wrench space, whose plans do not start others yet",
                args.problem.file.display()
            ))
            .into());
        }
        if args.refine.is_some() {
            return Err(super::BadInput(
                "--refine: a plan on a wrench space is replayed by the MDP step, not refined yet"
                    .into(),
            )
            .into());
        }
        return run_wrench_hop(args, problem);
    }
    // --refine, else the problem's `mesh:`.
    let refine = match (args.refine, &problem.mesh) {
        (Some(tol), _) => Some((tol, args.refine_rounds)),
        (None, Some(mesh)) => Some((mesh.tolerance, mesh.max_rounds)),
        (None, None) => None,
    };
    if let Some((tol, _)) = refine {
        if !(tol.is_finite() && tol > 0.0) {
            return Err(super::BadInput(format!(
                "--refine {tol}: accepted, a tolerance > 0 (a relative error, e.g. 0.01)"
            ))
            .into());
        }
    }
    let start = match &args.warm_start {
        Some(dir) => Some(loam::api::planar_start(dir, problem)?),
        None => None,
    };
    let out = out_dir(args, problem.name())?;
    let mut cold = false;
    let ((problem, plan, rounds), log) = solve_logged(
        &out,
        args.quiet,
        planar::solver_options(problem),
        |s, mut p| {
            let from = start.as_ref().map(|s| &s.0);
            let mut plan = planar::plan_from(problem, s, from, p.as_mut().map(|f| &mut **f as _))?;
            if from.is_some() && !plan.report.converged {
                cold = true;
                plan = planar::plan(problem, s, p.as_mut().map(|f| &mut **f as _))?;
            }
            match refine {
                None => Ok((problem.clone(), plan, Vec::new())),
                Some((tol, max_rounds)) => planar::refine::refine(
                    problem,
                    plan,
                    s,
                    tol,
                    max_rounds,
                    &mut loam::api::replay_error,
                    p,
                ),
            }
        },
    )?;
    let problem = &problem;
    if cold {
        eprintln!("the warm start did not converge; solved again from the problem's initial_guess");
    }
    let source = match start {
        Some((_, source)) if !cold => source,
        _ => WarmStart::from(problem.initial_guess),
    };
    let provenance = Provenance::new(source);
    let written =
        output::planar::write_planar_run(&out.path, problem, &plan, provenance, Some(&log))?;
    if !args.quiet && !rounds.is_empty() {
        for (k, round) in rounds.iter().enumerate() {
            println!(
                "{:15}nodes {:?}: {} after {} iterations, objective {:.6e}, replay off by {:.2} %",
                if k == 0 { "refinement" } else { "" },
                round.nodes,
                if round.converged {
                    "converged"
                } else {
                    "not converged"
                },
                round.iterations,
                round.objective,
                100.0 * round.error
            );
        }
    }
    if !args.quiet {
        for (k, stage) in plan.stages.iter().enumerate() {
            println!(
                "{:15}{}: {} after {} iterations, objective {:.6e}",
                if k == 0 { "two stages" } else { "" },
                stage.stage,
                stage.status,
                stage.iterations,
                stage.objective
            );
        }
        let key = output::planar::key_figures(&plan);
        let task = [
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
            {
                let e = plan.planner.interval_errors(&plan.trajectory);
                format!(
                    "mesh error     {:.2e} at most ({} in phase {}, interval {}; relative, MODEL.md 5.3)",
                    e.max, e.worst_state, e.worst_phase, e.worst_interval
                )
            },
        ];
        print_summary(
            &plan.report,
            plan.setup_seconds,
            &plan.trajectory.phases,
            &task,
            &out.path,
            &written,
        );
    }
    // A refinement that did not reach its tolerance is a failure (exit 1), its best plan
    // written; said whatever --quiet says.
    let unrefined = match (refine, rounds.last()) {
        (Some((tol, _)), Some(last)) if !(last.error <= tol) => {
            eprintln!(
                "the replay is still {:.2} % off (tolerance {:.2} %) after {} refinements \
                 (mesh.max_rounds or --refine-rounds); the last plan is written",
                100.0 * last.error,
                100.0 * tol,
                rounds.len() - 1
            );
            true
        }
        _ => false,
    };
    Ok(if plan.report.converged && !unrefined {
        0
    } else {
        1
    })
}

/// The rail hopper of a problem whose terrain is a wrench space (`loam::api::rail_jump`).
pub fn rail_jump(
    file: &Path,
    problem: &loam::problem::Problem,
) -> anyhow::Result<loam::planner::rail::RailJump> {
    Ok(loam::api::rail_jump(file, problem)?)
}

/// The hopper on an inclined rail over a wrench-space terrain (`planner::rail`): plan,
/// replay in the MDP simulator, write.
fn run_rail(args: &Args, problem: &loam::problem::Problem) -> anyhow::Result<u8> {
    use loam::output::rail::{write_rail_run, RailRecord};
    use loam::planner::rail;
    use loam::sim::mdp::{rail as mdp_rail, QpSolver};
    let file = &args.problem.file;
    let jump = rail_jump(file, problem)?;
    let start = match &args.warm_start {
        Some(dir) => Some(loam::api::rail_start(dir, &jump)?.0),
        None => None,
    };
    let angle = jump.rail.angle;
    let data = problem.terrain.data.clone().unwrap_or_default();
    let out = out_dir(args, problem.name())?;
    let ((plan, warm), log) = solve_logged(
        &out,
        args.quiet,
        planner::solver_options(problem),
        |s, p| rail::plan_from(&jump, s, start.as_ref().map(|s| &s.trajectory), p),
    )?;
    if start.is_some() && !warm && !args.quiet {
        eprintln!("the warm start did not converge; solved again from the problem's initial_guess");
    }
    const SUBSTEPS: usize = 20;
    let replay = mdp_rail::replay(&jump.rail, &plan.trajectory, SUBSTEPS, QpSolver::ActiveSet)?;
    let rail_record = RailRecord {
        angle_rad: angle,
        data: data.clone(),
        vertices: jump.rail.n_vertices(),
        stable_step_s: jump.rail.stable_step(),
        stance_max_s: jump.stance.1 .1,
    };
    let source = match (&start, &args.warm_start) {
        (Some(start), Some(dir)) if warm => WarmStart::Plan {
            plan_id: start.plan_id.clone(),
            dir: dir.display().to_string(),
        },
        _ => WarmStart::from(problem.initial_guess),
    };
    let data_path = file.parent().unwrap_or(Path::new(".")).join(&data);
    let provenance = Provenance::new(source).with_data("terrain.data", &data_path);
    let written = write_rail_run(
        &out.path,
        problem,
        &plan,
        rail_record,
        &replay,
        SUBSTEPS,
        provenance,
        Some(&log),
    )?;
    if !args.quiet {
        let replayed = replay
            .apex_rise
            .map_or("no apex".to_string(), |a| format!("{:.2} mm", a * 1e3));
        let task = [
            format!("objective      {:.6e} (½∫u² dt)", plan.report.objective),
            format!(
                "apex rise      {:.2} mm (target {:.2} mm), vertical, rail at {angle} rad",
                plan.apex_rise * 1e3,
                problem.task.apex_height * 1e3
            ),
            format!(
                "MDP replay     apex rise {replayed} (the plan's command, solution.json `replay`)"
            ),
        ];
        print_summary(
            &plan.report,
            plan.setup_seconds,
            &plan.trajectory.phases,
            &task,
            &out.path,
            &written,
        );
    }
    Ok(if plan.report.converged { 0 } else { 1 })
}

/// A planar problem on a wrench space, its data loaded (`loam::api::wrench_hop`).
pub(super) fn wrench_hop(
    file: &Path,
    problem: &PlanarProblem,
) -> anyhow::Result<std::sync::Arc<loam::planner::wrench_hop::WrenchHop>> {
    Ok(loam::api::wrench_hop(file, problem)?)
}

/// A planar robot on a wrench space (`planner::wrench_hop`): plan, replay in the MDP
/// simulator, write a planar run folder with `replay.csv`.
fn run_wrench_hop(args: &Args, problem: &PlanarProblem) -> anyhow::Result<u8> {
    use loam::output::wrench_hop::{self as hop_run, write_hop_run, HopReplayRecord};
    use loam::planner::{planar, wrench_hop};
    // `run_planar` has refused --warm-start already.
    let hop = wrench_hop(&args.problem.file, problem)?;
    let out = out_dir(args, problem.name())?;
    let (plan, log) = solve_logged(&out, args.quiet, planar::solver_options(problem), |s, p| {
        wrench_hop::plan(&hop, s, None, p)
    })?;
    const SUBSTEPS: usize = 20;
    let samples = hop_run::replay(&hop, &plan.trajectory, SUBSTEPS)?;
    let replay = HopReplayRecord::of(&hop, &plan, &samples, SUBSTEPS);
    let mut provenance = Provenance::new(WarmStart::from(problem.initial_guess));
    if let loam::problem::planar::PlanarTerrainConfig::WrenchSpace(ground) = &problem.terrain {
        let data = ground.data.clone().unwrap_or_default();
        let file = &args.problem.file;
        provenance = provenance.with_data(
            "terrain.data",
            &file.parent().unwrap_or(Path::new(".")).join(data),
        );
    }
    let written = write_hop_run(
        &out.path,
        problem,
        &hop,
        &plan,
        &samples,
        &replay,
        provenance,
        Some(&log),
    )?;
    if !args.quiet {
        let key = output::planar::key_figures_of(&hop.robot, &plan.trajectory);
        let task = [
            format!("objective      {:.6e} (effort)", plan.report.objective),
            format!(
                "distance       {:.4} m, centre of mass rise {:.4} m, duration {:.3} s",
                key.distance_m, key.com_rise_m, key.duration_s
            ),
            format!(
                "MDP replay     distance {:.4} m, ground nodes within {:.1e} (open loop, replay.csv)",
                replay.distance_m, replay.ground_difference
            ),
        ];
        print_summary(
            &plan.report,
            plan.setup_seconds,
            &plan.trajectory.phases,
            &task,
            &out.path,
            &written,
        );
    }
    Ok(if plan.report.converged { 0 } else { 1 })
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
fn solve_logged<P>(
    out: &OutDir,
    quiet: bool,
    options: Vec<(String, solver::OptionValue)>,
    solve: impl FnOnce(&SolveSettings, Progress) -> Result<P, PlanError>,
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
            std::fs::remove_file(&log).ok();
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
