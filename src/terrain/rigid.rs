//! Rigid planar ground for the planar robots: the ground is z = 0, a foot on it does not move
//! (sticking contact), the ground pushes but never pulls (F_z ≥ 0), friction is Coulomb's
//! (|F_x| ≤ μ F_z) and a flat sole of half-width w carries a torque |τ| ≤ w F_z (the centre of
//! pressure stays under the sole). Touchdown is a plastic impact.
//!
//! A contact's wrench (F_x, F_z, τ) acts at the sole centre, in the world frame. A point foot
//! (half-width 0) constrains the point's x and z; a flat sole also its body's angle, so it
//! carries τ. Everything is generic over the scalar: the planner traces these rows, the replay
//! evaluates them.

use serde::{Deserialize, Serialize};

use super::added_mass::Resistance;
use super::contact::{ContactModel, FootNormal, LawEnd, Normal};
use crate::model::planar::PlanarRobot;
use crate::scalar::Scalar;

/// Rigid ground with Coulomb friction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RigidGround {
    /// μ \[-\].
    pub friction: f64,
}

/// A named inequality `lower ≤ expr ≤ upper` with the magnitude it is scaled by.
pub struct Row<S> {
    pub name: String,
    pub expr: S,
    pub lower: f64,
    pub upper: f64,
    pub nominal: f64,
}

impl<S> Row<S> {
    pub fn at_least(name: impl Into<String>, expr: S, lower: f64, nominal: f64) -> Row<S> {
        Row {
            name: name.into(),
            expr,
            lower,
            upper: f64::INFINITY,
            nominal,
        }
    }
    pub fn at_most(name: impl Into<String>, expr: S, upper: f64, nominal: f64) -> Row<S> {
        Row {
            name: name.into(),
            expr,
            lower: f64::NEG_INFINITY,
            upper,
            nominal,
        }
    }
    pub fn equal(name: impl Into<String>, expr: S, value: f64, nominal: f64) -> Row<S> {
        Row {
            name: name.into(),
            expr,
            lower: value,
            upper: value,
            nominal,
        }
    }
}

/// Wrench variables per contact: F_x, F_z \[N\] and τ \[N m\] at the sole centre.
pub const WRENCH: usize = 3;

/// How many directions a contact holds: x and z of its point, and its angle for a flat sole.
pub fn held_directions(robot: &PlanarRobot, contact: usize) -> usize {
    if robot.contacts[contact].half_width > 0.0 {
        3
    } else {
        2
    }
}

/// The generalized force of a contact wrench: Jᵀ (F_x, F_z) + J_θᵀ τ.
pub fn generalized_force<S: Scalar>(
    robot: &PlanarRobot,
    contact: usize,
    q: &[S],
    wrench: &[S],
) -> Vec<S> {
    let c = &robot.contacts[contact];
    let w = [wrench[0].clone(), wrench[1].clone(), wrench[2].clone()];
    robot.body.wrench_to_generalized(q, c.body, c.point, &w)
}

/// The held directions' velocity: (ẋ, ż) of the sole centre, and ω of its body for a flat sole.
pub fn velocity<S: Scalar>(robot: &PlanarRobot, contact: usize, q: &[S], v: &[S]) -> Vec<S> {
    let c = &robot.contacts[contact];
    let [vx, vz] = robot.body.point_velocity(q, v, c.body, c.point);
    let mut rows = vec![vx, vz];
    if held_directions(robot, contact) == 3 {
        rows.push(dot_constant(&robot.body.angle_jacobian(c.body), v));
    }
    rows
}

/// The held directions' acceleration J a + J̇ v.
pub fn acceleration<S: Scalar>(
    robot: &PlanarRobot,
    contact: usize,
    q: &[S],
    v: &[S],
    a: &[S],
) -> Vec<S> {
    let c = &robot.contacts[contact];
    let [jx, jz] = robot.body.point_jacobian(q, c.body, c.point);
    let [bx, bz] = robot.body.point_bias_acceleration(q, v, c.body, c.point);
    let mut rows = vec![dot(&jx, a) + bx, dot(&jz, a) + bz];
    if held_directions(robot, contact) == 3 {
        rows.push(dot_constant(&robot.body.angle_jacobian(c.body), a));
    }
    rows
}

/// The rows a contact's Jacobian contributes, for the simulator's constrained dynamics:
/// one row of n_q per held direction.
pub fn jacobian<S: Scalar>(robot: &PlanarRobot, contact: usize, q: &[S]) -> Vec<Vec<S>> {
    let c = &robot.contacts[contact];
    let [jx, jz] = robot.body.point_jacobian(q, c.body, c.point);
    let mut rows = vec![jx, jz];
    if held_directions(robot, contact) == 3 {
        rows.push(
            robot
                .body
                .angle_jacobian(c.body)
                .into_iter()
                .map(S::constant)
                .collect(),
        );
    }
    rows
}

