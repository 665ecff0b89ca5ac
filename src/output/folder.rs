//! A run folder holds one plan and the files made from it. A new plan written into a folder
//! that holds another first moves the other's files into `archive/<its plan_id>/`, where they
//! stay a complete run folder of their own (`loam plot DIR/archive/<id>` still draws them).
//!
//! Archived rather than removed: a re-solve with a changed field is often a mistake or an
//! experiment, and the replays and DEM replays it would delete can take minutes to make again.
//! Only the names loam writes are moved; anything else a user keeps in the folder stays.

use std::fs;
use std::path::{Path, PathBuf};

use super::identity::recorded_plan_id;
use super::OutputError;

/// The plan's own files, moved last so that an interrupted archive leaves a plan with fewer
/// replays rather than replays without their plan.
const PLAN_FILES: [&str; 3] = ["ipopt.log", "trajectory.csv", "solution.json"];

/// Whether `name` is a file or folder loam writes into a run folder from its plan.
fn is_made_from_plan(name: &str) -> bool {
    let replay = name == "replay.csv"
        || name == "replay.json"
        || (name.starts_with("replay-on-") && (name.ends_with(".csv") || name.ends_with(".json")));
    replay || matches!(name, "plots" | "dem-cpu" | "dem-cuda")
}

/// Where [`archive_other_plan`] moved the files of the plan `dir` held.
#[derive(Clone, Debug, PartialEq)]
pub struct Archived {
    /// `dir/archive/<plan_id>` (with `-2`, `-3`, ... if that exists already).
    pub to: PathBuf,
    /// The names moved, derived files first.
    pub moved: Vec<String>,
}

/// Makes room in `dir` for plan `new_plan`: when `dir` holds files of another plan (or of one
/// that records no `plan_id`), moves them into `dir/archive/<old plan_id>/`. Leaves a folder
/// that already holds `new_plan` alone: its replays still belong to it.
pub fn archive_other_plan(dir: &Path, new_plan: &str) -> Result<Option<Archived>, OutputError> {
    let old_plan = recorded_plan_id(dir);
    if old_plan.as_deref() == Some(new_plan) {
        return Ok(None);
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(None); // no folder yet: nothing to archive
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| is_made_from_plan(name))
        .collect();
    names.sort();
    names.extend(
        PLAN_FILES
            .iter()
            .filter(|name| dir.join(name).exists())
            .map(|name| name.to_string()),
    );
    if names.is_empty() {
        return Ok(None);
    }
    let label = old_plan.unwrap_or_else(|| {
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        format!("unidentified-{}", now.replace([':', '-'], ""))
    });
    let archive = dir.join("archive");
    let mut to = archive.join(&label);
    for n in 2.. {
        if !to.exists() {
            break;
        }
        to = archive.join(format!("{label}-{n}"));
    }
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| OutputError { path, source }
    };
    fs::create_dir_all(&to).map_err(err(&to))?;
    for name in &names {
        fs::rename(dir.join(name), to.join(name)).map_err(err(&dir.join(name)))?;
    }
    Ok(Some(Archived { to, moved: names }))
}
