//! Reading a result folder back: `solution.json` (with the resolved problem) and
//! `trajectory.csv` (the plan's nodes), as `loam solve` wrote them, checked to be one plan
//! (`output::identity`).

use std::fs;
use std::path::{Path, PathBuf};

use super::identity::{self, IdentityError};
use crate::model::hopper::state;
use crate::problem::{self, ProblemError};
// A saved plan is what the replay reads: the simulator declares it.
pub use crate::sim::replay::{Node, SavedPlan};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}: no such folder (give the folder `loam solve` wrote, e.g. results/hopper_granular)", .0.display())]
    Missing(PathBuf),
    #[error("{}: not a loam result: {reason}", path.display())]
    NotALoamResult { path: PathBuf, reason: String },
    #[error("{}: line {line}: {message}", path.display())]
    Csv {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: the saved problem does not load: {source}", path.display())]
    Problem {
        path: PathBuf,
        #[source]
        source: Box<ProblemError>,
    },
    #[error(transparent)]
    Identity(#[from] IdentityError),
    #[error("{}: {reason}", path.display())]
    NoWarmStart { path: PathBuf, reason: String },
}

const COLUMNS: [&str; 12] = [
    "t", "phase", "node", "z_m", "v_m", "z_r", "v_r", "z_f", "v_f", "e", "z_d", "u",
];

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

/// Reads the plan in `dir`.
pub fn read_plan(dir: &Path) -> Result<SavedPlan, RunError> {
    let PlanFiles {
        solution_path,
        json,
        trajectory_path,
        trajectory,
        plan_id,
    } = read_plan_files(dir)?;
    let not_loam = |path: &Path, reason: String| RunError::NotALoamResult {
        path: path.to_path_buf(),
        reason,
    };
    let field = |key: &str| {
        json.get(key)
            .ok_or_else(|| not_loam(&solution_path, format!("the key `{key}` is missing")))
    };
    // JSON is YAML: the saved problem goes through the same loader and validation as a file.
    let problem_text = serde_json::to_string(field("problem")?).expect("JSON re-serializes");
    let problem =
        problem::parse(&problem_text, &solution_path, &[]).map_err(|e| RunError::Problem {
            path: solution_path.clone(),
            source: Box::new(e),
        })?;
    let status = field("status")?.as_str().unwrap_or("unknown").to_string();
    let converged = field("converged")?.as_bool().unwrap_or(false);
    let apex_rise = field("apex_rise_m")?.as_f64().unwrap_or(f64::NAN);
    let iterations = field("iterations")?.as_u64().unwrap_or(0);
    let solve_seconds = field("timing_s")?["total"].as_f64().unwrap_or(f64::NAN);
    let nodes = read_nodes(&trajectory_path, &String::from_utf8_lossy(&trajectory))?;
    Ok(SavedPlan {
        dir: dir.to_path_buf(),
        plan_id,
        problem,
        status,
        converged,
        apex_rise,
        iterations,
        solve_seconds,
        nodes,
    })
}

fn read_nodes(path: &Path, text: &str) -> Result<Vec<Node>, RunError> {
    let csv_error = |line: usize, message: String| RunError::Csv {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    if header.len() < COLUMNS.len() || header[..COLUMNS.len()] != COLUMNS {
        return Err(csv_error(
            1,
            format!("the header must start with {}", COLUMNS.join(",")),
        ));
    }
    let mut nodes = Vec::new();
    for (i, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != header.len() {
            return Err(csv_error(
                i + 2,
                format!("{} fields, the header has {}", fields.len(), header.len()),
            ));
        }
        let number = |j: usize| {
            fields[j].trim().parse::<f64>().map_err(|_| {
                csv_error(
                    i + 2,
                    format!("{} = `{}` is not a number", COLUMNS[j], fields[j]),
                )
            })
        };
        let mut x = [0.0; state::COUNT];
        for (k, v) in x.iter_mut().enumerate() {
            *v = number(3 + k)?;
        }
        nodes.push(Node {
            t: number(0)?,
            phase: fields[1].to_string(),
            x,
            u: number(11)?,
        });
    }
    if nodes.len() < 2 {
        return Err(csv_error(nodes.len() + 1, "fewer than two nodes".into()));
    }
    Ok(nodes)
}
