//! The `planar_run` figure: the phase strip and the panels against time, with their legends.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::RGBColor;

use super::panels::Panel;
use super::{PlanarRun, RunKind};
use crate::plot::style::{
    draw_error, draw_legend, draw_legend_row, draw_line, draw_markers, draw_time_mesh, font,
    range_of, sequential, trim_number, Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK,
    FLIGHT_FILL, GREEN, GREY, LABEL_SIZE, LEGEND_ROW, ORANGE, PURPLE, STANCE_FILL, TITLE_SIZE,
    VERMILION,
};
use crate::plot::PlotError;

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

impl PlanarRun {
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
                    LegendEntry::line(&run.replay_label, GREY, Stroke::Dashed(9, 5), 2)
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
