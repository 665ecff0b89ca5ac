//! The planar planner's optimal control problem: phases with their bounds, the points where
//! phases meet, the task's start and end, and the starting guess.

use std::rc::Rc;

use super::{phase_name, PlanarPlanner};
use crate::model::planar::PlanarRobot;
use crate::planner::Transcribe;
use crate::problem::InitialGuess;
use crate::symbolic::Sx;
use crate::terrain::contact::Normal;
use crate::terrain::rigid::{self, WRENCH};
use crate::transcription::{
    Bounded, Nlp, Node, Ocp, Phase, Point, PointBounds, PointConstraint, Scheme,
};

/// A planar robot's problem as the planner transcribes it (the OCP is built through the
/// shared planner, so the trait is on its `Rc`).
impl Transcribe for Rc<PlanarPlanner> {
    /// The optimal control problem; its closures share this planner.
    fn ocp(&self) -> Ocp {
        let l = self.layout;
        let inf = f64::INFINITY;
        let weight = self.weight();
        let mut phases = Vec::new();
        for (p, active) in self.phases.iter().enumerate() {
            let spec = &self.problem.schedule[p];
            let mut control_bounds = vec![(-inf, inf); l.n_u()];
            for (i, input) in self.robot.inputs.iter().enumerate() {
                // A drive's limit bounds its force (a path row); its input is a command rate.
                if input.drive.is_none() {
                    control_bounds[i] = input.limit;
                }
            }
            for &j in &self.robot.locked {
                control_bounds[l.accel(j)] = (0.0, 0.0);
            }
            for c in 0..l.n_contacts {
                let on = active.contains(&c);
                let point = self.robot.contacts[c].half_width == 0.0;
                let b = l.wrench(c);
                if on {
                    control_bounds[b + 1] = (0.0, inf);
                    if point {
                        control_bounds[b + 2] = (0.0, 0.0);
                    }
                } else {
                    for k in 0..WRENCH {
                        control_bounds[b + k] = (0.0, 0.0);
                    }
                }
                // Impulses where a foot lands on a ground that stops it along the normal.
                let lands = p > 0 && on && self.lands(p) && self.contact().normal_impact();
                let b = l.impulse(c);
                for k in 0..WRENCH {
                    control_bounds[b + k] = if lands { (-inf, inf) } else { (0.0, 0.0) };
                }
                if lands {
                    control_bounds[b + 1] = (0.0, inf);
                    if point {
                        control_bounds[b + 2] = (0.0, 0.0);
                    }
                }
            }
            let planner = Rc::clone(self);
            let robot = self.robot.clone();
            let name = phase_name(p, &self.problem.schedule[p].contacts);
            let entry = (p > 0 && self.lands(p)).then(|| {
                let planner = Rc::clone(self);
                let active = active.clone();
                let before = self.phases[p - 1].clone();
                Box::new(move |points: &[Vec<Sx>]| {
                    planner.impact(&points[0], &points[1], &before, &active)
                }) as Box<dyn Fn(&[Vec<Sx>]) -> Vec<Bounded>>
            });
            phases.push(Phase {
                name,
                nodes: spec.nodes,
                duration: (spec.duration[0], spec.duration[1]),
                dynamics: Box::new(move |x: &[Sx], u: &[Sx]| {
                    let mut dx: Vec<Sx> = x[l.v()].to_vec();
                    dx.extend(u[l.accel(0)..l.accel(0) + l.n_q].iter().cloned());
                    dx.extend(robot.drive_rates(x, &u[..l.n_inputs]));
                    dx
                }),
                running_cost: Some(Box::new(self.running_cost())),
                path: Some(Box::new(move |x: &[Sx], u: &[Sx]| planner.path(p, x, u))),
                // The joints' position and velocity limits hold at every node.
                state_bounds: self.robot.state_bounds(),
                control_bounds,
                entry,
                step: None,
            });
        }

        let mut point_bounds = Vec::new();
        let mut point_constraints = Vec::new();
        // Impulses act only at the first node of a landing phase.
        for p in 1..self.phases.len() {
            if !(self.lands(p) && self.contact().normal_impact()) {
                continue;
            }
            for k in 1..self.problem.schedule[p].nodes {
                let mut bounds = vec![None; l.n_x() + l.n_u()];
                for c in 0..l.n_contacts {
                    for j in 0..WRENCH {
                        bounds[l.n_x() + l.impulse(c) + j] = Some((0.0, 0.0));
                    }
                }
                point_bounds.push(PointBounds {
                    point: Point {
                        phase: p,
                        node: Node::Index(k),
                    },
                    state_bounds: bounds,
                });
            }
        }
        // A margin on the normal force at every stance node but a lift-off node: a plan whose
        // feet graze F_z = 0 mid-stance lifts them in any replay (the simulator's lift-off
        // guard is that force crossing 0), so a held foot keeps a small share of the weight.
        // (A foot under its ground's law from touchdown on, as on a spring, has no such guard.)
        let held = self.contact().touchdown() == Normal::Held;
        for (p, active) in self
            .phases
            .iter()
            .enumerate()
            .filter(|_| held && self.problem.task.contact_margin > 0.0)
        {
            let nodes = self.problem.schedule[p].nodes;
            let lifts_at_end =
                p + 1 < self.phases.len() && active.iter().any(|c| !self.phases[p + 1].contains(c));
            let margin = self.problem.task.contact_margin * weight / active.len().max(1) as f64;
            for k in 0..nodes {
                if active.is_empty() || (lifts_at_end && k + 1 == nodes) {
                    continue;
                }
                let mut bounds = vec![None; l.n_x() + l.n_u()];
                for &c in active {
                    bounds[l.n_x() + l.wrench(c) + 1] = Some((margin, f64::INFINITY));
                }
                point_bounds.push(PointBounds {
                    point: Point {
                        phase: p,
                        node: Node::Index(k),
                    },
                    state_bounds: bounds,
                });
            }
        }
        // Lift-off guards: the normal force of a foot that lifts is 0 at the end of its stance.
        for p in 1..self.phases.len() {
            let lifted: Vec<usize> = self.phases[p - 1]
                .iter()
                .copied()
                .filter(|c| !self.phases[p].contains(c))
                .collect();
            if lifted.is_empty() {
                continue;
            }
            if !self.contact().lifts_at_zero_force() {
                point_constraints.extend(lifted.iter().flat_map(|&c| self.leaves(p, c)));
                continue;
            }
            let mut bounds = vec![None; l.n_x() + l.n_u()];
            for c in lifted {
                bounds[l.n_x() + l.wrench(c) + 1] = Some((0.0, 0.0));
            }
            point_bounds.push(PointBounds {
                point: Point {
                    phase: p - 1,
                    node: Node::Last,
                },
                state_bounds: bounds,
            });
        }

        // The start.
        let start = Point {
            phase: 0,
            node: Node::First,
        };
        let mut start_bounds = vec![None; l.n_x() + l.n_u()];
        start_bounds[0] = Some((self.robot.standing[0], self.robot.standing[0]));
        for (name, value) in &self.problem.task.start.set {
            start_bounds[self.coordinate(name)] = Some((*value, *value));
        }
        let drives = l.n_drive_states > 0;
        if self.problem.task.start.at_rest {
            for j in 0..l.n_q {
                start_bounds[l.n_q + j] = Some((0.0, 0.0));
                // On a ground that yields, at rest is static equilibrium: each foot exactly at
                // the depth whose static resistance carries its load (a bed's law holds a foot
                // at rest only on the verge of sinking, as for the hopper). (With drives, the
                // "drives at rest" rows below say it.)
                if self.contact().yields() && !self.phases[0].is_empty() && !drives {
                    start_bounds[l.n_x() + l.accel(j)] = Some((0.0, 0.0));
                }
            }
        }
        point_bounds.push(PointBounds {
            point: start,
            state_bounds: start_bounds,
        });
        let planner = Rc::clone(self);
        let first = self.phases[0].clone();
        point_constraints.push(PointConstraint {
            name: "start on the ground".into(),
            f: Box::new(move |p: &[Vec<Sx>]| {
                let q = &p[0][..l.n_q];
                let mut rows = Vec::new();
                for &c in &first {
                    for (k, gap) in rigid::touchdown_gap(&planner.robot, c, q)
                        .into_iter()
                        .enumerate()
                    {
                        // In a ground that yields a foot starts at or below the surface (its
                        // depth follows from the rest), a flat sole level.
                        if planner.contact().yields() && k == 0 {
                            rows.push(
                                Bounded::at_most(
                                    format!("{} in the ground", planner.robot.contacts[c].name),
                                    gap,
                                    0.0,
                                )
                                .nominal(0.01),
                            );
                            continue;
                        }
                        rows.push(
                            Bounded::equal(
                                format!("{} on the ground {k}", planner.robot.contacts[c].name),
                                gap,
                                0.0,
                            )
                            .nominal(0.01),
                        );
                    }
                }
                rows
            }),
            instances: vec![vec![start]],
        });

        // A robot with drives starts at rest when its state is an equilibrium: each drive's
        // command at its coordinate, and the equations of motion balanced with every
        // acceleration 0 and every drive's command rate 0 (its integrator holding the load),
        // under the first node's contact wrenches. The command rate itself may start at any
        // value (a step in the commanded velocity), as the hopper's own planner allows; the
        // accelerations then follow from it.
        if drives && self.problem.task.start.at_rest {
            let planner = Rc::clone(self);
            let first = self.phases[0].clone();
            point_constraints.push(PointConstraint {
                name: "drives at rest".into(),
                f: Box::new(move |p: &[Vec<Sx>]| {
                    let (x, u) = p[0].split_at(l.n_x());
                    drives_at_rest(
                        &planner.robot,
                        x,
                        u,
                        l.accel(0),
                        planner.weight(),
                        |still| planner.dynamics_residual(x, still, &first),
                    )
                }),
                instances: vec![vec![start]],
            });
        }
        let planner = Rc::clone(self);
        point_constraints.extend(swing_clearance(
            &self.robot,
            &self.problem.task,
            self.phases
                .iter()
                .zip(&self.problem.schedule)
                .map(|(feet, spec)| (feet.clone(), spec.nodes)),
            move |q: &[Sx], c| rigid::clearance(&planner.robot, c, q),
        ));
        point_constraints.extend(drive_commands_continuous(
            &self.robot,
            l.n_x(),
            self.phases.len(),
        ));

        // The end.
        let last_phase = self.phases.len() - 1;
        let end = Point {
            phase: last_phase,
            node: Node::Last,
        };
        let mut end_bounds = vec![None; l.n_x() + l.n_u()];
        for (name, value) in &self.problem.task.end.set {
            end_bounds[self.coordinate(name)] = Some((*value, *value));
        }
        if self.problem.task.end.at_rest {
            for j in 0..l.n_q {
                end_bounds[l.n_q + j] = Some((0.0, 0.0));
            }
        }
        point_bounds.push(PointBounds {
            point: end,
            state_bounds: end_bounds,
        });
        let task = TaskRows::of(&self.robot, &self.problem.task, self.phases[0].is_empty());
        if task.any() {
            let planner = Rc::clone(self);
            point_constraints.push(PointConstraint {
                name: "task".into(),
                f: Box::new(move |p: &[Vec<Sx>]| task.rows(&planner.robot, &p[0], &p[1])),
                instances: vec![vec![start, end]],
            });
        }

        let mut state_nominal: Vec<f64> =
            self.robot.coordinates.iter().map(|c| c.nominal).collect();
        state_nominal.extend(std::iter::repeat_n(1.0, l.n_q));
        state_nominal.extend(drive_state_nominals(&self.robot));
        let mut control_nominal: Vec<f64> = self
            .robot
            .inputs
            .iter()
            .map(|i| {
                if i.drive.is_some() {
                    1.0
                } else {
                    i.scale().max(1e-3)
                }
            })
            .collect();
        control_nominal.extend(std::iter::repeat_n(10.0, l.n_q));
        control_nominal.extend(std::iter::repeat_n(weight, 2 * WRENCH * l.n_contacts));
        Ocp {
            state_names: self.state_names(),
            control_names: self.control_names(),
            state_nominal,
            control_nominal,
            phases,
            control_continuity: false,
            point_constraints,
            point_bounds,
            // A gait's speed fixes its stride time.
            total_duration: self.problem.task.stride_time().map(|t| (t, t)),
        }
    }

    fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The starting point of the optimiser: the start posture held still at every node,
    /// the weight shared by the feet on the ground, the base moved evenly over the distance.
    fn initial_guess(&self, kind: InitialGuess, nlp: &Nlp) -> Vec<f64> {
        match kind {
            InitialGuess::Zero => vec![0.0; nlp.n_variables()],
            InitialGuess::Rest => nlp.pack(&self.rest_guess()),
            InitialGuess::Footholds => nlp.pack(&self.footholds_guess()),
        }
    }
}

/// Each drive's command rate equal on both sides of every phase boundary (a drive's command
/// is a physical signal: a step in its rate would be a jump in the servo's velocity
/// feed-forward), for an NLP whose node vectors are (x, u) with x of length `n_x`; `None`
/// without drives or with one phase.
pub(crate) fn drive_commands_continuous(
    robot: &PlanarRobot,
    n_x: usize,
    phases: usize,
) -> Option<PointConstraint> {
    let inputs: Vec<usize> = robot.drives().map(|(i, _)| i).collect();
    if inputs.is_empty() || phases < 2 {
        return None;
    }
    Some(PointConstraint {
        name: "drive commands continuous".into(),
        f: Box::new(move |p: &[Vec<Sx>]| {
            inputs
                .iter()
                .map(|&i| {
                    let (a, b) = (&p[0][n_x + i], &p[1][n_x + i]);
                    Bounded::equal(
                        format!("command rate {i} continuous"),
                        b.clone() - a.clone(),
                        0.0,
                    )
                })
                .collect()
        }),
        instances: (1..phases)
            .map(|p| {
                vec![
                    Point {
                        phase: p - 1,
                        node: Node::Last,
                    },
                    Point {
                        phase: p,
                        node: Node::First,
                    },
                ]
            })
            .collect(),
    })
}

