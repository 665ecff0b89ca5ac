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
use std::sync::Arc;
use std::time::Instant;

use crate::model::planar::PlanarRobot;
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use crate::problem::{Scheme as ProblemScheme, StageOne, Strategy};
use crate::scalar::Scalar;
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::symbolic::Sx;
use crate::terrain::rigid::{self, Row, WRENCH};
use crate::terrain::wrench_space::WrenchSpace;
use crate::terrain::ContactModel;
use crate::transcription::{Bounded, PhaseTrajectory, Scheme, Trajectory};

pub mod error;
mod footholds;
pub mod multi_start;
pub(crate) mod ocp;
pub mod refine;
mod rows;
pub mod wrench_space;

use super::{PlanError, Transcribe};
use wrench_space::WrenchSpacePlanner;

/// The default of `task.contact_margin`: the share of the robot's weight (split over the feet
/// down) every held foot keeps at every stance node but its lift-off node, and the share of g
/// a foot leaving a bed accelerates upward with.
pub const NORMAL_FORCE_MARGIN: f64 = crate::problem::planar::DEFAULT_CONTACT_MARGIN;

/// The indices of one node's variables: state then control.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub n_q: usize,
    pub n_inputs: usize,
    pub n_contacts: usize,
    /// Two per drive (its integrator and its command), after q and q̇.
    pub n_drive_states: usize,
}

impl Layout {
    pub fn of(robot: &PlanarRobot) -> Layout {
        Layout {
            n_q: robot.body.n_q(),
            n_inputs: robot.inputs.len(),
            n_contacts: robot.contacts.len(),
            n_drive_states: robot.n_x() - 2 * robot.body.n_q(),
        }
    }
    pub fn n_x(&self) -> usize {
        2 * self.n_q + self.n_drive_states
    }
    /// The rates q̇ within the state.
    pub fn v(&self) -> std::ops::Range<usize> {
        self.n_q..2 * self.n_q
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
    /// The contact model under every foot: how it holds a foot along the normal, how a foot
    /// leaves and lands (`terrain::contact`); `None` on a wrench space.
    law: Option<Box<dyn ContactModel<Sx>>>,
    /// On a wrench space: its ground phases' transcription (the MDP step, [`wrench_space`]),
    /// which then builds the NLP in place of the law's stance rows.
    pub wrench_space: Option<Arc<WrenchSpacePlanner>>,
    pub problem: PlanarProblem,
    pub layout: Layout,
    /// Contact indices per phase.
    pub phases: Vec<Vec<usize>>,
    pub scheme: Scheme,
}

/// The equations of motion's residuals as equality rows named by coordinate, scaled by the
/// robot's weight.
/// A locked coordinate has no row: its guide supplies whatever force its row would ask.
pub(crate) fn dynamics_rows(robot: &PlanarRobot, residual: Vec<Sx>, weight: f64) -> Vec<Bounded> {
    residual
        .into_iter()
        .zip(&robot.coordinates)
        .enumerate()
        .filter(|(j, _)| !robot.locked.contains(j))
        .map(|(_, (r, c))| Bounded::equal(format!("dynamics {}", c.name), r, 0.0).nominal(weight))
        .collect()
}

pub(super) fn to_bounded(row: Row<Sx>) -> Bounded {
    Bounded::between(row.name, row.expr, row.lower, row.upper).nominal(row.nominal)
}

impl PlanarPlanner {
    /// The planner of a problem on a closed-form contact model (rigid ground, the added-mass
    /// bed, the spring ground). A wrench space's data are loaded by its reader:
    /// [`PlanarPlanner::on_wrench_space`].
    pub fn new(problem: &PlanarProblem) -> PlanarPlanner {
        let contact = problem
            .terrain
            .contact_model::<Sx>()
            .expect("a wrench-space problem is built by PlanarPlanner::on_wrench_space");
        PlanarPlanner::with_ground(problem, Some(contact), None)
    }

