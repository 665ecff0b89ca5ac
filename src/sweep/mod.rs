//! Sweeps: one robot file's problem solved over a grid of values of its fields (`loam sweep
//! FILE --vary PATH=RANGE`), every plan replayed on its own ground (and, for a sweep over
//! grounds, on each other ground of the sweep), one row per plan in `sweep.csv`.
//!
//! The library holds the sweep's logic; `loam sweep` (`cli/sweep.rs`) runs it: solving points
//! in processes of their own, warm chains, resuming, progress, the console table.
//! - the grid ([`Axis`], [`parse_axis`], [`combinations`]: the first axis changes fastest) and
//!   where each point's plan lives ([`point_name`]);
//! - the rows of `replays.csv`, every plan on every ground, one column per varied field
//!   ([`table`]);
//! - slicing a sweep into shards that never split a warm chain ([`shard`]).

pub mod shard;
pub mod table;

/// A `--vary` that cannot be read: the spec and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error(
    "--vary {spec}: {why}; write PATH=START:STOP:STEP (e.g. task.apex_height=0.03:0.10:0.01) or PATH=A,B,C"
)]
pub struct VaryError {
    pub spec: String,
    pub why: String,
}

/// A YAML value written on one line, as `--set` reads it (`{model: rigid}`).
fn flow_yaml(value: &serde_yaml::Value) -> String {
    use serde_yaml::Value;
    match value {
        Value::Mapping(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", flow_yaml(k), flow_yaml(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Sequence(items) => {
            let items: Vec<String> = items.iter().map(flow_yaml).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Tagged(tagged) => flow_yaml(&tagged.value),
        scalar => serde_yaml::to_string(scalar)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default(),
    }
}

/// One varied field.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

/// Parses `PATH=start:stop:step` or `PATH=a,b,c` (or a single `PATH=value`), or a YAML flow
/// list `PATH=[v1, v2]` whose items may be sections (`terrain=[{model: rigid}, {model:
/// added_mass, medium: poppy_seeds}]`: a whole section replaced per point, as `--set` does).
/// A range whose stop is below its start counts down (`0.10:0.03:0.01`); the step is always
/// positive.
pub fn parse_axis(spec: &str) -> Result<Axis, VaryError> {
    let bad = |why: &str| VaryError {
        spec: spec.to_string(),
        why: why.to_string(),
    };
    let (path, range) = spec.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(bad("no field path before `=`"));
    }
    let values: Vec<String> = if range.trim_start().starts_with('[') {
        let items: Vec<serde_yaml::Value> = serde_yaml::from_str(range)
            .map_err(|e| bad(&format!("not a YAML list of values: {e}")))?;
        items.iter().map(flow_yaml).collect()
    } else if range.contains(':') {
        let parts: Vec<&str> = range.split(':').collect();
        if parts.len() != 3 {
            return Err(bad("a range has three parts"));
        }
        let number = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("`{s}` is not a number")))
        };
        let (start, stop, step) = (number(parts[0])?, number(parts[1])?, number(parts[2])?);
        if step <= 0.0 {
            return Err(bad(
                "the step must be positive (a range counts down when its stop is below its start)",
            ));
        }
        // A stop below the start counts down: a warm chain solves the values in this order.
        let sign = if stop < start { -1.0 } else { 1.0 };
        let count = ((stop - start).abs() / step + 1e-9).floor() as usize + 1;
        if count > 10_000 {
            return Err(bad(&format!("{count} values are too many")));
        }
        // Printed with the step's decimals so that 0.03 + 2·0.01 is written 0.05.
        let decimals = decimals_of(parts[2]).max(decimals_of(parts[0]));
        (0..count)
            .map(|k| format!("{:.*}", decimals, start + sign * k as f64 * step))
            .collect()
    } else {
        range.split(',').map(|v| v.trim().to_string()).collect()
    };
    if values.iter().any(String::is_empty) {
        return Err(bad("an empty value"));
    }
    Ok(Axis {
        path: path.to_string(),
        values,
    })
}

fn decimals_of(number: &str) -> usize {
    let number = number.trim();
    match number.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => {
            let e: i64 = exponent.parse().unwrap_or(0);
            (decimals_of(mantissa) as i64 - e).max(0) as usize
        }
        None => number.split_once('.').map_or(0, |(_, f)| f.len()),
    }
}

