//! The planar planner on a wrench-space terrain (docs/WRENCH_SPACE.md section 4, the
//! "second task": the planar monopod hopping forward on sand, exercising the foot's tilt φ
//! and the terrain's torque τ; and the first, the hopper on an inclined rail): what
//! [`PlanarPlanner::on_wrench_space`] transcribes in place of a closed-form law's stance rows.
//! The task's rows (`ocp::TaskRows`), the drives' rows, the swing height and the run writer
//! are the planar planner's own.
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
//!            the coordinates the task sets; a gait's stride (`task.periodic`): base x = 0 and
//!            the coordinates the task sets only, and it may start in flight at its apex
//! end        the base x at the task's distance, the coordinates the task sets or changes,
//!            at rest if asked; a gait's stride: the start moved forward by the distance, in
//!            the stride time `task.speed` gives
//! ```
//!
//! A gait on sand closes on the robot's state alone: the wrench space keeps no footprint (the
//! depth is the sole's below the undisturbed surface), so each stride lands on level sand one
//! stride further on.
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

use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use crate::model::planar::PlanarRobot;
use crate::problem::planar::{PlanarProblem, PlanarTask, PlanarTerrainConfig};
use crate::scalar::Scalar;
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::terrain::wrench_space::WrenchSpace;
use crate::transcription::{Nlp, Scheme, Trajectory};

use super::{PlanarPlan, PlanarPlanner};
use crate::planner::{PlanError, StageOutcome};

mod contact;
mod ocp;
mod stable;

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
pub struct WrenchSpacePlanner {
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
    /// The task as the problem states it (its rows: `planner::planar::ocp::TaskRows`).
    pub task: PlanarTask,
    /// Impose maximum dissipation (the variational inequality). Without it any wrench in
    /// W(θ) is admissible: a relaxation that [`plan`] solves first, for a feasible start.
    pub maximum_dissipation: bool,
}

/// Indices of one node's variables.
#[derive(Clone, Copy, Debug)]
pub struct WrenchLayout {
    pub n_q: usize,
    /// Two per drive (its integrator and its command), after q and q̇.
    pub n_drive_states: usize,
    pub n_inputs: usize,
    pub n_contacts: usize,
    /// Vertices per contact.
    pub m: usize,
}

impl WrenchLayout {
    pub fn n_x(&self) -> usize {
        2 * self.n_q + self.n_drive_states
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
    /// On a body only locked coordinates turn: an orthonormal basis of the twists the foot
    /// can have (constant there); `None` on a free body.
    pub directions: Option<Vec<[f64; 3]>>,
}

pub(super) fn dot<S: Scalar>(a: &[S], b: &[S]) -> S {
    a.iter()
        .zip(b)
        .fold(S::zero(), |s, (x, y)| s + x.clone() * y.clone())
}

impl WrenchSpacePlanner {
    /// The plan a planar problem file on `terrain: {model: wrench_space}` asks for, with its
    /// data already loaded (the problem is validated: names exist, the schedule alternates).
    pub fn from_problem(problem: &PlanarProblem, space: Arc<WrenchSpace>) -> WrenchSpacePlanner {
        let robot = problem.robot.build(problem.gravity);
        let grain_inertia = match &problem.terrain {
            PlanarTerrainConfig::WrenchSpace(ground) => ground.grain_inertia,
            // Not a wrench space: the default of its field.
            _ => 2.0,
        };
        let index = |name: &String| robot.coordinate(name).expect("validated coordinate name");
        let set = |map: &std::collections::BTreeMap<String, f64>| {
            map.iter().map(|(n, v)| (index(n), *v)).collect()
        };
        WrenchSpacePlanner {
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
            task: problem.task.clone(),
            grain_inertia,
            maximum_dissipation: true,
            space,
            robot,
        }
    }

    pub fn layout(&self) -> WrenchLayout {
        WrenchLayout {
            n_q: self.robot.n_q(),
            n_drive_states: self.robot.n_x() - 2 * self.robot.n_q(),
            n_inputs: self.robot.inputs.len(),
            n_contacts: self.robot.contacts.len(),
            m: self.space.n_directions(),
        }
    }

