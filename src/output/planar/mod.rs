//! A planar plan's `solution.json` and `trajectory.csv` (columns named by the robot: see
//! README's table of planar outputs), on every contact model; a plan on a wrench space adds
//! its columns and its MDP replay ([`wrench_space`]).

pub mod wrench_space;

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::identity::plan_id_of;
use super::solution::commit_plan;
use super::{OutputError, PlanWritten, Provenance, SolveRecord};
use crate::model::planar::PlanarRobot;
use crate::planner::planar::{centre_of_mass_velocity, PlanarPlan};
use crate::problem::planar::PlanarProblem;
use crate::transcription::Trajectory;

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
    /// Mechanical cost of transport, ∫ Σ |P_i| dt / (m g |distance|) over the nodes
    /// (trapezoidal), P_i each input's power (`PlanarRobot::input_powers`, a drive's force
    /// times its joint's rate): positive and negative work alike, as `objective:
    /// cost_of_transport` counts it. Absent for a plan that does not travel or whose task
    /// does not ask it to (no `distance`, no change of `x`, not periodic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_of_transport: Option<f64>,
    /// A periodic plan (a gait): the largest |end − start| over every state but the base's
    /// x, which the task's periodicity holds at 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periodicity_residual: Option<f64>,
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
    pub problem: &'a PlanarProblem,
    #[serde(flatten)]
    pub solve: SolveRecord,
    pub key_figures: KeyFigures,
    pub phases: Vec<PlanarPhaseSummary>,
    /// `strategy: two_stage`: each stage (durations held, released, and the fallback if it
    /// ran) with its status, iterations, objective and time.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub stages: &'a [crate::planner::StageOutcome],
    /// `starts: N`: every start (the durations its first stage held, status, iterations,
    /// objective, time), the kept one marked.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub starts: &'a [crate::planner::planar::multi_start::PlanarStart],
    /// Mesh refinement's rounds (nodes per phase, converged, iterations, objective, the
    /// replay's error), when the plan was refined.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub refinement: &'a [crate::planner::planar::refine::RefineRound],
    /// Whether the kept plan replays within `mesh.tolerance` (absent when not refined): a
    /// converged plan that does not is kept, marked here, and `loam solve` exits 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh_tolerance_met: Option<bool>,
    /// The transcription's error per interval (`planner::planar::error`, MODEL.md 5.3);
    /// absent on a wrench space, whose plan `replay` measures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcription_error: Option<crate::planner::planar::error::MeshError>,
    /// How the phases are transcribed, where they differ from `transcription.scheme` (on a
    /// wrench space: its ground phases are the MDP step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme: Option<&'static str>,
    /// On a wrench space: the plan's open-loop replay in the MDP simulator against it
    /// (`replay.csv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<&'a wrench_space::MdpReplayRecord>,
}

/// Each phase's name, feet, nodes and duration.
pub fn phase_summaries(
    trajectory: &Trajectory,
    problem: &PlanarProblem,
) -> Vec<PlanarPhaseSummary> {
    trajectory
        .phases
        .iter()
        .zip(&problem.schedule)
        .map(|(p, spec)| PlanarPhaseSummary {
            name: p.name.clone(),
            contacts: spec.contacts.clone(),
            nodes: spec.nodes,
            duration_s: p.duration,
        })
        .collect()
}

/// The key figures of a plan's trajectory.
pub fn key_figures(plan: &PlanarPlan) -> KeyFigures {
    let mut key = key_figures_of(&plan.planner.robot, &plan.trajectory);
    // A cost of transport is a figure of a plan asked to travel: the few centimetres a
    // standing-up drifts would give it a meaningless one.
    let task = &plan.planner.problem.task;
    if task.distance.is_none() && !task.end.change.contains_key("x") && !task.periodic {
        key.cost_of_transport = None;
    }
    if plan.planner.problem.task.periodic {
        let n_x = 2 * plan.planner.robot.n_q();
        let first = &plan.trajectory.phases[0].states[0];
        let last = plan
            .trajectory
            .phases
            .last()
            .unwrap()
            .states
            .last()
            .unwrap();
        key.periodicity_residual = Some(
            (1..n_x)
                .map(|j| (last[j] - first[j]).abs())
                .fold(0.0, f64::max),
        );
    }
    key
}

