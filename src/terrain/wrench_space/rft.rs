//! The `rft` generator: boundary wrenches of a planar rectangular foot from resistive force
//! theory (Li, Zhang & Goldman 2013; docs/WRENCH_SPACE.md sections 2.4 and 3.4), and
//! [`RftModel`], the same computation as a [`WrenchSet`] evaluated at any θ without
//! interpolation (the reference the interpolated model is tested against).
//!
//! Conventions. A surface element of the foot's outline at depth |z| moving with velocity v
//! feels the stress σ = (−α_x, α_z)·|z| (N/cm³ coefficients, so ×10⁶ per metre of depth and
//! square metre of area) when v_x ≥ 0, where β ∈ [−π/2, π/2] is the element's angle from
//! horizontal (its tangent (cos β, sin β)) and γ = atan2(−v_z, v_x) ∈ [−π/2, π/2] the velocity's
//! angle below horizontal (+π/2 = straight down). For v_x < 0 the element is mirrored
//! (β → −β, v_x → −v_x) and the x force flipped back. Positive α_x resists motion along +x (a
//! vertical wall pushed sideways: α_x(π/2, 0) = 0.37 ζ). Only elements below the surface
//! (midpoint z < 0) and leading (outward normal · v > 0) contribute.

use std::collections::BTreeMap;
use std::f64::consts::FRAC_PI_2;

use serde::{Deserialize, Serialize};

use super::data::{Foot, Interpolation, Node, Provenance, WrenchSpaceData};
use super::rbf::Kernel;
use crate::terrain::wrench_set::{WrenchQuery, WrenchSet};

/// The nine coefficients of the RFT fit [N/cm³]:
/// α_z = A00 + A10 cos2β + B11 sin(2β+γ) + B01 sin γ + B−11 sin(−2β+γ),
/// α_x = C11 cos(2β+γ) + C01 cos γ + C−11 cos(−2β+γ) + D10 sin 2β.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RftCoefficients {
    pub a00: f64,
    pub a10: f64,
    pub b11: f64,
    pub b01: f64,
    pub b_11: f64,
    pub c11: f64,
    pub c01: f64,
    pub c_11: f64,
    pub d10: f64,
}

impl RftCoefficients {
    /// Li et al.'s generic fit, dimensionless, with α_z(0, π/2) = 1.
    pub const GENERIC: RftCoefficients = RftCoefficients {
        a00: 0.206,
        a10: 0.169,
        b11: 0.212,
        b01: 0.358,
        b_11: 0.055,
        c11: -0.124,
        c01: 0.253,
        c_11: 0.007,
        d10: 0.088,
    };

    /// (α_x, α_z) at element angle `beta` and velocity angle `gamma` (both in [−π/2, π/2]).
    pub fn alpha(&self, beta: f64, gamma: f64) -> (f64, f64) {
        let alpha_z = self.a00
            + self.a10 * (2.0 * beta).cos()
            + self.b11 * (2.0 * beta + gamma).sin()
            + self.b01 * gamma.sin()
            + self.b_11 * (-2.0 * beta + gamma).sin();
        let alpha_x = self.c11 * (2.0 * beta + gamma).cos()
            + self.c01 * gamma.cos()
            + self.c_11 * (-2.0 * beta + gamma).cos()
            + self.d10 * (2.0 * beta).sin();
        (alpha_x, alpha_z)
    }

    fn scaled(&self, zeta: f64) -> RftCoefficients {
        let c = self;
        RftCoefficients {
            a00: c.a00 * zeta,
            a10: c.a10 * zeta,
            b11: c.b11 * zeta,
            b01: c.b01 * zeta,
            b_11: c.b_11 * zeta,
            c11: c.c11 * zeta,
            c01: c.c01 * zeta,
            c_11: c.c_11 * zeta,
            d10: c.d10 * zeta,
        }
    }
}

