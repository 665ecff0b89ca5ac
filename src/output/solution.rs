//! `solution.json` and `trajectory.csv`: what `loam solve` writes (documented in README.md).

use std::path::Path;

use std::collections::BTreeMap;

use serde::Serialize;

use super::{write_atomic, OutputError};
use crate::model::hopper::STATE_NAMES;
use crate::planner::Plan;
use crate::problem::Problem;
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
}

impl SolveRecord {
    pub fn new(
        report: &SolveReport,
        setup_seconds: f64,
        n_variables: usize,
        n_constraints: usize,
    ) -> SolveRecord {
        SolveRecord {
            loam_version: env!("CARGO_PKG_VERSION"),
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
}

impl<'a> SolutionFile<'a> {
    pub fn new(problem: &'a Problem, plan: &Plan) -> Self {
        SolutionFile {
            problem,
            solve: SolveRecord::new(
                &plan.report,
                plan.setup_seconds,
                plan.n_variables,
                plan.n_constraints,
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

/// Writes `solution.json` and `trajectory.csv` into `dir`.
pub fn write_run(dir: &Path, problem: &Problem, plan: &Plan) -> Result<(), OutputError> {
    let json = serde_json::to_string_pretty(&SolutionFile::new(problem, plan))
        .expect("solution serializes");
    write_atomic(&dir.join("solution.json"), json.as_bytes())?;
    write_atomic(&dir.join("trajectory.csv"), trajectory_csv(plan).as_bytes())
}
