//! A wrench-space hop's optimal control problem: the rest depth and posture it starts from,
//! its phases, points and task, the running cost and the starting guess.

use std::sync::Arc;

use super::{ContactFrame, WrenchSpacePlanner};
use crate::planner::planar::ocp::{
    drive_commands_continuous, drive_state_nominals, drives_at_rest, swing_clearance, TaskRows,
};
use crate::planner::planar::{drives_holding, dynamics_rows, phase_name};
use crate::planner::PlanError;
use crate::scalar::Scalar;
use crate::symbolic::Sx;
use crate::transcription::{
    Bounded, Node, Ocp, Phase, PhaseTrajectory, Point, PointBounds, PointConstraint, Trajectory,
};

impl WrenchSpacePlanner {
    /// The depth where the terrain carries the robot's weight on the first phase's feet
    /// (shared equally), the feet level; `None` if the data's deepest node cannot. The
    /// weight and the capacity are along the base's `z` (vertical for a free robot, along
    /// the guide for one on a tilted rail: gravity's share g cos β, and each vertex's force
    /// along the rail; the guide takes the rest), at the start's posture and tilt.
    pub fn rest_depth(&self) -> Option<f64> {
        let feet = &self.first_ground_phase().contacts;
        let q = self.start_posture();
        let zero = vec![0.0; q.len()];
        let weight = self.robot.body.bias_forces(&q, &zero)[1] / feet.len() as f64;
        let [ex, ez] = self.robot.body.base_axes()[1];
        let tilt = self.contact_frame(&q, feet[0]).tilt;
        let capacity = |d: f64| {
            self.space
                .vertices(&d, &tilt)
                .iter()
                .map(|w| ex * w[0] + ez * w[1])
                .fold(0.0, f64::max)
        };
        let mut low = self.space.depth_range().0;
        if capacity(low) < weight {
            return None;
        }
        let mut high = 0.0;
        for _ in 0..100 {
            let mid = 0.5 * (low + high);
            if capacity(mid) >= weight {
                low = mid;
            } else {
                high = mid;
            }
        }
        Some(low)
    }

    /// The first phase with feet on the sand (the first phase, but for a gait's stride that
    /// begins in flight).
    pub(super) fn first_ground_phase(&self) -> &super::WrenchPhase {
        self.phases
            .iter()
            .find(|p| p.is_ground())
            .expect("a validated schedule has a ground phase")
    }

    /// The standing posture with the start's set coordinates.
    fn start_posture(&self) -> Vec<f64> {
        let mut q = self.robot.standing.clone();
        for &(i, value) in &self.start_set {
            q[i] = value;
        }
        q
    }

    /// [`rest_depth`](Self::rest_depth), or why there is none.
    pub(super) fn start_depth(&self) -> Result<f64, PlanError> {
        self.rest_depth().ok_or_else(|| {
            PlanError::Unplannable(
                "the terrain cannot carry the robot's weight within its data's depth range".into(),
            )
        })
    }

    /// The standing posture with the start's set coordinates, lowered so that the first
    /// phase's feet are at the rest depth.
    pub fn rest_configuration(&self) -> Result<Vec<f64>, PlanError> {
        let depth = self.start_depth()?;
        let mut q = self.start_posture();
        // The base moved along its z (up or down, cos β of it vertical on a guide) so that
        // the first phase's feet sit at the rest depth on average (the start's set
        // coordinates, a crouch say, move them from standing's z = 0).
        let feet = &self.first_ground_phase().contacts;
        let mean = feet
            .iter()
            .map(|&c| self.contact_frame(&q, c).depth)
            .sum::<f64>()
            / feet.len().max(1) as f64;
        if !self.start_set.iter().any(|&(i, _)| i == 1) {
            q[1] += (depth - mean) / self.robot.body.base_axes()[1][1];
        }
        Ok(q)
    }

    /// The NLP's state and control names at one node.
    pub fn names(&self) -> (Vec<String>, Vec<String>) {
        let coords = &self.robot.coordinates;
        let states = self.robot.state_names();
        let mut controls: Vec<String> = self.robot.inputs.iter().map(|i| i.name.clone()).collect();
        controls.extend(coords.iter().map(|c| format!("dd_{}", c.name)));
        for c in &self.robot.contacts {
            controls
                .extend((1..=self.space.n_directions()).map(|i| format!("{}_lambda_{i}", c.name)));
        }
        controls.extend(coords.iter().map(|c| format!("y_{}", c.name)));
        (states, controls)
    }

