//! A planar robot described in a file (`robots/*.yaml`): bodies, a tree of joints with their
//! limits, passive springs and dampers, actuators with effort limits, contact points and
//! soles, and a standing posture. [`RobotDescription::build`] turns it into the
//! [`PlanarRobot`] that the planner and the simulators read, the same type the Rust presets
//! build; [`RobotDescription::from_robot`] writes a preset back out as a description, which
//! is how the shipped `robots/` files were made and how the tests hold them to the presets.
//!
//! The reference for every field is docs/ROBOTS.md; docs/SCHEMA.md is generated from these
//! doc comments (`loam schema --markdown`), and `loam schema robot` is their JSON Schema.
//! Choices made here, and why:
//! - Bodies may be listed in any order; they are sorted parents first (stable, so a file that
//!   lists parents first keeps its order and its coordinate numbering). Exactly one body has
//!   no joint: the floating base, whose coordinates are `x`, `z` and `pitch`.
//! - A joint's name is its coordinate's name (`hip`, `knee`), used by actuators, springs,
//!   the standing posture and every problem field that names a coordinate.
//! - Effort limits are the actuator's, expressed at the joint (a gearbox's ratio folded into
//!   them): the planner's input is the joint torque or force itself.
//! - Hard stops are the joints' `position` limits: the planner keeps every node inside them
//!   and the replay counts the samples outside them. A compliant stop (a stiff one-sided
//!   spring) is not a part of this description.
//! - An actuator is an ideal torque or force source unless it has a `drive`: then it is the
//!   hopper's PI position servo (docs/MODEL.md section 1), the planner's input is its command
//!   rate and the drive adds two states (its integrator and its command) to the robot's.
//! - A robot on a rail or a guide names the base coordinates the guide holds (`locked:
//!   [x, pitch]`); they stay at their standing values and the guide supplies the force. A
//!   tilted guide turns the base's coordinate axes (`guide_angle`), rather than adding a
//!   joint for the rail: the coordinates stay the robot's own, measured along the guide.

mod build;
mod checks;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A planar robot: every field a robot file (`robots/*.yaml`) may hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RobotDescription {
    /// The robot's name, used in results and figures. Default: the robot file's stem.
    pub name: String,
    /// The rigid bodies. Exactly one has no `joint`: the floating base (coordinates `x`, `z`,
    /// `pitch` of its frame in the world). Every other body hangs from its parent by a joint.
    pub bodies: Vec<BodySpec>,
    /// Passive springs and viscous dampers on joints: Q = −stiffness (q − rest) − damping q̇.
    pub springs: Vec<SpringSpec>,
    /// Actuators: a torque on a revolute joint (or `pitch`), a force on a prismatic joint (or
    /// `x`, `z`).
    pub actuators: Vec<ActuatorSpec>,
    /// The points and flat soles that can touch the ground.
    pub contacts: Vec<ContactSpec>,
    /// The standing posture, by coordinate name (`hip: 0.5`); coordinates left out are 0,
    /// except `z`, which defaults to the height that puts the lowest contact on z = 0.
    pub standing: BTreeMap<String, f64>,
    /// A typical length of the robot \[m\], for scaling the planner's variables (`x`, `z` and
    /// prismatic joints without their own `nominal`). Default: the base's height in the
    /// standing posture.
    pub length_scale: Option<f64>,
    /// Base coordinates (`x`, `z`, `pitch`) held by a frictionless guide at their standing
    /// values, e.g. `[x, pitch]` for a robot on a vertical rail. Default: none (a free base).
    pub locked: Vec<String>,
    /// The guide's tilt from the vertical \[rad\], counter-clockwise +, within (−π/2, π/2):
    /// the base's `x`, `z` and `pitch` are measured in the world turned by it, so a robot
    /// with `locked: [x, pitch]` slides along a rail whose upward direction is
    /// (−sin a, cos a), and leans with it (its feet tilted by a). Default: 0 (upright).
    pub guide_angle: f64,
}

impl Default for RobotDescription {
    fn default() -> Self {
        RobotDescription {
            name: String::new(),
            bodies: Vec::new(),
            springs: Vec::new(),
            actuators: Vec::new(),
            contacts: Vec::new(),
            standing: BTreeMap::new(),
            length_scale: None,
            locked: Vec::new(),
            guide_angle: 0.0,
        }
    }
}

/// One rigid body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name, used by joints (`parent`) and contacts (`body`).
    pub name: String,
    /// Mass \[kg\], > 0.
    pub mass: f64,
    /// Moment of inertia about the centre of mass, about the plane's normal \[kg m²\], > 0.
    pub inertia: f64,
    /// Centre of mass in the body's frame, (x, z) \[m\]. Default (0, 0).
    #[serde(default)]
    pub com: [f64; 2],
    /// How the body hangs from its parent; absent for the floating base only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<JointSpec>,
}

/// The kind of a planar joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JointType {
    /// Turns about the plane's normal by q \[rad\], counter-clockwise (+x toward +z).
    Revolute,
    /// Slides by q \[m\] along `axis`, without turning.
    Prismatic,
}

