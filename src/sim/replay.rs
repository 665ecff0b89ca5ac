//! Replaying a saved plan: its command z_d(t) alone, through the reduced-order simulator, on
//! the plan's terrain or another, and how the replay compares with the plan.

use std::path::PathBuf;

use serde::Serialize;

use super::command::{Command, CommandError, Interpolation};
use super::reduced::{self, Event, Mode, Replay, SimError, Simulator};
use crate::model::hopper::{state, Hopper, STATE_NAMES};
use crate::problem::{self, Medium, MediumPreset, Problem, Scheme, TerrainModel};
use crate::terrain::Terrain;

/// One collocation node of a saved plan.
#[derive(Clone, Debug)]
pub struct Node {
    pub t: f64,
    pub phase: String,
    pub x: [f64; state::COUNT],
    pub u: f64,
}

/// A plan as saved by `loam solve` (read back by `output::run::read_plan`).
#[derive(Clone, Debug)]
pub struct SavedPlan {
    pub dir: PathBuf,
    /// The plan's identity, checked against its files.
    pub plan_id: String,
    pub problem: Problem,
    pub status: String,
    pub converged: bool,
    pub apex_rise: f64,
    pub iterations: u64,
    /// Set-up plus solve time of the plan [s].
    pub solve_seconds: f64,
    pub nodes: Vec<Node>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("the plan's command: {0}")]
    Command(#[from] CommandError),
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// The command a plan hands to the robot, interpolated as its scheme implies.
pub fn command_of(plan: &SavedPlan) -> Result<Command, CommandError> {
    let interpolation = match plan.problem.transcription.scheme {
        Scheme::Trapezoidal => Interpolation::Linear,
        Scheme::HermiteSimpson => Interpolation::CubicHermite,
    };
    let times: Vec<f64> = plan.nodes.iter().map(|n| n.t).collect();
    let positions: Vec<f64> = plan.nodes.iter().map(|n| n.x[state::Z_D]).collect();
    let rates: Vec<f64> = plan.nodes.iter().map(|n| n.u).collect();
    Command::new(&times, &positions, &rates, interpolation)
}

/// A short name for a terrain section: `rigid`, or the medium's preset name.
pub fn terrain_label(terrain: &problem::Terrain) -> String {
    match terrain.model {
        problem::TerrainModel::Rigid => "rigid".into(),
        problem::TerrainModel::AddedMass => serde_json::to_value(terrain.medium)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "added_mass".into()),
    }
}

/// The terrain a replay ran on, with every parameter it used: `{model: rigid}`, or a granular
/// model with its medium preset and all the medium's parameters (the preset's, replaced by
/// each field the section sets).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TerrainRecord {
    pub model: TerrainModel,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medium: Option<MediumPreset>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Medium>,
}

impl TerrainRecord {
    pub fn of(terrain: &problem::Terrain) -> TerrainRecord {
        match terrain.model {
            TerrainModel::Rigid => TerrainRecord {
                model: terrain.model,
                medium: None,
                parameters: None,
            },
            TerrainModel::AddedMass => TerrainRecord {
                model: terrain.model,
                medium: Some(terrain.medium),
                parameters: Some(terrain.medium_parameters()),
            },
        }
    }

    /// Whether these are a preset's own parameters (rigid ground, or a medium as its preset
    /// defines it).
    pub fn is_preset(&self) -> bool {
        match (self.medium, self.parameters) {
            (Some(medium), Some(parameters)) => parameters == medium.parameters(),
            _ => true,
        }
    }
}

