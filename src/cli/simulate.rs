//! `loam simulate RUN_DIR`: replay a saved plan's command and compare with the plan: the
//! hopper's in `sim::reduced`, a planar robot's in `sim::planar` (on its own contact model or
//! another), or either on DEM grains (`simulate_dem.rs`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use loam::output::{self, identity, run::SavedPlan};
use loam::problem;
use loam::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use loam::sim::planar;
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

/// What `--terrain SPEC` names, before it is read as one kind of robot's ground: the rigid
/// preset, a medium preset (the added-mass bed), or a problem file (with its stem, which names
/// the replay).
pub enum TerrainSpec<'a> {
    Rigid,
    Medium(problem::MediumPreset),
    File { path: &'a Path, stem: String },
}

/// Reads `--terrain SPEC` (shared by the hopper's and the planar robots' replays): a preset
/// name, unless a file of that name exists, or a problem file.
pub fn terrain_spec(spec: &str) -> anyhow::Result<TerrainSpec<'_>> {
    let path = Path::new(spec);
    if spec == "rigid" {
        return Ok(TerrainSpec::Rigid);
    }
    if let Ok(medium) = problem::load_yaml::<problem::MediumPreset>(spec) {
        if !path.exists() {
            return Ok(TerrainSpec::Medium(medium));
        }
    }
    if !path.is_file() {
        return Err(BadInput(format!(
            "--terrain {spec}: not a terrain preset (accepted: rigid, poppy_seeds) nor a problem file"
        ))
        .into());
    }
    let stem = path
        .file_stem()
        .map_or("terrain".into(), |s| s.to_string_lossy().into_owned());
    Ok(TerrainSpec::File { path, stem })
}

