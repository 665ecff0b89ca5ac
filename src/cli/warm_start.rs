//! Another run's plan as a start: `loam solve --warm-start RUN_DIR` and a warm sweep's next
//! plan read it the same way (`planner::warm_start` maps it onto the problem).

use std::path::Path;

use loam::output::{self, WarmStart};
use loam::planner::warm_start::PlanStart;
use loam::problem::Problem;

use super::BadInput;

/// The plan in `dir` as a start, with the provenance a plan solved from it records.
pub fn read(dir: &Path) -> anyhow::Result<(PlanStart, WarmStart)> {
    let (saved, start) =
        output::run::read_warm_start(dir).map_err(|e| BadInput(format!("--warm-start: {e}")))?;
    let source = WarmStart::Plan {
        plan_id: saved.plan_id,
        dir: dir.display().to_string(),
    };
    Ok((start, source))
}

/// Refuses (exit 2) a start that cannot start `problem`, saying what differs.
pub fn check(start: &PlanStart, problem: &Problem, dir: &Path) -> anyhow::Result<()> {
    match start.mismatch(problem)? {
        None => Ok(()),
        Some(why) => Err(BadInput(format!(
            "--warm-start {}: the plan there cannot start this problem: {why}",
            dir.display()
        ))
        .into()),
    }
}

/// What a plan records as its start: `source` when it was solved from it, else the problem's
/// own guess (no start, or a warm start that did not converge and was solved again cold).
pub fn provenance(problem: &Problem, source: Option<WarmStart>, warm: bool) -> WarmStart {
    match source {
        Some(source) if warm => source,
        _ => WarmStart::from(problem.initial_guess),
    }
}
