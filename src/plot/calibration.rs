//! The figure of `loam material calibrate`: each target value's residual, in units of its
//! tolerance, against the varied parameter (or the candidate's number when several vary);
//! the band |residual| ≤ 1 is where a target is met, and a dashed line marks the best
//! candidate. Residuals span orders of magnitude (a force 30 tolerances off beside a packing
//! within one), so the y axis is symmetric-logarithmic: y = sign(r) log10(1 + |r|), its ticks
//! labelled with r.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    draw_error, draw_grid, draw_legend, draw_line, draw_markers, font, range_of, trim_number,
    Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK, GREEN, ORANGE, PURPLE, TITLE_SIZE,
    VERMILION,
};
use super::PlotError;

/// One target value across the candidates: (x, (measured − target) / tolerance).
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

pub struct CalibrationFigure {
    pub title: String,
    pub x_label: String,
    /// The best candidate's x.
    pub best_x: f64,
    pub series: Vec<Series>,
}

impl CalibrationFigure {
    /// Writes `<stem>.png` and `<stem>.svg`; returns the files.
    pub fn save(&self, stem: &std::path::Path) -> Result<Vec<std::path::PathBuf>, PlotError> {
        super::style::save(self, stem, Default::default())
    }
}

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 620;
const LEGEND: u32 = 300;
const TITLE: u32 = 50;
const COLORS: [RGBColor; 6] = [BLUE, VERMILION, GREEN, ORANGE, PURPLE, DARK];
const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Diamond,
];

impl Figure for CalibrationFigure {
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (title, body) = root.split_vertically(TITLE);
        title
            .draw(&Text::new(self.title.as_str(), (16, 14), font(TITLE_SIZE)))
            .map_err(draw_error)?;
        let (area, legend) = body.split_horizontally(WIDTH - LEGEND);
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let (mut x0, mut x1) = range_of(xs.chain([self.best_x]), 0.06);
        if x1 <= x0 {
            (x0, x1) = (self.best_x - 1.0, self.best_x + 1.0);
        }
        let ys = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| symlog(p.1)));
        let (y0, y1) = range_of(ys.chain([symlog(-2.0), symlog(2.0)]), 0.06);
        let mut chart: Chart<DB> = ChartBuilder::on(&area)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(draw_error)?;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x0, symlog(-1.0)), (x1, symlog(1.0))],
                RGBColor(232, 242, 232).filled(),
            )))
            .map_err(draw_error)?;
        draw_grid(
            &mut chart,
            (&self.x_label, "(measured − target) / tolerance (symlog)"),
            8,
            &|v| trim_number(*v),
            &|v| {
                let r = v.signum() * (10f64.powf(v.abs()) - 1.0);
                let digits = if r.abs() < 10.0 { 1 } else { 0 };
                format!("{r:.digits$}")
            },
        )?;
        draw_line(&mut chart, &[(x0, 0.0), (x1, 0.0)], DARK, Stroke::Solid, 1)?;
        draw_line(
            &mut chart,
            &[(self.best_x, y0), (self.best_x, y1)],
            DARK,
            Stroke::Dashed(8, 5),
            2,
        )?;
        let mut entries = vec![
            LegendEntry::swatch("within tolerance", RGBColor(232, 242, 232)),
            LegendEntry::line("best candidate", DARK, Stroke::Dashed(8, 5), 2),
        ];
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let marker = MARKERS[i % MARKERS.len()];
            let points: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, symlog(p.1))).collect();
            draw_line(&mut chart, &points, color, Stroke::Solid, 2)?;
            draw_markers(&mut chart, &points, (marker, true), 5, color)?;
            entries.push(
                LegendEntry::line(s.label.clone(), color, Stroke::Solid, 2)
                    .with_marker(marker, true),
            );
        }
        draw_legend(&legend.margin(30, 0, 0, 0), Some("target"), &entries)
    }
}

/// sign(r) log10(1 + |r|): linear near 0, logarithmic far from it.
fn symlog(r: f64) -> f64 {
    r.signum() * (1.0 + r.abs()).log10()
}
