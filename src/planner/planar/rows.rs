//! The planar planner's rows, element by element: the equations of motion, the running
//! cost, the path rows of a phase (held feet, clearance), the impact of a landing and the
//! lift-off from a bed.

use std::rc::Rc;

use super::{dynamics_rows, to_bounded, PlanarPlanner};
use crate::problem::planar::Objective;

/// The weight of `effort` within `objective: time` (`problem::planar::Objective::Time`).
pub const TIME_EFFORT_WEIGHT: f64 = 1e-4;
use crate::scalar::Scalar;
use crate::symbolic::Sx;
use crate::terrain::contact::FootNormal;
use crate::terrain::rigid::{self, WRENCH};
use crate::transcription::{Bounded, Node, Point, PointConstraint};

impl PlanarPlanner {
    /// The equations of motion's residual M a + h − B u − Σ Jᵀ w for the contacts `active`.
    pub fn dynamics_residual<S: Scalar>(&self, x: &[S], u: &[S], active: &[usize]) -> Vec<S> {
        let l = self.layout;
        let (q, v) = (&x[..l.n_q], &x[l.v()]);
        let a = &u[l.accel(0)..l.accel(0) + l.n_q];
        let m = self.robot.body.mass_matrix(q);
        let h = self.robot.body.bias_forces(q, v);
        let efforts = self.robot.efforts(x, &u[..l.n_inputs]);
        let f = self.robot.generalized_forces(q, v, &efforts);
        let mut r: Vec<S> = (0..l.n_q)
            .map(|i| {
                let ma = m[i]
                    .iter()
                    .zip(a)
                    .fold(S::zero(), |acc, (mij, aj)| acc + mij.clone() * aj.clone());
                ma + h[i].clone() - f[i].clone()
            })
            .collect();
        for &c in active {
            let w = &u[l.wrench(c)..l.wrench(c) + WRENCH];
            let g = rigid::generalized_force(&self.robot, c, q, w);
            for (ri, gi) in r.iter_mut().zip(g) {
                *ri = ri.clone() - gi;
            }
        }
        r
    }

    /// The objective's integrand (`time`: 1, plus its small effort term). A drive's input is its command rate: `effort` takes it
    /// relative to 1 (m/s or rad/s), `inputs_squared` as it is; the cost of transport takes
    /// every input's effort (a drive's force) times its coordinate's rate.
    pub(super) fn running_cost(&self) -> impl Fn(&[Sx], &[Sx]) -> Sx {
        let robot = self.robot.clone();
        let objective = self.problem.task.objective;
        let n_inputs = self.layout.n_inputs;
        let transport = self.weight() * self.problem.task.distance.unwrap_or(1.0).abs();
        move |x: &[Sx], u: &[Sx]| {
            let mut cost = Sx::from(if objective == Objective::Time {
                1.0
            } else {
                0.0
            });
            let powers = match objective {
                Objective::CostOfTransport => robot.input_powers(x, &u[..n_inputs]),
                _ => Vec::new(),
            };
            for (i, input) in robot.inputs.iter().enumerate() {
                let term = match objective {
                    Objective::Effort | Objective::Time => {
                        let weight = if objective == Objective::Time {
                            TIME_EFFORT_WEIGHT
                        } else {
                            1.0
                        };
                        let scale = if input.drive.is_some() {
                            1.0
                        } else {
                            input.scale()
                        };
                        (u[i].clone() / scale).square() * (0.5 * weight)
                    }
                    Objective::InputsSquared => u[i].square() * 0.5,
                    Objective::CostOfTransport => {
                        // |power|, smoothed at 0 so the NLP stays twice differentiable.
                        (powers[i].square() + 1e-4).sqrt() / transport
                    }
                };
                cost = cost + term;
            }
            cost
        }
    }

