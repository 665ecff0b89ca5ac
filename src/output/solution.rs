//! `solution.json` and `trajectory.csv`: what `loam solve` writes (documented in README.md).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::folder::{archive_other_plan, Archived};
use super::{temporary_path, write_new, OutputError, Provenance};
use crate::solver::kkt::KktCounts;
use crate::solver::{OptionValue, SolveReport};
use crate::transcription::Violation;

#[derive(Serialize)]
pub struct Timing {
    pub setup: f64,
    pub solve: f64,
    pub total: f64,
}

#[derive(Serialize)]
pub struct PhaseSummary {
    pub domain: String,
    pub nodes: usize,
    pub duration_s: f64,
}

/// What every `solution.json` records of the solve itself.
#[derive(Serialize)]
pub struct SolveRecord {
    pub loam_version: &'static str,
    /// The plan's identity (`output::identity`): every file made from it records the same.
    pub plan_id: String,
    /// What reproduces the run: versions, command line, warm start, time.
    pub provenance: Provenance,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub max_violation: f64,
    pub timing_s: Timing,
    pub n_variables: usize,
    pub n_constraints: usize,
    /// The IPOPT options in effect: loam's defaults with the file's on top.
    pub solver_options: BTreeMap<String, OptionValue>,
    /// Inequality constraints on a bound: name and number of rows.
    pub binding_constraints: Vec<(String, usize)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worst_violations: Vec<Violation>,
    /// With `linear_solver: loam`: its factorisations (and how many had the wrong inertia)
    /// and its solves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kkt_systems: Option<KktCounts>,
}

impl SolveRecord {
    pub fn new(
        report: &SolveReport,
        setup_seconds: f64,
        n_variables: usize,
        n_constraints: usize,
        plan_id: String,
        provenance: Provenance,
    ) -> SolveRecord {
        SolveRecord {
            loam_version: env!("CARGO_PKG_VERSION"),
            plan_id,
            provenance,
            status: report.status.name().to_string(),
            converged: report.converged,
            iterations: report.iterations,
            objective: report.objective,
            max_violation: report.max_violation,
            timing_s: Timing {
                setup: setup_seconds,
                solve: report.solve_seconds,
                total: setup_seconds + report.solve_seconds,
            },
            n_variables,
            n_constraints,
            solver_options: report.options.clone(),
            binding_constraints: report.binding.clone(),
            worst_violations: report.violations.iter().take(10).cloned().collect(),
            kkt_systems: report.kkt,
        }
    }
}

/// What writing a run did.
#[derive(Clone, Debug)]
pub struct PlanWritten {
    pub plan_id: String,
    /// Where the files of the plan the folder held before went, if it held another.
    pub archived: Option<Archived>,
}

/// Puts a plan into `dir`: writes `solution.json` and `trajectory.csv` to temporaries, moves
/// the files of any other plan the folder holds into `archive/` ([`archive_other_plan`]), then
/// renames the new files into place (the log, the trajectory, `solution.json` last). On an
/// error no temporary is left, `ipopt_log` included, and the folder's previous plan is
/// untouched unless it was already archived.
pub(crate) fn commit_plan(
    dir: &Path,
    plan_id: &str,
    solution: &str,
    trajectory: &str,
    ipopt_log: Option<&Path>,
) -> Result<PlanWritten, OutputError> {
    let solution_path = dir.join("solution.json");
    let trajectory_path = dir.join("trajectory.csv");
    let mut temporaries: Vec<(PathBuf, PathBuf)> = ipopt_log
        .map(|log| (log.to_path_buf(), dir.join("ipopt.log")))
        .into_iter()
        .collect();
    let result = (|| {
        for (path, text) in [(&trajectory_path, trajectory), (&solution_path, solution)] {
            let tmp = temporary_path(path);
            write_new(&tmp, text.as_bytes(), path)?;
            temporaries.push((tmp, path.clone()));
        }
        let archived = archive_other_plan(dir, plan_id)?;
        for (tmp, path) in &temporaries {
            fs::rename(tmp, path).map_err(|source| OutputError {
                path: path.clone(),
                source,
            })?;
        }
        Ok(archived)
    })();
    match result {
        Ok(archived) => Ok(PlanWritten {
            plan_id: plan_id.to_string(),
            archived,
        }),
        Err(e) => {
            for (tmp, _) in &temporaries {
                fs::remove_file(tmp).ok();
            }
            Err(e)
        }
    }
}