/// Every combination of the axes' values, the first axis changing fastest.
pub fn combinations(axes: &[Axis]) -> Vec<Vec<(String, String)>> {
    // Built from the last axis inwards, so that the first axis is the innermost loop.
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for axis in axes.iter().rev() {
        combos = combos
            .into_iter()
            .flat_map(|outer| {
                axis.values.iter().map(move |v| {
                    let mut c = outer.clone();
                    c.push((axis.path.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    for c in &mut combos {
        c.reverse();
    }
    combos
}

/// The folder of a point's plan, under the sweep's: each varied field's last path segment with
/// its value, a section's value by its words (`apex_rise=0.05-terrain=model_rigid`).
pub fn point_name(varied: &[(String, String)]) -> String {
    let parts: Vec<String> = varied
        .iter()
        .map(|(p, v)| {
            let words: Vec<&str> = v
                .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '-'))
                .filter(|w| !w.is_empty())
                .collect();
            format!("{}={}", last_segment(p), words.join("_"))
        })
        .collect();
    parts.join("-")
}

/// A point's short label for progress: `apex_rise=0.05 terrain={model: rigid}`.
pub fn point_label(varied: &[(String, String)]) -> String {
    let parts: Vec<String> = varied
        .iter()
        .map(|(p, v)| format!("{}={v}", last_segment(p)))
        .collect();
    parts.join(" ")
}

fn last_segment(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yaml_list_varies_whole_sections() {
        let a = parse_axis(
            "terrain=[{model: rigid}, {model: added_mass, medium: poppy_seeds, foot_radius: 0.038}]",
        )
        .unwrap();
        assert_eq!(a.path, "terrain");
        assert_eq!(
            a.values,
            [
                "{model: rigid}",
                "{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}"
            ]
        );
        assert!(parse_axis("terrain=[{model: rigid}").is_err());
    }

    #[test]
    fn ranges_include_their_stop_and_print_cleanly() {
        let a = parse_axis("task.apex_height=0.03:0.10:0.01").unwrap();
        assert_eq!(a.path, "task.apex_height");
        assert_eq!(a.values.len(), 8);
        assert_eq!(a.values[2], "0.05");
        assert_eq!(a.values[7], "0.10");
        let down = parse_axis("task.apex_height=0.10:0.03:0.01").unwrap();
        assert_eq!(down.values.len(), 8);
        assert_eq!(down.values[0], "0.10");
        assert_eq!(down.values[7], "0.03");
        assert_eq!(down.values[5], "0.05");
        assert!(parse_axis("task.apex_height=0.10:0.03:-0.01").is_err());
    }

    #[test]
    fn malformed_ranges_are_refused() {
        for spec in [
            "task.apex_height",
            "=1,2",
            "task.apex_height=0.03:0.10",
            "task.apex_height=0.03:x:0.01",
            "task.apex_height=0.03:0.10:0",
            "task.apex_height=0.03,,0.04",
        ] {
            assert!(parse_axis(spec).is_err(), "{spec}");
        }
    }

    #[test]
    fn a_points_folder_names_its_values_and_a_sections_words() {
        let varied = [
            ("task.apex_rise".to_string(), "0.03".to_string()),
            (
                "terrain".to_string(),
                "{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}".to_string(),
            ),
        ];
        assert_eq!(
            point_name(&varied),
            "apex_rise=0.03-terrain=model_added_mass_medium_poppy_seeds_foot_radius_0.038"
        );
        assert_eq!(
            point_label(&varied[..1]),
            "apex_rise=0.03",
            "the last path segment"
        );
    }

    #[test]
    fn the_first_axis_changes_fastest() {
        let axes = [parse_axis("a=1,2,3").unwrap(), parse_axis("b=x,y").unwrap()];
        let combos = combinations(&axes);
        let firsts: Vec<&str> = combos.iter().map(|c| c[0].1.as_str()).collect();
        assert_eq!(firsts, ["1", "2", "3", "1", "2", "3"]);
        assert_eq!(combos[3][1].1, "y");
    }
}
