//! `loam sweep FILE --vary PATH=RANGE`: a robot file's problem planned over a grid of values,
//! every point by `loam solve` and replayed by `loam simulate` in processes of their own
//! (CasADi's expression graph and MUMPS are not safe to share between threads; processes
//! are), `--jobs` at a time, into `OUT/<field=value-...>/`; `sweep.csv` has one row per point
//! (`row.rs`), and a sweep that varies the ground replays every plan on every ground of the
//! sweep too (`replays.rs`: `replays.csv`, the paper's Fig. 5).
//!
//! - `--warm-start` (`solve.rs`): the first --vary's values at one value of the others form a
//!   chain, solved in order, each point by `loam solve --warm-start <neighbour's folder>` when
//!   the neighbour converged (cold otherwise, and the chain's first point cold); chains run
//!   side by side.
//! - Each point is solved, replayed and marked done in its own folder before its unit goes on
//!   (`point.rs`), so a sweep stopped by Ctrl-C (or SIGTERM, as Slurm sends) resumes where it
//!   stopped when run again with the same arguments.
//! - `--shard I/N` runs one slice of the combinations (whole chains when warm) and `loam sweep
//!   merge` joins the slices into the `sweep.csv` and `replays.csv` an unsharded run writes
//!   (`shard.rs`).
//!
//! A file in the hopper planner's schema (`phases:`, `task.apex_height`) is refused: the hopper
//! is swept as a robot file (problems/hopper_granular.yaml).

mod point;
mod points;
mod replays;
mod row;
mod shard;
mod solve;
mod table;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use loam::sweep::{combinations, parse_axis, Axis};

use self::points::Point;
use self::shard::{Manifest, Shard};
use super::interrupt::{self, Interrupted};
use super::{progress, BadInput};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// The problem file (YAML): a robot's problem (`robot:`, `schedule:`).
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// A field and its values: `task.apex_rise=0.03:0.10:0.01` (start:stop:step, stop
    /// included; a stop below the start counts down: 0.10:0.03:0.01), `task.distance=0.1,0.2`
    /// (a list) or a YAML list whose items may be whole sections: `terrain=[{model: rigid},
    /// {model: added_mass, medium: poppy_seeds, foot_radius: 0.038}]`. Repeatable: every
    /// combination is solved; the first --vary changes fastest.
    #[arg(long = "vary", value_name = "PATH=RANGE", required = true)]
    pub vary: Vec<String>,
    /// Start each point from its neighbour's plan along the first --vary, in its order, as
    /// `loam solve --warm-start` does (across grounds too: put `--vary terrain=[...]` first):
    /// each value of the other --vary starts a new chain, solved cold first; a point whose
    /// neighbour did not converge is solved cold. Chains run side by side (--jobs). A chain
    /// follows its first plan's local optimum: sweep heights from the top down
    /// (task.apex_rise=0.10:0.03:0.01; README, "Warm starts").
    #[arg(long)]
    pub warm_start: bool,
    /// Fixed overrides applied to every point: --set schedule.0.nodes=41 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
    /// Output folder (default: runs/<problem name>-sweep). Run again with the same
    /// arguments, the sweep keeps the plans already done there (e.g. before a Ctrl-C) and
    /// solves the rest.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Points (or, with --warm-start, chains) solved side by side (default: the available
    /// cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Solve only slice I of N (1 ≤ I ≤ N) of the combinations, into the same --out as the
    /// other slices (e.g. one Slurm array task each): every N-th combination, or with
    /// --warm-start every N-th chain (the first --vary's values at one value of the others).
    /// `loam sweep merge DIR` then joins them.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
}

#[derive(clap::Subcommand)]
enum SweepCommand {
    /// Join the shards of a sweep (run with --shard I/N) into sweep.csv (and, for a sweep
    /// over grounds, replays.csv) and draw its figures; exit 1 when a plan did not converge,
    /// as the unsharded sweep.
    Merge(shard::MergeArgs),
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if let Some(SweepCommand::Merge(merge)) = args.command {
        return shard::merge(merge);
    }
    let file = args
        .file
        .clone()
        .expect("clap requires FILE without a subcommand");
    let axes: Vec<Axis> = args
        .vary
        .iter()
        .map(|s| parse_axis(s).map_err(|e| BadInput(e.to_string())))
        .collect::<Result<_, _>>()?;
    if args.warm_start && !args.quiet && rises(&axes[0]) {
        eprintln!(
            "note: this warm chain climbs in apex rise; a chain follows its first plan's local \
             optimum, and the hopper's on rigid ground from 30 mm up ended up to 62 % above the \
             cold plans where one from the top down reached them or better (README, \"Warm \
             starts\"): write the range from the top, e.g. task.apex_rise=0.10:0.03:0.01"
        );
    }

