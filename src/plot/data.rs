//! The result files, read into what the figures draw (SI units as written; figures convert).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::table::Table;
use super::PlotError;

/// The terrains a sweep plans on and replays on.
pub const SWEEP_TERRAINS: [&str; 2] = ["rigid", "poppy_seeds"];

/// One row of `sweep.csv`: a plan replayed on one terrain.
#[derive(Clone, Debug)]
pub struct SweepRow {
    pub plan_terrain: String,
    pub apex_target: f64,
    pub converged: bool,
    pub replay_terrain: String,
    /// None where the replay failed.
    pub achieved_apex: Option<f64>,
    /// Relative to the sweep folder.
    pub run_dir: PathBuf,
    /// (path, value) of each varied field (`sweep.csv`'s columns beyond the fixed ones).
    pub varied: Vec<(String, String)>,
}

impl SweepRow {
    /// The varied values that the figures do not already show (the apex target is the
    /// x axis, the terrain model, or a planar sweep's whole terrain, the group):
    /// `drag_scaling=5`, empty if none.
    pub fn variant(&self) -> String {
        self.varied
            .iter()
            .filter(|(path, _)| {
                !matches!(
                    path.as_str(),
                    "task.apex_height" | "task.apex_rise" | "terrain.model" | "terrain"
                )
            })
            .map(|(path, value)| format!("{}={value}", path.rsplit('.').next().unwrap_or(path)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The columns `loam sweep` always writes; any other column of `sweep.csv` is a varied field.
const SWEEP_FIXED_COLUMNS: [&str; 12] = [
    "plan_terrain",
    "apex_target_m",
    "status",
    "converged",
    "planned_apex_m",
    "solve_s",
    "iterations",
    "replay_terrain",
    "achieved_apex_m",
    "error_m",
    "run_dir",
    "objective",
];

#[derive(Clone, Debug)]
pub struct Sweep {
    pub rows: Vec<SweepRow>,
}

impl Sweep {
    pub fn load(dir: &Path) -> Result<Sweep, PlotError> {
        Sweep::load_file(&dir.join("sweep.csv"))
    }

    /// A table in `sweep.csv`'s columns: the hopper's `sweep.csv`, or a planar sweep's
    /// `replays.csv` (every plan replayed on every ground of the sweep).
    pub fn load_file(path: &Path) -> Result<Sweep, PlotError> {
        let table = Table::read(path)?;
        let plan = table.choices("plan_terrain", &SWEEP_TERRAINS)?;
        let target = table.numbers("apex_target_m")?;
        let converged = table.booleans("converged")?;
        let replay = table.choices("replay_terrain", &SWEEP_TERRAINS)?;
        let achieved = table.optional_numbers("achieved_apex_m")?;
        let run_dir = table.text("run_dir")?;
        let varied_columns: Vec<String> = table
            .columns()
            .iter()
            .filter(|c| !SWEEP_FIXED_COLUMNS.contains(&c.as_str()))
            .cloned()
            .collect();
        let varied_values = varied_columns
            .iter()
            .map(|c| table.text(c))
            .collect::<Result<Vec<_>, _>>()?;
        let rows = (0..table.len())
            .map(|i| SweepRow {
                plan_terrain: plan[i].to_string(),
                apex_target: target[i],
                converged: converged[i],
                replay_terrain: replay[i].to_string(),
                achieved_apex: achieved[i],
                run_dir: PathBuf::from(run_dir[i]),
                varied: varied_columns
                    .iter()
                    .zip(&varied_values)
                    .map(|(c, v)| (c.clone(), v[i].to_string()))
                    .collect(),
            })
            .collect();
        Ok(Sweep { rows })
    }
}

/// A JSON file, parsed; errors name the file.
pub(super) fn read_json(path: &Path) -> Result<Value, PlotError> {
    let text = std::fs::read_to_string(path).map_err(|source| PlotError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| PlotError::Json {
        path: path.to_path_buf(),
        message: format!("not valid JSON: {e}"),
    })
}