/// Each drive's integrator and command nominal (the planner's variable scaling): a quarter of
/// the integral that holds the drive's full effort, and its coordinate's nominal; in state
/// order after q and q̇.
pub(crate) fn drive_state_nominals(robot: &PlanarRobot) -> Vec<f64> {
    let mut nominal = Vec::new();
    for (i, drive) in robot.drives() {
        let input = &robot.inputs[i];
        nominal.push(drive.holding_integral(input.scale()) / 4.0);
        nominal.push(robot.coordinates[input.coordinate].nominal);
    }
    nominal
}

/// At rest a drive's command equals its coordinate: one row per drive, on a node's state `x`.
/// The rows of a robot with drives at rest at node (x, u): each drive's command at its
/// coordinate, and the equations of motion (`residual` of the node's controls with every
/// acceleration, from `accel` on, and every drive's command rate set to 0) balanced, the
/// integrators holding the load.
pub(crate) fn drives_at_rest(
    robot: &PlanarRobot,
    x: &[Sx],
    u: &[Sx],
    accel: usize,
    weight: f64,
    residual: impl FnOnce(&[Sx]) -> Vec<Sx>,
) -> Vec<Bounded> {
    let mut rows = drive_commands_at_their_positions(robot, x);
    let mut still = u.to_vec();
    for a in &mut still[accel..accel + robot.n_q()] {
        *a = Sx::from(0.0);
    }
    for (i, _) in robot.drives() {
        still[i] = Sx::from(0.0);
    }
    rows.extend(
        super::dynamics_rows(robot, residual(&still), weight)
            .into_iter()
            .map(|mut row| {
                row.name = format!("at rest: {}", row.name);
                row
            }),
    );
    rows
}

