//! The result files, read into what the figures draw (SI units as written; figures convert).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::table::Table;
use super::PlotError;

/// What the figures need from `solution.json`.
#[derive(Clone, Debug)]
pub struct Solution {
    pub name: String,
    pub converged: bool,
    pub apex_rise: f64,
    pub apex_target: f64,
    /// `rigid`, or `added_mass (poppy_seeds)`.
    pub terrain: String,
    /// The name a replay on this terrain has: `rigid`, or the medium (`poppy_seeds`).
    pub terrain_short: String,
    /// `(domain, duration)` in order.
    pub phases: Vec<(String, f64)>,
}

impl Solution {
    pub fn read(path: &Path) -> Result<Solution, PlotError> {
        let err = |message: String| PlotError::Json {
            path: path.to_path_buf(),
            message,
        };
        let json = read_json(path)?;
        let field = |pointer: &str| {
            json.pointer(pointer)
                .ok_or_else(|| err(format!("no field `{}`", pointer[1..].replace('/', "."))))
        };
        let number = |pointer: &str| {
            field(pointer)?.as_f64().ok_or_else(|| {
                err(format!(
                    "`{}` is not a number",
                    pointer[1..].replace('/', ".")
                ))
            })
        };
        let text_of = |pointer: &str| {
            field(pointer)?.as_str().map(str::to_string).ok_or_else(|| {
                err(format!(
                    "`{}` is not a string",
                    pointer[1..].replace('/', ".")
                ))
            })
        };
        let model = text_of("/problem/terrain/model")?;
        let (terrain, terrain_short) = match json
            .pointer("/problem/terrain/medium")
            .and_then(Value::as_str)
        {
            Some(medium) if model != "rigid" => (format!("{model} ({medium})"), medium.to_string()),
            _ => (model.clone(), model),
        };
        let phases = field("/phases")?
            .as_array()
            .ok_or_else(|| err("`phases` is not a list".into()))?
            .iter()
            .enumerate()
            .map(|(i, phase)| {
                let domain = phase.get("domain").and_then(Value::as_str);
                let duration = phase.get("duration_s").and_then(Value::as_f64);
                match (domain, duration) {
                    (Some(d), Some(t)) if t.is_finite() && t >= 0.0 => Ok((d.to_string(), t)),
                    _ => Err(err(format!(
                        "phases.{i} needs `domain` (text) and `duration_s` (a number >= 0)"
                    ))),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Solution {
            name: json
                .pointer("/problem/name")
                .and_then(Value::as_str)
                .unwrap_or("run")
                .to_string(),
            converged: field("/converged")?
                .as_bool()
                .ok_or_else(|| err("`converged` is not true or false".into()))?,
            apex_rise: number("/apex_rise_m")?,
            apex_target: number("/problem/task/apex_height")?,
            terrain,
            terrain_short,
            phases,
        })
    }
}

/// A motion of the hopper against time: the plan (at its nodes) or a replay (densely).
#[derive(Clone, Debug)]
pub struct Motion {
    pub t: Vec<f64>,
    pub z_m: Vec<f64>,
    pub z_r: Vec<f64>,
    pub z_f: Vec<f64>,
    pub z_d: Vec<f64>,
    pub u: Vec<f64>,
    pub f_m: Vec<f64>,
    pub f_s: Vec<f64>,
    pub f_terrain: Vec<f64>,
    /// The start of the last flight (`phase` in a plan, `domain` in a replay), if any.
    pub takeoff: Option<f64>,
}

impl Motion {
    /// `trajectory.csv` or a `replay*.csv`: both carry these columns.
    pub fn read(path: &Path) -> Result<Motion, PlotError> {
        let table = Table::read(path)?;
        let motion = Motion {
            t: table.numbers("t")?,
            z_m: table.numbers("z_m")?,
            z_r: table.numbers("z_r")?,
            z_f: table.numbers("z_f")?,
            z_d: table.numbers("z_d")?,
            u: table.numbers("u")?,
            f_m: table.numbers("F_m")?,
            f_s: table.numbers("F_s")?,
            f_terrain: table.numbers("F_terrain")?,
            takeoff: None,
        };
        check_time(&table, &motion.t)?;
        let domain = ["domain", "phase"]
            .into_iter()
            .find(|c| table.has(c))
            .map(|c| table.choices(c, &["stance", "flight"]))
            .transpose()?;
        // The last switch into flight: the take-off of the last hop (an earlier unloading of
        // the foot, or an earlier hop of a multi-hop plan, is not the jump's take-off).
        let takeoff = domain
            .and_then(|d| {
                (0..d.len())
                    .rev()
                    .find(|&i| d[i] == "flight" && (i == 0 || d[i - 1] != "flight"))
            })
            .map(|i| motion.t[i]);
        let motion = Motion { takeoff, ..motion };
        Ok(motion)
    }
}

/// Time must not run backwards (a replay repeats an event instant, so equal is allowed).
fn check_time(table: &Table, t: &[f64]) -> Result<(), PlotError> {
    for i in 1..t.len() {
        if t[i] < t[i - 1] {
            return Err(PlotError::Csv {
                path: table.path.clone(),
                line: table.line(i),
                message: format!(
                    "t = {} is earlier than the line before ({})",
                    t[i],
                    t[i - 1]
                ),
            });
        }
    }
    Ok(())
}

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
