//! `sweep_commands`: every point's planned actuator command against time, one panel per
//! ground of the sweep (the paper's Fig. 6: the hopper's commands z_d(t) per height, one panel
//! per planning terrain), one line per point, coloured and named by its varied values.
//!
//! What a line is, the robot's first input (choice: one line per point keeps the panels
//! legible for robots with many inputs; the title names the input drawn):
//! - a drive (the hopper's `motor`): its command z_d, the position the servo is told to hold
//!   (`<input>_command` in `trajectory.csv`, the planner's input u being its rate), in mm on a
//!   prismatic joint (rad on a revolute one), what the hopper's own figure drew;
//! - an ideal force or torque source: its effort (the input's column) [N or N m].
//!
//! A panel per value of the sweep's ground axis (`terrain` or a field under it), captioned by
//! the ground; one panel when the sweep does not vary the ground. Plans that did not converge
//! are dashed; a point whose folder lacks its `trajectory.csv` is counted in the legend.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

use super::style::{
    draw_error, draw_grid, draw_legend, draw_line, font, range_of, sequential, trim_number, Chart,
    Figure, LegendEntry, Stroke, GREY, LABEL_SIZE, TITLE_SIZE,
};
use super::table::Table;
use super::PlotError;
use crate::problem::planar::PlanarProblem;

/// One point's line.
struct Line {
    /// Its place in [`CommandFigure::keys`].
    key: usize,
    converged: bool,
    /// (t [s], the command in the figure's unit)
    points: Vec<(f64, f64)>,
}

/// One ground's panel.
struct Panel {
    caption: String,
    lines: Vec<Line>,
}

pub struct CommandFigure {
    title: String,
    y_label: String,
    panels: Vec<Panel>,
    /// The legend's labels, in colour order: the point's varied values other than the ground
    /// (`0.05` under the heading `task.apex_rise [m]`; `apex_rise=0.05, friction=1` for
    /// several fields).
    keys: Vec<String>,
    /// The legend's heading.
    heading: String,
    /// Points whose folder has no trajectory.csv.
    missing: usize,
}

/// The sweep's ground axis among the varied fields, if any.
fn ground_axis(varied: &[String]) -> Option<usize> {
    varied
        .iter()
        .position(|c| c == "terrain" || c.starts_with("terrain."))
}

/// A ground as a caption names it: `rigid ground`, `spring ground`, `poppy_seeds (added
/// mass)`.
fn ground_caption(terrain: &Value) -> String {
    let model = terrain["model"].as_str().unwrap_or("?");
    match (model, terrain["medium"].as_str()) {
        ("rigid" | "spring", _) => format!("{model} ground"),
        (_, Some(medium)) => format!("{medium} ({})", model.replace('_', " ")),
        _ => model.replace('_', " "),
    }
}

/// Orders keys by their values, as numbers where both are.
fn key_order(a: &[String], b: &[String]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(x), Ok(y)) => x.total_cmp(&y),
            _ => x.cmp(y),
        };
        if order.is_ne() {
            return order;
        }
    }
    a.cmp(b)
}

/// Which column of `trajectory.csv` the figure draws, its scale and its axis label, from a
/// plan's `solution.json`.
fn command_of(solution: &Path) -> Result<(String, f64, String), PlotError> {
    let json = super::data::read_json(solution)?;
    let problem: PlanarProblem =
        serde_json::from_value(json["problem"].clone()).map_err(|e| PlotError::Json {
            path: solution.to_path_buf(),
            message: format!("`problem` is not a planar problem: {e}"),
        })?;
    let robot = problem.robot.build(problem.gravity);
    let Some(input) = robot.inputs.first() else {
        return Err(PlotError::Invalid {
            path: solution.to_path_buf(),
            message: format!("robot `{}` has no input to draw", robot.name),
        });
    };
    let inputs = match robot.inputs.len() {
        1 => String::new(),
        n => format!(" (the first of {n} inputs)"),
    };
    Ok(match &input.drive {
        Some(_) => {
            let joint = &robot.coordinates[input.coordinate];
            let (scale, unit) = match joint.unit.as_str() {
                "m" => (1e3, "mm".to_string()),
                other => (1.0, other.to_string()),
            };
            (
                format!("{}_command", input.name),
                scale,
                format!(
                    "drive `{}`{inputs}: commanded {} z_d [{unit}]",
                    input.name, joint.name
                ),
            )
        }
        None => (
            input.name.clone(),
            1.0,
            format!("input `{}`{inputs} [{}]", input.name, input.unit),
        ),
    })
}