    /// Checks the schedule: ground and flight in turn, at least 2 nodes a phase, the first
    /// phase on the ground.
    pub fn validate(&self) -> Result<(), PlanError> {
        let fail = |m: String| Err(PlanError::Unplannable(m));
        if self.robot.locked.contains(&1) {
            return fail(
                "a wrench-space plan starts with the robot lowered into the sand along its \
                 base's z, which `locked` holds: unlock z (a guide may hold x and pitch)"
                    .into(),
            );
        }
        if !self.phases.iter().any(WrenchPhase::is_ground) {
            return fail("a wrench-space plan touches the sand: a phase lists feet".into());
        }
        if !self.phases[0].is_ground() && !self.task.periodic {
            return fail(
                "a wrench-space plan starts on the ground (the first phase lists feet), but                  for a gait's stride (`task.periodic`), which may start in flight at its apex"
                    .into(),
            );
        }
        for (p, phase) in self.phases.iter().enumerate() {
            if phase.nodes < 2 {
                return fail(format!("phase {p} has {} nodes; at least 2", phase.nodes));
            }
            if let Some((longest, step)) = self.ground_duration_cap(p)? {
                if longest < phase.duration.0 {
                    return fail(format!(
                        "ground phase {p} of {} nodes may last at most {longest:.4} s for its \
                         steps to stay stable (below {:.2} ms, the robot's springs and drives), \
                         less than its minimum {} s: give it more nodes",
                        phase.nodes,
                        step * 1e3,
                        phase.duration.0
                    ));
                }
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
}

impl WrenchSpacePlanner {
    /// A ground phase's longest duration for its steps to stay stable, (N − 1) · 0.9 · the
    /// longest stable step at the start's configuration ([`Self::stable_step`], a 10 %
    /// margin), with that step; `None` for a flight or a robot stable at any step.
    pub fn ground_duration_cap(&self, p: usize) -> Result<Option<(f64, f64)>, PlanError> {
        let phase = &self.phases[p];
        if !phase.is_ground() {
            return Ok(None);
        }
        let q = self.rest_configuration()?;
        Ok(self
            .stable_step(&q)
            .map(|step| ((phase.nodes - 1) as f64 * 0.9 * step, step)))
    }
}

/// Transcribes and solves `planner`'s wrench-space problem ([`PlanarPlanner::on_wrench_space`]),
/// from `start` or from the rest guess.
///
/// From the rest guess the full NLP does not converge (IPOPT ends locally infeasible: the
/// variational inequality's rows are degenerate wherever g = 0, which is everywhere in a
/// resting guess), so the plan is made in two stages: first the relaxation without maximum
/// dissipation (any wrench in W(θ)), then the full NLP from that plan (`stages`: both). The
/// iterations and times reported are the two stages' sums.
pub fn plan(
    planner: &Rc<PlanarPlanner>,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    plan_with(planner, settings, start, start.is_none(), on_iteration)
}

/// [`plan`], with the relaxation first (`relax_first`) from `start` too: a start made on
/// another ground (its wrenches none of this sand's vertex weights) is a start of the
/// relaxation, as the rest guess is.
pub fn plan_with(
    planner: &Rc<PlanarPlanner>,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    relax_first: bool,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    let hop = planner
        .wrench_space
        .as_ref()
        .expect("a planner built on a wrench space");
    let mut stages = Vec::new();
    let relaxed_start;
    let mut setup_seconds = 0.0;
    let start = match (relax_first, hop.maximum_dissipation) {
        (true, true) => {
            let relaxed = Arc::new(WrenchSpacePlanner {
                maximum_dissipation: false,
                ..(**hop).clone()
            });
            let (stage, trajectory, setup, _) = solve_once(&relaxed, settings, start, None)?;
            relaxed_start = trajectory;
            setup_seconds += setup;
            stages.push(StageOutcome::of("relaxation", &stage));
            Some(&relaxed_start)
        }
        _ => start,
    };
    let (mut report, trajectory, setup, (n_variables, n_constraints)) =
        solve_once(hop, settings, start, on_iteration)?;
    setup_seconds += setup;
    if !stages.is_empty() {
        stages.push(StageOutcome::of("maximum dissipation", &report));
        report.iterations += stages[0].iterations;
        report.solve_seconds += stages[0].solve_seconds;
    }
    Ok(PlanarPlan {
        planner: Rc::clone(planner),
        report,
        trajectory,
        setup_seconds,
        n_variables,
        n_constraints,
        stages,
        starts: Vec::new(),
        refinement: Vec::new(),
    })
}

/// One IPOPT solve: its report, trajectory, set-up time and the NLP's size.
fn solve_once(
    hop: &Arc<WrenchSpacePlanner>,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(SolveReport, Trajectory, f64, (usize, usize)), PlanError> {
    let started = Instant::now();
    let mut nlp = Nlp::build(&hop.ocp()?, Scheme::Trapezoidal)?;
    let x0 = match start {
        Some(trajectory) => nlp.pack(trajectory),
        None => nlp.pack(&hop.rest_guess()?),
    };
    let setup_seconds = started.elapsed().as_secs_f64();
    let report = solver::solve(&mut nlp, &x0, settings, None, on_iteration)?;
    let trajectory = nlp.unpack(&report.x);
    let size = (nlp.n_variables(), nlp.n_constraints());
    Ok((report, trajectory, setup_seconds, size))
}
