//! The sweep figures: commanded against achieved apex per group (the paper's Fig. 5) and the
//! planned commands z_d(t) of every height, one panel per planning terrain (its Fig. 6).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::data::{Motion, Sweep, SWEEP_TERRAINS};
use super::style::{
    draw_error, draw_grid, draw_legend, draw_line, draw_markers, font, range_of, sequential,
    trim_number, Chart, Figure, LegendEntry, Marker, Stroke, BLUE, GREEN, GREY, LABEL_SIZE, PURPLE,
    TITLE_SIZE, VERMILION,
};
use super::PlotError;

/// A (plan terrain, replay terrain) pair of the apex figure, in the paper's order.
struct Group {
    plan: &'static str,
    replay: &'static str,
    label: &'static str,
    color: RGBColor,
    marker: Marker,
}

const GROUPS: [Group; 4] = [
    Group {
        plan: "rigid",
        replay: "rigid",
        label: "rigid plan on rigid ground",
        color: BLUE,
        marker: Marker::Circle,
    },
    Group {
        plan: "poppy_seeds",
        replay: "poppy_seeds",
        label: "granular plan on poppy seeds",
        color: GREEN,
        marker: Marker::Triangle,
    },
    Group {
        plan: "rigid",
        replay: "poppy_seeds",
        label: "rigid plan on poppy seeds",
        color: VERMILION,
        marker: Marker::Square,
    },
    Group {
        plan: "poppy_seeds",
        replay: "rigid",
        label: "granular plan on rigid ground",
        color: PURPLE,
        marker: Marker::Diamond,
    },
];

/// One group's points in mm: (commanded, achieved, plan converged).
#[derive(Clone, Debug, Default)]
pub struct GroupPoints {
    pub points: Vec<(f64, f64, bool)>,
    /// Rows whose replay gave no apex.
    pub failed: usize,
}

impl GroupPoints {
    /// Mean |achieved − commanded| over the converged plans, in mm, and how many.
    pub fn mean_abs_error(&self) -> Option<(f64, usize)> {
        let errors: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.2)
            .map(|p| (p.1 - p.0).abs())
            .collect();
        (!errors.is_empty()).then(|| {
            (
                errors.iter().sum::<f64>() / errors.len() as f64,
                errors.len(),
            )
        })
    }
}

/// One group of the apex figure, in numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSummary {
    /// e.g. "rigid plan on poppy seeds".
    pub label: String,
    pub plan_terrain: String,
    pub replay_terrain: String,
    /// Mean |achieved − commanded| apex rise over the converged plans [mm].
    pub mean_abs_error_mm: Option<f64>,
    /// Points with a converged plan (those the mean is over).
    pub converged: usize,
    /// Points drawn (replays that reached an apex).
    pub points: usize,
    /// Replays that gave no apex.
    pub failed: usize,
}

pub struct ApexFigure {
    /// (group, variant: the other varied values, colour, points); a group splits into one
    /// series per variant when the sweep varied more than the target and the terrain.
    groups: Vec<(&'static Group, String, RGBColor, GroupPoints)>,
}

impl ApexFigure {
    pub fn new(sweep: &Sweep) -> ApexFigure {
        let mut variants: Vec<String> = Vec::new();
        for row in &sweep.rows {
            let v = row.variant();
            if !variants.contains(&v) {
                variants.push(v);
            }
        }
        let shaded = variants.len() > 1;
        let mut groups = Vec::new();
        for group in &GROUPS {
            for (k, variant) in variants.iter().enumerate() {
                let rows: Vec<_> = sweep
                    .rows
                    .iter()
                    .filter(|r| r.plan_terrain == group.plan && r.replay_terrain == group.replay)
                    .filter(|r| r.variant() == *variant)
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                let mut points: Vec<(f64, f64, bool)> = rows
                    .iter()
                    .filter_map(|r| {
                        r.achieved_apex
                            .map(|a| (1e3 * r.apex_target, 1e3 * a, r.converged))
                    })
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let failed = rows.len() - points.len();
                let color = if shaded {
                    sequential(k as f64 / (variants.len() - 1) as f64 * 0.85)
                } else {
                    group.color
                };
                groups.push((
                    group,
                    variant.clone(),
                    color,
                    GroupPoints { points, failed },
                ));
            }
        }
        ApexFigure { groups }
    }

