//! The wrench set beyond its data ([`BeyondData`](super::data::BeyondData),
//! docs/WRENCH_SPACE.md "Beyond the data"): the data's outermost layers and the linear
//! extension of a vertex from them, and the RFT medium fitted to the data that shapes the set
//! beyond the data's tilts.

use super::data::WrenchSpaceData;
use super::rft::{Medium, RftModel};

/// Segments per side of the foot's outline for the tilt extension's RFT: the increment
/// r(d, φ) − r(d, φ_max) is taken with one discretization, so it needs fewer than the
/// generator's 40 (the 20 used here cost about 35 µs per evaluation of the 26 directions).
const EXTENSION_SEGMENTS: usize = 20;

/// The outermost layers of the data, from which `BeyondData::Extrapolate` extends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layers {
    /// The deepest node depth d_min and the next depth up [m] (the data have at least two).
    pub depth: (f64, f64),
    /// The shallowest node depth [m]: 0 when the data have a surface row.
    pub shallowest: f64,
    /// The largest tilt φ_max of the mirrored node set and the next tilt down [rad] (0, or
    /// −φ_max when φ_max is the only tilt).
    pub tilt: (f64, f64),
}

impl Layers {
    /// The layers of nodes at `depths` and (non-negative) `tilts`.
    pub fn of(depths: &[f64], tilts: &[f64]) -> Layers {
        let distinct = |values: Vec<f64>| {
            let mut values = values;
            values.sort_by(f64::total_cmp);
            values.dedup();
            values
        };
        let depths = distinct(depths.to_vec());
        let tilts = distinct(tilts.iter().flat_map(|&t| [t, -t]).collect());
        let n = tilts.len();
        Layers {
            depth: (depths[0], depths[1.min(depths.len() - 1)]),
            shallowest: depths[depths.len() - 1],
            tilt: (tilts[n - 1], tilts[n.saturating_sub(2)]),
        }
    }
}

/// The vertices `boundary` (w_i at the outermost layer) extended by `s` ≥ 0 layer spacings
/// beyond it, at the rate the step from `inner` (w_i at the layer before) shows: per vertex
/// b + s (b − p)′, where (b − p)′ is the step less its projection on b when that projection
/// is negative (raw (F_x [N], F_z [N], τ [N m]) coordinates, as the data are written), so
/// that |w_i| ≥ |b| for every s ≥ 0: the set never shrinks below the boundary's.
pub fn extend(boundary: &[[f64; 3]], inner: &[[f64; 3]], s: f64) -> Vec<[f64; 3]> {
    boundary
        .iter()
        .zip(inner)
        .map(|(b, p)| {
            let mut step = [b[0] - p[0], b[1] - p[1], b[2] - p[2]];
            let bb = dot(b, b);
            let along = dot(&step, b);
            if along < 0.0 && bb > 0.0 {
                for (c, x) in step.iter_mut().enumerate() {
                    *x -= along / bb * b[c];
                }
            }
            [0, 1, 2].map(|c| b[c] + s * step[c])
        })
        .collect()
}

/// Li et al.'s generic RFT medium for the data's own foot, torque point and directions, its
/// scale ζ [N/cm³] fitted to the data by least squares over every wrench component of every
/// node below the surface (ζ = Σ w·r / Σ r·r, r the generic medium's wrenches at ζ = 1);
/// `None` when the fit gives no ζ > 0 (data RFT cannot describe at all).
pub fn fitted_rft(data: &WrenchSpaceData) -> Option<RftModel> {
    let unit = RftModel {
        medium: Medium::Generic { zeta: 1.0 },
        foot: data.foot,
        torque_point: data.torque_point,
        velocity_scale: data.velocity_scale,
        directions: data.directions.clone(),
        segments: EXTENSION_SEGMENTS,
    };
    let (mut wr, mut rr) = (0.0, 0.0);
    for node in data.nodes.iter().filter(|n| n.depth < 0.0) {
        for (w, r) in node
            .wrenches
            .iter()
            .zip(unit.wrenches(node.depth, node.tilt))
        {
            wr += dot(w, &r);
            rr += dot(&r, &r);
        }
    }
    let zeta = wr / rr;
    (zeta.is_finite() && zeta > 0.0).then_some(RftModel {
        medium: Medium::Generic { zeta },
        ..unit
    })
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_of_a_grid_and_of_a_single_tilt() {
        let layers = Layers::of(&[0.0, -0.01, -0.05, -0.03], &[0.0, 0.9, 0.3, 0.6]);
        assert_eq!(layers.depth, (-0.05, -0.03));
        assert_eq!(layers.shallowest, 0.0);
        assert_eq!(layers.tilt, (0.9, 0.6));
        let single = Layers::of(&[-0.02, -0.04], &[0.5]);
        assert_eq!(single.shallowest, -0.02);
        assert_eq!(single.tilt, (0.5, -0.5));
    }

    #[test]
    fn a_growing_vertex_continues_and_a_shrinking_one_keeps_its_size() {
        // Growing along itself: the straight line.
        let grown = extend(&[[1.0, 200.0, 0.5]], &[[0.8, 160.0, 0.4]], 2.0);
        assert_eq!(grown[0], [1.4, 280.0, 0.7]);
        // Shrinking along itself: the step is removed entirely, the vertex stays.
        let kept = extend(&[[0.0, 100.0, 0.0]], &[[0.0, 150.0, 0.0]], 3.0);
        assert_eq!(kept[0], [0.0, 100.0, 0.0]);
        // Shrinking and turning: only the turn continues, and |w| grows.
        let turned = extend(&[[0.0, 100.0, 0.0]], &[[-10.0, 120.0, 0.0]], 1.0);
        assert_eq!(turned[0], [10.0, 100.0, 0.0]);
    }
}
