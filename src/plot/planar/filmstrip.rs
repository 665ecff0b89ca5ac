//! The `filmstrip` figure: stick figures along the plan at equal scale over the ground.

use plotters::coord::{ReverseCoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::RGBColor;

use super::stick::{stick_figure, touching, Pose};
use super::PlanarRun;
use crate::plot::style::{
    draw_error, draw_legend_row, draw_line, font, range_of, trim_number, Chart, Figure,
    LegendEntry, Marker, Stroke, DARK, LABEL_SIZE, TICK_SIZE, TITLE_SIZE, VERMILION,
};
use crate::plot::PlotError;

const FILM_WIDTH: u32 = 1400;
const POSES: usize = 10;

/// The `filmstrip` figure.
pub struct Filmstrip<'a> {
    run: &'a PlanarRun,
    poses: Vec<Pose>,
    /// The centre of mass's path, or (when the poses are spread out) its place in each pose.
    com: Vec<(f64, f64)>,
    /// How far each pose is shifted right of the one before it to stand apart \[m\] (0: the
    /// poses stand where they are).
    spread: f64,
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
        let mut poses: Vec<Pose> = rows
            .iter()
            .map(|&i| {
                let mut pose = stick_figure(&run.robot, &plan.configuration(i), &touching(run, i));
                pose.t = plan.t[i];
                pose
            })
            .collect();
        // Poses that would stand on one another (a jump in place, a short hop) stand side by
        // side in time instead: each shifted right by the same step, said on the x axis.
        let extent = |pose: &Pose, axis: usize| {
            let values = pose
                .segments
                .iter()
                .flatten()
                .map(|p| if axis == 0 { p.0 } else { p.1 });
            let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            if hi > lo {
                hi - lo
            } else {
                0.0
            }
        };
        let width = poses
            .iter()
            .map(|p| extent(p, 0).max(0.3 * extent(p, 1)))
            .fold(0.0, f64::max);
        let travel = match (com.first(), com.last()) {
            (Some(a), Some(b)) if poses.len() > 1 => (b.0 - a.0).abs() / (poses.len() - 1) as f64,
            _ => f64::INFINITY,
        };
        let spread = if travel < 1.2 * width {
            1.2 * width - travel
        } else {
            0.0
        };
        let com = if spread > 0.0 {
            for (k, pose) in poses.iter_mut().enumerate() {
                pose.shift(k as f64 * spread);
            }
            rows.iter()
                .enumerate()
                .map(|(k, &i)| (com[i].0 + k as f64 * spread, com[i].1))
                .collect()
        } else {
            com
        };
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
            spread,
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

/// An equal-scale x-z chart over at least `x_range` × `z_range` filling `area`, with its
/// mesh and the ground drawn: the surface z = x tan(slope) through the origin, soil below.
pub(in crate::plot) fn ground_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    x_range: (f64, f64),
    z_range: (f64, f64),
    slope: f64,
    x_desc: &str,
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
        .x_desc(x_desc)
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
        let x_desc = if self.spread > 0.0 {
            format!(
                "x [m], each pose drawn {} m right of the one before so that they stand apart",
                trim_number(self.spread)
            )
        } else {
            "x [m]".to_string()
        };
        let mut chart = ground_chart(&rest, self.x_range, self.z_range, run.slope, &x_desc)?;
        if self.spread > 0.0 {
            chart
                .draw_series(
                    self.com
                        .iter()
                        .map(|&c| Circle::new(c, 4, VERMILION.filled())),
                )
                .map_err(draw_error)?;
        } else {
            draw_line(&mut chart, &self.com, VERMILION, Stroke::Solid, 1)?;
        }

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
            if self.spread > 0.0 {
                LegendEntry::marker("centre of mass", VERMILION, Marker::Circle, true)
            } else {
                LegendEntry::line("centre-of-mass path", VERMILION, Stroke::Solid, 2)
            },
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
