//! The planar robots' planner: a [`PlanarProblem`] becomes an optimal control problem that
//! the transcription knows nothing of. The robot gives M(q), h(q, v), B u and its contacts'
//! kinematics; the terrain gives the contact wrenches' constraints and the impact; the
//! schedule gives which feet are down in each phase; the task gives the point constraints.
//!
//! The NLP (implicit form: accelerations are variables, the equations of motion constraints):
//!
//! ```text
//! state   x = (q, v)                                  n_q generalized coordinates and rates
//! control u = (inputs, a, w_c for every contact, Λ_c for every contact)
//! minimise  the objective's quadrature (effort ½∫Σ(u_i/u_max,i)², torque², cost of transport)
//! subject to, at every node of phase p with contacts C_p:
//!   q̇ = v, v̇ = a                                                 (collocation defects)
//!   M(q) a + h(q, v) = B u + Σ_{c∈C_p} J_cᵀ w_c                 (equations of motion)
//!   c ∈ C_p: J_c a + J̇_c v = 0, F_z ≥ 0, |F_x| ≤ μ F_z, |τ| ≤ w F_z      (rigid sticking)
//!   c ∉ C_p: w_c = 0, sole height ≥ 0                                    (clearance)
//!   input limits; Λ_c = 0 but at the first node of a phase some foot lands in
//! entering phase p from p−1:
//!   feet that land: sole at z = 0 (and level, for a flat sole) at the boundary, and a
//!   plastic impact  q⁺ = q⁻, M(q)(v⁺ − v⁻) = Σ_{c∈C_p} J_cᵀ Λ_c, J_c v⁺ = 0, Λ in the cone
//!   feet that lift: F_z = 0 at the last node of p−1 (the lift-off guard)
//!   otherwise x⁺ = x⁻
//! task: start (at rest, feet of phase 0 on the ground, base x = 0, coordinates `set`),
//!   end (at rest, `set`, `change`), distance, apex rise of the centre of mass (the last
//!   flight ends where its vertical velocity is 0), periodicity.
//! ```

use std::rc::Rc;
use std::time::Instant;

use crate::model::planar::PlanarRobot;
use crate::problem::planar::{Objective, PlanarProblem, PlanarTerrainConfig};
use crate::problem::{InitialGuess, Scheme as ProblemScheme};
use crate::scalar::Scalar;
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::symbolic::Sx;
use crate::terrain::rigid::{self, RigidGround, Row, WRENCH};
use crate::terrain::AddedMass;
use crate::transcription::{
    Bounded, Nlp, Node, Ocp, Phase, PhaseTrajectory, Point, PointBounds, PointConstraint, Scheme,
    Trajectory,
};

use super::{PlanError, Transcribe};

/// Share of the robot's weight (split over the feet down) every held foot keeps at every
/// stance node but its lift-off node.
pub const NORMAL_FORCE_MARGIN: f64 = 0.05;

/// The indices of one node's variables: state then control.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub n_q: usize,
    pub n_inputs: usize,
    pub n_contacts: usize,
}

impl Layout {
    pub fn of(robot: &PlanarRobot) -> Layout {
        Layout {
            n_q: robot.body.n_q(),
            n_inputs: robot.inputs.len(),
            n_contacts: robot.contacts.len(),
        }
    }
    pub fn n_x(&self) -> usize {
        2 * self.n_q
    }
    /// Offsets within the control vector (the inputs come first, at 0..n_inputs).
    pub fn accel(&self, j: usize) -> usize {
        self.n_inputs + j
    }
    pub fn wrench(&self, c: usize) -> usize {
        self.n_inputs + self.n_q + WRENCH * c
    }
    pub fn impulse(&self, c: usize) -> usize {
        self.n_inputs + self.n_q + WRENCH * (self.n_contacts + c)
    }
    pub fn n_u(&self) -> usize {
        self.n_inputs + self.n_q + 2 * WRENCH * self.n_contacts
    }
}

/// A planar robot's motion as the planner sees it.
pub struct PlanarPlanner {
    pub robot: PlanarRobot,
    /// The friction cone (and, on rigid ground, the whole contact).
    pub ground: RigidGround,
    /// On `model: added_mass`, the bed's vertical law under every foot in stance.
    pub bed: Option<AddedMass>,
    pub problem: PlanarProblem,
    pub layout: Layout,
    /// Contact indices per phase.
    pub phases: Vec<Vec<usize>>,
    pub scheme: Scheme,
}

