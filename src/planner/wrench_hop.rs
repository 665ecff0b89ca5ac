//! Planning a planar robot on a wrench-space terrain (docs/WRENCH_SPACE.md section 4, the
//! "second task": the planar monopod hopping forward on sand, exercising the foot's tilt φ
//! and the terrain's torque τ).
//!
//! The NLP (x = (q, v), n_q coordinates; controls u = (inputs, a, λ, y): the inputs, the
//! accelerations a (n_q), the vertex weights λ (m per contact) and an auxiliary y (n_q)):
//!
//! ```text
//! minimise   Σ_ground h ½Σ(u_i/u_max,i)²  +  Σ_flight trapezoidal ½∫Σ(u_i/u_max,i)²
//! ground     (every phase with feet listed; the MDP simulator's own step, `sim::mdp`)
//!            M(q_k) a_k + bias(q_k, v_k) = B u_k + springs + Σ_c J_t,c(q_k)ᵀ B_c(θ_c,k) λ_c,k
//!            v_{k+1} = v_k + h a_k,  q_{k+1} = q_k + h v_{k+1}           (semi-implicit Euler)
//!            λ_c ≥ 0, 1ᵀλ_c ≤ 1                          (w_c = B_c(θ_c) λ_c ∈ W(θ_c))
//!            per interval, maximum dissipation as the variational inequality over the
//!            extreme points (section 4.2), with M y_k = Σ_c J_p,cᵀ M_g,c J_p,c v_{k+1}:
//!              g_c = J_t,c (v_{k+1} + y_k) = J_t,c M⁻¹(M + Σ J_pᵀ M_g J_p) v_{k+1}
//!              g_cᵀ(w_c,i − w_c) ≥ 0 for every vertex i,  −g_cᵀ w_c ≥ 0
//!            each listed foot no deeper than the data;
//!            the phase's last node with every listed foot at the surface (d = 0: lift-off)
//! flight     trapezoidal collocation of q̇ = v, v̇ = a with M a + bias = B u + springs,
//!            λ = 0, every foot at or above the surface; a flight that is followed by a
//!            ground phase ends with that phase's feet at the surface (touchdown; the sand
//!            then stops the foot over the next steps, so no impact map is needed)
//! always     every foot's |φ| within the data's tilts (it lands with it), every body without
//!            a foot with its frame origin above the surface
//! start      at rest: v = 0, a = 0 (static equilibrium on the sand's wrenches), base x = 0,
//!            the feet of the first phase at the depth where the terrain carries the weight,
//!            the coordinates the task sets
//! end        the base x at the task's distance, the coordinates the task sets or changes,
//!            at rest if asked
//! ```
//!
//! θ_c = (d, φ) is the contact's depth and tilt at the *start* of the step, as the simulator
//! takes them, so a plan's ground phases are exactly what `sim::mdp` computes from the same
//! state, inputs and step (the replay test). Choices, each for a reason:
//! - **M_g in every ground phase.** The simulator adds a contact's grain inertia to the
//!   dissipation's metric only while the contact is below the surface; the plan adds it for
//!   every foot its phase lists. The two differ only when a listed foot is above the surface,
//!   where its vertices are zero and its rows say nothing, and (for several feet) in the
//!   metric the other feet see; with one foot they agree exactly.
//! - **Flat ground** (the simulator's `slope` 0): a slope would rotate the wrench sets, which
//!   the simulator does, but no planning task asks for it yet.
//! - **y instead of M⁻¹.** The dissipation gradient needs M⁻¹; an auxiliary variable with a
//!   linear equality keeps the rows polynomial in the variables (the implicit form the
//!   planar planner uses for the dynamics too).

use std::sync::Arc;
use std::time::Instant;

use crate::model::multibody::Frame;
use crate::model::planar::PlanarRobot;
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use crate::scalar::Scalar;
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::symbolic::Sx;
use crate::terrain::wrench_set::WrenchSet;
use crate::terrain::wrench_space::WrenchSpace;
use crate::transcription::{
    Bounded, Nlp, Node, Ocp, Phase, PhaseTrajectory, Point, PointBounds, PointConstraint, Scheme,
    Trajectory,
};

use super::planar::{dynamics_rows, phase_name};
use super::PlanError;

