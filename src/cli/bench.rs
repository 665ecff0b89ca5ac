//! `loam bench`: solve each shipped problem several times, interleaved, as its file states it
//! and in one and two stages, and the hopper's robot file also with loam's own linear solver
//! and by a CasADi-Python peer (the same optimal control problem written by hand,
//! `casadi.nlpsol`, from its own rest guess); print medians, ranges and time ratios.

use std::path::PathBuf;

// Not called yet: `loam bench dem` is to print the peers' speed beside loam's.
pub mod dem_peers;
mod mdp;
#[cfg(feature = "planner")]
mod peer;
// Its `load` is unused since the bench reads files with the `--set` overrides (solves.rs).
#[cfg(feature = "planner")]
#[allow(dead_code)]
mod planar;
#[cfg(feature = "planner")]
mod solves;
#[cfg(feature = "planner")]
use solves::{run_solves, run_sweep, SweepArgs};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    what: Option<What>,
    /// Problem files (default: every problems/*.yaml).
    files: Vec<PathBuf>,
    /// Solves per configuration, interleaved.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Overrides of every problem's fields, as for `loam solve`
    /// (e.g. `--set "terrain={model: rigid}"`).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<String>,
    /// Print the CasADi-Python peer's input for each file (one JSON line each; the hopper's
    /// robot file only) instead of benchmarking: `bench/peer/hopper_casadi.py` reads it.
    #[arg(long)]
    #[cfg_attr(not(feature = "planner"), allow(dead_code))]
    peer_input: bool,
}

#[derive(clap::Subcommand)]
enum What {
    /// The DEM step on the paper's column scene at several grain counts.
    Dem(super::dem::BenchDemArgs),
    /// The maximum-dissipation simulator's step on the planar quadruped, four feet in sand.
    Mdp(mdp::BenchMdpArgs),
    /// A height sweep solved warm-started against the same sweep solved cold, in order, in
    /// this process.
    #[cfg(feature = "planner")]
    Sweep(SweepArgs),
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.what {
        Some(What::Dem(dem)) => super::dem::bench(dem),
        Some(What::Mdp(args)) => mdp::bench(args),
        #[cfg(feature = "planner")]
        Some(What::Sweep(sweep)) => run_sweep(sweep),
        #[cfg(feature = "planner")]
        None if args.peer_input => solves::print_peer_inputs(&args.files, &args.sets),
        None => run_solves(args.files, args.repeat, &args.sets),
    }
}

#[cfg(not(feature = "planner"))]
fn run_solves(_: Vec<PathBuf>, _: usize, _: &[String]) -> anyhow::Result<u8> {
    Err(super::BadInput(
        "this loam was built without the planner (--no-default-features): only `loam bench dem` is available"
            .into(),
    )
    .into())
}