impl CommandFigure {
    /// The figure of the planar sweep in `dir` (its `sweep.csv` and the plans it names).
    pub fn load(dir: &Path) -> Result<CommandFigure, PlotError> {
        let path = dir.join("sweep.csv");
        let table = Table::read(&path)?;
        let varied = table.varied();
        let runs = table.text("run")?;
        let converged = table.text("converged")?;
        let values: Vec<Vec<&str>> = varied
            .iter()
            .map(|c| table.text(c))
            .collect::<Result<_, _>>()?;
        let ground = ground_axis(&varied);
        // Each point's key: its values off the ground axis.
        let key_of = |i: usize| -> Vec<String> {
            (0..varied.len())
                .filter(|&k| Some(k) != ground)
                .map(|k| values[k][i].to_string())
                .collect()
        };
        let mut keys: Vec<Vec<String>> = (0..table.len()).map(key_of).collect();
        keys.sort_by(|a, b| key_order(a, b));
        keys.dedup();
        let names: Vec<&str> = varied
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != ground)
            .map(|(_, c)| c.rsplit('.').next().unwrap_or(c))
            .collect();
        let labels: Vec<String> = keys
            .iter()
            .map(|key| match key.as_slice() {
                [] => "plan".to_string(),
                [value] => value.clone(),
                _ => {
                    let parts: Vec<String> = names
                        .iter()
                        .zip(key)
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect();
                    parts.join(", ")
                }
            })
            .collect();
        let off_ground: Vec<&String> = varied
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != ground)
            .map(|(_, c)| c)
            .collect();
        let heading = match off_ground.as_slice() {
            [field] => super::planar_sweep::x_label(field),
            _ => "points".to_string(),
        };

        let mut panels: Vec<(String, Panel)> = Vec::new();
        let mut missing = 0;
        let mut command: Option<(String, f64, String)> = None;
        for i in 0..table.len() {
            let run = dir.join(runs[i]);
            let trajectory = run.join("trajectory.csv");
            if !trajectory.is_file() || !run.join("solution.json").is_file() {
                missing += 1;
                continue;
            }
            if command.is_none() {
                command = Some(command_of(&run.join("solution.json"))?);
            }
            let (column, scale, _) = command.as_ref().expect("read above");
            let plan = Table::read(&trajectory)?;
            let t = plan.numbers("t")?;
            let y = plan.numbers(column)?;
            let line = Line {
                key: keys.iter().position(|k| *k == key_of(i)).expect("a key"),
                converged: converged[i] == "true",
                points: t.into_iter().zip(y).map(|(t, y)| (t, scale * y)).collect(),
            };
            let value = ground.map_or("", |g| values[g][i]).to_string();
            match panels.iter_mut().find(|(v, _)| *v == value) {
                Some((_, panel)) => panel.lines.push(line),
                None => {
                    let solution = super::data::read_json(&run.join("solution.json"))?;
                    let caption = format!(
                        "planned for {}",
                        ground_caption(&solution["problem"]["terrain"])
                    );
                    panels.push((
                        value,
                        Panel {
                            caption,
                            lines: vec![line],
                        },
                    ));
                }
            }
        }
        // Two grounds of one model (a sweep over `terrain.friction`): the axis's field and
        // value too.
        let captions: Vec<String> = panels.iter().map(|(_, p)| p.caption.clone()).collect();
        let field = ground.map_or("", |g| varied[g].as_str());
        for (value, panel) in &mut panels {
            if captions.iter().filter(|c| **c == panel.caption).count() > 1 {
                panel.caption = format!("{}: {field} = {value}", panel.caption);
            }
        }
        let (_, _, y_label) = command.unwrap_or_default();
        // The sweep's folder by its name (`.` too).
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .map_or(String::new(), |n| format!("{n}: "));
        Ok(CommandFigure {
            title: format!("{name}planned actuator command of every plan"),
            y_label,
            panels: panels.into_iter().map(|(_, p)| p).collect(),
            keys: labels,
            heading,
            missing,
        })
    }

    fn color(&self, key: usize) -> RGBColor {
        if self.keys.len() > 1 {
            sequential(0.9 * key as f64 / (self.keys.len() - 1) as f64)
        } else {
            sequential(0.3)
        }
    }
}

