//! `--shard I/N`: one deterministic slice of a sweep's combinations, and `loam sweep merge`,
//! which joins the slices into the `sweep.csv` (and `replays.csv`) an unsharded run writes.
//!
//! A sweep is a list of units, dealt round robin: shard I takes units I, I + N, I + 2N, …
//! - a cold sweep's unit is one combination, so easy and hard plans spread evenly;
//! - a warm-started sweep's unit is a chain: the values of the first --vary (the fastest) at
//!   one value of the others, solved in order, the first cold and each other from its
//!   neighbour, exactly as in an unsharded warm sweep. Shards never split a chain, so the
//!   merged rows are those of the unsharded sweep (a warm start from another point can land
//!   in another local optimum). A one-axis warm sweep is one chain: one shard solves it and
//!   the others have nothing to do.
//!
//! Each shard writes `shard-I-of-N.json` (which sweep, written first) and, when all its plans
//! are done, `shard-I-of-N.csv` (its rows of `sweep.csv` after a `combination` column), besides
//! the plans' own folders: shards on machines sharing a file system never write the same
//! file. The merge writes `sweep.csv`, then, for a sweep over grounds, replays every plan on
//! every ground into `replays.csv` (it needs every shard's plans), then draws the figures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::{every_point, point, replays, row, table};
use crate::cli::BadInput;
pub use loam::sweep::shard::{shard_csv, vary_specs, Shard};

/// `shard-I-of-N.json`: which sweep a shard belongs to.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Hash of the resolved problem (with --set), every --vary's values and --warm-start.
    pub sweep: String,
    pub shard: usize,
    pub shards: usize,
    pub combinations: usize,
    pub problem: String,
    pub file: String,
    /// PATH=v1,v2,… per --vary.
    pub vary: Vec<String>,
    pub set: Vec<String>,
    pub warm_start: bool,
    /// The `sweep.csv` header of the merged table.
    pub header: String,
}

impl Manifest {
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(self).expect("a manifest serializes");
        loam::output::write_atomic(path, json.as_bytes())?;
        Ok(())
    }

    /// How this shard's sweep differs from `other`'s, for the refusal.
    fn differences(&self, other: &Manifest) -> String {
        let mut why = Vec::new();
        if self.problem != other.problem || self.file != other.file {
            why.push(format!(
                "problem {} ({}) against {} ({})",
                self.problem, self.file, other.problem, other.file
            ));
        }
        if self.vary != other.vary {
            why.push(format!(
                "--vary {} against {}",
                self.vary.join(" "),
                other.vary.join(" ")
            ));
        }
        if self.set != other.set {
            why.push(format!(
                "--set [{}] against [{}]",
                self.set.join(" "),
                other.set.join(" ")
            ));
        }
        if self.warm_start != other.warm_start {
            why.push(format!(
                "--warm-start {} against {}",
                self.warm_start, other.warm_start
            ));
        }
        if why.is_empty() {
            why.push("another resolved problem (the file changed)".into());
        }
        why.join("; ")
    }
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The sweep folder the shards wrote into (their --out).
    pub dir: PathBuf,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A shard's files found in the folder.
struct Found {
    shard: Shard,
    manifest: Option<Manifest>,
    csv: Option<PathBuf>,
}

