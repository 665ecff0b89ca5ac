//! `sweep_planar`: a planar robot's sweep (`loam sweep` of a planar problem): the planned
//! and the replayed distance and centre-of-mass peak rise against the first varied field,
//! one colour per value of the other varied fields.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    draw_error, draw_grid, draw_heading, draw_line, draw_markers, range_of, trim_number, Chart,
    Figure, LegendEntry, Marker, Stroke, BLUE, DARK, GREEN, ORANGE, PURPLE, VERMILION,
};
use super::table::Table;
use super::PlotError;

/// Whether `sweep.csv` in `dir` is a planar sweep's (its replay columns, no hopper terrains).
pub fn is_planar_sweep(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("sweep.csv"))
        .ok()
        .and_then(|text| text.lines().next().map(str::to_owned))
        .is_some_and(|header| {
            header.split(',').any(|c| c == "replay_distance_error_rel")
                && !header.split(',').any(|c| c == "plan_terrain")
        })
}

/// The x axis's label: the varied field's path with its unit where the name tells it.
pub(super) fn x_label(field: &str) -> String {
    let last = field.rsplit('.').next().unwrap_or(field);
    let unit = if ["distance", "apex_rise", "foot_radius", "gravity"].contains(&last)
        || last.ends_with("_length")
        || last.ends_with("_width")
    {
        " [m]"
    } else if last.ends_with("_mass") {
        " [kg]"
    } else if last == "friction" {
        " [-]"
    } else {
        ""
    };
    let unit = match last {
        "gravity" => " [m/s²]",
        "speed" => " [m/s]",
        _ => unit,
    };
    format!("{field}{unit}")
}

/// One curve: the points of one value of the other varied fields, ordered by x.
struct Group {
    label: String,
    /// x, planned distance, replayed distance, planned peak, replayed peak (NaN: not
    /// replayed), the plan's cost of transport (NaN: none), and 1 where the plan converged
    /// (0: IPOPT's best iterate, drawn hollow).
    points: Vec<[f64; 7]>,
}

pub struct PlanarSweepFigure {
    title: String,
    x_name: String,
    groups: Vec<Group>,
    /// The first panel's label: the distance, or an apex task's rise (its columns then).
    first_label: &'static str,
}

const COLORS: [RGBColor; 6] = [BLUE, VERMILION, GREEN, ORANGE, PURPLE, DARK];