const PANEL: (u32, u32) = (640, 600);
/// Legend rows that fit beside a panel.
const MAX_KEY_ROWS: usize = 20;

impl CommandFigure {
    fn legend_width(&self) -> u32 {
        let longest = self
            .keys
            .iter()
            .chain([&self.heading])
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(0);
        (80 + 9 * longest as u32).clamp(250, 600)
    }
}

impl Figure for CommandFigure {
    fn size(&self) -> (u32, u32) {
        let panels = self.panels.len().max(1) as u32;
        (PANEL.0 * panels + self.legend_width(), PANEL.1 + 50)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (title, rest) = root.split_vertically(50);
        title
            .draw(&Text::new(self.title.clone(), (16, 14), font(TITLE_SIZE)))
            .map_err(draw_error)?;
        let all = || {
            self.panels
                .iter()
                .flat_map(|p| p.lines.iter().flat_map(|l| &l.points))
        };
        let (t_lo, t_hi) = range_of(all().map(|p| p.0), 0.0);
        let (y_lo, y_hi) = range_of(all().map(|p| p.1), 0.06);
        let count = self.panels.len().max(1);
        let (panels_area, legend_area) = rest.split_horizontally(PANEL.0 * count as u32);
        let areas = panels_area.split_evenly((1, count));
        for (panel, area) in self.panels.iter().zip(&areas) {
            let mut chart: Chart<DB> = ChartBuilder::on(area)
                .margin(14)
                .caption(&panel.caption, font(LABEL_SIZE))
                .x_label_area_size(60)
                .y_label_area_size(80)
                .build_cartesian_2d(t_lo.min(0.0)..t_hi, y_lo..y_hi)
                .map_err(draw_error)?;
            draw_grid(
                &mut chart,
                ("time t [s]", &self.y_label),
                8,
                &|v| format!("{v:.2}"),
                &|v| trim_number(*v),
            )?;
            for line in &panel.lines {
                let stroke = if line.converged {
                    Stroke::Solid
                } else {
                    Stroke::Dashed(6, 4)
                };
                draw_line(&mut chart, &line.points, self.color(line.key), stroke, 2)?;
            }
        }

        // A legend row per key up to MAX_KEY_ROWS; beyond, evenly spaced ones (first and last
        // included) and a note that the colour is graded in between.
        let shown: Vec<usize> = if self.keys.len() <= MAX_KEY_ROWS {
            (0..self.keys.len()).collect()
        } else {
            (0..MAX_KEY_ROWS)
                .map(|k| k * (self.keys.len() - 1) / (MAX_KEY_ROWS - 1))
                .collect()
        };
        let mut entries: Vec<LegendEntry> = shown
            .iter()
            .map(|&k| LegendEntry::line(self.keys[k].clone(), self.color(k), Stroke::Solid, 4))
            .collect();
        if shown.len() < self.keys.len() {
            entries.push(LegendEntry::note(format!(
                "({} points, colour graded)",
                self.keys.len()
            )));
        }
        if self
            .panels
            .iter()
            .flat_map(|p| &p.lines)
            .any(|l| !l.converged)
        {
            entries.push(LegendEntry::line(
                "not converged",
                GREY,
                Stroke::Dashed(6, 4),
                2,
            ));
        }
        if self.missing > 0 {
            entries.push(LegendEntry::note(format!(
                "{} plan(s) without trajectory.csv",
                self.missing
            )));
        }
        draw_legend(
            &legend_area.margin(70, 0, 0, 0),
            Some(&self.heading),
            &entries,
        )
    }
}
