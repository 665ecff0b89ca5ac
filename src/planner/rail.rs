//! Planning on a wrench-space terrain: the hopper on an inclined rail (docs/WRENCH_SPACE.md
//! section 4, `model::rail`).
//!
//! The NLP (stance with N_s nodes, flight with N_f; x = the hopper's 8 states along the rail,
//! controls u = ż_d and the vertex weights λ₁…λ_m):
//!
//! ```text
//! minimise   Σ_stance h ½u_k²  +  Σ_flight trapezoidal ½u²
//! stance     x_{k+1} = step(x_k, u_k, G_k, h),  G_k = Σᵢ λ_k,i Gᵢ(θ_k)      (the MDP step)
//!            λ_k ≥ 0, 1ᵀλ_k ≤ 1                                  (w_k = B(θ_k) λ_k ∈ W(θ_k))
//!            per interval, with g = J_t v_f,k+1 (the gradient of the step's kinetic energy
//!            in the wrench, up to a positive factor):
//!              gᵀ(wᵢ(θ_k) − w_k) ≥ 0 for every vertex i,  −gᵀw_k ≥ 0   (maximum dissipation)
//!            z_f ≥ the data's deepest node; the last node at the surface, z_f = 0 (take-off)
//! flight     trapezoidal collocation of the free hopper, λ = 0, z_f ≥ 0, ends at the apex
//! both       the hopper's drive and leg limits at every node; x and u continuous
//!            stance duration ≤ (N_s − 1) · 0.9 · the longest stable step
//! start      at rest on the bed (the depth where the capacity along the rail carries the
//!            weight), as the hopper (MODEL.md section 1)
//! task       (z_r(apex) − z_r(start)) cos α = the apex height (a vertical rise)
//! ```
//!
//! The variational inequality over the extreme points is necessary and sufficient for w_k
//! to be the step's maximum-dissipation wrench (a convex objective over a polytope), so the
//! plan's stance is exactly what `sim::mdp::rail` computes from the same state, command and
//! step (the replay test). Choices: the stance is the simulator's first-order step, as the
//! specification asks, so that a replay reproduces it; the flight is trapezoidal, which is
//! exact for the ballistic centre of mass (a semi-implicit Euler flight would put the apex
//! v₀h/2, about 2 mm at 31 nodes, below the true one). A scheme with midpoints is refused.

use std::time::Instant;

use crate::model::hopper::{self, state, Domain, Hopper};
use crate::model::rail::{RailHopper, RailWrenches};
use crate::problem::{self, StartPosition};
use crate::scalar::Scalar;
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::symbolic::Sx;
use crate::terrain::Terrain;
use crate::transcription::{
    Bounded, Nlp, Node, Ocp, Phase, PhaseTrajectory, Point, PointBounds, PointConstraint, Scheme,
    Trajectory,
};

use super::{apex_rise, command_at_rest, leg_limits, start_at_rest, PlanError};

/// The rail jump: robot and terrain, the two phases and the task.
#[derive(Clone, Debug)]
pub struct RailJump {
    pub rail: RailHopper,
    /// Stance and flight: node counts and duration bounds [s].
    pub stance: (usize, (f64, f64)),
    pub flight: (usize, (f64, f64)),
    pub task: problem::Task,
}

impl RailJump {
    /// The rest state before the jump with the actuator at `position`.
    pub fn rest_state(&self, position: f64) -> Result<[f64; state::COUNT], PlanError> {
        self.rail.rest_state(position).ok_or_else(|| {
            PlanError::Schedule(format!(
                "the terrain cannot carry the hopper's weight within its data (capacity {:.2} N \
                 at the deepest node, weight along the rail {:.2} N)",
                self.rail.capacity(self.rail.lowest_foot()),
                self.rail.hopper.total_mass() * self.rail.hopper.gravity
            ))
        })
    }

