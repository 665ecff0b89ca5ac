//! `solution.json` and `trajectory.csv`: what `loam solve` writes (documented in README.md).

use std::path::Path;

use serde::Serialize;

use super::{write_atomic, OutputError};
use crate::model::hopper::STATE_NAMES;
use crate::planner::Plan;
use crate::problem::Problem;
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

/// The top-level keys of `solution.json` (documented in README.md).
#[derive(Serialize)]
pub struct SolutionFile<'a> {
    pub loam_version: &'static str,
    pub problem: &'a Problem,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub max_violation: f64,
    pub apex_rise_m: f64,
    pub timing_s: Timing,
    pub scheme: &'static str,
    pub n_variables: usize,
    pub n_constraints: usize,
    pub phases: Vec<PhaseSummary>,
    /// Inequality constraints on a bound: name and number of rows.
    pub binding_constraints: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worst_violations: Vec<Violation>,
}

impl<'a> SolutionFile<'a> {
    pub fn new(problem: &'a Problem, plan: &Plan) -> Self {
        let report = &plan.report;
        SolutionFile {
            loam_version: env!("CARGO_PKG_VERSION"),
            problem,
            status: report.status.name().to_string(),
            converged: report.converged,
            iterations: report.iterations,
            objective: report.objective,
            max_violation: report.max_violation,
            apex_rise_m: plan.apex_rise,
            timing_s: Timing {
                setup: plan.setup_seconds,
                solve: report.solve_seconds,
                total: plan.setup_seconds + report.solve_seconds,
            },
            scheme: plan.jump.scheme.name(),
            n_variables: plan.n_variables,
            n_constraints: plan.n_constraints,
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
            binding_constraints: report.binding.clone(),
            worst_violations: report.violations.iter().take(10).cloned().collect(),
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
