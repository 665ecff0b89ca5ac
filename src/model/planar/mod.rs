//! Planar robots as data: a multibody tree plus the names, units and nominal magnitudes of
//! its coordinates, its actuators, its contact points, its passive joint springs and a
//! standing posture. A new robot is a new file that fills one [`PlanarRobot`] in; the
//! planner and simulators read only this description.

pub mod description;
pub mod foot;
pub mod monopod;
pub mod quadruped;
pub mod urdf;

use thiserror::Error;

use crate::model::multibody::{Multibody, MultibodyError};
use crate::scalar::Scalar;

pub use foot::PlanarFootParams;
pub use monopod::MonopodParams;
pub use quadruped::QuadrupedParams;

/// One generalized coordinate's name and unit, for output and scaling.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// e.g. "x", "z", "pitch", "hip", "leg".
    pub name: String,
    /// "m" or "rad".
    pub unit: String,
    /// A typical magnitude, in `unit`, for scaling the planner's variables.
    pub nominal: f64,
    /// (lower, upper) bounds on the coordinate [`unit`]; (−∞, ∞) when unlimited (the base's
    /// coordinates always are). The planner bounds every node by them; the replay counts the
    /// samples outside them.
    pub position_limit: (f64, f64),
    /// Bound on |q̇| [`unit`/s]; ∞ when unlimited.
    pub velocity_limit: f64,
}

impl Channel {
    /// Whether the coordinate has a position or a velocity limit.
    pub fn is_limited(&self) -> bool {
        self.position_limit.0.is_finite()
            || self.position_limit.1.is_finite()
            || self.velocity_limit.is_finite()
    }
}

/// One actuator: a force or torque acting on one generalized coordinate (so the input matrix
/// B is a selection matrix).
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub name: String,
    /// "N" or "N m".
    pub unit: String,
    /// The coordinate it acts on.
    pub coordinate: usize,
    /// (lower, upper) bounds on the effort it applies (N or N m), a drive's force included.
    pub limit: (f64, f64),
    /// A drive between the planner and the joint (a servo with its own states); `None` for an
    /// ideal torque or force source, whose input is the effort itself.
    pub drive: Option<Drive>,
}

/// A position servo with a PI velocity loop between the command and the joint, the hopper's
/// linear actuator (docs/MODEL.md section 1): the planner's input is the command rate u = ż_d
/// [m/s or rad/s]; the drive has two states, its integrator e and its command z_d, and applies
///
/// ```text
/// v_err = P_p (z_d − q) + V_f u − q̇,   ė = v_err,   ż_d = u,
/// F     = K_m (V_p v_err + V_i e)
/// ```
///
/// on its coordinate q (a force on a prismatic joint, a torque on a revolute one).
#[derive(Clone, Debug, PartialEq)]
pub struct Drive {
    /// K_m: force (or torque) per ampere.
    pub force_constant: f64,
    /// P_p: the position loop's gain [1/s].
    pub position_gain: f64,
    /// V_f: velocity feedforward [-].
    pub velocity_feedforward: f64,
    /// V_p: the velocity loop's proportional gain [A/(unit/s)].
    pub velocity_gain: f64,
    /// V_i: the velocity loop's integral gain [A/unit].
    pub integral_gain: f64,
}

impl Drive {
    /// v_err from the joint's position and rate, the drive's command z_d and the command
    /// rate u.
    pub fn velocity_error<S: Scalar>(&self, q: &S, v: &S, command: &S, u: &S) -> S {
        (command.clone() - q.clone()) * self.position_gain + u.clone() * self.velocity_feedforward
            - v.clone()
    }

    /// F = K_m (V_p v_err + V_i e).
    pub fn force<S: Scalar>(&self, velocity_error: S, integral: &S) -> S {
        (velocity_error * self.velocity_gain + integral.clone() * self.integral_gain)
            * self.force_constant
    }

    /// The integrator's value that holds `force` with the drive at rest (v_err = 0).
    pub fn holding_integral(&self, force: f64) -> f64 {
        force / (self.force_constant * self.integral_gain)
    }
}

impl Input {
    /// The larger magnitude of its bounds: the effort objective's scale.
    pub fn scale(&self) -> f64 {
        self.limit.0.abs().max(self.limit.1.abs())
    }
}

/// A point (or a flat sole) that can touch the ground.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactPoint {
    pub name: String,
    pub body: usize,
    /// The contact point (the sole's centre) in the body frame [m].
    pub point: [f64; 2],
    /// 0 for a point foot; > 0 for a flat sole of this half width [m] that can carry a torque
    /// |τ| ≤ F_z · half_width about its centre. The sole lies along the body's x axis.
    pub half_width: f64,
    /// A point foot's footprint on grains, a flat disc of this radius [m] (the robot file's
    /// `radius`): the added-mass bed's default `foot_radius`, a DEM replay's foot.
    pub radius: Option<f64>,
}

