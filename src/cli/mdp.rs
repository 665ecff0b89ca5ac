//! `loam mdp run SCENARIO`: a robot on wrench-space terrain in the maximum-dissipation
//! simulator (docs/WRENCH_SPACE.md section 3.5), written as a result folder with its figures.

use std::path::PathBuf;
use std::sync::Arc;

use loam::output;
use loam::problem::scenario::Scenario;
use loam::sim::mdp::OUTSIDE_DATA_FLAG_SHARE;
use loam::sim::scenario;
use loam::terrain::wrench_space::{BeyondData, WrenchSpace};

use super::BadInput;

#[derive(clap::Subcommand)]
pub enum MdpCommand {
    /// Run a scenario file (see problems/mdp/): write trajectory.csv, scenario.json and the
    /// figures into runs/<name>/ (or --out DIR).
    Run(RunArgs),
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// The scenario file (YAML).
    pub scenario: PathBuf,
    /// The result folder (default: runs/<scenario name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Change a field before running, e.g. `--set start.pose.pitch=0.2`; repeatable.
    #[arg(long = "set", value_name = "FIELD=VALUE")]
    pub overrides: Vec<String>,
    /// What the wrench set does outside its data's box, instead of what the data file's
    /// `interpolation.beyond_data` says: `extrapolate` (the default) or `clamp`.
    #[arg(long, value_parser = ["extrapolate", "clamp"])]
    pub beyond_data: Option<String>,
    /// Skip the figures.
    #[arg(long)]
    pub no_plots: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(command: MdpCommand) -> anyhow::Result<u8> {
    match command {
        MdpCommand::Run(args) => run_scenario(args),
    }
}

fn run_scenario(args: RunArgs) -> anyhow::Result<u8> {
    let text = std::fs::read_to_string(&args.scenario)
        .map_err(|e| BadInput(format!("{}: {e}", args.scenario.display())))?;
    let scenario: Scenario = loam::problem::parse_as(&text, &args.scenario, &args.overrides)
        .map_err(|e| BadInput(e.to_string()))?;
    let robot = scenario.robot.build(scenario.gravity);
    let folder = args.scenario.parent().unwrap_or(std::path::Path::new(""));
    let data = folder.join(&scenario.terrain.data);
    let mut terrain = WrenchSpace::load(&data).map_err(|e| {
        let line = loam::problem::line_of(&text, "terrain.data")
            .map_or(String::new(), |l| format!(":{l}"));
        BadInput(format!(
            "{}{line}: terrain.data: {}: {e}",
            args.scenario.display(),
            data.display()
        ))
    })?;
    match args.beyond_data.as_deref() {
        Some("clamp") => terrain.set_beyond_data(BeyondData::Clamp),
        Some(_) => terrain.set_beyond_data(BeyondData::Extrapolate),
        None => {}
    }
    let beyond_data = terrain.beyond_data();
    let name = scenario.name.clone().unwrap_or_default();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(&name));
    let result = scenario::run(&scenario, &robot, Arc::new(terrain), |_| {});
    let run = match result {
        Ok(run) => run,
        Err(e) => {
            eprintln!("error: {}: {e}", args.scenario.display());
            return Ok(1);
        }
    };
    let mut csv = run.columns.join(",");
    csv.push('\n');
    for row in &run.rows {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:.9e}")).collect();
        csv.push_str(&cells.join(","));
        csv.push('\n');
    }
    let json = serde_json::json!({
        "kind": "mdp_scenario",
        "scenario": scenario,
        "summary": run.summary,
        "beyond_data": beyond_data,
        "outside_data_flag_share": OUTSIDE_DATA_FLAG_SHARE,
        "loam_version": env!("CARGO_PKG_VERSION"),
        "command_line": std::env::args().collect::<Vec<_>>(),
    });
    std::fs::create_dir_all(&out).map_err(|e| {
        anyhow::Error::new(e).context(format!("{}: cannot create the folder", out.display()))
    })?;
    let json_text = serde_json::to_string_pretty(&json)? + "\n";
    let trajectory = out.join("trajectory.csv");
    let summary = out.join("scenario.json");
    output::write_files_atomic(&[
        (trajectory.as_path(), csv.as_bytes()),
        (summary.as_path(), json_text.as_bytes()),
    ])?;
    let figures = if args.no_plots {
        Vec::new()
    } else {
        loam::plot::plot_dir(&out, &loam::plot::PlotSettings::default())?.files
    };
    if !args.quiet {
        let s = &run.summary;
        // The flag goes on the summary line itself, so a script reading one line sees it.
        let flag = if s.outside_data_share > OUTSIDE_DATA_FLAG_SHARE {
            format!(
                " [FLAG: {:.0} % of the steps outside the wrench-space data, more than {:.0} %]",
                100.0 * s.outside_data_share,
                100.0 * OUTSIDE_DATA_FLAG_SHARE
            )
        } else {
            String::new()
        };
        println!(
            "{name}: {} steps of {} ms in {:.1} µs per step (median); base at x = {:.4} m, z = {:.4} m, pitch = {:.4} rad; {}{flag}",
            s.steps,
            scenario.time_step * 1e3,
            s.median_step_us,
            s.final_base[0],
            s.final_base[1],
            s.final_base[2],
            out.display()
        );
        for figure in &figures {
            println!("  {}", figure.display());
        }
        let outside: Vec<String> = s
            .outside_data_steps
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(foot, n)| format!("{foot} {n}"))
            .collect();
        if !outside.is_empty() {
            println!(
                "  {:.1} % of the steps had a foot outside the wrench-space data, {} there (steps per foot: {}; `<foot>_outside` in trajectory.csv)",
                100.0 * s.outside_data_share,
                match beyond_data {
                    BeyondData::Extrapolate => "extrapolated",
                    BeyondData::Clamp => "clamped into it",
                },
                outside.join(", ")
            );
        }
        if s.clamped_steps > 0 {
            println!(
                "  {} steps had a foot's configuration clamped (`<foot>_clamped` in trajectory.csv)",
                s.clamped_steps
            );
        }
    }
    Ok(0)
}
