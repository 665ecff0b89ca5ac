//! `loam simulate RUN_DIR`: replay a saved plan's command and compare with the plan.

use std::path::{Path, PathBuf};

use loam::output::{self, identity, run::SavedPlan};
use loam::problem;
use loam::sim::reduced;
use loam::sim::replay::{self, ReplaySummary, TerrainRecord};

use super::BadInput;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The reduced-order model with event detection (MODEL.md sections 1 and 2).
    Reduced,
    /// The discrete-element bed on the CPU.
    DemCpu,
    /// The discrete-element bed on a CUDA GPU.
    DemCuda,
}

#[derive(clap::Args)]
pub struct Args {
    /// A folder written by `loam solve` (holding solution.json and trajectory.csv).
    pub run_dir: PathBuf,
    /// Replay on another terrain: a preset (`rigid`, `poppy_seeds`) or a problem file whose
    /// `terrain` section is used. Default: the plan's own terrain. The replay is named after
    /// it: replay-on-<preset>, or replay-on-<file stem>-<hash of its parameters> for a file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub terrain: Option<String>,
    #[arg(long, value_enum, default_value = "reduced")]
    pub backend: Backend,
    /// Relative tolerance of the integrator's error control.
    #[arg(long, default_value_t = 1e-10)]
    pub rtol: f64,
    /// Absolute tolerance of the integrator's error control.
    #[arg(long, default_value_t = 1e-12)]
    pub atol: f64,
    /// A planar robot's replay stops after this many integrator steps; what it has is written,
    /// marked incomplete (`"complete": false` in replay.json), and simulate exits 1.
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    pub max_steps: usize,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub dem: super::simulate_dem::DemArgs,
}

/// A terrain from `--terrain`: its section, and the file's stem when it came from a file.
pub struct TerrainChoice {
    pub terrain: problem::Terrain,
    pub file_stem: Option<String>,
}

/// A terrain section from `--terrain`: a preset name or a problem file.
pub fn terrain_section(spec: &str) -> anyhow::Result<TerrainChoice> {
    let path = Path::new(spec);
    let preset = |terrain| TerrainChoice {
        terrain,
        file_stem: None,
    };
    if spec == "rigid" {
        return Ok(preset(problem::Terrain {
            model: problem::TerrainModel::Rigid,
            ..Default::default()
        }));
    }
    if let Ok(medium) = problem::load_yaml::<problem::MediumPreset>(spec) {
        if !path.exists() {
            return Ok(preset(problem::Terrain {
                model: problem::TerrainModel::AddedMass,
                medium,
                ..Default::default()
            }));
        }
    }
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BadInput(format!("--terrain {spec}: cannot read it: {e}")))?;
        if problem::is_planar(&text, &[]) {
            return Err(BadInput(format!(
                "--terrain {spec}: a planar robot's problem file; --terrain takes a hopper \
                 problem file (its terrain: rigid or added_mass) or a preset (rigid, poppy_seeds)"
            ))
            .into());
        }
        let terrain = problem::load(path, &[])?.terrain;
        if terrain.model == problem::TerrainModel::WrenchSpace {
            return Err(BadInput(format!(
                "--terrain {spec}: a wrench-space terrain; the hopper's replay (--backend \
                 reduced) runs on rigid ground or the added-mass bed, and a rail plan replays \
                 on its own wrench space only"
            ))
            .into());
        }
        return Ok(TerrainChoice {
            terrain,
            file_stem: Some(
                path.file_stem()
                    .map_or("terrain".into(), |s| s.to_string_lossy().into_owned()),
            ),
        });
    }
    Err(BadInput(format!(
        "--terrain {spec}: not a terrain preset (accepted: rigid, poppy_seeds) nor a problem file"
    ))
    .into())
}

/// Checks the tolerances, in one place for simulate and sweep.
pub fn settings(rtol: f64, atol: f64) -> anyhow::Result<reduced::Settings> {
    if !(rtol > 0.0 && rtol < 1.0 && atol > 0.0) {
        return Err(BadInput(format!(
            "--rtol {rtol} --atol {atol}: tolerances must be positive (and rtol below 1)"
        ))
        .into());
    }
    let mut settings = reduced::Settings::default();
    settings.tolerances.rtol = rtol;
    settings.tolerances.atol = atol;
    Ok(settings)
}

/// Reads a plan folder; a folder that is missing or not loam's is bad input.
pub fn read_plan(dir: &Path) -> anyhow::Result<SavedPlan> {
    output::run::read_plan(dir).map_err(|e| BadInput(e.to_string()).into())
}

/// The replay's file stem: `replay` on the plan's own terrain; `replay-on-<name>` on another,
/// named after the preset (`rigid`, `poppy_seeds`) when its parameters are the preset's, with
/// 8 hex digits of its parameters' hash otherwise or when it came from a file (`file_stem`).
pub fn replay_stem(
    plan: &SavedPlan,
    terrain: &problem::Terrain,
    file_stem: Option<&str>,
) -> String {
    let record = TerrainRecord::of(terrain);
    if file_stem.is_none() && record == TerrainRecord::of(&plan.problem.terrain) {
        return "replay".into();
    }
    match file_stem {
        Some(stem) => format!("replay-on-{stem}-{}", record.short_hash()),
        None if record.is_preset() => format!("replay-on-{}", replay::terrain_label(terrain)),
        None => format!(
            "replay-on-{}-{}",
            replay::terrain_label(terrain),
            record.short_hash()
        ),
    }
}