    pub fn ocp(self: &Arc<Self>) -> Result<Ocp, PlanError> {
        self.validate()?;
        let l = self.layout();
        let inf = f64::INFINITY;
        let weight = self.robot.body.total_mass() * self.robot.body.gravity;
        let (deepest, _) = self.space.depth_range();
        let (_, tilt_max) = self.space.tilt_range();
        let mut phases = Vec::new();
        for (p, spec) in self.phases.iter().enumerate() {
            let ground = spec.is_ground();
            let mut control_bounds = vec![(-inf, inf); l.n_u()];
            for (i, input) in self.robot.inputs.iter().enumerate() {
                // A drive's limit bounds its force (a path row); its input is a command rate.
                if input.drive.is_none() {
                    control_bounds[i] = input.limit;
                }
            }
            // A locked coordinate does not move: no acceleration, and y (M⁻¹ of the grains'
            // metric) over the free coordinates only.
            for &j in &self.robot.locked {
                control_bounds[l.accel() + j] = (0.0, 0.0);
                control_bounds[l.aux() + j] = (0.0, 0.0);
            }
            for c in 0..l.n_contacts {
                let on = spec.contacts.contains(&c);
                for i in 0..l.m {
                    control_bounds[l.lambda(c) + i] = if on { (0.0, 1.0) } else { (0.0, 0.0) };
                }
            }
            if !ground {
                for i in 0..l.n_q {
                    control_bounds[l.aux() + i] = (0.0, 0.0);
                }
            }
            let hop = Arc::clone(self);
            let active = spec.contacts.clone();
            let path = Box::new(move |x: &[Sx], u: &[Sx]| {
                let q = &x[..l.n_q];
                let frames = hop.robot.body.frames(q);
                let contacts: Vec<ContactFrame<Sx>> = (0..l.n_contacts)
                    .map(|c| hop.frame_in(&frames, c))
                    .collect();
                let residual = hop.dynamics_residual(x, u, &active, &contacts);
                let mut rows = dynamics_rows(&hop.robot, residual, weight);
                let efforts = hop.robot.efforts(x, &u[..l.n_inputs]);
                for (input, effort) in hop.robot.inputs.iter().zip(efforts) {
                    if input.drive.is_some() {
                        rows.push(Bounded::between(
                            format!("{} force", input.name),
                            effort,
                            input.limit.0,
                            input.limit.1,
                        ));
                    }
                }
                // The bodies without a foot stay above the sand (their frame origins).
                for (b, body) in hop.robot.body.bodies.iter().enumerate() {
                    if hop.robot.contacts.iter().any(|c| c.body == b) {
                        continue;
                    }
                    rows.push(
                        Bounded::at_least(
                            format!("{} above the surface", body.name),
                            frames[b].position[1].clone(),
                            0.0,
                        )
                        .nominal(0.1),
                    );
                }
                for (c, frame) in contacts.into_iter().enumerate() {
                    let name = &hop.robot.contacts[c].name;
                    // Every foot keeps a tilt the data cover, in the air too: it lands with it.
                    rows.push(Bounded::between(
                        format!("{name} within the data's tilt"),
                        frame.tilt.clone(),
                        -tilt_max,
                        tilt_max,
                    ));
                    if active.contains(&c) {
                        let total = u[l.lambda(c)..l.lambda(c) + l.m]
                            .iter()
                            .fold(Sx::from(0.0), |s, v| s + v.clone());
                        rows.push(Bounded::at_most(
                            format!("{name} vertex weights"),
                            total,
                            1.0,
                        ));
                        rows.push(
                            Bounded::at_least(
                                format!("{name} within the data's depth"),
                                frame.depth,
                                deepest,
                            )
                            .nominal(0.01),
                        );
                    } else {
                        rows.push(
                            Bounded::at_least(format!("{name} clearance"), frame.depth, 0.0)
                                .nominal(0.01),
                        );
                    }
                }
                rows
            });
            phases.push(Phase {
                name: phase_name(
                    p,
                    &spec
                        .contacts
                        .iter()
                        .map(|&c| self.robot.contacts[c].name.clone())
                        .collect::<Vec<_>>(),
                ),
                nodes: spec.nodes,
                duration: match self.ground_duration_cap(p)? {
                    Some((longest, _)) => (spec.duration.0, spec.duration.1.min(longest)),
                    None => spec.duration,
                },
                dynamics: {
                    let robot = self.robot.clone();
                    Box::new(move |x: &[Sx], u: &[Sx]| {
                        let mut dx: Vec<Sx> = x[l.n_q..2 * l.n_q].to_vec();
                        dx.extend(u[l.accel()..l.accel() + l.n_q].iter().cloned());
                        dx.extend(robot.drive_rates(x, &u[..l.n_inputs]));
                        dx
                    })
                },
                running_cost: Some(Box::new(self.running_cost())),
                path: Some(path),
                // The joints' position and velocity limits hold at every node.
                state_bounds: self.robot.state_bounds(),
                control_bounds,
                entry: None,
                step: ground.then(|| -> crate::transcription::ocp::Step {
                    let robot = self.robot.clone();
                    Box::new(move |x: &[Sx], u: &[Sx], h: &Sx| {
                        let (q, v) = (&x[..l.n_q], &x[l.n_q..2 * l.n_q]);
                        let a = &u[l.accel()..l.accel() + l.n_q];
                        let v_next: Vec<Sx> = (0..l.n_q)
                            .map(|i| v[i].clone() + h.clone() * a[i].clone())
                            .collect();
                        let mut next: Vec<Sx> = (0..l.n_q)
                            .map(|i| q[i].clone() + h.clone() * v_next[i].clone())
                            .collect();
                        next.extend(v_next);
                        // The drives' integrator and command by explicit Euler, from node k.
                        let rates = robot.drive_rates(x, &u[..l.n_inputs]);
                        for (k, rate) in rates.into_iter().enumerate() {
                            next.push(x[2 * l.n_q + k].clone() + h.clone() * rate);
                        }
                        next
                    })
                }),
            });
        }

        let point = |phase: usize, node: Node| Point { phase, node };
        let mut point_bounds = Vec::new();
        let mut point_constraints = Vec::new();
        for (p, spec) in self.phases.iter().enumerate() {
            if !spec.is_ground() {
                continue;
            }
            // y of the last node enters no row.
            let mut last = vec![None; l.n_x() + l.n_u()];
            for i in 0..l.n_q {
                last[l.n_x() + l.aux() + i] = Some((0.0, 0.0));
            }
            point_bounds.push(PointBounds {
                point: point(p, Node::Last),
                state_bounds: last,
            });
            let hop = Arc::clone(self);
            let active = spec.contacts.clone();
            point_constraints.push(PointConstraint {
                name: format!("maximum dissipation {p}"),
                f: Box::new(move |pts: &[Vec<Sx>]| {
                    hop.dissipation_rows(&pts[0], &pts[1], &active)
                        .into_iter()
                        .map(|(name, e, lo, hi)| Bounded::between(name, e, lo, hi).nominal(10.0))
                        .collect()
                }),
                instances: (0..spec.nodes - 1)
                    .map(|k| vec![point(p, Node::Index(k)), point(p, Node::Index(k + 1))])
                    .collect(),
            });
            // Lift-off (the end of a ground phase that a flight follows) and touchdown (the
            // end of the flight before a ground phase): the listed feet at the surface.
            let mut at_surface = Vec::new();
            if p + 1 < self.phases.len() {
                at_surface.push(point(p, Node::Last));
            }
            if p > 0 {
                at_surface.push(point(p - 1, Node::Last));
            }
            if p + 2 == self.phases.len() && self.task.apex_rise.is_none() && !self.task.periodic {
                // The schedule ends with a flight: it ends at touchdown (or at the apex, as
                // a gait's stride does).
                at_surface.push(point(p + 1, Node::Last));
            }
            if !at_surface.is_empty() {
                let hop = Arc::clone(self);
                let feet = spec.contacts.clone();
                point_constraints.push(PointConstraint {
                    name: format!("feet at the surface {p}"),
                    f: Box::new(move |pts: &[Vec<Sx>]| {
                        let q = &pts[0][..l.n_q];
                        feet.iter()
                            .map(|&c| {
                                let name = &hop.robot.contacts[c].name;
                                Bounded::equal(
                                    format!("{name} at the surface"),
                                    hop.contact_frame(q, c).depth,
                                    0.0,
                                )
                                .nominal(0.01)
                            })
                            .collect()
                    }),
                    instances: at_surface.into_iter().map(|pt| vec![pt]).collect(),
                });
            }
        }

        // The start: at rest on the sand, or (a gait) wherever its stride closes.
        let at_rest = self.task.start.at_rest;
        let mut start = vec![None; l.n_x() + l.n_u()];
        if !self.robot.locked.contains(&0) {
            start[0] = Some((0.0, 0.0));
        }
        for &(i, value) in &self.start_set {
            start[i] = Some((value, value));
        }
        let drives = l.n_drive_states > 0 && at_rest;
        for i in 0..l.n_q {
            if !at_rest {
                break;
            }
            start[l.n_q + i] = Some((0.0, 0.0));
            // With drives, the "drives at rest" rows below say it (the command rate may start
            // at any value, a step in the commanded velocity; the accelerations follow).
            if !drives {
                start[l.n_x() + l.accel() + i] = Some((0.0, 0.0));
            }
        }
        point_bounds.push(PointBounds {
            point: point(0, Node::First),
            state_bounds: start,
        });
        if at_rest {
            let depth = self.start_depth()?;
            let hop = Arc::clone(self);
            let first = self.phases[0].contacts.clone();
            point_constraints.push(PointConstraint {
                name: "start at rest depth".into(),
                f: Box::new(move |pts: &[Vec<Sx>]| {
                    let q = &pts[0][..l.n_q];
                    first
                        .iter()
                        .map(|&c| {
                            let name = &hop.robot.contacts[c].name;
                            Bounded::equal(
                                format!("{name} at rest depth"),
                                hop.contact_frame(q, c).depth,
                                depth,
                            )
                            .nominal(0.01)
                        })
                        .collect()
                }),
                instances: vec![vec![point(0, Node::First)]],
            });
        }

        if drives {
            // At rest: each drive's command at its coordinate, and the equations of motion
            // balanced with every acceleration and command rate 0 under the first node's
            // wrenches (the integrator holding the load).
            let hop = Arc::clone(self);
            let first = self.phases[0].contacts.clone();
            point_constraints.push(PointConstraint {
                name: "drives at rest".into(),
                f: Box::new(move |pts: &[Vec<Sx>]| {
                    let (x, u) = pts[0].split_at(l.n_x());
                    let contacts = hop.contact_frames(&x[..l.n_q]);
                    drives_at_rest(&hop.robot, x, u, l.accel(), weight, |still| {
                        hop.dynamics_residual(x, still, &first, &contacts)
                    })
                }),
                instances: vec![vec![point(0, Node::First)]],
            });
        }
        let hop = Arc::clone(self);
        point_constraints.extend(swing_clearance(
            &self.robot,
            &self.task,
            self.phases.iter().map(|p| (p.contacts.clone(), p.nodes)),
            move |q: &[Sx], c| vec![hop.contact_frame(q, c).depth],
        ));
        point_constraints.extend(drive_commands_continuous(
            &self.robot,
            l.n_x(),
            self.phases.len(),
        ));

        // The end.
        let mut end = vec![None; l.n_x() + l.n_u()];
        for &(i, value) in &self.end_set {
            end[i] = Some((value, value));
        }
        if self.task.end.at_rest {
            for i in 0..l.n_q {
                end[l.n_q + i] = Some((0.0, 0.0));
            }
        }
        let last = point(self.phases.len() - 1, Node::Last);
        point_bounds.push(PointBounds {
            point: last,
            state_bounds: end,
        });
        let task = TaskRows::of(&self.robot, &self.task, !self.phases[0].is_ground());
        if task.any() {
            let hop = Arc::clone(self);
            point_constraints.push(PointConstraint {
                name: "task".into(),
                f: Box::new(move |pts: &[Vec<Sx>]| task.rows(&hop.robot, &pts[0], &pts[1])),
                instances: vec![vec![point(0, Node::First), last]],
            });
        }

        let (state_names, control_names) = self.names();
        let mut state_nominal: Vec<f64> =
            self.robot.coordinates.iter().map(|c| c.nominal).collect();
        state_nominal.extend(self.robot.coordinates.iter().map(|c| c.nominal));
        state_nominal.extend(drive_state_nominals(&self.robot));
        let mut control_nominal: Vec<f64> = self
            .robot
            .inputs
            .iter()
            .map(|i| if i.drive.is_some() { 1.0 } else { i.scale() })
            .collect();
        control_nominal.extend(self.robot.coordinates.iter().map(|c| 10.0 * c.nominal));
        control_nominal.extend(vec![0.1; l.m * l.n_contacts]);
        control_nominal.extend(self.robot.coordinates.iter().map(|c| c.nominal));
        Ok(Ocp {
            // A gait's speed fixes its stride time.
            total_duration: self.task.stride_time().map(|t| (t, t)),
            state_names,
            control_names,
            state_nominal,
            control_nominal,
            phases,
            control_continuity: false,
            point_constraints,
            point_bounds,
        })
    }