    /// Contact `c` leaving the ground as phase `p` starts: its contact model's lift-off rows
    /// between the stance's last node and the next phase's first node (whose state is the
    /// same): on a bed it has stopped sinking (ż = 0) and, free of the bed, accelerates upward;
    /// on a spring it is back at the surface. On a ground that remembers the footprint it
    /// then stays above the height it left from at every later node.
    ///
    /// The bed's upward acceleration has a margin, `task.contact_margin` g, for the reason
    /// the held feet's force has one: a plan that lifts a foot with z̈ = 0 leaves a replay's
    /// foot stuck in the bed under a load of round-off size.
    pub(super) fn leaves(self: &Rc<Self>, p: usize, c: usize) -> Vec<PointConstraint> {
        let l = self.layout;
        let lift = Point {
            phase: p - 1,
            node: Node::Last,
        };
        let name = self.robot.contacts[c].name.clone();
        let planner = Rc::clone(self);
        let least_lift = self.problem.task.contact_margin * self.problem.gravity;
        let guard_name = name.clone();
        let mut constraints = vec![PointConstraint {
            name: format!("{name} leaves the ground"),
            f: Box::new(move |points: &[Vec<Sx>]| {
                let robot = &planner.robot;
                let (before, after) = (&points[0], &points[1]);
                let (q0, v0) = (&before[..l.n_q], &before[l.v()]);
                let (q1, v1) = (&after[..l.n_q], &after[l.v()]);
                let a1 = &after[l.n_x() + l.accel(0)..l.n_x() + l.accel(0) + l.n_q];
                let z = robot.contact_point(q0, c)[1].clone();
                let vz = rigid::velocity(robot, c, q0, v0).swap_remove(1);
                let az = rigid::acceleration(robot, c, q1, v1, a1).swap_remove(1);
                let foot = FootNormal {
                    name: &guard_name,
                    z: &z,
                    vz: &vz,
                    az: &az,
                    fz: &before[l.n_x() + l.wrench(c) + 1],
                };
                planner
                    .contact()
                    .lift_off_rows(&foot, least_lift)
                    .into_iter()
                    .map(to_bounded)
                    .collect()
            }),
            instances: vec![vec![
                lift,
                Point {
                    phase: p,
                    node: Node::First,
                },
            ]],
        }];
        if self.contact().remembers_footprint() {
            let mut later = Vec::new();
            for phase in p..self.phases.len() {
                for k in 1..self.problem.schedule[phase].nodes {
                    later.push(vec![
                        lift,
                        Point {
                            phase,
                            node: Node::Index(k),
                        },
                    ]);
                }
            }
            let planner = Rc::clone(self);
            constraints.push(PointConstraint {
                name: format!("{name} above its crater"),
                f: Box::new(move |points: &[Vec<Sx>]| {
                    let robot = &planner.robot;
                    let floor = robot.contact_point(&points[0][..l.n_q], c)[1].clone();
                    let z = robot.contact_point(&points[1][..l.n_q], c)[1].clone();
                    vec![
                        Bounded::at_least(format!("{name} above its crater"), z - floor, 0.0)
                            .nominal(0.01),
                    ]
                }),
                instances: later,
            });
        }
        constraints.retain(|c| !c.instances.is_empty());
        constraints
    }

    /// Whether some foot lands when phase `p` starts.
    pub fn lands(&self, p: usize) -> bool {
        p > 0
            && self.phases[p]
                .iter()
                .any(|c| !self.phases[p - 1].contains(c))
    }

    /// A node's rows in phase `p`: the equations of motion, the held feet's rows (sideways
    /// held, along the normal the contact model's), their friction cones, and the free feet's
    /// clearance.
    pub(super) fn path(&self, p: usize, x: &[Sx], u: &[Sx]) -> Vec<Bounded> {
        let active = &self.phases[p];
        let l = self.layout;
        let weight = self.weight();
        let (q, v) = (&x[..l.n_q], &x[l.v()]);
        let a = &u[l.accel(0)..l.accel(0) + l.n_q];
        let mut rows = dynamics_rows(&self.robot, self.dynamics_residual(x, u, active), weight);
        // A drive's force stays within its limit (its input is a command rate).
        let efforts = self.robot.efforts(x, &u[..l.n_inputs]);
        for ((input, effort), _) in self
            .robot
            .inputs
            .iter()
            .zip(efforts)
            .zip(0..)
            .filter(|((input, _), _)| input.drive.is_some())
        {
            rows.push(
                Bounded::between(
                    format!("{} force", input.name),
                    effort,
                    input.limit.0,
                    input.limit.1,
                )
                .nominal(input.scale()),
            );
        }
        for c in 0..l.n_contacts {
            let name = &self.robot.contacts[c].name;
            if active.contains(&c) {
                let w = &u[l.wrench(c)..l.wrench(c) + WRENCH];
                for (k, acc) in rigid::acceleration(&self.robot, c, q, v, a)
                    .into_iter()
                    .enumerate()
                {
                    if k != 1 {
                        // Every model holds a foot sideways (and a flat sole level).
                        rows.push(
                            Bounded::equal(format!("{name} holds {k}"), acc, 0.0).nominal(1.0),
                        );
                        continue;
                    }
                    let z = self.robot.contact_point(q, c)[1].clone();
                    let vz = rigid::velocity(&self.robot, c, q, v).swap_remove(1);
                    let foot = FootNormal {
                        name,
                        z: &z,
                        vz: &vz,
                        az: &acc,
                        fz: &w[1],
                    };
                    rows.extend(
                        self.contact()
                            .stance_rows(&foot, weight)
                            .into_iter()
                            .map(to_bounded),
                    );
                }
                rows.extend(
                    self.contact()
                        .ground()
                        .cone(name, w, self.robot.contacts[c].half_width, weight)
                        .into_iter()
                        .map(to_bounded),
                );
            } else if !(self.contact().remembers_footprint()
                && self.phases[..p].iter().any(|down| down.contains(&c)))
            {
                // (A foot that left a ground that remembers it stays above its footprint:
                // `leaves`.)
                for (k, z) in rigid::clearance(&self.robot, c, q).into_iter().enumerate() {
                    rows.push(
                        Bounded::at_least(format!("{name} clearance {k}"), z, 0.0).nominal(0.01),
                    );
                }
            }
        }
        rows
    }

