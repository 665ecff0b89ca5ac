//! The DEM figure: the bed's force on the foot against time and against depth, beside the
//! added-mass model's force for the same motion, and the body heights.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::data::DemBodies;
use super::style::{
    draw_error, draw_grid, draw_legend, draw_line, font, range_of, trim_number, Chart, Figure,
    LegendEntry, Stroke, BLUE, GREEN, TITLE_SIZE, VERMILION,
};
use super::PlotError;

pub struct DemFigure {
    bodies: DemBodies,
    /// What `dem.json` beside the table says: the plan, the bed, the planned and reached
    /// apex (absent for a table without its record).
    record: Option<serde_json::Value>,
}

impl DemFigure {
    pub fn load(path: &Path) -> Result<DemFigure, PlotError> {
        let record = std::fs::read_to_string(path.with_file_name("dem.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        Ok(DemFigure {
            bodies: DemBodies::read(path)?,
            record,
        })
    }

    /// The title: the plan and the bed it was replayed on, and the apex against the plan's.
    fn title(&self) -> String {
        let Some(r) = &self.record else {
            return "DEM replay: bed force on the foot against the added-mass model".into();
        };
        let bed = r["bed"].as_str().unwrap_or("?");
        let bed = bed.rsplit('/').next().unwrap_or(bed);
        let apex = match (r["apex_rise_m"].as_f64(), r["planned_apex_rise_m"].as_f64()) {
            (Some(a), Some(p)) => {
                format!(": apex rise {:.1} mm, planned {:.1} mm", 1e3 * a, 1e3 * p)
            }
            _ => String::new(),
        };
        format!(
            "DEM replay of plan {} ({}) on {bed}, {} grains{apex}",
            r["plan_id"].as_str().unwrap_or("?"),
            r["plan_terrain"].as_str().unwrap_or("?"),
            r["grains"].as_u64().unwrap_or(0),
        )
    }

    /// The rod's planned apex height [mm]: its height when the plan's clock starts plus the
    /// planned rise.
    fn planned_apex_mm(&self) -> Option<f64> {
        let rise = self.record.as_ref()?["planned_apex_rise_m"].as_f64()?;
        let b = &self.bodies;
        let start = b.t.iter().position(|t| *t >= 0.0)?;
        Some(1e3 * (b.z_r[start] + rise))
    }
}

const TIME_CHART: u32 = 760;
const DEPTH_CHART: u32 = 520;
const LEGEND: u32 = 250;
const ROWS: (u32, u32) = (440, 400);

const BED: (RGBColor, Stroke) = (VERMILION, Stroke::Solid);
const MODEL: (RGBColor, Stroke) = (BLUE, Stroke::Dashed(9, 5));

fn mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    x: &str,
    y: &str,
    x_digits: usize,
) -> Result<(), PlotError> {
    draw_grid(chart, (x, y), 8, &|v| format!("{v:.x_digits$}"), &|v| {
        trim_number(*v)
    })
}