/// A terrain section from `--terrain` for the hopper: a preset name or a hopper problem file.
pub fn terrain_section(spec: &str) -> anyhow::Result<TerrainChoice> {
    let preset = |terrain| TerrainChoice {
        terrain,
        file_stem: None,
    };
    let (path, stem) = match terrain_spec(spec)? {
        TerrainSpec::Rigid => {
            return Ok(preset(problem::Terrain {
                model: problem::TerrainModel::Rigid,
                ..Default::default()
            }))
        }
        TerrainSpec::Medium(medium) => {
            return Ok(preset(problem::Terrain {
                model: problem::TerrainModel::AddedMass,
                medium,
                ..Default::default()
            }))
        }
        TerrainSpec::File { path, stem } => (path, stem),
    };
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
    Ok(TerrainChoice {
        terrain,
        file_stem: Some(stem),
    })
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
    if is_planar_run(&args.run_dir) {
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
        return run_planar(
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

/// Whether `run_dir` holds a planar robot's plan (its problem has a `schedule`).
pub fn is_planar_run(run_dir: &Path) -> bool {
    std::fs::read_to_string(run_dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json["problem"].get("schedule").is_some())
}

/// A planar run folder's plan: its problem, robot, nodes and identity (solution.json and
/// trajectory.csv checked to be one plan).
pub struct PlanarRun {
    pub problem: PlanarProblem,
    pub robot: loam::model::planar::PlanarRobot,
    pub table: planar::PlanTable,
    pub plan_id: String,
}

pub fn read_planar_run(run_dir: &Path) -> anyhow::Result<PlanarRun> {
    let files = loam::output::run::read_plan_files(run_dir).map_err(|e| BadInput(e.to_string()))?;
    let (solution_path, csv_path) = (&files.solution_path, &files.trajectory_path);
    let problem: PlanarProblem =
        serde_json::from_value(files.json["problem"].clone()).map_err(|e| {
            BadInput(format!(
                "{}: `problem` is not a planar problem: {e}",
                solution_path.display()
            ))
        })?;
    let robot = problem.robot.build(problem.gravity);
    let csv = String::from_utf8_lossy(&files.trajectory);
    let table = planar::read_plan(&csv, &robot)
        .map_err(|e| BadInput(format!("{}: {e}", csv_path.display())))?;
    let expected: usize = problem.schedule.iter().map(|p| p.nodes).sum();
    if table.t.len() != expected {
        return Err(BadInput(format!(
            "{}: {} nodes, but the plan's schedule has {expected}: the trajectory does not belong to this solution.json",
            csv_path.display(),
            table.t.len()
        ))
        .into());
    }
    Ok(PlanarRun {
        problem,
        robot,
        table,
        plan_id: files.plan_id,
    })
}

/// The ground of `--terrain SPEC` for a planar plan: `rigid` or a medium preset (the added-mass
/// bed, `poppy_seeds`), with the plan's friction, or a planar problem file's `terrain` section
/// (any contact model but a wrench space). Returns it with the replay's file stem:
/// `replay-on-<preset>` or `replay-on-<file stem>-<8 hex digits of the terrain's hash>`.
fn terrain_of(
    spec: &str,
    own: &PlanarTerrainConfig,
) -> anyhow::Result<(PlanarTerrainConfig, String)> {
    use loam::problem::planar::{AddedMassGroundConfig, RigidGroundConfig};
    // The presets keep the plan's friction (a wrench space's plan: rigid ground's default).
    let friction = own
        .contact_model::<f64>()
        .map_or(RigidGroundConfig::default().friction, |m| {
            m.ground().friction
        });
    let (path, stem) = match terrain_spec(spec)? {
        TerrainSpec::Rigid => {
            let terrain = PlanarTerrainConfig::Rigid(RigidGroundConfig { friction });
            return Ok((terrain, "replay-on-rigid".into()));
        }
        TerrainSpec::Medium(medium) => {
            let terrain = PlanarTerrainConfig::AddedMass(AddedMassGroundConfig {
                friction,
                medium,
                ..Default::default()
            });
            return Ok((terrain, format!("replay-on-{spec}")));
        }
        TerrainSpec::File { path, stem } => (path, stem),
    };
    let terrain = match loam::problem::load_any(path, &[])? {
        loam::problem::AnyProblem::Planar(p) => p.terrain,
        loam::problem::AnyProblem::Hopper(_) => {
            return Err(BadInput(format!(
                "--terrain {spec}: the hopper's problem file; a planar robot's plan replays on a planar problem file's terrain or a preset (rigid, poppy_seeds)"
            ))
            .into())
        }
    };
    if let PlanarTerrainConfig::WrenchSpace(_) = terrain {
        return Err(BadInput(format!(
            "--terrain {spec}: a wrench-space terrain; plans replay on wrench spaces in the MDP simulator only from `loam solve` on that terrain"
        ))
        .into());
    }
    let hash = identity::short_hash(&serde_json::to_value(&terrain)?);
    Ok((terrain, format!("replay-on-{stem}-{hash}")))
}

/// `loam simulate RUN_DIR` for a planar robot's plan: the hybrid replay of `sim/planar/` on
/// its own contact model or another (`--terrain`).
fn run_planar(
    run_dir: &Path,
    terrain: Option<&str>,
    quiet: bool,
    max_steps: usize,
) -> anyhow::Result<u8> {
    let PlanarRun {
        mut problem,
        table,
        plan_id,
        ..
    } = read_planar_run(run_dir)?;
    if let PlanarTerrainConfig::WrenchSpace(_) = &problem.terrain {
        return Err(BadInput(format!(
            "{}: a plan on a wrench space is replayed in the MDP simulator by `loam solve` \
             itself (replay.csv in the same folder); `loam simulate` replays plans on rigid \
             ground, or on grains with --backend dem-cpu --bed CHECKPOINT",
            run_dir.display()
        ))
        .into());
    }
    // Another ground: the same robot and commands on another contact model.
    let mut stem = "replay".to_string();
    if let Some(spec) = terrain {
        let (ground, named) = terrain_of(spec, &problem.terrain)?;
        if ground != problem.terrain {
            problem.terrain = ground;
            stem = named;
        }
    }
    let settings = planar::ReplaySettings {
        max_steps,
        ..Default::default()
    };
    let replay = planar::replay(&problem, &table, &settings).context("replaying the plan")?;
    let mut out = String::from("mode,");
    out.push_str(&replay.columns.join(","));
    out.push('\n');
    for (row, mode) in replay.rows.iter().zip(&replay.modes) {
        out.push_str(mode);
        for v in row {
            out.push_str(&format!(",{v:.9e}"));
        }
        out.push('\n');
    }
    identity::write_derived(
        &plan_id,
        Some((&run_dir.join(format!("{stem}.csv")), out.as_bytes())),
        &run_dir.join(format!("{stem}.json")),
        &replay.summary,
    )?;
    let s = &replay.summary;
    if let Some(reason) = &s.stopped {
        // Written, marked incomplete, and said on stderr whatever --quiet says: a script
        // must not take a partial replay for a verdict on the plan.
        eprintln!(
            "replay stopped before the plan's end: {reason}\n  wrote what it has to {}/{{{stem}.csv, {stem}.json}}, marked incomplete (\"complete\": false)",
            run_dir.display()
        );
    }
    if !quiet {
        let steps = s
            .integration
            .steps
            .map_or("an incomplete replay of".to_string(), |n| n.to_string());
        println!(
            "replayed {} steps: distance {:.4} m (plan {:.4} m, {:.2}% off), centre of mass peak rise {:.4} m (plan {:.4} m, {:.2}% off)",
            steps,
            s.achieved_distance_m,
            s.planned_distance_m,
            100.0 * s.distance_error_rel,
            s.achieved_com_peak_m,
            s.planned_com_peak_m,
            100.0 * s.com_peak_error_rel
        );
        // In a bed, feet held on the verge of sinking creep (sink, stick, sink, ...): those
        // events are counted here and listed in replay.json.
        let creeping = |kind: &str| matches!(kind, "sinks" | "sticks");
        for e in s.events.iter().filter(|e| !creeping(e.kind)) {
            println!("  {:>8.4} s  {:<10} {}", e.t, e.kind, e.contact);
        }
        let in_bed: Vec<_> = s.events.iter().filter(|e| creeping(e.kind)).collect();
        if let (Some(first), Some(last)) = (in_bed.first(), in_bed.last()) {
            println!(
                "  {} times a foot began or stopped sinking into the bed, from {:.4} s to {:.4} s (replay.json lists them)",
                in_bed.len(),
                first.t,
                last.t
            );
        }
        if s.max_friction_excess > 0.0 {
            println!(
                "  holding the feet needed more friction than the ground has (excess {:.1}% of μ F_z)",
                100.0 * s.max_friction_excess
            );
        }
        if s.max_unloaded_side_force_n > 0.0 {
            println!(
                "  a foot the ground had let go of (F_z = 0, below the surface) was held sideways by up to {:.3} N",
                s.max_unloaded_side_force_n
            );
        }
        for limit in s.joint_limits.iter().filter(|l| l.samples_outside > 0) {
            println!(
                "  `{}` left its limits in {} samples (by up to {:.3e})",
                limit.coordinate, limit.samples_outside, limit.max_excess
            );
        }
        println!(
            "  wrote {}/{{{stem}.csv, {stem}.json}} (on {})",
            run_dir.display(),
            problem.terrain.model_name()
        );
    }
    // An incomplete replay is a failed simulation (exit 1), as a solve that did not converge.
    Ok(if s.complete { 0 } else { 1 })
}