/// The joint that attaches a body to its parent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JointSpec {
    /// The joint's (and its coordinate's) unique name; not `x`, `z` or `pitch`.
    pub name: String,
    /// The parent body's name.
    pub parent: String,
    /// `revolute` or `prismatic`.
    #[serde(rename = "type")]
    pub kind: JointType,
    /// Where the joint sits in the parent's frame, (x, z) \[m\]; at q = 0 the child's frame
    /// has its origin here and the parent's orientation. Default (0, 0).
    #[serde(default)]
    pub origin: [f64; 2],
    /// A prismatic joint's direction of motion in the parent's frame: a unit vector. Required
    /// for prismatic joints, refused on revolute ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 2]>,
    /// \[lower, upper\] bounds on the joint's position \[rad or m\]; lower < upper. Default:
    /// unlimited. The planner keeps every node inside them; the replay counts samples
    /// outside them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f64; 2]>,
    /// Bound on the joint's speed |q̇| \[rad/s or m/s\], > 0. Default: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<f64>,
    /// A typical magnitude of the coordinate, for scaling \[rad or m\]. Default: 1 rad for a
    /// revolute joint, `length_scale` for a prismatic one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominal: Option<f64>,
}

/// A passive spring and viscous damper on one joint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpringSpec {
    /// The joint's name.
    pub joint: String,
    /// \[N/m\] on a prismatic joint, \[N m/rad\] on a revolute one; >= 0.
    pub stiffness: f64,
    /// \[N s/m\] or \[N m s/rad\]; >= 0. Default 0.
    #[serde(default)]
    pub damping: f64,
    /// The joint position where the spring is relaxed \[m or rad\].
    pub rest: f64,
}

/// What an actuator applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorKind {
    /// A torque \[N m\] on a revolute joint or on `pitch`.
    Torque,
    /// A force \[N\] on a prismatic joint or on `x` / `z`.
    Force,
}

/// An ideal actuator on one coordinate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActuatorSpec {
    /// Unique name: the input's column in results (`hip_torque`).
    pub name: String,
    /// The coordinate it drives: a joint's name, or `x`, `z`, `pitch` for a body driven
    /// directly (the wrench-space test foot).
    pub joint: String,
    /// `torque` or `force`; must match the coordinate (revolute/pitch: torque).
    pub kind: ActuatorKind,
    /// \[lower, upper\] effort at the joint \[N m or N\], lower < upper: the planner's bounds
    /// (on a drive, bounds on the force it applies).
    pub limit: [f64; 2],
    /// A PI position servo between the planner and the joint (the hopper's linear drive):
    /// the planner's input becomes the command rate \[m/s or rad/s\]. Default: none (the
    /// input is the effort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<DriveSpec>,
}

/// A drive's gains: v_err = P_p (z_d − q) + V_f u − q̇, ė = v_err, ż_d = u,
/// F = K_m (V_p v_err + V_i e) (docs/MODEL.md section 1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriveSpec {
    /// K_m: effort per ampere \[N/A or N m/A\], > 0.
    pub force_constant: f64,
    /// P_p: the position loop's gain \[1/s\], >= 0.
    pub position_gain: f64,
    /// V_f: velocity feedforward \[-\], >= 0.
    pub velocity_feedforward: f64,
    /// V_p: the velocity loop's proportional gain \[A/(m/s) or A/(rad/s)\], >= 0.
    pub velocity_gain: f64,
    /// V_i: the velocity loop's integral gain \[A/m or A/rad\], > 0.
    pub integral_gain: f64,
}

/// A contact's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContactShape {
    /// A point foot: a force, no torque.
    Point,
    /// A flat sole along the body's x axis, of half width `half_width`, centred on `point`:
    /// a force and a torque |τ| ≤ F_z · half_width.
    Sole,
}

/// A point or a flat sole that can touch the ground.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactSpec {
    /// Unique name, used by the schedule (`contacts: [foot]`).
    pub name: String,
    /// The body it belongs to.
    pub body: String,
    /// The point (a sole's centre) in the body's frame, (x, z) \[m\]. Default (0, 0).
    #[serde(default)]
    pub point: [f64; 2],
    /// `point` (default) or `sole`.
    #[serde(default = "point_shape")]
    pub shape: ContactShape,
    /// A sole's half width \[m\], > 0; only with `shape: sole`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_width: Option<f64>,
    /// The foot's footprint on a granular ground: a flat disc of this radius \[m\], > 0 (the
    /// hopper's foot: 0.038); only with `shape: point`, which the planar model still treats
    /// as a point. Where given, the added-mass bed's `foot_radius` defaults to it and a DEM
    /// replay presses this disc into the grains, whatever ground the plan was made on.
    /// Default: none (the bed's own `foot_radius`; a box on the sole in the DEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radius: Option<f64>,
}

fn point_shape() -> ContactShape {
    ContactShape::Point
}

/// One broken rule: the field's dotted path (`bodies[2].mass`) and what is wrong and accepted.
pub type DescriptionViolation = (String, String);

const BASE: [&str; 3] = ["x", "z", "pitch"];

impl RobotDescription {
    /// The bodies in tree order (parents first, otherwise as listed), as indices into
    /// `bodies`; `None` when the joints do not form one tree (validation says why).
    fn tree_order(&self) -> Option<Vec<usize>> {
        let index: BTreeMap<&str, usize> = self
            .bodies
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.as_str(), i))
            .collect();
        let mut placed = vec![false; self.bodies.len()];
        let mut order = Vec::with_capacity(self.bodies.len());
        while order.len() < self.bodies.len() {
            let before = order.len();
            for (i, body) in self.bodies.iter().enumerate() {
                if placed[i] {
                    continue;
                }
                let ready = match &body.joint {
                    None => order.is_empty(),
                    Some(joint) => index.get(joint.parent.as_str()).is_some_and(|&p| placed[p]),
                };
                if ready {
                    placed[i] = true;
                    order.push(i);
                }
            }
            if order.len() == before {
                return None;
            }
        }
        Some(order)
    }
}
