//! The `rail_run` figure of a rail plan (`loam solve` on a wrench-space terrain): positions
//! along the rail, the terrain's force along it and its wrench, the plan's nodes against the
//! MDP simulator's replay of its command (`mdp_replay.csv`).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    draw_error, draw_grid, draw_heading, draw_legend_row, draw_line, draw_markers, range_of,
    trim_number, Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK, GREEN, GREY, ORANGE,
    VERMILION,
};
use super::table::Table;
use super::PlotError;

/// Whether `dir` holds a rail plan (its `solution.json` has the `rail` key).
pub fn is_rail(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json.get("rail").is_some())
}

pub struct RailFigure {
    title: String,
    /// Plan: t [s], z_m, z_r, z_f [m], G, F_x, F_z [N], τ [N m].
    plan: Vec<[f64; 8]>,
    /// Replay: t [s], z_m, z_r, z_f [m], G [N].
    replay: Vec<[f64; 5]>,
    /// End of the stance [s].
    takeoff: f64,
}

impl RailFigure {
    pub fn load(dir: &Path) -> Result<RailFigure, PlotError> {
        let read = |name: &str, columns: &[&str]| -> Result<Vec<Vec<f64>>, PlotError> {
            let table = Table::read(&dir.join(name))?;
            columns.iter().map(|c| table.numbers(c)).collect()
        };
        let plan = read(
            "trajectory.csv",
            &["t", "z_m", "z_r", "z_f", "G", "F_x", "F_z", "tau"],
        )?;
        let replay = read("mdp_replay.csv", &["t", "z_m", "z_r", "z_f", "G"])?;
        let text = std::fs::read_to_string(dir.join("solution.json")).unwrap_or_default();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let angle = json["rail"]["angle_rad"].as_f64().unwrap_or(f64::NAN);
        let planned = json["apex_rise_m"].as_f64().unwrap_or(f64::NAN);
        let replayed = json["replay"]["apex_rise_m"].as_f64();
        let takeoff = json["phases"][0]["duration_s"].as_f64().unwrap_or(0.0);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let replayed = replayed.map_or("no apex".into(), |a| format!("{:.2} mm", a * 1e3));
        let title = format!(
            "{name}: hopper on a rail at {angle} rad, wrench-space terrain; apex rise planned \
             {:.2} mm, MDP replay {replayed}",
            planned * 1e3
        );
        let rows = |columns: &[Vec<f64>]| -> Vec<Vec<f64>> {
            (0..columns[0].len())
                .map(|i| columns.iter().map(|c| c[i]).collect())
                .collect()
        };
        Ok(RailFigure {
            title,
            plan: rows(&plan)
                .into_iter()
                .map(|r| std::array::from_fn(|k| r[k]))
                .collect(),
            replay: rows(&replay)
                .into_iter()
                .map(|r| std::array::from_fn(|k| r[k]))
                .collect(),
            takeoff,
        })
    }
}

impl Figure for RailFigure {
    fn size(&self) -> (u32, u32) {
        (1500, 560)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let plan_line =
            |label: &str, color| LegendEntry::marker(label, color, Marker::Circle, true);
        let rest = draw_heading(
            root,
            &self.title,
            &[
                plan_line("plan (nodes)", DARK),
                LegendEntry::line("MDP replay of the plan's command", DARK, Stroke::Solid, 2),
                LegendEntry::line(
                    "take-off (foot at the surface)",
                    GREY,
                    Stroke::Dashed(6, 4),
                    1,
                ),
            ],
        )?;
        let panels = rest.split_evenly((1, 3));
        let ms = |t: f64| t * 1e3;
        let (t0, t1) = range_of(
            self.plan
                .iter()
                .map(|r| ms(r[0]))
                .chain(self.replay.iter().map(|r| ms(r[0]))),
            0.02,
        );
        let chart_on = |k: usize,
                        label: &str,
                        plan: Vec<(Vec<(f64, f64)>, RGBColor, &str)>,
                        replay: Vec<(Vec<(f64, f64)>, RGBColor)>|
         -> Result<(), PlotError> {
            let all = plan
                .iter()
                .flat_map(|(p, _, _)| p.iter().map(|q| q.1))
                .chain(replay.iter().flat_map(|(p, _)| p.iter().map(|q| q.1)))
                .chain([0.0]);
            let (y0, y1) = range_of(all, 0.06);
            let mut chart: Chart<DB> = ChartBuilder::on(&panels[k])
                .margin(10)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(t0..t1, y0..y1)
                .map_err(draw_error)?;
            draw_grid(
                &mut chart,
                ("time [ms]", label),
                6,
                &|v| trim_number(*v),
                &|v| trim_number(*v),
            )?;
            draw_line(&mut chart, &[(t0, 0.0), (t1, 0.0)], GREY, Stroke::Solid, 1)?;
            let t = ms(self.takeoff);
            draw_line(
                &mut chart,
                &[(t, y0), (t, y1)],
                GREY,
                Stroke::Dashed(6, 4),
                1,
            )?;
            for (points, color) in &replay {
                draw_line(&mut chart, points, *color, Stroke::Solid, 2)?;
            }
            for (points, color, _) in &plan {
                draw_markers(&mut chart, points, (Marker::Circle, true), 3, *color)?;
            }
            let entries: Vec<LegendEntry> = plan
                .iter()
                .map(|(_, color, name)| LegendEntry::line(*name, *color, Stroke::Solid, 2))
                .collect();
            draw_legend_row(&panels[k], (90, 14), &entries)?;
            Ok(())
        };
        let series = |rows: &[[f64; 8]], c: usize, scale: f64| -> Vec<(f64, f64)> {
            rows.iter().map(|r| (ms(r[0]), r[c] * scale)).collect()
        };
        let replayed = |c: usize, scale: f64| -> Vec<(f64, f64)> {
            self.replay
                .iter()
                .map(|r| (ms(r[0]), r[c] * scale))
                .collect()
        };
        let colors = [BLUE, ORANGE, VERMILION];
        chart_on(
            0,
            "position along the rail [mm]",
            ["motor z_m", "rod z_r", "foot z_f"]
                .iter()
                .enumerate()
                .map(|(i, name)| (series(&self.plan, 1 + i, 1e3), colors[i], *name))
                .collect(),
            (0..3).map(|i| (replayed(1 + i, 1e3), colors[i])).collect(),
        )?;
        chart_on(
            1,
            "terrain's force along the rail G [N]",
            vec![(series(&self.plan, 4, 1.0), GREEN, "G")],
            vec![(replayed(4, 1.0), GREEN)],
        )?;
        chart_on(
            2,
            "planned wrench: F_x, F_z [N], τ [N m]",
            ["F_x", "F_z", "τ"]
                .iter()
                .enumerate()
                .map(|(i, name)| (series(&self.plan, 5 + i, 1.0), colors[i], *name))
                .collect(),
            Vec::new(),
        )?;
        Ok(())
    }
}
