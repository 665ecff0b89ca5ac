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
    Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK, GREEN, GREY, ORANGE, PURPLE,
    TITLE_SIZE, VERMILION,
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
    /// The figure of a `calibration.json` (`loam material calibrate`): x is the varied
    /// parameter when one varies, else the candidate's number (1, 2, ...).
    pub fn load(path: &std::path::Path) -> Result<CalibrationFigure, PlotError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlotError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let record: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| PlotError::Json {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(Self::of(&record))
    }

    /// The figure of a calibration record (the JSON `calibration.json` holds).
    pub fn of(record: &serde_json::Value) -> CalibrationFigure {
        let parameters = record["parameters"].as_array().cloned().unwrap_or_default();
        let candidates = record["candidates"].as_array().cloned().unwrap_or_default();
        let one = parameters.len() == 1;
        let x_of = |k: usize| {
            if one {
                candidates[k]["values"][0][1].as_f64().unwrap_or(f64::NAN)
            } else {
                (k + 1) as f64
            }
        };
        let label_of = |values: &serde_json::Value| {
            values
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| {
                    let path = v[0].as_str().unwrap_or("?");
                    let name = path.rsplit('.').next().unwrap_or(path);
                    format!("{name}={}", v[1])
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut series: Vec<Series> = Vec::new();
        for (k, c) in candidates.iter().enumerate() {
            for m in c["measurements"].as_array().into_iter().flatten() {
                let label = item_label(m);
                let i = match series.iter().position(|s| s.label == label) {
                    Some(i) => i,
                    None => {
                        series.push(Series {
                            label,
                            points: Vec::new(),
                        });
                        series.len() - 1
                    }
                };
                if let (Some(v), Some(t), Some(tol)) = (
                    m["value"].as_f64(),
                    m["target"].as_f64(),
                    m["tolerance"].as_f64(),
                ) {
                    series[i].points.push((x_of(k), (v - t) / tol));
                }
            }
        }
        let best = record["best"].as_u64().unwrap_or(0) as usize;
        // The record's name, else its material file's stem.
        let name = record["name"]
            .as_str()
            .or_else(|| {
                let file = record["material"].as_str()?;
                std::path::Path::new(file).file_stem()?.to_str()
            })
            .unwrap_or("the material");
        CalibrationFigure {
            title: format!(
                "Calibration of {name}: best {} (worst {:.2} tolerances)",
                candidates
                    .get(best)
                    .map_or(String::new(), |c| label_of(&c["values"])),
                candidates
                    .get(best)
                    .and_then(|c| c["score"].as_f64())
                    .unwrap_or(f64::NAN)
            ),
            x_label: if one {
                parameters[0].as_str().unwrap_or("?").to_string()
            } else {
                "candidate (calibration.csv)".into()
            },
            best_x: if candidates.is_empty() {
                0.0
            } else {
                x_of(best)
            },
            series,
        }
    }

    /// Writes `<stem>.png` and `<stem>.svg`; returns the files.
    pub fn save(&self, stem: &std::path::Path) -> Result<Vec<std::path::PathBuf>, PlotError> {
        super::style::save(self, stem, Default::default())
    }
}

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 620;
const LEGEND: u32 = 300;
const TITLE: u32 = 50;
const COLORS: [RGBColor; 8] = [
    BLUE,
    VERMILION,
    GREEN,
    ORANGE,
    PURPLE,
    DARK,
    RGBColor(86, 180, 233),
    GREY,
];
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

/// `packing_fraction`, `intrusion_force at 10 mm`, `collapse_runout at a = 1`.
pub fn item_label(m: &serde_json::Value) -> String {
    let q = m["quantity"].as_str().unwrap_or("?");
    match (q, m["at"].as_f64()) {
        ("intrusion_force", Some(d)) => format!("{q} at {:.0} mm", 1e3 * d),
        ("collapse_runout", Some(a)) => format!("{q} at a = {a}"),
        _ => q.to_string(),
    }
}