    /// Control names: u, then one weight per vertex.
    pub fn control_names(&self) -> Vec<String> {
        let mut names = vec![hopper::CONTROL_NAMES[0].to_string()];
        names.extend((1..=self.rail.n_vertices()).map(|i| format!("lambda_{i}")));
        names
    }

    /// The terrain's generalized force along the rail at state `x` with weights `lambda`.
    pub fn terrain_force<S: Scalar>(&self, x: &[S], lambda: &[S]) -> S {
        let forces = self.rail.vertex_forces(&x[state::Z_F]);
        lambda
            .iter()
            .zip(&forces)
            .fold(S::zero(), |sum, (l, g)| sum + l.clone() * g.clone())
    }

    /// The wrench w = B(θ) λ (F_x, F_z, τ) at state `x`.
    pub fn wrench(&self, x: &[f64], lambda: &[f64]) -> [f64; 3] {
        let vertices = self.rail.vertices(&x[state::Z_F]);
        let mut w = [0.0; 3];
        for (l, v) in lambda.iter().zip(&vertices) {
            for c in 0..3 {
                w[c] += l * v[c];
            }
        }
        w
    }

    pub fn ocp(&self) -> Result<Ocp, PlanError> {
        use state::*;
        let inf = f64::INFINITY;
        let m = self.rail.n_vertices();
        let rest = self.rest_state(0.0)?;
        let mut phases = Vec::new();
        for (name, (nodes, duration)) in [("stance", self.stance), ("flight", self.flight)] {
            let stance = name == "stance";
            let mut state_bounds = vec![(-inf, inf); COUNT];
            state_bounds[Z_F] = if stance {
                (self.rail.lowest_foot(), inf)
            } else {
                (0.0, inf)
            };
            let mut control_bounds = vec![(-inf, inf)];
            control_bounds.extend(vec![if stance { (0.0, 1.0) } else { (0.0, 0.0) }; m]);
            let (robot, task) = (self.rail.hopper.clone(), self.task.clone());
            let path: Box<dyn Fn(&[Sx], &[Sx]) -> Vec<Bounded>> =
                Box::new(move |x: &[Sx], u: &[Sx]| {
                    let mut c = leg_limits(&robot, &task, x, &u[0]);
                    if stance {
                        let total = u[1..].iter().fold(Sx::from(0.0), |s, l| s + l.clone());
                        c.push(Bounded::at_most("vertex weights", total, 1.0));
                    }
                    c
                });
            let robot = self.rail.hopper.clone();
            let jump = self.clone();
            phases.push(Phase {
                name: name.into(),
                nodes,
                duration,
                dynamics: Box::new(move |x: &[Sx], u: &[Sx]| {
                    robot.derivatives(Domain::Flight, &Terrain::Rigid, x, &u[0])
                }),
                running_cost: Some(Box::new(|_x: &[Sx], u: &[Sx]| u[0].square() * 0.5)),
                path: Some(path),
                state_bounds,
                control_bounds,
                entry: None,
                step: stance.then(|| -> crate::transcription::ocp::Step {
                    Box::new(move |x: &[Sx], u: &[Sx], h: &Sx| {
                        let force = jump.terrain_force(x, &u[1..]);
                        jump.rail.step(x, &u[0], &force, h)
                    })
                }),
            });
        }

        let stance_nodes = self.stance.0;
        let point = |phase: usize, node: Node| Point { phase, node };
        let mut takeoff = vec![None; COUNT];
        takeoff[Z_F] = Some((0.0, 0.0));
        let point_bounds = vec![
            start_at_rest(&self.task, &rest),
            PointBounds {
                point: point(0, Node::Last),
                state_bounds: takeoff,
            },
        ];
        let mut point_constraints = vec![command_at_rest()];
        // Maximum dissipation on every stance interval: θ and λ from node k, v⁺ from k + 1.
        let jump = self.clone();
        point_constraints.push(PointConstraint {
            name: "maximum dissipation".into(),
            f: Box::new(move |p: &[Vec<Sx>]| jump.dissipation_rows(&p[0], &p[1])),
            instances: (0..stance_nodes - 1)
                .map(|k| vec![point(0, Node::Index(k)), point(0, Node::Index(k + 1))])
                .collect(),
        });
        let along_rail = self.task.apex_height / self.rail.angle.cos();
        point_constraints.extend(apex_rise(
            &self.rail.hopper,
            along_rail,
            point(1, Node::Last),
        ));

        let mut control_nominal = vec![1.0];
        control_nominal.extend(vec![0.1; m]);
        Ok(Ocp {
            total_duration: None,
            state_names: hopper::STATE_NAMES.iter().map(|s| s.to_string()).collect(),
            control_names: self.control_names(),
            state_nominal: vec![0.1, 1.0, 0.1, 1.0, 0.01, 0.1, 0.05, 0.01],
            control_nominal,
            phases,
            control_continuity: true,
            point_constraints,
            point_bounds,
        })
    }

