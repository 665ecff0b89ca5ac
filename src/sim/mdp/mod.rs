//! The maximum-dissipation (MDP) simulator on wrench-space terrain (docs/WRENCH_SPACE.md
//! sections 1 "Simulation" and 3.5), for any planar robot of `model::planar`.
//!
//! **Contacts.** Each of the robot's contacts is a foot whose axis is its body's +z axis and
//! whose sole lies along body x, centred at the contact point `p_center`. Its torque point is
//! `p_r = p_center + torque_point · (body z axis)`, `torque_point` given by the contact's
//! [`WrenchSet`]. The ground is the line through the origin at the surface angle α
//! (`slope`, counter-clockwise +; 0 is flat ground z = 0), with tangent t = (cos α, sin α)
//! and outward normal n = (−sin α, cos α). A foot's configuration θ = (d, φ): d = nᵀp_center
//! (< 0 below the surface), φ = body angle − α wrapped to (−π, π] and clamped to
//! [−π/2, π/2] (the paper's box; the wrench set may clamp further, both are reported). A
//! wrench w = (F_x, F_z, τ) is in the surface axes (F_x along t, F_z along n) with τ about
//! `p_r`; so on a slope the set's forces are rotated by α and its torques kept.
//!
//! **Step** (semi-implicit Euler, step h). Feet with d < 0 are in contact; for contact i,
//! J_t,i (3 × n) maps v to the twist of `p_r` (tᵀ ṗ_r, nᵀ ṗ_r, body rate) and J_p,i to that
//! of `p_center`. With M̃ = M (+ h D + h² K on held joints, see [`JointHold`]),
//!
//! ```text
//! v_free = M̃⁻¹ (M v + h (B u + springs − bias(q, v) − K (q − q_ref)))
//! v⁺     = v_free + M̃⁻¹ Σ J_t,iᵀ c_i,          c_i = h w_i
//! c      = argmin ½ v⁺ᵀ (M̃ + Σ J_p,iᵀ M_g,i J_p,i) v⁺   over c_i ∈ h W_i(θ_i)
//! q⁺     = q + h v⁺
//! ```
//!
//! M_g,i = the grains' inertia moving with `p_center` (default 2·diag(m, m, I) of the
//! contact's body, the paper's hand-tuned value). With Q = Gᵀ Ĥ G, r = Gᵀ Ĥ v_free,
//! G = M̃⁻¹ J_tᵀ and Ĥ the bracket above, the objective is ½ cᵀQc + rᵀc, the change of that
//! kinetic energy: c = 0 is always admissible (0 ∈ W), so a step never adds it. Two forms of
//! W, both exact (spec 3.2): the **V-form** c_i = h B_i λ_i, λ_i ≥ 0, 1ᵀλ_i ≤ 1 over the
//! set's m vertices (no hull at run time), and the **H-form** A_i c_i ≤ h b_i from
//! `terrain::hull` (3 variables per contact). Solvers: Clarabel (both forms) and a
//! hand-written barrier Newton on the V-form ([`barrier`]), the independent second solver
//! the tests compare Clarabel with. Every answer is projected into W (λ clipped and
//! rescaled; c scaled towards 0 onto the facets that do not pass through 0, W being
//! star-shaped) and replaced by 0 if it is not better than 0.
//!
//! The paper's eq. 2 also carries joint impulses J_cᵀc_j for its maximal coordinates; loam's
//! robots are in generalized (tree) coordinates, so J_c drops out.

mod active_set;
pub mod barrier;
pub mod control;
pub mod plan;
mod qp;
#[cfg(feature = "planner")]
pub mod sample;

use std::f64::consts::{FRAC_PI_2, PI};
use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

pub use control::{JointHold, Pid, PidGains};

use crate::model::multibody::Frame;
use crate::model::planar::PlanarRobot;
use crate::terrain::hull::{HalfSpaces, HullError};
use crate::terrain::wrench_set::WrenchSet;

/// A run that spends more than this share of its steps with a foot outside its wrench set's
/// data is flagged (`loam mdp run`'s summary line): beyond the data the set is extrapolated
/// (or clamped), so such a run says more about the extrapolation than about the data.
pub const OUTSIDE_DATA_FLAG_SHARE: f64 = 0.2;

