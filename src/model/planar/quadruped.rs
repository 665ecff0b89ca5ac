//! A planar quadruped: a torso and four three-link legs (thigh, shank, foot) with actuated
//! hip, knee and ankle joints. Left and right legs overlap in the plane (each has its own
//! bodies, coordinates and contact), so a gait may move them apart in time.
//!
//! Bodies: 0 `torso` (frame at its COM, x forward), then for each leg in the order
//! front_left, front_right, hind_left, hind_right: `thigh_<leg>` (revolute at the hip, at
//! (±torso_length/2, 0) in the torso frame), `shank_<leg>` (revolute at the knee, thigh_length
//! down the thigh's −z axis), `foot_<leg>` (revolute at the ankle, shank_length down the
//! shank). Every link hangs along its frame's −z axis, so all-zero joint angles are straight
//! vertical legs; the contact point is foot_length down the foot link. Coordinates: x, z,
//! pitch, then hip, knee, ankle of each leg in that order.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{base_channels, channel, ContactPoint, Input, PlanarRobot};
use crate::model::multibody::{Body, Joint, JointKind, Multibody};

/// The legs, in body and coordinate order; also the contacts' names.
pub const LEGS: [&str; 4] = ["front_left", "front_right", "hind_left", "hind_right"];

/// The quadruped's parameters (SI units). Masses are the brief's (a 40 kg torso, 4 kg thighs,
/// 0.43 kg shanks, 1.76 kg feet); lengths and inertias are loam's, inertias those of uniform
/// rods or boxes of these sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct QuadrupedParams {
    /// Torso mass \[kg\]. Default 40.
    pub torso_mass: f64,
    /// Torso length; the hips sit at its ends \[m\]. Default 0.8.
    pub torso_length: f64,
    /// Torso inertia \[kg m²\]. Default 2.27 (a uniform 0.8 × 0.2 m box of 40 kg).
    pub torso_inertia: f64,
    /// Thigh mass \[kg\]. Default 4.
    pub thigh_mass: f64,
    /// Hip-to-knee length \[m\]. Default 0.3.
    pub thigh_length: f64,
    /// Thigh inertia about its COM (mid-link) \[kg m²\]. Default 0.03 (4 kg rod, 0.3 m).
    pub thigh_inertia: f64,
    /// Shank mass \[kg\]. Default 0.43.
    pub shank_mass: f64,
    /// Knee-to-ankle length \[m\]. Default 0.3.
    pub shank_length: f64,
    /// Shank inertia about its COM (mid-link) \[kg m²\]. Default 0.0032 (0.43 kg rod, 0.3 m).
    pub shank_inertia: f64,
    /// Foot mass \[kg\]. Default 1.76.
    pub foot_mass: f64,
    /// Ankle-to-contact length \[m\]. Default 0.1.
    pub foot_length: f64,
    /// Foot inertia about its COM (mid-link) \[kg m²\]. Default 0.0015 (1.76 kg rod, 0.1 m).
    pub foot_inertia: f64,
    /// Bounds on each hip torque \[N m\]. Default ±120.
    pub hip_torque_limit: (f64, f64),
    /// Bounds on each knee torque \[N m\]. Default ±120.
    pub knee_torque_limit: (f64, f64),
    /// Bounds on each ankle torque \[N m\]. Default ±40.
    pub ankle_torque_limit: (f64, f64),
    /// Hip angle of the standing posture \[rad\]; the knee takes −2× and the ankle 1× this, so
    /// the foot link is vertical and (with equal thigh and shank) right below the hip.
    /// Default 0.5.
    pub standing_hip_angle: f64,
}

impl Default for QuadrupedParams {
    fn default() -> Self {
        QuadrupedParams {
            torso_mass: 40.0,
            torso_length: 0.8,
            torso_inertia: 40.0 * (0.8 * 0.8 + 0.2 * 0.2) / 12.0,
            thigh_mass: 4.0,
            thigh_length: 0.3,
            thigh_inertia: 0.03,
            shank_mass: 0.43,
            shank_length: 0.3,
            shank_inertia: 0.0032,
            foot_mass: 1.76,
            foot_length: 0.1,
            foot_inertia: 0.0015,
            hip_torque_limit: (-120.0, 120.0),
            knee_torque_limit: (-120.0, 120.0),
            ankle_torque_limit: (-40.0, 40.0),
            standing_hip_angle: 0.5,
        }
    }
}

impl QuadrupedParams {
    pub fn build(&self, gravity: f64) -> PlanarRobot {
        let mut bodies = vec![Body {
            name: "torso".into(),
            mass: self.torso_mass,
            inertia: self.torso_inertia,
            com: [0.0, 0.0],
            joint: None,
        }];
        let mut coordinates = base_channels(self.thigh_length + self.shank_length);
        let mut inputs = Vec::new();
        let mut contacts = Vec::new();
        let phi = self.standing_hip_angle;
        let leg_posture = [phi, -2.0 * phi, phi];
        let mut standing = vec![
            0.0,
            (self.thigh_length + self.shank_length) * phi.cos() + self.foot_length,
            0.0,
        ];
        let half = 0.5 * self.torso_length;
        for leg in LEGS {
            let hip_x = if leg.starts_with("front") {
                half
            } else {
                -half
            };
            let links = [
                (
                    "thigh",
                    "hip",
                    self.thigh_mass,
                    self.thigh_length,
                    self.thigh_inertia,
                    self.hip_torque_limit,
                ),
                (
                    "shank",
                    "knee",
                    self.shank_mass,
                    self.shank_length,
                    self.shank_inertia,
                    self.knee_torque_limit,
                ),
                (
                    "foot",
                    "ankle",
                    self.foot_mass,
                    self.foot_length,
                    self.foot_inertia,
                    self.ankle_torque_limit,
                ),
            ];
            let mut parent = 0;
            let mut origin = [hip_x, 0.0];
            for (link, joint, mass, length, inertia, limit) in links {
                let index = bodies.len();
                bodies.push(Body {
                    name: format!("{link}_{leg}"),
                    mass,
                    inertia,
                    com: [0.0, -0.5 * length],
                    joint: Some(Joint {
                        kind: JointKind::Revolute,
                        parent,
                        origin,
                    }),
                });
                coordinates.push(channel(&format!("{joint}_{leg}"), "rad", 1.0));
                inputs.push(Input {
                    name: format!("{joint}_{leg}_torque"),
                    unit: "N m".into(),
                    coordinate: index + 2,
                    limit,
                    drive: None,
                });
                parent = index;
                origin = [0.0, -length];
            }
            contacts.push(ContactPoint {
                name: leg.into(),
                body: parent,
                point: origin,
                half_width: 0.0,
                radius: None,
            });
            standing.extend(leg_posture);
        }
        PlanarRobot {
            name: "quadruped".into(),
            body: Multibody {
                bodies,
                gravity,
                guide_angle: 0.0,
            },
            coordinates,
            inputs,
            contacts,
            springs: vec![],
            standing,
            locked: Vec::new(),
        }
    }
}