/// The equations of motion's residuals as equality rows named by coordinate, scaled by the
/// robot's weight.
pub(crate) fn dynamics_rows(robot: &PlanarRobot, residual: Vec<Sx>, weight: f64) -> Vec<Bounded> {
    residual
        .into_iter()
        .zip(&robot.coordinates)
        .map(|(r, c)| Bounded::equal(format!("dynamics {}", c.name), r, 0.0).nominal(weight))
        .collect()
}

fn to_bounded(row: Row<Sx>) -> Bounded {
    Bounded::between(row.name, row.expr, row.lower, row.upper).nominal(row.nominal)
}

impl PlanarPlanner {
    pub fn new(problem: &PlanarProblem) -> PlanarPlanner {
        let robot = problem.robot.build(problem.gravity);
        let (friction, bed) = match &problem.terrain {
            PlanarTerrainConfig::Rigid(ground) => (ground.friction, None),
            PlanarTerrainConfig::AddedMass(ground) => (ground.friction, Some(ground.bed())),
            PlanarTerrainConfig::WrenchSpace(_) => {
                panic!("a wrench-space problem is planned by planner::wrench_hop (see `plan`)")
            }
        };
        let phases = problem
            .schedule
            .iter()
            .map(|p| {
                p.contacts
                    .iter()
                    .map(|name| robot.contact(name).expect("validated contact name"))
                    .collect()
            })
            .collect();
        let scheme = match problem.transcription.scheme {
            ProblemScheme::Trapezoidal => Scheme::Trapezoidal,
            ProblemScheme::HermiteSimpson => Scheme::HermiteSimpson,
        };
        PlanarPlanner {
            layout: Layout::of(&robot),
            robot,
            ground: RigidGround { friction },
            bed,
            problem: problem.clone(),
            phases,
            scheme,
        }
    }

    fn weight(&self) -> f64 {
        self.robot.body.total_mass() * self.problem.gravity
    }

    /// Index of a coordinate by name.
    pub fn coordinate(&self, name: &str) -> usize {
        self.robot
            .coordinates
            .iter()
            .position(|c| c.name == name)
            .expect("validated coordinate name")
    }

    pub fn state_names(&self) -> Vec<String> {
        self.robot.state_names()
    }