    /// The planner of a problem on `terrain: {model: wrench_space}`, with its data `space`:
    /// its ground phases are the MDP simulator's own step ([`wrench_space`]).
    pub fn on_wrench_space(problem: &PlanarProblem, space: Arc<WrenchSpace>) -> PlanarPlanner {
        let hop = Arc::new(WrenchSpacePlanner::from_problem(problem, space));
        PlanarPlanner::with_ground(problem, None, Some(hop))
    }

    fn with_ground(
        problem: &PlanarProblem,
        law: Option<Box<dyn ContactModel<Sx>>>,
        wrench_space: Option<Arc<WrenchSpacePlanner>>,
    ) -> PlanarPlanner {
        let robot = problem.robot.build(problem.gravity);
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
            law,
            wrench_space,
            problem: problem.clone(),
            phases,
            scheme,
        }
    }

    /// The contact model under every foot. Only the law's transcription asks it: a plan on a
    /// wrench space is built by [`wrench_space`] from the first step.
    pub fn contact(&self) -> &dyn ContactModel<Sx> {
        self.law
            .as_deref()
            .expect("the law's rows are asked only of a closed-form contact model")
    }

    /// The drives' states holding posture `q` still with the first phase's feet sharing the
    /// weight: each integrator at the effort its coordinate needs, each command at its
    /// coordinate (for the guess).
    pub(super) fn drives_at_rest(&self, q: &[f64]) -> Vec<f64> {
        drives_holding(&self.robot, q, &self.phases[0], self.weight())
    }

    /// The first stage of `strategy: two_stage`: the problem's `stage_one`, or per phase its
    /// contact model's rule (a stance phase's duration as the ground under it says, a
    /// flight's as well), clamped into the phase's bounds.
    pub fn stage_one(&self, nlp: &crate::transcription::Nlp) -> super::StageOneRule {
        let given = self
            .problem
            .stage_one
            .as_ref()
            .and_then(|s| s.durations.clone());
        let from_rule = given.is_none();
        let durations = given.unwrap_or_else(|| {
            self.phases
                .iter()
                .map(|feet| self.contact().stage_one_duration(!feet.is_empty()))
                .collect()
        });
        let iterations = self.stage_one_iterations();
        let held = |durations: &[Option<f64>]| -> Vec<(usize, f64)> {
            let clamped = durations
                .iter()
                .zip(&self.problem.schedule)
                .map(|(d, spec)| d.map(|d| d.clamp(spec.duration[0], spec.duration[1])))
                .collect();
            self.fit_stride_time(clamped)
                .into_iter()
                .enumerate()
                .filter_map(|(p, d)| d.map(|d| (nlp.duration_index(p), d)))
                .collect()
        };
        // The contact model's rule holds a flight at a guess; a task the flight cannot meet
        // at that duration (a rigid 100 mm jump needs 0.14 s of flight to its apex, the rule
        // holds 0.1 s) makes the stage infeasible: then the stances alone are held.
        let stances_only = from_rule.then(|| {
            let stances: Vec<Option<f64>> = durations
                .iter()
                .zip(&self.phases)
                .map(|(d, feet)| d.filter(|_| !feet.is_empty()))
                .collect();
            held(&stances)
        });
        let held = held(&durations);
        super::StageOneRule {
            // Not the same durations again (the bed's rule holds no flight).
            if_infeasible: stances_only.filter(|s| *s != held),
            held,
            iterations,
            fallback: true,
        }
    }

    /// Durations to hold in a first stage, scaled together so that, with the free phases
    /// within their bounds, they can sum to the task's stride time (`task.speed`): held
    /// durations that cannot would make the first stage infeasible.
    pub fn fit_stride_time(&self, held: Vec<Option<f64>>) -> Vec<Option<f64>> {
        let Some(total) = self.problem.task.stride_time() else {
            return held;
        };
        let sum: f64 = held.iter().flatten().sum();
        let (mut lo, mut hi) = (0.0, 0.0);
        for (d, spec) in held.iter().zip(&self.problem.schedule) {
            if d.is_none() {
                lo += spec.duration[0];
                hi += spec.duration[1];
            }
        }
        if sum <= 0.0 {
            return held;
        }
        let scale = sum.clamp(total - hi, total - lo) / sum;
        held.into_iter().map(|d| d.map(|d| d * scale)).collect()
    }

