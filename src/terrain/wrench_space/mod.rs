//! The data-driven wrench-space terrain (docs/WRENCH_SPACE.md): a data file of boundary wrenches
//! at configurations θ = (d, φ) ([`data`]), made by resistive force theory ([`rft`]), by the
//! paper's protocol on loam's DEM (`sim::dem::wrench_space`) or read from measurements
//! ([`import`]), and [`WrenchSpace`], its vertices w_i(θ) interpolated over θ ([`rbf`]) with
//! the mirror symmetry built in. A data file is read by `WrenchSpace::load` (declared with the
//! problem files' YAML reader, `problem`). W(θ) = conv({0} ∪ {w_i(θ)}); the hull is
//! `terrain::hull`'s business. Outside the data's box the set extrapolates or clamps, as the
//! data's `interpolation.beyond_data` says ([`BeyondData`], [`beyond`]).

pub mod beyond;
pub mod data;
pub mod import;
pub mod rbf;
pub mod rft;

use std::f64::consts::FRAC_PI_2;
use std::sync::OnceLock;

use nalgebra::DMatrix;

pub use beyond::Layers;
pub use data::{BeyondData, Foot, Node, WrenchSpaceData, WrenchSpaceError};
pub use rbf::Kernel;
pub use rft::{Medium, RftModel};

use crate::scalar::Scalar;
use crate::terrain::wrench_set::{WrenchQuery, WrenchSet};

/// A fitted wrench space: its data and the interpolant of every vertex component.
#[derive(Clone, Debug)]
pub struct WrenchSpace {
    data: WrenchSpaceData,
    /// π: S_v u_i = u_π(i).
    mirror: Vec<usize>,
    /// Outputs 3i + c: component c of vertex i.
    rbf: rbf::Rbf,
    /// Whether `rbf` is fitted over the data's own nodes only (φ ≥ 0) and a query at φ < 0
    /// is answered by the mirror, w_i(d, φ) = S·w_π(i)(d, −φ): the paper kernels, so that the
    /// interpolant is the RBF model of the data as the authors fit it (over their nodes), not
    /// one fitted over the mirrored nodes as well, which differs between nodes. `cubic` is
    /// fitted over both, one smooth interpolant across φ = 0.
    mirror_at_query: bool,
    depth_range: (f64, f64),
    tilt_max: f64,
    layers: Layers,
    /// What a query outside the data's box gets (the data's `interpolation.beyond_data`
    /// unless [`set_beyond_data`](Self::set_beyond_data) changed it).
    beyond: BeyondData,
    /// The RFT medium fitted to the data, made on first use ([`fitted_rft`](Self::fitted_rft)).
    tilt_model: OnceLock<Option<RftModel>>,
}