    /// The variational inequality of one stance interval, given node k (state and controls)
    /// and node k + 1: gᵀ(wᵢ − w) ≥ 0 per vertex and −gᵀw ≥ 0, g = J_t v_f,k+1. With one
    /// contact degree of freedom gᵀw = v_f,k+1 G(w), so the rows are written with the
    /// vertices' forces along the rail Gᵢ (the same numbers; the rail takes the rest).
    pub fn dissipation_rows(&self, now: &[Sx], next: &[Sx]) -> Vec<Bounded> {
        let n = state::COUNT;
        let (x, lambda) = (&now[..n], &now[n + 1..]);
        let forces = self.rail.vertex_forces(&x[state::Z_F]);
        let v = next[state::V_F].clone();
        let force = lambda
            .iter()
            .zip(&forces)
            .fold(Sx::from(0.0), |s, (l, g)| s + l.clone() * g.clone());
        let dissipated = v.clone() * force;
        let mut rows: Vec<Bounded> = forces
            .iter()
            .enumerate()
            .map(|(i, g)| {
                Bounded::at_least(
                    format!("dissipation vertex {}", i + 1),
                    v.clone() * g.clone() - dissipated.clone(),
                    0.0,
                )
            })
            .collect();
        rows.push(Bounded::at_least("dissipation origin", -dissipated, 0.0));
        rows
    }

    /// The static equilibrium at every node, the vertex weights carrying the weight in stance.
    pub fn rest_guess(&self) -> Result<Trajectory, PlanError> {
        let a = match self.task.start_position {
            StartPosition::Free => 0.0,
            StartPosition::Fixed(a) => a,
        };
        let x = self.rest_state(a)?.to_vec();
        let m = self.rail.n_vertices();
        let forces = self.rail.vertex_forces(&x[state::Z_F]);
        let best = (0..m)
            .max_by(|&i, &j| forces[i].total_cmp(&forces[j]))
            .unwrap();
        let weight = self.rail.hopper.total_mass() * self.rail.hopper.gravity;
        let mut holding = vec![0.0; m + 1];
        holding[1 + best] = (weight / forces[best]).min(1.0);
        let phase = |name: &str, (nodes, bounds): (usize, (f64, f64)), controls: &Vec<f64>| {
            PhaseTrajectory {
                name: name.into(),
                duration: 0.1_f64.clamp(bounds.0, bounds.1),
                states: vec![x.clone(); nodes],
                controls: vec![controls.clone(); nodes],
                ..Default::default()
            }
        };
        Ok(Trajectory {
            phases: vec![
                phase("stance", self.stance, &holding),
                phase("flight", self.flight, &vec![0.0; m + 1]),
            ],
        })
    }
}

/// A solved (or attempted) rail plan.
pub struct RailPlan {
    pub jump: RailJump,
    pub report: SolveReport,
    pub trajectory: Trajectory,
    /// Vertical rise of the rod from the start to the apex [m].
    pub apex_rise: f64,
    pub setup_seconds: f64,
    pub n_variables: usize,
    pub n_constraints: usize,
}