/// Replays `plan` on `terrain` and writes `<stem>.csv` and `<stem>.json` into its folder
/// (stem from [`replay_stem`]), both recording the plan. (The sweep's; `run` names its own.)
#[cfg(feature = "planner")]
pub fn replay_and_write(
    plan: &SavedPlan,
    terrain: &problem::Terrain,
    settings: reduced::Settings,
) -> anyhow::Result<ReplaySummary> {
    replay_and_write_as(plan, terrain, settings, &replay_stem(plan, terrain, None))
}

fn replay_and_write_as(
    plan: &SavedPlan,
    terrain: &problem::Terrain,
    settings: reduced::Settings,
    stem: &str,
) -> anyhow::Result<ReplaySummary> {
    let (replay, summary) = replay::replay(plan, terrain, settings)?;
    let csv = replay::replay_csv(&replay);
    identity::write_derived(
        &plan.plan_id,
        Some((&plan.dir.join(format!("{stem}.csv")), csv.as_bytes())),
        &plan.dir.join(format!("{stem}.json")),
        &summary,
    )?;
    Ok(summary)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    if super::simulate_planar::is_planar_run(&args.run_dir) {
        if args.terrain.is_some() && args.backend != Backend::Reduced {
            return Err(BadInput(
                "--terrain chooses the contact model of --backend reduced; the DEM backends \
                 replay on the grains of --bed"
                    .into(),
            )
            .into());
        }
        if args.backend == Backend::Reduced && args.dem.bed.is_some() {
            return Err(BadInput(
                "--bed is for the DEM backends: add --backend dem-cpu (or dem-cuda)".into(),
            )
            .into());
        }
        if args.backend != Backend::Reduced {
            return super::simulate_dem::run_planar(
                &args.run_dir,
                args.backend,
                &args.dem,
                args.quiet,
            );
        }
        return super::simulate_planar::run(
            &args.run_dir,
            args.terrain.as_deref(),
            args.quiet,
            args.max_steps,
        );
    }
    let settings = settings(args.rtol, args.atol)?;
    let plan = read_plan(&args.run_dir)?;
    let choice = match &args.terrain {
        Some(spec) => terrain_section(spec)?,
        None => TerrainChoice {
            terrain: plan.problem.terrain.clone(),
            file_stem: None,
        },
    };
    if args.backend != Backend::Reduced {
        if args.terrain.is_some() {
            return Err(BadInput(
                "--terrain chooses a terrain model for --backend reduced; the DEM backends replay on the grains of --bed".into(),
            )
            .into());
        }
        return super::simulate_dem::run(&plan, args.backend, &args.dem, args.quiet);
    }
    if args.dem.bed.is_some() {
        return Err(BadInput(
            "--bed is for the DEM backends: add --backend dem-cpu (or dem-cuda)".into(),
        )
        .into());
    }
    let stem = replay_stem(&plan, &choice.terrain, choice.file_stem.as_deref());
    let summary = replay_and_write_as(&plan, &choice.terrain, settings, &stem)?;
    if !args.quiet {
        print_summary(&summary, &args.run_dir.join(&stem));
    }
    Ok(if summary.apex_rise_m.is_some() { 0 } else { 1 })
}

fn print_summary(s: &ReplaySummary, stem: &Path) {
    let mm = |v: f64| v * 1e3;
    // The terrain as the file names it (`soft-90582b65` for --terrain soft.yaml).
    let on = stem
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("replay-on-"))
        .unwrap_or(&s.replay_terrain);
    println!(
        "replayed the {} plan on {on} ({}; {} steps, {} rejected)",
        s.plan_terrain, s.backend, s.integration.steps, s.integration.rejected
    );
    if !s.plan_converged {
        println!("  note: the plan did not converge; its command is the best iterate");
    }
    match (s.apex_rise_m, s.apex_error_percent) {
        (Some(a), Some(p)) => println!(
            "  apex rise  {:8.2} mm   planned {:8.2} mm   ({:+.2} mm, {:+.1} %)",
            mm(a),
            mm(s.planned_apex_rise_m),
            mm(a - s.planned_apex_rise_m),
            p
        ),
        _ => println!(
            "  no apex reached within the time limit (planned rise {:.2} mm)",
            mm(s.planned_apex_rise_m)
        ),
    }
    match s.takeoff_s {
        Some(t) => println!(
            "  takeoff    {:8.4} s    planned {:8.4} s",
            t, s.planned_takeoff_s
        ),
        None => println!("  the foot never left the ground"),
    }
    if let Some(t) = s.apex_time_s {
        println!(
            "  apex       {:8.4} s    planned {:8.4} s",
            t, s.planned_apex_time_s
        );
    }
    let worst = ["z_m", "z_r", "z_f"]
        .iter()
        .filter_map(|name| s.state_differences.iter().find(|d| d.state == *name))
        .max_by(|a, b| a.max_abs.total_cmp(&b.max_abs));
    if let Some(d) = worst {
        println!(
            "  largest position difference from the plan: {} by {:.3} mm at {:.4} s",
            d.state,
            mm(d.max_abs),
            d.at_s
        );
    }
    println!("  wrote {}.csv and .json", stem.display());
}
