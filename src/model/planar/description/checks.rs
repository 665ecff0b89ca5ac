//! The rules a robot description must meet beyond its types ([`RobotDescription::violations`]):
//! each names the field (`bodies[2].mass`) and says what is wrong and what is accepted.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    ActuatorKind, BodySpec, ContactShape, DescriptionViolation, JointSpec, JointType,
    RobotDescription, BASE,
};

/// The broken rules found so far.
#[derive(Default)]
struct Checks {
    bad: Vec<DescriptionViolation>,
}

impl Checks {
    fn fail(&mut self, field: String, message: impl Into<String>) {
        self.bad.push((field, message.into()));
    }

    /// A finite number > 0; `unit` (with its leading space, or empty) follows the bound.
    fn positive(&mut self, field: String, value: f64, unit: &str) {
        if !(value.is_finite() && value > 0.0) {
            self.fail(
                field,
                format!("must be a finite number > 0{unit}, got {value}"),
            );
        }
    }

    /// A finite number >= 0.
    fn non_negative(&mut self, field: String, value: f64) {
        if !(value.is_finite() && value >= 0.0) {
            self.fail(field, format!("must be a finite number >= 0, got {value}"));
        }
    }

    /// [lower, upper] with lower < upper.
    fn ordered(&mut self, field: String, [lower, upper]: [f64; 2]) {
        if !(lower < upper) {
            self.fail(
                field,
                format!("must be [lower, upper] with lower < upper, got [{lower}, {upper}]"),
            );
        }
    }

    /// Two finite numbers (x, z) in metres.
    fn point(&mut self, field: String, point: [f64; 2]) {
        if !point.iter().all(|c| c.is_finite()) {
            self.fail(
                field,
                format!(
                    "must be two finite numbers (x, z) in metres, got [{}, {}]",
                    point[0], point[1]
                ),
            );
        }
    }

    /// `name` not yet in `seen` (and now in it); `what` names the kind of thing.
    fn unique<'a>(
        &mut self,
        seen: &mut BTreeSet<&'a str>,
        name: &'a str,
        field: String,
        what: &str,
    ) {
        if !seen.insert(name) {
            self.fail(
                field,
                format!("{what} `{name}` is named twice; {what} names must be unique"),
            );
        }
    }
}

/// The robot's coordinates: the base's three and one per joint, with the joint's type.
struct Coordinates<'a> {
    joints: BTreeMap<&'a str, JointType>,
}

impl Coordinates<'_> {
    /// `None`: no such coordinate; `Some(None)`: a base coordinate; `Some(Some(t))`: a joint.
    fn kind(&self, name: &str) -> Option<Option<JointType>> {
        if BASE.contains(&name) {
            Some(None)
        } else {
            self.joints.get(name).map(|k| Some(*k))
        }
    }

    fn names(&self) -> String {
        let mut names: Vec<&str> = BASE.to_vec();
        names.extend(self.joints.keys().copied());
        names.join(", ")
    }
}

impl RobotDescription {
    /// Checks every rule beyond the types; all the rules broken, in file order. An empty
    /// `name` is not one of them: a robot file takes its file's stem.
    pub fn violations(&self) -> Vec<DescriptionViolation> {
        let mut checks = Checks::default();
        let coordinates = self.check_bodies(&mut checks);
        self.check_springs(&mut checks, &coordinates);
        self.check_actuators(&mut checks, &coordinates);
        self.check_contacts(&mut checks);
        self.check_standing(&mut checks, &coordinates);
        if let Some(l) = self.length_scale {
            checks.positive("length_scale".into(), l, " m");
        }
        checks.bad
    }

