//! A description built into the [`PlanarRobot`] the planner and the simulators read, and a
//! built robot written back as a description.

use std::collections::BTreeMap;

use super::{
    ActuatorKind, ActuatorSpec, BodySpec, ContactShape, ContactSpec, DriveSpec, JointSpec,
    JointType, RobotDescription, SpringSpec, BASE,
};
use crate::model::multibody::{Body, Joint, JointKind, Multibody};
use crate::model::planar::{channel, ContactPoint, Drive, Input, JointSpring, PlanarRobot};

impl RobotDescription {
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
        let multibody = Multibody {
            bodies,
            gravity,
            guide_angle: self.guide_angle,
        };
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
                radius: c.radius,
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
            // z moves the base along the guide, cos β of it upward.
            standing[1] -= lowest / self.guide_angle.cos();
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
                drive: a.drive.as_ref().map(|d| Drive {
                    force_constant: d.force_constant,
                    position_gain: d.position_gain,
                    velocity_feedforward: d.velocity_feedforward,
                    velocity_gain: d.velocity_gain,
                    integral_gain: d.integral_gain,
                }),
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
            locked: self.locked.iter().map(|name| index(name)).collect(),
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
                    drive: i.drive.as_ref().map(|d| DriveSpec {
                        force_constant: d.force_constant,
                        position_gain: d.position_gain,
                        velocity_feedforward: d.velocity_feedforward,
                        velocity_gain: d.velocity_gain,
                        integral_gain: d.integral_gain,
                    }),
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
                    radius: c.radius,
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
            locked: robot.locked.iter().map(|&j| name_of(j)).collect(),
            guide_angle: robot.body.guide_angle,
        }
    }
}
