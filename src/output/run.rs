//! Reading a result folder's plan files back: `solution.json` (with the resolved problem) and
//! `trajectory.csv` (the plan's nodes), as `loam solve` wrote them, checked to be one plan
//! (`output::identity`); `api::read_planar_run` reads them as a robot's plan.

use std::fs;
use std::path::{Path, PathBuf};

use super::identity::{self, IdentityError};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}: no such folder (give the folder `loam solve` wrote, e.g. results/hopper_granular)", .0.display())]
    Missing(PathBuf),
    #[error("{}: not a loam result: {reason}", path.display())]
    NotALoamResult { path: PathBuf, reason: String },
    #[error(transparent)]
    Identity(#[from] IdentityError),
}

/// A run folder's `solution.json` (parsed, and written by loam) and `trajectory.csv`,
/// checked to be one plan: what every reader of a plan folder starts from.
pub struct PlanFiles {
    pub solution_path: PathBuf,
    pub json: serde_json::Value,
    pub trajectory_path: PathBuf,
    pub trajectory: Vec<u8>,
    pub plan_id: String,
}

/// Reads and checks the two files of the plan in `dir` ([`PlanFiles`]).
pub fn read_plan_files(dir: &Path) -> Result<PlanFiles, RunError> {
    if !dir.is_dir() {
        return Err(RunError::Missing(dir.to_path_buf()));
    }
    let solution_path = dir.join("solution.json");
    let not_loam = |path: &Path, reason: String| RunError::NotALoamResult {
        path: path.to_path_buf(),
        reason,
    };
    let text = fs::read_to_string(&solution_path).map_err(|e| {
        not_loam(
            dir,
            format!("cannot read solution.json ({e}); `loam solve` writes it"),
        )
    })?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| not_loam(&solution_path, format!("not JSON: {e}")))?;
    if json.get("loam_version").is_none() {
        return Err(not_loam(
            &solution_path,
            "no `loam_version` key; this file was not written by `loam solve`".into(),
        ));
    }
    let trajectory_path = dir.join("trajectory.csv");
    let trajectory = fs::read(&trajectory_path).map_err(|e| {
        not_loam(
            &trajectory_path,
            format!("cannot read the plan's nodes ({e})"),
        )
    })?;
    let plan_id =
        identity::verify_plan_files(&solution_path, &json, &trajectory_path, &trajectory)?;
    Ok(PlanFiles {
        solution_path,
        json,
        trajectory_path,
        trajectory,
        plan_id,
    })
}