    // Every point is loaded and validated (those of the other shards too) before anything is
    // solved or written.
    let combos = combinations(&axes);
    let mut names = std::collections::HashSet::new();
    if let Some(combo) = combos
        .iter()
        .find(|c| !names.insert(loam::sweep::point_name(c)))
    {
        return Err(BadInput(format!(
            "--vary: two points would share the folder {} (values that differ only in \
             punctuation)",
            loam::sweep::point_name(combo)
        ))
        .into());
    }
    let mut problems = Vec::new();
    for combo in &combos {
        let mut overrides = args.overrides.clone();
        overrides.extend(combo.iter().map(|(p, v)| format!("{p}={v}")));
        problems.push((points::load(&file, &overrides)?, overrides));
    }
    let base = points::load(&file, &args.overrides)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("{}-sweep", base.name())));
    // A warm sweep's chain: the values of the first --vary at one value of the others.
    let chain = if args.warm_start {
        axes[0].values.len()
    } else {
        1
    };
    let selected = match args.shard {
        Some(shard) => shard.select(combos.len(), chain),
        None => (0..combos.len()).collect(),
    };
    let points = points::points_of(&selected, chain, &combos, &problems, &out)?;

    interrupt::install();
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    // A table of the whole sweep no longer describes the folder once any part of it is redone.
    for table in ["sweep.csv", "replays.csv"] {
        remove_file(&out.join(table))?;
    }
    let header = row::header(&axes);
    if let Some(shard) = args.shard {
        remove_file(&shard.csv_path(&out))?;
        let manifest = Manifest {
            sweep: point::fingerprint(&format!(
                "{}\n{:?}\n{}",
                serde_json::to_string(&base)?,
                shard::vary_specs(&axes),
                args.warm_start
            )),
            shard: shard.index,
            shards: shard.count,
            combinations: combos.len(),
            problem: base.name().to_string(),
            file: file.display().to_string(),
            vary: shard::vary_specs(&axes),
            set: args.overrides.clone(),
            warm_start: args.warm_start,
            header: header.clone(),
        };
        manifest.write(&shard.json_path(&out))?;
    }

    // What an earlier, interrupted run finished is kept.
    let mut done: Vec<Option<Vec<String>>> = points
        .iter()
        .map(|p| point::finished(&p.dir, &p.identity))
        .collect();
    let resumed = done.iter().filter(|d| d.is_some()).count();
    let started = Instant::now();
    let bar = progress::bar(points.len() as u64, args.quiet, "plans");
    bar.set_position(resumed as u64);
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let solved = solve::solve_all(&file, &points, &mut done, jobs, &bar);
    bar.finish_and_clear();
    if solved.is_err() || interrupt::requested() {
        for p in &points {
            point::remove_temporaries(&p.dir);
        }
    }
    if interrupt::requested() {
        let finished = done.iter().filter(|d| d.is_some()).count();
        return Err(Interrupted(format!(
            "{finished} of {} plans are done and kept in {}; run the same command again to resume",
            points.len(),
            out.display()
        ))
        .into());
    }
    solved?;
    let solve_seconds = started.elapsed().as_secs_f64();

    let finished: Vec<(usize, Vec<String>)> = points
        .iter()
        .zip(done)
        .map(|(p, lines)| (p.index, lines.expect("every plan is done")))
        .collect();
    let lines: Vec<&String> = finished.iter().flat_map(|(_, lines)| lines).collect();
    let all_converged = lines.iter().all(|l| row::converged(l, axes.len()));
    let (written, replays) = match args.shard {
        Some(shard) => {
            let path = shard.csv_path(&out);
            loam::output::write_atomic(&path, shard::shard_csv(&header, &finished).as_bytes())?;
            (path, None)
        }
        None => {
            let path = row::write_table(&out, &header, lines.iter().copied())?;
            // A sweep over grounds replays every plan on each of them (`replays.rs`).
            let replays = match replays::terrain_axis(&axes) {
                Some(axis) => replays::write(&points, &axes, axis, &out, jobs)?,
                None => None,
            };
            (path, replays)
        }
    };

    if !args.quiet {
        println!("{header}");
        for line in &lines {
            println!("{line}");
        }
        if let Some((_, rows)) = &replays {
            table::print(rows);
        }
        let shard = args.shard.map_or(String::new(), |s| {
            format!(
                " (shard {}/{} of {} in all)",
                s.index,
                s.count,
                combos.len()
            )
        });
        let kept = match resumed {
            0 => String::new(),
            n => format!("; {n} done by an earlier run, kept"),
        };
        println!(
            "{} plans{shard}: {} solved in {:.2} s ({}){kept}; wrote {}",
            points.len(),
            points.len() - resumed,
            solve_seconds,
            if args.warm_start {
                "warm-started along the first --vary, chains in parallel"
            } else {
                "cold, in parallel"
            },
            written.display()
        );
        if let Some((path, _)) = &replays {
            println!(
                "wrote {} (every plan replayed on every ground of the sweep)",
                path.display()
            );
        }
        if args.shard.is_some() {
            println!(
                "when every shard is done: loam sweep merge {}",
                out.display()
            );
        }
    }
    Ok(if all_converged { 0 } else { 1 })
}

/// Whether `axis` is an apex rise, rising from its first value to its last.
fn rises(axis: &Axis) -> bool {
    let first = axis.values.first().and_then(|v| v.parse::<f64>().ok());
    let last = axis.values.last().and_then(|v| v.parse::<f64>().ok());
    axis.path == "task.apex_rise" && matches!((first, last), (Some(a), Some(b)) if b > a)
}

fn remove_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// The points of every combination of `axes` under `out`, for the merge (no problem loaded).
fn every_point(axes: &[Axis], out: &Path) -> Vec<Point> {
    combinations(axes)
        .into_iter()
        .enumerate()
        .map(|(k, varied)| Point::at(k, varied, out))
        .collect()
}