/// One phase of the schedule: the feet that may touch the sand (empty: a flight).
#[derive(Clone, Debug, PartialEq)]
pub struct WrenchPhase {
    pub contacts: Vec<usize>,
    pub nodes: usize,
    /// (lower, upper) bounds on the duration [s].
    pub duration: (f64, f64),
}

impl WrenchPhase {
    pub fn is_ground(&self) -> bool {
        !self.contacts.is_empty()
    }
}

/// A planar robot, a wrench space under every foot, a schedule and a task.
#[derive(Clone)]
pub struct WrenchHop {
    pub robot: PlanarRobot,
    pub space: Arc<WrenchSpace>,
    /// M_g of a contact = this factor times diag(m, m, I) of its body (the simulator's
    /// `GrainInertia::BodyMultiple`; the paper's value is 2).
    pub grain_inertia: f64,
    pub phases: Vec<WrenchPhase>,
    /// Coordinates fixed at the start, by index.
    pub start_set: Vec<(usize, f64)>,
    /// Coordinates fixed at the end, by index.
    pub end_set: Vec<(usize, f64)>,
    /// Coordinates' change from start to end, by index.
    pub end_change: Vec<(usize, f64)>,
    /// Zero velocity at the end.
    pub end_at_rest: bool,
    /// The base's x at the end [m] (the start is at x = 0).
    pub distance: Option<f64>,
    /// Impose maximum dissipation (the variational inequality). Without it any wrench in
    /// W(θ) is admissible: a relaxation that [`plan`] solves first, for a feasible start.
    pub maximum_dissipation: bool,
}

/// Indices of one node's variables.
#[derive(Clone, Copy, Debug)]
pub struct WrenchLayout {
    pub n_q: usize,
    pub n_inputs: usize,
    pub n_contacts: usize,
    /// Vertices per contact.
    pub m: usize,
}

impl WrenchLayout {
    pub fn n_x(&self) -> usize {
        2 * self.n_q
    }
    /// Offsets within the control vector.
    pub fn accel(&self) -> usize {
        self.n_inputs
    }
    pub fn lambda(&self, contact: usize) -> usize {
        self.n_inputs + self.n_q + self.m * contact
    }
    pub fn aux(&self) -> usize {
        self.n_inputs + self.n_q + self.m * self.n_contacts
    }
    pub fn n_u(&self) -> usize {
        self.aux() + self.n_q
    }
}

/// A contact's kinematics at one configuration, generic over the scalar.
pub struct ContactFrame<S> {
    /// d: the sole centre's height (< 0 below the surface) [m].
    pub depth: S,
    /// φ: the foot's tilt (its body's angle) [rad].
    pub tilt: S,
    /// J_t: rows ṗ_r,x, ṗ_r,z, body rate (p_r the torque point); n_q columns.
    pub twist_r: [Vec<S>; 3],
    /// J_p: the same rows for the sole centre.
    pub twist_center: [Vec<S>; 3],
}

fn dot<S: Scalar>(a: &[S], b: &[S]) -> S {
    a.iter()
        .zip(b)
        .fold(S::zero(), |s, (x, y)| s + x.clone() * y.clone())
}

impl WrenchHop {
    /// The plan a planar problem file on `terrain: {model: wrench_space}` asks for, with its
    /// data already loaded (the problem is validated: names exist, the schedule alternates).
    pub fn from_problem(problem: &PlanarProblem, space: Arc<WrenchSpace>) -> WrenchHop {
        let robot = problem.robot.build(problem.gravity);
        let grain_inertia = match &problem.terrain {
            PlanarTerrainConfig::WrenchSpace(ground) => ground.grain_inertia,
            PlanarTerrainConfig::Rigid(_) | PlanarTerrainConfig::AddedMass(_) => 2.0,
        };
        let index = |name: &String| robot.coordinate(name).expect("validated coordinate name");
        let set = |map: &std::collections::BTreeMap<String, f64>| {
            map.iter().map(|(n, v)| (index(n), *v)).collect()
        };
        WrenchHop {
            phases: problem
                .schedule
                .iter()
                .map(|p| WrenchPhase {
                    contacts: p
                        .contacts
                        .iter()
                        .map(|c| robot.contact(c).expect("validated contact name"))
                        .collect(),
                    nodes: p.nodes,
                    duration: (p.duration[0], p.duration[1]),
                })
                .collect(),
            start_set: set(&problem.task.start.set),
            end_set: set(&problem.task.end.set),
            end_change: set(&problem.task.end.change),
            end_at_rest: problem.task.end.at_rest,
            distance: problem.task.distance,
            grain_inertia,
            maximum_dissipation: true,
            space,
            robot,
        }
    }

