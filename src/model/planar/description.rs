//! A planar robot described in a file (`robots/*.yaml`): bodies, a tree of joints with their
//! limits, passive springs and dampers, actuators with effort limits, contact points and
//! soles, and a standing posture. [`RobotDescription::build`] turns it into the
//! [`PlanarRobot`] that the planner and the simulators read, the same type the Rust presets
//! build; [`RobotDescription::from_robot`] writes a preset back out as a description, which
//! is how the shipped `robots/` files were made and how the tests hold them to the presets.
//!
//! The reference for every field is docs/ROBOTS.md (generated from these doc comments by
//! `loam schema robot`). Choices made here, and why:
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
//! - Drive dynamics (the hopper's PI position servo) belong to the hopper's own model
//!   (docs/MODEL.md section 1); a robot file's actuators are ideal torque or force sources.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{channel, ContactPoint, Input, JointSpring, PlanarRobot};
use crate::model::multibody::{Body, Joint, JointKind, Multibody};

/// A planar robot: every field a robot file (`robots/*.yaml`) may hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RobotDescription {
    /// The robot's name, used in results and figures. Required.
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
        }
    }
}

/// One rigid body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointType {
    /// Turns about the plane's normal by q \[rad\], counter-clockwise (+x toward +z).
    Revolute,
    /// Slides by q \[m\] along `axis`, without turning.
    Prismatic,
}

/// The joint that attaches a body to its parent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorKind {
    /// A torque \[N m\] on a revolute joint or on `pitch`.
    Torque,
    /// A force \[N\] on a prismatic joint or on `x` / `z`.
    Force,
}

/// An ideal actuator on one coordinate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActuatorSpec {
    /// Unique name: the input's column in results (`hip_torque`).
    pub name: String,
    /// The coordinate it drives: a joint's name, or `x`, `z`, `pitch` for a body driven
    /// directly (the wrench-space test foot).
    pub joint: String,
    /// `torque` or `force`; must match the coordinate (revolute/pitch: torque).
    pub kind: ActuatorKind,
    /// \[lower, upper\] effort at the joint \[N m or N\], lower < upper: the planner's bounds.
    pub limit: [f64; 2],
}

/// A contact's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactShape {
    /// A point foot: a force, no torque.
    Point,
    /// A flat sole along the body's x axis, of half width `half_width`, centred on `point`:
    /// a force and a torque |τ| ≤ F_z · half_width.
    Sole,
}