impl PlanarSweepFigure {
    pub fn load(dir: &Path) -> Result<PlanarSweepFigure, PlotError> {
        let path = dir.join("sweep.csv");
        let table = Table::read(&path)?;
        let varied = table.varied();
        let Some(x_name) = varied.first().cloned() else {
            return Err(PlotError::Invalid {
                path,
                message: "no varied field before the `run` column".into(),
            });
        };
        let x = table.numbers(&x_name).map_err(|_| PlotError::Invalid {
            path: path.clone(),
            message: format!(
                "the first varied field, `{x_name}`, is not a number in every row: the figure's x axis is the first --vary"
            ),
        })?;
        let number = |column: &str| -> Result<Vec<f64>, PlotError> {
            Ok(table
                .text(column)?
                .iter()
                .map(|v| v.parse().unwrap_or(f64::NAN))
                .collect())
        };
        // `cost_of_transport` came after the other columns; older sweeps lack it.
        let cot = match table.text("cost_of_transport") {
            Ok(_) => number("cost_of_transport")?,
            Err(_) => vec![f64::NAN; x.len()],
        };
        // An apex task's sweep (`planned_apex_rise_m` filled; older sweeps lack the column)
        // draws the task's apex where the others draw the distance travelled.
        let apex = match table.text("planned_apex_rise_m") {
            Ok(_) => number("planned_apex_rise_m")?,
            Err(_) => vec![f64::NAN; x.len()],
        };
        let apex_task = apex.iter().any(|v| v.is_finite());
        let (first_label, first) = if apex_task {
            (
                "the task's apex rise [m] (task.apex_of)",
                [apex, number("replay_apex_rise_m")?],
            )
        } else {
            (
                "base distance travelled [m] (a gait: its worst stride)",
                [number("distance_m")?, number("replay_distance_m")?],
            )
        };
        let [first_plan, first_replay] = first;
        let columns = [
            first_plan,
            first_replay,
            number("planned_com_peak_m")?,
            number("replay_com_peak_m")?,
            cot,
        ];
        let converged: Vec<f64> = table
            .text("converged")?
            .iter()
            .map(|v| if *v == "true" { 1.0 } else { 0.0 })
            .collect();
        let others: Vec<Vec<&str>> = varied[1..]
            .iter()
            .map(|c| table.text(c))
            .collect::<Result<_, _>>()?;
        let mut groups: Vec<Group> = Vec::new();
        for (i, &xi) in x.iter().enumerate() {
            let label = varied[1..]
                .iter()
                .zip(&others)
                .map(|(name, values)| {
                    format!("{}={}", name.rsplit('.').next().unwrap_or(name), values[i])
                })
                .collect::<Vec<_>>()
                .join(", ");
            let point = [
                xi,
                columns[0][i],
                columns[1][i],
                columns[2][i],
                columns[3][i],
                columns[4][i],
                converged[i],
            ];
            match groups.iter_mut().find(|g| g.label == label) {
                Some(group) => group.points.push(point),
                None => groups.push(Group {
                    label,
                    points: vec![point],
                }),
            }
        }
        for group in &mut groups {
            group.points.sort_by(|a, b| a[0].total_cmp(&b[0]));
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(PlanarSweepFigure {
            title: format!(
                "{name}: {} plans, planned (solid) and replayed (dashed)",
                x.len()
            ),
            x_name,
            groups,
            first_label,
        })
    }
}

impl Figure for PlanarSweepFigure {
    fn size(&self) -> (u32, u32) {
        let with_cot = self
            .groups
            .iter()
            .flat_map(|g| g.points.iter())
            .any(|p| p[5].is_finite());
        (if with_cot { 1800 } else { 1400 }, 600)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let mut entries = vec![
            LegendEntry::line("plan", DARK, Stroke::Solid, 2),
            LegendEntry::line("replay", DARK, Stroke::Dashed(8, 5), 2),
        ];
        if self
            .groups
            .iter()
            .flat_map(|g| &g.points)
            .any(|p| p[6] == 0.0)
        {
            entries.push(LegendEntry::marker(
                "plan not converged (IPOPT's best iterate)",
                DARK,
                Marker::Circle,
                false,
            ));
        }
        for (g, group) in self.groups.iter().enumerate() {
            if !group.label.is_empty() {
                entries.push(LegendEntry::line(
                    group.label.clone(),
                    COLORS[g % COLORS.len()],
                    Stroke::Solid,
                    3,
                ));
            }
        }
        let rest = draw_heading(root, &self.title, &entries)?;
        let all = || self.groups.iter().flat_map(|g| g.points.iter());
        // A third panel, the plans' cost of transport, where the plans travel.
        let with_cot = all().any(|p| p[5].is_finite());
        let panels = rest.split_evenly((1, if with_cot { 3 } else { 2 }));
        let labels = [
            self.first_label,
            "centre-of-mass peak rise [m] (a gait: apex height)",
            "cost of transport (plan) [-]",
        ];
        let (x0, x1) = range_of(all().map(|p| p[0]), 0.05);
        for (k, area) in panels.iter().enumerate() {
            // Columns: (plan, replay) per panel; the cost of transport is the plan's alone.
            let (plan, replay) = if k < 2 {
                (1 + 2 * k, 2 + 2 * k)
            } else {
                (5, 5)
            };
            let values = all()
                .flat_map(|p| [p[plan], p[replay]])
                .filter(|v| v.is_finite())
                .chain([0.0]);
            let (y0, y1) = range_of(values, 0.08);
            let mut chart: Chart<DB> = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(50)
                .y_label_area_size(80)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(draw_error)?;
            // Ticks a few thousandths apart need more than trim_number's three decimals.
            let fine = (y1 - y0).abs() < 0.05;
            draw_grid(
                &mut chart,
                (&x_label(&self.x_name), labels[k]),
                6,
                &|v| trim_number(*v),
                &|v| {
                    if fine && *v != 0.0 {
                        format!("{v:.1e}")
                    } else {
                        trim_number(*v)
                    }
                },
            )?;
            for (g, group) in self.groups.iter().enumerate() {
                let color = COLORS[g % COLORS.len()];
                // The finite points of one column against x.
                let series = |column: usize| -> Vec<(f64, f64)> {
                    group
                        .points
                        .iter()
                        .filter(|p| p[column].is_finite())
                        .map(|p| (p[0], p[column]))
                        .collect()
                };
                let (planned, replayed) = (series(plan), series(replay));
                draw_line(&mut chart, &planned, color, Stroke::Solid, 2)?;
                // Converged plans filled, the others hollow.
                for filled in [true, false] {
                    let points: Vec<(f64, f64)> = group
                        .points
                        .iter()
                        .filter(|p| p[plan].is_finite() && (p[6] == 1.0) == filled)
                        .map(|p| (p[0], p[plan]))
                        .collect();
                    let size = if filled { 4 } else { 6 };
                    draw_markers(&mut chart, &points, (Marker::Circle, filled), size, color)?;
                }
                if replay != plan {
                    draw_line(&mut chart, &replayed, color, Stroke::Dashed(8, 5), 2)?;
                    draw_markers(&mut chart, &replayed, (Marker::Diamond, false), 6, color)?;
                }
            }
        }
        Ok(())
    }
}

/// Whether the apex figure can draw a planar sweep's `replays.csv`: it draws the paper's
/// grounds (`rigid`, `poppy_seeds`), each from one value of the sweep's terrain axis.
/// `Err` says why not (a ground it has no group for, or two values of the axis with one
/// label, whose points it would merge).
pub fn replay_grounds_drawn(path: &Path) -> Result<Result<(), String>, PlotError> {
    let table = super::table::Table::read(path)?;
    let grounds = table.text("replay_terrain")?;
    // The sweep's terrain axis: `terrain` or a field under it (`terrain.friction`).
    let axis = table
        .columns()
        .iter()
        .find(|c| c.as_str() == "terrain" || c.starts_with("terrain."))
        .cloned();
    let terrains = axis.map(|c| table.text(&c)).transpose()?;
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, ground) in grounds.iter().enumerate() {
        if !super::data::SWEEP_TERRAINS.contains(ground) {
            return Ok(Err(format!(
                "replays.csv has ground `{ground}`; the apex figure draws {}",
                super::data::SWEEP_TERRAINS.join(" and ")
            )));
        }
        let plan = table.text("plan_terrain")?[i];
        let value = terrains.as_ref().map_or("", |t| t[i]);
        match seen.iter().find(|(label, _)| *label == plan) {
            Some((_, v)) if *v != value => {
                return Ok(Err(format!(
                    "two grounds of the sweep are both `{plan}`; the apex figure would merge them"
                )))
            }
            Some(_) => {}
            None => seen.push((plan, value)),
        }
    }
    Ok(Ok(()))
}
