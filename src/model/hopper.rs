//! The spring-legged jumper of MODEL.md section 1: motor block, thrust rod and foot disc on a
//! vertical rail, a spring with viscous loss between rod and foot, and a linear actuator
//! under a PI velocity loop between motor and rod.

use serde::{Deserialize, Serialize};

use crate::scalar::Scalar;
use crate::terrain::Terrain;

/// Indices into the hopper's state vector.
pub mod state {
    pub const Z_M: usize = 0;
    pub const V_M: usize = 1;
    pub const Z_R: usize = 2;
    pub const V_R: usize = 3;
    pub const Z_F: usize = 4;
    pub const V_F: usize = 5;
    pub const E: usize = 6;
    pub const Z_D: usize = 7;
    pub const COUNT: usize = 8;
}

pub const STATE_NAMES: [&str; state::COUNT] =
    ["z_m", "v_m", "z_r", "v_r", "z_f", "v_f", "e", "z_d"];
pub const CONTROL_NAMES: [&str; 1] = ["u"];

/// Whether the foot is on the terrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    Stance,
    Flight,
}

impl Domain {
    pub fn name(self) -> &'static str {
        match self {
            Domain::Stance => "stance",
            Domain::Flight => "flight",
        }
    }
}

/// The hopper's parameters, as a problem file's `robot:` section gives them (SI units; the
/// defaults are MODEL.md's table). This is their one declaration: the problem schema reads it
/// (`problem::Robot`) and [`Hopper`] carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HopperParams {
    /// m_m: motor block mass \[kg\]. Default 0.948 (paper).
    pub motor_mass: f64,
    /// m_r: thrust rod mass \[kg\]. Default 0.165 (paper).
    pub rod_mass: f64,
    /// m_f: foot mass \[kg\]. Default 0.044 (paper).
    pub foot_mass: f64,
    /// R: foot disc radius \[m\]. Default 0.038 (paper: a 7.6 cm disc).
    pub foot_radius: f64,
    /// k_s: leg spring stiffness \[N/m\]. Default 2730 (paper).
    pub spring_stiffness: f64,
    /// c_s: leg spring viscous damping \[N s/m\]. Default 2.0 (loam's; the paper gives none).
    pub spring_damping: f64,
    /// l_0: spring rest length, the rod–foot gap at zero spring force \[m\]. Default 0.060 (loam's).
    pub spring_rest_length: f64,
    /// K_m: actuator force constant \[N/A\]. Default 3.81 (paper).
    pub force_constant: f64,
    /// P_p: drive's position gain \[1/s\]. Default 100 (loam's).
    pub position_gain: f64,
    /// V_f: drive's velocity feedforward \[-\]. Default 1 (loam's).
    pub velocity_feedforward: f64,
    /// V_p: drive's proportional velocity gain \[A/(m/s)\]. Default 10 (loam's).
    pub velocity_gain: f64,
    /// V_i: drive's integral velocity gain \[A/m\]. Default 40 (loam's).
    pub integral_gain: f64,
    /// The robot model: `hopper` here. Planar robots (`planar_foot`, `monopod`, `quadruped`)
    /// are read by the planar schema (`problem::planar`). Default `hopper`.
    pub model: HopperModel,
}

impl Default for HopperParams {
    fn default() -> Self {
        HopperParams {
            motor_mass: 0.948,
            rod_mass: 0.165,
            foot_mass: 0.044,
            foot_radius: 0.038,
            spring_stiffness: 2730.0,
            spring_damping: 2.0,
            spring_rest_length: 0.060,
            force_constant: 3.81,
            position_gain: 100.0,
            velocity_feedforward: 1.0,
            velocity_gain: 10.0,
            integral_gain: 40.0,
            model: HopperModel::Hopper,
        }
    }
}

/// The one robot model of this schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HopperModel {
    /// The spring-legged jumper of MODEL.md section 1.
    #[default]
    Hopper,
}

/// The hopper as the equations see it: its parameters and gravity.
#[derive(Clone, Debug, PartialEq)]
pub struct Hopper {
    pub params: HopperParams,
    pub gravity: f64,
}

/// Forces acting at one state, for output and constraints.
pub struct Forces<S> {
    /// F_s: spring force on the rod, + = up.
    pub spring: S,
    /// F_m: actuator force pushing motor and rod apart.
    pub motor: S,
    /// The terrain's force on the foot, + = up (0 in flight).
    pub terrain: S,
}

impl Hopper {
    pub fn total_mass(&self) -> f64 {
        self.params.motor_mass + self.params.rod_mass + self.params.foot_mass
    }

    /// F_s = k_s (z_f − z_r + l_0) − c_s (ż_r − ż_f).
    pub fn spring_force<S: Scalar>(&self, x: &[S]) -> S {
        use state::*;
        (x[Z_F].clone() - x[Z_R].clone() + self.params.spring_rest_length)
            * self.params.spring_stiffness
            - (x[V_R].clone() - x[V_F].clone()) * self.params.spring_damping
    }

    /// v_err = P_p (z_d − (z_m − z_r)) + V_f u − (ż_m − ż_r): the drive's velocity error.
    pub fn velocity_error<S: Scalar>(&self, x: &[S], u: &S) -> S {
        use state::*;
        (x[Z_D].clone() - (x[Z_M].clone() - x[Z_R].clone())) * self.params.position_gain
            + u.clone() * self.params.velocity_feedforward
            - (x[V_M].clone() - x[V_R].clone())
    }

    /// F_m = K_m (V_p v_err + V_i e).
    pub fn motor_force<S: Scalar>(&self, x: &[S], u: &S) -> S {
        (self.velocity_error(x, u) * self.params.velocity_gain
            + x[state::E].clone() * self.params.integral_gain)
            * self.params.force_constant
    }

