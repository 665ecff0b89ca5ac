//! `loam sweep FILE --vary PATH=RANGE`: solve a problem over a grid of values, replay every
//! plan on its own terrain and on the other, and write `sweep.csv` and its figures.
//!
//! Cold sweeps solve in parallel, one `loam solve` process per plan: CasADi's expression graph
//! and MUMPS are not safe to share between threads, processes are. Warm-started sweeps solve
//! in order in this process, each from its neighbour's plan (`planner::warm_start`).
//!
//! Each plan is solved, replayed and marked done in its own folder before the next starts, so
//! that a sweep stopped by Ctrl-C (or SIGTERM, as Slurm sends) resumes where it stopped when
//! run again with the same arguments (`point.rs`); `--shard I/N` runs one slice of the
//! combinations and `loam sweep merge` joins the slices (`shard.rs`).
//!
//! A planar robot's problem is swept by `planar.rs`: each point planned and replayed on its
//! own terrain, cold, in processes of their own, into one `sweep.csv`.

mod planar;
mod point;
mod replays;
mod shard;
mod table;

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use loam::sweep::{combinations, parse_axis, Axis};

use self::shard::Shard;
use super::interrupt;
use super::BadInput;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    /// The problem file (YAML).
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// A field and its values: `task.apex_height=0.03:0.10:0.01` (start:stop:step, stop
    /// included; a stop below the start counts down: 0.10:0.03:0.01) or
    /// `terrain.model=rigid,added_mass` (a list). Repeatable: every combination is solved;
    /// the first --vary changes fastest.
    #[arg(long = "vary", value_name = "PATH=RANGE", required = true)]
    pub vary: Vec<String>,
    /// The hopper's problems: start each solve from its neighbour's plan (as `loam solve
    /// --warm-start` does, across terrains too: `--vary terrain.model=rigid,added_mass`):
    /// along the first --vary, in order, in this process; each value of the other --vary
    /// starts a new chain, solved cold first. A chain follows its first plan's local optimum:
    /// sweep heights from the top down (task.apex_height=0.10:0.03:0.01), where the measured
    /// plans are the cold ones' or better (README, "Warm starts").
    #[arg(long)]
    pub warm_start: bool,
    /// Fixed overrides applied to every point: --set phases.0.nodes=41 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
    /// Output folder (default: runs/<problem name>-sweep). Run again with the same
    /// arguments, the sweep keeps the plans already done there (e.g. before a Ctrl-C) and
    /// solves the rest.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Parallel solves for a cold sweep (default: the available cores).
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
    /// Join the shards of a sweep (run with --shard I/N) into sweep.csv and draw its figures.
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
            "note: this warm chain climbs in apex height; a chain follows its first plan's local \
             optimum, and on rigid ground one from 30 mm up ended up to 65 % above the cold \
             plans where one from the top down reached them or better (README, \"Warm starts\"): \
             write the range from the top, e.g. task.apex_height=0.10:0.03:0.01"
        );
    }
    let base = super::ProblemArgs {
        file: file.clone(),
        overrides: args.overrides.clone(),
    }
    .load_any()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(format!("{}-sweep", base.name())));
    interrupt::install();
    planar::run(&args, &file, &axes, &out)
}

fn rises(axis: &Axis) -> bool {
    let first = axis.values.first().and_then(|v| v.parse::<f64>().ok());
    let last = axis.values.last().and_then(|v| v.parse::<f64>().ok());
    axis.path == "task.apex_height" && matches!((first, last), (Some(a), Some(b)) if b > a)
}

fn remove_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

fn solve_command(exe: &Path, file: &Path, dir: &Path, overrides: &[String]) -> Command {
    let mut command = Command::new(exe);
    command
        .arg("solve")
        .arg(file)
        .arg("--out")
        .arg(dir)
        .arg("-q");
    for o in overrides {
        command.arg("--set").arg(o);
    }
    command
}