/// A point or a flat sole that can touch the ground.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

    /// Checks every rule beyond the types; all the rules broken, in file order.
    pub fn violations(&self) -> Vec<DescriptionViolation> {
        let mut bad: Vec<DescriptionViolation> = Vec::new();
        let mut fail = |field: String, message: String| bad.push((field, message));
        if self.name.trim().is_empty() {
            fail(
                "name".into(),
                "is required: the robot's name, used in results and figures".into(),
            );
        }
        if self.bodies.is_empty() {
            fail(
                "bodies".into(),
                "needs at least one body (the floating base)".into(),
            );
        }
        let mut body_names = BTreeSet::new();
        let mut joint_kinds: BTreeMap<&str, JointType> = BTreeMap::new();
        let mut bases = Vec::new();
        for (i, body) in self.bodies.iter().enumerate() {
            let at = |field: &str| format!("bodies[{i}].{field}");
            if !body_names.insert(body.name.as_str()) {
                fail(
                    at("name"),
                    format!(
                        "body `{}` is named twice; body names must be unique",
                        body.name
                    ),
                );
            }
            if !(body.mass.is_finite() && body.mass > 0.0) {
                fail(
                    at("mass"),
                    format!(
                        "must be a finite number > 0 kg (M(q) must be positive definite), got {}",
                        body.mass
                    ),
                );
            }
            if !(body.inertia.is_finite() && body.inertia > 0.0) {
                fail(
                    at("inertia"),
                    format!(
                        "must be a finite number > 0 kg m² (M(q) must be positive definite), got {}",
                        body.inertia
                    ),
                );
            }
            check_point(&mut fail, at("com"), body.com);
            let Some(joint) = &body.joint else {
                bases.push(i);
                continue;
            };
            if BASE.contains(&joint.name.as_str()) {
                fail(
                    at("joint.name"),
                    format!(
                        "`{}` is a coordinate of the floating base; accepted: any other name",
                        joint.name
                    ),
                );
            } else if joint_kinds
                .insert(joint.name.as_str(), joint.kind)
                .is_some()
            {
                fail(
                    at("joint.name"),
                    format!(
                        "joint `{}` is named twice; joint names must be unique",
                        joint.name
                    ),
                );
            }
            if joint.parent == body.name {
                fail(
                    at("joint.parent"),
                    format!("body `{}` cannot be its own parent", body.name),
                );
            } else if !self.bodies.iter().any(|b| b.name == joint.parent) {
                let names: Vec<&str> = self.bodies.iter().map(|b| b.name.as_str()).collect();
                fail(
                    at("joint.parent"),
                    format!(
                        "no body is named `{}`; accepted: one of {}",
                        joint.parent,
                        names.join(", ")
                    ),
                );
            }
            check_point(&mut fail, at("joint.origin"), joint.origin);
            match (joint.kind, joint.axis) {
                (JointType::Prismatic, None) => fail(
                    at("joint.axis"),
                    "a prismatic joint needs its axis: a unit vector (x, z) in the parent's frame"
                        .into(),
                ),
                (JointType::Prismatic, Some(axis)) => {
                    let norm = axis[0].hypot(axis[1]);
                    if !norm.is_finite() || (norm - 1.0).abs() > 1e-9 {
                        fail(
                            at("joint.axis"),
                            format!(
                                "must be a unit vector (length 1 within 1e-9), got [{}, {}] of length {norm}",
                                axis[0], axis[1]
                            ),
                        );
                    }
                }
                (JointType::Revolute, Some(_)) => fail(
                    at("joint.axis"),
                    "a revolute joint turns about the plane's normal and takes no axis".into(),
                ),
                (JointType::Revolute, None) => {}
            }
            if let Some([lower, upper]) = joint.position {
                if !(lower < upper) {
                    fail(
                        at("joint.position"),
                        format!(
                            "must be [lower, upper] with lower < upper, got [{lower}, {upper}]"
                        ),
                    );
                }
            }
            if let Some(v) = joint.velocity {
                if !(v > 0.0) {
                    fail(
                        at("joint.velocity"),
                        format!("must be > 0 (a bound on |q̇|), got {v}"),
                    );
                }
            }
            if let Some(n) = joint.nominal {
                if !(n.is_finite() && n > 0.0) {
                    fail(
                        at("joint.nominal"),
                        format!("must be a finite number > 0, got {n}"),
                    );
                }
            }
        }
        match bases.len() {
            0 if !self.bodies.is_empty() => fail(
                "bodies".into(),
                "no body is the floating base: exactly one body must have no `joint`".into(),
            ),
            0 | 1 => {}
            _ => {
                let names: Vec<&str> = bases
                    .iter()
                    .map(|&i| self.bodies[i].name.as_str())
                    .collect();
                fail(
                    format!("bodies[{}]", bases[1]),
                    format!(
                        "bodies {} all lack a joint; exactly one (the floating base) may",
                        names.join(", ")
                    ),
                );
            }
        }
        // A loop: bodies whose parents all exist but that never reach the base.
        if bases.len() == 1 && self.tree_order().is_none() {
            let all_parents_exist = self.bodies.iter().all(|b| {
                b.joint
                    .as_ref()
                    .is_none_or(|j| self.bodies.iter().any(|p| p.name == j.parent))
            });
            if all_parents_exist {
                let (i, cycle) = self.first_loop();
                fail(
                    format!("bodies[{i}].joint.parent"),
                    format!(
                        "the joints form a loop ({}); a robot is a tree: every chain of parents must end at the base",
                        cycle.join(" → ")
                    ),
                );
            }
        }
        let coordinate = |name: &str| -> Option<Option<JointType>> {
            if BASE.contains(&name) {
                Some(None)
            } else {
                joint_kinds.get(name).map(|k| Some(*k))
            }
        };
        let coordinate_names = || {
            let mut names: Vec<&str> = BASE.to_vec();
            names.extend(joint_kinds.keys().copied());
            names.join(", ")
        };
        let mut spring_joints = BTreeSet::new();
        for (i, spring) in self.springs.iter().enumerate() {
            let at = |field: &str| format!("springs[{i}].{field}");
            if coordinate(&spring.joint).flatten().is_none() {
                fail(
                    at("joint"),
                    format!(
                        "no joint is named `{}`; accepted: one of {}",
                        spring.joint,
                        joint_kinds.keys().copied().collect::<Vec<_>>().join(", ")
                    ),
                );
            } else if !spring_joints.insert(spring.joint.as_str()) {
                fail(
                    at("joint"),
                    format!("joint `{}` has two springs; give it one", spring.joint),
                );
            }
            for (field, value) in [("stiffness", spring.stiffness), ("damping", spring.damping)] {
                if !(value.is_finite() && value >= 0.0) {
                    fail(
                        at(field),
                        format!("must be a finite number >= 0, got {value}"),
                    );
                }
            }
            if !spring.rest.is_finite() {
                fail(
                    at("rest"),
                    format!("must be a finite number, got {}", spring.rest),
                );
            }
        }
        let mut actuator_names = BTreeSet::new();
        for (i, actuator) in self.actuators.iter().enumerate() {
            let at = |field: &str| format!("actuators[{i}].{field}");
            if !actuator_names.insert(actuator.name.as_str()) {
                fail(
                    at("name"),
                    format!("actuator `{}` is named twice", actuator.name),
                );
            }
            match coordinate(&actuator.joint) {
                None => fail(
                    at("joint"),
                    format!(
                        "no coordinate is named `{}`; accepted: one of {}",
                        actuator.joint,
                        coordinate_names()
                    ),
                ),
                Some(kind) => {
                    let rotational = match kind {
                        Some(k) => k == JointType::Revolute,
                        None => actuator.joint == "pitch",
                    };
                    let wanted = if rotational {
                        ActuatorKind::Torque
                    } else {
                        ActuatorKind::Force
                    };
                    if actuator.kind != wanted {
                        fail(
                            at("kind"),
                            format!(
                                "`{}` turns (revolute or pitch) so it takes a torque, a sliding coordinate a force; accepted here: {}",
                                actuator.joint,
                                if rotational { "torque" } else { "force" }
                            ),
                        );
                    }
                }
            }
            let [lower, upper] = actuator.limit;
            if !(lower < upper) {
                fail(
                    at("limit"),
                    format!("must be [lower, upper] with lower < upper, got [{lower}, {upper}]"),
                );
            }
        }
        let mut contact_names = BTreeSet::new();
        for (i, contact) in self.contacts.iter().enumerate() {
            let at = |field: &str| format!("contacts[{i}].{field}");
            if !contact_names.insert(contact.name.as_str()) {
                fail(
                    at("name"),
                    format!("contact `{}` is named twice", contact.name),
                );
            }
            if !self.bodies.iter().any(|b| b.name == contact.body) {
                fail(at("body"), format!("no body is named `{}`", contact.body));
            }
            check_point(&mut fail, at("point"), contact.point);
            match (contact.shape, contact.half_width) {
                (ContactShape::Sole, None) => fail(
                    at("half_width"),
                    "a sole needs its half width [m], > 0".into(),
                ),
                (ContactShape::Sole, Some(w)) if !(w.is_finite() && w > 0.0) => fail(
                    at("half_width"),
                    format!("must be a finite number > 0 m, got {w}"),
                ),
                (ContactShape::Point, Some(_)) => fail(
                    at("half_width"),
                    "a point contact has no width; write `shape: sole` for a flat sole".into(),
                ),
                _ => {}
            }
        }
        for (name, value) in &self.standing {
            if coordinate(name).is_none() {
                fail(
                    format!("standing.{name}"),
                    format!(
                        "no coordinate is named `{name}`; accepted: one of {}",
                        coordinate_names()
                    ),
                );
            } else if !value.is_finite() {
                fail(
                    format!("standing.{name}"),
                    format!("must be a finite number, got {value}"),
                );
            } else if let Some([lower, upper]) = self
                .bodies
                .iter()
                .filter_map(|b| b.joint.as_ref())
                .find(|j| &j.name == name)
                .and_then(|j| j.position)
            {
                if !(lower <= *value && *value <= upper) {
                    fail(
                        format!("standing.{name}"),
                        format!(
                            "{value} is outside the joint's position limits [{lower}, {upper}]"
                        ),
                    );
                }
            }
        }
        if let Some(l) = self.length_scale {
            if !(l.is_finite() && l > 0.0) {
                fail(
                    "length_scale".into(),
                    format!("must be a finite number > 0 m, got {l}"),
                );
            }
        }
        bad
    }

    /// The first loop among the parents, as the index of a body on it and the body names.
    fn first_loop(&self) -> (usize, Vec<String>) {
        let parent_of = |i: usize| -> Option<usize> {
            let joint = self.bodies[i].joint.as_ref()?;
            self.bodies.iter().position(|b| b.name == joint.parent)
        };
        for start in 0..self.bodies.len() {
            let mut seen = vec![start];
            let mut at = start;
            while let Some(p) = parent_of(at) {
                if let Some(k) = seen.iter().position(|&s| s == p) {
                    let mut names: Vec<String> = seen[k..]
                        .iter()
                        .map(|&i| self.bodies[i].name.clone())
                        .collect();
                    names.push(self.bodies[p].name.clone());
                    return (seen[k], names);
                }
                seen.push(p);
                at = p;
            }
        }
        (0, Vec::new())
    }

    /// The robot the planner and the simulators read, under gravity g \[m/s²\]. Call only on a
    /// description without [`violations`](Self::violations).
    pub fn build(&self, gravity: f64) -> PlanarRobot {
        let order = self
            .tree_order()
            .expect("build is called on a validated description");
        let position: BTreeMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(k, &i)| (self.bodies[i].name.as_str(), k))
            .collect();
        let bodies: Vec<Body> = order
            .iter()
            .map(|&i| {
                let spec = &self.bodies[i];
                Body {
                    name: spec.name.clone(),
                    mass: spec.mass,
                    inertia: spec.inertia,
                    com: spec.com,
                    joint: spec.joint.as_ref().map(|joint| Joint {
                        kind: match joint.kind {
                            JointType::Revolute => JointKind::Revolute,
                            JointType::Prismatic => JointKind::Prismatic {
                                axis: joint.axis.unwrap_or([0.0, -1.0]),
                            },
                        },
                        parent: position[joint.parent.as_str()],
                        origin: joint.origin,
                    }),
                }
            })
            .collect();
        let multibody = Multibody { bodies, gravity };
        let joints: Vec<&JointSpec> = order[1..]
            .iter()
            .filter_map(|&i| self.bodies[i].joint.as_ref())
            .collect();
        let mut names: Vec<String> = BASE.iter().map(|s| s.to_string()).collect();
        names.extend(joints.iter().map(|j| j.name.clone()));
        let index = |name: &str| names.iter().position(|n| n == name).expect("validated");

        let contacts: Vec<ContactPoint> = self
            .contacts
            .iter()
            .map(|c| ContactPoint {
                name: c.name.clone(),
                body: position[c.body.as_str()],
                point: c.point,
                half_width: c.half_width.unwrap_or(0.0),
            })
            .collect();
        let mut standing = vec![0.0; names.len()];
        for (name, value) in &self.standing {
            standing[index(name)] = *value;
        }
        if !self.standing.contains_key("z") && !contacts.is_empty() {
            let lowest = contacts
                .iter()
                .map(|c| multibody.point(&standing, c.body, c.point)[1])
                .fold(f64::INFINITY, f64::min);
            standing[1] -= lowest;
        }
        let scale = self.length_scale.unwrap_or_else(|| {
            let z = standing[1].abs();
            if z > 0.0 {
                z
            } else {
                1.0
            }
        });
        let mut coordinates = vec![
            channel("x", "m", scale),
            channel("z", "m", scale),
            channel("pitch", "rad", 1.0),
        ];
        for joint in &joints {
            let (unit, nominal) = match joint.kind {
                JointType::Revolute => ("rad", joint.nominal.unwrap_or(1.0)),
                JointType::Prismatic => ("m", joint.nominal.unwrap_or(scale)),
            };
            let mut c = channel(&joint.name, unit, nominal);
            if let Some([lower, upper]) = joint.position {
                c.position_limit = (lower, upper);
            }
            if let Some(v) = joint.velocity {
                c.velocity_limit = v;
            }
            coordinates.push(c);
        }
        let inputs = self
            .actuators
            .iter()
            .map(|a| Input {
                name: a.name.clone(),
                unit: match a.kind {
                    ActuatorKind::Torque => "N m".into(),
                    ActuatorKind::Force => "N".into(),
                },
                coordinate: index(&a.joint),
                limit: (a.limit[0], a.limit[1]),
            })
            .collect();
        let springs = self
            .springs
            .iter()
            .map(|s| JointSpring {
                coordinate: index(&s.joint),
                stiffness: s.stiffness,
                damping: s.damping,
                rest: s.rest,
            })
            .collect();
        PlanarRobot {
            name: self.name.clone(),
            body: multibody,
            coordinates,
            inputs,
            contacts,
            springs,
            standing,
        }
    }

    /// A built robot written back as a description (a preset's file, or a robot to edit).
    /// [`build`](Self::build) of the result gives the same robot.
    pub fn from_robot(robot: &PlanarRobot) -> RobotDescription {
        let name_of = |c: usize| robot.coordinates[c].name.clone();
        let bodies = robot
            .body
            .bodies
            .iter()
            .enumerate()
            .map(|(b, body)| BodySpec {
                name: body.name.clone(),
                mass: body.mass,
                inertia: body.inertia,
                com: body.com,
                joint: body.joint.as_ref().map(|joint| {
                    let coordinate = &robot.coordinates[b + 2];
                    let (kind, axis) = match joint.kind {
                        JointKind::Revolute => (JointType::Revolute, None),
                        JointKind::Prismatic { axis } => (JointType::Prismatic, Some(axis)),
                    };
                    let default_nominal = match kind {
                        JointType::Revolute => 1.0,
                        JointType::Prismatic => robot.coordinates[0].nominal,
                    };
                    let (lower, upper) = coordinate.position_limit;
                    JointSpec {
                        name: coordinate.name.clone(),
                        parent: robot.body.bodies[joint.parent].name.clone(),
                        kind,
                        origin: joint.origin,
                        axis,
                        position: (lower.is_finite() || upper.is_finite())
                            .then_some([lower, upper]),
                        velocity: coordinate
                            .velocity_limit
                            .is_finite()
                            .then_some(coordinate.velocity_limit),
                        nominal: (coordinate.nominal != default_nominal)
                            .then_some(coordinate.nominal),
                    }
                }),
            })
            .collect();
        let rotational = |c: usize| robot.coordinates[c].unit == "rad";
        RobotDescription {
            name: robot.name.clone(),
            bodies,
            springs: robot
                .springs
                .iter()
                .map(|s| SpringSpec {
                    joint: name_of(s.coordinate),
                    stiffness: s.stiffness,
                    damping: s.damping,
                    rest: s.rest,
                })
                .collect(),
            actuators: robot
                .inputs
                .iter()
                .map(|i| ActuatorSpec {
                    name: i.name.clone(),
                    joint: name_of(i.coordinate),
                    kind: if rotational(i.coordinate) {
                        ActuatorKind::Torque
                    } else {
                        ActuatorKind::Force
                    },
                    limit: [i.limit.0, i.limit.1],
                })
                .collect(),
            contacts: robot
                .contacts
                .iter()
                .map(|c| ContactSpec {
                    name: c.name.clone(),
                    body: robot.body.bodies[c.body].name.clone(),
                    point: c.point,
                    shape: if c.half_width > 0.0 {
                        ContactShape::Sole
                    } else {
                        ContactShape::Point
                    },
                    half_width: (c.half_width > 0.0).then_some(c.half_width),
                })
                .collect(),
            standing: robot
                .coordinates
                .iter()
                .zip(&robot.standing)
                .filter(|(c, v)| **v != 0.0 || c.name == "z")
                .map(|(c, v)| (c.name.clone(), *v))
                .collect(),
            length_scale: Some(robot.coordinates[0].nominal),
        }
    }
}

fn check_point(fail: &mut impl FnMut(String, String), field: String, point: [f64; 2]) {
    if !point.iter().all(|c| c.is_finite()) {
        fail(
            field,
            format!(
                "must be two finite numbers (x, z) in metres, got [{}, {}]",
                point[0], point[1]
            ),
        );
    }
}