/// The key figures of a planar robot's trajectory (states (q, v) first at every node).
pub fn key_figures_of(robot: &PlanarRobot, trajectory: &Trajectory) -> KeyFigures {
    let n_q = robot.n_q();
    let first = &trajectory.phases[0].states[0];
    let last = trajectory.phases.last().unwrap().states.last().unwrap();
    KeyFigures {
        distance_m: last[0] - first[0],
        com_rise_m: robot.body.centre_of_mass(&last[..n_q])[1]
            - robot.body.centre_of_mass(&first[..n_q])[1],
        duration_s: trajectory.phases.iter().map(|p| p.duration).sum(),
        com_vz_end: centre_of_mass_velocity(robot, &last[..n_q], &last[n_q..2 * n_q]),
        cost_of_transport: cost_of_transport(robot, trajectory, last[0] - first[0]),
        periodicity_residual: None,
    }
}

/// ∫ Σ |P_i| dt / (m g |distance|), trapezoidal over each phase's nodes (the controls
/// start with the inputs; see [`KeyFigures::cost_of_transport`]).
fn cost_of_transport(robot: &PlanarRobot, trajectory: &Trajectory, distance: f64) -> Option<f64> {
    if distance.abs() < 1e-6 {
        return None;
    }
    let n_inputs = robot.inputs.len();
    let power = |x: &[f64], u: &[f64]| -> f64 {
        robot
            .input_powers(x, &u[..n_inputs])
            .iter()
            .map(|p| p.abs())
            .sum()
    };
    let mut work = 0.0;
    for phase in &trajectory.phases {
        let h = phase.duration / (phase.states.len() - 1) as f64;
        for k in 0..phase.states.len() - 1 {
            work += 0.5
                * h
                * (power(&phase.states[k], &phase.controls[k])
                    + power(&phase.states[k + 1], &phase.controls[k + 1]));
        }
    }
    Some(work / (robot.body.total_mass() * robot.body.gravity * distance.abs()))
}

/// `trajectory.csv`: t, phase, node, then the state and control columns the robot names.
pub fn trajectory_csv(plan: &PlanarPlan) -> String {
    if let Some(hop) = &plan.planner.wrench_space {
        return wrench_space::trajectory_csv(hop, &plan.trajectory);
    }
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

/// Writes `solution.json` (with `provenance`) and `trajectory.csv` into `dir`, archiving
/// another plan's files and moving IPOPT's log in as the hopper's [`super::write_run_with`]
/// does; a plan on a wrench space with its MDP replay `mdp` (`replay.csv`, `replay.json`).
pub fn write_planar_run(
    dir: &Path,
    problem: &PlanarProblem,
    plan: &PlanarPlan,
    mdp: Option<&wrench_space::MdpReplay>,
    provenance: Provenance,
    ipopt_log: Option<&Path>,
) -> Result<PlanWritten, OutputError> {
    let trajectory = trajectory_csv(plan);
    let plan_id = plan_id_of(problem, trajectory.as_bytes());
    let file = PlanarSolutionFile {
        problem,
        solve: SolveRecord::new(
            &plan.report,
            plan.setup_seconds,
            plan.n_variables,
            plan.n_constraints,
            plan_id.clone(),
            provenance,
        ),
        key_figures: key_figures(plan),
        phases: phase_summaries(&plan.trajectory, problem),
        stages: &plan.stages,
        starts: &plan.starts,
        refinement: &plan.refinement,
        mesh_tolerance_met: problem.mesh.as_ref().and_then(|mesh| {
            let kept = plan.refinement.iter().find(|r| r.kept)?;
            Some(kept.error <= mesh.tolerance)
        }),
        transcription_error: plan
            .planner
            .wrench_space
            .is_none()
            .then(|| plan.planner.interval_errors(&plan.trajectory)),
        scheme: plan
            .planner
            .wrench_space
            .is_some()
            .then_some("ground: the MDP step (semi-implicit Euler); flight: trapezoidal"),
        replay: mdp.map(|m| &m.record),
    };
    let json = serde_json::to_string_pretty(&file).expect("solution serializes");
    let written = commit_plan(dir, &plan_id, &json, &trajectory, ipopt_log)?;
    if let (Some(mdp), Some(hop)) = (mdp, &plan.planner.wrench_space) {
        mdp.write(dir, &plan_id, hop, &plan.trajectory)?;
    }
    Ok(written)
}
