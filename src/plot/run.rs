//! The run figure: one `loam solve` plan (markers at its nodes) with every replay of it
//! overlaid (lines), against a shared time axis, phases of the plan shaded.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::RGBColor;

use super::data::{Motion, Solution};
use super::style::{
    dash, draw_legend, draw_legend_row, draw_line, draw_markers, draw_time_mesh, font, range_of,
    Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK, FLIGHT_FILL, GREEN, GREY, LABEL_SIZE,
    ORANGE, PURPLE, STANCE_FILL, TITLE_SIZE, VERMILION,
};
use super::PlotError;

const WIDTH: u32 = 1400;
const LEGEND_WIDTH: u32 = 270;
const TITLE_HEIGHT: u32 = 44;
/// Height of one row of the legend of plan and replays, and how many entries a row holds.
const SOURCES_HEIGHT: u32 = 30;
const SOURCES_PER_ROW: usize = 2;
const SOURCES_COLUMN: i32 = 560;
const STRIP_HEIGHT: u32 = 30;
/// Heights of the four panels; the last carries the time axis' label.
const PANELS: [u32; 4] = [330, 270, 210, 320];
const Y_LABEL_AREA: u32 = 86;
const X_TICKS_AREA: u32 = 30;
const X_LABEL_AREA: u32 = 62;

/// A replay and how it is labelled and drawn.
pub struct Replay {
    pub label: String,
    pub stroke: Stroke,
    pub motion: Motion,
}

pub struct RunFigure {
    pub solution: Solution,
    pub plan: Motion,
    pub replays: Vec<Replay>,
}

impl RunFigure {
    pub fn load(dir: &Path, replays: &[PathBuf]) -> Result<RunFigure, PlotError> {
        let solution = Solution::read(&dir.join("solution.json"))?;
        let plan = Motion::read(&dir.join("trajectory.csv"))?;
        let mut others = 0;
        let replays = replays
            .iter()
            .map(|path| {
                let name = path
                    .file_stem()
                    .and_then(|n| n.to_str())
                    .unwrap_or("replay");
                let (label, stroke) = match name.strip_prefix("replay-on-") {
                    Some(terrain) => {
                        others += 1;
                        (format!("replay on {terrain}"), dash(others - 1))
                    }
                    None => (
                        format!("replay on {} (its own terrain)", solution.terrain_short),
                        Stroke::Solid,
                    ),
                };
                Ok(Replay {
                    label,
                    stroke,
                    motion: Motion::read(path)?,
                })
                .map(|mut replay: Replay| {
                    if let Some(t) = replay.motion.takeoff {
                        replay.label += &format!(", takeoff {:.1} ms", 1e3 * t);
                    }
                    replay
                })
            })
            .collect::<Result<Vec<_>, PlotError>>()?;
        Ok(RunFigure {
            solution,
            plan,
            replays,
        })
    }

    /// Rows of the plan-and-replays legend.
    fn source_rows(&self) -> u32 {
        (1 + self.replays.len().max(1)).div_ceil(SOURCES_PER_ROW) as u32
    }

    /// Every motion: the plan first.
    fn motions(&self) -> impl Iterator<Item = &Motion> {
        std::iter::once(&self.plan).chain(self.replays.iter().map(|r| &r.motion))
    }

    fn time_range(&self) -> (f64, f64) {
        let end = self
            .motions()
            .filter_map(|m| m.t.last().copied())
            .fold(0.0_f64, f64::max);
        let start = self
            .motions()
            .filter_map(|m| m.t.first().copied())
            .fold(f64::INFINITY, f64::min)
            .min(0.0);
        (start, end.max(start + 1e-3))
    }
}

/// One curve of a panel: a name, a colour and how to read it (in the panel's units) from a
/// motion.
struct Curve {
    label: &'static str,
    color: RGBColor,
    value: fn(&Motion, usize) -> f64,
}

struct Panel {
    y_label: &'static str,
    curves: Vec<Curve>,
}