impl Figure for DemFigure {
    fn size(&self) -> (u32, u32) {
        (TIME_CHART + DEPTH_CHART + LEGEND, 50 + ROWS.0 + ROWS.1)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let b = &self.bodies;
        let (title, rest) = root.split_vertically(50);
        title
            .draw(&Text::new(self.title(), (16, 14), font(TITLE_SIZE)))
            .map_err(draw_error)?;
        let (top, bottom) = rest.split_vertically(ROWS.0);
        let (force_time, top) = top.split_horizontally(TIME_CHART);
        let (force_depth, force_legend) = top.split_horizontally(DEPTH_CHART);
        let (heights, heights_legend) = bottom.split_horizontally(TIME_CHART);

        let (t0, t1) = range_of(b.t.iter().copied(), 0.0);
        let forces = range_of(b.f_bed.iter().chain(&b.f_added_mass).copied(), 0.06);
        // Only the foot's time in the bed: above it the force is zero and the depth means
        // nothing.
        let depth: Vec<f64> = b.z_f.iter().map(|z| -1e3 * z).collect();
        let (_, d1) = range_of(depth.iter().copied(), 0.06);
        let d1 = d1.max(1.0);
        let d0 = 0.0;

        let mut chart: Chart<DB> = ChartBuilder::on(&force_time)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(t0..t1, forces.0..forces.1)
            .map_err(draw_error)?;
        mesh(&mut chart, "time t [s]", "force on the foot, up [N]", 2)?;
        let series =
            |f: &[f64]| -> Vec<(f64, f64)> { b.t.iter().copied().zip(f.iter().copied()).collect() };
        draw_line(&mut chart, &series(&b.f_bed), BED.0, BED.1, 2)?;
        draw_line(&mut chart, &series(&b.f_added_mass), MODEL.0, MODEL.1, 2)?;

        let mut chart: Chart<DB> = ChartBuilder::on(&force_depth)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(d0..d1, forces.0..forces.1)
            .map_err(draw_error)?;
        mesh(
            &mut chart,
            "foot depth −z_f [mm]",
            "force on the foot, up [N]",
            1,
        )?;
        for (force, (color, stroke)) in [(&b.f_bed, BED), (&b.f_added_mass, MODEL)] {
            for stretch in in_bed(&depth, force) {
                draw_line(&mut chart, &stretch, color, stroke, 2)?;
            }
        }
        draw_legend(
            &force_legend.margin(40, 0, 0, 0),
            None,
            &[
                LegendEntry::line("F_bed (DEM)", BED.0, BED.1, 3),
                LegendEntry::line("F_added_mass (model)", MODEL.0, MODEL.1, 3),
            ],
        )?;

        let heights_mm = [
            ("z_m motor", BLUE, &b.z_m),
            ("z_r rod", VERMILION, &b.z_r),
            ("z_f foot", GREEN, &b.z_f),
        ];
        let planned = self.planned_apex_mm();
        let (h0, h1) = range_of(
            heights_mm
                .iter()
                .flat_map(|(_, _, z)| z.iter().map(|v| 1e3 * v))
                .chain(planned),
            0.06,
        );
        let mut chart: Chart<DB> = ChartBuilder::on(&heights)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(80)
            .build_cartesian_2d(t0..t1, h0..h1)
            .map_err(draw_error)?;
        mesh(&mut chart, "time t [s]", "height [mm]", 2)?;
        for (_, color, z) in &heights_mm {
            let points: Vec<(f64, f64)> =
                b.t.iter()
                    .zip(z.iter())
                    .map(|(t, z)| (*t, 1e3 * z))
                    .collect();
            draw_line(&mut chart, &points, *color, Stroke::Solid, 2)?;
        }
        let mut entries: Vec<LegendEntry> = heights_mm
            .iter()
            .map(|(label, color, _)| LegendEntry::line(*label, *color, Stroke::Solid, 3))
            .collect();
        if let Some(z) = planned {
            draw_line(
                &mut chart,
                &[(t0, z), (t1, z)],
                VERMILION,
                Stroke::Dashed(9, 5),
                2,
            )?;
            entries.push(LegendEntry::line(
                "planned apex of z_r",
                VERMILION,
                Stroke::Dashed(9, 5),
                3,
            ));
        }
        draw_legend(&heights_legend.margin(40, 0, 0, 0), None, &entries)
    }
}

/// The stretches of (depth, force) with the foot in the bed (depth ≥ 0), each in time order.
fn in_bed(depth: &[f64], force: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let mut stretches = vec![Vec::new()];
    for (d, f) in depth.iter().zip(force) {
        if *d >= 0.0 {
            stretches.last_mut().expect("one stretch").push((*d, *f));
        } else if !stretches.last().expect("one stretch").is_empty() {
            stretches.push(Vec::new());
        }
    }
    stretches.retain(|s| !s.is_empty());
    stretches
}
