//! `loam bench`: solve each shipped problem several times with loam's defaults and with a
//! baseline in the same run (the paper's set-up: all-zero initial guess, IPOPT's default
//! monotone barrier), and print medians, spreads and their ratio.

use std::path::PathBuf;

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
    /// Solves per configuration.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

#[derive(clap::Subcommand)]
enum What {
    /// The DEM step on the paper's column scene at several grain counts.
    Dem(super::dem::BenchDemArgs),
    /// A height sweep solved warm-started against the same sweep solved cold, in order, in
    /// this process.
    #[cfg(feature = "planner")]
    Sweep(SweepArgs),
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    match args.what {
        Some(What::Dem(dem)) => super::dem::bench(dem),
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