/// How the wrench space enters the QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WrenchForm {
    /// w = B λ, λ ≥ 0, 1ᵀλ ≤ 1 over the set's vertices.
    Vertices,
    /// A w ≤ b from the 3-D hull of the vertices and the origin.
    HalfSpaces,
}

/// Which solver solves the step's QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QpSolver {
    /// Clarabel's interior point method (either form).
    Clarabel,
    /// loam's log-barrier Newton method (V-form only).
    BarrierNewton,
    /// loam's dense active-set methods (either form, [`active_set`]): exact to rounding,
    /// no polish needed.
    ActiveSet,
}

/// The grains' inertia M_g that moves with each foot's sole centre.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum GrainInertia {
    /// factor · diag(m, m, I) of the contact's body; the paper's value is 2.
    BodyMultiple(f64),
    /// The same diag(m_x [kg], m_z [kg], I [kg m²]) for every contact (surface axes).
    Diagonal([f64; 3]),
}

/// The simulator's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MdpOptions {
    /// Step h [s]. Default 1e-3 (spec 3.5).
    pub step: f64,
    /// Surface angle α [rad], counter-clockwise +, |α| < π/2. Default 0 (flat ground).
    pub slope: f64,
    /// Default `vertices`: the exact set of the data, no hull per step.
    pub form: WrenchForm,
    /// Default `active_set` (exact, and about 10 times faster than `clarabel` on the
    /// quadruped's four feet; `loam bench mdp`).
    pub solver: QpSolver,
    /// Default `body_multiple: 2.0` (the paper's M_g = 2·diag(m, m, I)).
    pub grain_inertia: GrainInertia,
    /// Hold every joint at a posture (the robot's standing posture unless
    /// [`MdpSim::set_hold_target`] says otherwise). Default none.
    pub joint_hold: Option<JointHold>,
}

impl Default for MdpOptions {
    fn default() -> Self {
        MdpOptions {
            step: 1e-3,
            slope: 0.0,
            form: WrenchForm::Vertices,
            solver: QpSolver::ActiveSet,
            grain_inertia: GrainInertia::BodyMultiple(2.0),
            joint_hold: None,
        }
    }
}

/// Why the simulator cannot be built or cannot take a step.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MdpError {
    #[error("mdp option `{field}`: {message}")]
    Option {
        field: &'static str,
        message: String,
    },
    #[error("{0}")]
    Robot(String),
    #[error("{given} wrench sets for robot `{robot}` with {contacts} contacts (one per contact)")]
    WrenchSets {
        robot: String,
        given: usize,
        contacts: usize,
    },
    #[error("`{what}` has {given} entries, want {want}")]
    Length {
        what: &'static str,
        given: usize,
        want: usize,
    },
    #[error("contact `{contact}` at d = {depth} m, φ = {tilt} rad: {source}")]
    Hull {
        contact: String,
        depth: f64,
        tilt: f64,
        source: HullError,
    },
    #[error("the step's QP failed: {0}")]
    Qp(String),
}

impl MdpOptions {
    pub fn validate(&self) -> Result<(), MdpError> {
        let fail = |field, message: String| Err(MdpError::Option { field, message });
        if !(self.step > 0.0 && self.step.is_finite()) {
            return fail(
                "step",
                format!("must be a finite time > 0 s, got {}", self.step),
            );
        }
        if !(self.slope.abs() < FRAC_PI_2) {
            return fail(
                "slope",
                format!("must be an angle in (-pi/2, pi/2) rad, got {}", self.slope),
            );
        }
        if self.solver == QpSolver::BarrierNewton && self.form != WrenchForm::Vertices {
            return fail(
                "solver",
                "barrier_newton solves the vertex form only: set form: vertices".into(),
            );
        }
        match &self.grain_inertia {
            GrainInertia::BodyMultiple(f) if !(*f >= 0.0 && f.is_finite()) => {
                return fail(
                    "grain_inertia",
                    format!("body_multiple must be >= 0, got {f}"),
                );
            }
            GrainInertia::Diagonal(d) if !d.iter().all(|x| *x >= 0.0 && x.is_finite()) => {
                return fail(
                    "grain_inertia",
                    format!("diagonal entries must be >= 0, got {d:?}"),
                );
            }
            _ => {}
        }
        if let Some(hold) = &self.joint_hold {
            if !(hold.stiffness >= 0.0 && hold.damping >= 0.0)
                || !(hold.stiffness.is_finite() && hold.damping.is_finite())
            {
                return fail(
                    "joint_hold",
                    format!(
                        "stiffness and damping must be finite and >= 0, got {} and {}",
                        hold.stiffness, hold.damping
                    ),
                );
            }
        }
        Ok(())
    }
}

