//! `solution.json` and `trajectory.csv`: what `loam solve` writes (documented in README.md).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::folder::{archive_other_plan, Archived};
use super::identity::plan_id_of;
use super::{temporary_path, write_new, OutputError, Provenance, WarmStart};
use crate::model::hopper::STATE_NAMES;
use crate::planner::warm_start::NamedMultipliers;
use crate::planner::{Plan, StartOutcome};
use crate::problem::Problem;
use crate::solver::kkt::KktCounts;
use crate::solver::{OptionValue, SolveReport};
use crate::transcription::Violation;

#[derive(Serialize)]
pub struct Timing {
    pub setup: f64,
    pub solve: f64,
    pub total: f64,
}

#[derive(Serialize)]
pub struct PhaseSummary {
    pub domain: String,
    pub nodes: usize,
    pub duration_s: f64,
}

/// What every `solution.json` records of the solve itself, hopper's or planar.
#[derive(Serialize)]
pub struct SolveRecord {
    pub loam_version: &'static str,
    /// The plan's identity (`output::identity`): every file made from it records the same.
    pub plan_id: String,
    /// What reproduces the run: versions, command line, warm start, time.
    pub provenance: Provenance,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub max_violation: f64,
    pub timing_s: Timing,
    pub n_variables: usize,
    pub n_constraints: usize,
    /// The IPOPT options in effect: loam's defaults with the file's on top.
    pub solver_options: BTreeMap<String, OptionValue>,
    /// Inequality constraints on a bound: name and number of rows.
    pub binding_constraints: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worst_violations: Vec<Violation>,
    /// With `linear_solver: loam`: its factorisations (and how many had the wrong inertia)
    /// and its solves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kkt_systems: Option<KktCounts>,
}

impl SolveRecord {
    pub fn new(
        report: &SolveReport,
        setup_seconds: f64,
        n_variables: usize,
        n_constraints: usize,
        plan_id: String,
        provenance: Provenance,
    ) -> SolveRecord {
        SolveRecord {
            loam_version: env!("CARGO_PKG_VERSION"),
            plan_id,
            provenance,
            status: report.status.name().to_string(),
            converged: report.converged,
            iterations: report.iterations,
            objective: report.objective,
            max_violation: report.max_violation,
            timing_s: Timing {
                setup: setup_seconds,
                solve: report.solve_seconds,
                total: setup_seconds + report.solve_seconds,
            },
            n_variables,
            n_constraints,
            solver_options: report.options.clone(),
            binding_constraints: report.binding.clone(),
            worst_violations: report.violations.iter().take(10).cloned().collect(),
            kkt_systems: report.kkt,
        }
    }
}

/// The top-level keys of `solution.json` (documented in README.md).
#[derive(Serialize)]
pub struct SolutionFile<'a> {
    pub problem: &'a Problem,
    #[serde(flatten)]
    pub solve: SolveRecord,
    pub apex_rise_m: f64,
    pub scheme: &'static str,
    pub phases: Vec<PhaseSummary>,
    /// IPOPT's multipliers at the end, by name: what `loam solve --warm-start` starts from.
    pub multipliers: &'a NamedMultipliers,
    /// `initial_guess: best`: each start's outcome, the kept one marked.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub starts: &'a [StartOutcome],
}

impl<'a> SolutionFile<'a> {
    pub fn new(
        problem: &'a Problem,
        plan: &'a Plan,
        plan_id: String,
        provenance: Provenance,
    ) -> Self {
        SolutionFile {
            problem,
            solve: SolveRecord::new(
                &plan.report,
                plan.setup_seconds,
                plan.n_variables,
                plan.n_constraints,
                plan_id,
                provenance,
            ),
            apex_rise_m: plan.apex_rise,
            scheme: plan.jump.scheme.name(),
            phases: plan
                .trajectory
                .phases
                .iter()
                .zip(&plan.jump.phases)
                .map(|(p, (domain, nodes, _))| PhaseSummary {
                    domain: domain.name().into(),
                    nodes: *nodes,
                    duration_s: p.duration,
                })
                .collect(),
            multipliers: &plan.multipliers,
            starts: &plan.starts,
        }
    }
}