    /// The bodies, their joints and the tree they form; returns the coordinates declared.
    fn check_bodies(&self, checks: &mut Checks) -> Coordinates<'_> {
        if self.bodies.is_empty() {
            checks.fail(
                "bodies".into(),
                "needs at least one body (the floating base)",
            );
        }
        let mut body_names = BTreeSet::new();
        let mut joint_names = BTreeSet::new();
        let mut coordinates = Coordinates {
            joints: BTreeMap::new(),
        };
        let mut bases = Vec::new();
        for (i, body) in self.bodies.iter().enumerate() {
            let at = |field: &str| format!("bodies[{i}].{field}");
            checks.unique(&mut body_names, &body.name, at("name"), "body");
            let definite = " (M(q) must be positive definite)";
            checks.positive(at("mass"), body.mass, &format!(" kg{definite}"));
            checks.positive(at("inertia"), body.inertia, &format!(" kg m²{definite}"));
            checks.point(at("com"), body.com);
            match &body.joint {
                None => bases.push(i),
                Some(joint) => {
                    if BASE.contains(&joint.name.as_str()) {
                        checks.fail(
                            at("joint.name"),
                            format!(
                                "`{}` is a coordinate of the floating base; accepted: any other name",
                                joint.name
                            ),
                        );
                    } else {
                        checks.unique(&mut joint_names, &joint.name, at("joint.name"), "joint");
                        coordinates.joints.insert(&joint.name, joint.kind);
                    }
                    self.check_joint(checks, body, joint, &at);
                }
            }
        }
        match bases.len() {
            0 if !self.bodies.is_empty() => checks.fail(
                "bodies".into(),
                "no body is the floating base: exactly one body must have no `joint`",
            ),
            0 | 1 => {}
            _ => {
                let names: Vec<&str> = bases
                    .iter()
                    .map(|&i| self.bodies[i].name.as_str())
                    .collect();
                checks.fail(
                    format!("bodies[{}]", bases[1]),
                    format!(
                        "bodies {} all lack a joint; exactly one (the floating base) may",
                        names.join(", ")
                    ),
                );
            }
        }
        // A loop: bodies whose parents all exist but that never reach the base.
        let all_parents_exist = self.bodies.iter().all(|b| {
            b.joint
                .as_ref()
                .is_none_or(|j| self.bodies.iter().any(|p| p.name == j.parent))
        });
        if bases.len() == 1 && all_parents_exist && self.tree_order().is_none() {
            let (i, cycle) = self.first_loop();
            checks.fail(
                format!("bodies[{i}].joint.parent"),
                format!(
                    "the joints form a loop ({}); a robot is a tree: every chain of parents must end at the base",
                    cycle.join(" → ")
                ),
            );
        }
        coordinates
    }

    /// One body's joint: its parent, origin, axis and limits.
    fn check_joint(
        &self,
        checks: &mut Checks,
        body: &BodySpec,
        joint: &JointSpec,
        at: &dyn Fn(&str) -> String,
    ) {
        if joint.parent == body.name {
            checks.fail(
                at("joint.parent"),
                format!("body `{}` cannot be its own parent", body.name),
            );
        } else if !self.bodies.iter().any(|b| b.name == joint.parent) {
            let names: Vec<&str> = self.bodies.iter().map(|b| b.name.as_str()).collect();
            checks.fail(
                at("joint.parent"),
                format!(
                    "no body is named `{}`; accepted: one of {}",
                    joint.parent,
                    names.join(", ")
                ),
            );
        }
        checks.point(at("joint.origin"), joint.origin);
        match (joint.kind, joint.axis) {
            (JointType::Prismatic, None) => checks.fail(
                at("joint.axis"),
                "a prismatic joint needs its axis: a unit vector (x, z) in the parent's frame",
            ),
            (JointType::Prismatic, Some(axis)) => {
                let norm = axis[0].hypot(axis[1]);
                if !norm.is_finite() || (norm - 1.0).abs() > 1e-9 {
                    checks.fail(
                        at("joint.axis"),
                        format!(
                            "must be a unit vector (length 1 within 1e-9), got [{}, {}] of length {norm}",
                            axis[0], axis[1]
                        ),
                    );
                }
            }
            (JointType::Revolute, Some(_)) => checks.fail(
                at("joint.axis"),
                "a revolute joint turns about the plane's normal and takes no axis",
            ),
            (JointType::Revolute, None) => {}
        }
        if let Some(limits) = joint.position {
            checks.ordered(at("joint.position"), limits);
        }
        if let Some(v) = joint.velocity {
            if !(v > 0.0) {
                checks.fail(
                    at("joint.velocity"),
                    format!("must be > 0 (a bound on |q̇|), got {v}"),
                );
            }
        }
        if let Some(n) = joint.nominal {
            checks.positive(at("joint.nominal"), n, "");
        }
    }

    fn check_springs(&self, checks: &mut Checks, coordinates: &Coordinates) {
        let mut spring_joints = BTreeSet::new();
        for (i, spring) in self.springs.iter().enumerate() {
            let at = |field: &str| format!("springs[{i}].{field}");
            if coordinates.kind(&spring.joint).flatten().is_none() {
                checks.fail(
                    at("joint"),
                    format!(
                        "no joint is named `{}`; accepted: one of {}",
                        spring.joint,
                        coordinates
                            .joints
                            .keys()
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            } else if !spring_joints.insert(spring.joint.as_str()) {
                checks.fail(
                    at("joint"),
                    format!("joint `{}` has two springs; give it one", spring.joint),
                );
            }
            checks.non_negative(at("stiffness"), spring.stiffness);
            checks.non_negative(at("damping"), spring.damping);
            if !spring.rest.is_finite() {
                checks.fail(
                    at("rest"),
                    format!("must be a finite number, got {}", spring.rest),
                );
            }
        }
    }

    fn check_actuators(&self, checks: &mut Checks, coordinates: &Coordinates) {
        let mut names = BTreeSet::new();
        for (i, actuator) in self.actuators.iter().enumerate() {
            let at = |field: &str| format!("actuators[{i}].{field}");
            checks.unique(&mut names, &actuator.name, at("name"), "actuator");
            match coordinates.kind(&actuator.joint) {
                None => checks.fail(
                    at("joint"),
                    format!(
                        "no coordinate is named `{}`; accepted: one of {}",
                        actuator.joint,
                        coordinates.names()
                    ),
                ),
                Some(kind) => {
                    let rotational = match kind {
                        Some(k) => k == JointType::Revolute,
                        None => actuator.joint == "pitch",
                    };
                    let (wanted, word) = if rotational {
                        (ActuatorKind::Torque, "torque")
                    } else {
                        (ActuatorKind::Force, "force")
                    };
                    if actuator.kind != wanted {
                        checks.fail(
                            at("kind"),
                            format!(
                                "`{}` turns (revolute or pitch) so it takes a torque, a sliding coordinate a force; accepted here: {word}",
                                actuator.joint
                            ),
                        );
                    }
                }
            }
            checks.ordered(at("limit"), actuator.limit);
            if let Some(drive) = &actuator.drive {
                let gain = |field: &str| at(&format!("drive.{field}"));
                checks.positive(gain("force_constant"), drive.force_constant, "");
                checks.non_negative(gain("position_gain"), drive.position_gain);
                checks.non_negative(gain("velocity_feedforward"), drive.velocity_feedforward);
                checks.non_negative(gain("velocity_gain"), drive.velocity_gain);
                checks.positive(gain("integral_gain"), drive.integral_gain, "");
                if BASE.contains(&actuator.joint.as_str()) {
                    checks.fail(
                        at("joint"),
                        "a drive acts between two bodies; accepted: a joint's name, not a base coordinate",
                    );
                }
            }
        }
        if !(self.guide_angle.is_finite() && self.guide_angle.abs() < std::f64::consts::FRAC_PI_2) {
            checks.fail(
                "guide_angle".to_string(),
                format!(
                    "must be a finite angle within (-pi/2, pi/2) rad, got {}",
                    self.guide_angle
                ),
            );
        }
        let mut seen = BTreeSet::new();
        for (i, name) in self.locked.iter().enumerate() {
            if !BASE.contains(&name.as_str()) {
                checks.fail(
                    format!("locked[{i}]"),
                    format!("`{name}` is not a base coordinate; accepted: x, z, pitch"),
                );
            } else if !seen.insert(name.as_str()) {
                checks.fail(format!("locked[{i}]"), format!("`{name}` is locked twice"));
            }
        }
    }

    fn check_contacts(&self, checks: &mut Checks) {
        let mut names = BTreeSet::new();
        for (i, contact) in self.contacts.iter().enumerate() {
            let at = |field: &str| format!("contacts[{i}].{field}");
            checks.unique(&mut names, &contact.name, at("name"), "contact");
            if !self.bodies.iter().any(|b| b.name == contact.body) {
                checks.fail(at("body"), format!("no body is named `{}`", contact.body));
            }
            checks.point(at("point"), contact.point);
            match (contact.shape, contact.half_width) {
                (ContactShape::Sole, None) => {
                    checks.fail(at("half_width"), "a sole needs its half width [m], > 0")
                }
                (ContactShape::Sole, Some(w)) => checks.positive(at("half_width"), w, " m"),
                (ContactShape::Point, Some(_)) => checks.fail(
                    at("half_width"),
                    "a point contact has no width; write `shape: sole` for a flat sole",
                ),
                (ContactShape::Point, None) => {}
            }
            match (contact.shape, contact.radius) {
                (ContactShape::Point, Some(r)) => checks.positive(at("radius"), r, " m"),
                (ContactShape::Sole, Some(_)) => checks.fail(
                    at("radius"),
                    "a sole has a half width, not a radius; a disc footprint's `radius` goes \
                     on a point contact",
                ),
                (_, None) => {}
            }
        }
    }

    fn check_standing(&self, checks: &mut Checks, coordinates: &Coordinates) {
        for (name, value) in &self.standing {
            let field = format!("standing.{name}");
            let limits = self
                .bodies
                .iter()
                .filter_map(|b| b.joint.as_ref())
                .find(|j| &j.name == name)
                .and_then(|j| j.position);
            if coordinates.kind(name).is_none() {
                checks.fail(
                    field,
                    format!(
                        "no coordinate is named `{name}`; accepted: one of {}",
                        coordinates.names()
                    ),
                );
            } else if !value.is_finite() {
                checks.fail(field, format!("must be a finite number, got {value}"));
            } else if let Some([lower, upper]) = limits {
                if !(lower <= *value && *value <= upper) {
                    checks.fail(
                        field,
                        format!(
                            "{value} is outside the joint's position limits [{lower}, {upper}]"
                        ),
                    );
                }
            }
        }
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
}
