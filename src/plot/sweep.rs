//! `sweep_apex`: commanded against achieved apex per (plan ground, replay ground) group, the
//! paper's Fig. 5, from a sweep's `replays.csv` (every plan replayed on every ground of the
//! sweep). Its Fig. 6, the planned commands, is `sweep_commands.rs`.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::data::Sweep;
use super::style::{
    draw_error, draw_grid, draw_legend, draw_line, draw_markers, font, range_of, sequential, Chart,
    Figure, LegendEntry, Marker, Stroke, BLUE, GREEN, GREY, PURPLE, TITLE_SIZE, VERMILION,
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