fn panels() -> [Panel; 4] {
    [
        Panel {
            y_label: "height [mm]",
            curves: vec![
                Curve {
                    label: "z_m motor",
                    color: BLUE,
                    value: |m, i| 1e3 * m.z_m[i],
                },
                Curve {
                    label: "z_r rod",
                    color: VERMILION,
                    value: |m, i| 1e3 * m.z_r[i],
                },
                Curve {
                    label: "z_f foot",
                    color: GREEN,
                    value: |m, i| 1e3 * m.z_f[i],
                },
            ],
        },
        Panel {
            y_label: "actuator z_m − z_r [mm]",
            curves: vec![
                Curve {
                    label: "z_d command",
                    color: BLUE,
                    value: |m, i| 1e3 * m.z_d[i],
                },
                Curve {
                    label: "z_m − z_r actual",
                    color: ORANGE,
                    value: |m, i| 1e3 * (m.z_m[i] - m.z_r[i]),
                },
            ],
        },
        Panel {
            y_label: "command velocity [m/s]",
            curves: vec![Curve {
                label: "u = dz_d/dt",
                color: PURPLE,
                value: |m, i| m.u[i],
            }],
        },
        Panel {
            y_label: "force [N]",
            curves: vec![
                Curve {
                    label: "F_m motor",
                    color: BLUE,
                    value: |m, i| m.f_m[i],
                },
                Curve {
                    label: "F_s spring",
                    color: VERMILION,
                    value: |m, i| m.f_s[i],
                },
                Curve {
                    label: "F_terrain on foot",
                    color: GREEN,
                    value: |m, i| m.f_terrain[i],
                },
            ],
        },
    ]
}

fn points(motion: &Motion, value: fn(&Motion, usize) -> f64) -> Vec<(f64, f64)> {
    (0..motion.t.len())
        .map(|i| (motion.t[i], value(motion, i)))
        .collect()
}

impl RunFigure {
    /// The plan's phases as `(start, end, domain)`.
    fn phase_spans(&self) -> Vec<(f64, f64, &str)> {
        let mut t = 0.0;
        self.solution
            .phases
            .iter()
            .map(|(domain, duration)| {
                let span = (t, t + duration, domain.as_str());
                t += duration;
                span
            })
            .collect()
    }

    fn apex_target_mm(&self) -> Option<f64> {
        self.plan
            .z_r
            .first()
            .map(|z0| 1e3 * (z0 + self.solution.apex_target))
    }

    fn draw_phase_strip<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        (t0, t1): (f64, f64),
    ) -> Result<(), PlotError> {
        let mut chart: Chart<DB> = ChartBuilder::on(area)
            .margin_left(10)
            .margin_right(24)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(t0..t1, 0.0..1.0)
            .map_err(super::style::draw_error)?;
        for (start, end, domain) in self.phase_spans() {
            let fill = phase_fill(domain);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(start, 0.0), (end.min(t1), 1.0)],
                    fill.filled(),
                )))
                .map_err(super::style::draw_error)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{domain} (plan, {:.0} ms)", 1e3 * (end - start)),
                    ((start + end.min(t1)) / 2.0, 0.5),
                    font(LABEL_SIZE - 2.0).pos(Pos::new(HPos::Center, VPos::Center)),
                )))
                .map_err(super::style::draw_error)?;
        }
        // Each replay finds its own switch: a tick where it took off, drawn as its lines are.
        for replay in &self.replays {
            if let Some(t) = replay.motion.takeoff.filter(|t| (t0..=t1).contains(t)) {
                draw_line(&mut chart, &[(t, 0.0), (t, 1.0)], DARK, replay.stroke, 3)?;
            }
        }
        Ok(())
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
        (t0, t1): (f64, f64),
        last: bool,
        with_target: bool,
    ) -> Result<(), PlotError> {
        let e = super::style::draw_error;
        let (plot_area, legend_area) = area.split_horizontally(WIDTH - LEGEND_WIDTH);
        let target = if with_target {
            self.apex_target_mm()
        } else {
            None
        };
        let values = panel.curves.iter().flat_map(|c| {
            self.motions()
                .flat_map(move |m| (0..m.t.len()).map(move |i| (c.value)(m, i)))
        });
        let (y0, y1) = range_of(values.chain(target), 0.06);
        let mut chart: Chart<DB> = ChartBuilder::on(&plot_area)
            .margin_left(10)
            .margin_right(24)
            .margin_top(8)
            .x_label_area_size(if last { X_LABEL_AREA } else { X_TICKS_AREA })
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(t0..t1, y0..y1)
            .map_err(e)?;
        for (start, end, domain) in self.phase_spans() {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(start.max(t0), y0), (end.min(t1), y1)],
                    phase_fill(domain).filled(),
                )))
                .map_err(e)?;
        }
        draw_time_mesh(&mut chart, panel.y_label, LABEL_SIZE, last)?;

        if let Some(target) = target {
            draw_line(
                &mut chart,
                &[(t0, target), (t1, target)],
                GREY,
                Stroke::Dashed(8, 5),
                2,
            )?;
        }
        for curve in &panel.curves {
            let plan = points(&self.plan, curve.value);
            draw_line(&mut chart, &plan, curve.color, Stroke::Solid, 1)?;
            draw_markers(&mut chart, &plan, (Marker::Circle, true), 3, curve.color)?;
            for replay in &self.replays {
                draw_line(
                    &mut chart,
                    &points(&replay.motion, curve.value),
                    curve.color,
                    replay.stroke,
                    2,
                )?;
            }
        }

        let mut entries: Vec<LegendEntry> = panel
            .curves
            .iter()
            .map(|c| LegendEntry::line(c.label, c.color, Stroke::Solid, 3))
            .collect();
        if let Some(target) = target {
            entries.push(LegendEntry::line(
                format!("apex target, z_r = {target:.1} mm"),
                GREY,
                Stroke::Dashed(8, 5),
                2,
            ));
        }
        draw_legend(&legend_area.margin(8, 0, 0, 0), None, &entries)
    }
}

