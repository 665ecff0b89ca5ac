//! The hopper of MODEL.md section 1 on a rail inclined by α from the vertical, standing on a
//! wrench-space terrain (docs/WRENCH_SPACE.md section 4.4, "the inclined-rail hopper").
//!
//! **Geometry.** Motor, rod and foot keep the hopper's coordinates z_m, z_r, z_f, now measured
//! along the rail (z_f = 0: the sole centre at the surface). The rail's upward direction, and
//! the foot's axis, is e = (−sin α, cos α): the foot is tilted counter-clockwise by α, the
//! tilt convention of the wrench sets. So the foot's configuration is θ = (d, φ) =
//! (z_f cos α, α), gravity along the rail is g cos α, and a wrench w = (F_x, F_z, τ) of the
//! terrain pushes the foot along the rail with the generalized force G(w) = eᵀ(F_x, F_z) =
//! −sin α F_x + cos α F_z. The rail reacts the force across it and the torque: the contact
//! has one degree of freedom, but it uses W(d, α)'s full vertices (asymmetric for α > 0).
//!
//! **Step** (the MDP simulator's, semi-implicit Euler with step h; `sim::mdp::rail` and the
//! planner's stance both call [`RailHopper::step`]): the leg's accelerations at (x_k, u_k),
//! the foot's plus G/m_f from the terrain, then v⁺ = v + h a, q⁺ = q + h v⁺, and the drive's
//! integrator and the command by explicit Euler. With one contact degree of freedom and a
//! diagonal mass matrix, maximum dissipation picks the G that brings the foot's velocity
//! closest to zero within [min(0, minᵢ Gᵢ), max(0, maxᵢ Gᵢ)], Gᵢ = G(wᵢ(θ)); the grains'
//! inertia M_g only scales the objective and has no effect.

use std::sync::Arc;

use crate::model::hopper::{state, Domain, Hopper};
use crate::scalar::Scalar;
use crate::terrain::wrench_space::WrenchSpace;
use crate::terrain::{AddedMass, Terrain};

/// Where the foot's wrench vertices come from.
#[derive(Clone, Debug)]
pub enum RailWrenches {
    /// A wrench-space data file, interpolated (`terrain::wrench_space`).
    Data(Arc<WrenchSpace>),
    /// A synthetic set for the cross-check with the 1-D granular model: wᵢ(d) = F_hyd(d) Pᵢ,
    /// F_hyd the added-mass model's static resistance (MODEL.md section 2) and P the corners
    /// of [−0.3, 0.3] × [0, 1] × [−0.02 m, 0.02 m] (newtons per newton of capacity): its
    /// pure-down capacity is F_hyd(d), it never pulls the foot down, and tilt is ignored.
    Hydrostatic(AddedMass),
}

/// The corners of the hydrostatic set's shape P.
const HYDROSTATIC_SHAPE: [[f64; 3]; 8] = [
    [-0.3, 0.0, -0.02],
    [0.3, 0.0, -0.02],
    [-0.3, 1.0, -0.02],
    [0.3, 1.0, -0.02],
    [-0.3, 0.0, 0.02],
    [0.3, 0.0, 0.02],
    [-0.3, 1.0, 0.02],
    [0.3, 1.0, 0.02],
];

/// The hopper on its inclined rail and its terrain.
#[derive(Clone, Debug)]
pub struct RailHopper {
    /// The hopper, with gravity already projected on the rail (g cos α).
    pub hopper: Hopper,
    /// α [rad], the rail's angle from the vertical.
    pub angle: f64,
    pub wrenches: RailWrenches,
}

impl RailHopper {
    /// `hopper` with its full gravity, on a rail at `angle`.
    pub fn new(mut hopper: Hopper, angle: f64, wrenches: RailWrenches) -> RailHopper {
        hopper.gravity *= angle.cos();
        RailHopper {
            hopper,
            angle,
            wrenches,
        }
    }

