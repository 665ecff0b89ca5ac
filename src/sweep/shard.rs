//! `--shard I/N`: one deterministic slice of a sweep's combinations.
//!
//! A sweep is a list of units, dealt round robin: shard I takes units I, I + N, I + 2N, …
//! - a cold sweep's unit is one combination, so easy and hard plans spread evenly;
//! - a warm-started sweep's unit is a chain (the values of the first --vary at one value of
//!   the others), which a shard never splits, so that the merged rows are those of the
//!   unsharded sweep.
//!
//! Each shard writes `shard-I-of-N.json` (which sweep) and `shard-I-of-N.csv` (its rows of
//! `sweep.csv` after a `combination` column); `loam sweep merge` joins them (and, for a sweep
//! over grounds, replays every plan on every ground into `replays.csv`).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::{parse_axis, Axis, VaryError};

/// `--shard I/N`, 1 ≤ I ≤ N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let usage = "write I/N with 1 ≤ I ≤ N, e.g. 2/8 for the second of eight shards";
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not I/N; {usage}"))?;
        let number = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{s}` in `{text}` is not a whole number; {usage}"))
        };
        let (index, count) = (number(i)?, number(n)?);
        if count == 0 {
            return Err(format!("`{text}`: N is 0; {usage}"));
        }
        if index == 0 || index > count {
            return Err(format!(
                "`{text}`: shards are numbered 1 to {count}; {usage}"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The 0-based combinations of a sweep of `total` that this shard solves, in order: the
    /// units (runs of `unit` consecutive combinations) I, I + N, …
    pub fn select(&self, total: usize, unit: usize) -> Vec<usize> {
        let unit = unit.max(1);
        (0..total)
            .filter(|k| (k / unit) % self.count == self.index - 1)
            .collect()
    }

    pub fn stem(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }

    pub fn json_path(&self, out: &Path) -> PathBuf {
        out.join(format!("{}.json", self.stem()))
    }

    pub fn csv_path(&self, out: &Path) -> PathBuf {
        out.join(format!("{}.csv", self.stem()))
    }
}

/// The `vary` entries of a manifest: every value, whatever the range was written as:
/// `PATH=v1,v2,…`, or, where a value holds a comma or is a section (`{model: rigid}`), the
/// YAML list `PATH=[v1, v2]` that `--vary` reads. [`axes_of`] reads them back.
pub fn vary_specs(axes: &[Axis]) -> Vec<String> {
    axes.iter()
        .map(|a| {
            let yaml = a
                .values
                .iter()
                .any(|v| v.contains(',') || v.starts_with(['{', '[']));
            if yaml {
                format!("{}=[{}]", a.path, a.values.join(", "))
            } else {
                format!("{}={}", a.path, a.values.join(","))
            }
        })
        .collect()
}

/// The axes a manifest's `vary` names, with their values as the sweep spelled them.
pub fn axes_of(specs: &[String]) -> Result<Vec<Axis>, VaryError> {
    specs.iter().map(|spec| parse_axis(spec)).collect()
}

/// The shard's CSV: the `combination` column (1-based), then its rows of `sweep.csv`.
pub fn shard_csv(header: &str, rows: &[(usize, Vec<String>)]) -> String {
    let mut s = format!("combination,{header}\n");
    for (k, lines) in rows {
        for line in lines {
            s.push_str(&format!("{},{line}\n", k + 1));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_combination_once() {
        for (total, unit) in [(1, 1), (5, 1), (7, 1), (12, 1), (12, 3), (12, 12), (6, 2)] {
            for count in 1..=4 {
                let mut all: Vec<usize> = (1..=count)
                    .flat_map(|index| Shard { index, count }.select(total, unit))
                    .collect();
                all.sort();
                assert_eq!(
                    all,
                    (0..total).collect::<Vec<_>>(),
                    "{total}/{unit} in {count}"
                );
            }
        }
        // Cold: round robin over combinations; warm: over chains, never split.
        assert_eq!(Shard { index: 2, count: 3 }.select(7, 1), [1, 4]);
        assert_eq!(
            Shard { index: 2, count: 2 }.select(12, 3),
            [3, 4, 5, 9, 10, 11]
        );
        assert!(Shard { index: 2, count: 2 }.select(5, 5).is_empty());
    }

    #[test]
    fn malformed_shards_are_refused() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        for text in ["0/3", "4/3", "x", "1/0", "1/", "/3", "-1/3", "1.5/3"] {
            assert!(text.parse::<Shard>().is_err(), "{text}");
        }
    }

    #[test]
    fn a_manifests_axes_read_back_as_the_sweep_spelled_them() {
        let axes = vec![
            parse_axis("task.apex_rise=0.10:0.03:0.01").unwrap(),
            parse_axis(
                "terrain=[{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}, {model: rigid}]",
            )
            .unwrap(),
            parse_axis("terrain.friction=0.5,1").unwrap(),
        ];
        let specs = vary_specs(&axes);
        assert_eq!(
            specs[0],
            "task.apex_rise=0.10,0.09,0.08,0.07,0.06,0.05,0.04,0.03"
        );
        assert_eq!(axes_of(&specs).unwrap(), axes);
    }
}
