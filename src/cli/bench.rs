//! `loam bench`: solve each shipped hopper problem several times, interleaved, with loam's
//! defaults, with the paper's set-up in loam (all-zero initial guess, IPOPT's monotone
//! barrier) and with a CasADi-Python peer (the same NLP written by hand, `casadi.nlpsol`,
//! from the all-zero guess), and print medians, ranges and loam's time as a ratio to each.

use std::path::PathBuf;

// Not called yet: `loam bench dem` is to print the peers' speed beside loam's.
pub mod dem_peers;
mod mdp;
#[cfg(feature = "planner")]
mod peer;
#[cfg(feature = "planner")]
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
    /// Solves per configuration (loam, baseline, peer), interleaved.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
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
        None => run_solves(args.files, args.repeat),
    }
}

#[cfg(not(feature = "planner"))]
fn run_solves(_: Vec<PathBuf>, _: usize) -> anyhow::Result<u8> {
    Err(super::BadInput(
        "this loam was built without the planner (--no-default-features): only `loam bench dem` is available"
            .into(),
    )
    .into())
}