    /// The number of wrench vertices (controls λ of the planner's stance).
    pub fn n_vertices(&self) -> usize {
        match &self.wrenches {
            RailWrenches::Data(space) => space.n_directions(),
            RailWrenches::Hydrostatic(_) => HYDROSTATIC_SHAPE.len(),
        }
    }

    /// The sole centre's depth d (< 0 below the surface) at foot position `z_f`.
    pub fn depth<S: Scalar>(&self, z_f: &S) -> S {
        z_f.clone() * self.angle.cos()
    }

    /// Deepest foot position the terrain's data cover (z_f along the rail).
    pub fn lowest_foot(&self) -> f64 {
        match &self.wrenches {
            RailWrenches::Data(space) => space.depth_range().0 / self.angle.cos(),
            RailWrenches::Hydrostatic(_) => f64::NEG_INFINITY,
        }
    }

    /// The wrench vertices wᵢ(θ) (F_x, F_z, τ) at foot position `z_f`; zero above the surface.
    pub fn vertices<S: Scalar>(&self, z_f: &S) -> Vec<[S; 3]> {
        let depth = self.depth(z_f);
        match &self.wrenches {
            RailWrenches::Data(space) => space.vertices(&depth, &S::constant(self.angle)),
            RailWrenches::Hydrostatic(bed) => {
                let capacity = bed.resistance(&depth, &S::zero()).force;
                HYDROSTATIC_SHAPE
                    .iter()
                    .map(|p| p.map(|c| capacity.clone() * c))
                    .collect()
            }
        }
    }

    /// The vertices' forces along the rail Gᵢ = G(wᵢ(θ)) at foot position `z_f` (what the step
    /// and maximum dissipation need: the rail takes the rest of each wrench).
    pub fn vertex_forces<S: Scalar>(&self, z_f: &S) -> Vec<S> {
        let depth = self.depth(z_f);
        match &self.wrenches {
            RailWrenches::Data(space) => {
                space.projected_vertices(&depth, &S::constant(self.angle), self.twist())
            }
            RailWrenches::Hydrostatic(_) => self
                .vertices(z_f)
                .iter()
                .map(|w| self.rail_force(w))
                .collect(),
        }
    }

    /// The rail's direction e and its twist column J_t = (e_x, e_z, 0): the foot's twist per
    /// unit ż_f.
    pub fn twist(&self) -> [f64; 3] {
        [-self.angle.sin(), self.angle.cos(), 0.0]
    }

    /// G(w) = J_tᵀ w, the generalized force along the rail of a wrench.
    pub fn rail_force<S: Scalar>(&self, w: &[S; 3]) -> S {
        let [ex, ez, _] = self.twist();
        w[0].clone() * ex + w[1].clone() * ez
    }

    /// The largest force along the rail the terrain can give at `z_f` (0 above the surface).
    pub fn capacity(&self, z_f: f64) -> f64 {
        self.vertex_forces(&z_f).into_iter().fold(0.0, f64::max)
    }

    /// One step of length `h` from `x` under command rate `u`, with the terrain pushing the
    /// foot along the rail by `force` (newtons; 0 in flight).
    pub fn step<S: Scalar>(&self, x: &[S], u: &S, force: &S, h: &S) -> Vec<S> {
        use state::*;
        // The free hopper's rates; the terrain's force adds to the foot's acceleration.
        let mut rate = self
            .hopper
            .derivatives(Domain::Flight, &Terrain::Rigid, x, u);
        rate[V_F] = rate[V_F].clone() + force.clone() / self.hopper.params.foot_mass;
        let mut next: Vec<S> = x.to_vec();
        for (z, v) in [(Z_M, V_M), (Z_R, V_R), (Z_F, V_F)] {
            next[v] = x[v].clone() + h.clone() * rate[v].clone();
            next[z] = x[z].clone() + h.clone() * next[v].clone();
        }
        for i in [E, Z_D] {
            next[i] = x[i].clone() + h.clone() * rate[i].clone();
        }
        next
    }