/// The largest difference of one state between the plan's nodes and the replay.
#[derive(Clone, Debug, Serialize)]
pub struct StateDifference {
    pub state: &'static str,
    pub max_abs: f64,
    pub at_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Integration {
    pub method: &'static str,
    pub rtol: f64,
    pub atol: f64,
    pub steps: usize,
    pub rejected: usize,
    pub interpolation: Interpolation,
}

/// `replay.json`: how the replay compares with the plan.
#[derive(Clone, Debug, Serialize)]
pub struct ReplaySummary {
    pub backend: &'static str,
    pub plan_terrain: String,
    pub replay_terrain: String,
    /// Every parameter of the terrain the replay ran on.
    pub terrain: TerrainRecord,
    pub plan_converged: bool,
    pub planned_apex_rise_m: f64,
    /// `None` (null) when no apex was reached before the time limit.
    pub apex_rise_m: Option<f64>,
    pub apex_error_m: Option<f64>,
    pub apex_error_percent: Option<f64>,
    pub planned_apex_time_s: f64,
    pub apex_time_s: Option<f64>,
    pub planned_takeoff_s: f64,
    pub takeoff_s: Option<f64>,
    /// Per state, the largest |replay − plan| over the plan's nodes up to the replay's end.
    pub state_differences: Vec<StateDifference>,
    pub events: Vec<Event>,
    pub integration: Integration,
}

/// Replays `plan` on `terrain` (the model of `terrain_section`, under the plan's robot).
pub fn replay(
    plan: &SavedPlan,
    terrain_section: &problem::Terrain,
    settings: reduced::Settings,
) -> Result<(Replay, ReplaySummary), ReplayError> {
    let robot = Hopper::from_problem(&plan.problem);
    let terrain = Terrain::from_problem(terrain_section, plan.problem.robot.foot_radius);
    let command = command_of(plan)?;
    // The robot starts at rest on the replay's terrain with the actuator where the plan starts
    // it; on the plan's own terrain this is the plan's first node.
    let initial = robot.rest_state(&terrain, plan.nodes[0].x[state::Z_D]);
    let node_times: Vec<f64> = plan.nodes.iter().map(|n| n.t).collect();
    let hops = plan
        .problem
        .phases
        .iter()
        .filter(|p| p.domain == problem::Domain::Flight)
        .count();
    let settings = reduced::Settings {
        apexes: hops.max(1),
        ..settings
    };
    let simulator = Simulator {
        robot: &robot,
        terrain: &terrain,
        command: &command,
        settings: settings.clone(),
    };
    let replay = simulator.run(initial, &node_times)?;

    let mut differences: Vec<StateDifference> = STATE_NAMES
        .iter()
        .map(|&name| StateDifference {
            state: name,
            max_abs: 0.0,
            at_s: 0.0,
        })
        .collect();
    for node in &plan.nodes {
        // Node times are sampled exactly; the first sample at or after a node is the node.
        let i = replay.samples.partition_point(|s| s.t < node.t - 1e-12);
        let Some(sample) = replay.samples.get(i) else {
            break;
        };
        if (sample.t - node.t).abs() > 1e-9 {
            continue;
        }
        for (k, d) in differences.iter_mut().enumerate() {
            let diff = (sample.x[k] - node.x[k]).abs();
            if diff > d.max_abs {
                d.max_abs = diff;
                d.at_s = node.t;
            }
        }
    }

    let stance_end = plan
        .nodes
        .iter()
        .rev()
        .find(|n| n.phase == "stance")
        .map_or(0.0, |n| n.t);
    let apex_rise = replay.apex_rise();
    let summary = ReplaySummary {
        backend: "reduced",
        plan_terrain: terrain_label(&plan.problem.terrain),
        replay_terrain: terrain_label(terrain_section),
        terrain: TerrainRecord::of(terrain_section),
        plan_converged: plan.converged,
        planned_apex_rise_m: plan.apex_rise,
        apex_rise_m: apex_rise,
        apex_error_m: apex_rise.map(|a| a - plan.apex_rise),
        apex_error_percent: apex_rise.map(|a| 100.0 * (a - plan.apex_rise) / plan.apex_rise),
        planned_apex_time_s: command.end_time(),
        apex_time_s: replay.apex.map(|(t, _)| t),
        planned_takeoff_s: stance_end,
        takeoff_s: replay.takeoff_time(),
        state_differences: differences,
        events: replay.events.clone(),
        integration: Integration {
            method: "Dormand-Prince 5(4) with dense output and event location",
            rtol: settings.tolerances.rtol,
            atol: settings.tolerances.atol,
            steps: replay.steps,
            rejected: replay.rejected,
            interpolation: command.interpolation(),
        },
    };
    Ok((replay, summary))
}

/// `replay.csv`: the replay's samples, columns as `trajectory.csv` with `domain` for the phase.
pub fn replay_csv(replay: &Replay) -> String {
    let mut out = String::from("t,domain");
    for name in STATE_NAMES {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",u,F_m,F_s,F_terrain\n");
    for s in &replay.samples {
        let domain = match s.mode {
            Mode::Stick | Mode::Sink => "stance",
            Mode::Flight => "flight",
        };
        out.push_str(&format!("{:.9},{domain}", s.t));
        for v in s.x.iter().chain([&s.u]) {
            out.push_str(&format!(",{v:.9e}"));
        }
        out.push_str(&format!(
            ",{:.9e},{:.9e},{:.9e}\n",
            s.motor_force, s.spring_force, s.terrain_force
        ));
    }
    out
}
