//! `sweep.csv`: one row per point, a column for every varied field (its value as given), the
//! point's folder (`run`), the solve's status and key figures and its replay's distance and
//! peak rise against the plan's (README, "Sweeps").

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::Value;

use super::points::Point;
use super::Axis;

/// The figures of `sweep.csv` after the varied fields, in order.
const FIGURES: [&str; 17] = [
    "converged",
    "status",
    "iterations",
    "objective",
    "distance_m",
    "com_rise_m",
    "duration_s",
    "replay_distance_m",
    "replay_distance_error_rel",
    "planned_com_peak_m",
    "replay_com_peak_m",
    "replay_com_peak_error_rel",
    "cost_of_transport",
    "mesh_tolerance_met",
    "planned_apex_rise_m",
    "replay_apex_rise_m",
    "replay_apex_rise_error_rel",
];

/// The header line of `sweep.csv` (no newline).
pub(super) fn header(axes: &[Axis]) -> String {
    let mut columns: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    columns.push("run".into());
    columns.extend(FIGURES.iter().map(|f| f.to_string()));
    columns.join(",")
}

/// Whether a line of `sweep.csv` of a sweep over `axes` varied fields is a converged plan's.
pub(super) fn converged(line: &str, axes: usize) -> bool {
    let fields = loam::plot::table::fields_of(line);
    fields.get(axes + 1).is_some_and(|c| c == "true")
}

/// The point's folder as the line's `run` column names it.
pub(super) fn run_of(line: &str, axes: usize) -> Option<String> {
    loam::plot::table::fields_of(line).get(axes).cloned()
}

/// Writes `out/sweep.csv`: `header`, then `lines`.
pub(super) fn write_table<'a>(
    out: &Path,
    header: &str,
    lines: impl Iterator<Item = &'a String>,
) -> anyhow::Result<PathBuf> {
    let mut csv = header.to_string() + "\n";
    for line in lines {
        csv.push_str(line);
        csv.push('\n');
    }
    let path = out.join("sweep.csv");
    loam::output::write_atomic(&path, csv.as_bytes())?;
    Ok(path)
}

/// A point's line of `sweep.csv` (empty replay columns when it was not replayed).
pub(super) fn row_of(point: &Point) -> anyhow::Result<String> {
    let read = |name: &str| -> anyhow::Result<Option<Value>> {
        let path = point.dir.join(name);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        Ok(Some(serde_json::from_str(&text).with_context(|| {
            format!("{} is not JSON", path.display())
        })?))
    };
    let solution = read("solution.json")?
        .with_context(|| format!("{}: no solution.json", point.dir.display()))?;
    let replay = read("replay.json")?.unwrap_or(Value::Null);
    let text = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut row: Vec<String> = point.varied.iter().map(|(_, v)| v.clone()).collect();
    row.push(
        point
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let key = &solution["key_figures"];
    // A gait's replay runs several strides: its distance is the worst stride's and its peak
    // the apex height above the ground (the plan's, and the worst stride's), as the plan's
    // distance is one period's and its peak rise, apex to apex, 0.
    let [replay_distance, distance_error, planned_peak, replay_peak, peak_error] =
        match replay["strides"].as_array() {
            Some(strides) if !strides.is_empty() => {
                let worst = |key: &str| {
                    strides
                        .iter()
                        .max_by(|a, b| {
                            let e = |s: &Value| s[key].as_f64().unwrap_or(f64::NAN);
                            e(a).total_cmp(&e(b))
                        })
                        .expect("a stride")
                };
                let (length, apex) = (worst("length_error_rel"), worst("apex_error_rel"));
                [
                    length["length_m"].clone(),
                    length["length_error_rel"].clone(),
                    apex["planned_apex_m"].clone(),
                    apex["apex_m"].clone(),
                    apex["apex_error_rel"].clone(),
                ]
            }
            _ => [
                // The MDP record of a wrench-space plan's solve names it `distance_m`.
                match &replay["achieved_distance_m"] {
                    Value::Null => replay["distance_m"].clone(),
                    achieved => achieved.clone(),
                },
                replay["distance_error_rel"].clone(),
                replay["planned_com_peak_m"].clone(),
                replay["achieved_com_peak_m"].clone(),
                replay["com_peak_error_rel"].clone(),
            ],
        };
    row.extend(
        [
            &solution["converged"],
            &solution["status"],
            &solution["iterations"],
            &solution["objective"],
            &key["distance_m"],
            &key["com_rise_m"],
            &key["duration_s"],
            &replay_distance,
            &distance_error,
            &planned_peak,
            &replay_peak,
            &peak_error,
            &key["cost_of_transport"],
            &solution["mesh_tolerance_met"],
            &replay["planned_apex_rise_m"],
            &replay["achieved_apex_rise_m"],
            &replay["apex_rise_error_rel"],
        ]
        .into_iter()
        .map(text),
    );
    let row: Vec<String> = row.iter().map(|f| loam::output::csv_field(f)).collect();
    Ok(row.join(","))
}