/// One contact after a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContactReport {
    pub name: String,
    /// d < 0 at the step's start.
    pub in_contact: bool,
    /// d [m] at the step's start (along the surface normal, < 0 below).
    pub depth: f64,
    /// φ [rad] used (after the simulator's clamp to [−π/2, π/2]).
    pub tilt: f64,
    /// Set when θ was clamped (by the simulator or the wrench set): the (d, φ) used.
    pub clamped: Option<(f64, f64)>,
    /// In contact with θ outside the box of the wrench set's data (then extrapolated or
    /// clamped, as the set says: `WrenchQuery::outside`).
    pub outside: bool,
    /// w = (F_x, F_z, τ): force in the surface axes [N], torque about p_r [N m].
    pub wrench: [f64; 3],
    /// The same force in world axes (x, z) [N] and the same torque about p_r [N m].
    pub wrench_world: [f64; 3],
    /// p_r in the world at the step's start [m].
    pub torque_point: [f64; 2],
}

/// The state after a step and what the contacts did during it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    /// One per robot contact, in the robot's order.
    pub contacts: Vec<ContactReport>,
}

/// The kinematics of one contact at the step's start.
struct ContactKinematics {
    depth: f64,
    tilt: f64,
    clamped: Option<(f64, f64)>,
    torque_point: [f64; 2],
    /// Rows: tᵀ ṗ_r, nᵀ ṗ_r, body rate.
    twist_r: DMatrix<f64>,
    /// Rows: tᵀ ṗ_center, nᵀ ṗ_center, body rate.
    twist_center: DMatrix<f64>,
}

/// The simulator: a robot, one wrench set per contact, the options.
pub struct MdpSim {
    robot: PlanarRobot,
    sets: Vec<Arc<dyn WrenchSet>>,
    options: MdpOptions,
    hold_target: Vec<f64>,
}

impl MdpSim {
    pub fn new(
        robot: &PlanarRobot,
        sets: Vec<Arc<dyn WrenchSet>>,
        options: MdpOptions,
    ) -> Result<MdpSim, MdpError> {
        robot
            .validate()
            .map_err(|e| MdpError::Robot(e.to_string()))?;
        options.validate()?;
        if sets.len() != robot.contacts.len() {
            return Err(MdpError::WrenchSets {
                robot: robot.name.clone(),
                given: sets.len(),
                contacts: robot.contacts.len(),
            });
        }
        Ok(MdpSim {
            hold_target: robot.standing.clone(),
            robot: robot.clone(),
            sets,
            options,
        })
    }

    /// The same wrench set under every contact.
    pub fn uniform(
        robot: &PlanarRobot,
        set: Arc<dyn WrenchSet>,
        options: MdpOptions,
    ) -> Result<MdpSim, MdpError> {
        MdpSim::new(robot, vec![set; robot.contacts.len()], options)
    }

    pub fn robot(&self) -> &PlanarRobot {
        &self.robot
    }

    pub fn options(&self) -> &MdpOptions {
        &self.options
    }

    /// Changes the step h, checked as the options are.
    pub fn set_step(&mut self, step: f64) -> Result<(), MdpError> {
        let options = MdpOptions {
            step,
            ..self.options.clone()
        };
        options.validate()?;
        self.options = options;
        Ok(())
    }

    /// The posture the joint hold pulls towards (all n_q coordinates; the base's are unused).
    pub fn set_hold_target(&mut self, q: &[f64]) -> Result<(), MdpError> {
        self.check_length("hold target", q.len(), self.robot.n_q())?;
        self.hold_target = q.to_vec();
        Ok(())
    }