    /// Each group's apex errors, for the caller's summary.
    pub fn summary(&self) -> Vec<GroupSummary> {
        self.groups
            .iter()
            .map(|(group, variant, _, points)| {
                let mae = points.mean_abs_error();
                GroupSummary {
                    label: series_label(group, variant),
                    plan_terrain: group.plan.to_string(),
                    replay_terrain: group.replay.to_string(),
                    mean_abs_error_mm: mae.map(|m| m.0),
                    converged: mae.map_or(0, |m| m.1),
                    points: points.points.len(),
                    failed: points.failed,
                }
            })
            .collect()
    }
}

const APEX_CHART: u32 = 760;
const APEX_LEGEND: u32 = 520;

impl Figure for ApexFigure {
    fn size(&self) -> (u32, u32) {
        (APEX_CHART + APEX_LEGEND, APEX_CHART + 50)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (title, rest) = root.split_vertically(50);
        title
            .draw(&Text::new(
                "Achieved against commanded apex rise",
                (16, 14),
                font(TITLE_SIZE),
            ))
            .map_err(draw_error)?;
        let (chart_area, legend_area) = rest.split_horizontally(APEX_CHART);
        // Each axis fitted to its own data: the commanded heights span the sweep, the
        // achieved ones may reach far above it (a plan replayed on the other ground).
        let points = || self.groups.iter().flat_map(|(_, _, _, g)| g.points.iter());
        let (x_lo, x_hi) = range_of(points().map(|p| p.0), 0.0);
        let (y_lo, y_hi) = range_of(points().flat_map(|p| [p.0, p.1]), 0.0);
        let pad = 0.06 * (x_hi - x_lo).max(10.0);
        let x_range = ((x_lo - pad).max(0.0), x_hi + pad);
        let y_range = (
            ((y_lo - 8.0) / 10.0).floor().max(0.0) * 10.0,
            (y_hi * 1.06 / 10.0).ceil() * 10.0,
        );
        let mut chart: Chart<DB> = ChartBuilder::on(&chart_area)
            .margin(16)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)
            .map_err(draw_error)?;
        draw_grid(
            &mut chart,
            ("commanded apex rise [mm]", "achieved apex rise [mm]"),
            10,
            &|v| format!("{v:.0}"),
            &|v| format!("{v:.0}"),
        )?;
        draw_line(
            &mut chart,
            &[(x_range.0, x_range.0), (x_range.1, x_range.1)],
            GREY,
            Stroke::Dashed(8, 5),
            2,
        )?;
        for (group, _, color, points) in &self.groups {
            let xy: Vec<(f64, f64)> = points.points.iter().map(|p| (p.0, p.1)).collect();
            draw_line(
                &mut chart,
                &xy,
                color.mix(0.5).to_rgba().rgb_color(),
                Stroke::Solid,
                1,
            )?;
            for filled in [true, false] {
                let these: Vec<(f64, f64)> = points
                    .points
                    .iter()
                    .filter(|p| p.2 == filled)
                    .map(|p| (p.0, p.1))
                    .collect();
                draw_markers(&mut chart, &these, (group.marker, filled), 6, *color)?;
            }
        }

        let mut entries: Vec<LegendEntry> = Vec::new();
        for (group, variant, color, points) in &self.groups {
            let mut label = series_label(group, variant);
            label += &match points.mean_abs_error() {
                Some((mae, n)) => format!(": mean |error| {mae:.1} mm (n = {n})"),
                None => ": no converged plan".into(),
            };
            entries.push(LegendEntry::marker(label, *color, group.marker, true));
            if points.failed > 0 {
                entries.push(LegendEntry::note(format!(
                    "({} replay(s) reached no apex: not drawn)",
                    points.failed
                )));
            }
        }
        entries.push(LegendEntry::line(
            "achieved = commanded",
            GREY,
            Stroke::Dashed(8, 5),
            2,
        ));
        entries.push(LegendEntry::marker(
            "hollow: the plan did not converge",
            GREY,
            Marker::Circle,
            false,
        ));
        draw_legend(&legend_area.margin(30, 0, 0, 0), None, &entries)
    }
}

