//! A URDF robot imported into loam's planar [`RobotDescription`], projected onto the
//! sagittal plane: loam's x–z plane is the URDF's x–z plane, its normal the URDF's y axis.
//!
//! [`import`] parses the URDF with the `urdf-rs` crate and builds the description; the
//! result passes [`RobotDescription::violations`] or [`import`] says why not. What it does,
//! and the choices made:
//!
//! - **Bodies.** The root link (the one that is no joint's child) is the floating base.
//!   Every link attached by a moving joint (`revolute`, `continuous`, `prismatic`) is a body
//!   named after the link, and its joint takes the URDF joint's name. A link attached by a
//!   `fixed` joint is merged into the body it hangs from: its mass, centre of mass and inertia
//!   are folded in (parallel-axis theorem in the plane) and its own joints re-attached
//!   through the composed transform. A robot bolted to a `world` link this way comes out
//!   floating.
//! - **Angles.** Loam's revolute angle turns counter-clockwise in x–z (+x toward +z), which
//!   is a rotation about −y: a URDF joint turning about +y (the usual pitch joint) by q has
//!   loam angle −q, one about −y has loam angle +q. A joint about +y therefore gets its
//!   position limits negated and swapped, [lower, upper] → [−upper, −lower]; its coordinate,
//!   torque and rate are the URDF's with the sign flipped.
//! - **Joint frames.** Loam's child frame has the parent's orientation at q = 0; a URDF joint
//!   origin may also turn the child's frame (`rpy`). That fixed rotation is folded into the
//!   child's geometry instead: the child's centre of mass, collision spheres and the origins
//!   and axes of its own joints are expressed in the loam body's frame (its inertia about the
//!   plane's normal does not change under a rotation about that normal). Any origin rotation
//!   is accepted so long as the joint's motion stays in the plane: a revolute joint's axis,
//!   expressed in its parent body's frame, must be ±y (within 1e-9), a prismatic one's must
//!   have no y component (within 1e-9; it becomes the unit (x, z) direction in the parent's
//!   frame), and a moving joint's origin must lie on y = 0 (within 1e-9). So a DH-style roll
//!   of ±90° with the axis along the joint frame's z imports correctly.
//! - **Projection of mass.** A link's centre of mass is its inertial origin's (x, z) in the
//!   body's frame; its moment of inertia is I_yy of its inertia tensor rotated into the
//!   body's frame (the inertial origin's `rpy` and any folded joint rotation applied). Both
//!   are exact for motion in the plane, so a fixed link may sit off the plane (a y offset, a
//!   camera's optical frame): only moving joints must lie in it.
//! - **Massless links.** Every body needs mass > 0 and inertia > 0. A body (with whatever
//!   was merged into it) that has no mass and carries no other body, a sensor frame on a
//!   moving joint, is dropped with its joint, actuator and contacts; a massless body that
//!   carries others, or the base, is refused.
//! - **Limits and actuators.** `<limit lower upper>` become the joint's `position` limits
//!   (none for `continuous` joints, and none where lower = upper, which is what an omitted
//!   `<limit>` reads as); `velocity` > 0 and finite becomes its velocity limit (0 or omitted:
//!   unlimited). `effort` > 0 makes an ideal actuator `<joint>_torque` (revolute) or
//!   `<joint>_force` (prismatic) with limits [−effort, effort]; effort 0 leaves the joint
//!   passive, and an infinite effort (URDF 1.2's omitted one) is refused, since the planner
//!   scales each input by its bound. `<dynamics damping>` > 0 becomes a damper (a spring of
//!   stiffness 0); friction is ignored.
//! - **Contacts.** URDF has none, so each leaf link (a link with no child joints) becomes one
//!   point contact named after the link, on the body it was merged into: at the centre of
//!   the link's first collision `<sphere>` less its radius along the body's z axis (the
//!   sphere's bottom in the upright posture), or at the link frame's origin when it has no
//!   collision sphere. Edit the result to add soles or remove contacts.
//! - **Left to the caller.** `standing` is empty (z is found so the lowest contact touches
//!   the ground), `length_scale` and the joints' `nominal` are unset, and the robot's name is
//!   the URDF's `<robot name>` unless `name_override` gives one.
//!
//! Refused, with an error naming the joint or link at fault: `floating`, `planar` and
//! `spherical` joints; `mimic` joints (loam's coordinates are independent); joint axes or
//! origins out of the plane; joints named `x`, `z` or `pitch` (the base's coordinates);
//! negative or non-finite masses and inertias; links without mass that carry others; joints
//! naming unknown links; two joints attaching one link; several root links, or none (a loop).

