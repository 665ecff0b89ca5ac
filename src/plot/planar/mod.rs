//! The planar robots' figures: `planar_run` (base and joint coordinates, inputs with their
//! limits and the contacts' normal forces against time, phases shaded, a `replay.csv`
//! overlaid dashed) and `filmstrip` (stick figures of the robot along the plan on one x–z
//! axis at equal scale, the centre of mass's path, the ground).
//!
//! Split by operation: `read` loads a run folder into a [`PlanarRun`], `panels` builds the
//! panels against time, `run_figure` draws `planar_run`, `stick` the stick figures and
//! `filmstrip` the `filmstrip` figure and its ground.

use std::path::Path;

use serde_json::Value;

use crate::model::planar::PlanarRobot;

mod filmstrip;
mod panels;
mod read;
mod run_figure;
mod stick;

pub(super) use filmstrip::ground_chart;
pub use filmstrip::Filmstrip;
pub(in crate::plot) use read::dem_replay_csv;
pub use run_figure::RunFigure;
pub(super) use stick::{stick_figure, touching, Pose};

/// Whether `solution.json` in `dir` is a planar robot's: its problem has a `schedule`, or a
/// `robot.model` other than the hopper's.
pub fn is_planar(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("solution.json")) else {
        return false;
    };
    let Ok(json) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    let problem = json.get("problem");
    let schedule = problem.and_then(|p| p.get("schedule")).is_some();
    let model = problem
        .and_then(|p| p.pointer("/robot/model"))
        .and_then(Value::as_str);
    schedule || model.is_some_and(|m| m != "hopper")
}

/// One phase of the plan.
pub struct Phase {
    pub contacts: Vec<String>,
    pub start: f64,
    pub end: f64,
}

impl Phase {
    fn label(&self) -> String {
        if self.contacts.is_empty() {
            "flight".into()
        } else {
            format!("stance: {}", self.contacts.join(", "))
        }
    }
}

/// A motion against time: the columns the figures draw, indexed like the robot's
/// coordinates, inputs and contacts (`None` where a file lacks a column).
pub struct Series {
    pub t: Vec<f64>,
    pub q: Vec<Option<Vec<f64>>>,
    pub u: Vec<Option<Vec<f64>>>,
    pub fz: Vec<Option<Vec<f64>>>,
    /// The plan's phase index per row (empty for a replay).
    pub phase: Vec<usize>,
}

/// One curve of a further panel: per row of the plan, and of the replay where it has it.
pub struct ExtraCurve {
    pub name: String,
    pub plan: Vec<f64>,
    pub replay: Option<Vec<f64>>,
}

/// What a [`PlanarRun`] holds: a plan (collocation nodes), or a run of the MDP simulator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunKind {
    Plan {
        converged: bool,
    },
    /// `loam mdp run`, stepped at this h \[s\].
    Simulation {
        time_step: f64,
    },
}

/// Everything both figures draw.
pub struct PlanarRun {
    pub name: String,
    pub kind: RunKind,
    /// The ground's angle \[rad\] (counter-clockwise +; 0 for plans, which are on flat ground).
    pub slope: f64,
    /// Further panels against time: label, curves of (name, values per row of `plan`, values
    /// per row of `replay` where it has the column).
    pub extra: Vec<(String, Vec<ExtraCurve>)>,
    /// What the replay's legend entry says.
    pub replay_label: String,
    pub robot: PlanarRobot,
    pub phases: Vec<Phase>,
    /// `key: value` texts from `key_figures`.
    pub key_figures: Vec<String>,
    pub plan: Series,
    pub replay: Option<Series>,
    /// A DEM replay on grains (`dem-cpu/dem_replay.csv` or `dem-cuda/...`, from t = 0) and
    /// its legend entry.
    pub dem: Option<(Series, String)>,
}