/// A passive spring and viscous damper on one joint coordinate:
/// Q = −stiffness (q − rest) − damping q̇.
#[derive(Clone, Debug, PartialEq)]
pub struct JointSpring {
    pub coordinate: usize,
    /// [N/m] on a prismatic coordinate, [N m/rad] on a revolute one.
    pub stiffness: f64,
    /// [N s/m] or [N m s/rad].
    pub damping: f64,
    /// Rest value of the coordinate [m or rad].
    pub rest: f64,
}

/// A planar robot: its bodies and everything the planner needs to know about them.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarRobot {
    pub name: String,
    pub body: Multibody,
    /// One per generalized coordinate.
    pub coordinates: Vec<Channel>,
    pub inputs: Vec<Input>,
    pub contacts: Vec<ContactPoint>,
    pub springs: Vec<JointSpring>,
    /// A nominal configuration with every foot just touching z = 0, for guesses and tests.
    pub standing: Vec<f64>,
    /// Base coordinates held by a frictionless guide (a rail holds `x` and `pitch`) at their
    /// standing values: they never move and the guide supplies whatever force holds them.
    pub locked: Vec<usize>,
}

/// Why a robot description is inconsistent.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PlanarRobotError {
    #[error("robot `{robot}`: {source}")]
    Multibody {
        robot: String,
        source: MultibodyError,
    },
    #[error("robot `{robot}`: {message}")]
    Description { robot: String, message: String },
}

impl PlanarRobot {
    pub fn n_q(&self) -> usize {
        self.body.n_q()
    }

    /// The state's names: the coordinates, their rates `d_<name>`, then each drive's
    /// integrator and command (`<input>_integral`, `<input>_command`).
    pub fn state_names(&self) -> Vec<String> {
        let q = self.coordinates.iter().map(|c| c.name.clone());
        let v = self.coordinates.iter().map(|c| format!("d_{}", c.name));
        let drives = self
            .drives()
            .flat_map(|(i, _)| {
                let name = &self.inputs[i].name;
                [format!("{name}_integral"), format!("{name}_command")]
            })
            .collect::<Vec<_>>();
        q.chain(v).chain(drives).collect()
    }

    /// The inputs that are drives, with their index.
    pub fn drives(&self) -> impl Iterator<Item = (usize, &Drive)> {
        self.inputs
            .iter()
            .enumerate()
            .filter_map(|(i, input)| input.drive.as_ref().map(|d| (i, d)))
    }

    /// The state's length: q, q̇ and two states per drive.
    pub fn n_x(&self) -> usize {
        2 * self.n_q() + 2 * self.drives().count()
    }

    /// The efforts the inputs apply in state `x` under controls `u` (one per input): an ideal
    /// source's control is its effort; a drive's is its command rate, and its effort follows
    /// from its states ([`Drive`]).
    pub fn efforts<S: Scalar>(&self, x: &[S], u: &[S]) -> Vec<S> {
        let n = self.n_q();
        let mut k = 2 * n;
        self.inputs
            .iter()
            .zip(u)
            .map(|(input, ui)| match &input.drive {
                None => ui.clone(),
                Some(drive) => {
                    let j = input.coordinate;
                    let error = drive.velocity_error(&x[j], &x[n + j], &x[k + 1], ui);
                    let force = drive.force(error, &x[k]);
                    k += 2;
                    force
                }
            })
            .collect()
    }

    /// Each input's mechanical power: its effort (`efforts`) times its coordinate's rate.
    /// The cost of transport integrates its absolute value (the objective, smoothed at 0;
    /// `solution.json`'s key figure).
    pub fn input_powers<S: Scalar>(&self, x: &[S], u: &[S]) -> Vec<S> {
        let n = self.n_q();
        self.efforts(x, u)
            .into_iter()
            .zip(&self.inputs)
            .map(|(effort, input)| effort * x[n + input.coordinate].clone())
            .collect()
    }

    /// The drives' state rates (ė = v_err, ż_d = u per drive), in state order.
    pub fn drive_rates<S: Scalar>(&self, x: &[S], u: &[S]) -> Vec<S> {
        let n = self.n_q();
        let mut rates = Vec::new();
        for (k, (i, drive)) in self.drives().enumerate() {
            let j = self.inputs[i].coordinate;
            let command = &x[2 * n + 2 * k + 1];
            rates.push(drive.velocity_error(&x[j], &x[n + j], command, &u[i]));
            rates.push(u[i].clone());
        }
        rates
    }