/// Orders `drag_scaling=5` before `drag_scaling=17.2`: values compared as numbers where both
/// are numbers, as text otherwise.
fn variant_order(a: &str, b: &str) -> std::cmp::Ordering {
    let values = |v: &str| -> Vec<String> {
        v.split(", ")
            .map(|kv| kv.split_once('=').map_or(kv, |(_, x)| x).to_string())
            .collect()
    };
    for (x, y) in values(a).iter().zip(values(b).iter()) {
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

/// "granular plan on poppy seeds", with the other varied values when there are any
/// ("…, drag_scaling=5").
fn series_label(group: &Group, variant: &str) -> String {
    if variant.is_empty() {
        group.label.to_string()
    } else {
        format!("{}, {variant}", group.label)
    }
}

/// Helps `mix` keep an `RGBColor` type for [`draw_line`].
trait Rgb {
    fn rgb_color(&self) -> RGBColor;
}

impl Rgb for RGBAColor {
    /// Blends with white by the alpha.
    fn rgb_color(&self) -> RGBColor {
        let blend = |c: u8| (c as f64 * self.3 + 255.0 * (1.0 - self.3)).round() as u8;
        RGBColor(blend(self.0), blend(self.1), blend(self.2))
    }
}

/// One plan's command for the command figure.
struct Command {
    target_mm: f64,
    /// The other varied values (`drag_scaling=5`), empty if none.
    variant: String,
    converged: bool,
    /// (t [s], z_d [mm])
    points: Vec<(f64, f64)>,
}

pub struct CommandFigure {
    /// Per planning terrain present, in [`SWEEP_TERRAINS`] order.
    panels: Vec<(&'static str, Vec<Command>)>,
    /// Plans whose trajectory.csv is not there.
    missing: usize,
    targets: (f64, f64),
}

impl CommandFigure {
    pub fn load(dir: &Path, sweep: &Sweep) -> Result<CommandFigure, PlotError> {
        let mut panels = Vec::new();
        let mut missing = 0;
        for terrain in SWEEP_TERRAINS {
            let mut seen = std::collections::BTreeSet::new();
            let mut commands = Vec::new();
            for row in sweep.rows.iter().filter(|r| r.plan_terrain == terrain) {
                if !seen.insert(row.run_dir.clone()) {
                    continue;
                }
                let path = dir.join(&row.run_dir).join("trajectory.csv");
                if !path.is_file() {
                    missing += 1;
                    continue;
                }
                let plan = Motion::read(&path)?;
                commands.push(Command {
                    target_mm: 1e3 * row.apex_target,
                    variant: row.variant(),
                    converged: row.converged,
                    points: plan
                        .t
                        .iter()
                        .zip(&plan.z_d)
                        .map(|(t, z)| (*t, 1e3 * z))
                        .collect(),
                });
            }
            commands.sort_by(|a, b| {
                a.target_mm
                    .total_cmp(&b.target_mm)
                    .then_with(|| variant_order(&a.variant, &b.variant))
            });
            if !seen.is_empty() {
                panels.push((terrain, commands));
            }
        }
        let targets = sweep.rows.iter().map(|r| 1e3 * r.apex_target);
        let lo = targets.clone().fold(f64::INFINITY, f64::min);
        let hi = targets.fold(f64::NEG_INFINITY, f64::max);
        Ok(CommandFigure {
            panels,
            missing,
            targets: (lo, hi),
        })
    }

    /// The legend's keys: (target, variant) in order, one per distinct plan line.
    fn keys(&self) -> Vec<(f64, String, bool)> {
        let mut keys: Vec<(f64, String, bool)> = self
            .panels
            .iter()
            .flat_map(|(_, c)| {
                c.iter()
                    .map(|c| (c.target_mm, c.variant.clone(), c.converged))
            })
            .collect();
        keys.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| variant_order(&a.1, &b.1)));
        keys.dedup_by(|a, b| (a.0 - b.0).abs() < 1e-9 && a.1 == b.1);
        keys
    }

    /// A line's colour: graded by target, or, when other fields were varied too, by its place
    /// among the (target, variant) keys so that each is told apart.
    fn color_of(&self, target_mm: f64, variant: &str) -> RGBColor {
        let keys = self.keys();
        if keys.iter().any(|k| !k.1.is_empty()) && keys.len() > 1 {
            let i = keys
                .iter()
                .position(|k| (k.0 - target_mm).abs() < 1e-9 && k.1 == variant)
                .unwrap_or(0);
            return sequential(i as f64 / (keys.len() - 1) as f64);
        }
        self.color(target_mm)
    }

    fn color(&self, target_mm: f64) -> RGBColor {
        let (lo, hi) = self.targets;
        sequential(if hi > lo {
            (target_mm - lo) / (hi - lo)
        } else {
            0.5
        })
    }
}

const COMMAND_PANEL: (u32, u32) = (640, 600);
const COMMAND_LEGEND: u32 = 250;
/// Legend rows for the targets that fit beside a panel.
const MAX_TARGET_ROWS: usize = 16;

impl Figure for CommandFigure {
    fn size(&self) -> (u32, u32) {
        // Wider when the legend names other varied fields beside the target.
        let legend = if self.keys().iter().any(|k| !k.1.is_empty()) {
            2 * COMMAND_LEGEND
        } else {
            COMMAND_LEGEND
        };
        (
            COMMAND_PANEL.0 * self.panels.len().max(1) as u32 + legend,
            COMMAND_PANEL.1 + 50,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (title, rest) = root.split_vertically(50);
        title
            .draw(&Text::new(
                "Planned actuator command z_d(t), by target apex rise",
                (16, 14),
                font(TITLE_SIZE),
            ))
            .map_err(draw_error)?;
        let all = self
            .panels
            .iter()
            .flat_map(|(_, c)| c.iter().flat_map(|c| &c.points));
        let (t_lo, t_hi) = range_of(all.clone().map(|p| p.0), 0.0);
        let (z_lo, z_hi) = range_of(all.map(|p| p.1), 0.06);
        let (panels_area, legend_area) =
            rest.split_horizontally(COMMAND_PANEL.0 * self.panels.len().max(1) as u32);
        let areas = panels_area.split_evenly((1, self.panels.len().max(1)));
        for ((terrain, commands), area) in self.panels.iter().zip(&areas) {
            let caption = match *terrain {
                "rigid" => "planned for rigid ground",
                _ => "planned for poppy seeds (added mass)",
            };
            let mut chart: Chart<DB> = ChartBuilder::on(area)
                .margin(14)
                .caption(caption, font(LABEL_SIZE))
                .x_label_area_size(60)
                .y_label_area_size(80)
                .build_cartesian_2d(t_lo.min(0.0)..t_hi, z_lo..z_hi)
                .map_err(draw_error)?;
            draw_grid(
                &mut chart,
                ("time t [s]", "command z_d (actuator z_m − z_r) [mm]"),
                8,
                &|v| format!("{v:.2}"),
                &|v| format!("{v:.0}"),
            )?;
            for command in commands {
                let stroke = if command.converged {
                    Stroke::Solid
                } else {
                    Stroke::Dashed(6, 4)
                };
                draw_line(
                    &mut chart,
                    &command.points,
                    self.color_of(command.target_mm, &command.variant),
                    stroke,
                    2,
                )?;
            }
        }

        let targets = self.keys();
        // A legend row per plan line up to MAX_TARGET_ROWS; beyond, evenly spaced ones (first
        // and last included) and a note that the colour is graded in between.
        let shown: Vec<&(f64, String, bool)> = if targets.len() <= MAX_TARGET_ROWS {
            targets.iter().collect()
        } else {
            (0..MAX_TARGET_ROWS)
                .map(|k| &targets[k * (targets.len() - 1) / (MAX_TARGET_ROWS - 1)])
                .collect()
        };
        let mut entries: Vec<LegendEntry> = shown
            .iter()
            .map(|(t, variant, _)| {
                let label = if variant.is_empty() {
                    format!("{} mm", trim_number(*t))
                } else {
                    format!("{} mm, {variant}", trim_number(*t))
                };
                LegendEntry::line(label, self.color_of(*t, variant), Stroke::Solid, 4)
            })
            .collect();
        if shown.len() < targets.len() {
            entries.push(LegendEntry::note(format!(
                "({} targets, colour graded)",
                targets.len()
            )));
        }
        if self
            .panels
            .iter()
            .flat_map(|(_, c)| c)
            .any(|c| !c.converged)
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
            Some("apex target"),
            &entries,
        )
    }
}