use std::collections::{BTreeMap, BTreeSet};

use nalgebra::{IsometryMatrix3, Matrix3, Rotation3, Translation3, Vector3};
use thiserror::Error;

use super::description::{
    ActuatorKind, ActuatorSpec, BodySpec, ContactShape, ContactSpec, JointSpec, JointType,
    RobotDescription, SpringSpec,
};

/// How far an axis or an origin may stray from the plane (in its unit length, or in m).
const TOLERANCE: f64 = 1e-9;

/// The floating base's coordinates, which no joint may be named.
const BASE_COORDINATES: [&str; 3] = ["x", "z", "pitch"];

/// Why a URDF could not be imported. The messages name the link or joint at fault.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum UrdfError {
    /// The text is not a URDF that `urdf-rs` can read.
    #[error("not a readable URDF: {0}")]
    Parse(String),
    /// Neither `<robot name>` nor the override gives a name.
    #[error("the robot has no name: give <robot name=\"...\"> or a name override")]
    NoName,
    /// No `<link>` at all.
    #[error("the URDF has no links")]
    NoLinks,
    /// Two links share a name.
    #[error("link `{0}` is named twice; link names must be unique")]
    DuplicateLink(String),
    /// Two joints share a name.
    #[error("joint `{0}` is named twice; joint names must be unique")]
    DuplicateJoint(String),
    /// Every link is some joint's child.
    #[error("every link is some joint's child, so there is no root link: the joints form a loop")]
    NoRoot,
    /// More than one link is no joint's child.
    #[error(
        "links {0} are no joint's child; a robot has exactly one root link (the floating base)"
    )]
    SeveralRoots(String),
    /// A joint that cannot be imported, and why.
    #[error("joint `{joint}`: {reason}")]
    Joint { joint: String, reason: String },
    /// A link that cannot be imported, and why.
    #[error("link `{link}`: {reason}")]
    Link { link: String, reason: String },
    /// The imported description breaks one of loam's rules (a field path and the rule).
    #[error("the imported robot is not valid: {0}")]
    Invalid(String),
}

fn joint_error(joint: &str, reason: impl Into<String>) -> UrdfError {
    UrdfError::Joint {
        joint: joint.to_owned(),
        reason: reason.into(),
    }
}

fn link_error(link: &str, reason: impl Into<String>) -> UrdfError {
    UrdfError::Link {
        link: link.to_owned(),
        reason: reason.into(),
    }
}

/// A link's mass, centre of mass (x, z) in its body's frame and moment of inertia about the
/// plane's normal through that centre.
struct Part {
    mass: f64,
    com: [f64; 2],
    inertia: f64,
}

/// A loam body being assembled: the links merged into it and what hangs from it.
struct Body {
    /// The link that names it (the root, or a moving joint's child).
    link: String,
    /// The parent body's index; `None` for the base.
    parent: Option<usize>,
    joint: Option<JointSpec>,
    actuator: Option<ActuatorSpec>,
    spring: Option<SpringSpec>,
    parts: Vec<Part>,
    contacts: Vec<ContactSpec>,
}

/// Imports a URDF robot into loam's planar description, projected onto the x–z plane (see
/// the module documentation for the conventions and for what is refused). `name_override`
/// replaces the `<robot name>`.
pub fn import(urdf_text: &str, name_override: Option<&str>) -> Result<RobotDescription, UrdfError> {
    let robot =
        urdf_rs::read_from_string(urdf_text).map_err(|e| UrdfError::Parse(e.to_string()))?;
    let name = name_override.unwrap_or(&robot.name).trim().to_owned();
    if name.is_empty() {
        return Err(UrdfError::NoName);
    }
    let tree = Tree::new(&robot)?;
    let mut bodies = tree.assemble()?;
    drop_massless_leaves(&mut bodies)?;
    let description = describe(name, bodies)?;
    let violations = description.violations();
    if !violations.is_empty() {
        let list: Vec<String> = violations
            .iter()
            .map(|(field, message)| format!("{field}: {message}"))
            .collect();
        return Err(UrdfError::Invalid(list.join("; ")));
    }
    Ok(description)
}