fn drive_commands_at_their_positions(robot: &PlanarRobot, x: &[Sx]) -> Vec<Bounded> {
    let n_q = robot.n_q();
    robot
        .drives()
        .enumerate()
        .map(|(k, (i, _))| {
            let input = &robot.inputs[i];
            Bounded::equal(
                format!("{} command at its position", input.name),
                x[2 * n_q + 2 * k + 1].clone() - x[input.coordinate].clone(),
                0.0,
            )
            .nominal(0.01)
        })
        .collect()
}

/// The task's rows between a plan's first and last node, every contact model alike: the
/// changes of coordinates (`task.end.change`), the distance, the apex rise (the last node at
/// the apex of `apex_of`'s centre of mass, or the robot's), a periodic stride's closure (every
/// coordinate and rate but the base's x) and, for a stride that begins in flight, its start at
/// the apex.
pub(crate) struct TaskRows {
    changes: Vec<(usize, f64)>,
    distance: Option<f64>,
    apex_rise: Option<f64>,
    apex_of: Option<usize>,
    periodic: bool,
    apex_start: bool,
}

impl TaskRows {
    /// The rows of `task` for `robot`, whose schedule begins in flight if `starts_in_flight`.
    pub(crate) fn of(
        robot: &PlanarRobot,
        task: &crate::problem::planar::PlanarTask,
        starts_in_flight: bool,
    ) -> TaskRows {
        TaskRows {
            changes: task
                .end
                .change
                .iter()
                .map(|(name, d)| (robot.coordinate(name).expect("validated coordinate"), *d))
                .collect(),
            distance: task.distance,
            apex_rise: task.apex_rise,
            apex_of: task.apex_body(robot),
            periodic: task.periodic,
            // A periodic stride that begins in flight starts (and so ends) at its apex.
            apex_start: task.periodic && starts_in_flight,
        }
    }

    /// Whether the task asks any row.
    pub(crate) fn any(&self) -> bool {
        !self.changes.is_empty()
            || self.distance.is_some()
            || self.apex_rise.is_some()
            || self.periodic
    }

