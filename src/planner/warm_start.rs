//! Starting IPOPT from another plan: a neighbour in a sweep, or any earlier run
//! (`loam solve --warm-start RUN_DIR`).
//!
//! A plan starts another when both have the same schedule (domains and node counts) and
//! scheme, so that their variables are the same points of the jump. The primal point is the
//! plan's trajectory with every state moved by the difference of the two problems' rest
//! states: a plan made on rigid ground starts a plan on a bed with its heights lowered by the
//! foot's rest depth there (7.6 mm for the shipped hopper on poppy seeds), and back up the
//! other way. Unshifted, the start violates the bed's rest condition at its first node and the
//! bed's stance dynamics everywhere (149 IPOPT iterations on the 60 mm poppy-seed jump against
//! 38 shifted; results/README.md, "Warm starts"). The multipliers are taken by constraint row
//! and variable name (`stance interval 8: defect z_m`, `stance node 0: z_f`): rows of one
//! terrain that the other lacks (rigid ground's `ground reaction`, the bed's `flight
//! clearance`) start at zero.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{plan_with, Jump, Plan, PlanError, Transcriptions};
use crate::model::hopper::state;
use crate::problem::Problem;
use crate::solver::{IpoptStatus, IterationInfo, Multipliers, OptionValue, SolveSettings};
use crate::transcription::{Nlp, Trajectory};

/// IPOPT's multipliers at a plan's solution, by name, in the NLP's order: `solution.json`'s
/// `multipliers`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedMultipliers {
    /// Per constraint row: its name and multiplier (IPOPT's `mult_g`).
    pub constraints: Vec<(String, f64)>,
    /// Per variable with a finite lower bound: its name and the bound's multiplier (`z_L`).
    pub variable_lower: Vec<(String, f64)>,
    /// Per variable with a finite upper bound: its name and the bound's multiplier (`z_U`).
    pub variable_upper: Vec<(String, f64)>,
}

impl NamedMultipliers {
    /// The `multipliers` of a solve of `nlp`, named.
    pub fn of(nlp: &Nlp, multipliers: &Multipliers) -> NamedMultipliers {
        let bounded = |bounds: &[f64], values: &[f64]| {
            (0..nlp.n_variables())
                .filter(|&i| bounds[i].is_finite())
                .map(|i| (nlp.variable_name(i), values[i]))
                .collect()
        };
        NamedMultipliers {
            constraints: (0..nlp.n_constraints())
                .map(|r| (nlp.constraint_name(r), multipliers.g[r]))
                .collect(),
            variable_lower: bounded(&nlp.x_lower, &multipliers.x_lower),
            variable_upper: bounded(&nlp.x_upper, &multipliers.x_upper),
        }
    }

    /// The multipliers for `nlp`'s rows and variables; a name these lack gets zero.
    fn for_nlp(&self, nlp: &Nlp) -> Multipliers {
        let lookup = |named: &[(String, f64)], n: usize, name: &dyn Fn(usize) -> String| {
            let by_name: HashMap<&str, f64> = named.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            (0..n)
                .map(|i| by_name.get(name(i).as_str()).copied().unwrap_or(0.0))
                .collect()
        };
        let (n, m) = (nlp.n_variables(), nlp.n_constraints());
        Multipliers {
            g: lookup(&self.constraints, m, &|r| nlp.constraint_name(r)),
            x_lower: lookup(&self.variable_lower, n, &|i| nlp.variable_name(i)),
            x_upper: lookup(&self.variable_upper, n, &|i| nlp.variable_name(i)),
        }
    }
}

/// A plan as the start of another: its jump, its trajectory and its multipliers.
#[derive(Clone, Debug)]
pub struct PlanStart {
    pub jump: Jump,
    pub trajectory: Trajectory,
    pub multipliers: NamedMultipliers,
    pub converged: bool,
}

impl PlanStart {
    /// A plan solved in this process.
    pub fn of(plan: &Plan) -> PlanStart {
        PlanStart {
            jump: plan.jump.clone(),
            trajectory: plan.trajectory.clone(),
            multipliers: plan.multipliers.clone(),
            converged: plan.report.converged,
        }
    }

    /// Why this plan cannot start `target`, in words (what differs), or None when it can.
    pub fn mismatch(&self, target: &Problem) -> Result<Option<String>, PlanError> {
        Ok(self.mismatch_with(&Jump::from_problem(target)?))
    }

