//! Subcommands, one file each. This is the only layer that prints.

mod bench;
mod check;
mod dem;
mod solve;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Plan robot jumps on soft and granular ground, and check the plans.
#[derive(Parser)]
#[command(name = "loam", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve a problem file: transcribe, run IPOPT, write results/<name>/.
    Solve(solve::Args),
    /// Validate a problem file without solving it.
    Check(check::Args),
    /// Solve each shipped problem several times and report set-up and solve times.
    Bench(bench::Args),
    /// Discrete-element beds: prepare one, drive a body through one.
    #[command(subcommand)]
    Dem(dem::DemCommand),
    /// Benchmark the DEM step (the lead wires this as `loam bench dem`).
    BenchDem(dem::BenchDemArgs),
}

/// Input the user must fix: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Solve(args) => solve::run(args),
        Command::Check(args) => check::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Dem(command) => dem::run(command),
        Command::BenchDem(args) => dem::bench(args),
    }
}

pub fn exit_code(error: &anyhow::Error) -> u8 {
    let bad_input = error.chain().any(|cause| {
        cause.is::<loam::problem::ProblemError>()
            || cause.is::<BadInput>()
            || matches!(
                cause.downcast_ref::<loam::solver::IpoptError>(),
                Some(loam::solver::IpoptError::Option { .. })
            )
            || matches!(
                cause.downcast_ref::<loam::planner::PlanError>(),
                Some(loam::planner::PlanError::Schedule(_))
            )
    });
    if bad_input {
        2
    } else {
        1
    }
}

/// Problem file and `--set` overrides, shared by the subcommands that read one.
#[derive(clap::Args)]
pub struct ProblemArgs {
    /// The problem file (YAML).
    pub file: PathBuf,
    /// Override a field: --set task.apex_height=0.08 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
}

impl ProblemArgs {
    /// Loads and validates the problem, IPOPT options included, before any work starts.
    pub fn load(&self) -> anyhow::Result<loam::problem::Problem> {
        let problem = loam::problem::load(&self.file, &self.overrides)?;
        loam::solver::check_options(&loam::planner::solver_options(&problem))
            .map_err(|e| BadInput(format!("{}: solver: {e}", self.file.display())))?;
        Ok(problem)
    }
}