    pub fn layout(&self) -> WrenchLayout {
        WrenchLayout {
            n_q: self.robot.n_q(),
            n_inputs: self.robot.inputs.len(),
            n_contacts: self.robot.contacts.len(),
            m: self.space.n_directions(),
        }
    }

    /// Checks the schedule: ground and flight in turn, at least 2 nodes a phase, the first
    /// phase on the ground.
    pub fn validate(&self) -> Result<(), PlanError> {
        let fail = |m: String| Err(PlanError::Schedule(m));
        if self.phases.is_empty() || !self.phases[0].is_ground() {
            return fail(
                "a wrench-space plan starts on the ground: the first phase lists feet".into(),
            );
        }
        for (p, phase) in self.phases.iter().enumerate() {
            if phase.nodes < 2 {
                return fail(format!("phase {p} has {} nodes; at least 2", phase.nodes));
            }
            if p > 0 && phase.is_ground() == self.phases[p - 1].is_ground() {
                return fail(format!(
                    "phases {} and {p} are both {}: on sand the feet listed may touch at any \
                     step, so ground and flight phases alternate",
                    p - 1,
                    if phase.is_ground() {
                        "ground"
                    } else {
                        "flights"
                    }
                ));
            }
        }
        Ok(())
    }

    /// Contact `c`'s depth, tilt and twist Jacobians at q.
    pub fn contact_frame<S: Scalar>(&self, q: &[S], c: usize) -> ContactFrame<S> {
        self.frame_in(&self.robot.body.frames(q), c)
    }

    /// Every contact's frame at q, from one computation of the bodies' frames: CasADi does
    /// not merge repeated subexpressions, so recomputing them per contact and per Jacobian
    /// would enlarge every function IPOPT evaluates.
    pub fn contact_frames<S: Scalar>(&self, q: &[S]) -> Vec<ContactFrame<S>> {
        let frames = self.robot.body.frames(q);
        (0..self.robot.contacts.len())
            .map(|c| self.frame_in(&frames, c))
            .collect()
    }

    /// Contact `c`'s frame from the bodies' frames at q.
    fn frame_in<S: Scalar>(&self, frames: &[Frame<S>], c: usize) -> ContactFrame<S> {
        let body = &self.robot.body;
        let spec = &self.robot.contacts[c];
        let frame = &frames[spec.body];
        let centre = frame.transform(spec.point);
        let rate: Vec<S> = body
            .angle_jacobian(spec.body)
            .into_iter()
            .map(S::constant)
            .collect();
        let torque_local = [spec.point[0], spec.point[1] + self.space.torque_point()];
        let [rx, rz] = body.point_jacobian_in(frames, spec.body, torque_local);
        let [cx, cz] = body.point_jacobian_in(frames, spec.body, spec.point);
        ContactFrame {
            depth: centre[1].clone(),
            tilt: frame.angle.clone(),
            twist_r: [rx, rz, rate.clone()],
            twist_center: [cx, cz, rate],
        }
    }

    /// M_g of contact `c` (diagonal, surface axes).
    pub fn grain_inertia(&self, c: usize) -> [f64; 3] {
        let body = &self.robot.body.bodies[self.robot.contacts[c].body];
        let f = self.grain_inertia;
        [f * body.mass, f * body.mass, f * body.inertia]
    }

    /// The contact's wrench w = B(θ) λ at q with weights `lambda`, and the vertices.
    pub fn wrench<S: Scalar>(
        &self,
        frame: &ContactFrame<S>,
        lambda: &[S],
    ) -> ([S; 3], Vec<[S; 3]>) {
        let vertices = self.space.vertices(&frame.depth, &frame.tilt);
        let mut w = [S::zero(), S::zero(), S::zero()];
        for (l, v) in lambda.iter().zip(&vertices) {
            for k in 0..3 {
                w[k] = w[k].clone() + l.clone() * v[k].clone();
            }
        }
        (w, vertices)
    }