    pub fn control_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.robot.inputs.iter().map(|i| i.name.clone()).collect();
        names.extend(
            self.robot
                .coordinates
                .iter()
                .map(|c| format!("dd_{}", c.name)),
        );
        for prefix in ["", "impulse_"] {
            for c in &self.robot.contacts {
                for part in ["fx", "fz", "tau"] {
                    names.push(format!("{prefix}{}_{part}", c.name));
                }
            }
        }
        names
    }

    /// The equations of motion's residual M a + h − B u − Σ Jᵀ w for the contacts `active`.
    pub fn dynamics_residual<S: Scalar>(&self, x: &[S], u: &[S], active: &[usize]) -> Vec<S> {
        let l = self.layout;
        let (q, v) = x.split_at(l.n_q);
        let a = &u[l.accel(0)..l.accel(0) + l.n_q];
        let m = self.robot.body.mass_matrix(q);
        let h = self.robot.body.bias_forces(q, v);
        let inputs = &u[..l.n_inputs];
        let f = self.robot.generalized_forces(q, v, inputs);
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

    fn running_cost(&self) -> impl Fn(&[Sx], &[Sx]) -> Sx {
        let inputs = self.robot.inputs.clone();
        let objective = self.problem.task.objective;
        let n_q = self.layout.n_q;
        let transport = self.weight() * self.problem.task.distance.unwrap_or(1.0).abs();
        move |x: &[Sx], u: &[Sx]| {
            let mut cost = Sx::from(0.0);
            for (i, input) in inputs.iter().enumerate() {
                let term = match objective {
                    Objective::Effort => {
                        let scale = input.scale();
                        (u[i].clone() / scale).square() * 0.5
                    }
                    Objective::TorqueSquared => u[i].square() * 0.5,
                    Objective::CostOfTransport => {
                        // |power|, smoothed at 0 so the NLP stays twice differentiable.
                        let power = u[i].clone() * x[n_q + input.coordinate].clone();
                        (power.square() + 1e-4).sqrt() / transport
                    }
                };
                cost = cost + term;
            }
            cost
        }
    }

    /// Contact `c` leaving the bed as phase `p` starts: it has stopped sinking (ż = 0 at the
    /// stance's last node) and, free of the bed, accelerates upward (z̈ ≥ 0 at the next
    /// phase's first node, whose state is the same); then it stays above its crater's floor,
    /// the height it left from, at every later node. (The crater's walls are not modelled.)
    ///
    /// The upward acceleration has a margin, [`NORMAL_FORCE_MARGIN`] g, for the reason the
    /// held feet's force has one: a plan that lifts a foot with z̈ = 0 leaves a replay's foot
    /// stuck in the bed under a load of round-off size.
    fn leaves_the_bed(self: &Rc<Self>, p: usize, c: usize) -> [PointConstraint; 2] {
        let l = self.layout;
        let lift = Point {
            phase: p - 1,
            node: Node::Last,
        };
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
        let name = self.robot.contacts[c].name.clone();
        let planner = Rc::clone(self);
        let guard_name = name.clone();
        let least_lift = NORMAL_FORCE_MARGIN * self.problem.gravity;
        let guard = PointConstraint {
            name: format!("{name} leaves the bed"),
            f: Box::new(move |points: &[Vec<Sx>]| {
                let robot = &planner.robot;
                let (before, after) = (&points[0], &points[1]);
                let (q0, v0) = (&before[..l.n_q], &before[l.n_q..l.n_x()]);
                let (q1, v1) = (&after[..l.n_q], &after[l.n_q..l.n_x()]);
                let a1 = &after[l.n_x() + l.accel(0)..l.n_x() + l.accel(0) + l.n_q];
                let vz = rigid::velocity(robot, c, q0, v0).swap_remove(1);
                let az = rigid::acceleration(robot, c, q1, v1, a1).swap_remove(1);
                vec![
                    Bounded::equal(format!("{guard_name} stops sinking"), vz, 0.0).nominal(0.1),
                    Bounded::at_least(format!("{guard_name} accelerates up"), az, least_lift)
                        .nominal(1.0),
                ]
            }),
            instances: vec![vec![
                lift,
                Point {
                    phase: p,
                    node: Node::First,
                },
            ]],
        };
        let planner = Rc::clone(self);
        let crater = PointConstraint {
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
        };
        [guard, crater]
    }

    /// Whether some foot lands when phase `p` starts.
    pub fn lands(&self, p: usize) -> bool {
        p > 0
            && self.phases[p]
                .iter()
                .any(|c| !self.phases[p - 1].contains(c))
    }

    fn path(&self, x: &[Sx], u: &[Sx], active: &[usize]) -> Vec<Bounded> {
        let l = self.layout;
        let weight = self.weight();
        let (q, v) = x.split_at(l.n_q);
        let a = &u[l.accel(0)..l.accel(0) + l.n_q];
        let mut rows = dynamics_rows(&self.robot, self.dynamics_residual(x, u, active), weight);
        for c in 0..l.n_contacts {
            let name = &self.robot.contacts[c].name;
            if active.contains(&c) {
                let w = &u[l.wrench(c)..l.wrench(c) + WRENCH];
                for (k, acc) in rigid::acceleration(&self.robot, c, q, v, a)
                    .into_iter()
                    .enumerate()
                {
                    match &self.bed {
                        // The bed holds the foot sideways (and level) like rigid ground, and
                        // vertically by its law, F_z = F_hyd + drag − m_a z̈, while it sinks.
                        Some(bed) if k == 1 => {
                            let z = self.robot.contact_point(q, c)[1].clone();
                            let vz = rigid::velocity(&self.robot, c, q, v).swap_remove(1);
                            let law = bed.resistance(&z, &vz).on_foot(&acc);
                            rows.push(
                                Bounded::equal(format!("{name} bed"), w[1].clone() - law, 0.0)
                                    .nominal(weight),
                            );
                            rows.push(
                                Bounded::at_most(format!("{name} sinks"), vz, 0.0).nominal(0.1),
                            );
                        }
                        _ => rows.push(
                            Bounded::equal(format!("{name} holds {k}"), acc, 0.0).nominal(1.0),
                        ),
                    }
                }
                rows.extend(
                    self.ground
                        .cone(name, w, self.robot.contacts[c].half_width, weight)
                        .into_iter()
                        .map(to_bounded),
                );
            } else if !(self.bed.is_some() && self.phases[0].contains(&c)) {
                // (A foot that left the bed stays above its crater: `crater_rows`.)
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
    fn impact(&self, before: &[Sx], after: &[Sx], was: &[usize], active: &[usize]) -> Vec<Bounded> {
        let l = self.layout;
        let weight = self.weight();
        let (q0, v0) = (&before[..l.n_q], &before[l.n_q..l.n_x()]);
        let (q1, v1) = (&after[..l.n_q], &after[l.n_q..l.n_x()]);
        let u1 = &after[l.n_x()..];
        let mut rows = Vec::new();
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
                rows.push(Bounded::equal(format!("{name} stops {k}"), vel, 0.0).nominal(0.1));
            }
            rows.extend(
                self.ground
                    .cone(
                        &format!("{name} impulse"),
                        impulse,
                        self.robot.contacts[c].half_width,
                        weight * 0.01,
                    )
                    .into_iter()
                    .map(to_bounded),
            );
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

    fn rest_guess(&self) -> Trajectory {
        let l = self.layout;
        let mut q0 = self.robot.standing.clone();
        for (name, value) in &self.problem.task.start.set {
            q0[self.coordinate(name)] = *value;
        }
        if let Some(bed) = &self.bed {
            // Sunk to the depth at which each foot of the first phase carries its share of
            // the weight (q[1] is the base's height, `Multibody`'s definition).
            q0[1] -= bed.equilibrium_depth(self.weight() / self.phases[0].len().max(1) as f64);
        }
        let distance = self.problem.task.distance.unwrap_or(0.0)
            + self
                .problem
                .task
                .end
                .change
                .get("x")
                .copied()
                .unwrap_or(0.0);
        let durations: Vec<f64> = self
            .problem
            .schedule
            .iter()
            .map(|p| 0.2_f64.clamp(p.duration[0], p.duration[1]))
            .collect();
        let total: f64 = durations.iter().sum();
        let mut t0 = 0.0;
        let mut phases = Vec::new();
        for (p, active) in self.phases.iter().enumerate() {
            let nodes = self.problem.schedule[p].nodes;
            let mut phase = PhaseTrajectory {
                name: phase_name(p, &self.problem.schedule[p].contacts),
                duration: durations[p],
                ..Default::default()
            };
            for k in 0..nodes {
                let t = t0 + durations[p] * k as f64 / (nodes - 1) as f64;
                let mut x = vec![0.0; l.n_x()];
                x[..l.n_q].copy_from_slice(&q0);
                x[0] += distance * t / total;
                x[l.n_q] = distance / total;
                let mut u = vec![0.0; l.n_u()];
                for &c in active {
                    u[l.wrench(c) + 1] = self.weight() / active.len() as f64;
                }
                phase.states.push(x);
                phase.controls.push(u);
            }
            if self.scheme == Scheme::HermiteSimpson {
                for k in 0..nodes - 1 {
                    phase.mid_states.push(phase.states[k].clone());
                    phase.mid_controls.push(phase.controls[k].clone());
                }
            }
            t0 += durations[p];
            phases.push(phase);
        }
        Trajectory { phases }
    }
}

/// The centre of mass's vertical velocity: Σ m_b ż_b / m, from the bodies' COM points.
pub fn centre_of_mass_velocity<S: Scalar>(robot: &PlanarRobot, q: &[S], v: &[S]) -> S {
    let body = &robot.body;
    let mut sum = S::zero();
    for (b, part) in body.bodies.iter().enumerate() {
        let [_, vz] = body.point_velocity(q, v, b, part.com);
        sum = sum + vz * part.mass;
    }
    sum / body.total_mass()
}

/// A phase's name from its contacts: `p0_stance_foot`, `p1_flight`.
pub fn phase_name(p: usize, contacts: &[String]) -> String {
    // CasADi names its functions after the phase: letters, digits, single underscores.
    if contacts.is_empty() {
        format!("p{p}_flight")
    } else {
        format!("p{p}_stance_{}", contacts.join("_"))
    }
}

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
                control_bounds[i] = input.limit;
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
                let lands = p > 0 && on && self.lands(p);
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
            let active_path = active.clone();
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
                    let mut dx: Vec<Sx> = x[l.n_q..].to_vec();
                    dx.extend(u[l.accel(0)..l.accel(0) + l.n_q].iter().cloned());
                    dx
                }),
                running_cost: Some(Box::new(self.running_cost())),
                path: Some(Box::new(move |x: &[Sx], u: &[Sx]| {
                    planner.path(x, u, &active_path)
                })),
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
            if !self.lands(p) {
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
        for (p, active) in self.phases.iter().enumerate() {
            let nodes = self.problem.schedule[p].nodes;
            let lifts_at_end =
                p + 1 < self.phases.len() && active.iter().any(|c| !self.phases[p + 1].contains(c));
            let margin = NORMAL_FORCE_MARGIN * weight / active.len().max(1) as f64;
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
            if self.bed.is_some() {
                point_constraints.extend(lifted.iter().flat_map(|&c| self.leaves_the_bed(p, c)));
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
        if self.problem.task.start.at_rest {
            for j in 0..l.n_q {
                start_bounds[l.n_q + j] = Some((0.0, 0.0));
                // In a bed, at rest is static equilibrium: each foot exactly at the depth
                // whose static resistance carries its load (the bed's law holds a foot at
                // rest only on the verge of sinking, as for the hopper).
                if self.bed.is_some() {
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
                        // In a bed a foot starts at or below the surface (its depth follows
                        // from the rest), a flat sole level.
                        if planner.bed.is_some() && k == 0 {
                            rows.push(
                                Bounded::at_most(
                                    format!("{} in the bed", planner.robot.contacts[c].name),
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
        let task = self.problem.task.clone();
        let changes: Vec<(usize, f64)> = task
            .end
            .change
            .iter()
            .map(|(name, d)| (self.coordinate(name), *d))
            .collect();
        let planner = Rc::clone(self);
        let n_q = l.n_q;
        let has_task = !changes.is_empty()
            || task.distance.is_some()
            || task.apex_rise.is_some()
            || task.periodic;
        if has_task {
            point_constraints.push(PointConstraint {
                name: "task".into(),
                f: Box::new(move |p: &[Vec<Sx>]| {
                    let (first, last) = (&p[0], &p[1]);
                    let mut rows = Vec::new();
                    for &(j, d) in &changes {
                        rows.push(
                            Bounded::equal(
                                format!("change of {}", planner.robot.coordinates[j].name),
                                last[j].clone() - first[j].clone(),
                                d,
                            )
                            .nominal(0.1),
                        );
                    }
                    if let Some(d) = task.distance {
                        rows.push(
                            Bounded::equal("distance", last[0].clone() - first[0].clone(), d)
                                .nominal(0.1),
                        );
                    }
                    if let Some(rise) = task.apex_rise {
                        let body = &planner.robot.body;
                        let z0 = body.centre_of_mass(&first[..n_q])[1].clone();
                        let z1 = body.centre_of_mass(&last[..n_q])[1].clone();
                        rows.push(Bounded::equal("apex rise", z1 - z0, rise).nominal(0.01));
                        let vz = centre_of_mass_velocity(
                            &planner.robot,
                            &last[..n_q],
                            &last[n_q..2 * n_q],
                        );
                        rows.push(Bounded::equal("apex", vz, 0.0).nominal(0.1));
                    }
                    if task.periodic {
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
                }),
                instances: vec![vec![start, end]],
            });
        }

        let mut state_nominal: Vec<f64> =
            self.robot.coordinates.iter().map(|c| c.nominal).collect();
        state_nominal.extend(std::iter::repeat_n(1.0, l.n_q));
        let mut control_nominal: Vec<f64> = self
            .robot
            .inputs
            .iter()
            .map(|i| i.scale().max(1e-3))
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
            // Refused by the schema (`PlanarProblem::validate`).
            InitialGuess::Ballistic | InitialGuess::Best => {
                unreachable!("the ballistic and best guesses are the hopper's")
            }
        }
    }
}

/// A solved (or attempted) planar plan.
pub struct PlanarPlan {
    pub planner: Rc<PlanarPlanner>,
    pub report: SolveReport,
    pub trajectory: Trajectory,
    pub setup_seconds: f64,
    pub n_variables: usize,
    pub n_constraints: usize,
}

/// Transcribe, guess, solve.
pub fn plan(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    if matches!(problem.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
        return Err(PlanError::WrenchSpace);
    }
    let started = Instant::now();
    let planner = Rc::new(PlanarPlanner::new(problem));
    let mut nlp = planner.nlp()?;
    let points = super::starting_points(&planner, problem.initial_guess, &nlp);
    let setup_seconds = started.elapsed().as_secs_f64();
    let (report, _) = super::solve_from(&mut nlp, points, settings, None, on_iteration)?;
    let trajectory = nlp.unpack(&report.x);
    Ok(PlanarPlan {
        planner,
        trajectory,
        setup_seconds,
        n_variables: nlp.n_variables(),
        n_constraints: nlp.n_constraints(),
        report,
    })
}

/// IPOPT options of a planar problem file, in the solver's type.
pub fn solver_options(problem: &PlanarProblem) -> Vec<(String, solver::OptionValue)> {
    super::options_of(&problem.solver)
}