/// The URDF's links and joints, indexed and checked to form one tree.
struct Tree<'a> {
    links: BTreeMap<&'a str, &'a urdf_rs::Link>,
    /// Each link's child joints, in file order.
    children: BTreeMap<&'a str, Vec<&'a urdf_rs::Joint>>,
    root: &'a urdf_rs::Link,
}

impl<'a> Tree<'a> {
    fn new(robot: &'a urdf_rs::Robot) -> Result<Tree<'a>, UrdfError> {
        if robot.links.is_empty() {
            return Err(UrdfError::NoLinks);
        }
        let mut links = BTreeMap::new();
        for link in &robot.links {
            if links.insert(link.name.as_str(), link).is_some() {
                return Err(UrdfError::DuplicateLink(link.name.clone()));
            }
        }
        let mut joint_names = BTreeSet::new();
        let mut parent_joint: BTreeMap<&str, &str> = BTreeMap::new();
        let mut children: BTreeMap<&str, Vec<&urdf_rs::Joint>> = BTreeMap::new();
        for joint in &robot.joints {
            if !joint_names.insert(joint.name.as_str()) {
                return Err(UrdfError::DuplicateJoint(joint.name.clone()));
            }
            for (role, link) in [("parent", &joint.parent.link), ("child", &joint.child.link)] {
                if !links.contains_key(link.as_str()) {
                    return Err(joint_error(
                        &joint.name,
                        format!("its {role} link `{link}` is not defined"),
                    ));
                }
            }
            if joint.parent.link == joint.child.link {
                return Err(joint_error(
                    &joint.name,
                    format!("link `{}` cannot be its own parent", joint.child.link),
                ));
            }
            if let Some(first) = parent_joint.insert(&joint.child.link, &joint.name) {
                return Err(joint_error(
                    &joint.name,
                    format!(
                        "its child link `{}` is already attached by joint `{first}`; a robot is a tree",
                        joint.child.link
                    ),
                ));
            }
            children
                .entry(joint.parent.link.as_str())
                .or_default()
                .push(joint);
        }
        let roots: Vec<&urdf_rs::Link> = robot
            .links
            .iter()
            .filter(|l| !parent_joint.contains_key(l.name.as_str()))
            .collect();
        let root = match roots.as_slice() {
            [] => return Err(UrdfError::NoRoot),
            [root] => *root,
            _ => {
                let names: Vec<String> = roots.iter().map(|l| format!("`{}`", l.name)).collect();
                return Err(UrdfError::SeveralRoots(names.join(", ")));
            }
        };
        Ok(Tree {
            links,
            children,
            root,
        })
    }

    /// Walks the tree from the root (depth first, joints in file order, so parents come
    /// before children), merging fixed links and starting a body at each moving joint.
    fn assemble(&self) -> Result<Vec<Body>, UrdfError> {
        let mut bodies = vec![Body {
            link: self.root.name.clone(),
            parent: None,
            joint: None,
            actuator: None,
            spring: None,
            parts: Vec::new(),
            contacts: Vec::new(),
        }];
        let mut visited = BTreeSet::new();
        // (link, its body, the link frame's pose in the body's frame)
        let mut stack = vec![(self.root, 0usize, IsometryMatrix3::identity())];
        while let Some((link, body, pose)) = stack.pop() {
            visited.insert(link.name.as_str());
            if let Some(part) = part(link, &pose)? {
                bodies[body].parts.push(part);
            }
            let joints = self.children.get(link.name.as_str());
            if joints.is_none_or(|j| j.is_empty()) {
                let contact = ContactSpec {
                    name: link.name.clone(),
                    body: bodies[body].link.clone(),
                    point: contact_point(link, &pose)?,
                    shape: ContactShape::Point,
                    half_width: None,
                    radius: None,
                };
                bodies[body].contacts.push(contact);
            }
            let mut next = Vec::new();
            for joint in joints.into_iter().flatten() {
                let child = self.links[joint.child.link.as_str()];
                let origin = pose
                    * pose_of(&joint.origin).ok_or_else(|| {
                        joint_error(&joint.name, "its <origin> has a non-finite number")
                    })?;
                if let urdf_rs::JointType::Fixed = joint.joint_type {
                    next.push((child, body, origin));
                    continue;
                }
                let spec = moving_joint(joint, &bodies[body].link, &origin)?;
                bodies.push(Body {
                    link: child.name.clone(),
                    parent: Some(body),
                    actuator: actuator(joint, spec.kind)?,
                    spring: damper(joint)?,
                    joint: Some(spec),
                    parts: Vec::new(),
                    contacts: Vec::new(),
                });
                // The child body's frame sits at the joint with the parent's orientation; the
                // link frame keeps the origin's rotation relative to it.
                let frame = IsometryMatrix3::from_parts(Translation3::identity(), origin.rotation);
                next.push((child, bodies.len() - 1, frame));
            }
            stack.extend(next.into_iter().rev());
        }
        if let Some(lost) = self.links.keys().find(|l| !visited.contains(*l)) {
            return Err(link_error(
                lost,
                format!(
                    "cannot be reached from the root link `{}`: the joints form a loop",
                    self.root.name
                ),
            ));
        }
        Ok(bodies)
    }
}

/// A URDF pose as a rigid transform (`rpy` is roll about x, then pitch about y, then yaw
/// about z, all about fixed axes: R = Rz Ry Rx); `None` if a number is not finite.
fn pose_of(pose: &urdf_rs::Pose) -> Option<IsometryMatrix3<f64>> {
    let [x, y, z] = pose.xyz.0;
    let [roll, pitch, yaw] = pose.rpy.0;
    [x, y, z, roll, pitch, yaw]
        .iter()
        .all(|v| v.is_finite())
        .then(|| {
            IsometryMatrix3::from_parts(
                Translation3::new(x, y, z),
                Rotation3::from_euler_angles(roll, pitch, yaw),
            )
        })
}

/// A link's mass, centre of mass and inertia about the plane's normal, in its body's frame
/// (`pose`: the link frame in the body frame); `None` for a massless link.
fn part(link: &urdf_rs::Link, pose: &IsometryMatrix3<f64>) -> Result<Option<Part>, UrdfError> {
    let inertial = &link.inertial;
    let mass = inertial.mass.value;
    if !(mass.is_finite() && mass >= 0.0) {
        return Err(link_error(
            &link.name,
            format!("mass must be a finite number >= 0 kg, got {mass}"),
        ));
    }
    if mass == 0.0 {
        return Ok(None);
    }
    let i = &inertial.inertia;
    let tensor = Matrix3::new(
        i.ixx, i.ixy, i.ixz, //
        i.ixy, i.iyy, i.iyz, //
        i.ixz, i.iyz, i.izz,
    );
    if !tensor.iter().all(|v| v.is_finite()) {
        return Err(link_error(
            &link.name,
            "its <inertia> has a non-finite number",
        ));
    }
    let frame = pose
        * pose_of(&inertial.origin).ok_or_else(|| {
            link_error(&link.name, "its <inertial><origin> has a non-finite number")
        })?;
    // I_yy of R I Rᵀ = r · I r with r = Rᵀ ŷ, R the inertial frame's rotation in the body.
    let r = frame.rotation.matrix().transpose() * Vector3::y();
    let inertia = r.dot(&(tensor * r));
    if inertia < 0.0 {
        return Err(link_error(
            &link.name,
            format!(
                "its moment of inertia about the plane's normal (0, 1, 0) is {inertia} kg m²; it must be >= 0"
            ),
        ));
    }
    let com = frame.translation.vector;
    Ok(Some(Part {
        mass,
        com: [com.x, com.z],
        inertia,
    }))
}

/// A leaf link's contact point (x, z) in its body's frame: the bottom of its first collision
/// sphere along the body's z axis, or the link frame's origin.
fn contact_point(link: &urdf_rs::Link, pose: &IsometryMatrix3<f64>) -> Result<[f64; 2], UrdfError> {
    let sphere = link.collision.iter().find_map(|c| match c.geometry {
        urdf_rs::Geometry::Sphere { radius } => Some((&c.origin, radius)),
        _ => None,
    });
    let (centre, drop) = match sphere {
        Some((origin, radius)) => {
            let [x, y, z] = origin.xyz.0;
            if !([x, y, z, radius].iter().all(|v| v.is_finite()) && radius >= 0.0) {
                return Err(link_error(
                    &link.name,
                    "its collision sphere needs a finite origin and a finite radius >= 0",
                ));
            }
            (Vector3::new(x, y, z), radius)
        }
        None => (Vector3::zeros(), 0.0),
    };
    let point = pose.transform_vector(&centre) + pose.translation.vector;
    Ok([point.x, point.z - drop])
}

/// A revolute, continuous or prismatic joint as a loam joint; `origin` is the joint frame in
/// its parent body's frame. Refuses other types and motion out of the plane.
fn moving_joint(
    joint: &urdf_rs::Joint,
    parent: &str,
    origin: &IsometryMatrix3<f64>,
) -> Result<JointSpec, UrdfError> {
    use urdf_rs::JointType as U;
    let name = joint.name.as_str();
    let kind = match joint.joint_type {
        U::Revolute | U::Continuous => JointType::Revolute,
        U::Prismatic => JointType::Prismatic,
        ref other => {
            return Err(joint_error(
                name,
                format!(
                "is a {} joint; loam imports revolute, continuous, prismatic and fixed joints only",
                format!("{other:?}").to_lowercase()
            ),
            ))
        }
    };
    if BASE_COORDINATES.contains(&name) {
        return Err(joint_error(
            name,
            "the name is one of the floating base's coordinates (x, z, pitch); rename the joint",
        ));
    }
    if let Some(mimic) = &joint.mimic {
        return Err(joint_error(
            name,
            format!(
                "follows joint `{}` (<mimic>); loam's joints are independent coordinates",
                mimic.joint
            ),
        ));
    }
    let offset = origin.translation.vector;
    if offset.y.abs() > TOLERANCE {
        return Err(joint_error(
            name,
            format!(
                "sits at y = {} m in the frame of body `{parent}`, off the plane y = 0",
                offset.y
            ),
        ));
    }
    let raw = Vector3::from(joint.axis.xyz.0);
    let norm = raw.norm();
    if !(norm.is_finite() && norm > 0.0) {
        return Err(joint_error(
            name,
            format!("its axis ({}) is not a direction", show(&raw)),
        ));
    }
    let axis = origin.rotation * (raw / norm);
    let limit = &joint.limit;
    let (lower, upper) = (limit.lower, limit.upper);
    if lower.is_nan() || upper.is_nan() || lower > upper {
        return Err(joint_error(
            name,
            format!("its position limits must be lower <= upper, got [{lower}, {upper}]"),
        ));
    }
    // An omitted <limit> reads as lower = upper = 0: no position limit.
    let limited = lower < upper && (lower.is_finite() || upper.is_finite());
    let (axis_2d, position) = match kind {
        JointType::Revolute => {
            if axis.x.abs() > TOLERANCE || axis.z.abs() > TOLERANCE {
                return Err(joint_error(
                    name,
                    format!(
                        "turns about ({}) in the frame of body `{parent}`, not about the plane's normal (0, ±1, 0)",
                        show(&axis)
                    ),
                ));
            }
            // Loam's angle is counter-clockwise in x–z, a turn about −y: about +y, θ = −q.
            let position = if axis.y > 0.0 {
                [-upper, -lower]
            } else {
                [lower, upper]
            };
            let continuous = matches!(joint.joint_type, U::Continuous);
            (None, (limited && !continuous).then_some(position))
        }
        _ => {
            if axis.y.abs() > TOLERANCE {
                return Err(joint_error(
                    name,
                    format!(
                        "slides along ({}) in the frame of body `{parent}`, out of the plane y = 0",
                        show(&axis)
                    ),
                ));
            }
            let length = axis.x.hypot(axis.z);
            (
                Some([axis.x / length, axis.z / length]),
                limited.then_some([lower, upper]),
            )
        }
    };
    let velocity = limit.velocity;
    if velocity.is_nan() || velocity < 0.0 {
        return Err(joint_error(
            name,
            format!("its velocity limit must be >= 0, got {velocity}"),
        ));
    }
    Ok(JointSpec {
        name: joint.name.clone(),
        parent: parent.to_owned(),
        kind,
        origin: [offset.x, offset.z],
        axis: axis_2d,
        position,
        velocity: (velocity > 0.0 && velocity.is_finite()).then_some(velocity),
        nominal: None,
    })
}

/// The actuator of a joint whose `<limit effort>` is > 0.
fn actuator(joint: &urdf_rs::Joint, kind: JointType) -> Result<Option<ActuatorSpec>, UrdfError> {
    let effort = joint.limit.effort;
    if effort.is_nan() || effort < 0.0 {
        return Err(joint_error(
            &joint.name,
            format!("its effort limit must be >= 0, got {effort}"),
        ));
    }
    if effort.is_infinite() {
        return Err(joint_error(
            &joint.name,
            "has no finite effort limit; loam's actuators need one (give <limit effort=\"...\">, or 0 for a passive joint)",
        ));
    }
    if effort == 0.0 {
        return Ok(None);
    }
    let (suffix, kind) = match kind {
        JointType::Revolute => ("torque", ActuatorKind::Torque),
        JointType::Prismatic => ("force", ActuatorKind::Force),
    };
    Ok(Some(ActuatorSpec {
        name: format!("{}_{suffix}", joint.name),
        joint: joint.name.clone(),
        kind,
        limit: [-effort, effort],
        drive: None,
    }))
}

/// The damper of a joint whose `<dynamics damping>` is > 0.
fn damper(joint: &urdf_rs::Joint) -> Result<Option<SpringSpec>, UrdfError> {
    let Some(dynamics) = &joint.dynamics else {
        return Ok(None);
    };
    let damping = dynamics.damping;
    if !(damping.is_finite() && damping >= 0.0) {
        return Err(joint_error(
            &joint.name,
            format!("its damping must be a finite number >= 0, got {damping}"),
        ));
    }
    Ok((damping > 0.0).then(|| SpringSpec {
        joint: joint.name.clone(),
        stiffness: 0.0,
        damping,
        rest: 0.0,
    }))
}

/// Drops the massless bodies that carry no other body (children first, so a chain of them
/// goes); refuses a massless base or a massless body that carries others.
fn drop_massless_leaves(bodies: &mut Vec<Body>) -> Result<(), UrdfError> {
    let mut keep = vec![true; bodies.len()];
    for b in (0..bodies.len()).rev() {
        if bodies[b].parts.iter().any(|p| p.mass > 0.0) {
            continue;
        }
        let carried = (b + 1..bodies.len()).find(|&c| keep[c] && bodies[c].parent == Some(b));
        match (bodies[b].parent, carried) {
            (Some(_), None) => keep[b] = false,
            (None, _) => {
                return Err(link_error(
                    &bodies[b].link,
                    "the root link (the floating base) has no mass, nor has any link fixed to it; loam's bodies need mass > 0",
                ))
            }
            (Some(_), Some(c)) => {
                let joint = bodies[c].joint.as_ref().map_or("", |j| j.name.as_str());
                return Err(link_error(
                    &bodies[b].link,
                    format!(
                        "has no mass (nor has any link fixed to it) but carries joint `{joint}`; loam's bodies need mass > 0"
                    ),
                ));
            }
        }
    }
    let mut k = keep.into_iter();
    bodies.retain(|_| k.next().unwrap_or(true));
    Ok(())
}

/// The description of the assembled bodies: each body's parts merged by the parallel-axis
/// theorem about their common centre of mass.
fn describe(name: String, bodies: Vec<Body>) -> Result<RobotDescription, UrdfError> {
    let mut description = RobotDescription {
        name,
        ..RobotDescription::default()
    };
    for body in bodies {
        let mass: f64 = body.parts.iter().map(|p| p.mass).sum();
        let com = [0, 1].map(|k| body.parts.iter().map(|p| p.mass * p.com[k]).sum::<f64>() / mass);
        let inertia: f64 = body
            .parts
            .iter()
            .map(|p| {
                let (dx, dz) = (p.com[0] - com[0], p.com[1] - com[1]);
                p.inertia + p.mass * (dx * dx + dz * dz)
            })
            .sum();
        if !(mass.is_finite() && inertia.is_finite() && inertia > 0.0) {
            return Err(link_error(
                &body.link,
                format!(
                    "its moment of inertia about the plane's normal (with the links fixed to it) is {inertia} kg m²; loam's bodies need > 0"
                ),
            ));
        }
        description.bodies.push(BodySpec {
            name: body.link,
            mass,
            inertia,
            com,
            joint: body.joint,
        });
        description.actuators.extend(body.actuator);
        description.springs.extend(body.spring);
        description.contacts.extend(body.contacts);
    }
    Ok(description)
}

/// A vector for a message: up to six decimals, trailing zeros trimmed, "-0" as "0".
fn show(v: &Vector3<f64>) -> String {
    let one = |x: f64| {
        let text = format!("{x:.6}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "-0" {
            "0".to_owned()
        } else {
            text.to_owned()
        }
    };
    format!("{}, {}, {}", one(v.x), one(v.y), one(v.z))
}
