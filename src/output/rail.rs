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
    /// Steps with the foot below the data's deepest node (extrapolated, or clamped as the
    /// data say).
    pub outside_data_steps: usize,
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
    out.push_str(",u,G,F_x,F_z,tau");
    for name in &plan.jump.control_names()[1..] {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
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
            for v in x.iter().chain([&u[0], &g]).chain(&w).chain(&u[1..]) {
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
            outside_data_steps: replay.outside_steps,
        }
    }
}

/// A rail plan read back from its folder as the start of another (`loam solve --warm-start`):
/// its identity and its nodes (states, and controls u and the vertex weights λ).
#[derive(Clone, Debug)]
pub struct SavedRailPlan {
    pub plan_id: String,
    pub trajectory: crate::transcription::Trajectory,
}

/// Reads the rail plan in `dir` (its `solution.json` and `trajectory.csv`, checked to be one
/// plan). A folder of another kind of plan, or one written before the plan's vertex weights
/// were kept, is refused with the reason.
pub fn read_rail_plan(dir: &Path) -> Result<SavedRailPlan, crate::output::run::RunError> {
    use crate::output::run::{read_plan_files, PlanFiles, RunError};
    use crate::transcription::{PhaseTrajectory, Trajectory};
    let PlanFiles {
        solution_path,
        json,
        trajectory_path,
        trajectory: bytes,
        plan_id,
    } = read_plan_files(dir)?;
    let not_loam = |path: &Path, reason: String| RunError::NotALoamResult {
        path: path.to_path_buf(),
        reason,
    };
    if json.get("rail").is_none() {
        return Err(not_loam(
            &solution_path,
            "not a plan of the hopper on a rail (no `rail` key); the problem on a wrench space \
             starts from a rail plan"
                .into(),
        ));
    }
    let csv = |line: usize, message: String| RunError::Csv {
        path: trajectory_path.clone(),
        line,
        message,
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    // t, phase, node, the states, u, G, F_x, F_z, tau, then λ₁…λ_m.
    let first_lambda = 3 + state::COUNT + 5;
    if header.len() <= first_lambda || !header[first_lambda].starts_with("lambda_") {
        return Err(csv(
            1,
            "no vertex weights (lambda_1, ...): written by a loam that did not keep them; \
             solve it again to start from it"
                .into(),
        ));
    }
    let durations = json["phases"].as_array().cloned().unwrap_or_default();
    let mut phases: Vec<PhaseTrajectory> = Vec::new();
    for (i, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != header.len() {
            return Err(csv(
                i + 2,
                format!("{} fields, the header has {}", fields.len(), header.len()),
            ));
        }
        let number = |j: usize| {
            fields[j].trim().parse::<f64>().map_err(|_| {
                csv(
                    i + 2,
                    format!("{} = `{}` is not a number", header[j], fields[j]),
                )
            })
        };
        let x = (3..3 + state::COUNT)
            .map(number)
            .collect::<Result<Vec<_>, _>>()?;
        let mut u = vec![number(3 + state::COUNT)?];
        for j in first_lambda..header.len() {
            u.push(number(j)?);
        }
        if phases.last().is_none_or(|p| p.name != fields[1]) {
            let duration = durations
                .get(phases.len())
                .and_then(|p| p["duration_s"].as_f64())
                .ok_or_else(|| {
                    not_loam(
                        &solution_path,
                        format!("no duration for the plan's phase {}", phases.len() + 1),
                    )
                })?;
            phases.push(PhaseTrajectory {
                name: fields[1].to_string(),
                duration,
                states: Vec::new(),
                controls: Vec::new(),
                mid_states: Vec::new(),
                mid_controls: Vec::new(),
            });
        }
        let phase = phases.last_mut().expect("pushed above");
        phase.states.push(x);
        phase.controls.push(u);
    }
    if phases.len() != 2 || phases.iter().any(|p| p.states.len() < 2) {
        return Err(csv(
            1,
            "a rail plan has a stance and a flight of at least two nodes each".into(),
        ));
    }
    Ok(SavedRailPlan {
        plan_id,
        trajectory: Trajectory { phases },
    })
}
