//! A planar spring-legged monopod (Raibert-style hopper): a body with inertia, an actuated
//! hip at the body's COM, a leg link hanging from the hip, and a telescoping spring leg along
//! the link's axis ending in a small foot mass with a point contact. The leg coordinate is
//! the hip-to-foot length; an actuated thrust acts on it beside the spring, and the hip
//! torque swings the leg, which is what lets it place its foot and hop forward.
//!
//! Bodies: 0 `body` (frame at its COM), 1 `leg` (revolute at the body origin; its frame's
//! −z axis points along the leg, so hip = 0 is a vertical leg), 2 `foot` (prismatic along the
//! leg's −z axis from the hip; its frame origin is the foot point). Coordinates: x, z, pitch,
//! hip [rad], leg [m].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{base_channels, channel, ContactPoint, Input, JointSpring, PlanarRobot};
use crate::model::multibody::{Body, Joint, JointKind, Multibody};

/// The monopod's parameters (SI units). The defaults are loam's design values at the scale
/// of a small laboratory hopper, not a particular robot's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MonopodParams {
    /// Body mass \[kg\]. Default 10.
    pub body_mass: f64,
    /// Body inertia about its COM \[kg m²\]. Default 0.2 (≈ a 10 kg, 0.45 m long box).
    pub body_inertia: f64,
    /// Leg link mass \[kg\]. Default 1.
    pub leg_mass: f64,
    /// Leg link inertia about its COM \[kg m²\]. Default 0.02 (≈ a 1 kg, 0.5 m rod: m l²/12).
    pub leg_inertia: f64,
    /// Distance from the hip to the leg link's COM along the leg \[m\]. Default 0.15.
    pub leg_com: f64,
    /// Foot mass \[kg\]. Default 0.2.
    pub foot_mass: f64,
    /// Foot inertia about its COM \[kg m²\]. Default 1e-4 (a small 0.2 kg piece; it must be
    /// > 0 for the mass matrix to be positive definite).
    pub foot_inertia: f64,
    /// Leg spring rest length, hip to foot \[m\]. Default 0.5.
    pub leg_rest_length: f64,
    /// Leg spring stiffness \[N/m\]. Default 4000 (static sag ≈ 2.7 cm under 11.2 kg; stance
    /// period π √(m/k) ≈ 0.17 s).
    pub leg_stiffness: f64,
    /// Leg spring viscous damping \[N s/m\]. Default 10 (damping ratio ≈ 0.02).
    pub leg_damping: f64,
    /// Bounds on the hip torque \[N m\]. Default ±30.
    pub hip_torque_limit: (f64, f64),
    /// Bounds on the leg thrust, + extends the leg \[N\]. Default (−100, 400).
    pub thrust_limit: (f64, f64),
}

impl Default for MonopodParams {
    fn default() -> Self {
        MonopodParams {
            body_mass: 10.0,
            body_inertia: 0.2,
            leg_mass: 1.0,
            leg_inertia: 0.02,
            leg_com: 0.15,
            foot_mass: 0.2,
            foot_inertia: 1e-4,
            leg_rest_length: 0.5,
            leg_stiffness: 4000.0,
            leg_damping: 10.0,
            hip_torque_limit: (-30.0, 30.0),
            thrust_limit: (-100.0, 400.0),
        }
    }
}

/// Coordinate indices.
pub mod coordinate {
    pub const X: usize = 0;
    pub const Z: usize = 1;
    pub const PITCH: usize = 2;
    pub const HIP: usize = 3;
    pub const LEG: usize = 4;
}

impl MonopodParams {
    pub fn build(&self, gravity: f64) -> PlanarRobot {
        let body = Multibody {
            gravity,
            guide_angle: 0.0,
            bodies: vec![
                Body {
                    name: "body".into(),
                    mass: self.body_mass,
                    inertia: self.body_inertia,
                    com: [0.0, 0.0],
                    joint: None,
                },
                Body {
                    name: "leg".into(),
                    mass: self.leg_mass,
                    inertia: self.leg_inertia,
                    com: [0.0, -self.leg_com],
                    joint: Some(Joint {
                        kind: JointKind::Revolute,
                        parent: 0,
                        origin: [0.0, 0.0],
                    }),
                },
                Body {
                    name: "foot".into(),
                    mass: self.foot_mass,
                    inertia: self.foot_inertia,
                    com: [0.0, 0.0],
                    joint: Some(Joint {
                        kind: JointKind::Prismatic { axis: [0.0, -1.0] },
                        parent: 1,
                        origin: [0.0, 0.0],
                    }),
                },
            ],
        };
        let l0 = self.leg_rest_length;
        let mut coordinates = base_channels(l0);
        coordinates.push(channel("hip", "rad", 1.0));
        coordinates.push(channel("leg", "m", l0));
        PlanarRobot {
            name: "monopod".into(),
            body,
            coordinates,
            inputs: vec![
                Input {
                    name: "hip_torque".into(),
                    unit: "N m".into(),
                    coordinate: coordinate::HIP,
                    limit: self.hip_torque_limit,
                    drive: None,
                },
                Input {
                    name: "thrust".into(),
                    unit: "N".into(),
                    coordinate: coordinate::LEG,
                    limit: self.thrust_limit,
                    drive: None,
                },
            ],
            contacts: vec![ContactPoint {
                name: "foot".into(),
                body: 2,
                point: [0.0, 0.0],
                half_width: 0.0,
                radius: None,
            }],
            springs: vec![JointSpring {
                coordinate: coordinate::LEG,
                stiffness: self.leg_stiffness,
                damping: self.leg_damping,
                rest: l0,
            }],
            // Upright, leg vertical at its rest length, foot touching z = 0.
            standing: vec![0.0, l0, 0.0, 0.0, l0],
            locked: Vec::new(),
        }
    }
}