    fn check_length(&self, what: &'static str, given: usize, want: usize) -> Result<(), MdpError> {
        if given == want {
            Ok(())
        } else {
            Err(MdpError::Length { what, given, want })
        }
    }

    /// (t, n): the surface's tangent and outward normal.
    fn surface_axes(&self) -> ([f64; 2], [f64; 2]) {
        let (s, c) = self.options.slope.sin_cos();
        ([c, s], [-s, c])
    }

    /// Contact `contact`'s kinematics, `frames` being every body's frame at q.
    fn kinematics(&self, q: &[f64], frames: &[Frame<f64>], contact: usize) -> ContactKinematics {
        let body = &self.robot.body;
        let spec = &self.robot.contacts[contact];
        let frame = &frames[spec.body];
        let (t, n) = self.surface_axes();
        let centre = frame.transform(spec.point);
        let depth = n[0] * centre[0] + n[1] * centre[1];
        let torque_local = [
            spec.point[0],
            spec.point[1] + self.sets[contact].torque_point(),
        ];
        let mut tilt = frame.angle - self.options.slope;
        tilt -= 2.0 * PI * ((tilt + PI) / (2.0 * PI)).floor();
        if tilt > PI {
            tilt -= 2.0 * PI;
        }
        let clamped_tilt = tilt.clamp(-FRAC_PI_2, FRAC_PI_2);
        let rate = body.angle_jacobian(spec.body);
        // One point Jacobian: p_r moves as p_center plus the body's turn about it,
        // ṗ_r = ṗ_center + ψ̇ (−δ_z, δ_x), δ = p_r − p_center.
        let [jx, jz] = body.point_jacobian(q, spec.body, spec.point);
        let torque_point = frame.transform(torque_local);
        let lever = [torque_point[0] - centre[0], torque_point[1] - centre[1]];
        let twist = |offset: [f64; 2]| {
            DMatrix::from_fn(3, jx.len(), |row, k| {
                let (x, z) = (jx[k] - offset[1] * rate[k], jz[k] + offset[0] * rate[k]);
                match row {
                    0 => t[0] * x + t[1] * z,
                    1 => n[0] * x + n[1] * z,
                    _ => rate[k],
                }
            })
        };
        ContactKinematics {
            depth,
            tilt: clamped_tilt,
            clamped: (clamped_tilt != tilt).then_some((depth, clamped_tilt)),
            torque_point,
            twist_r: twist(lever),
            twist_center: twist([0.0; 2]),
        }
    }

    fn grain_inertia(&self, contact: usize) -> [f64; 3] {
        match &self.options.grain_inertia {
            GrainInertia::BodyMultiple(f) => {
                let body = &self.robot.body.bodies[self.robot.contacts[contact].body];
                [f * body.mass, f * body.mass, f * body.inertia]
            }
            GrainInertia::Diagonal(d) => *d,
        }
    }

    /// Each contact's configuration at q, as a step from q would see it (no wrench: the
    /// wrench fields are zero): the state at the end of a run.
    pub fn contacts(&self, q: &[f64]) -> Result<Vec<ContactReport>, MdpError> {
        self.check_length("q", q.len(), self.robot.n_q())?;
        let frames = self.robot.body.frames(q);
        Ok((0..self.robot.contacts.len())
            .map(|i| {
                let k = self.kinematics(q, &frames, i);
                let query = (k.depth < 0.0).then(|| self.sets[i].query(k.depth, k.tilt));
                ContactReport {
                    name: self.robot.contacts[i].name.clone(),
                    in_contact: k.depth < 0.0,
                    depth: k.depth,
                    tilt: k.tilt,
                    clamped: query.as_ref().and_then(|w| w.clamped).or(k.clamped),
                    outside: query.is_some_and(|w| w.outside),
                    wrench: [0.0; 3],
                    wrench_world: [0.0; 3],
                    torque_point: k.torque_point,
                }
            })
            .collect())
    }