    /// Index of the contact called `name`.
    pub fn contact(&self, name: &str) -> Option<usize> {
        self.contacts.iter().position(|c| c.name == name)
    }

    /// Index of the body called `name`.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.body.bodies.iter().position(|b| b.name == name)
    }

    /// Index of the input called `name`.
    pub fn input(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|i| i.name == name)
    }

    /// Index of the coordinate called `name`.
    pub fn coordinate(&self, name: &str) -> Option<usize> {
        self.coordinates.iter().position(|c| c.name == name)
    }

    /// Bounds on the state (q, q̇, drive states) from the coordinates' position and velocity
    /// limits, a locked coordinate held at its standing value: the planner's state bounds at
    /// every node; (−∞, ∞) where unlimited.
    pub fn state_bounds(&self) -> Vec<(f64, f64)> {
        let n = self.n_q();
        let mut bounds: Vec<(f64, f64)> =
            self.coordinates.iter().map(|c| c.position_limit).collect();
        bounds.extend(
            self.coordinates
                .iter()
                .map(|c| (-c.velocity_limit, c.velocity_limit)),
        );
        for &j in &self.locked {
            bounds[j] = (self.standing[j], self.standing[j]);
            bounds[n + j] = (0.0, 0.0);
        }
        bounds.resize(self.n_x(), (f64::NEG_INFINITY, f64::INFINITY));
        bounds
    }

    /// The coordinates outside their limits in state `x` = (q, q̇), by name, with the amount
    /// [unit or unit/s] by which each is outside (beyond `tolerance`).
    pub fn limit_violations(&self, x: &[f64], tolerance: f64) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for ((lo, hi), (name, value)) in self
            .state_bounds()
            .into_iter()
            .zip(self.state_names().into_iter().zip(x.iter().copied()))
        {
            let excess = (lo - value).max(value - hi);
            if excess > tolerance {
                out.push((name, excess));
            }
        }
        out
    }

    /// B u plus the springs' and dampers' forces, per coordinate.
    pub fn generalized_forces<S: Scalar>(&self, q: &[S], v: &[S], u: &[S]) -> Vec<S> {
        assert_eq!(u.len(), self.inputs.len(), "u has the wrong length");
        let mut forces = vec![S::zero(); self.n_q()];
        for (input, ui) in self.inputs.iter().zip(u) {
            let k = input.coordinate;
            forces[k] = forces[k].clone() + ui.clone();
        }
        for spring in &self.springs {
            let k = spring.coordinate;
            forces[k] = forces[k].clone()
                - (q[k].clone() - spring.rest) * spring.stiffness
                - v[k].clone() * spring.damping;
        }
        forces
    }

    /// q̈ under the generalized forces `generalized` (every force but the bias h(q, q̇)):
    /// M q̈ = f − h over the coordinates a guide leaves free, 0 for the locked ones.
    pub fn forward_dynamics(&self, q: &[f64], v: &[f64], generalized: &[f64]) -> Vec<f64> {
        if self.locked.is_empty() {
            return self
                .body
                .forward_dynamics_f64(q, v, generalized)
                .as_slice()
                .to_vec();
        }
        self.forward_dynamics_holding(q, v, generalized, &self.locked)
    }

    /// [`Self::forward_dynamics`] with the coordinates `held` (and the locked ones) held: their
    /// accelerations 0, the others' from the rows of the free coordinates (a robot settling
    /// on DEM grains moves straight down as one rigid body, `sim::dem::planar`).
    pub fn forward_dynamics_holding(
        &self,
        q: &[f64],
        v: &[f64],
        generalized: &[f64],
        held: &[usize],
    ) -> Vec<f64> {
        let free: Vec<usize> = (0..self.n_q())
            .filter(|j| !self.locked.contains(j) && !held.contains(j))
            .collect();
        let m = self.body.mass_matrix_f64(q);
        let h = self.body.bias_forces(q, v);
        let reduced =
            nalgebra::DMatrix::from_fn(free.len(), free.len(), |i, j| m[(free[i], free[j])]);
        let rhs = nalgebra::DVector::from_fn(free.len(), |i, _| generalized[free[i]] - h[free[i]]);
        let a_free = reduced
            .cholesky()
            .expect("mass matrix not positive definite: validate the robot first")
            .solve(&rhs);
        let mut a = vec![0.0; self.n_q()];
        for (k, &j) in free.iter().enumerate() {
            a[j] = a_free[k];
        }
        a
    }

    /// The springs' stored energy Σ ½ k (q − rest)² [J] (the dampers store none).
    pub fn spring_energy<S: Scalar>(&self, q: &[S]) -> S {
        let mut e = S::zero();
        for spring in &self.springs {
            let d = q[spring.coordinate].clone() - spring.rest;
            e = e + d.clone() * d * (0.5 * spring.stiffness);
        }
        e
    }

    /// World position of a contact point [m].
    pub fn contact_point<S: Scalar>(&self, q: &[S], contact: usize) -> [S; 2] {
        let c = &self.contacts[contact];
        self.body.point(q, c.body, c.point)
    }

    /// Checks the multibody and that every index, limit and length agrees.
    pub fn validate(&self) -> Result<(), PlanarRobotError> {
        self.body
            .validate()
            .map_err(|source| PlanarRobotError::Multibody {
                robot: self.name.clone(),
                source,
            })?;
        let fail = |message: String| {
            Err(PlanarRobotError::Description {
                robot: self.name.clone(),
                message,
            })
        };
        let n = self.n_q();
        if self.coordinates.len() != n {
            return fail(format!(
                "{} coordinate names for {n} coordinates",
                self.coordinates.len()
            ));
        }
        if self.standing.len() != n {
            return fail(format!(
                "standing posture has {} entries, want {n}",
                self.standing.len()
            ));
        }
        for c in &self.coordinates {
            let (lower, upper) = c.position_limit;
            if !(lower < upper) || lower.is_nan() || upper.is_nan() {
                return fail(format!(
                    "coordinate `{}`: position limits must be [lower, upper] with lower < upper, got [{lower}, {upper}]",
                    c.name
                ));
            }
            if !(c.velocity_limit > 0.0) {
                return fail(format!(
                    "coordinate `{}`: velocity limit must be > 0, got {}",
                    c.name, c.velocity_limit
                ));
            }
        }
        for input in &self.inputs {
            if input.coordinate >= n {
                return fail(format!(
                    "input `{}` acts on coordinate {} of {n}",
                    input.name, input.coordinate
                ));
            }
            // lower < upper: the effort objective scales each input by its larger bound.
            if !(input.limit.0 < input.limit.1) {
                return fail(format!(
                    "input `{}`: limits must be [lower, upper] with lower < upper, got [{}, {}]",
                    input.name, input.limit.0, input.limit.1
                ));
            }
        }
        for contact in &self.contacts {
            if contact.body >= self.body.bodies.len() {
                return fail(format!(
                    "contact `{}` on missing body {}",
                    contact.name, contact.body
                ));
            }
            if !(contact.half_width >= 0.0 && contact.half_width.is_finite()) {
                return fail(format!(
                    "contact `{}`: half width must be >= 0 m, got {}",
                    contact.name, contact.half_width
                ));
            }
        }
        for &j in &self.locked {
            if j >= 3 {
                return fail(format!(
                    "coordinate `{}` is locked, but only the base's x, z and pitch can be",
                    self.coordinates[j.min(n - 1)].name
                ));
            }
        }
        for (i, drive) in self.drives() {
            let gains = [
                drive.force_constant,
                drive.position_gain,
                drive.velocity_feedforward,
                drive.velocity_gain,
                drive.integral_gain,
            ];
            if !gains.iter().all(|g| g.is_finite())
                || !(drive.force_constant > 0.0 && drive.integral_gain > 0.0)
            {
                return fail(format!(
                    "drive `{}`: gains must be finite, with force_constant and integral_gain > 0",
                    self.inputs[i].name
                ));
            }
        }
        for spring in &self.springs {
            if spring.coordinate < 3 || spring.coordinate >= n {
                return fail(format!(
                    "spring on coordinate {}, not a joint",
                    spring.coordinate
                ));
            }
            if !(spring.stiffness >= 0.0 && spring.damping >= 0.0) {
                return fail(format!(
                    "spring on `{}`: stiffness and damping must be >= 0",
                    self.coordinates[spring.coordinate].name
                ));
            }
        }
        Ok(())
    }
}

/// A coordinate channel, for the presets.
pub(crate) fn channel(name: &str, unit: &str, nominal: f64) -> Channel {
    Channel {
        name: name.into(),
        unit: unit.into(),
        nominal,
        position_limit: (f64::NEG_INFINITY, f64::INFINITY),
        velocity_limit: f64::INFINITY,
    }
}

/// The floating base's three coordinates.
pub(crate) fn base_channels(length: f64) -> Vec<Channel> {
    vec![
        channel("x", "m", length),
        channel("z", "m", length),
        channel("pitch", "rad", 1.0),
    ]
}
