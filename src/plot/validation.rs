//! The verdict figure of `loam validate`: per outcome of the task one panel, one line per
//! simulator and ground, each realisation a hollow circle, the mean a filled diamond with a
//! bar of ± one standard deviation, and the plan's value a dashed vertical line.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    draw_error, draw_grid, draw_legend, draw_line, draw_markers, font, range_of, trim_number,
    Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK, GREY, LABEL_SIZE, TITLE_SIZE,
    VERMILION,
};
use super::PlotError;

/// One simulator on one ground.
pub struct ValidationRow {
    pub label: String,
    /// Every realisation's outcome (in the panel's unit).
    pub values: Vec<f64>,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    /// Shown instead of markers where the simulator gave no number.
    pub note: Option<String>,
}

/// One outcome of the task.
pub struct ValidationPanel {
    /// The outcome's name in the table (`apex_rise_m`).
    pub key: String,
    /// The axis label, with its unit.
    pub label: String,
    pub planned: f64,
    pub rows: Vec<ValidationRow>,
}

pub struct ValidationFigure {
    pub title: String,
    pub panels: Vec<ValidationPanel>,
}

impl ValidationFigure {
    /// The figure of a `validation.json` (`loam validate`): one panel per outcome, lengths in
    /// millimetres.
    pub fn load(path: &std::path::Path) -> Result<ValidationFigure, PlotError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlotError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let record: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| PlotError::Json {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        let mm = |v: &serde_json::Value| v.as_f64().map(|v| 1e3 * v);
        let mut panels: Vec<ValidationPanel> = Vec::new();
        for r in record["rows"].as_array().into_iter().flatten() {
            let key = r["outcome"].as_str().unwrap_or("?").to_string();
            let i = match panels.iter().position(|p| p.key == key) {
                Some(i) => i,
                None => {
                    panels.push(ValidationPanel {
                        label: outcome_label(&key).into(),
                        planned: mm(&r["planned"]).unwrap_or(f64::NAN),
                        key,
                        rows: Vec::new(),
                    });
                    panels.len() - 1
                }
            };
            panels[i].rows.push(ValidationRow {
                label: simulator_label(r),
                values: r["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(mm)
                    .collect(),
                mean: mm(&r["mean"]),
                sd: mm(&r["sd"]),
                note: r["note"].as_str().map(|_| "no replay".to_string()),
            });
        }
        // The problem and its ground: the record's, else the run's solution.json beside
        // the validation folder (a record written before loam wrote them).
        let solution: Option<serde_json::Value> = path
            .parent()
            .and_then(|v| v.parent())
            .and_then(|run| std::fs::read_to_string(run.join("solution.json")).ok())
            .and_then(|text| serde_json::from_str(&text).ok());
        let from_run = |key: &str| -> Option<String> {
            let problem = &solution.as_ref()?["problem"];
            match key {
                "problem" => problem["name"].as_str().map(str::to_string),
                _ => {
                    let model = problem["terrain"]["model"].as_str()?;
                    Some(match problem["terrain"]["medium"].as_str() {
                        Some(medium) if model == "added_mass" => format!("{model} ({medium})"),
                        _ => model.to_string(),
                    })
                }
            }
        };
        let field = |key: &str| {
            record[key]
                .as_str()
                .map(str::to_string)
                .or_else(|| from_run(key))
                .unwrap_or_else(|| "?".into())
        };
        Ok(ValidationFigure {
            title: format!(
                "Verdict on {} (plan {}, planned on {})",
                field("problem"),
                record["plan_id"].as_str().unwrap_or("?"),
                field("plan_terrain")
            ),
            panels,
        })
    }

    /// Writes `<stem>.png` and `<stem>.svg`; returns the files.
    pub fn save(&self, stem: &std::path::Path) -> Result<Vec<std::path::PathBuf>, PlotError> {
        super::style::save(self, stem, Default::default())
    }
}

const WIDTH: u32 = 1200;
const LABELS: u32 = 380;
const LEGEND: u32 = 190;
const ROW: u32 = 56;
const PANEL_EXTRA: u32 = 110;
const TITLE: u32 = 50;

fn panel_height(panel: &ValidationPanel) -> u32 {
    PANEL_EXTRA + ROW * panel.rows.len().max(1) as u32
}

impl Figure for ValidationFigure {
    fn size(&self) -> (u32, u32) {
        let panels: u32 = self.panels.iter().map(panel_height).sum();
        (WIDTH, TITLE + panels.max(PANEL_EXTRA))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let (title, mut rest) = root.split_vertically(TITLE);
        title
            .draw(&Text::new(self.title.as_str(), (16, 14), font(TITLE_SIZE)))
            .map_err(draw_error)?;
        for panel in &self.panels {
            let (area, below) = rest.split_vertically(panel_height(panel));
            rest = below;
            draw_panel(root, &area, panel)?;
        }
        Ok(())
    }
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    panel: &ValidationPanel,
) -> Result<(), PlotError> {
    let (chart_area, legend) = area.split_horizontally(WIDTH - LEGEND);
    let n = panel.rows.len().max(1);
    let values = panel
        .rows
        .iter()
        .flat_map(|r| {
            let spread = r.sd.unwrap_or(0.0);
            r.values
                .iter()
                .copied()
                .chain(r.mean.map(|m| m - spread))
                .chain(r.mean.map(|m| m + spread))
        })
        .chain([panel.planned]);
    let (x0, x1) = range_of(values, 0.08);
    let mut chart: Chart<DB> = ChartBuilder::on(&chart_area)
        .margin(14)
        .x_label_area_size(56)
        .y_label_area_size(LABELS)
        .build_cartesian_2d(x0..x1, -0.6..(n as f64 - 0.4))
        .map_err(draw_error)?;
    draw_grid(
        &mut chart,
        (&panel.label, ""),
        8,
        &|v| trim_number(*v),
        &|_| String::new(),
    )?;
    // Row i from the top.
    let y = |i: usize| (n - 1 - i) as f64;
    draw_line(
        &mut chart,
        &[(panel.planned, -0.6), (panel.planned, n as f64 - 0.4)],
        DARK,
        Stroke::Dashed(8, 5),
        2,
    )?;
    for (i, row) in panel.rows.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(x0, y(i)));
        root.draw(&Text::new(
            row.label.as_str(),
            (px - LABELS as i32 + 20, py - 9),
            font(LABEL_SIZE - 2.0),
        ))
        .map_err(draw_error)?;
        if let Some(note) = &row.note {
            let (nx, ny) = chart.backend_coord(&(panel.planned, y(i)));
            root.draw(&Text::new(
                note.as_str(),
                (nx + 10, ny - 9),
                font(LABEL_SIZE - 3.0).color(&GREY),
            ))
            .map_err(draw_error)?;
            continue;
        }
        if row.values.len() > 1 {
            let points: Vec<(f64, f64)> = row.values.iter().map(|v| (*v, y(i))).collect();
            draw_markers(&mut chart, &points, (Marker::Circle, false), 4, BLUE)?;
        }
        if let (Some(m), Some(s)) = (row.mean, row.sd) {
            draw_line(
                &mut chart,
                &[(m - s, y(i)), (m + s, y(i))],
                VERMILION,
                Stroke::Solid,
                3,
            )?;
        }
        if let Some(m) = row.mean {
            draw_markers(
                &mut chart,
                &[(m, y(i))],
                (Marker::Diamond, true),
                6,
                VERMILION,
            )?;
        }
    }
    draw_legend(
        &legend.margin(30, 0, 0, 0),
        None,
        &[
            LegendEntry::line("planned", DARK, Stroke::Dashed(8, 5), 2),
            LegendEntry::marker("mean", VERMILION, Marker::Diamond, true),
            LegendEntry::line("± 1 sd", VERMILION, Stroke::Solid, 3),
            LegendEntry::marker("realisation", BLUE, Marker::Circle, false),
        ],
    )
}

fn outcome_label(name: &str) -> &'static str {
    match name {
        "apex_rise_m" => "apex rise [mm]",
        "distance_m" => "distance travelled [mm]",
        _ => "centre of mass peak rise [mm]",
    }
}

/// `reduced-order, rigid`, `dem-cpu, poppy_bed.bed ×6`.
fn simulator_label(r: &serde_json::Value) -> String {
    let sim = match r["simulator"].as_str().unwrap_or("?") {
        "reduced" => "reduced-order",
        "mdp" => "MDP",
        other => other,
    };
    let terrain = r["terrain"].as_str().unwrap_or("?");
    let ground = terrain.rsplit('/').next().unwrap_or(terrain);
    match r["realisations"].as_u64().unwrap_or(0) {
        n if n > 1 => format!("{sim}, {ground} ×{n}"),
        _ => format!("{sim}, {ground}"),
    }
}