impl WrenchSpace {
    /// Validates and fits: every node (d, φ > 0) is mirrored to (d, −φ) with wrenches
    /// S·w_π(i), and at φ = 0, when the data's `interpolation.mirror_average` says so, the
    /// wrenches are replaced by the mirror average ½(w_i + S·w_π(i)), so that
    /// w_i(d, −φ) = S·w_π(i)(d, φ) holds for the interpolant; without it the φ = 0 wrenches
    /// are fitted as given.
    pub fn from_data(data: WrenchSpaceData) -> Result<WrenchSpace, WrenchSpaceError> {
        let mirror = data.validate()?;
        let m = data.directions.len();
        let mirror_at_query = data.interpolation.kernel != Kernel::Cubic;
        let mut thetas = Vec::new();
        let mut rows: Vec<Vec<f64>> = Vec::new();
        for node in &data.nodes {
            let mirrored: Vec<[f64; 3]> = mirror
                .iter()
                .map(|&p| data::mirror(&node.wrenches[p]))
                .collect();
            if node.tilt == 0.0 && !data.interpolation.mirror_average {
                thetas.push([node.depth, 0.0]);
                rows.push(node.wrenches.iter().flatten().copied().collect());
            } else if node.tilt == 0.0 {
                thetas.push([node.depth, 0.0]);
                rows.push(
                    node.wrenches
                        .iter()
                        .zip(&mirrored)
                        .flat_map(|(w, s)| (0..3).map(move |c| 0.5 * (w[c] + s[c])))
                        .collect(),
                );
            } else {
                thetas.push([node.depth, node.tilt]);
                rows.push(node.wrenches.iter().flatten().copied().collect());
                if !mirror_at_query {
                    thetas.push([node.depth, -node.tilt]);
                    rows.push(mirrored.iter().flatten().copied().collect());
                }
            }
        }
        let values = DMatrix::from_fn(rows.len(), 3 * m, |j, k| rows[j][k]);
        let depths: Vec<f64> = data.nodes.iter().map(|n| n.depth).collect();
        let tilts: Vec<f64> = data.nodes.iter().map(|n| n.tilt).collect();
        let spacing = [mean_spacing(&depths), mean_spacing(&tilts)];
        let rbf = match data.rbf_weights.is_empty() {
            true => rbf::Rbf::fit(data.interpolation.kernel, &thetas, &values, spacing).map_err(
                |rbf::Singular| {
                    WrenchSpaceError::invalid(
                        "nodes",
                        "the interpolation system is singular: the nodes must not all lie on \
                         one line in (depth, tilt)",
                    )
                },
            )?,
            false => given_weights(&data)?,
        };
        let depth_range = (
            depths.iter().copied().fold(f64::INFINITY, f64::min),
            depths.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let tilt_max = tilts.iter().copied().fold(0.0, f64::max);
        let layers = Layers::of(&depths, &tilts);
        let beyond = data.interpolation.beyond_data;
        Ok(WrenchSpace {
            data,
            mirror,
            rbf,
            mirror_at_query,
            depth_range,
            tilt_max,
            layers,
            beyond,
            tilt_model: OnceLock::new(),
        })
    }

    /// The m vertices w_i(θ) (F_x, F_z, τ), interpolated; zero at or above the surface.
    /// No clamping: the caller keeps θ inside [`depth_range`](Self::depth_range) ×
    /// [`tilt_range`](Self::tilt_range) (outside, the interpolant extrapolates).
    pub fn vertices<S: Scalar>(&self, depth: &S, tilt: &S) -> Vec<[S; 3]> {
        let below = depth.lt(&S::zero());
        let zero = S::zero();
        if self.mirror_at_query {
            // w_i(d, φ) = S·w_π(i)(d, |φ|) where φ < 0.
            let negative = tilt.lt(&zero);
            let values = self.rbf.eval(depth, &tilt.abs());
            let sign = [-1.0, 1.0, -1.0];
            return (0..self.n_directions())
                .map(|i| {
                    let p = self.mirror[i];
                    [0, 1, 2].map(|c| {
                        let w = S::if_else(
                            &negative,
                            &(values[3 * p + c].clone() * sign[c]),
                            &values[3 * i + c],
                        );
                        S::if_else(&below, &w, &zero)
                    })
                })
                .collect();
        }
        let values = self.rbf.eval(depth, tilt);
        values
            .chunks_exact(3)
            .map(|w| [0, 1, 2].map(|c| S::if_else(&below, &w[c], &zero)))
            .collect()
    }

    /// The vertices' components along `direction` (a twist: per vertex Σ_c direction_c w_ic,
    /// the generalized force of a foot moving with that twist); zero at or above the surface.
    /// The same numbers as [`vertices`](Self::vertices) projected, for a third of its cost.
    pub fn projected_vertices<S: Scalar>(
        &self,
        depth: &S,
        tilt: &S,
        direction: [f64; 3],
    ) -> Vec<S> {
        let below = depth.lt(&S::zero());
        let combinations: Vec<Vec<(usize, f64)>> = (0..self.n_directions())
            .map(|i| (0..3).map(|c| (3 * i + c, direction[c])).collect())
            .collect();
        if self.mirror_at_query {
            // Where φ < 0, vertex i is S·w_π(i)(d, |φ|): its projection combines π(i)'s
            // outputs with the direction mirrored.
            let sign = [-1.0, 1.0, -1.0];
            let mirrored: Vec<Vec<(usize, f64)>> = (0..self.n_directions())
                .map(|i| {
                    let p = self.mirror[i];
                    (0..3)
                        .map(|c| (3 * p + c, direction[c] * sign[c]))
                        .collect()
                })
                .collect();
            let up = tilt.abs();
            let negative = tilt.lt(&S::zero());
            let plain = self.rbf.eval_combined(depth, &up, &combinations);
            let image = self.rbf.eval_combined(depth, &up, &mirrored);
            return plain
                .into_iter()
                .zip(image)
                .map(|(g, m)| S::if_else(&below, &S::if_else(&negative, &m, &g), &S::zero()))
                .collect();
        }
        self.rbf
            .eval_combined(depth, tilt, &combinations)
            .into_iter()
            .map(|g| S::if_else(&below, &g, &S::zero()))
            .collect()
    }

    pub fn n_directions(&self) -> usize {
        self.data.directions.len()
    }

    /// (d_min, d_max) of the data [m].
    pub fn depth_range(&self) -> (f64, f64) {
        self.depth_range
    }

    /// (−φ_max, φ_max) of the data, mirrors included [rad].
    pub fn tilt_range(&self) -> (f64, f64) {
        (-self.tilt_max, self.tilt_max)
    }

    /// π: the direction S_v u_i is u_π(i).
    pub fn mirror(&self) -> &[usize] {
        &self.mirror
    }

    /// The largest |w_i − S·w_π(i)| of the data at tilt 0 (what the mirror average, when on,
    /// averages away).
    pub fn untilted_asymmetry(&self) -> f64 {
        self.untilted_asymmetries()
            .into_iter()
            .map(|(_, a)| a)
            .fold(0.0, f64::max)
    }

    /// Per node at tilt 0, its depth and the largest |w_i − S·w_π(i)| component there; the
    /// mirror average moves that node's wrenches by half of it at most.
    pub fn untilted_asymmetries(&self) -> Vec<(f64, f64)> {
        self.data
            .nodes
            .iter()
            .filter(|n| n.tilt == 0.0)
            .map(|n| (n.depth, data::asymmetry(&n.wrenches, &self.mirror)))
            .collect()
    }

    pub fn data(&self) -> &WrenchSpaceData {
        &self.data
    }

    /// θ moved into the data's box, and whether it had to move.
    pub fn clamp(&self, depth: f64, tilt: f64) -> (f64, f64, bool) {
        let d = depth.clamp(self.depth_range.0, self.depth_range.1);
        let t = tilt.clamp(-self.tilt_max, self.tilt_max);
        (d, t, d != depth || t != tilt)
    }

    /// What a query outside the data's box gets.
    pub fn beyond_data(&self) -> BeyondData {
        self.beyond
    }

    /// Changes what a query outside the data's box gets (the data file's choice otherwise).
    pub fn set_beyond_data(&mut self, beyond: BeyondData) {
        self.beyond = beyond;
    }

    /// The data's outermost layers, from which the set extrapolates.
    pub fn layers(&self) -> Layers {
        self.layers
    }

    /// Li et al.'s generic RFT medium fitted to the data (`beyond::fitted_rft`), which shapes
    /// the set beyond the data's tilts; computed on first use. `None` when no ζ > 0 fits.
    pub fn fitted_rft(&self) -> Option<&RftModel> {
        self.tilt_model
            .get_or_init(|| beyond::fitted_rft(&self.data))
            .as_ref()
    }

    /// The vertices at θ below the surface under [`BeyondData::Extrapolate`]
    /// ([`BeyondData`]'s docs): inside the data's box the interpolant; beyond the deepest
    /// node the linear extension from the two deepest layers; above a shallowest node below
    /// the surface a straight line to 0 at the surface; beyond the largest tilt φ_max the set
    /// at ±φ_max (so extended in depth as needed) plus the change of the fitted RFT medium
    /// from ±φ_max to φ, r(d, φ) − r(d, ±φ_max) (the linear extension from the two largest
    /// tilt layers when no RFT medium fits). `tilt` within ±π/2.
    pub fn extrapolated(&self, depth: f64, tilt: f64) -> Vec<[f64; 3]> {
        let (t_max, t_next) = self.layers.tilt;
        let beyond_tilt = tilt.abs() > t_max;
        let boundary = if beyond_tilt {
            tilt.signum() * t_max
        } else {
            tilt
        };
        let rft = if beyond_tilt { self.fitted_rft() } else { None };
        let at_depth = |d: f64| -> Vec<[f64; 3]> {
            if !beyond_tilt || rft.is_some() {
                return self.vertices(&d, &boundary);
            }
            beyond::extend(
                &self.vertices(&d, &boundary),
                &self.vertices(&d, &(tilt.signum() * t_next)),
                (tilt.abs() - t_max) / (t_max - t_next),
            )
        };
        let (d_min, d_next) = self.layers.depth;
        let shallowest = self.layers.shallowest;
        let mut vertices = if depth < d_min {
            beyond::extend(
                &at_depth(d_min),
                &at_depth(d_next),
                (d_min - depth) / (d_next - d_min),
            )
        } else if depth > shallowest {
            let scale = depth / shallowest;
            at_depth(shallowest)
                .into_iter()
                .map(|w| w.map(|c| scale * c))
                .collect()
        } else {
            at_depth(depth)
        };
        if let Some(rft) = rft {
            let (to, from) = (rft.wrenches(depth, tilt), rft.wrenches(depth, boundary));
            for ((w, a), b) in vertices.iter_mut().zip(&to).zip(&from) {
                for c in 0..3 {
                    w[c] += a[c] - b[c];
                }
            }
        }
        vertices
    }
}

/// The interpolant of the weights that came with `data` (validated: a paper kernel, one
/// triple per node and direction), checked to reproduce every node's wrenches.
fn given_weights(data: &WrenchSpaceData) -> Result<rbf::Rbf, WrenchSpaceError> {
    let m = data.directions.len();
    let centres: Vec<[f64; 2]> = data.nodes.iter().map(|n| [n.depth, n.tilt]).collect();
    let weights: Vec<Vec<f64>> = (0..3 * m)
        .map(|k| {
            data.rbf_weights
                .iter()
                .map(|node| node[k / 3][k % 3])
                .collect()
        })
        .collect();
    let rbf = rbf::Rbf::from_weights(data.interpolation.kernel, &centres, weights)
        .expect("validated: a kernel without a tail");
    let scale = data
        .nodes
        .iter()
        .flat_map(|n| n.wrenches.iter().flatten())
        .fold(0.0_f64, |m, c| m.max(c.abs()));
    for (j, node) in data.nodes.iter().enumerate() {
        let model = rbf.eval(&node.depth, &node.tilt);
        let (k, off) = (0..3 * m)
            .map(|k| (k, (model[k] - node.wrenches[k / 3][k % 3]).abs()))
            .fold((0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        if off > 1e-6 * scale.max(1e-12) {
            return Err(WrenchSpaceError::invalid(
                format!("rbf_weights[{j}]"),
                format!(
                    "the weights do not reproduce node {j} (d = {}, tilt = {}): direction {} \
                     component {} is {} there against the data's {} ({off:.3e} off; accepted: \
                     within 1e-6 of the largest wrench, {:.3e})",
                    node.depth,
                    node.tilt,
                    k / 3,
                    ["F_x", "F_z", "tau"][k % 3],
                    model[k],
                    node.wrenches[k / 3][k % 3],
                    1e-6 * scale
                ),
            ));
        }
    }
    Ok(rbf)
}

impl WrenchSet for WrenchSpace {
    /// Zero at or above the surface. Below it, outside the data's box (reported in
    /// `outside`), θ is extrapolated ([`WrenchSpace::extrapolated`], φ clamped to ±π/2) or
    /// clamped into the box, as [`beyond_data`](WrenchSpace::beyond_data) says; a clamp is
    /// reported in `clamped`.
    fn query(&self, depth: f64, tilt: f64) -> WrenchQuery {
        if depth >= 0.0 {
            return WrenchQuery {
                vertices: vec![[0.0; 3]; self.n_directions()],
                clamped: None,
                outside: false,
            };
        }
        let (d, t, outside) = self.clamp(depth, tilt);
        match self.beyond {
            BeyondData::Clamp => WrenchQuery {
                vertices: self.vertices(&d, &t),
                clamped: outside.then_some((d, t)),
                outside,
            },
            BeyondData::Extrapolate => {
                let t = tilt.clamp(-FRAC_PI_2, FRAC_PI_2);
                WrenchQuery {
                    vertices: self.extrapolated(depth, t),
                    clamped: (t != tilt).then_some((depth, t)),
                    outside,
                }
            }
        }
    }

    fn torque_point(&self) -> f64 {
        self.data.torque_point
    }
}

/// The mean spacing of the distinct values: range / (count − 1); 1 for a single value.
fn mean_spacing(values: &[f64]) -> f64 {
    let mut distinct = values.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    match distinct.len() {
        0 | 1 => 1.0,
        n => (distinct[n - 1] - distinct[0]) / (n - 1) as f64,
    }
}