/// `trajectory.csv`: one row per collocation node.
pub fn trajectory_csv(plan: &Plan) -> String {
    let mut out = String::from("t,phase,node");
    for name in STATE_NAMES {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",u,F_m,F_s,F_terrain\n");
    let mut t0 = 0.0;
    for (p, phase) in plan.trajectory.phases.iter().enumerate() {
        for k in 0..phase.states.len() {
            let (f_m, f_s, f_t) = plan.node_forces(p, k);
            out.push_str(&format!(
                "{:.9},{},{}",
                t0 + phase.node_time(k),
                phase.name,
                k
            ));
            for v in phase.states[k].iter().chain(&phase.controls[k]) {
                out.push_str(&format!(",{v:.9e}"));
            }
            out.push_str(&format!(",{f_m:.9e},{f_s:.9e},{f_t:.9e}\n"));
        }
        t0 += phase.duration;
    }
    out
}

/// What [`write_run_with`] did.
#[derive(Clone, Debug)]
pub struct PlanWritten {
    pub plan_id: String,
    /// Where the files of the plan the folder held before went, if it held another.
    pub archived: Option<Archived>,
}

/// Writes `solution.json` and `trajectory.csv` into `dir`, the plan started from the
/// problem's `initial_guess` (see [`write_run_with`]).
pub fn write_run(dir: &Path, problem: &Problem, plan: &Plan) -> Result<PlanWritten, OutputError> {
    let provenance = Provenance::new(WarmStart::from(problem.initial_guess));
    write_run_with(dir, problem, plan, provenance, None)
}

/// Writes `solution.json` (with `provenance`) and `trajectory.csv` into `dir`, and moves
/// IPOPT's log from its temporary `ipopt_log` to `ipopt.log` (see [`commit_plan`]).
pub fn write_run_with(
    dir: &Path,
    problem: &Problem,
    plan: &Plan,
    provenance: Provenance,
    ipopt_log: Option<&Path>,
) -> Result<PlanWritten, OutputError> {
    let trajectory = trajectory_csv(plan);
    let plan_id = plan_id_of(problem, trajectory.as_bytes());
    let file = SolutionFile::new(problem, plan, plan_id.clone(), provenance);
    let json = serde_json::to_string_pretty(&file).expect("solution serializes");
    commit_plan(dir, &plan_id, &json, &trajectory, ipopt_log)
}

/// Puts a plan into `dir`: writes `solution.json` and `trajectory.csv` to temporaries, moves
/// the files of any other plan the folder holds into `archive/` ([`archive_other_plan`]), then
/// renames the new files into place (the log, the trajectory, `solution.json` last). On an
/// error no temporary is left, `ipopt_log` included, and the folder's previous plan is
/// untouched unless it was already archived.
pub(crate) fn commit_plan(
    dir: &Path,
    plan_id: &str,
    solution: &str,
    trajectory: &str,
    ipopt_log: Option<&Path>,
) -> Result<PlanWritten, OutputError> {
    let solution_path = dir.join("solution.json");
    let trajectory_path = dir.join("trajectory.csv");
    let mut temporaries: Vec<(PathBuf, PathBuf)> = ipopt_log
        .map(|log| (log.to_path_buf(), dir.join("ipopt.log")))
        .into_iter()
        .collect();
    let result = (|| {
        for (path, text) in [(&trajectory_path, trajectory), (&solution_path, solution)] {
            let tmp = temporary_path(path);
            write_new(&tmp, text.as_bytes(), path)?;
            temporaries.push((tmp, path.clone()));
        }
        let archived = archive_other_plan(dir, plan_id)?;
        for (tmp, path) in &temporaries {
            fs::rename(tmp, path).map_err(|source| OutputError {
                path: path.clone(),
                source,
            })?;
        }
        Ok(archived)
    })();
    match result {
        Ok(archived) => Ok(PlanWritten {
            plan_id: plan_id.to_string(),
            archived,
        }),
        Err(e) => {
            for (tmp, _) in &temporaries {
                fs::remove_file(tmp).ok();
            }
            Err(e)
        }
    }
}
