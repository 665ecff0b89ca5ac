//! Wrench-space figures: `wrench_slices` (sections of W(θ) from a data file: F_x–F_z and
//! F_z–τ projections at several depths and tilts, the data points and the interpolated hull
//! between nodes) and `wrench_depth` (a one-foot scenario's simulated wrench against depth,
//! the wrench-space paper's Fig. 7 for the accuracy test).

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{
    draw_error, draw_grid, draw_heading, draw_line, draw_markers, font, range_of, trim_number,
    Chart, Figure, LegendEntry, Marker, Stroke, BLUE, DARK, GREEN, GREY, LEGEND_BAND, TITLE_BAND,
    VERMILION,
};
use super::table::Table;
use super::PlotError;
use crate::terrain::wrench_set::WrenchSet;
use crate::terrain::wrench_space::WrenchSpace;

/// The 2-D convex hull of `points` (Andrew's monotone chain), counter-clockwise, closed.
fn hull_2d(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut hull: Vec<(f64, f64)> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &(f64, f64)>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0
            {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    hull.push(hull[0]);
    hull
}

/// Which two components a panel shows: (x index, y index, x label, y label).
const SECTIONS: [(usize, usize, &str, &str); 2] =
    [(0, 1, "F_x [N]", "F_z [N]"), (1, 2, "F_z [N]", "τ [N m]")];

/// The `wrench_slices` figure of a wrench-space data file.
pub struct WrenchSlices {
    title: String,
    /// Rows: (node depth, the next deeper node's depth), columns: node tilts; the last row
    /// is the deepest node and the set beyond it, at half as deep again.
    depths: Vec<(f64, f64)>,
    tilts: Vec<f64>,
    space: WrenchSpace,
}

const SLICE_PANEL: u32 = 330;

impl WrenchSlices {
    pub fn load(path: &Path) -> Result<WrenchSlices, PlotError> {
        let space = WrenchSpace::load(path).map_err(|e| PlotError::Json {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let data = space.data();
        let mut depths: Vec<f64> = data.nodes.iter().map(|n| n.depth).collect();
        depths.sort_by(|a, b| b.total_cmp(a));
        depths.dedup();
        let mut tilts: Vec<f64> = data.nodes.iter().map(|n| n.tilt).collect();
        tilts.sort_by(f64::total_cmp);
        tilts.dedup();
        // Three depths at about a quarter, half and three quarters of the range (each with
        // the next node down), two tilts: 0 and the node nearest 0.45 rad.
        let pick = |f: f64| ((depths.len() - 1) as f64 * f).round() as usize;
        let mut rows: Vec<(f64, f64)> = [0.25, 0.5, 0.75]
            .iter()
            .map(|&f| pick(f).clamp(1, depths.len().saturating_sub(2).max(1)))
            .map(|k| (depths[k], depths[(k + 1).min(depths.len() - 1)]))
            .collect();
        rows.dedup();
        // The set the simulator uses beyond the data: the deepest node, and the set at half
        // as deep again, extended as the data's `beyond_data` says.
        let deepest = depths[depths.len() - 1];
        rows.retain(|&(depth, _)| depth != deepest);
        rows.push((deepest, 1.5 * deepest));
        let tilted = tilts
            .iter()
            .copied()
            .min_by(|a, b| (a - 0.45).abs().total_cmp(&(b - 0.45).abs()))
            .unwrap_or(0.0);
        let mut columns = vec![0.0];
        if tilted != 0.0 {
            columns.push(tilted);
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let title = format!(
            "{name}: wrench space W(d, φ) of `{}` ({} generator, {} directions), sections",
            data.medium,
            data.provenance.generator,
            data.directions.len()
        );
        Ok(WrenchSlices {
            title,
            depths: rows,
            tilts: columns,
            space,
        })
    }

    /// The data's wrenches at the node (depth, tilt), if it is one.
    fn node(&self, depth: f64, tilt: f64) -> Option<&Vec<[f64; 3]>> {
        self.space
            .data()
            .nodes
            .iter()
            .find(|n| (n.depth - depth).abs() < 1e-12 && (n.tilt - tilt).abs() < 1e-12)
            .map(|n| &n.wrenches)
    }

    fn columns(&self) -> usize {
        self.tilts.len() * SECTIONS.len()
    }
}

impl Figure for WrenchSlices {
    fn size(&self) -> (u32, u32) {
        (
            self.columns() as u32 * SLICE_PANEL + 20,
            TITLE_BAND + LEGEND_BAND + self.depths.len() as u32 * SLICE_PANEL,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let mut legend = vec![
            LegendEntry::marker(
                format!("the node's {} wrenches", self.space.n_directions()),
                BLUE,
                Marker::Circle,
                true,
            ),
            LegendEntry::line("W at the node", BLUE, Stroke::Solid, 2),
        ];
        let (d_min, _) = self.space.depth_range();
        if self
            .depths
            .iter()
            .any(|&(depth, deeper)| deeper != depth && deeper >= d_min)
        {
            legend.push(LegendEntry::line(
                "W halfway to the next node",
                VERMILION,
                Stroke::Dashed(8, 5),
                2,
            ));
        }
        legend.push(LegendEntry::line(
            format!(
                "W below the data, as simulated ({})",
                self.space.beyond_data().name()
            ),
            GREEN,
            Stroke::Dashed(3, 4),
            2,
        ));
        legend.push(LegendEntry::marker("origin", DARK, Marker::Diamond, true));
        let rest = draw_heading(root, &self.title, &legend)?;
        let panels = rest.split_evenly((self.depths.len(), self.columns()));
        for (r, &(depth, deeper)) in self.depths.iter().enumerate() {
            let beyond = deeper < d_min;
            let mid = 0.5 * (depth + deeper);
            for (t, &tilt) in self.tilts.iter().enumerate() {
                let at_node = self
                    .node(depth, tilt)
                    .cloned()
                    .unwrap_or_else(|| self.space.vertices(&depth, &tilt));
                let between = match beyond {
                    true => self.space.query(deeper, tilt).vertices,
                    false => self.space.vertices(&mid, &tilt),
                };
                for (s, &(i, j, x_label, y_label)) in SECTIONS.iter().enumerate() {
                    let area = &panels[r * self.columns() + t * SECTIONS.len() + s];
                    let project = |w: &[[f64; 3]]| -> Vec<(f64, f64)> {
                        w.iter().map(|v| (v[i], v[j])).chain([(0.0, 0.0)]).collect()
                    };
                    let (a, b) = (project(&at_node), project(&between));
                    let xs = a.iter().chain(&b).map(|p| p.0);
                    let ys = a.iter().chain(&b).map(|p| p.1);
                    let (x0, x1) = range_of(xs, 0.08);
                    let (y0, y1) = range_of(ys, 0.08);
                    let caption = match beyond {
                        true => format!(
                            "d = {} m and {} m (beyond), φ = {} rad",
                            trim_number(depth),
                            trim_number(deeper),
                            trim_number(tilt)
                        ),
                        false => format!(
                            "d = {} m, φ = {} rad",
                            trim_number(depth),
                            trim_number(tilt)
                        ),
                    };
                    let mut chart: Chart<DB> = ChartBuilder::on(area)
                        .caption(caption, font(15.0))
                        .margin(6)
                        .x_label_area_size(44)
                        .y_label_area_size(62)
                        .build_cartesian_2d(x0..x1, y0..y1)
                        .map_err(draw_error)?;
                    draw_grid(
                        &mut chart,
                        (x_label, y_label),
                        5,
                        &|v| trim_number(*v),
                        &|v| trim_number(*v),
                    )?;
                    if beyond {
                        draw_line(&mut chart, &hull_2d(&b), GREEN, Stroke::Dashed(3, 4), 2)?;
                    } else if deeper != depth {
                        draw_line(&mut chart, &hull_2d(&b), VERMILION, Stroke::Dashed(8, 5), 2)?;
                    }
                    draw_line(&mut chart, &hull_2d(&a), BLUE, Stroke::Solid, 2)?;
                    draw_markers(
                        &mut chart,
                        &a[..a.len() - 1],
                        (Marker::Circle, true),
                        3,
                        BLUE,
                    )?;
                    draw_markers(&mut chart, &[(0.0, 0.0)], (Marker::Diamond, true), 4, DARK)?;
                }
            }
        }
        Ok(())
    }
}

/// The `wrench_depth` figure of a one-foot scenario: F_x, F_z and τ on the foot against its
/// depth while it is in the bed.
pub struct WrenchDepth {
    title: String,
    /// (depth below the surface [m], F_x, F_z, τ) of the rows in the bed.
    rows: Vec<[f64; 4]>,
}

impl WrenchDepth {
    /// From a scenario folder whose robot has one foot named `foot`.
    pub fn load(dir: &Path, name: &str, foot: &str) -> Result<WrenchDepth, PlotError> {
        let table = Table::read(&dir.join("trajectory.csv"))?;
        let column = |what: &str| table.numbers(&format!("{foot}_{what}"));
        let (d, fx, fz, tau) = (
            column("depth")?,
            column("fx")?,
            column("fz")?,
            column("tau")?,
        );
        let rows = (0..d.len())
            .filter(|&i| d[i] < 0.0)
            .map(|i| [-d[i], fx[i], fz[i], tau[i]])
            .collect();
        Ok(WrenchDepth {
            title: format!("{name}: the terrain's wrench on `{foot}` against its depth"),
            rows,
        })
    }
}

impl Figure for WrenchDepth {
    fn size(&self) -> (u32, u32) {
        (1400, 520)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let rest = draw_heading(root, &self.title, &[])?;
        let panels = rest.split_evenly((1, 3));
        let labels = [
            "F_x along the surface [N]",
            "F_z along the normal [N]",
            "τ about the torque point [N m]",
        ];
        let (d0, d1) = range_of(self.rows.iter().map(|r| r[0]).chain([0.0]), 0.03);
        for (k, area) in panels.iter().enumerate() {
            let points: Vec<(f64, f64)> = self.rows.iter().map(|r| (r[0], r[k + 1])).collect();
            let (y0, y1) = range_of(points.iter().map(|p| p.1).chain([0.0]), 0.06);
            let mut chart: Chart<DB> = ChartBuilder::on(area)
                .margin(10)
                .x_label_area_size(50)
                .y_label_area_size(70)
                .build_cartesian_2d(d0.max(0.0)..d1, y0..y1)
                .map_err(draw_error)?;
            draw_grid(
                &mut chart,
                (
                    "depth of the sole centre below the surface −d [m]",
                    labels[k],
                ),
                6,
                &|v| trim_number(*v),
                &|v| trim_number(*v),
            )?;
            draw_line(&mut chart, &[(d0, 0.0), (d1, 0.0)], GREY, Stroke::Solid, 1)?;
            draw_line(&mut chart, &points, BLUE, Stroke::Solid, 2)?;
        }
        Ok(())
    }
}