    /// The rows between the first node's variables `first` and the last's `last` (each the
    /// state then the controls).
    pub(crate) fn rows(&self, robot: &PlanarRobot, first: &[Sx], last: &[Sx]) -> Vec<Bounded> {
        let n_q = robot.n_q();
        let mut rows = Vec::new();
        for &(j, d) in &self.changes {
            rows.push(
                Bounded::equal(
                    format!("change of {}", robot.coordinates[j].name),
                    last[j].clone() - first[j].clone(),
                    d,
                )
                .nominal(0.1),
            );
        }
        if let Some(d) = self.distance {
            rows.push(
                Bounded::equal("distance", last[0].clone() - first[0].clone(), d).nominal(0.1),
            );
        }
        if let Some(rise) = self.apex_rise {
            let body = &robot.body;
            let height = |q: &[Sx]| match self.apex_of {
                Some(b) => body.point(q, b, body.bodies[b].com)[1].clone(),
                None => body.centre_of_mass(q)[1].clone(),
            };
            let (z0, z1) = (height(&first[..n_q]), height(&last[..n_q]));
            rows.push(Bounded::equal("apex rise", z1 - z0, rise).nominal(0.01));
            let vz = super::centre_of_mass_velocity(robot, &last[..n_q], &last[n_q..2 * n_q]);
            rows.push(Bounded::equal("apex", vz, 0.0).nominal(0.1));
        }
        if self.apex_start {
            let vz = super::centre_of_mass_velocity(robot, &first[..n_q], &first[n_q..2 * n_q]);
            rows.push(Bounded::equal("apex start", vz, 0.0).nominal(0.1));
        }
        if self.periodic {
            for j in 1..2 * n_q {
                rows.push(
                    Bounded::equal(
                        format!("periodic {j}"),
                        last[j].clone() - first[j].clone(),
                        0.0,
                    )
                    .nominal(0.1),
                );
            }
        }
        rows
    }
}

/// `task.swing_height` h: every foot off the ground in a phase of N nodes keeps above the
/// surface by h · (1 − |2k/(N−1) − 1|) at its node k, a tent that is h at the phase's middle
/// and 0 at its ends (the foot may leave and land there). `schedule` holds each phase's feet
/// on the ground and node count; `heights(q, c)` the heights above the surface of contact c's
/// sole (its corners, or its centre) in configuration q. One row function per node, each
/// with its own bound; none without a swing height.
///
/// Why: the effort-optimal swing skims the ground. The monopod's stride on sand planned
/// without it kept its foot within 1 mm of the surface for the last 27 ms of a 107 ms flight,
/// and every replay of it touched the sand there, 22 ms before the planned touchdown.
pub(crate) fn swing_clearance(
    robot: &PlanarRobot,
    task: &crate::problem::planar::PlanarTask,
    schedule: impl Iterator<Item = (Vec<usize>, usize)>,
    heights: impl Fn(&[Sx], usize) -> Vec<Sx> + Clone + 'static,
) -> Vec<PointConstraint> {
    let Some(height) = task.swing_height else {
        return Vec::new();
    };
    let (feet, n_q) = (feet_names(robot), robot.n_q());
    let mut constraints = Vec::new();
    for (p, (down, nodes)) in schedule.enumerate() {
        let swinging: Vec<usize> = (0..feet.len()).filter(|c| !down.contains(c)).collect();
        if swinging.is_empty() || nodes < 3 {
            continue;
        }
        for k in 1..nodes - 1 {
            let least = height * (1.0 - (2.0 * k as f64 / (nodes - 1) as f64 - 1.0).abs());
            let (swinging, heights) = (swinging.clone(), heights.clone());
            let names = feet.to_vec();
            constraints.push(PointConstraint {
                name: format!("swing height {p} {k}"),
                f: Box::new(move |pts: &[Vec<Sx>]| {
                    let q = &pts[0][..n_q];
                    swinging
                        .iter()
                        .flat_map(|&c| {
                            let name = names[c].clone();
                            heights(q, c).into_iter().enumerate().map(move |(i, z)| {
                                Bounded::at_least(format!("{name} swing height {i}"), z, least)
                                    .nominal(0.01)
                            })
                        })
                        .collect()
                }),
                instances: vec![vec![Point {
                    phase: p,
                    node: Node::Index(k),
                }]],
            });
        }
    }
    constraints
}

/// The robot's contacts' names, by index.
pub(crate) fn feet_names(robot: &PlanarRobot) -> Vec<String> {
    robot.contacts.iter().map(|c| c.name.clone()).collect()
}