/// J̇ v of the held directions (0 for the angle: planar angle Jacobians are constant).
pub fn bias_acceleration<S: Scalar>(
    robot: &PlanarRobot,
    contact: usize,
    q: &[S],
    v: &[S],
) -> Vec<S> {
    let c = &robot.contacts[contact];
    let [bx, bz] = robot.body.point_bias_acceleration(q, v, c.body, c.point);
    let mut rows = vec![bx, bz];
    if held_directions(robot, contact) == 3 {
        rows.push(S::zero());
    }
    rows
}

/// Where a touching-down contact must be: its sole centre at z = 0 and, for a flat sole, its
/// body level (angle 0).
pub fn touchdown_gap<S: Scalar>(robot: &PlanarRobot, contact: usize, q: &[S]) -> Vec<S> {
    let c = &robot.contacts[contact];
    let [_, z] = robot.body.point(q, c.body, c.point);
    let mut rows = vec![z];
    if held_directions(robot, contact) == 3 {
        rows.push(robot.body.frames(q)[c.body].angle.clone());
    }
    rows
}

/// Heights above the ground of a foot in the air: the sole centre, or both sole edges.
pub fn clearance<S: Scalar>(robot: &PlanarRobot, contact: usize, q: &[S]) -> Vec<S> {
    let c = &robot.contacts[contact];
    if c.half_width > 0.0 {
        [-c.half_width, c.half_width]
            .iter()
            .map(|dx| {
                let p = [c.point[0] + dx, c.point[1]];
                robot.body.point(q, c.body, p)[1].clone()
            })
            .collect()
    } else {
        vec![robot.body.point(q, c.body, c.point)[1].clone()]
    }
}

impl RigidGround {
    /// The friction cone and the centre-of-pressure rows of a contact wrench (or impulse)
    /// `w` on a sole of `half_width`: μ F_z ± F_x ≥ 0 and w F_z ± τ ≥ 0. F_z ≥ 0 is a bound on
    /// the variable.
    pub fn cone<S: Scalar>(
        &self,
        name: &str,
        w: &[S],
        half_width: f64,
        nominal: f64,
    ) -> Vec<Row<S>> {
        let mut rows = Vec::new();
        for (sign, side) in [(1.0, "+"), (-1.0, "-")] {
            rows.push(Row::at_least(
                format!("{name} friction cone {side}"),
                w[1].clone() * self.friction - w[0].clone() * sign,
                0.0,
                nominal,
            ));
        }
        if half_width > 0.0 {
            for (sign, side) in [(1.0, "+"), (-1.0, "-")] {
                rows.push(Row::at_least(
                    format!("{name} centre of pressure {side}"),
                    w[1].clone() * half_width - w[2].clone() * sign,
                    0.0,
                    nominal,
                ));
            }
        }
        rows
    }

    /// How far a wrench is outside the cone, relative to F_z (0 inside): for the simulator's
    /// report of where sticking would need more friction than the ground has.
    pub fn cone_excess(&self, w: &[f64], half_width: f64) -> f64 {
        let fz = w[1].max(1e-12);
        let friction = (w[0].abs() - self.friction * fz).max(0.0) / fz;
        let pressure = if half_width > 0.0 {
            (w[2].abs() - half_width * fz).max(0.0) / (half_width * fz)
        } else {
            0.0
        };
        friction.max(pressure)
    }
}

/// Rigid ground as a contact model: a held foot does not move along the normal, lifts off
/// when its normal force falls to 0, and lands with a plastic impact.
impl<S: Scalar> ContactModel<S> for RigidGround {
    fn name(&self) -> &'static str {
        "rigid"
    }
    fn ground(&self) -> RigidGround {
        self.clone()
    }
    fn yields(&self) -> bool {
        false
    }
    fn rest_depth(&self, _load: f64) -> f64 {
        0.0
    }
    fn law(&self, _z: &S, _vz: &S) -> Resistance<S> {
        Resistance {
            added_mass: S::zero(),
            force: S::zero(),
        }
    }
    fn stance_rows(&self, foot: &FootNormal<S>, _weight: f64) -> Vec<Row<S>> {
        vec![Row::equal(
            format!("{} holds 1", foot.name),
            foot.az.clone(),
            0.0,
            1.0,
        )]
    }
    fn lifts_at_zero_force(&self) -> bool {
        true
    }
    fn lift_off_rows(&self, _foot: &FootNormal<S>, _least_lift: f64) -> Vec<Row<S>> {
        Vec::new()
    }
    fn normal_impact(&self) -> bool {
        true
    }
    fn touchdown(&self) -> Normal {
        Normal::Held
    }
    fn law_guard(&self, _z: f64, _vz: f64) -> f64 {
        unreachable!("rigid ground holds every foot: no foot moves under a law")
    }
    fn law_end(&self) -> LawEnd {
        LawEnd::Sticks
    }
}

fn dot<S: Scalar>(row: &[S], x: &[S]) -> S {
    row.iter()
        .zip(x)
        .fold(S::zero(), |acc, (r, x)| acc + r.clone() * x.clone())
}

fn dot_constant<S: Scalar>(row: &[f64], x: &[S]) -> S {
    row.iter()
        .zip(x)
        .filter(|(r, _)| **r != 0.0)
        .fold(S::zero(), |acc, (r, x)| acc + x.clone() * *r)
}
