//! `deposit`: a DEM scene's grains seen from the side (x–z, every grain, equal scales),
//! coloured by each grain's height at t = 0, so that a column collapse shows where each
//! layer of the column went. Written by `loam dem run` into its output folder. With a
//! column collapse's measurements, the figure marks the gate, the deposit's front and the
//! front Lube et al. (2005)'s law predicts for the column's aspect ratio.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    draw_error, draw_grid, draw_heading, draw_line, save, sequential, trim_number, Chart, Figure,
    Formats, LegendEntry, Stroke, DARK, GREY, VERMILION,
};
use super::PlotError;
use crate::sim::dem::sdf::Vec3;

/// A side view of a scene's grains.
pub struct Deposit<'a> {
    pub title: String,
    /// Grain centres and radii at the time drawn [m].
    pub positions: &'a [Vec3],
    pub radii: &'a [f64],
    /// Each grain's height at t = 0 [m] (the colour); a fixed grain is drawn grey.
    pub initial_heights: &'a [f64],
    pub fixed: &'a [bool],
    /// [x_min, x_max] of the view [m] (the container's length).
    pub x_range: [f64; 2],
    /// x of the gate, of the deposit's front, and of the law's front [m], when a column.
    pub gate: Option<f64>,
    pub front: Option<f64>,
    pub law_front: Option<f64>,
}

/// Lube, Huppert, Sparks & Freundt (2005)'s runout law for quasi-2-D columns: ΔL/L0 = 1.2 a
/// for a < 2.3, 1.9 a^(2/3) above.
pub fn lube_runout(aspect_ratio: f64) -> f64 {
    if aspect_ratio < 2.3 {
        1.2 * aspect_ratio
    } else {
        1.9 * aspect_ratio.powf(2.0 / 3.0)
    }
}

const WIDTH: u32 = 1400;

impl Deposit<'_> {
    fn z_top(&self) -> f64 {
        self.positions
            .iter()
            .zip(self.radii)
            .map(|(x, r)| x[2] + r)
            .fold(0.0, f64::max)
    }

    /// Draws the figure into `<stem>.png`; returns the file written.
    pub fn save_png(&self, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
        save(
            self,
            stem,
            Formats {
                png: true,
                svg: false,
            },
        )
    }
}

/// Pixels around the plot: margins (12 each side), the y labels (60) across; the title and
/// legend bands (44 + 34), margins and the x labels (50) down.
const ACROSS: u32 = 24 + 60;
const DOWN: u32 = 44 + 34 + 24 + 50;

impl Deposit<'_> {
    /// The plot's height in pixels and the top of its z axis [m]: x and z at one scale
    /// (grains are round and slopes true), at least 120 px tall.
    fn vertical(&self) -> (u32, f64) {
        let span = (self.x_range[1] - self.x_range[0]).max(1e-9);
        let plot_w = (WIDTH - ACROSS) as f64;
        let plot_h = (self.z_top() * 1.15 / span * plot_w)
            .clamp(120.0, 900.0)
            .round();
        (plot_h as u32, plot_h / plot_w * span)
    }
}

impl Figure for Deposit<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH, self.vertical().0 + DOWN)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let h0 = self
            .initial_heights
            .iter()
            .zip(self.fixed)
            .filter(|(_, f)| !**f)
            .map(|(h, _)| *h)
            .fold(0.0, f64::max)
            .max(1e-9);
        let mut legend = vec![
            LegendEntry::swatch("colour: a grain's height at t = 0, z = 0", sequential(0.0)),
            LegendEntry::swatch(
                format!("z = {:.0} mm (the highest centre)", h0 * 1e3),
                sequential(1.0),
            ),
        ];
        if self.gate.is_some() {
            legend.push(LegendEntry::line("gate", GREY, Stroke::Dashed(6, 4), 2));
        }
        if self.front.is_some() {
            legend.push(LegendEntry::line("deposit front", DARK, Stroke::Solid, 2));
        }
        if self.law_front.is_some() {
            legend.push(LegendEntry::line(
                "Lube et al. 2005",
                VERMILION,
                Stroke::Dashed(10, 5),
                2,
            ));
        }
        let rest = draw_heading(root, &self.title, &legend)?;
        let z_max = self.vertical().1;
        let mut chart: Chart<DB> = ChartBuilder::on(&rest)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(self.x_range[0]..self.x_range[1], 0.0..z_max.max(1e-6))
            .map_err(draw_error)?;
        draw_grid(
            &mut chart,
            ("x [m]", "z [m]"),
            8,
            &|v| trim_number(*v),
            &|v| trim_number(*v),
        )?;
        // Pixels per metre along x: the radius of each circle in pixels.
        let area = chart.plotting_area();
        let pixels = area.get_pixel_range().0;
        let scale = (pixels.end - pixels.start) as f64 / (self.x_range[1] - self.x_range[0]);
        // Back to front in y would hide nothing in a quasi-2-D scene; draw the fixed floor
        // first, then the grains from the lowest initial height up.
        let mut order: Vec<usize> = (0..self.positions.len()).collect();
        order.sort_by(|&a, &b| {
            (!self.fixed[a])
                .cmp(&!self.fixed[b])
                .then(self.initial_heights[a].total_cmp(&self.initial_heights[b]))
        });
        for i in order {
            let x = self.positions[i];
            let colour = if self.fixed[i] {
                GREY
            } else {
                sequential(self.initial_heights[i] / h0)
            };
            let r = ((self.radii[i] * scale).round() as i32).max(1);
            chart
                .draw_series(std::iter::once(Circle::new(
                    (x[0], x[2]),
                    r,
                    colour.filled(),
                )))
                .map_err(draw_error)?;
        }
        let vertical = |chart: &mut Chart<DB>, x: f64, colour, stroke| {
            draw_line(chart, &[(x, 0.0), (x, z_max)], colour, stroke, 2)
        };
        if let Some(x) = self.gate {
            vertical(&mut chart, x, GREY, Stroke::Dashed(6, 4))?;
        }
        if let Some(x) = self.front {
            vertical(&mut chart, x, DARK, Stroke::Solid)?;
        }
        if let Some(x) = self.law_front {
            vertical(&mut chart, x, VERMILION, Stroke::Dashed(10, 5))?;
        }
        Ok(())
    }
}