    /// M a + bias − B u − springs − Σ_c J_t,cᵀ w_c at one node, for the contacts `active`
    /// with their frames at the node's q (`frames[c]` for contact c).
    pub fn dynamics_residual<S: Scalar>(
        &self,
        x: &[S],
        u: &[S],
        active: &[usize],
        frames: &[ContactFrame<S>],
    ) -> Vec<S> {
        let l = self.layout();
        let (q, v) = x.split_at(l.n_q);
        let a = &u[l.accel()..l.accel() + l.n_q];
        let body = &self.robot.body;
        let m = body.mass_matrix(q);
        let bias = body.bias_forces(q, v);
        let f = self.robot.generalized_forces(q, v, &u[..l.n_inputs]);
        let mut r: Vec<S> = (0..l.n_q)
            .map(|i| dot(&m[i], a) + bias[i].clone() - f[i].clone())
            .collect();
        for &c in active {
            let frame = &frames[c];
            let lambda = &u[l.lambda(c)..l.lambda(c) + l.m];
            let (w, _) = self.wrench(frame, lambda);
            for (i, ri) in r.iter_mut().enumerate() {
                let g = (0..3).fold(S::zero(), |s, k| {
                    s + frame.twist_r[k][i].clone() * w[k].clone()
                });
                *ri = ri.clone() - g;
            }
        }
        r
    }

    /// The variational inequality of one ground interval and the equation that defines y,
    /// given node k (state and controls) and node k + 1 (only its velocities are used).
    pub fn dissipation_rows<S: Scalar>(
        &self,
        now: &[S],
        next: &[S],
        active: &[usize],
    ) -> Vec<(String, S, f64, f64)> {
        let l = self.layout();
        let inf = f64::INFINITY;
        let q = &now[..l.n_q];
        let u = &now[l.n_x()..];
        let y = &u[l.aux()..l.aux() + l.n_q];
        let v_next = &next[l.n_q..l.n_x()];
        let all = self.contact_frames(q);
        let frames: Vec<&ContactFrame<S>> = active.iter().map(|&c| &all[c]).collect();
        // M y − Σ J_pᵀ M_g J_p v⁺ = 0.
        let m = self.robot.body.mass_matrix(q);
        let mut rows = Vec::new();
        let mut metric: Vec<S> = (0..l.n_q).map(|i| dot(&m[i], y)).collect();
        for (&frame, &c) in frames.iter().zip(active) {
            let mg = self.grain_inertia(c);
            for k in 0..3 {
                let speed = dot(&frame.twist_center[k], v_next) * mg[k];
                for (i, mi) in metric.iter_mut().enumerate() {
                    *mi = mi.clone() - frame.twist_center[k][i].clone() * speed.clone();
                }
            }
        }
        let names = &self.robot.coordinates;
        for (i, r) in metric.into_iter().enumerate() {
            rows.push((format!("grain metric {}", names[i].name), r, 0.0, 0.0));
        }
        let moved: Vec<S> = (0..l.n_q)
            .map(|i| v_next[i].clone() + y[i].clone())
            .collect();
        if !self.maximum_dissipation {
            return rows;
        }
        for (&frame, &c) in frames.iter().zip(active) {
            let lambda = &u[l.lambda(c)..l.lambda(c) + l.m];
            let (w, vertices) = self.wrench(frame, lambda);
            let g: Vec<S> = (0..3).map(|k| dot(&frame.twist_r[k], &moved)).collect();
            let dissipated = dot(&g, &w);
            let name = &self.robot.contacts[c].name;
            for (i, vertex) in vertices.iter().enumerate() {
                rows.push((
                    format!("{name} dissipation vertex {}", i + 1),
                    dot(&g, vertex) - dissipated.clone(),
                    0.0,
                    inf,
                ));
            }
            rows.push((
                format!("{name} dissipation origin"),
                S::zero() - dissipated,
                0.0,
                inf,
            ));
        }
        rows
    }