    /// The load the foot puts on the ground: F_s + m_f g.
    pub fn ground_load<S: Scalar>(&self, x: &[S]) -> S {
        self.spring_force(x) + self.params.foot_mass * self.gravity
    }

    /// Vertical momentum of the three bodies.
    pub fn momentum<S: Scalar>(&self, x: &[S]) -> S {
        use state::*;
        x[V_M].clone() * self.params.motor_mass
            + x[V_R].clone() * self.params.rod_mass
            + x[V_F].clone() * self.params.foot_mass
    }

    /// Height of the centre of mass.
    pub fn centre_of_mass<S: Scalar>(&self, x: &[S]) -> S {
        use state::*;
        (x[Z_M].clone() * self.params.motor_mass
            + x[Z_R].clone() * self.params.rod_mass
            + x[Z_F].clone() * self.params.foot_mass)
            / self.total_mass()
    }

    /// The state derivative in `domain` on `terrain` under command velocity u = ż_d.
    pub fn derivatives<S: Scalar>(
        &self,
        domain: Domain,
        terrain: &Terrain,
        x: &[S],
        u: &S,
    ) -> Vec<S> {
        self.derivatives_and_forces(domain, terrain, x, u).0
    }

    pub fn forces<S: Scalar>(
        &self,
        domain: Domain,
        terrain: &Terrain,
        x: &[S],
        u: &S,
    ) -> Forces<S> {
        self.derivatives_and_forces(domain, terrain, x, u).1
    }

    fn derivatives_and_forces<S: Scalar>(
        &self,
        domain: Domain,
        terrain: &Terrain,
        x: &[S],
        u: &S,
    ) -> (Vec<S>, Forces<S>) {
        use state::*;
        let g = self.gravity;
        let Leg {
            spring,
            motor,
            motor_acceleration: a_m,
            rod_acceleration: a_r,
            velocity_error: v_err,
        } = self.leg(x, u);
        let (a_f, terrain_force) = match domain {
            Domain::Flight => ((-spring.clone()) / self.params.foot_mass - g, S::zero()),
            Domain::Stance => {
                let load = spring.clone() + self.params.foot_mass * g;
                let foot = terrain.stance(&x[Z_F], &x[V_F], &load, self.params.foot_mass);
                (foot.acceleration, foot.force)
            }
        };
        let dx = vec![
            x[V_M].clone(),
            a_m,
            x[V_R].clone(),
            a_r,
            x[V_F].clone(),
            a_f,
            v_err,
            u.clone(),
        ];
        (
            dx,
            Forces {
                spring,
                motor,
                terrain: terrain_force,
            },
        )
    }

    /// The leg's dynamics whatever holds the foot: spring and motor forces, the motor's and
    /// rod's accelerations and the drive's velocity error (the rate of its integrator e).
    /// The planner's derivatives and the DEM coupling (whose foot the grains move) both use
    /// it.
    pub fn leg<S: Scalar>(&self, x: &[S], u: &S) -> Leg<S> {
        use state::*;
        let g = self.gravity;
        let spring = self.spring_force(x);
        let v_err = self.velocity_error(x, u);
        let motor = (v_err.clone() * self.params.velocity_gain
            + x[E].clone() * self.params.integral_gain)
            * self.params.force_constant;
        let a_m = motor.clone() / self.params.motor_mass - g;
        let a_r = (spring.clone() - motor.clone()) / self.params.rod_mass - g;
        Leg {
            spring,
            motor,
            motor_acceleration: a_m,
            rod_acceleration: a_r,
            velocity_error: v_err,
        }
    }

    /// The robot at rest on `terrain` with the actuator at `actuator_position` (z_m − z_r):
    /// foot at its rest height, spring carrying motor and rod, the drive's integrator holding
    /// the motor's weight, and the command equal to the actuator position.
    pub fn rest_state(&self, terrain: &Terrain, actuator_position: f64) -> [f64; state::COUNT] {
        let g = self.gravity;
        let z_f = terrain.rest_height(self.total_mass() * g);
        let z_r = z_f + self.params.spring_rest_length
            - (self.params.motor_mass + self.params.rod_mass) * g / self.params.spring_stiffness;
        let e =
            self.params.motor_mass * g / (self.params.force_constant * self.params.integral_gain);
        [
            z_r + actuator_position,
            0.0,
            z_r,
            0.0,
            z_f,
            0.0,
            e,
            actuator_position,
        ]
    }
}

/// What [`Hopper::leg`] returns.
pub struct Leg<S> {
    /// F_s, on the rod (+ = up).
    pub spring: S,
    /// F_m, on the motor (+ = up; the rod feels −F_m).
    pub motor: S,
    pub motor_acceleration: S,
    pub rod_acceleration: S,
    /// v_err = ė.
    pub velocity_error: S,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's robot: the parameters' defaults are MODEL.md's table, and g = 9.81 m/s²
    /// (a problem file's default).
    pub fn paper_hopper() -> Hopper {
        Hopper {
            params: HopperParams::default(),
            gravity: 9.81,
        }
    }

    #[test]
    fn the_rest_state_is_an_equilibrium_at_any_actuator_position() {
        let robot = paper_hopper();
        for position in [-0.0275, 0.0, 0.02] {
            let x = robot.rest_state(&Terrain::Rigid, position);
            let dx = robot.derivatives(Domain::Stance, &Terrain::Rigid, &x, &0.0);
            assert!(dx.iter().all(|v| v.abs() < 1e-12), "{dx:?}");
            // MODEL.md: the static rod–foot gap is 56 mm.
            assert!((x[state::Z_R] - x[state::Z_F] - 0.056).abs() < 0.0005);
        }
    }
}