/// `loam sweep merge DIR`.
pub fn merge(args: MergeArgs) -> anyhow::Result<u8> {
    let dir = &args.dir;
    let found = find(dir)?;
    let (count, reference) = check(dir, &found)?;
    let lines = rows_in_order(dir, &found, &reference)?;
    let axes = loam::sweep::shard::axes_of(&reference.vary).map_err(|e| {
        BadInput(format!(
            "{}: the shards' --vary cannot be read: {e}",
            dir.display()
        ))
    })?;
    let absent: std::collections::BTreeSet<String> = lines
        .iter()
        .filter_map(|line| row::run_of(line, axes.len()))
        .filter(|run| !dir.join(run).join(point::MARKER).is_file())
        .collect();
    if !absent.is_empty() {
        let absent: Vec<String> = absent.into_iter().collect();
        return Err(BadInput(format!(
            "{}: the plan folders {} are not there; the figures need them (copy them in when the shards ran on separate file systems)",
            dir.display(),
            absent.join(", ")
        ))
        .into());
    }
    let sweep_csv = row::write_table(dir, &reference.header, lines.iter())?;
    let replays = match replays::terrain_axis(&axes) {
        Some(axis) => {
            let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
            replays::write(&every_point(&axes, dir), &axes, axis, dir, jobs)?
        }
        None => None,
    };
    let report = loam::plot::plot_dir(dir, &loam::plot::PlotSettings::default())
        .with_context(|| format!("drawing the figures of {}", dir.display()))?;
    if !args.quiet {
        println!("{}", reference.header);
        for line in &lines {
            println!("{line}");
        }
        if let Some((_, rows)) = &replays {
            table::print(rows);
        }
        println!(
            "merged {count} shards ({} plans) into {}",
            reference.combinations,
            sweep_csv.display()
        );
        if let Some((path, _)) = &replays {
            println!("wrote {}", path.display());
        }
        for file in &report.files {
            println!("{}", file.display());
        }
        for (figure, why) in &report.skipped {
            println!("skipped {figure}: {why}");
        }
    }
    let all_converged = lines.iter().all(|l| row::converged(l, axes.len()));
    Ok(if all_converged { 0 } else { 1 })
}

/// The shards' files in `dir`, by (N, I).
fn find(dir: &Path) -> anyhow::Result<BTreeMap<(usize, usize), Found>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| BadInput(format!("{}: cannot read the folder: {e}", dir.display())))?;
    let mut found: BTreeMap<(usize, usize), Found> = BTreeMap::new();
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let Some((shard, ext)) = parse_name(&path) else {
            continue;
        };
        let entry = found.entry((shard.count, shard.index)).or_insert(Found {
            shard,
            manifest: None,
            csv: None,
        });
        if ext == "json" {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
                BadInput(format!(
                    "{}: not a loam shard manifest: {e}",
                    path.display()
                ))
            })?;
            entry.manifest = Some(manifest);
        } else {
            entry.csv = Some(path);
        }
    }
    if found.is_empty() {
        return Err(BadInput(format!(
            "{} holds no shards (shard-I-of-N.json): run `loam sweep FILE --vary ... --shard I/N --out {}` for I = 1..N first",
            dir.display(),
            dir.display()
        ))
        .into());
    }
    Ok(found)
}

fn manifest_name(shard: &Shard) -> String {
    format!("{}.json", shard.stem())
}