/// A granular medium for RFT. The generator's default is `poppy_seeds_loose` (the issue's
/// "poppy-seed coefficients", per-medium fit of Li et al.'s public code, a secondary source);
/// the spec's §3.5 test medium is `Generic { zeta: 0.4 }` (Sand-like magnitudes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Medium {
    /// The generic fit scaled by ζ = α_z(0, π/2) [N/cm³].
    Generic { zeta: f64 },
    /// Loosely packed poppy seeds, α_z(0, π/2) = 0.254 N/cm³.
    PoppySeedsLoose,
    /// Close-packed poppy seeds, α_z(0, π/2) = 0.464 N/cm³.
    PoppySeedsClosePacked,
}

impl Medium {
    pub fn coefficients(&self) -> RftCoefficients {
        let set = |c: [f64; 9]| RftCoefficients {
            a00: c[0],
            a10: c[1],
            b11: c[2],
            b01: c[3],
            b_11: c[4],
            c11: c[5],
            c01: c[6],
            c_11: c[7],
            d10: c[8],
        };
        match *self {
            Medium::Generic { zeta } => RftCoefficients::GENERIC.scaled(zeta),
            Medium::PoppySeedsLoose => {
                set([0.051, 0.047, 0.053, 0.083, 0.020, -0.026, 0.057, 0.0, 0.025])
            }
            Medium::PoppySeedsClosePacked => set([
                0.094, 0.092, 0.092, 0.151, 0.035, -0.039, 0.086, 0.018, 0.046,
            ]),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Medium::Generic { zeta } => format!("generic_zeta_{zeta}"),
            Medium::PoppySeedsLoose => "poppy_seeds_loose".to_owned(),
            Medium::PoppySeedsClosePacked => "poppy_seeds_close_packed".to_owned(),
        }
    }
}

/// RFT on a rectangular foot: everything the wrenches depend on except θ.
#[derive(Clone, Debug, PartialEq)]
pub struct RftModel {
    pub medium: Medium,
    pub foot: Foot,
    /// [m] above the sole centre.
    pub torque_point: f64,
    /// (s_x [m/s], s_z [m/s], s_ω [rad/s]).
    pub velocity_scale: [f64; 3],
    /// Unit directions (x, z, ω), scaled by `velocity_scale` into twists of `p_r`.
    pub directions: Vec<[f64; 3]>,
    /// Segments per side of the outline (≥ 40 for the spec's accuracy).
    pub segments: usize,
}

impl RftModel {
    /// The boundary wrench (F_x, F_z, τ about `p_r`) when the foot at depth `depth`, tilt `tilt`
    /// moves with the twist `twist` = (v_x, v_z, ω) of `p_r`. Zero wrench at or above the
    /// surface is the caller's business: this sums whatever is submerged.
    pub fn wrench(&self, depth: f64, tilt: f64, twist: [f64; 3]) -> [f64; 3] {
        let coefficients = self.medium.coefficients();
        let (sin, cos) = tilt.sin_cos();
        let sole = [cos, sin];
        let axis = [-sin, cos];
        let at = |s: f64, a: f64| [s * sole[0] + a * axis[0], depth + s * sole[1] + a * axis[1]];
        let p_r = at(0.0, self.torque_point);
        let (half, height) = (0.5 * self.foot.width, self.foot.height);
        // Counter-clockwise, so each side's outward normal is its tangent turned by −90°.
        let corners = [
            at(-half, 0.0),
            at(half, 0.0),
            at(half, height),
            at(-half, height),
        ];
        let mut wrench = [0.0; 3];
        for side in 0..4 {
            let (from, to) = (corners[side], corners[(side + 1) % 4]);
            let length = ((to[0] - from[0]).powi(2) + (to[1] - from[1]).powi(2)).sqrt();
            let tangent = [(to[0] - from[0]) / length, (to[1] - from[1]) / length];
            let normal = [tangent[1], -tangent[0]];
            let element = length / self.segments as f64;
            for k in 0..self.segments {
                let t = (k as f64 + 0.5) / self.segments as f64;
                let p = [
                    from[0] + t * (to[0] - from[0]),
                    from[1] + t * (to[1] - from[1]),
                ];
                let arm = [p[0] - p_r[0], p[1] - p_r[1]];
                let v = [twist[0] - twist[2] * arm[1], twist[1] + twist[2] * arm[0]];
                if p[1] >= 0.0 || normal[0] * v[0] + normal[1] * v[1] <= 0.0 {
                    continue;
                }
                let force = element_force(&coefficients, tangent, v);
                let scale = 1e6 * (-p[1]) * element * self.foot.thickness;
                let f = [force[0] * scale, force[1] * scale];
                wrench[0] += f[0];
                wrench[1] += f[1];
                wrench[2] += arm[0] * f[1] - arm[1] * f[0];
            }
        }
        wrench
    }