/// Transcribes the rail jump (trapezoidal flight, the MDP step in stance).
pub fn transcribe(jump: &RailJump) -> Result<Nlp, PlanError> {
    Ok(Nlp::build(&jump.ocp()?, Scheme::Trapezoidal)?)
}

/// Plans the rail jump from `start` (a packed NLP point, e.g. another angle's plan) or from
/// the rest guess.
pub fn plan(
    jump: &RailJump,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<RailPlan, PlanError> {
    let started = Instant::now();
    let mut nlp = transcribe(jump)?;
    let x0 = match start {
        Some(trajectory) => nlp.pack(trajectory),
        None => nlp.pack(&jump.rest_guess()?),
    };
    let setup_seconds = started.elapsed().as_secs_f64();
    let report = solver::solve(&mut nlp, &x0, settings, None, on_iteration)?;
    let trajectory = nlp.unpack(&report.x);
    let first = &trajectory.phases[0].states[0];
    let last = trajectory.phases[1].states.last().unwrap();
    let apex_rise = (last[state::Z_R] - first[state::Z_R]) * jump.rail.angle.cos();
    Ok(RailPlan {
        jump: jump.clone(),
        report,
        trajectory,
        apex_rise,
        setup_seconds,
        n_variables: nlp.n_variables(),
        n_constraints: nlp.n_constraints(),
    })
}

/// [`plan`] from another rail plan's nodes (`loam solve --warm-start`; node and vertex counts
/// checked by the caller), and whether that start gave the plan: a start that does not
/// converge is solved again from the rest guess, as the hopper's warm starts are. Unlike
/// the hopper's, no multipliers are carried over: P5 measured 139 and 186 iterations from
/// the previous angle's nodes alone (docs/WRENCH_SPACE.md).
pub fn plan_from(
    jump: &RailJump,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(RailPlan, bool), PlanError> {
    let Some(start) = start else {
        return Ok((plan(jump, settings, None, on_iteration)?, false));
    };
    // A reborrow, with the trait object's lifetime shortened to it.
    let first_try = on_iteration
        .as_mut()
        .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
    let warm = plan(jump, settings, Some(start), first_try)?;
    if warm.report.converged || warm.report.status == solver::IpoptStatus::UserRequestedStop {
        return Ok((warm, true));
    }
    Ok((plan(jump, settings, None, on_iteration)?, false))
}

impl RailJump {
    /// The hopper problem's robot, phases and task on a rail at `angle` over `wrenches`.
    pub fn from_problem(
        problem: &problem::Problem,
        angle: f64,
        wrenches: RailWrenches,
    ) -> Result<RailJump, PlanError> {
        let domains: Vec<problem::Domain> = problem.phases.iter().map(|p| p.domain).collect();
        if domains != [problem::Domain::Stance, problem::Domain::Flight] {
            return Err(PlanError::Schedule(format!("{domains:?}")));
        }
        let phase = |p: &problem::Phase| {
            let [lo, hi] = p.duration_bounds();
            (p.nodes, (lo, hi))
        };
        let rail = RailHopper::new(Hopper::from_problem(problem), angle, wrenches);
        // The stance's steps stay stable (`RailHopper::stable_step`, with a 10 % margin):
        // its duration is capped at (N − 1) · 0.9 · h_stable.
        let (nodes, (lo, hi)) = phase(&problem.phases[0]);
        let longest = (nodes - 1) as f64 * 0.9 * rail.stable_step();
        if longest < lo {
            return Err(PlanError::Schedule(format!(
                "a stance of {nodes} nodes may last at most {longest:.4} s for its steps to \
                 stay stable (below {:.2} ms), less than its minimum {lo} s: give it more nodes",
                rail.stable_step() * 1e3
            )));
        }
        Ok(RailJump {
            rail,
            stance: (nodes, (lo, hi.min(longest))),
            flight: phase(&problem.phases[1]),
            task: problem.task.clone(),
        })
    }
}