    pub(super) fn mismatch_with(&self, to: &Jump) -> Option<String> {
        let from = &self.jump;
        if from.scheme != to.scheme {
            return Some(format!(
                "the plan was transcribed with the {} scheme, the problem uses {}",
                from.scheme.name(),
                to.scheme.name()
            ));
        }
        let schedule = |jump: &Jump| {
            jump.phases
                .iter()
                .map(|(domain, nodes, _)| format!("{} {nodes} nodes", domain.name()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let nodes = |jump: &Jump| -> Vec<_> { jump.phases.iter().map(|p| (p.0, p.1)).collect() };
        if nodes(from) != nodes(to) {
            return Some(format!(
                "the plan has {}, the problem {} (node counts must match; set them with --set phases.N.nodes=...)",
                schedule(from),
                schedule(to)
            ));
        }
        None
    }

    /// The start of `nlp` (the NLP of `target`): the trajectory moved onto the target's rest
    /// state, and the multipliers by name.
    pub fn point(&self, target: &Jump, nlp: &Nlp) -> (Vec<f64>, Multipliers) {
        let shift = rest_shift(&self.jump, target);
        let mut trajectory = self.trajectory.clone();
        for phase in &mut trajectory.phases {
            for x in phase.states.iter_mut().chain(&mut phase.mid_states) {
                for (v, d) in x.iter_mut().zip(&shift) {
                    *v += d;
                }
            }
        }
        (nlp.pack(&trajectory), self.multipliers.for_nlp(nlp))
    }
}

/// What moves a plan of `from` onto `to`: the difference of their rest states (actuator at
/// mid-stroke), per state. On a change of terrain it lowers (raises) the three heights by the
/// foot's rest depth; the velocities, the actuator position and, for one robot, the drive's
/// integrator are the same at rest on every terrain.
pub fn rest_shift(from: &Jump, to: &Jump) -> [f64; state::COUNT] {
    let (a, b) = (from.rest_state(0.0), to.rest_state(0.0));
    std::array::from_fn(|i| b[i] - a[i])
}

/// Plans `problem`, from `start` when given (IPOPT's warm-start options on top of the
/// problem's); a warm start that does not converge is solved again from the problem's own
/// guess. Returns the plan and whether it came from `start`.
///
/// A `start` that [`PlanStart::mismatch`]es the problem is an error: callers check first.
pub fn plan_from(
    problem: &Problem,
    settings: &SolveSettings,
    start: Option<&PlanStart>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(Plan, bool), PlanError> {
    plan_from_with(
        problem,
        settings,
        start,
        on_iteration,
        &mut Transcriptions::default(),
    )
}

/// [`plan_from`] with the NLP kept between calls (a sweep over heights; [`Transcriptions`]).
pub fn plan_from_with(
    problem: &Problem,
    settings: &SolveSettings,
    start: Option<&PlanStart>,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
    kept: &mut Transcriptions,
) -> Result<(Plan, bool), PlanError> {
    let Some(start) = start else {
        return Ok((
            plan_with(problem, settings, None, on_iteration, kept)?,
            false,
        ));
    };
    let mut warm = settings.clone();
    warm.options.extend(warm_start_options());
    // A reborrow, with the trait object's lifetime shortened to it.
    let first_try = on_iteration
        .as_mut()
        .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
    let plan_warm = plan_with(problem, &warm, Some(start), first_try, kept)?;
    if plan_warm.report.converged || plan_warm.report.status == IpoptStatus::UserRequestedStop {
        return Ok((plan_warm, true));
    }
    // A warm start can mislead IPOPT (e.g. into declaring a reachable height infeasible); the
    // cold solve decides.
    Ok((
        plan_with(problem, settings, None, on_iteration, kept)?,
        false,
    ))
}

/// IPOPT's options for a warm start: take the given point and multipliers, start the barrier
/// small since the neighbour's solution is nearly optimal, and give up early.
///
/// Measured on the granular sweep 30..80 mm (iterations per point after the first): bound push
/// 1e-6 / μ₀ 1e-4: 45, 8, 13, 36; 1e-4 / 1e-3: 13, 10, 8, 38; 1e-3 / 1e-2: 11, 8, 20, 46;
/// 1e-2 / 1e-1: 16, 10, 11, 43. Every setting failed 80 mm from the 70 mm plan (a different
/// local solution; the cold solve converges) after 220-290 iterations, hence the cap: warm
/// solves that converge take under 50.
pub fn warm_start_options() -> Vec<(String, OptionValue)> {
    use OptionValue::{Int, Num, Str};
    vec![
        ("warm_start_init_point".into(), Str("yes".into())),
        ("warm_start_bound_push".into(), Num(1e-4)),
        ("warm_start_mult_bound_push".into(), Num(1e-4)),
        ("mu_init".into(), Num(1e-3)),
        ("max_iter".into(), Int(WARM_MAX_ITERATIONS)),
    ]
}

/// Iterations a warm start gets before the cold solve takes over.
pub const WARM_MAX_ITERATIONS: i64 = 100;
