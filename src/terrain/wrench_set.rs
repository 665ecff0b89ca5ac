//! The interface between a terrain that answers with a *set* of admissible contact wrenches
//! (the wrench-space model of docs/WRENCH_SPACE.md) and the simulators that use it.
//!
//! Frames (docs/WRENCH_SPACE.md section 1): a planar foot has a sole centre `p_center` and a
//! torque point `p_r` on the foot's axis, `torque_point` metres above `p_center`. A wrench
//! w = (F_x, F_z, τ) is the substrate's force on the foot in the *surface* axes (z = outward
//! surface normal, x along the surface) and its torque about `p_r` (counter-clockwise +).
//! The configuration θ = (d, φ): d = signed depth of `p_center` along the surface normal
//! (negative below the surface), φ = tilt of the foot axis from the normal (counter-clockwise
//! +). The admissible set is W(θ) = conv({0} ∪ {w_i(θ)}), star-shaped about 0, and {0} for
//! d ≥ 0.

/// What a wrench set says at one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct WrenchQuery {
    /// The m extreme wrenches w_i(θ) (F_x [N], F_z [N], τ [N m]); the origin is implied.
    /// All zero at or above the surface.
    pub vertices: Vec<[f64; 3]>,
    /// Set when θ was clamped (into the data's box, or φ to ±π/2): the (d, φ) used.
    pub clamped: Option<(f64, f64)>,
    /// θ lay below the surface but outside the box of the set's data (then clamped into it or
    /// extrapolated, as the set says); always false for a set without data (an analytic one).
    pub outside: bool,
}

/// A terrain given as a configuration-dependent polytope of contact wrenches.
pub trait WrenchSet: Send + Sync {
    /// W at depth `depth` [m] (< 0 below the surface) and tilt `tilt` [rad].
    fn query(&self, depth: f64, tilt: f64) -> WrenchQuery;
    /// Distance from the sole centre up the foot axis to the torque point [m].
    fn torque_point(&self) -> f64;
}

/// A known polytope scaled with depth: w_i(d, φ) = s(d) P_i with s = max(−d, 0) / `depth_scale`
/// (tilt is ignored). An analytic wrench set for tests: its capacity grows linearly with
/// depth, like a granular bed's, and its facets are those of P scaled.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaledPolytope {
    /// P's points (F_x, F_z, τ) at d = −`depth_scale`.
    pub points: Vec<[f64; 3]>,
    /// [m], > 0.
    pub depth_scale: f64,
    /// [m]
    pub torque_point: f64,
}

impl WrenchSet for ScaledPolytope {
    fn query(&self, depth: f64, _tilt: f64) -> WrenchQuery {
        let s = (-depth).max(0.0) / self.depth_scale;
        WrenchQuery {
            vertices: self
                .points
                .iter()
                .map(|p| [s * p[0], s * p[1], s * p[2]])
                .collect(),
            clamped: None,
            outside: false,
        }
    }

    fn torque_point(&self) -> f64 {
        self.torque_point
    }
}
