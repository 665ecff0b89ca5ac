//! Whole tasks as library calls: load a problem, solve it, write its run folder, replay a run.
//!
//! loam has two front ends, the command line (`src/cli/`) and the Python package
//! (`python/`, docs/PYTHON.md). The computation behind them lives here, once, so that a plan
//! solved from Python is the plan `loam solve` writes (the same IPOPT options, the same
//! objective to the last bit, the same files) and a replay from Python is `loam simulate`'s.
//! A front end parses its arguments, shows progress and prints; nothing here prints.
//!
//! Errors are one [`ApiError`], sorted the way the command line's exit codes sort them
//! ([`ApiError::exit_code`]): bad input (2), the environment (3), a failed computation (1).
//! A solve that does not converge is not an error: it is the plan's status.

mod simulate;
#[cfg(feature = "planner")]
mod solve;
mod wrench_data;

pub use simulate::{
    is_former_hopper_run, is_planar_run, read_planar_run, simulate, SavedPlanarPlan,
    SimulateOptions, Simulated, Simulator,
};
#[cfg(feature = "planner")]
pub use solve::{
    planar_start, replay_error, solve, wrench_space_planner, wrench_start, Refine, SolveOptions,
    Solved,
};
pub use wrench_data::wrench_space_of;

#[cfg(feature = "planner")]
use std::path::Path;

use crate::output::OutputError;
#[cfg(feature = "planner")]
use crate::planner::PlanError;
use crate::problem::ProblemError;
#[cfg(feature = "planner")]
use crate::problem::{self, planar::PlanarProblem};
#[cfg(feature = "planner")]
use crate::solver::{self, IpoptError, OptionValue};

/// Why a task could not be done.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A problem that cannot be used: its file, line, column and field (`ProblemError`'s
    /// fields), displayed as `loam` prints it.
    #[error(transparent)]
    Problem(#[from] ProblemError),
    /// Other input to fix: a run folder that is not loam's, a terrain that does not exist, a
    /// tolerance out of range, an IPOPT option IPOPT refuses. Names what and where.
    #[error("{0}")]
    BadInput(String),
    /// Results that cannot be written (a read-only folder, a full disk).
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The computation failed: the symbolic layer or IPOPT itself, a replay that could not
    /// run. (A plan that did not converge is a status, not this.)
    #[error("{0}")]
    Failed(String),
}

impl ApiError {
    /// The exit code `loam` gives the same error (README, "Exit codes"), so that both front
    /// ends classify a failure alike.
    pub fn exit_code(&self) -> u8 {
        match self {
            ApiError::Problem(_) | ApiError::BadInput(_) => 2,
            ApiError::Output(_) => 3,
            ApiError::Failed(_) => 1,
        }
    }
}

#[cfg(feature = "planner")]
impl From<PlanError> for ApiError {
    fn from(error: PlanError) -> Self {
        let bad_input = matches!(
            error,
            PlanError::Schedule(_)
                | PlanError::Unplannable(_)
                | PlanError::Start(_)
                | PlanError::WrenchSpace
        ) || source_chain(&error).any(|cause| {
            matches!(
                cause.downcast_ref::<IpoptError>(),
                Some(IpoptError::Option { .. })
            )
        });
        if bad_input {
            ApiError::BadInput(error.to_string())
        } else {
            ApiError::Failed(error.to_string())
        }
    }
}

#[cfg(feature = "planner")]
/// `error` and its sources, outermost first.
fn source_chain<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| e.source())
}

#[cfg(feature = "planner")]
/// Reads the problem file at `path`, with `--set`-style overrides (`task.apex_rise=0.08`),
/// and checks its IPOPT options, before any work starts. `path` may also be a run folder or
/// its `solution.json`: the problem it solved.
pub fn load(path: &Path, overrides: &[String]) -> Result<PlanarProblem, ApiError> {
    checked(problem::load_any(path, overrides)?, path)
}

#[cfg(feature = "planner")]
/// [`load`] for problem text that is not in a file (YAML or JSON, e.g. a Python dict written
/// as JSON); `origin` names it in errors, gives the problem its default name (its stem) and
/// is where relative paths in it (a robot file, a terrain's data) are read from.
pub fn load_text(
    text: &str,
    origin: &Path,
    overrides: &[String],
) -> Result<PlanarProblem, ApiError> {
    checked(problem::parse_problem(text, origin, overrides)?, origin)
}

#[cfg(feature = "planner")]
/// IPOPT's options for `problem`: loam's defaults, the file's `solver` section on top.
pub fn solver_options(problem: &PlanarProblem) -> Vec<(String, OptionValue)> {
    crate::planner::planar::solver_options(problem)
}

#[cfg(feature = "planner")]
/// The folder whose CasADi and IPOPT loam was linked against (build.rs), for a front end to
/// check that the libraries it loaded are those.
pub fn casadi_dir() -> &'static str {
    env!("LOAM_CASADI_DIR")
}

#[cfg(feature = "planner")]
fn checked(problem: PlanarProblem, file: &Path) -> Result<PlanarProblem, ApiError> {
    solver::check_options(&solver_options(&problem))
        .map_err(|e| ApiError::BadInput(format!("{}: solver: {e}", file.display())))?;
    Ok(problem)
}
