//! The planar robots' figures: `planar_run` (base and joint coordinates, inputs with their
//! limits and the contacts' normal forces against time, phases shaded, a `replay.csv`
//! overlaid dashed) and `filmstrip` (stick figures of the robot along the plan on one x–z
//! axis at equal scale, the centre of mass's path, the ground).

use std::path::Path;

use plotters::coord::{ReverseCoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::RGBColor;
use serde_json::Value;

use super::style::{
    draw_error, draw_legend, draw_legend_row, draw_line, draw_markers, draw_time_mesh, font,
    range_of, sequential, trim_number, Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK,
    FLIGHT_FILL, GREEN, GREY, LABEL_SIZE, LEGEND_ROW, ORANGE, PURPLE, STANCE_FILL, TICK_SIZE,
    TITLE_SIZE, VERMILION,
};
use super::table::Table;
use super::PlotError;
use crate::model::multibody::Multibody;
use crate::model::planar::PlanarRobot;
use crate::problem::planar::PlanarProblem;
use crate::problem::scenario::Scenario;

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

/// A JSON file and its field `field` read as `T` (`what` names it in errors).
fn read_json_part<T: serde::de::DeserializeOwned>(
    path: &Path,
    field: &str,
    what: &str,
) -> Result<(Value, T), PlotError> {
    let err = |message: String| PlotError::Json {
        path: path.to_path_buf(),
        message,
    };
    let json = super::data::read_json(path)?;
    let part = serde_json::from_value(
        json.get(field)
            .cloned()
            .ok_or_else(|| err(format!("no field `{field}`")))?,
    )
    .map_err(|e| err(format!("`{field}` is not {what}: {e}")))?;
    Ok((json, part))
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

/// The DEM replay in `dir` (`dem-cpu/dem_replay.csv`, else `dem-cuda/...`) from t = 0 on
/// (its settling before the plan's clock is left out), with its legend entry.
fn dem_replay(dir: &Path, robot: &PlanarRobot) -> Result<Option<(Series, String)>, PlotError> {
    for backend in ["dem-cpu", "dem-cuda"] {
        let path = dir.join(backend).join("dem_replay.csv");
        if path.is_file() {
            let mut series = Series::read(&path, robot, false)?;
            let first = series.t.partition_point(|&t| t < 0.0);
            series.t.drain(..first);
            for column in series
                .q
                .iter_mut()
                .chain(&mut series.u)
                .chain(&mut series.fz)
            {
                if let Some(values) = column {
                    values.drain(..first);
                }
            }
            let label = format!("{backend}/dem_replay.csv (on simulated grains)");
            return Ok(Some((series, label)));
        }
    }
    Ok(None)
}

impl Series {
    fn read(path: &Path, robot: &PlanarRobot, plan: bool) -> Result<Series, PlotError> {
        let table = Table::read(path)?;
        let column = |name: String| -> Result<Option<Vec<f64>>, PlotError> {
            if plan || table.has(&name) {
                table.numbers(&name).map(Some)
            } else {
                Ok(None)
            }
        };
        let q = robot
            .coordinates
            .iter()
            .map(|c| column(c.name.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let u = robot
            .inputs
            .iter()
            .map(|i| column(i.name.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        let fz = robot
            .contacts
            .iter()
            .map(|c| column(format!("{}_fz", c.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let phase = if plan {
            table
                .numbers("phase")?
                .iter()
                .map(|p| p.max(0.0) as usize)
                .collect()
        } else {
            Vec::new()
        };
        Ok(Series {
            t: table.numbers("t")?,
            q,
            u,
            fz,
            phase,
        })
    }

    /// The configuration at row `i` (zeros for missing columns).
    pub(super) fn configuration(&self, i: usize) -> Vec<f64> {
        self.q
            .iter()
            .map(|c| c.as_ref().map_or(0.0, |c| c[i]))
            .collect()
    }
}

/// One curve of a further panel: per row of the plan, and of the replay where it has it.
pub struct ExtraCurve {
    pub name: String,
    pub plan: Vec<f64>,
    pub replay: Option<Vec<f64>>,
}

/// The wrench-space panels (each foot's depth, tilt, F_x, τ) of a table with the columns
/// `<foot>_depth`, `_tilt`, `_fx`, `_tau` (an MDP run, a plan on a wrench space), with the
/// replay's where `replay` has them; empty when `table` lacks them.
fn wrench_panels(
    feet: &[String],
    table: &Table,
    replay: Option<&Table>,
) -> Result<Vec<(String, Vec<ExtraCurve>)>, PlotError> {
    if !feet.iter().all(|f| table.has(&format!("{f}_depth"))) {
        return Ok(Vec::new());
    }
    let mut extra = Vec::new();
    for (what, label) in [
        ("depth", "foot depth d [m]"),
        ("tilt", "foot tilt φ [rad]"),
        ("fx", "terrain F_x [N]"),
        ("tau", "terrain τ [N m]"),
    ] {
        let curves = feet
            .iter()
            .map(|f| {
                let name = format!("{f}_{what}");
                Ok(ExtraCurve {
                    name: f.clone(),
                    plan: table.numbers(&name)?,
                    replay: match replay {
                        Some(r) if r.has(&name) => Some(r.numbers(&name)?),
                        _ => None,
                    },
                })
            })
            .collect::<Result<Vec<_>, PlotError>>()?;
        extra.push((label.to_string(), curves));
    }
    Ok(extra)
}

/// Each foot's depth in an added-mass bed, d = −z of its sole centre, from the coordinates of
/// the plan's table (and the replay's).
fn depth_panel(
    robot: &PlanarRobot,
    table: &Table,
    replay: Option<&Table>,
) -> Result<(String, Vec<ExtraCurve>), PlotError> {
    let depths = |table: &Table, c: usize| -> Result<Vec<f64>, PlotError> {
        let columns = robot
            .coordinates
            .iter()
            .map(|q| table.numbers(&q.name))
            .collect::<Result<Vec<_>, PlotError>>()?;
        let rows = columns.first().map_or(0, Vec::len);
        Ok((0..rows)
            .map(|k| {
                let q: Vec<f64> = columns.iter().map(|col| col[k]).collect();
                -robot.contact_point(&q, c)[1]
            })
            .collect())
    };
    let curves = (0..robot.contacts.len())
        .map(|c| {
            Ok(ExtraCurve {
                name: robot.contacts[c].name.clone(),
                plan: depths(table, c)?,
                replay: replay.map(|r| depths(r, c)).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, PlotError>>()?;
    Ok(("foot depth below the surface d [m]".to_string(), curves))
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
    pub replay_label: &'static str,
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

impl PlanarRun {
    pub fn load(dir: &Path) -> Result<PlanarRun, PlotError> {
        let path = dir.join("solution.json");
        let err = |message: String| PlotError::Json {
            path: path.clone(),
            message,
        };
        let (json, problem): (Value, PlanarProblem) =
            read_json_part(&path, "problem", "a planar problem")?;
        let robot = problem.robot.build(problem.gravity);
        let mut start = 0.0;
        let phases = json
            .get("phases")
            .and_then(Value::as_array)
            .ok_or_else(|| err("no list `phases`".into()))?
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let duration = p
                    .get("duration_s")
                    .and_then(Value::as_f64)
                    .filter(|d| d.is_finite() && *d >= 0.0)
                    .ok_or_else(|| err(format!("phases.{i}.duration_s is not a number >= 0")))?;
                let contacts = p
                    .get("contacts")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                let phase = Phase {
                    contacts,
                    start,
                    end: start + duration,
                };
                start += duration;
                Ok(phase)
            })
            .collect::<Result<Vec<_>, PlotError>>()?;
        let key_figures = json
            .get("key_figures")
            .and_then(Value::as_object)
            .map(|o| {
                o.iter()
                    .filter_map(|(k, v)| v.as_f64().map(|v| format!("{k} {}", trim_number(v))))
                    .collect()
            })
            .unwrap_or_default();
        let plan = Series::read(&dir.join("trajectory.csv"), &robot, true)?;
        let replay_path = dir.join("replay.csv");
        let replay = if replay_path.is_file() {
            Some(Series::read(&replay_path, &robot, false)?)
        } else {
            None
        };
        // A plan on a wrench space: its feet's depth, tilt and wrench, and a replay that is
        // the MDP simulator's.
        let feet: Vec<String> = robot.contacts.iter().map(|c| c.name.clone()).collect();
        let replay_table = replay
            .is_some()
            .then(|| Table::read(&replay_path))
            .transpose()?;
        let trajectory_table = Table::read(&dir.join("trajectory.csv"))?;
        let mut extra = wrench_panels(&feet, &trajectory_table, replay_table.as_ref())?;
        // The feet's depth, on a ground they sink into.
        if problem
            .terrain
            .contact_model::<f64>()
            .is_some_and(|model| model.yields())
        {
            extra.push(depth_panel(
                &robot,
                &trajectory_table,
                replay_table.as_ref(),
            )?);
        }
        let on_wrench_space = matches!(
            problem.terrain,
            crate::problem::planar::PlanarTerrainConfig::WrenchSpace(_)
        );
        Ok(PlanarRun {
            name: problem.name().to_string(),
            kind: RunKind::Plan {
                converged: json
                    .get("converged")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            slope: 0.0,
            extra,
            replay_label: if on_wrench_space {
                "replay.csv (MDP simulator, open loop)"
            } else {
                "replay.csv (simulated)"
            },
            dem: dem_replay(dir, &robot)?,
            robot,
            phases,
            key_figures,
            plan,
            replay,
        })
    }

    fn time_range(&self) -> (f64, f64) {
        let mut t = self.plan.t.clone();
        if let Some(r) = &self.replay {
            t.extend(&r.t);
        }
        if let Some(last) = self.phases.last() {
            t.push(last.end);
        }
        let lo = t.iter().copied().fold(0.0_f64, f64::min);
        let hi = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi.max(lo + 1e-3))
    }

    /// A folder written by `loam mdp run`: `scenario.json` and `trajectory.csv`, whose
    /// phases are the sets of feet below the surface row by row.
    pub fn load_mdp(dir: &Path) -> Result<PlanarRun, PlotError> {
        let (json, scenario): (Value, Scenario) =
            read_json_part(&dir.join("scenario.json"), "scenario", "a scenario")?;
        let robot = scenario.robot.build(scenario.gravity);
        let csv = dir.join("trajectory.csv");
        let table = Table::read(&csv)?;
        let mut plan = Series::read(&csv, &robot, false)?;
        let feet: Vec<String> = robot.contacts.iter().map(|c| c.name.clone()).collect();
        let column = |foot: &str, what: &str| table.numbers(&format!("{foot}_{what}"));
        let depth = feet
            .iter()
            .map(|f| column(f, "depth"))
            .collect::<Result<Vec<_>, _>>()?;
        // Phases: runs of rows with the same feet below the surface.
        let mut phases: Vec<Phase> = Vec::new();
        for (i, &t) in plan.t.iter().enumerate() {
            let below: Vec<String> = feet
                .iter()
                .zip(&depth)
                .filter(|(_, d)| d[i] < 0.0)
                .map(|(f, _)| f.clone())
                .collect();
            match phases.last_mut() {
                Some(last) if last.contacts == below => last.end = t,
                _ => {
                    if let Some(last) = phases.last_mut() {
                        last.end = t;
                    }
                    phases.push(Phase {
                        contacts: below,
                        start: t,
                        end: t,
                    });
                }
            }
            plan.phase.push(phases.len() - 1);
        }
        let extra = wrench_panels(&feet, &table, None)?;
        let summary = json.get("summary");
        let number = |key: &str| summary.and_then(|s| s.get(key)).and_then(Value::as_f64);
        let mut key_figures = Vec::new();
        if let Some(base) = summary
            .and_then(|s| s.get("final_base"))
            .and_then(Value::as_array)
        {
            let b: Vec<f64> = base.iter().filter_map(Value::as_f64).collect();
            if b.len() == 3 {
                key_figures.push(format!(
                    "end x {} m, z {} m, pitch {} rad",
                    trim_number(b[0]),
                    trim_number(b[1]),
                    trim_number(b[2])
                ));
            }
        }
        if let Some(clamped) = number("clamped_steps").filter(|c| *c > 0.0) {
            key_figures.push(format!("{clamped} steps clamped into the data"));
        }
        Ok(PlanarRun {
            name: scenario.name.clone().unwrap_or_default(),
            kind: RunKind::Simulation {
                time_step: scenario.time_step,
            },
            slope: scenario.terrain.slope,
            extra,
            replay_label: "replay.csv (simulated)",
            robot,
            phases,
            key_figures,
            plan,
            replay: None,
            dem: None,
        })
    }

    fn title(&self, what: &str) -> String {
        let what = match self.kind {
            RunKind::Plan { .. } => format!("{what}, "),
            RunKind::Simulation { .. } => "on wrench-space terrain (MDP simulator)".into(),
        };
        format!(
            "{}: {} {what}{}{}{}",
            self.name,
            self.robot.name,
            match self.kind {
                RunKind::Plan { converged: true } => "converged",
                RunKind::Plan { converged: false } => "NOT converged",
                RunKind::Simulation { .. } => "",
            },
            if self.key_figures.is_empty() {
                ""
            } else {
                "; "
            },
            self.key_figures.join(", ")
        )
    }
}

// ---------------------------------------------------------------------------------------
// planar_run
// ---------------------------------------------------------------------------------------

const WIDTH: u32 = 1400;
const LEGEND_WIDTH: u32 = 250;
const TITLE_HEIGHT: u32 = 40;
const SOURCES_HEIGHT: u32 = 32;
const STRIP_HEIGHT: u32 = 30;
const PANEL_HEIGHT: u32 = 210;
const Y_LABEL_AREA: u32 = 86;
const X_TICKS_AREA: u32 = 30;
const X_LABEL_AREA: u32 = 62;

/// Colours of the curves of a panel, in order.
fn curve_color(i: usize, n: usize) -> RGBColor {
    const PALETTE: [RGBColor; 7] = [
        BLUE,
        VERMILION,
        GREEN,
        ORANGE,
        PURPLE,
        RGBColor(86, 180, 233),
        DARK,
    ];
    if n <= PALETTE.len() {
        PALETTE[i]
    } else {
        sequential(i as f64 / (n - 1) as f64 * 0.9)
    }
}

struct Curve {
    label: String,
    plan: Vec<(f64, f64)>,
    replay: Option<Vec<(f64, f64)>>,
    dem: Option<Vec<(f64, f64)>>,
}

struct Panel {
    y_label: String,
    curves: Vec<Curve>,
    /// Faint horizontal lines: (value, curve index, label).
    limits: Vec<(f64, usize)>,
}

fn pairs(t: &[f64], v: &[f64]) -> Vec<(f64, f64)> {
    t.iter().copied().zip(v.iter().copied()).collect()
}

/// Words for a unit in an axis label.
fn quantity(unit: &str, joint: bool) -> &'static str {
    match (unit, joint) {
        ("rad", true) => "joint angles",
        ("m", true) => "joint displacements",
        ("N m", _) => "torques",
        ("N", _) => "forces",
        (_, true) => "joint coordinates",
        _ => "inputs",
    }
}

impl PlanarRun {
    fn curve(&self, label: String, pick: impl Fn(&Series) -> Option<&Vec<f64>>) -> Curve {
        Curve {
            label,
            plan: pick(&self.plan).map_or_else(Vec::new, |v| pairs(&self.plan.t, v)),
            replay: self
                .replay
                .as_ref()
                .and_then(|r| pick(r).map(|v| pairs(&r.t, v))),
            dem: self
                .dem
                .as_ref()
                .and_then(|(d, _)| pick(d).map(|v| pairs(&d.t, v))),
        }
    }

    fn panels(&self) -> Vec<Panel> {
        let robot = &self.robot;
        let mut panels = Vec::new();
        let coordinate = |k: usize| {
            let c = &robot.coordinates[k];
            self.curve(format!("{} [{}]", c.name, c.unit), |s| s.q[k].as_ref())
        };
        // (a) the base.
        let base_units: Vec<&str> = (0..3.min(robot.coordinates.len()))
            .map(|k| robot.coordinates[k].unit.as_str())
            .collect();
        let mut units: Vec<&str> = Vec::new();
        for u in &base_units {
            if !units.contains(u) {
                units.push(u);
            }
        }
        for unit in units {
            let ks: Vec<usize> = (0..base_units.len())
                .filter(|&k| base_units[k] == unit)
                .collect();
            let names: Vec<&str> = ks
                .iter()
                .map(|&k| robot.coordinates[k].name.as_str())
                .collect();
            panels.push(Panel {
                y_label: format!("base {} [{unit}]", names.join(", ")),
                curves: ks.iter().map(|&k| coordinate(k)).collect(),
                limits: Vec::new(),
            });
        }
        // (b) the joints, one panel per unit.
        let mut units: Vec<&str> = Vec::new();
        for c in robot.coordinates.iter().skip(3) {
            if !units.contains(&c.unit.as_str()) {
                units.push(&c.unit);
            }
        }
        for unit in units {
            let ks: Vec<usize> = (3..robot.coordinates.len())
                .filter(|&k| robot.coordinates[k].unit == unit)
                .collect();
            panels.push(Panel {
                y_label: format!("{} [{unit}]", quantity(unit, true)),
                curves: ks.iter().map(|&k| coordinate(k)).collect(),
                limits: Vec::new(),
            });
        }
        // (c) the inputs, one panel per unit, with their limits.
        let mut units: Vec<&str> = Vec::new();
        for i in &robot.inputs {
            if !units.contains(&i.unit.as_str()) {
                units.push(&i.unit);
            }
        }
        for unit in units {
            let js: Vec<usize> = (0..robot.inputs.len())
                .filter(|&j| robot.inputs[j].unit == unit)
                .collect();
            let mut limits = Vec::new();
            for (n, &j) in js.iter().enumerate() {
                let (lo, hi) = robot.inputs[j].limit;
                for v in [lo, hi] {
                    if v.is_finite() && !limits.iter().any(|&(w, _)| w == v) {
                        limits.push((v, n));
                    }
                }
            }
            panels.push(Panel {
                y_label: format!("input {} [{unit}]", quantity(unit, false)),
                curves: js
                    .iter()
                    .map(|&j| {
                        let i = &robot.inputs[j];
                        self.curve(format!("{} [{}]", i.name, i.unit), |s| s.u[j].as_ref())
                    })
                    .collect(),
                limits,
            });
        }
        // (d) the contacts' normal forces.
        if !robot.contacts.is_empty() {
            panels.push(Panel {
                y_label: match self.kind {
                    RunKind::Plan { .. } => "contact normal force F_z [N]".into(),
                    RunKind::Simulation { .. } => "terrain F_z [N]".into(),
                },
                curves: (0..robot.contacts.len())
                    .map(|c| {
                        self.curve(format!("F_z {} [N]", robot.contacts[c].name), |s| {
                            s.fz[c].as_ref()
                        })
                    })
                    .collect(),
                limits: Vec::new(),
            });
        }
        // (e) what the run adds (the MDP's feet: depth, tilt, F_x, τ).
        for (label, curves) in &self.extra {
            panels.push(Panel {
                y_label: label.clone(),
                curves: curves
                    .iter()
                    .map(|curve| Curve {
                        label: curve.name.clone(),
                        plan: pairs(&self.plan.t, &curve.plan),
                        replay: curve
                            .replay
                            .as_ref()
                            .zip(self.replay.as_ref())
                            .map(|(values, replay)| pairs(&replay.t, values)),
                        dem: None,
                    })
                    .collect(),
                limits: Vec::new(),
            });
        }
        panels
    }

    fn draw_phases<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        (t0, t1): (f64, f64),
        (y0, y1): (f64, f64),
    ) -> Result<(), PlotError> {
        for phase in &self.phases {
            let fill = if phase.contacts.is_empty() {
                FLIGHT_FILL
            } else {
                STANCE_FILL
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(phase.start.max(t0), y0), (phase.end.min(t1), y1)],
                    fill.filled(),
                )))
                .map_err(draw_error)?;
        }
        Ok(())
    }

    fn draw_strip<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        times: (f64, f64),
    ) -> Result<(), PlotError> {
        let mut chart: Chart<DB> = ChartBuilder::on(area)
            .margin_left(10)
            .margin_right(24)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(times.0..times.1, 0.0..1.0)
            .map_err(draw_error)?;
        self.draw_phases(&mut chart, times, (0.0, 1.0))?;
        for phase in &self.phases {
            // The longest label that fits the phase's width.
            let (a, _) = chart.backend_coord(&(phase.start.max(times.0), 0.5));
            let (b, _) = chart.backend_coord(&(phase.end.min(times.1), 0.5));
            let width = (b - a) as u32;
            let ms = format!("{:.0} ms", 1e3 * (phase.end - phase.start));
            let candidates = [
                format!("{} ({ms})", phase.label()),
                phase.label(),
                if phase.contacts.is_empty() {
                    "flight".into()
                } else {
                    phase.contacts.join(",")
                },
            ];
            let text = font(LABEL_SIZE - 3.0);
            let label = candidates.iter().find(|c| {
                area.estimate_text_size(c, &text)
                    .map(|(w, _)| w + 6 <= width)
                    .unwrap_or(false)
            });
            if let Some(label) = label {
                chart
                    .draw_series(std::iter::once(Text::new(
                        label.clone(),
                        (
                            (phase.start.max(times.0) + phase.end.min(times.1)) / 2.0,
                            0.5,
                        ),
                        text.pos(Pos::new(HPos::Center, VPos::Center)),
                    )))
                    .map_err(draw_error)?;
            }
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
        times: (f64, f64),
        last: bool,
        legend_width: u32,
    ) -> Result<(), PlotError> {
        let (plot_area, legend_area) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
        let values = panel
            .curves
            .iter()
            .flat_map(|c| {
                c.plan
                    .iter()
                    .chain(c.replay.iter().flatten())
                    .chain(c.dem.iter().flatten())
                    .map(|p| p.1)
            })
            .chain(panel.limits.iter().map(|l| l.0));
        let (y0, y1) = range_of(values, 0.06);
        let mut chart: Chart<DB> = ChartBuilder::on(&plot_area)
            .margin_left(10)
            .margin_right(24)
            .margin_top(8)
            .x_label_area_size(if last { X_LABEL_AREA } else { X_TICKS_AREA })
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(times.0..times.1, y0..y1)
            .map_err(draw_error)?;
        self.draw_phases(&mut chart, times, (y0, y1))?;
        draw_time_mesh(&mut chart, panel.y_label.as_str(), LABEL_SIZE - 2.0, last)?;

        let n = panel.curves.len();
        for &(v, k) in &panel.limits {
            let color = curve_color(k, n);
            let faint = RGBColor(
                ((color.0 as u16 + 2 * 255) / 3) as u8,
                ((color.1 as u16 + 2 * 255) / 3) as u8,
                ((color.2 as u16 + 2 * 255) / 3) as u8,
            );
            draw_line(
                &mut chart,
                &[(times.0, v), (times.1, v)],
                faint,
                Stroke::Dashed(3, 4),
                2,
            )?;
        }
        for (k, curve) in panel.curves.iter().enumerate() {
            let color = curve_color(k, n);
            draw_line(&mut chart, &curve.plan, color, Stroke::Solid, 2)?;
            if let RunKind::Plan { .. } = self.kind {
                draw_markers(&mut chart, &curve.plan, (Marker::Circle, true), 2, color)?;
            }
            if let Some(replay) = &curve.replay {
                draw_line(&mut chart, replay, color, Stroke::Dashed(9, 5), 2)?;
            }
            if let Some(dem) = &curve.dem {
                draw_line(&mut chart, dem, color, Stroke::Dashed(2, 3), 2)?;
            }
        }
        let mut entries: Vec<LegendEntry> = panel
            .curves
            .iter()
            .enumerate()
            .map(|(k, c)| LegendEntry::line(c.label.clone(), curve_color(k, n), Stroke::Solid, 3))
            .collect();
        if !panel.limits.is_empty() {
            entries.push(LegendEntry::line("limits", GREY, Stroke::Dashed(3, 4), 2));
        }
        // Long legends (many joints) go in two columns.
        if legend_columns(entries.len()) == 2 {
            let half = entries.len().div_ceil(2);
            let (left, right) = legend_area.split_horizontally(legend_width / 2);
            draw_legend(&left.margin(4, 0, 0, 0), None, &entries[..half])?;
            draw_legend(&right.margin(4, 0, 0, 0), None, &entries[half..])
        } else {
            draw_legend(&legend_area.margin(8, 0, 0, 0), None, &entries)
        }
    }
}

/// Columns a panel's legend of `entries` takes: two when one would be taller than the panel.
fn legend_columns(entries: usize) -> u32 {
    let rows = (PANEL_HEIGHT as i32 - 10) / LEGEND_ROW;
    if entries as i32 > rows {
        2
    } else {
        1
    }
}

/// The legends' width: [`LEGEND_WIDTH`], or wider where a panel's labels need it (a
/// quadruped's twelve joints in two columns), estimated at 7.5 px per character; the figure
/// widens by as much, so the plots keep their width.
fn legend_width(panels: &[Panel]) -> u32 {
    panels
        .iter()
        .map(|panel| {
            let longest = panel
                .curves
                .iter()
                .map(|c| c.label.chars().count())
                .chain([6])
                .max()
                .unwrap_or(0);
            let column = (longest as f64 * 7.5) as u32 + 34 + 16;
            let entries = panel.curves.len() + usize::from(!panel.limits.is_empty());
            legend_columns(entries) * column + 8
        })
        .fold(LEGEND_WIDTH, u32::max)
}

/// The `planar_run` figure.
pub struct RunFigure<'a>(pub &'a PlanarRun);

impl Figure for RunFigure<'_> {
    fn size(&self) -> (u32, u32) {
        let panels = self.0.panels();
        let n = panels.len() as u32;
        (
            WIDTH - LEGEND_WIDTH + legend_width(&panels),
            TITLE_HEIGHT
                + SOURCES_HEIGHT
                + STRIP_HEIGHT
                + n * PANEL_HEIGHT
                + (X_LABEL_AREA - X_TICKS_AREA)
                + 10,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let run = self.0;
        let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
        title_area
            .draw(&Text::new(run.title("plan"), (16, 10), font(TITLE_SIZE)))
            .map_err(draw_error)?;
        let (sources_area, rest) = rest.split_vertically(SOURCES_HEIGHT);
        let mut sources = Vec::new();
        match run.kind {
            RunKind::Plan { .. } => {
                sources.push(
                    LegendEntry::line("plan (collocation nodes)", GREY, Stroke::Solid, 2)
                        .with_marker(Marker::Circle, true),
                );
                sources.push(if run.replay.is_some() {
                    LegendEntry::line(run.replay_label, GREY, Stroke::Dashed(9, 5), 2)
                } else {
                    LegendEntry::note("(no replay.csv in this folder)")
                });
                if let Some((_, label)) = &run.dem {
                    sources.push(LegendEntry::line(
                        label.clone(),
                        GREY,
                        Stroke::Dashed(2, 3),
                        2,
                    ));
                }
                sources.push(LegendEntry::swatch("stance", STANCE_FILL));
                sources.push(LegendEntry::swatch("flight", FLIGHT_FILL));
            }
            RunKind::Simulation { time_step } => {
                sources.push(LegendEntry::line(
                    format!("simulated, h = {} ms", trim_number(1e3 * time_step)),
                    GREY,
                    Stroke::Solid,
                    2,
                ));
                sources.push(LegendEntry::swatch("a foot below the surface", STANCE_FILL));
                sources.push(LegendEntry::swatch("no foot below it", FLIGHT_FILL));
            }
        }
        draw_legend_row(&sources_area, (Y_LABEL_AREA as i32 + 10, 4), &sources)?;

        let times = run.time_range();
        let (strip, rest) = rest.split_vertically(STRIP_HEIGHT);
        let panels = run.panels();
        let legend_width = legend_width(&panels);
        let (strip, _) = strip.split_horizontally(WIDTH - LEGEND_WIDTH);
        run.draw_strip(&strip, times)?;

        let mut rest = rest;
        for (k, panel) in panels.iter().enumerate() {
            let last = k + 1 == panels.len();
            let height = PANEL_HEIGHT + if last { X_LABEL_AREA - X_TICKS_AREA } else { 0 };
            let (area, below) = rest.split_vertically(height);
            run.draw_panel(&area, panel, times, last, legend_width)?;
            rest = below;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// filmstrip
// ---------------------------------------------------------------------------------------

const FILM_WIDTH: u32 = 1400;
const POSES: usize = 10;
/// Shorter than this a segment is drawn as nothing [m].
const DEGENERATE: f64 = 1e-3;

/// What a pose is drawn with, in world coordinates [m].
pub(super) struct Pose {
    pub t: f64,
    pub segments: Vec<[(f64, f64); 2]>,
    /// Feet: (point, sole end points if a flat sole, in contact in the plan's phase).
    pub feet: Vec<((f64, f64), Option<[(f64, f64); 2]>, bool)>,
}

impl Pose {
    /// Draws the pose's segments `width` px wide, flat soles and feet markers 2 px wider
    /// (a foot on the ground filled).
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<DB>,
        color: RGBColor,
        width: u32,
    ) -> Result<(), PlotError> {
        for seg in &self.segments {
            draw_line(chart, seg, color, Stroke::Solid, width)?;
        }
        for &(point, sole, touching) in &self.feet {
            if let Some(sole) = sole {
                draw_line(chart, &sole, color, Stroke::Solid, width + 2)?;
            }
            draw_markers(
                chart,
                &[point],
                (Marker::Circle, touching),
                width as i32 + 2,
                color,
            )?;
        }
        Ok(())
    }
}

/// The segments and feet of `robot` at `q`.
pub(super) fn stick_figure(robot: &PlanarRobot, q: &[f64], touching: &[bool]) -> Pose {
    let body: &Multibody = &robot.body;
    let frames = body.frames(q);
    let p = |a: [f64; 2]| (a[0], a[1]);
    let long = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).hypot(a.1 - b.1) > DEGENERATE;
    let mut segments = Vec::new();
    let mut feet = Vec::new();
    for (b, frame) in frames.iter().enumerate() {
        let origin = p(frame.position);
        let mut drawn = false;
        let mut has_child_or_contact = false;
        for (c, child) in body.bodies.iter().enumerate() {
            if child.joint.as_ref().is_some_and(|j| j.parent == b) {
                has_child_or_contact = true;
                let end = p(frames[c].position);
                if long(origin, end) {
                    segments.push([origin, end]);
                    drawn = true;
                }
            }
        }
        for (k, contact) in robot.contacts.iter().enumerate() {
            if contact.body != b {
                continue;
            }
            has_child_or_contact = true;
            let point = p(frame.transform(contact.point));
            if long(origin, point) {
                segments.push([origin, point]);
                drawn = true;
            }
            let sole = (contact.half_width > 0.0).then(|| {
                let h = contact.half_width;
                [
                    p(frame.transform([contact.point[0] - h, contact.point[1]])),
                    p(frame.transform([contact.point[0] + h, contact.point[1]])),
                ]
            });
            feet.push((point, sole, touching.get(k).copied().unwrap_or(false)));
        }
        if !has_child_or_contact {
            let com = p(frame.transform(body.bodies[b].com));
            if long(origin, com) {
                segments.push([origin, com]);
                drawn = true;
            }
        }
        if !drawn && !has_child_or_contact {
            // Nothing to join: a short stub along the body's x axis.
            let h = 0.03;
            segments.push([p(frame.transform([-h, 0.0])), p(frame.transform([h, 0.0]))]);
        } else if !drawn && b == 0 {
            // A base whose joints sit at its own origin: the bar with its mass and inertia
            // (length √(12 I / m)) along its x axis, so that its pitch shows.
            let bb = &body.bodies[b];
            let h = if bb.mass > 0.0 && bb.inertia > 0.0 {
                (0.5 * (12.0 * bb.inertia / bb.mass).sqrt()).clamp(0.02, 0.5)
            } else {
                0.05
            };
            segments.push([p(frame.transform([-h, 0.0])), p(frame.transform([h, 0.0]))]);
        }
    }
    Pose {
        t: 0.0,
        segments,
        feet,
    }
}

/// The `filmstrip` figure.
pub struct Filmstrip<'a> {
    run: &'a PlanarRun,
    poses: Vec<Pose>,
    com: Vec<(f64, f64)>,
    x_range: (f64, f64),
    z_range: (f64, f64),
}

impl<'a> Filmstrip<'a> {
    pub fn new(run: &'a PlanarRun) -> Filmstrip<'a> {
        let plan = &run.plan;
        let n = plan.t.len();
        let com: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let c = run.robot.body.centre_of_mass(&plan.configuration(i));
                (c[0], c[1])
            })
            .collect();
        // Rows nearest to evenly spaced instants, the first and last included.
        let (t0, t1) = (
            plan.t.first().copied().unwrap_or(0.0),
            plan.t.last().copied().unwrap_or(0.0),
        );
        let mut rows: Vec<usize> = Vec::new();
        for k in 0..POSES.min(n) {
            let target = t0 + (t1 - t0) * k as f64 / (POSES.min(n) - 1).max(1) as f64;
            let i = (0..n)
                .min_by(|&a, &b| {
                    (plan.t[a] - target)
                        .abs()
                        .total_cmp(&(plan.t[b] - target).abs())
                })
                .unwrap_or(0);
            if !rows.contains(&i) {
                rows.push(i);
            }
        }
        let poses: Vec<Pose> = rows
            .iter()
            .map(|&i| {
                let mut pose = stick_figure(&run.robot, &plan.configuration(i), &touching(run, i));
                pose.t = plan.t[i];
                pose
            })
            .collect();
        let xs = poses
            .iter()
            .flat_map(|p| p.segments.iter().flatten().map(|a| a.0))
            .chain(com.iter().map(|c| c.0));
        let zs = poses
            .iter()
            .flat_map(|p| p.segments.iter().flatten().map(|a| a.1))
            .chain(com.iter().map(|c| c.1))
            .chain([0.0]);
        let x_range = range_of(xs, 0.08);
        let (z_lo, z_hi) = range_of(zs, 0.05);
        // Room above for the time labels, a little ground below.
        let span = z_hi - z_lo;
        Filmstrip {
            run,
            poses,
            com,
            x_range,
            z_range: (z_lo.min(-0.04 * span), z_hi + 0.12 * span),
        }
    }

    /// Pixels per metre: the poses fill at most the widest and tallest plot area.
    fn scale(&self) -> f64 {
        let w = (FILM_WIDTH - FILM_Y_AREA - FILM_MARGINS) as f64;
        (w / (self.x_range.1 - self.x_range.0))
            .min(FILM_MAX_PLOT / (self.z_range.1 - self.z_range.0))
    }

    /// Plot height in pixels at the equal scale.
    fn plot_height(&self) -> u32 {
        ((self.z_range.1 - self.z_range.0) * self.scale()).max(300.0) as u32
    }

    /// Figure width: the plot at the equal scale, no narrower than the title needs.
    fn width(&self) -> u32 {
        let w = (self.x_range.1 - self.x_range.0) * self.scale();
        (w as u32 + FILM_Y_AREA + FILM_MARGINS).clamp(FILM_MIN_WIDTH, FILM_WIDTH)
    }
}

/// Per contact, whether it is on the ground at row `i` of the run: in the plan's phase, or
/// (a simulation, which has no phases) carrying a normal force.
pub(super) fn touching(run: &PlanarRun, i: usize) -> Vec<bool> {
    let phase = run.plan.phase.get(i).and_then(|&p| run.phases.get(p));
    run.robot
        .contacts
        .iter()
        .enumerate()
        .map(|(c, contact)| {
            phase.is_some_and(|p| p.contacts.contains(&contact.name))
                || run.plan.fz.get(c).and_then(|f| f.as_ref()?.get(i).copied()) > Some(0.0)
        })
        .collect()
}

/// An equal-scale x-z chart over at least `x_range` × `z_range` filling `area`, with its
/// mesh and the ground drawn: the surface z = x tan(slope) through the origin, soil below.
pub(super) fn ground_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x_range: (f64, f64),
    z_range: (f64, f64),
    slope: f64,
) -> Result<Chart<'a, DB>, PlotError> {
    let builder = |x: (f64, f64), z: (f64, f64)| {
        ChartBuilder::on(area)
            .margin_left(10)
            .margin_right(30)
            .margin_top(4)
            .margin_bottom(16)
            .x_label_area_size(FILM_X_AREA)
            .y_label_area_size(FILM_Y_AREA)
            .build_cartesian_2d(x.0..x.1, z.0..z.1)
            .map_err(draw_error)
    };
    // Equal scale: widen whichever range is short for the plot area's shape.
    let probe: Chart<DB> = builder(x_range, z_range)?;
    let (w, h) = probe.plotting_area().dim_in_pixel();
    drop(probe);
    let (xs, zs) = (x_range.1 - x_range.0, z_range.1 - z_range.0);
    let scale = (w as f64 / xs).min(h as f64 / zs);
    let (xw, zw) = (w as f64 / scale, h as f64 / scale);
    let xc = 0.5 * (x_range.0 + x_range.1);
    let x = (xc - 0.5 * xw, xc + 0.5 * xw);
    let z = (z_range.0, z_range.0 + zw);
    let mut chart: Chart<DB> = builder(x, z)?;
    let surface = |x: f64| x * slope.tan();
    chart
        .draw_series(std::iter::once(Polygon::new(
            vec![
                (x.0, z.0),
                (x.1, z.0),
                (x.1, surface(x.1)),
                (x.0, surface(x.0)),
            ],
            RGBColor(235, 225, 205).filled(),
        )))
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_labels(14)
        .y_labels(8)
        .max_light_lines(1)
        .light_line_style(RGBColor(240, 240, 240))
        .bold_line_style(RGBColor(220, 220, 220))
        .label_style(font(TICK_SIZE))
        .axis_desc_style(font(LABEL_SIZE))
        .x_desc("x [m]")
        .y_desc("z [m]")
        .x_label_formatter(&|v| trim_number(*v))
        .y_label_formatter(&|v| trim_number(*v))
        .draw()
        .map_err(draw_error)?;
    draw_line(
        &mut chart,
        &[(x.0, surface(x.0)), (x.1, surface(x.1))],
        DARK,
        Stroke::Solid,
        2,
    )?;
    Ok(chart)
}

const FILM_TITLE: u32 = 40;
const FILM_LEGEND: u32 = 32;
const FILM_Y_AREA: u32 = 80;
const FILM_X_AREA: u32 = 60;
/// Left and right margins of the plot area together.
const FILM_MARGINS: u32 = 40;
const FILM_MIN_WIDTH: u32 = 1300;
/// The tallest plot area [px].
const FILM_MAX_PLOT: f64 = 760.0;

/// A light-to-dark ramp for time.
fn time_color(s: f64) -> RGBColor {
    let (a, b) = ((170.0, 200.0, 235.0), (8.0, 40.0, 100.0));
    let mix = |a: f64, b: f64| (a + (b - a) * s.clamp(0.0, 1.0)).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl Figure for Filmstrip<'_> {
    fn size(&self) -> (u32, u32) {
        (
            self.width(),
            FILM_TITLE + FILM_LEGEND + self.plot_height() + FILM_X_AREA + 20,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let run = self.run;
        let (title_area, rest) = root.split_vertically(FILM_TITLE);
        title_area
            .draw(&Text::new(
                run.title(&format!("plan, {} poses", self.poses.len())),
                (16, 10),
                font(TITLE_SIZE),
            ))
            .map_err(draw_error)?;
        let (legend_area, rest) = rest.split_vertically(FILM_LEGEND);
        let mut chart = ground_chart(&rest, self.x_range, self.z_range, run.slope)?;
        draw_line(&mut chart, &self.com, VERMILION, Stroke::Solid, 1)?;

        let n = self.poses.len();
        let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
        for (k, pose) in self.poses.iter().enumerate() {
            let color = time_color(k as f64 / (n - 1).max(1) as f64);
            pose.draw(&mut chart, color, 3)?;
            // The time above the pose, moved up a row while it would overlap another.
            let top = pose
                .segments
                .iter()
                .flatten()
                .copied()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0.0, 0.0));
            let label = format!("{:.2} s", pose.t);
            let text = font(TICK_SIZE);
            let (tw, th) = root.estimate_text_size(&label, &text).map_err(draw_error)?;
            let (px, py) = chart.backend_coord(&top);
            let (tw, th) = (tw as i32 + 4, th as i32 + 2);
            let mut y = py - 10 - th;
            let overlaps = |y: i32, placed: &[(i32, i32, i32, i32)]| {
                placed
                    .iter()
                    .any(|&(a, b, c, d)| px - tw / 2 < c && a < px + tw / 2 && y < d && b < y + th)
            };
            let mut tries = 0;
            while overlaps(y, &placed) && tries < 8 {
                y -= th;
                tries += 1;
            }
            placed.push((px - tw / 2, y, px + tw / 2, y + th));
            let anchor = chart.as_coord_spec().reverse_translate((px, y + th / 2));
            if let Some(anchor) = anchor {
                if y + th < py - 4 {
                    let foot = chart.as_coord_spec().reverse_translate((px, py - 3));
                    if let Some(foot) = foot {
                        let mid = chart.as_coord_spec().reverse_translate((px, y + th));
                        if let Some(mid) = mid {
                            draw_line(
                                &mut chart,
                                &[mid, foot],
                                RGBColor(200, 200, 200),
                                Stroke::Solid,
                                1,
                            )?;
                        }
                    }
                }
                chart
                    .draw_series(std::iter::once(Text::new(
                        label,
                        anchor,
                        text.color(&time_color(0.35 + 0.65 * k as f64 / (n - 1).max(1) as f64))
                            .pos(Pos::new(HPos::Center, VPos::Center)),
                    )))
                    .map_err(draw_error)?;
            }
        }

        let mut entries = vec![
            LegendEntry::line(
                "pose, light to dark with time",
                time_color(0.7),
                Stroke::Solid,
                3,
            ),
            LegendEntry::line("centre-of-mass path", VERMILION, Stroke::Solid, 2),
            LegendEntry::marker("foot on the ground", time_color(0.7), Marker::Circle, true),
            LegendEntry::marker("foot in the air", time_color(0.7), Marker::Circle, false),
        ];
        if run.robot.contacts.iter().any(|c| c.half_width > 0.0) {
            entries.push(LegendEntry::line(
                "flat sole",
                time_color(0.7),
                Stroke::Solid,
                5,
            ));
        }
        draw_legend_row(&legend_area, (FILM_Y_AREA as i32 + 10, 4), &entries)?;
        Ok(())
    }
}