    /// The depth where the terrain carries the robot's weight on the first phase's feet
    /// (shared equally), the feet level; `None` if the data's deepest node cannot.
    pub fn rest_depth(&self) -> Option<f64> {
        let feet = self.phases[0].contacts.len() as f64;
        let weight = self.robot.body.total_mass() * self.robot.body.gravity / feet;
        let capacity = |d: f64| {
            self.space
                .vertices(&d, &0.0)
                .iter()
                .map(|w| w[1])
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

    /// [`rest_depth`](Self::rest_depth), or why there is none.
    fn start_depth(&self) -> Result<f64, PlanError> {
        self.rest_depth().ok_or_else(|| {
            PlanError::Schedule(
                "the terrain cannot carry the robot's weight within its data's depth range".into(),
            )
        })
    }

    /// The standing posture with the start's set coordinates, lowered so that the first
    /// phase's feet are at the rest depth.
    pub fn rest_configuration(&self) -> Result<Vec<f64>, PlanError> {
        let depth = self.start_depth()?;
        let mut q = self.robot.standing.clone();
        for &(i, value) in &self.start_set {
            q[i] = value;
        }
        // The base moved up or down so that the first phase's feet sit at the rest depth on
        // average (the start's set coordinates, a crouch say, move them from standing's z = 0).
        let feet = &self.phases[0].contacts;
        let mean = feet
            .iter()
            .map(|&c| self.contact_frame(&q, c).depth)
            .sum::<f64>()
            / feet.len().max(1) as f64;
        if !self.start_set.iter().any(|&(i, _)| i == 1) {
            q[1] += depth - mean;
        }
        Ok(q)
    }

    fn names(&self) -> (Vec<String>, Vec<String>) {
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
                control_bounds[i] = input.limit;
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
                duration: spec.duration,
                dynamics: Box::new(move |x: &[Sx], u: &[Sx]| {
                    let mut dx: Vec<Sx> = x[l.n_q..].to_vec();
                    dx.extend(u[l.accel()..l.accel() + l.n_q].iter().cloned());
                    dx
                }),
                running_cost: Some(Box::new(self.running_cost())),
                path: Some(path),
                // The joints' position and velocity limits hold at every node.
                state_bounds: self.robot.state_bounds(),
                control_bounds,
                entry: None,
                step: ground.then(|| -> crate::transcription::ocp::Step {
                    Box::new(move |x: &[Sx], u: &[Sx], h: &Sx| {
                        let (q, v) = x.split_at(l.n_q);
                        let a = &u[l.accel()..l.accel() + l.n_q];
                        let v_next: Vec<Sx> = (0..l.n_q)
                            .map(|i| v[i].clone() + h.clone() * a[i].clone())
                            .collect();
                        let mut next: Vec<Sx> = (0..l.n_q)
                            .map(|i| q[i].clone() + h.clone() * v_next[i].clone())
                            .collect();
                        next.extend(v_next);
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
            if p + 2 == self.phases.len() {
                // The schedule ends with a flight: it ends at touchdown.
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

        // The start: at rest on the sand.
        let depth = self.start_depth()?;
        let mut start = vec![None; l.n_x() + l.n_u()];
        start[0] = Some((0.0, 0.0));
        for &(i, value) in &self.start_set {
            start[i] = Some((value, value));
        }
        for i in 0..l.n_q {
            start[l.n_q + i] = Some((0.0, 0.0));
            start[l.n_x() + l.accel() + i] = Some((0.0, 0.0));
        }
        point_bounds.push(PointBounds {
            point: point(0, Node::First),
            state_bounds: start,
        });
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

        // The end.
        let mut end = vec![None; l.n_x() + l.n_u()];
        for &(i, value) in &self.end_set {
            end[i] = Some((value, value));
        }
        if let Some(distance) = self.distance {
            end[0] = Some((distance, distance));
        }
        if self.end_at_rest {
            for i in 0..l.n_q {
                end[l.n_q + i] = Some((0.0, 0.0));
            }
        }
        let last = point(self.phases.len() - 1, Node::Last);
        point_bounds.push(PointBounds {
            point: last,
            state_bounds: end,
        });
        if !self.end_change.is_empty() {
            let change = self.end_change.clone();
            let names: Vec<String> = self
                .robot
                .coordinates
                .iter()
                .map(|c| c.name.clone())
                .collect();
            point_constraints.push(PointConstraint {
                name: "end change".into(),
                f: Box::new(move |pts: &[Vec<Sx>]| {
                    change
                        .iter()
                        .map(|&(i, value)| {
                            Bounded::equal(
                                format!("{} change", names[i]),
                                pts[1][i].clone() - pts[0][i].clone(),
                                value,
                            )
                            .nominal(0.1)
                        })
                        .collect()
                }),
                instances: vec![vec![point(0, Node::First), last]],
            });
        }

        let (state_names, control_names) = self.names();
        let mut state_nominal: Vec<f64> =
            self.robot.coordinates.iter().map(|c| c.nominal).collect();
        state_nominal.extend(self.robot.coordinates.iter().map(|c| c.nominal));
        let mut control_nominal: Vec<f64> = self.robot.inputs.iter().map(|i| i.scale()).collect();
        control_nominal.extend(self.robot.coordinates.iter().map(|c| 10.0 * c.nominal));
        control_nominal.extend(vec![0.1; l.m * l.n_contacts]);
        control_nominal.extend(self.robot.coordinates.iter().map(|c| c.nominal));
        Ok(Ocp {
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

    /// ½ Σ (u_i / u_max,i)², the effort of the planar planner.
    fn running_cost(&self) -> impl Fn(&[Sx], &[Sx]) -> Sx {
        let scales: Vec<f64> = self.robot.inputs.iter().map(|i| i.scale()).collect();
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
        let distance = self.distance.unwrap_or(0.0);
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
                    q[1] -= depth;
                }
                let mut x = q.clone();
                x.extend(vec![0.0; l.n_q]);
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

/// A solved (or attempted) plan.
pub struct WrenchPlan {
    pub report: SolveReport,
    pub trajectory: Trajectory,
    pub setup_seconds: f64,
    pub n_variables: usize,
    pub n_constraints: usize,
    /// The relaxation's iterations when the plan was made in two stages (included in the
    /// report's).
    pub relaxed_iterations: Option<usize>,
}

/// Transcribes and solves, from `start` or from the rest guess.
///
/// From the rest guess the full NLP does not converge (IPOPT ends locally infeasible: the
/// variational inequality's rows are degenerate wherever g = 0, which is everywhere in a
/// resting guess), so the plan is made in two stages: first the relaxation without maximum
/// dissipation (any wrench in W(θ)), then the full NLP from that plan. The iterations and
/// times reported are the two stages' sums.
pub fn plan(
    hop: &Arc<WrenchHop>,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<WrenchPlan, PlanError> {
    let mut first_stage = None;
    let relaxed_start;
    let start = match (start, hop.maximum_dissipation) {
        (None, true) => {
            let relaxed = Arc::new(WrenchHop {
                maximum_dissipation: false,
                ..(**hop).clone()
            });
            let stage = solve_once(&relaxed, settings, None, None)?;
            relaxed_start = stage.trajectory.clone();
            first_stage = Some(stage);
            Some(&relaxed_start)
        }
        (start, _) => start,
    };
    let mut plan = solve_once(hop, settings, start, on_iteration)?;
    if let Some(stage) = first_stage {
        plan.report.iterations += stage.report.iterations;
        plan.report.solve_seconds += stage.report.solve_seconds;
        plan.setup_seconds += stage.setup_seconds;
        plan.relaxed_iterations = Some(stage.report.iterations);
    }
    Ok(plan)
}

fn solve_once(
    hop: &Arc<WrenchHop>,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<WrenchPlan, PlanError> {
    let started = Instant::now();
    let mut nlp = Nlp::build(&hop.ocp()?, Scheme::Trapezoidal)?;
    let x0 = match start {
        Some(trajectory) => nlp.pack(trajectory),
        None => nlp.pack(&hop.rest_guess()?),
    };
    let setup_seconds = started.elapsed().as_secs_f64();
    let report = solver::solve(&mut nlp, &x0, settings, None, on_iteration)?;
    let trajectory = nlp.unpack(&report.x);
    Ok(WrenchPlan {
        report,
        setup_seconds,
        n_variables: nlp.n_variables(),
        n_constraints: nlp.n_constraints(),
        trajectory,
        relaxed_iterations: None,
    })
}