/// That the shards are N of one split, all of one sweep, all there and finished: N and the
/// sweep's manifest.
fn check(dir: &Path, found: &BTreeMap<(usize, usize), Found>) -> anyhow::Result<(usize, Manifest)> {
    let counts: std::collections::BTreeSet<usize> = found.keys().map(|(n, _)| *n).collect();
    if counts.len() > 1 {
        let listing: Vec<String> = counts
            .iter()
            .map(|n| {
                let names: Vec<String> = found
                    .values()
                    .filter(|f| f.shard.count == *n)
                    .map(|f| manifest_name(&f.shard))
                    .collect();
                format!("N = {n}: {}", names.join(", "))
            })
            .collect();
        return Err(BadInput(format!(
            "{} holds shards of different splits ({}); remove the stale ones",
            dir.display(),
            listing.join("; ")
        ))
        .into());
    }
    let count = *counts.first().expect("a split");
    let Some((first, reference)) = found
        .values()
        .find_map(|f| f.manifest.clone().map(|m| (f.shard, m)))
    else {
        return Err(BadInput(format!(
            "{}: no shard-I-of-{count}.json, only their CSVs; the shards must be re-run",
            dir.display()
        ))
        .into());
    };
    let foreign: Vec<String> = found
        .values()
        .filter_map(|f| {
            let m = f.manifest.as_ref()?;
            (m.sweep != reference.sweep).then(|| {
                format!(
                    "{} is from another sweep than {}: {}",
                    manifest_name(&f.shard),
                    manifest_name(&first),
                    m.differences(&reference)
                )
            })
        })
        .collect();
    if !foreign.is_empty() {
        return Err(BadInput(foreign.join("\n")).into());
    }
    let mut problems = Vec::new();
    for index in 1..=count {
        let shard = Shard { index, count };
        match found.get(&(count, index)) {
            None | Some(Found { manifest: None, .. }) => problems.push(format!(
                "shard {index}/{count} is missing (no {}): run it with --shard {index}/{count}",
                manifest_name(&shard)
            )),
            Some(Found { csv: None, .. }) => problems.push(format!(
                "shard {index}/{count} has not finished (no {}.csv): run it again with --shard {index}/{count}; it resumes",
                shard.stem()
            )),
            Some(_) => {}
        }
    }
    if !problems.is_empty() {
        return Err(BadInput(format!(
            "{}: cannot merge the sweep:\n  {}",
            dir.display(),
            problems.join("\n  ")
        ))
        .into());
    }
    Ok((count, reference))
}

/// The shards' rows of `sweep.csv`, every combination once, in the sweep's order.
fn rows_in_order(
    dir: &Path,
    found: &BTreeMap<(usize, usize), Found>,
    reference: &Manifest,
) -> anyhow::Result<Vec<String>> {
    let mut rows: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for f in found.values() {
        let path = f.csv.as_ref().expect("checked: every shard has its CSV");
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut lines = text.lines();
        if lines.next() != Some(format!("combination,{}", reference.header).as_str()) {
            return Err(BadInput(format!(
                "{}: its header is not the sweep's (combination,{})",
                path.display(),
                reference.header
            ))
            .into());
        }
        for (n, line) in lines.enumerate() {
            let (k, row) = line
                .split_once(',')
                .and_then(|(k, row)| Some((k.parse::<usize>().ok()?, row)))
                .ok_or_else(|| {
                    BadInput(format!("{}:{}: not a shard row", path.display(), n + 2))
                })?;
            rows.entry(k).or_default().push(row.to_string());
        }
    }
    let total = reference.combinations;
    let missing: Vec<String> = (1..=total)
        .filter(|k| !rows.contains_key(k))
        .map(|k| k.to_string())
        .collect();
    let extra: Vec<String> = rows
        .keys()
        .filter(|k| !(1..=total).contains(*k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Err(BadInput(format!(
            "{}: the shards' CSVs do not hold combinations 1 to {total} once each (missing: [{}], not of the sweep: [{}])",
            dir.display(),
            missing.join(", "),
            extra.join(", ")
        ))
        .into());
    }
    Ok(rows.into_values().flatten().collect())
}

/// `shard-I-of-N.json` or `.csv`.
fn parse_name(path: &Path) -> Option<(Shard, &str)> {
    let name = path.file_name()?.to_str()?;
    let (stem, ext) = name.rsplit_once('.')?;
    if ext != "json" && ext != "csv" {
        return None;
    }
    let (i, n) = stem.strip_prefix("shard-")?.split_once("-of-")?;
    let shard = Shard::from_str(&format!("{i}/{n}")).ok()?;
    (shard.stem() == stem).then_some((shard, ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shard_names_are_shards() {
        fn shard(name: &str) -> Option<(usize, usize, &str)> {
            parse_name(Path::new(name)).map(|(s, e)| (s.index, s.count, e))
        }
        assert_eq!(shard("shard-2-of-3.csv"), Some((2, 3, "csv")));
        assert_eq!(shard("shard-02-of-3.csv"), None);
        assert_eq!(shard("shard-4-of-3.json"), None);
        assert_eq!(shard("sweep.csv"), None);
    }
}
