//! Solving a loaded problem and writing its run folder: the steps of `loam solve` between
//! reading the arguments and printing the summary, for every robot on every contact model
//! (the hopper's robot file among them, on rigid ground, a bed, or on a rail over a wrench
//! space).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use super::wrench_data::{data_path, data_sha256, wrench_space_of};
use super::ApiError;
use crate::output::planar::wrench_space::{self as hop_run, MdpReplay};
use crate::output::{self, PlanWritten, Provenance, WarmStart};
use crate::planner::planar::refine::RefineRound;
use crate::planner::planar::wrench_space::WrenchSpacePlanner;
use crate::planner::planar::{PlanarPlan, PlanarPlanner};
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use crate::solver::{IterationInfo, SolveReport, SolveSettings};
use crate::transcription::PhaseTrajectory;

/// MDP steps per flight interval in the replays a wrench-space plan is written with
/// (`solution.json` records it).
const SUBSTEPS: usize = 20;

/// Mesh refinement of a planar plan (`loam solve --refine TOL --refine-rounds N`).
#[derive(Clone, Copy, Debug)]
pub struct Refine {
    /// The largest relative error of the replay against the plan that is accepted.
    pub tolerance: f64,
    /// The most refinements made.
    pub rounds: usize,
}

/// How to solve, besides the problem's own `solver` section.
#[derive(Default)]
pub struct SolveOptions<'a> {
    /// IPOPT's log at print level 5, appended to by every solve of the task; the writer
    /// moves it into the run folder as `ipopt.log`.
    pub log_file: Option<PathBuf>,
    /// Refine a planar plan's mesh until its replay agrees (planar problems only).
    pub refine: Option<Refine>,
    /// Start IPOPT from the plan in this run folder (`loam solve --warm-start`; the hopper's
    /// problems and planar ones): its nodes, and for the hopper its multipliers by name. A
    /// warm start that does not converge is solved again from the problem's guess.
    pub warm_start: Option<PathBuf>,
    /// Called at each IPOPT iteration; returning false stops IPOPT there (the plan's status
    /// says so).
    pub on_iteration: Option<&'a mut dyn FnMut(&IterationInfo) -> bool>,
}

/// A solved (or attempted) problem, with what its run folder is written from: a robot's
/// plan on any contact model, with the refinement's rounds (empty when not refined).
pub struct Solved {
    pub problem: PlanarProblem,
    pub plan: PlanarPlan,
    pub rounds: Vec<RefineRound>,
    /// Where IPOPT started: the problem's guess, or the warm start's plan.
    pub start: WarmStart,
    /// On a wrench space: the plan's replay in the MDP simulator and the data file read.
    pub wrench_space: Option<(MdpReplay, PathBuf)>,
}

/// Solves `problem`, read from `file` (data files the problem names are read relative to
/// it), from the problem's `initial_guess` or `options.warm_start`.
pub fn solve(
    problem: &PlanarProblem,
    file: &Path,
    options: SolveOptions,
) -> Result<Solved, ApiError> {
    let SolveOptions {
        log_file,
        refine,
        warm_start,
        on_iteration,
    } = options;
    let settings = SolveSettings {
        options: super::solver_options(problem),
        log_file,
        ..SolveSettings::default()
    };
    if let PlanarTerrainConfig::WrenchSpace(_) = &problem.terrain {
        if refine.is_some() {
            return Err(ApiError::BadInput(
                "refine: a plan on a wrench space is replayed by the MDP step, not \
                     refined yet"
                    .into(),
            ));
        }
        return solve_on_wrench_space(
            problem,
            file,
            &settings,
            warm_start.as_deref(),
            on_iteration,
        );
    }
    let start = match warm_start {
        Some(dir) => Some(planar_start(&dir, problem)?),
        None => None,
    };
    solve_planar(problem, &settings, start, refine, on_iteration)
}

fn plan_source(plan_id: String, dir: &Path) -> WarmStart {
    WarmStart::Plan {
        plan_id,
        dir: dir.display().to_string(),
    }
}