fn phase_fill(domain: &str) -> RGBColor {
    if domain == "flight" {
        FLIGHT_FILL
    } else {
        STANCE_FILL
    }
}

impl Figure for RunFigure {
    fn size(&self) -> (u32, u32) {
        (
            WIDTH,
            TITLE_HEIGHT
                + SOURCES_HEIGHT * self.source_rows()
                + 6
                + STRIP_HEIGHT
                + PANELS.iter().sum::<u32>()
                + 10,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let e = super::style::draw_error;
        let s = &self.solution;
        let title = format!(
            "{}: plan on {}, {}, apex rise {:.1} mm (target {:.1} mm)",
            s.name,
            s.terrain,
            if s.converged {
                "converged"
            } else {
                "NOT converged"
            },
            1e3 * s.apex_rise,
            1e3 * s.apex_target
        );
        let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
        title_area
            .draw(&Text::new(title, (16, 12), font(TITLE_SIZE)))
            .map_err(e)?;

        let (sources_area, rest) = rest.split_vertically(SOURCES_HEIGHT * self.source_rows() + 6);
        let mut sources =
            vec![
                LegendEntry::line("plan (collocation nodes)", GREY, Stroke::Solid, 1)
                    .with_marker(Marker::Circle, true),
            ];
        sources.extend(
            self.replays
                .iter()
                .map(|r| LegendEntry::line(r.label.clone(), DARK, r.stroke, 2)),
        );
        if self.replays.is_empty() {
            sources.push(LegendEntry::swatch(
                "(no replay in this folder)",
                RGBColor(255, 255, 255),
            ));
        }
        for (row, entries) in sources.chunks(SOURCES_PER_ROW).enumerate() {
            for (column, entry) in entries.iter().enumerate() {
                draw_legend_row(
                    &sources_area,
                    (
                        Y_LABEL_AREA as i32 + 10 + column as i32 * SOURCES_COLUMN,
                        4 + row as i32 * SOURCES_HEIGHT as i32,
                    ),
                    std::slice::from_ref(entry),
                )?;
            }
        }

        let times = self.time_range();
        let (strip, rest) = rest.split_vertically(STRIP_HEIGHT);
        let (strip, _) = strip.split_horizontally(WIDTH - LEGEND_WIDTH);
        self.draw_phase_strip(&strip, times)?;

        let mut rest = rest;
        let panels = panels();
        for (k, panel) in panels.iter().enumerate() {
            let (area, below) = rest.split_vertically(PANELS[k]);
            self.draw_panel(&area, panel, times, k + 1 == PANELS.len(), k == 0)?;
            rest = below;
        }
        Ok(())
    }
}
