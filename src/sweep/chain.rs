//! The hopper planner's warm-started chain, solved in one process: each plan from its
//! neighbour's when the neighbour's is a usable start (`planner::warm_start`), every height of
//! one problem sharing one transcription (`planner::Transcriptions`).
//!
//! `loam bench sweep` times it; `loam sweep` no longer does (its warm chains run `loam solve
//! --warm-start` on robot files, `cli/sweep/solve.rs`). It goes with the hopper planner.

use crate::planner::warm_start::{self, PlanStart};
use crate::planner::{self, Plan, PlanError};
use crate::problem::Problem;
use crate::solver::SolveSettings;

/// A neighbour's plan as a start, when it is a good one: converged, and of the same schedule
/// and scheme (another terrain is fine: `planner::warm_start` moves it onto this one's rest).
pub fn usable_start<S>(
    (start, source): (PlanStart, S),
    problem: &Problem,
) -> Result<Option<(PlanStart, S)>, PlanError> {
    Ok((start.converged && start.mismatch(problem)?.is_none()).then_some((start, source)))
}

/// IPOPT's options for a sweep's plan (no log file).
pub fn settings(problem: &Problem) -> SolveSettings {
    SolveSettings {
        options: planner::solver_options(problem),
        ..SolveSettings::default()
    }
}

/// Solves `problems` in this process, in order; with `warm`, each from the previous plan when
/// it converged and has the same schedule. Calls `each` with every plan.
pub fn solve_in_order<'a, E: From<PlanError>>(
    problems: impl Iterator<Item = &'a Problem>,
    warm: bool,
    mut each: impl FnMut(usize, &Plan) -> Result<(), E>,
) -> Result<(), E> {
    let mut previous: Option<PlanStart> = None;
    // Heights of one problem share a transcription; a warm and a cold sweep alike.
    let mut kept = planner::Transcriptions::default();
    for (i, problem) in problems.enumerate() {
        let start = match previous.take().filter(|_| warm) {
            Some(start) => usable_start((start, ()), problem)?,
            None => None,
        };
        let (plan, _) = warm_start::plan_from_with(
            problem,
            &settings(problem),
            start.as_ref().map(|s| &s.0),
            None,
            &mut kept,
        )?;
        each(i, &plan)?;
        previous = Some(PlanStart::of(&plan));
    }
    Ok(())
}