fn solve_planar(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    start: Option<(crate::transcription::Trajectory, WarmStart, bool)>,
    refine: Option<Refine>,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<Solved, ApiError> {
    use crate::planner::planar;
    // The problem's `mesh:` unless the caller asks for its own refinement.
    let refine = refine.or_else(|| {
        problem.mesh.as_ref().map(|m| Refine {
            tolerance: m.tolerance,
            rounds: m.max_rounds,
        })
    });
    if let Some(Refine { tolerance, .. }) = refine {
        if !(tolerance.is_finite() && tolerance > 0.0) {
            return Err(ApiError::BadInput(format!(
                "refine {tolerance}: accepted, a tolerance > 0 (a relative error, e.g. 0.01)"
            )));
        }
    }
    let first = on_iteration
        .as_mut()
        .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
    let from = start.as_ref().map(|s| &s.0);
    let mut plan = planar::plan_from_start(
        problem,
        settings,
        start.as_ref().map(|s| (&s.0, s.2)),
        first,
    )?;
    // A warm start that does not converge is solved again from the guess, as the hopper's;
    // one the user stopped (Ctrl-C) is not: the stop is for the whole solve.
    let warm = from.is_some() && plan.report.converged;
    let stopped = plan.report.status == crate::solver::IpoptStatus::UserRequestedStop;
    if from.is_some() && !warm && !stopped {
        let again = on_iteration
            .as_mut()
            .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
        plan = planar::plan(problem, settings, again)?;
    }
    let source = match start {
        Some((_, source, _)) if warm => source,
        _ => WarmStart::from(problem.initial_guess),
    };
    // The solved problem records the refinement that ran (`--refine` overrides `mesh:`).
    let mut problem = problem.clone();
    if let Some(Refine { tolerance, rounds }) = refine {
        problem.mesh = Some(crate::problem::MeshRefinement {
            tolerance,
            max_rounds: rounds,
        });
    }
    let problem = &problem;
    let (problem, plan, rounds) = match refine {
        None => (problem.clone(), plan, Vec::new()),
        Some(Refine { tolerance, rounds }) => planar::refine::refine(
            problem,
            plan,
            settings,
            tolerance,
            rounds,
            &mut replay_error,
            on_iteration,
        )?,
    };
    Ok(Solved {
        problem,
        plan,
        rounds,
        start: source,
        wrench_space: None,
    })
}

/// A planar run's plan as the start of `problem` (`--warm-start DIR`): its trajectory,
/// checked to be this robot's, resampled onto this problem's mesh (node counts and scheme may
/// differ; durations are kept), and its identity for the provenance. The primal point only:
/// the multipliers of rows on another mesh have no counterpart.
/// The plan in run folder `dir` read back as a start: its `trajectory.csv` (t, phase, node,
/// then `columns`, the first `n_x` the state) with `phases` phases, and its identity.
fn read_start(
    dir: &Path,
    columns: &[String],
    n_x: usize,
    phases: usize,
) -> Result<
    (
        crate::transcription::Trajectory,
        WarmStart,
        serde_json::Value,
    ),
    ApiError,
> {
    let bad = |e: String| ApiError::BadInput(format!("--warm-start {}: {e}", dir.display()));
    let files = crate::output::run::read_plan_files(dir).map_err(|e| bad(e.to_string()))?;
    let csv = String::from_utf8_lossy(&files.trajectory);
    let from = crate::planner::planar::refine::read_trajectory(&csv, columns, n_x, phases)
        .map_err(|e| bad(format!("{}: {e}", files.trajectory_path.display())))?;
    Ok((from, plan_source(files.plan_id, dir), files.json))
}

pub fn planar_start(
    dir: &Path,
    problem: &PlanarProblem,
) -> Result<(crate::transcription::Trajectory, WarmStart, bool), ApiError> {
    use crate::planner::planar::{refine, PlanarPlanner};
    let planner = PlanarPlanner::new(problem);
    let mut columns = planner.state_names();
    columns.extend(planner.control_names());
    let (from, source, json) =
        read_start(dir, &columns, planner.layout.n_x(), problem.schedule.len())?;
    let nodes: Vec<usize> = problem.schedule.iter().map(|p| p.nodes).collect();
    let hermite = planner.scheme == crate::transcription::Scheme::HermiteSimpson;
    // This same problem on another mesh: the start's recorded task and ground are this one's.
    let same = |field: &str, value: Result<serde_json::Value, serde_json::Error>| {
        value.is_ok_and(|v| json["problem"][field] == v)
    };
    let same_problem = same("task", serde_json::to_value(&problem.task))
        && same("terrain", serde_json::to_value(&problem.terrain));
    Ok((
        refine::resample(&from, &nodes, hermite),
        source,
        same_problem,
    ))
}

/// How far a planar plan's replay on its own contact model departs from it: the largest of
/// the relative errors of the centre of mass's peak rise, the task's apex rise (`apex_of`'s
/// body) and (where it travels over 1 cm) the distance; infinite for a replay that cannot finish. What `refine` drives down.
pub fn replay_error(problem: &PlanarProblem, plan: &PlanarPlan) -> f64 {
    use crate::sim::planar::{replay_plan, PlanTable, ReplaySettings};
    let table = PlanTable::from_trajectory(&plan.trajectory, plan.planner.layout.n_inputs);
    // The replay `loam simulate` makes: a gait over its default strides.
    match replay_plan(problem, &table, None, &ReplaySettings::default()) {
        // A gait: its strides' length and apex (its start is the apex of an apex-to-apex
        // stride, where the centre of mass's peak rise is 0).
        Ok(r) if r.summary.complete && !r.summary.strides.is_empty() => r
            .summary
            .strides
            .iter()
            .map(|s| s.length_error_rel.max(s.apex_error_rel))
            .fold(0.0, f64::max),
        Ok(r) if r.summary.complete => {
            let s = &r.summary;
            let mut error = s
                .com_peak_error_rel
                .max(s.apex_rise_error_rel.unwrap_or(0.0));
            if s.planned_distance_m.abs() > 0.01 {
                error = error.max(s.distance_error_rel);
            }
            error
        }
        _ => f64::INFINITY,
    }
}

/// A planar problem on `terrain: {model: wrench_space}`, its data loaded from the path the
/// file names (relative to the file's folder); a data file that does not load is bad input.
pub fn wrench_space_planner(
    file: &Path,
    problem: &PlanarProblem,
) -> Result<Rc<PlanarPlanner>, ApiError> {
    let space = wrench_space_of(file, &problem.terrain)?;
    let planner = PlanarPlanner::on_wrench_space(problem, space);
    let hop = planner
        .wrench_space
        .as_ref()
        .expect("built on a wrench space");
    // A foot that starts leaning beyond the data's tilts (a guide tilted too far) cannot be
    // planned: loam does not extrapolate a wrench space in its tilt.
    let (_, tilt_max) = hop.space.tilt_range();
    let frames = hop.robot.body.frames(&hop.robot.standing);
    for contact in &hop.robot.contacts {
        let tilt = frames[contact.body].angle;
        if tilt.abs() > tilt_max + 1e-12 {
            let field = if hop.robot.body.guide_angle != 0.0 {
                "robot.description.guide_angle"
            } else {
                "robot"
            };
            return Err(ApiError::BadInput(format!(
                "{}: {field}: foot `{}` stands tilted {tilt} rad, outside the data's tilts \
                 (|tilt| <= {tilt_max} rad in {}); loam does not extrapolate a wrench space",
                file.display(),
                contact.name,
                data_path(
                    file,
                    match &problem.terrain {
                        PlanarTerrainConfig::WrenchSpace(ground) => ground.data.as_ref(),
                        _ => None,
                    }
                )
                .display()
            )));
        }
    }
    Ok(Rc::new(planner))
}

/// The plan in `dir` as the start of the wrench-space planner `hop`, each phase resampled to
/// this problem's nodes, and whether it was made on another ground. A wrench-space plan's
/// `trajectory.csv` holds every variable of its NLP, read back for a robot with the same
/// columns (the same robot and vertex count) and schedule. A plan of the same robot on a
/// closed-form ground (rigid, a bed, a spring) gives its states, inputs and accelerations,
/// the vertex weights and y starting at 0; its start then goes through the relaxation first.
/// Anything else is refused with the wrench-space reading's reason.
pub fn wrench_start(
    dir: &Path,
    hop: &WrenchSpacePlanner,
) -> Result<(crate::transcription::Trajectory, WarmStart, bool), ApiError> {
    let l = hop.layout();
    let phases = hop.phases.len();
    let (mut from, source, other_ground) =
        match read_start(dir, &hop_run::trajectory_columns(hop), l.n_x(), phases) {
            Ok((from, source, _)) => (from, source, false),
            Err(own) => {
                let mut columns = hop.robot.state_names();
                columns.extend(crate::planner::planar::law_control_names(&hop.robot));
                match read_start(dir, &columns, l.n_x(), phases) {
                    Ok((from, source, _)) => (from, source, true),
                    Err(_) => return Err(own),
                }
            }
        };
    // The inputs and accelerations come first in both; the rest of a node starts at 0 when
    // the plan was made on another ground.
    let kept = l.accel() + l.n_q;
    for phase in &mut from.phases {
        for u in &mut phase.controls {
            if other_ground {
                u.truncate(kept);
                u.resize(l.n_u(), 0.0);
            } else {
                u.truncate(l.n_u());
            }
        }
    }
    let nodes: Vec<usize> = hop.phases.iter().map(|p| p.nodes).collect();
    Ok((
        crate::planner::planar::refine::resample(&from, &nodes, false),
        source,
        other_ground,
    ))
}

fn solve_on_wrench_space(
    problem: &PlanarProblem,
    file: &Path,
    settings: &SolveSettings,
    warm_start: Option<&Path>,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<Solved, ApiError> {
    use crate::planner::planar::wrench_space;
    let planner = wrench_space_planner(file, problem)?;
    let hop = Arc::clone(planner.wrench_space.as_ref().expect("on a wrench space"));
    let start = warm_start.map(|dir| wrench_start(dir, &hop)).transpose()?;
    let first = on_iteration
        .as_mut()
        .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
    let mut plan = match &start {
        Some((from, _, other_ground)) => {
            wrench_space::plan_with(&planner, settings, Some(from), *other_ground, first)?
        }
        None => wrench_space::plan(&planner, settings, None, first)?,
    };
    // A warm start that does not converge is solved again from the rest guess.
    let warm = start.is_some() && plan.report.converged;
    if start.is_some() && !warm {
        plan = wrench_space::plan(&planner, settings, None, on_iteration)?;
    }
    let start = match start {
        Some((_, source, _)) if warm => source,
        _ => WarmStart::from(problem.initial_guess),
    };
    let replay = MdpReplay::of(&hop, &plan.trajectory, SUBSTEPS)
        .map_err(|e| ApiError::Failed(format!("replaying the plan in the MDP simulator: {e}")))?;
    // The resolved problem records the data's hash, so that the plan's identity covers it.
    let mut problem = problem.clone();
    let PlanarTerrainConfig::WrenchSpace(ground) = &mut problem.terrain else {
        unreachable!("a wrench-space planner was built");
    };
    let data = data_path(file, ground.data.as_ref());
    ground.data_sha256 = Some(data_sha256(file, &data, None)?);
    Ok(Solved {
        problem,
        plan,
        rounds: Vec::new(),
        start,
        wrench_space: Some((replay, data)),
    })
}

impl Solved {
    /// IPOPT's outcome: status, iterations, objective, violations, timing.
    pub fn report(&self) -> &SolveReport {
        &self.plan.report
    }

    /// Seconds spent transcribing the problem before IPOPT started.
    pub fn setup_seconds(&self) -> f64 {
        self.plan.setup_seconds
    }

    /// The plan's phases (names, durations, nodes).
    pub fn phases(&self) -> &[PhaseTrajectory] {
        &self.plan.trajectory.phases
    }

    /// The problem's name (`runs/<name>/` by default).
    pub fn name(&self) -> &str {
        self.problem.name()
    }

    /// The refinement's rounds, the first solve included; empty when not refined.
    pub fn refinement(&self) -> &[RefineRound] {
        &self.rounds
    }

    /// The plan's transcription error per interval (`solution.json` `transcription_error`,
    /// MODEL.md 5.3); `None` on a wrench space, whose ground phases are the simulator's step.
    pub fn transcription_error(&self) -> Option<crate::planner::planar::error::MeshError> {
        let plan = &self.plan;
        plan.planner
            .wrench_space
            .is_none()
            .then(|| plan.planner.interval_errors(&plan.trajectory))
    }

    /// `trajectory.csv` as the writer writes it: one row per collocation node.
    pub fn trajectory_csv(&self) -> String {
        output::planar::trajectory_csv(&self.plan)
    }

    /// The provenance the plan records: where IPOPT started (the problem's `initial_guess` or
    /// a warm start's plan) and the data files a wrench-space plan read; the front end sets
    /// `command_line`.
    pub fn provenance(&self) -> Provenance {
        let provenance = Provenance::new(self.start.clone());
        match &self.wrench_space {
            Some((_, data)) => provenance.with_data("terrain.data", data),
            None => provenance,
        }
    }

    /// Writes the run folder `dir` as `loam solve` does (`solution.json`, `trajectory.csv`,
    /// a wrench-space plan's `replay.csv`, and `ipopt_log` moved in as `ipopt.log`), archiving
    /// another plan found there. Checks first that `dir` can be written.
    pub fn write(
        &self,
        dir: &Path,
        provenance: Provenance,
        ipopt_log: Option<&Path>,
    ) -> Result<PlanWritten, ApiError> {
        output::ensure_writable(dir)?;
        Ok(output::planar::write_planar_run(
            dir,
            &self.problem,
            &self.plan,
            self.wrench_space.as_ref().map(|(replay, _)| replay),
            provenance,
            ipopt_log,
        )?)
    }
}
