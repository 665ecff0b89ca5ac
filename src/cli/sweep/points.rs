//! The points of a sweep: each combination's problem loaded and validated, its folder, its
//! label for progress, and the identity its marker carries (`point.rs`).

use std::path::{Path, PathBuf};

use loam::problem::planar::PlanarProblem;
use loam::sweep::{point_label, point_name};

use super::point;
use crate::cli::ProblemArgs;

/// One combination of the sweep.
pub(super) struct Point {
    /// 0-based index of the combination in the whole sweep.
    pub(super) index: usize,
    /// (path, value) of every --vary at this point, in --vary order.
    pub(super) varied: Vec<(String, String)>,
    /// The file's --set and this point's values, as `loam solve --set` takes them.
    pub(super) overrides: Vec<String>,
    pub(super) dir: PathBuf,
    /// `apex_rise=0.05 terrain={model: rigid}`, for progress.
    pub(super) label: String,
    /// Names the plan and its start (see `point.rs`).
    pub(super) identity: String,
    /// A warm chain's point: solved from the plan of the point at this position of the list
    /// (when that plan converged).
    pub(super) after: Option<usize>,
}

impl Point {
    /// Combination `index` (0-based) with its values, in its folder under `out`.
    pub(super) fn at(index: usize, varied: Vec<(String, String)>, out: &Path) -> Point {
        Point {
            index,
            dir: out.join(point_name(&varied)),
            label: point_label(&varied),
            varied,
            overrides: Vec::new(),
            identity: String::new(),
            after: None,
        }
    }
}

/// Loads and validates one point's problem (IPOPT's options included); a file in the hopper
/// planner's schema is refused (exit 2).
pub(super) fn load(file: &Path, overrides: &[String]) -> anyhow::Result<PlanarProblem> {
    let args = ProblemArgs {
        file: file.to_path_buf(),
        overrides: overrides.to_vec(),
    };
    args.load_any()
}

/// The points of the `selected` combinations (0-based, in order), `problems` being every
/// combination's problem and overrides; a warm sweep's chains are `chain` combinations long.
pub(super) fn points_of(
    selected: &[usize],
    chain: usize,
    combos: &[Vec<(String, String)>],
    problems: &[(PlanarProblem, Vec<String>)],
    out: &Path,
) -> anyhow::Result<Vec<Point>> {
    let mut points = Vec::new();
    for (position, &k) in selected.iter().enumerate() {
        let (problem, overrides) = &problems[k];
        let mut point = Point::at(k, combos[k].clone(), out);
        // Within a chain, from the previous point (a shard holds whole chains, in order).
        point.after = (k % chain != 0).then(|| position - 1);
        let start = match point.after {
            None => "cold".to_string(),
            Some(previous) => format!("warm from combination {}", selected[previous] + 1),
        };
        point.identity =
            point::fingerprint(&format!("{}\n{start}", serde_json::to_string(problem)?));
        point.overrides = overrides.clone();
        points.push(point);
    }
    Ok(points)
}