    /// The longest stable step [s] (within 1e-6 s): the step is explicit in the leg's
    /// forces, and the drive's velocity loop (K_m V_p over the motor–rod pair's reduced mass,
    /// about 270 1/s with the paper's robot) makes it unstable above about 5 ms, so an open-loop
    /// replay of a plan with longer steps drifts away from it geometrically. The forces are
    /// linear in the state, so the step is a linear map: the largest step whose spectral
    /// radius is at most 1 with the foot held (sticking: its velocity zeroed every step) and
    /// with the foot free.
    ///
    /// The free hopper's map has the eigenvalue 1 three times (moving the whole hopper, the
    /// command and the drive's integrator along with it), in a Jordan block whose computed
    /// eigenvalues scatter by about √ε (1e-8 measured). A radius up to 1 + 1e-6 therefore
    /// counts as 1; a real instability grows far past that within a few microseconds of
    /// step. (The first version tested 1 + 1e-12, so that the scatter failed steps at random
    /// and the bisection stopped at 3.735 ms instead of the true 4.786 ms.)
    pub fn stable_step(&self) -> f64 {
        let stable = |h: f64| {
            self.spectral_radius(h, true) <= 1.0 + 1e-6
                && self.spectral_radius(h, false) <= 1.0 + 1e-6
        };
        let (mut low, mut high) = (0.0, 0.1);
        while high - low > 1e-6 {
            let mid = 0.5 * (low + high);
            if stable(mid) {
                low = mid;
            } else {
                high = mid;
            }
        }
        low
    }

    /// The spectral radius of the step of length `h` (zero command rate, no terrain force)
    /// as a linear map of the state, with the foot `held` (its velocity zeroed every step,
    /// as a sticking foot) or free.
    pub fn spectral_radius(&self, h: f64, held: bool) -> f64 {
        use nalgebra::DMatrix;
        let rest = self.hopper.rest_state(&Terrain::Rigid, 0.0);
        let map = |x: &[f64]| -> Vec<f64> {
            let mut next = self.step(x, &0.0, &0.0, &h);
            if held {
                next[state::V_F] = 0.0;
                next[state::Z_F] = x[state::Z_F];
            }
            next
        };
        let base = map(&rest);
        let n = state::COUNT;
        let jacobian = DMatrix::from_fn(n, n, |i, j| {
            let mut x = rest.to_vec();
            x[j] += 1.0;
            map(&x)[i] - base[i]
        });
        jacobian
            .complex_eigenvalues()
            .iter()
            .map(|l| l.norm())
            .fold(0.0, f64::max)
    }

    /// The foot position where the terrain's capacity along the rail carries the whole
    /// weight (g cos α along the rail), or `None` if the data's deepest node cannot.
    pub fn rest_foot(&self) -> Option<f64> {
        let weight = self.hopper.total_mass() * self.hopper.gravity;
        let mut low = match &self.wrenches {
            RailWrenches::Data(_) => self.lowest_foot(),
            RailWrenches::Hydrostatic(bed) => -bed.equilibrium_depth(weight) * 2.0 - 1e-3,
        };
        if self.capacity(low) < weight {
            return None;
        }
        let mut high = 0.0;
        for _ in 0..200 {
            let mid = 0.5 * (low + high);
            if self.capacity(mid) >= weight {
                low = mid;
            } else {
                high = mid;
            }
        }
        Some(0.5 * (low + high))
    }

    /// The hopper at rest on the bed (foot at [`rest_foot`](Self::rest_foot)) with the
    /// actuator at `actuator_position`.
    pub fn rest_state(&self, actuator_position: f64) -> Option<[f64; state::COUNT]> {
        use state::*;
        let z_f = self.rest_foot()?;
        let mut x = self.hopper.rest_state(&Terrain::Rigid, actuator_position);
        for i in [Z_M, Z_R, Z_F] {
            x[i] += z_f;
        }
        Some(x)
    }
}
