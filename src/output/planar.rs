//! A planar plan's `solution.json` and `trajectory.csv` (columns named by the robot: see
//! README's table of planar outputs).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{write_atomic, OutputError};
use crate::planner::planar::{centre_of_mass_velocity, PlanarPlan};
use crate::problem::planar::PlanarProblem;
use crate::solver;
use crate::transcription::Violation;

/// The plan's key figures, which a replay is compared against.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct KeyFigures {
    /// Base x at the end minus at the start \[m\].
    pub distance_m: f64,
    /// Centre of mass height at the end minus at the start \[m\].
    pub com_rise_m: f64,
    /// Duration of the plan \[s\].
    pub duration_s: f64,
    /// Vertical velocity of the centre of mass at the end \[m/s\].
    pub com_vz_end: f64,
}

#[derive(Serialize)]
pub struct PlanarPhaseSummary {
    pub name: String,
    pub contacts: Vec<String>,
    pub nodes: usize,
    pub duration_s: f64,
}

/// The top-level keys of a planar `solution.json`.
#[derive(Serialize)]
pub struct PlanarSolutionFile<'a> {
    pub loam_version: &'static str,
    pub problem: &'a PlanarProblem,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub max_violation: f64,
    pub key_figures: KeyFigures,
    /// The IPOPT options in effect: loam's defaults with the file's on top.
    pub solver_options: Vec<(String, String)>,
    pub timing_s: super::Timing,
    pub n_variables: usize,
    pub n_constraints: usize,
    pub phases: Vec<PlanarPhaseSummary>,
    pub binding_constraints: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worst_violations: Vec<Violation>,
}

/// The key figures of a plan's trajectory.
pub fn key_figures(plan: &PlanarPlan) -> KeyFigures {
    let robot = &plan.planner.robot;
    let n_q = plan.planner.layout.n_q;
    let first = &plan.trajectory.phases[0].states[0];
    let last = plan
        .trajectory
        .phases
        .last()
        .unwrap()
        .states
        .last()
        .unwrap();
    KeyFigures {
        distance_m: last[0] - first[0],
        com_rise_m: robot.body.centre_of_mass(&last[..n_q])[1]
            - robot.body.centre_of_mass(&first[..n_q])[1],
        duration_s: plan.trajectory.phases.iter().map(|p| p.duration).sum(),
        com_vz_end: centre_of_mass_velocity(robot, &last[..n_q], &last[n_q..]),
    }
}

/// `trajectory.csv`: t, phase, node, then the state and control columns the robot names.
pub fn trajectory_csv(plan: &PlanarPlan) -> String {
    let mut columns = vec!["t".to_string(), "phase".into(), "node".into()];
    columns.extend(plan.planner.state_names());
    columns.extend(plan.planner.control_names());
    let mut out = columns.join(",");
    out.push('\n');
    let mut t0 = 0.0;
    for (p, phase) in plan.trajectory.phases.iter().enumerate() {
        for k in 0..phase.states.len() {
            out.push_str(&format!("{:.9},{},{}", t0 + phase.node_time(k), p, k));
            for v in phase.states[k].iter().chain(&phase.controls[k]) {
                out.push_str(&format!(",{v:.9e}"));
            }
            out.push('\n');
        }
        t0 += phase.duration;
    }
    out
}

/// Writes `solution.json` and `trajectory.csv` into `dir`.
pub fn write_planar_run(
    dir: &Path,
    problem: &PlanarProblem,
    plan: &PlanarPlan,
    options: &[(String, solver::OptionValue)],
) -> Result<(), OutputError> {
    let report = &plan.report;
    let mut effective: Vec<(String, String)> = solver::default_options()
        .into_iter()
        .chain(options.iter().cloned())
        .map(|(k, v)| (k, format!("{v:?}")))
        .collect();
    // Later entries win, as IPOPT applies them in order.
    let mut seen = std::collections::BTreeMap::new();
    for (k, v) in effective.drain(..) {
        seen.insert(k, v);
    }
    let file = PlanarSolutionFile {
        loam_version: env!("CARGO_PKG_VERSION"),
        problem,
        status: report.status.name().to_string(),
        converged: report.converged,
        iterations: report.iterations,
        objective: report.objective,
        max_violation: report.max_violation,
        key_figures: key_figures(plan),
        solver_options: seen.into_iter().collect(),
        timing_s: super::Timing {
            setup: plan.setup_seconds,
            solve: report.solve_seconds,
            total: plan.setup_seconds + report.solve_seconds,
        },
        n_variables: plan.n_variables,
        n_constraints: plan.n_constraints,
        phases: plan
            .trajectory
            .phases
            .iter()
            .zip(&problem.schedule)
            .map(|(p, spec)| PlanarPhaseSummary {
                name: p.name.clone(),
                contacts: spec.contacts.clone(),
                nodes: spec.nodes,
                duration_s: p.duration,
            })
            .collect(),
        binding_constraints: report.binding.clone(),
        worst_violations: report.violations.iter().take(10).cloned().collect(),
    };
    let json = serde_json::to_string_pretty(&file).expect("solution serializes");
    write_atomic(&dir.join("solution.json"), json.as_bytes())?;
    write_atomic(&dir.join("trajectory.csv"), trajectory_csv(plan).as_bytes())
}