    /// One boundary wrench per direction at θ; zero at or above the surface.
    pub fn wrenches(&self, depth: f64, tilt: f64) -> Vec<[f64; 3]> {
        self.directions
            .iter()
            .map(|u| {
                if depth >= 0.0 {
                    return [0.0; 3];
                }
                let s = self.velocity_scale;
                self.wrench(depth, tilt, [u[0] * s[0], u[1] * s[1], u[2] * s[2]])
            })
            .collect()
    }

    /// The data set on the grid `depths` × `tilts` (d ≤ 0, φ ≥ 0), interpolated with `kernel`.
    pub fn generate(&self, depths: &[f64], tilts: &[f64], kernel: Kernel) -> WrenchSpaceData {
        let nodes = depths
            .iter()
            .flat_map(|&depth| {
                tilts.iter().map(move |&tilt| Node {
                    depth,
                    tilt,
                    wrenches: self.wrenches(depth, tilt),
                })
            })
            .collect();
        let c = self.medium.coefficients();
        let parameters = BTreeMap::from([
            ("medium".to_owned(), self.medium.name()),
            (
                "coefficients_n_per_cm3".to_owned(),
                format!(
                    "A00 {}, A10 {}, B11 {}, B01 {}, B-11 {}, C11 {}, C01 {}, C-11 {}, D10 {}",
                    c.a00, c.a10, c.b11, c.b01, c.b_11, c.c11, c.c01, c.c_11, c.d10
                ),
            ),
            ("segments_per_side".to_owned(), self.segments.to_string()),
            (
                "element_rule".to_owned(),
                "midpoint below the surface and leading (n.v > 0); the surface row is zero"
                    .to_owned(),
            ),
        ]);
        WrenchSpaceData {
            medium: self.medium.name(),
            foot: self.foot,
            torque_point: self.torque_point,
            velocity_scale: self.velocity_scale,
            directions: self.directions.clone(),
            interpolation: Interpolation {
                kernel,
                ..Interpolation::default()
            },
            provenance: Provenance {
                generator: "rft".to_owned(),
                parameters,
            },
            nodes,
            rbf_weights: Vec::new(),
        }
    }
}

/// The force per unit area and unit depth [N/cm³] on an element with unit `tangent` moving with
/// velocity `v` (not zero).
fn element_force(coefficients: &RftCoefficients, tangent: [f64; 2], v: [f64; 2]) -> [f64; 2] {
    let mirrored = v[0] < 0.0;
    let (tangent_x, v_x) = if mirrored {
        (-tangent[0], -v[0])
    } else {
        (tangent[0], v[0])
    };
    let beta = if tangent_x == 0.0 {
        FRAC_PI_2
    } else {
        (tangent[1] / tangent_x).atan()
    };
    let gamma = (-v[1]).atan2(v_x);
    let (alpha_x, alpha_z) = coefficients.alpha(beta, gamma);
    let f_x = if mirrored { alpha_x } else { -alpha_x };
    [f_x, alpha_z]
}

/// RFT evaluated directly at any θ: no grid, no interpolation, no clamping.
impl WrenchSet for RftModel {
    fn query(&self, depth: f64, tilt: f64) -> WrenchQuery {
        WrenchQuery {
            vertices: self.wrenches(depth, tilt),
            clamped: None,
            outside: false,
        }
    }

    fn torque_point(&self) -> f64 {
        self.torque_point
    }
}
