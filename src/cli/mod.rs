//! Subcommands, one file each. This is the only layer that prints.

mod bench;
#[cfg(feature = "planner")]
mod check;
mod dem;
mod interrupt;
mod material;
mod mdp;
mod plot;
mod progress;
mod robot;
mod schema;
mod simulate;
mod simulate_dem;
#[cfg(feature = "planner")]
mod solve;
#[cfg(feature = "planner")]
mod sweep;
mod validate;
mod wrench_space;

use clap::{Parser, Subcommand};

/// The first lines of `loam --version`: the version and the commit the binary was built from
/// (and whether its sources differed from it).
macro_rules! version_and_commit {
    () => {
        concat!(
            env!("CARGO_PKG_VERSION"),
            "\ncommit ",
            env!("LOAM_GIT_COMMIT"),
            " (sources differ from it: ",
            env!("LOAM_GIT_DIRTY"),
            ")\n"
        )
    };
}

/// `loam --version`: the version, the commit, and where its CasADi and IPOPT libraries are
/// loaded from.
#[cfg(feature = "planner")]
const LONG_VERSION: &str = concat!(
    version_and_commit!(),
    "CasADi 3.8.2 and IPOPT 3.14 from ",
    env!("LOAM_CASADI_DIR"),
    " (set LOAM_CASADI_DIR when building to use another folder)"
);
#[cfg(not(feature = "planner"))]
const LONG_VERSION: &str = concat!(
    version_and_commit!(),
    "replay-only build: no planner, no CasADi or IPOPT"
);

/// Plan robot jumps on soft and granular ground, and check the plans.
#[derive(Parser)]
#[command(name = "loam", version, long_version = LONG_VERSION, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve a problem file: transcribe, run IPOPT, write runs/<name>/ (or --out DIR).
    #[cfg(feature = "planner")]
    Solve(solve::Args),
    /// Replay a solved plan's command in a forward simulator and compare with the plan.
    Simulate(simulate::Args),
    /// Solve a problem over a grid of values and replay every plan on two terrains.
    #[cfg(feature = "planner")]
    Sweep(sweep::Args),
    /// Validate a problem file without solving it.
    #[cfg(feature = "planner")]
    Check(check::Args),
    /// Benchmarks: solves (default), warm against cold sweeps (`sweep`), the DEM step (`dem`).
    Bench(bench::Args),
    /// Draw the figures of a result folder (a run with its replays, DEM ones included; a
    /// sweep; an MDP run; a material calibration).
    Plot(plot::Args),
    /// Discrete-element beds: prepare one, drive a body through one.
    #[command(subcommand)]
    Dem(dem::DemCommand),
    /// Granular materials: calibrate a material's DEM parameters against its targets.
    #[command(subcommand)]
    Material(material::MaterialCommand),
    /// Wrench-space terrain: run a scenario in the maximum-dissipation simulator.
    #[command(subcommand)]
    Mdp(mdp::MdpCommand),
    /// Wrench-space terrain data: build one (RFT), import measurements, describe a file.
    #[command(subcommand)]
    WrenchSpace(wrench_space::WrenchSpaceCommand),
    /// The verdict on a plan: replay it in every simulator that applies (its own model, the
    /// other grounds, the DEM over realisations of a bed) and compare with the plan.
    Validate(validate::Args),
    /// Robot files: describe, check, draw one; write a preset as a file to edit.
    #[command(subcommand)]
    Robot(robot::RobotCommand),
    /// JSON Schema of problem or robot files (for editors), or their field reference.
    Schema(schema::Args),
}

/// Input the user must fix: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        #[cfg(feature = "planner")]
        Command::Solve(args) => solve::run(args),
        Command::Simulate(args) => simulate::run(args),
        #[cfg(feature = "planner")]
        Command::Sweep(args) => sweep::run(args),
        #[cfg(feature = "planner")]
        Command::Check(args) => check::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Dem(command) => dem::run(command),
        Command::Material(command) => material::run(command),
        Command::Mdp(command) => mdp::run(command),
        Command::WrenchSpace(command) => wrench_space::run(command),
        Command::Validate(args) => validate::run(args),
        Command::Robot(command) => robot::run(command),
        Command::Schema(args) => schema::run(args),
    }
}

pub fn exit_code(error: &anyhow::Error) -> u8 {
    // A command stopped by Ctrl-C (or SIGTERM) exits as a shell reports it: 130 (143).
    if let Some(code) = interrupt::exit_code() {
        return code;
    }
    if let Some(code) = api_exit_code(error) {
        return code;
    }
    let bad_input = error.chain().any(|cause| {
        cause.is::<loam::problem::ProblemError>()
            || cause.is::<BadInput>()
            || cause.is::<loam::terrain::wrench_space::WrenchSpaceError>()
            || planner_bad_input(cause)
    });
    // The environment, not the input nor the computation: results that cannot be written (or
    // files that cannot be read or written at all: an operating system's I/O error that no
    // check above took for bad input), a GPU or driver that is not there.
    let environment = error.chain().any(|cause| {
        cause.is::<loam::output::OutputError>()
            || cause.is::<std::io::Error>()
            || matches!(
                cause.downcast_ref::<loam::plot::PlotError>(),
                Some(loam::plot::PlotError::Write(_))
            )
            || cause.is::<loam::sim::dem::cuda::CudaError>()
    });
    if bad_input {
        2
    } else if environment {
        3
    } else {
        1
    }
}

/// An error of the library's whole-task calls (`loam::api`) says its own exit code.
fn api_exit_code(error: &anyhow::Error) -> Option<u8> {
    error
        .chain()
        .find_map(|cause| cause.downcast_ref::<loam::api::ApiError>())
        .map(loam::api::ApiError::exit_code)
}

#[cfg(feature = "planner")]
fn planner_bad_input(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        cause.downcast_ref::<loam::solver::IpoptError>(),
        Some(loam::solver::IpoptError::Option { .. })
    ) || matches!(
        cause.downcast_ref::<loam::planner::PlanError>(),
        Some(
            loam::planner::PlanError::Schedule(_)
                | loam::planner::PlanError::Unplannable(_)
                | loam::planner::PlanError::Start(_)
                | loam::planner::PlanError::WrenchSpace
        )
    )
}

#[cfg(not(feature = "planner"))]
fn planner_bad_input(_: &(dyn std::error::Error + 'static)) -> bool {
    false
}

/// Problem file and `--set` overrides, shared by the subcommands that read one.
#[cfg(feature = "planner")]
#[derive(clap::Args)]
pub struct ProblemArgs {
    /// The problem file (YAML), or a run folder (or its solution.json) whose problem to solve
    /// again.
    pub file: std::path::PathBuf,
    /// Override a field: --set task.apex_rise=0.08 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
}

#[cfg(feature = "planner")]
impl ProblemArgs {
    /// Loads and validates the problem, IPOPT options included, before any work starts.
    pub fn load_any(&self) -> anyhow::Result<loam::problem::planar::PlanarProblem> {
        let problem = loam::problem::load_any(&self.file, &self.overrides)?;
        loam::solver::check_options(&loam::planner::planar::solver_options(&problem))
            .map_err(|e| BadInput(format!("{}: solver: {e}", self.file.display())))?;
        Ok(problem)
    }
}
