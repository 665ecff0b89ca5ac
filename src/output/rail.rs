//! A rail plan's `solution.json` and `trajectory.csv` (the hopper on an inclined rail over a
//! wrench-space terrain, `planner::rail`), with the plan's replay in the MDP simulator
//! (summed up in `solution.json` `replay`, step by step in `mdp_replay.csv`).
//!
//! `trajectory.csv` has the hopper's columns (t, phase, node, the eight states along the rail,
//! u) followed by the terrain's action at the node: `G` the force along the rail \[N\],
//! `F_x`, `F_z` \[N\] and `tau` \[N m\] the wrench B(θ)λ in the surface axes (torque about the
//! torque point). The vertex weights λ themselves stay in the NLP.

use std::path::Path;

use serde::Serialize;

use super::identity::plan_id_of;
use super::solution::commit_plan;
use super::{OutputError, PlanWritten, Provenance, SolveRecord};
use crate::model::hopper::{state, STATE_NAMES};
use crate::planner::rail::RailPlan;
use crate::problem::Problem;
use crate::sim::mdp::rail::RailReplay;

/// The rail and its terrain as planned.
#[derive(Serialize)]
pub struct RailRecord {
    pub angle_rad: f64,
    /// The data file as the problem names it.
    pub data: String,
    pub vertices: usize,
    /// The longest stable step of the stance [s], and the stance's duration cap it sets.
    pub stable_step_s: f64,
    pub stance_max_s: f64,
}

/// The plan's command replayed by the MDP simulator (`sim::mdp::rail::replay`).
#[derive(Serialize)]
pub struct RailReplayRecord {
    pub simulator: &'static str,
    pub flight_substeps: usize,
    pub apex_rise_m: Option<f64>,
    pub apex_time_s: Option<f64>,
    pub takeoff_time_s: Option<f64>,
    /// The largest difference of z_m, z_r or z_f from the plan at the stance's nodes [m].
    pub stance_difference_m: f64,
    pub clamped_steps: usize,
}

#[derive(Serialize)]
struct PhaseRecord {
    name: String,
    nodes: usize,
    duration_s: f64,
}

#[derive(Serialize)]
struct RailSolutionFile<'a> {
    problem: &'a Problem,
    #[serde(flatten)]
    solve: SolveRecord,
    apex_rise_m: f64,
    scheme: &'static str,
    phases: Vec<PhaseRecord>,
    rail: RailRecord,
    replay: RailReplayRecord,
}

/// The plan's nodes with the terrain's action (see the module docs).
pub fn trajectory_csv(plan: &RailPlan) -> String {
    let mut out = String::from("t,phase,node");
    for name in STATE_NAMES {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",u,G,F_x,F_z,tau\n");
    let mut t0 = 0.0;
    for phase in &plan.trajectory.phases {
        for (k, (x, u)) in phase.states.iter().zip(&phase.controls).enumerate() {
            let w = plan.jump.wrench(x, &u[1..]);
            let g = plan.jump.terrain_force(x, &u[1..]);
            out.push_str(&format!(
                "{:.9},{},{k}",
                t0 + phase.node_time(k),
                phase.name
            ));
            for v in x.iter().chain([&u[0], &g]).chain(&w) {
                out.push_str(&format!(",{v:.9e}"));
            }
            out.push('\n');
        }
        t0 += phase.duration;
    }
    out
}

/// Writes `solution.json` and `trajectory.csv` into `dir` (archiving another plan's files and
/// moving IPOPT's log in, as the hopper's writer does).
pub fn write_rail_run(
    dir: &Path,
    problem: &Problem,
    plan: &RailPlan,
    rail: RailRecord,
    replay: &RailReplay,
    flight_substeps: usize,
    provenance: Provenance,
    ipopt_log: Option<&Path>,
) -> Result<PlanWritten, OutputError> {
    let trajectory = trajectory_csv(plan);
    let plan_id = plan_id_of(problem, trajectory.as_bytes());
    let file = RailSolutionFile {
        problem,
        solve: SolveRecord::new(
            &plan.report,
            plan.setup_seconds,
            plan.n_variables,
            plan.n_constraints,
            plan_id.clone(),
            provenance,
        ),
        apex_rise_m: plan.apex_rise,
        scheme: "stance: the MDP step (semi-implicit Euler); flight: trapezoidal",
        phases: plan
            .trajectory
            .phases
            .iter()
            .map(|p| PhaseRecord {
                name: p.name.clone(),
                nodes: p.states.len(),
                duration_s: p.duration,
            })
            .collect(),
        rail,
        replay: RailReplayRecord::of(plan, replay, flight_substeps),
    };
    let json = serde_json::to_string_pretty(&file).expect("solution serializes");
    let written = commit_plan(dir, &plan_id, &json, &trajectory, ipopt_log)?;
    super::write_atomic(&dir.join("mdp_replay.csv"), replay_csv(replay).as_bytes())?;
    Ok(written)
}

/// The replay's steps: t, the eight states, the terrain's force along the rail `G` [N].
pub fn replay_csv(replay: &RailReplay) -> String {
    let mut out = String::from("t");
    for name in STATE_NAMES {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",G\n");
    for ((t, x), g) in replay.times.iter().zip(&replay.states).zip(&replay.forces) {
        out.push_str(&format!("{t:.9}"));
        for v in x.iter().chain([g]) {
            out.push_str(&format!(",{v:.9e}"));
        }
        out.push('\n');
    }
    out
}

impl RailReplayRecord {
    /// The record of `replay` of `plan`.
    pub fn of(plan: &RailPlan, replay: &RailReplay, flight_substeps: usize) -> Self {
        let stance = &plan.trajectory.phases[0];
        let mut difference: f64 = 0.0;
        for (planned, replayed) in stance.states.iter().zip(&replay.states) {
            for i in [state::Z_M, state::Z_R, state::Z_F] {
                difference = difference.max((replayed[i] - planned[i]).abs());
            }
        }
        RailReplayRecord {
            simulator: "mdp, vertex form, active set",
            flight_substeps,
            apex_rise_m: replay.apex_rise,
            apex_time_s: replay.apex_time,
            takeoff_time_s: replay.takeoff_time,
            stance_difference_m: difference,
            clamped_steps: replay.clamped_steps,
        }
    }
}