    /// ½ Σ (u_i / u_max,i)², the effort of the planar planner (a drive's command rate as it
    /// is); ½ Σ u_i² under `inputs_squared`.
    pub(super) fn running_cost(&self) -> impl Fn(&[Sx], &[Sx]) -> Sx {
        let scales: Vec<f64> = self
            .robot
            .inputs
            .iter()
            .map(|i| {
                if i.drive.is_some()
                    || self.task.objective == crate::problem::planar::Objective::InputsSquared
                {
                    1.0
                } else {
                    i.scale()
                }
            })
            .collect();
        move |_x: &[Sx], u: &[Sx]| {
            scales
                .iter()
                .enumerate()
                .fold(Sx::from(0.0), |s, (i, scale)| {
                    s + (u[i].clone() / *scale).square() * 0.5
                })
        }
    }

    /// The rest configuration at every node (the base moved along to the distance), the
    /// weight carried by the best vertex in ground phases, durations mid-range.
    pub fn rest_guess(&self) -> Result<Trajectory, PlanError> {
        let l = self.layout();
        let rest = self.rest_configuration()?;
        let depth = self.start_depth()?;
        let total_nodes: usize = self.phases.iter().map(|p| p.nodes).sum();
        let distance = self.task.distance.unwrap_or(0.0);
        let mut seen = 0;
        let mut phases = Vec::new();
        for spec in &self.phases {
            let mut states = Vec::new();
            let mut controls = Vec::new();
            for k in 0..spec.nodes {
                let s = (seen + k) as f64 / (total_nodes - 1).max(1) as f64;
                let mut q = rest.clone();
                q[0] = distance * s;
                if !spec.is_ground() {
                    q[1] -= depth / self.robot.body.base_axes()[1][1];
                }
                let mut x = q.clone();
                x.extend(vec![0.0; l.n_q]);
                x.extend(drives_holding(
                    &self.robot,
                    &q,
                    &self.first_ground_phase().contacts,
                    self.robot.body.total_mass() * self.robot.body.gravity,
                ));
                let mut u = vec![0.0; l.n_u()];
                if spec.is_ground() {
                    let share = self.robot.body.total_mass() * self.robot.body.gravity
                        / spec.contacts.len() as f64;
                    for &c in &spec.contacts {
                        let frame = self.contact_frame(&q, c);
                        let vertices = self.space.vertices(&frame.depth, &frame.tilt);
                        let (best, fz) = vertices
                            .iter()
                            .enumerate()
                            .map(|(i, w)| (i, w[1]))
                            .fold((0, 0.0), |b, c| if c.1 > b.1 { c } else { b });
                        if fz > 0.0 {
                            u[l.lambda(c) + best] = (share / fz).min(1.0);
                        }
                    }
                }
                states.push(x);
                controls.push(u);
            }
            seen += spec.nodes;
            phases.push(PhaseTrajectory {
                name: String::new(),
                duration: 0.5 * (spec.duration.0 + spec.duration.1.min(1.0)),
                states,
                controls,
                ..Default::default()
            });
        }
        Ok(Trajectory { phases })
    }
}