    /// Entering a phase where feet land: touchdown guards and a plastic impact.
    pub(super) fn impact(
        &self,
        before: &[Sx],
        after: &[Sx],
        was: &[usize],
        active: &[usize],
    ) -> Vec<Bounded> {
        let l = self.layout;
        let weight = self.weight();
        let (q0, v0) = (&before[..l.n_q], &before[l.v()]);
        let (q1, v1) = (&after[..l.n_q], &after[l.v()]);
        let u1 = &after[l.n_x()..];
        let mut rows = Vec::new();
        // The drives' states and commands carry through an impact.
        for (k, name) in self.robot.state_names()[2 * l.n_q..].iter().enumerate() {
            let i = 2 * l.n_q + k;
            rows.push(
                Bounded::equal(
                    format!("continuity {name}"),
                    after[i].clone() - before[i].clone(),
                    0.0,
                )
                .nominal(0.01),
            );
        }
        for j in 0..l.n_q {
            rows.push(
                Bounded::equal(
                    format!("continuity {}", self.robot.coordinates[j].name),
                    q1[j].clone() - q0[j].clone(),
                    0.0,
                )
                .nominal(self.robot.coordinates[j].nominal),
            );
        }
        let m = self.robot.body.mass_matrix(q1);
        let mut momentum: Vec<Sx> = (0..l.n_q)
            .map(|i| {
                (0..l.n_q).fold(Sx::from(0.0), |acc, j| {
                    acc + m[i][j].clone() * (v1[j].clone() - v0[j].clone())
                })
            })
            .collect();
        for &c in active {
            let impulse = &u1[l.impulse(c)..l.impulse(c) + WRENCH];
            for (mi, gi) in
                momentum
                    .iter_mut()
                    .zip(rigid::generalized_force(&self.robot, c, q1, impulse))
            {
                *mi = mi.clone() - gi;
            }
            let name = &self.robot.contacts[c].name;
            for (k, vel) in rigid::velocity(&self.robot, c, q1, v1)
                .into_iter()
                .enumerate()
            {
                // Without a normal impact the foot's normal velocity carries on into the law.
                if k == 1 && !self.contact().normal_impact() {
                    continue;
                }
                rows.push(Bounded::equal(format!("{name} stops {k}"), vel, 0.0).nominal(0.1));
            }
            // Without a normal impact there is no impulse (its bounds are 0): the foot lands
            // with no sideways velocity.
            if self.contact().normal_impact() {
                rows.extend(
                    self.contact()
                        .ground()
                        .cone(
                            &format!("{name} impulse"),
                            impulse,
                            self.robot.contacts[c].half_width,
                            weight * 0.01,
                        )
                        .into_iter()
                        .map(to_bounded),
                );
            }
            if !was.contains(&c) {
                for (k, gap) in rigid::touchdown_gap(&self.robot, c, q1)
                    .into_iter()
                    .enumerate()
                {
                    rows.push(
                        Bounded::equal(format!("{name} touchdown {k}"), gap, 0.0).nominal(0.01),
                    );
                }
            }
        }
        for (j, r) in momentum.into_iter().enumerate() {
            rows.push(
                Bounded::equal(format!("impact {}", self.robot.coordinates[j].name), r, 0.0)
                    .nominal(weight * 0.01),
            );
        }
        rows
    }
}