    /// The first stage's iteration cap: the problem's `stage_one.iterations`; else 20 where
    /// it gives the durations, the contact model's rule where it does not.
    pub fn stage_one_iterations(&self) -> usize {
        match &self.problem.stage_one {
            Some(StageOne {
                iterations: Some(n),
                ..
            }) => *n,
            Some(StageOne {
                durations: Some(_), ..
            }) => 20,
            _ => self.contact().stage_one_iterations(),
        }
    }

    pub(super) fn weight(&self) -> f64 {
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
        match &self.wrench_space {
            Some(hop) => hop.names().1,
            None => law_control_names(&self.robot),
        }
    }

    pub(super) fn rest_guess(&self) -> Trajectory {
        let l = self.layout;
        let mut q0 = self.robot.standing.clone();
        for (name, value) in &self.problem.task.start.set {
            q0[self.coordinate(name)] = *value;
        }
        // On a ground that yields, sunk to the depth at which each foot of the first phase
        // carries its share of the weight (q[1] is the base's height, `Multibody`'s
        // definition); 0 on rigid ground.
        if !self.phases[0].is_empty() {
            q0[1] -= self
                .contact()
                .rest_depth(self.weight() / self.phases[0].len() as f64);
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
        let drives = self.drives_at_rest(&q0);
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
                x[2 * l.n_q..].copy_from_slice(&drives);
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

/// The control names of a plan on a closed-form contact model: the inputs, the
/// accelerations `dd_<coordinate>`, each contact's wrench (`<foot>_fx`, `_fz`, `_tau`) and
/// impulse (`impulse_<foot>_…`).
pub fn law_control_names(robot: &PlanarRobot) -> Vec<String> {
    let mut names: Vec<String> = robot.inputs.iter().map(|i| i.name.clone()).collect();
    names.extend(robot.coordinates.iter().map(|c| format!("dd_{}", c.name)));
    for prefix in ["", "impulse_"] {
        for c in &robot.contacts {
            for part in ["fx", "fz", "tau"] {
                names.push(format!("{prefix}{}_{part}", c.name));
            }
        }
    }
    names
}

/// The centre of mass's vertical velocity: Σ m_b ż_b / m, from the bodies' COM points.
/// The drives' states holding posture `q` still with the feet `feet` sharing `weight`
/// (vertical forces): each integrator at the effort its coordinate then needs, each command
/// at its coordinate. A guess, not an equilibrium the planner imposes.
pub(crate) fn drives_holding(
    robot: &PlanarRobot,
    q: &[f64],
    feet: &[usize],
    weight: f64,
) -> Vec<f64> {
    let n_q = robot.n_q();
    let v = vec![0.0; n_q];
    // With q̈ = 0 and q̇ = 0 and no effort, h − Q − Σ Jᵀ w is the effort each coordinate
    // needs.
    let h = robot.body.bias_forces(q, &v);
    let f = robot.generalized_forces(q, &v, &vec![0.0; robot.inputs.len()]);
    let mut need: Vec<f64> = h.iter().zip(&f).map(|(h, f)| h - f).collect();
    for &c in feet {
        let w = [0.0, weight / feet.len() as f64, 0.0];
        for (n, g) in need
            .iter_mut()
            .zip(rigid::generalized_force(robot, c, q, &w))
        {
            *n -= g;
        }
    }
    let mut states = Vec::new();
    for (i, drive) in robot.drives() {
        let j = robot.inputs[i].coordinate;
        states.push(drive.holding_integral(need[j]));
        states.push(q[j]);
    }
    states
}

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

/// A solved (or attempted) planar plan.
pub struct PlanarPlan {
    pub planner: Rc<PlanarPlanner>,
    pub report: SolveReport,
    pub trajectory: Trajectory,
    pub setup_seconds: f64,
    pub n_variables: usize,
    pub n_constraints: usize,
    /// `strategy: two_stage`: each stage's outcome (empty for one stage; the kept start's
    /// with `starts`).
    pub stages: Vec<super::StageOutcome>,
    /// `starts: N`: every start's outcome, the kept one marked (empty for one start).
    pub starts: Vec<multi_start::PlanarStart>,
    /// Mesh refinement (`mesh:`, `--refine`): every round, the first included (empty when
    /// not refined).
    pub refinement: Vec<refine::RefineRound>,
}

/// Transcribe, guess, solve.
pub fn plan(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    plan_from(problem, settings, None, on_iteration)
}

/// Transcribe and solve from `start` (another plan resampled onto this problem's mesh), or
/// from the problem's initial guess.
///
/// A two-stage problem started from another plan runs its own first stage (`stage_one`, or
/// the contact model's rule) from that plan's point, then releases it: a warm start changes
/// where IPOPT starts, not what the first stage holds. Measured on the hopper's sweeps from
/// 100 mm down, each height from its neighbour (31 + 31 nodes, not refined): on rigid ground
/// the chain reaches the cold optima at every height in 168 iterations against the cold
/// solves' 252, where holding the neighbour's durations left the optimum at 30-60 mm (up to
/// 9 % above it: a 60 mm apex wants a shorter flight than the 70 mm plan's) and holding its
/// stances alone did so on poppy seeds (60 mm: 0.0543 against 0.0481 at 15 + 15 nodes); on
/// poppy seeds the chain ends at the cold optima or below but at 70 mm (+0.09 %). From
/// another ground it is the same: the hopper's 60 mm jump on poppy seeds started from its
/// rigid plan (stance at the 0.2 s bound) ends at the cold optimum, 0.047632 in 77
/// iterations, where holding the rigid plan's durations ended at 0.05245. The monopod's gait
/// from 0.6 m/s to 0.5-0.7 m/s reaches the cold optima in 28-96 iterations (cold 22-31; a
/// one-stage solve from the neighbour took 128-279).
pub fn plan_from(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    start: Option<&Trajectory>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    plan_from_start(problem, settings, start.map(|s| (s, false)), on_iteration)
}

/// [`plan_from`], where the start may be this same problem (task and ground) solved on
/// another mesh (`true` beside it): then its durations fit, and a two-stage problem holds
/// them first, as a refinement round does. Measured on the hopper's 60 mm jump on poppy seeds
/// up a chain of meshes (31 → 61 → 121 → 241 nodes, each from the one before): 53, 51 and 51
/// iterations holding them, 51, 86 and 110 with the problem's own first stage (cold: 80, 100,
/// 110), all to the same optima.
pub fn plan_from_start(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    start: Option<(&Trajectory, bool)>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    if matches!(problem.terrain, PlanarTerrainConfig::WrenchSpace(_)) {
        return Err(PlanError::WrenchSpace);
    }
    if let (Some((start, same_problem)), Strategy::TwoStage) = (start, problem.strategy) {
        return two_stage_from(problem, settings, start, same_problem, on_iteration);
    }
    let start = start.map(|(s, _)| s);
    let started = Instant::now();
    let planner = Rc::new(PlanarPlanner::new(problem));
    let mut nlp = planner.nlp()?;
    let points = match start {
        Some(start) => vec![(None, nlp.pack(start))],
        None => super::starting_points(&planner, problem.initial_guess, &nlp),
    };
    let setup_seconds = started.elapsed().as_secs_f64();
    let (report, stages, starts) = if start.is_none() && problem.starts > 1 {
        multi_start::solve(&planner, &mut nlp, points, settings, on_iteration)?
    } else {
        let (report, stages) = solve_one(
            &planner,
            &mut nlp,
            points,
            start.is_none(),
            settings,
            on_iteration,
        )?;
        (report, stages, Vec::new())
    };
    Ok(PlanarPlan::of(
        planner,
        &nlp,
        setup_seconds,
        report,
        stages,
        starts,
    ))
}

impl PlanarPlan {
    /// The plan of a finished solve on `nlp`, not yet refined.
    fn of(
        planner: Rc<PlanarPlanner>,
        nlp: &crate::transcription::Nlp,
        setup_seconds: f64,
        report: SolveReport,
        stages: Vec<super::StageOutcome>,
        starts: Vec<multi_start::PlanarStart>,
    ) -> PlanarPlan {
        PlanarPlan {
            planner,
            trajectory: nlp.unpack(&report.x),
            setup_seconds,
            n_variables: nlp.n_variables(),
            n_constraints: nlp.n_constraints(),
            report,
            stages,
            starts,
            refinement: Vec::new(),
        }
    }
}

/// The plan of `problem` from `start` (a finer mesh's resampling of a coarser plan) in two
/// stages: first with every phase's duration held at the start's, then released from there
/// with its multipliers (MODEL.md 5.3). A plain solve from the resampled point, with every
/// duration free from the first iteration, was measured to leave the coarse plan's local
/// optimum (the hopper file at 50 and 80 mm on rigid ground: 0.00646 → 0.01110 and
/// 0.01130 → 0.01750); holding them keeps the refinement on it.
pub fn plan_refined(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    start: &Trajectory,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    two_stage_from(problem, settings, start, true, on_iteration)
}

/// The two-stage solve of `problem` from `start`, its first stage holding the start's
/// durations (`hold_its_durations`: a refinement round, the same task on a finer mesh) or what
/// the problem's own first stage holds (a warm start, [`plan_from`]).
fn two_stage_from(
    problem: &PlanarProblem,
    settings: &SolveSettings,
    start: &Trajectory,
    hold_its_durations: bool,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<PlanarPlan, PlanError> {
    let started = Instant::now();
    let planner = Rc::new(PlanarPlanner::new(problem));
    let mut nlp = planner.nlp()?;
    let (x0, rule) = if hold_its_durations {
        // The start's durations, scaled to this task's stride time where a speed sets one (a
        // neighbour's plan at another speed; a coarser round of the same task already meets
        // it).
        let durations =
            planner.fit_stride_time(start.phases.iter().map(|p| Some(p.duration)).collect());
        let mut start = start.clone();
        for (phase, d) in start.phases.iter_mut().zip(&durations) {
            phase.duration = d.expect("every duration held");
        }
        let rule = super::StageOneRule {
            held: start
                .phases
                .iter()
                .enumerate()
                .map(|(p, phase)| (nlp.duration_index(p), phase.duration))
                .collect(),
            iterations: planner.stage_one_iterations(),
            fallback: true,
            if_infeasible: None,
        };
        (nlp.pack(&start), rule)
    } else {
        (nlp.pack(start), planner.stage_one(&nlp))
    };
    let setup_seconds = started.elapsed().as_secs_f64();
    let (report, stages) = super::solve_two_stage(&mut nlp, &x0, &rule, settings, on_iteration)?;
    Ok(PlanarPlan::of(
        planner,
        &nlp,
        setup_seconds,
        report,
        stages,
        Vec::new(),
    ))
}

/// One solve as the problem states it: two stages when it asks and starts from its guess,
/// one otherwise.
fn solve_one(
    planner: &PlanarPlanner,
    nlp: &mut crate::transcription::Nlp,
    points: Vec<(Option<crate::problem::InitialGuess>, Vec<f64>)>,
    from_guess: bool,
    settings: &SolveSettings,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(SolveReport, Vec<super::StageOutcome>), PlanError> {
    match (planner.problem.strategy, from_guess) {
        (Strategy::TwoStage, true) => {
            let rule = planner.stage_one(nlp);
            let (_, x0) = points.into_iter().next().expect("one starting point");
            super::solve_two_stage(nlp, &x0, &rule, settings, on_iteration)
        }
        _ => {
            let (report, _) = super::solve_from(nlp, points, settings, None, on_iteration)?;
            Ok((report, Vec::new()))
        }
    }
}

/// IPOPT options of a planar problem file, in the solver's type.
pub fn solver_options(problem: &PlanarProblem) -> Vec<(String, solver::OptionValue)> {
    super::options_of(&problem.solver)
}