    /// One step from (q, v) under inputs u.
    #[allow(non_snake_case)]
    pub fn step(&self, q: &[f64], v: &[f64], u: &[f64]) -> Result<StepReport, MdpError> {
        let n = self.robot.n_q();
        self.check_length("q", q.len(), n)?;
        self.check_length("v", v.len(), n)?;
        self.check_length("u", u.len(), self.robot.inputs.len())?;
        let h = self.options.step;
        let (t, normal) = self.surface_axes();

        // Contacts and their wrench sets.
        let frames = self.robot.body.frames(q);
        let kinematics: Vec<ContactKinematics> = (0..self.robot.contacts.len())
            .map(|i| self.kinematics(q, &frames, i))
            .collect();
        let mut reports: Vec<ContactReport> = Vec::with_capacity(kinematics.len());
        let mut active: Vec<(usize, Vec<[f64; 3]>)> = Vec::new();
        for (i, k) in kinematics.iter().enumerate() {
            let mut clamped = k.clamped;
            let mut outside = false;
            if k.depth < 0.0 {
                let query = self.sets[i].query(k.depth, k.tilt);
                clamped = query.clamped.or(clamped);
                outside = query.outside;
                // A set with no nonzero wrench carries nothing: no contact for the QP.
                if query.vertices.iter().any(|w| w.iter().any(|x| *x != 0.0)) {
                    active.push((i, query.vertices));
                }
            }
            reports.push(ContactReport {
                name: self.robot.contacts[i].name.clone(),
                in_contact: k.depth < 0.0,
                depth: k.depth,
                tilt: k.tilt,
                clamped,
                outside,
                wrench: [0.0; 3],
                wrench_world: [0.0; 3],
                torque_point: k.torque_point,
            });
        }

        // Free motion, with the joint hold implicit.
        let M = self.robot.body.mass_matrix_f64(q);
        let mut M_step = M.clone();
        let mut force = DVector::from_vec(self.robot.generalized_forces(q, v, u))
            - DVector::from_vec(self.robot.body.bias_forces(q, v));
        if let Some(hold) = &self.options.joint_hold {
            for j in 3..n {
                M_step[(j, j)] += h * hold.damping + h * h * hold.stiffness;
                force[j] -= hold.stiffness * (q[j] - self.hold_target[j]);
            }
        }
        // A locked coordinate (a guide's) does not move: its row and column leave the step
        // (an identity row, no force, no contact column), so the rest is the free
        // coordinates' step.
        let mut M = M;
        let locked = &self.robot.locked;
        for &j in locked {
            for i in 0..n {
                for m in [&mut M, &mut M_step] {
                    m[(i, j)] = 0.0;
                    m[(j, i)] = 0.0;
                }
            }
            M_step[(j, j)] = 1.0;
            force[j] = 0.0;
        }
        let cholesky = M_step
            .clone()
            .cholesky()
            .ok_or_else(|| MdpError::Robot("mass matrix not positive definite".into()))?;
        let v_vec = DVector::from_column_slice(v);
        let v_free = cholesky.solve(&(&M * &v_vec + h * force));
        if active.is_empty() {
            return Ok(StepReport::advance(q, &v_free, h, reports));
        }

        // The QP's data: Q = Gᵀ Ĥ G, r = Gᵀ Ĥ v_free, G = M̃⁻¹ J_tᵀ.
        let N = active.len();
        let mut J_t = DMatrix::zeros(3 * N, n);
        let mut H_hat = M_step.clone();
        for (a, (i, _)) in active.iter().enumerate() {
            J_t.rows_mut(3 * a, 3).copy_from(&kinematics[*i].twist_r);
            let mut J_p = kinematics[*i].twist_center.clone();
            for &j in locked {
                J_t.column_mut(j).fill(0.0);
                J_p.column_mut(j).fill(0.0);
            }
            let J_p = &J_p;
            let M_g = DMatrix::from_diagonal(&DVector::from_row_slice(&self.grain_inertia(*i)));
            H_hat += J_p.transpose() * M_g * J_p;
        }
        let G = cholesky.solve(&J_t.transpose());
        let HG = &H_hat * &G;
        let mut Q = G.transpose() * &HG;
        Q = 0.5 * (&Q + Q.transpose());
        let r = HG.transpose() * &v_free;

        let vertices: Vec<&[[f64; 3]]> = active.iter().map(|(_, v)| v.as_slice()).collect();
        let c = match (self.options.form, self.options.solver) {
            (WrenchForm::HalfSpaces, solver) => {
                let hulls = active
                    .iter()
                    .map(|(i, set)| {
                        HalfSpaces::of_wrench_space(set).map_err(|source| MdpError::Hull {
                            contact: self.robot.contacts[*i].name.clone(),
                            depth: kinematics[*i].depth,
                            tilt: kinematics[*i].tilt,
                            source,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut c = if solver == QpSolver::ActiveSet {
                    active_set::solve_half_spaces(&Q, &r, &hulls, h)?
                } else {
                    let c = qp::clarabel_half_spaces(&Q, &r, &hulls, h)?;
                    match qp::polish_half_spaces(&Q, &r, &hulls, h, &c) {
                        Some(polished)
                            if qp::objective(&Q, &r, &polished) <= qp::objective(&Q, &r, &c) =>
                        {
                            polished
                        }
                        _ => c,
                    }
                };
                qp::into_half_spaces(&mut c, &hulls, h);
                c
            }
            (WrenchForm::Vertices, solver) => vertex_impulses(&Q, &r, &vertices, h, solver)?,
        };
        let c = qp::feasible_and_no_worse(&Q, &r, c);

        let v_next = v_free + G * &c;
        for (a, (i, _)) in active.iter().enumerate() {
            let w = [c[3 * a] / h, c[3 * a + 1] / h, c[3 * a + 2] / h];
            reports[*i].wrench = w;
            reports[*i].wrench_world = [
                w[0] * t[0] + w[1] * normal[0],
                w[0] * t[1] + w[1] * normal[1],
                w[2],
            ];
        }
        Ok(StepReport::advance(q, &v_next, h, reports))
    }
}

impl StepReport {
    /// q⁺ = q + h v⁺.
    fn advance(q: &[f64], v_next: &DVector<f64>, h: f64, contacts: Vec<ContactReport>) -> Self {
        StepReport {
            q: q.iter()
                .zip(v_next.iter())
                .map(|(qi, vi)| qi + h * vi)
                .collect(),
            v: v_next.iter().copied().collect(),
            contacts,
        }
    }
}

/// The contact impulses c of one step in the vertex form, by `solver` (see the module docs);
/// the caller passes them through `qp::feasible_and_no_worse`.
#[allow(non_snake_case)]
pub(crate) fn vertex_impulses(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    vertices: &[&[[f64; 3]]],
    h: f64,
    solver: QpSolver,
) -> Result<DVector<f64>, MdpError> {
    let N = vertices.len();
    let mut weights = match solver {
        QpSolver::Clarabel => qp::clarabel_vertices(Q, r, vertices, h)?,
        QpSolver::ActiveSet => active_set::solve_vertices(Q, r, vertices, h)?,
        QpSolver::BarrierNewton => {
            // The reduced V-form: P = (hB)ᵀ Q (hB), p = (hB)ᵀ r.
            let m: usize = vertices.iter().map(|s| s.len()).sum();
            let mut hB = DMatrix::zeros(3 * N, m);
            let mut column = 0;
            for (a, set) in vertices.iter().enumerate() {
                for w in set.iter() {
                    for k in 0..3 {
                        hB[(3 * a + k, column)] = h * w[k];
                    }
                    column += 1;
                }
            }
            let P = hB.transpose() * Q * &hB;
            let p = hB.transpose() * r;
            let blocks: Vec<usize> = vertices.iter().map(|s| s.len()).collect();
            barrier::solve(&P, &p, &blocks)?
        }
    };
    let mut c = qp::impulses_of_weights(vertices, &mut weights, h);
    // The active set ends exactly on its face: only the interior points polish.
    let polished = (solver != QpSolver::ActiveSet)
        .then(|| qp::polish_vertices(Q, r, vertices, h, &weights))
        .flatten();
    if let Some(mut polished) = polished {
        let better = qp::impulses_of_weights(vertices, &mut polished, h);
        if qp::objective(Q, r, &better) <= qp::objective(Q, r, &c) {
            c = better;
        }
    }
    Ok(c)
}
