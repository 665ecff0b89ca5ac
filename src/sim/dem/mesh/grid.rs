//! [`GridSdf`]: a mesh's signed distance sampled on a regular grid, trilinear between points.

use rayon::prelude::*;

use super::distance::MeshDistance;
use super::{sub, MeshError, TriangleMesh, MAX_GRID_POINTS};
use crate::sim::dem::sdf::{norm, normalized, Sdf, Vec3};

/// A signed distance field sampled on a regular grid and interpolated trilinearly.
#[derive(Clone, Debug, PartialEq)]
pub struct GridSdf {
    origin: Vec3,
    spacing: f64,
    dims: [usize; 3],
    values: Vec<f64>,
}

impl GridSdf {
    /// Position of grid point (0, 0, 0).
    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// Distance between neighbouring grid points (m).
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// Points along x, y and z (each at least 2).
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Signed distances at the grid points, x fastest: point (i, j, k) is at
    /// i + nx (j + ny k).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Samples the signed distance to `mesh` on a grid of the given spacing covering the
    /// mesh's bounding box grown by `padding` on every side. The field is exact at grid
    /// points; between them the trilinear interpolant of a 1-Lipschitz field is within
    /// √3·spacing of the true distance.
    pub fn from_mesh(
        mesh: &TriangleMesh,
        spacing: f64,
        padding: f64,
    ) -> Result<GridSdf, MeshError> {
        if !(spacing > 0.0 && spacing.is_finite()) {
            return Err(MeshError::BadSpacing { spacing });
        }
        if !(padding >= 0.0 && padding.is_finite()) {
            return Err(MeshError::BadPadding { padding });
        }
        let (lo, hi) = mesh.bounds();
        let origin = lo.map(|x| x - padding);
        let mut dims = [0usize; 3];
        let mut points: usize = 1;
        for i in 0..3 {
            let cells = ((hi[i] + padding - origin[i]) / spacing).ceil().max(1.0);
            if cells > MAX_GRID_POINTS as f64 {
                return Err(MeshError::GridTooLarge {
                    points: usize::MAX,
                    spacing,
                    max: MAX_GRID_POINTS,
                });
            }
            dims[i] = cells as usize + 1;
            points = points.saturating_mul(dims[i]);
        }
        if points > MAX_GRID_POINTS {
            return Err(MeshError::GridTooLarge {
                points,
                spacing,
                max: MAX_GRID_POINTS,
            });
        }
        let field = MeshDistance::new(mesh);
        let [nx, ny, _] = dims;
        let mut values = vec![0.0; points];
        // Rows along x in parallel; along a row, the neighbour's distance plus the spacing
        // bounds the next one (the field is 1-Lipschitz), which prunes the search to a few
        // triangles.
        values
            .par_chunks_mut(nx)
            .enumerate()
            .for_each(|(row, out)| {
                let (j, k) = (row % ny, row / ny);
                let y = origin[1] + j as f64 * spacing;
                let z = origin[2] + k as f64 * spacing;
                let mut bound = f64::INFINITY;
                for (i, value) in out.iter_mut().enumerate() {
                    let p = [origin[0] + i as f64 * spacing, y, z];
                    *value = field.signed_distance(p, bound);
                    bound = value.abs() + spacing;
                }
            });
        Ok(GridSdf {
            origin,
            spacing,
            dims,
            values,
        })
    }

    /// The far corner of the grid.
    pub fn upper_corner(&self) -> Vec3 {
        [0, 1, 2].map(|i| self.origin[i] + (self.dims[i] - 1) as f64 * self.spacing)
    }

    fn value(&self, i: usize, j: usize, k: usize) -> f64 {
        self.values[i + self.dims[0] * (j + self.dims[1] * k)]
    }

    /// The cell holding `p` (already inside the grid box) and the fractions within it.
    fn cell(&self, p: Vec3) -> ([usize; 3], Vec3) {
        let mut cell = [0; 3];
        let mut t = [0.0; 3];
        for a in 0..3 {
            let x = (p[a] - self.origin[a]) / self.spacing;
            let c = (x.floor().max(0.0) as usize).min(self.dims[a] - 2);
            cell[a] = c;
            t[a] = (x - c as f64).clamp(0.0, 1.0);
        }
        (cell, t)
    }

    /// Trilinear value and gradient at a point inside the grid box.
    fn interpolate(&self, p: Vec3) -> (f64, Vec3) {
        let ([i, j, k], [tx, ty, tz]) = self.cell(p);
        let c = |a, b, d| self.value(i + a, j + b, k + d);
        let (c000, c100, c010, c110) = (c(0, 0, 0), c(1, 0, 0), c(0, 1, 0), c(1, 1, 0));
        let (c001, c101, c011, c111) = (c(0, 0, 1), c(1, 0, 1), c(0, 1, 1), c(1, 1, 1));
        let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
        let x00 = lerp(c000, c100, tx);
        let x10 = lerp(c010, c110, tx);
        let x01 = lerp(c001, c101, tx);
        let x11 = lerp(c011, c111, tx);
        let y0 = lerp(x00, x10, ty);
        let y1 = lerp(x01, x11, ty);
        let value = lerp(y0, y1, tz);
        let dx = lerp(
            lerp(c100 - c000, c110 - c010, ty),
            lerp(c101 - c001, c111 - c011, ty),
            tz,
        );
        let dy = lerp(x10 - x00, x11 - x01, tz);
        let dz = y1 - y0;
        let h = self.spacing;
        (value, [dx / h, dy / h, dz / h])
    }

    fn clamp_to_grid(&self, p: Vec3) -> Vec3 {
        let hi = self.upper_corner();
        [0, 1, 2].map(|i| p[i].clamp(self.origin[i], hi[i]))
    }
}

impl Sdf for GridSdf {
    fn grid(&self) -> Option<&GridSdf> {
        Some(self)
    }

    /// Trilinear inside the grid; outside, the distance to the grid box plus the value at
    /// the nearest point of the box (an upper bound that keeps the field continuous).
    fn distance(&self, p: Vec3) -> f64 {
        let q = self.clamp_to_grid(p);
        norm(sub(p, q)) + self.interpolate(q).0
    }

    fn gradient(&self, p: Vec3) -> Vec3 {
        let q = self.clamp_to_grid(p);
        let (_, mut g) = self.interpolate(q);
        let away = sub(p, q);
        let d = norm(away);
        if d > 0.0 {
            for i in 0..3 {
                if away[i] != 0.0 {
                    g[i] = away[i] / d;
                }
            }
        }
        normalized(g)
    }

    /// The grid points inside the body (value ≤ 0), grown by one spacing and kept within
    /// the grid: the surface lies within a spacing of an inside point, so this holds the body.
    fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let [nx, ny, _] = self.dims;
        let mut lo = [usize::MAX; 3];
        let mut hi = [0; 3];
        for (index, _) in self.values.iter().enumerate().filter(|(_, &v)| v <= 0.0) {
            let ijk = [index % nx, index / nx % ny, index / (nx * ny)];
            for a in 0..3 {
                lo[a] = lo[a].min(ijk[a]);
                hi[a] = hi[a].max(ijk[a]);
            }
        }
        if lo[0] == usize::MAX {
            return None;
        }
        let at = |a: usize, i: usize| self.origin[a] + i as f64 * self.spacing;
        Some((
            [0, 1, 2].map(|a| at(a, lo[a].saturating_sub(1))),
            [0, 1, 2].map(|a| at(a, (hi[a] + 1).min(self.dims[a] - 1))),
        ))
    }
}
