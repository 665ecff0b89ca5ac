//! `loam simulate RUN_DIR --backend dem-cpu|dem-cuda --bed CHECKPOINT`: the plan's command
//! replayed on the robot standing in a bed of simulated grains, compared with the plan and
//! with the reduced-order replay on the added-mass model of the same medium.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use loam::model::hopper::Hopper;
use loam::output::dem::render::{render_side_view, RenderInput, SideView};
use loam::output::dem::snapshot::{Grains, Series};
use loam::output::{self, run::SavedPlan};
use loam::problem;
use loam::sim::dem::cuda::CudaBackend;
use loam::sim::dem::hopper::{
    bodies_csv, replay_hopper_scenes, HopperReplay, HopperReplaySettings,
};
use loam::sim::dem::sdf::{Sdf, Shape};
use loam::sim::dem::surface::{Surface, IDENTITY};
use loam::sim::dem::{Backend, Checkpoint, Container, CpuBackend, CpuScenes, DemError};
use loam::sim::replay;
use serde::Serialize;

use super::simulate::Backend as BackendChoice;
use super::BadInput;

/// DEM options of `loam simulate`.
#[derive(clap::Args, Clone, Debug)]
pub struct DemArgs {
    /// A bed written by `loam dem prepare` (required for the DEM backends).
    #[arg(long, value_name = "CHECKPOINT")]
    pub bed: Option<PathBuf>,
    /// Save the grains and the foot (VTK, PLY and a ParaView series, snapshots/snapshots.pvd)
    /// every this many seconds; 0: none. The hopper's replay only.
    #[arg(long, default_value_t = 0.02)]
    pub snapshot_every: f64,
    /// Render side views (PNG) at these times [s] (comma-separated, within 0..--t-max; the
    /// grains are saved at each). Default with snapshots on: 0,0.06,0.1,0.14 (those up to
    /// --t-max); with --snapshot-every 0, none.
    #[arg(long, value_delimiter = ',')]
    pub render_at: Option<Vec<f64>>,
    /// Stop at this time if no apex has come [s]. The hopper's replay only (a planar robot's
    /// runs to its plan's end).
    #[arg(long, default_value_t = 0.6)]
    pub t_max: f64,
    /// Projected-Jacobi iterations per grain step (default: the replay's own, 100; the bed's
    /// forces still change with this number, see README).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// A planar robot's feet: their extent across the robot's plane [m] (each is a box on its
    /// contact's sole).
    #[arg(long, default_value_t = 0.05)]
    pub foot_depth: f64,
    /// The grain step Δt [s] (default: the bed scene's, but at most 0.05 of the grains'
    /// Rayleigh time for a Hertz-Mindlin bed, where a robot's replay converged; at most 0.125
    /// of it is accepted): a replay's convergence check runs it again at half the step.
    #[arg(long)]
    pub time_step: Option<f64>,
    /// How long the robot settles on the bed, holding the plan's first state, before the
    /// plan's clock starts [s] (default: the hopper 0.3, a planar robot 0.2).
    #[arg(long)]
    pub settle_time: Option<f64>,
    /// Where the replay is written (`loam validate`'s realisations); default `RUN/<backend>`.
    #[arg(skip)]
    pub out_dir: Option<PathBuf>,
    /// Replay on the bed with this grain moved by one ulp (`Checkpoint::nudged`): another
    /// realisation of the same bed (`loam validate`).
    #[arg(skip)]
    pub nudge_grain: Option<usize>,
}

/// `dem.json`: what the DEM replay shows against the plan and the reduced-order replay
/// (written after `plan_id` and `csv_sha256`, the hash of `dem_bodies.csv`).
#[derive(Serialize)]
struct DemSummary {
    backend: &'static str,
    bed: String,
    grains: usize,
    grain_radius_m: f64,
    time_step_s: f64,
    /// The bed's contact law and its parameters.
    contact: loam::sim::dem::ContactLaw,
    /// Projected-Jacobi iterations per step (absent for the Hertz-Mindlin law, which has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    solver_iterations: Option<usize>,
    /// How long the robot rested on the bed before the plan's clock started.
    settle_time_s: f64,
    plan_terrain: String,
    planned_apex_rise_m: f64,
    apex_rise_m: f64,
    reached_apex: bool,
    /// The added-mass model the reduced-order replay of the same command ran on: the plan's
    /// own when it was planned on one, else the poppy-seed preset (the DEM beds' medium).
    reduced_order_terrain: String,
    /// Why that replay has no numbers, when it failed (null when it ran).
    reduced_order_error: Option<String>,
    /// The reduced-order replay of the same command on that model.
    reduced_order_apex_rise_m: Option<f64>,
    takeoff_s: Option<f64>,
    reduced_order_takeoff_s: Option<f64>,
    planned_takeoff_s: f64,
    apex_time_s: Option<f64>,
    rest_depth_m: f64,
    added_mass_rest_depth_m: f64,
    rest_bed_force_n: f64,
    robot_weight_n: f64,
    /// Wall time of the replay; with several realisations side by side, of all of them.
    wall_time_s: f64,
    /// Realisations replayed together in one backend (1 for a single replay).
    replays_side_by_side: usize,
    simulated_time_s: f64,
}

pub fn run(
    plan: &SavedPlan,
    backend: BackendChoice,
    args: &DemArgs,
    quiet: bool,
) -> anyhow::Result<u8> {
    let codes = run_realisations(plan, backend, std::slice::from_ref(args), quiet)?;
    Ok(codes[0])
}

/// Replays the plan on several realisations of one bed at once (`loam validate`): `realisations`
/// differ only in `out_dir` and `nudge_grain`; they run as the scenes of one backend (the GPU's
/// one launch, or the CPU's scenes side by side) and each writes its own folder, as a single
/// replay does. The exit code of each, in order.
pub fn run_realisations(
    plan: &SavedPlan,
    backend: BackendChoice,
    realisations: &[DemArgs],
    quiet: bool,
) -> anyhow::Result<Vec<u8>> {
    let Some(args) = realisations.first() else {
        return Ok(Vec::new());
    };
    let bed_path = bed_path(args)?;
    if !(args.t_max > 0.0) || args.snapshot_every < 0.0 {
        return Err(BadInput(format!(
            "--t-max {} must be positive and --snapshot-every {} not negative",
            args.t_max, args.snapshot_every
        ))
        .into());
    }
    let render_at = render_times(args)?;
    let defaults = HopperReplaySettings::default();
    let settle_time = settle_time(args, defaults.settle_time)?;
    let beds = realisations
        .iter()
        .map(|a| load_bed(bed_path, a))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bed = &beds[0];
    let (mut engine, name) = engine(backend, beds.len())?;

    let robot = Hopper::from_problem(&plan.problem);
    let foot_radius = plan.problem.robot.foot_radius;
    let command = replay::command_of(plan)?;
    let settings = HopperReplaySettings {
        t_max: args.t_max,
        settle_time,
        time_step: args.time_step,
        snapshot_every: (args.snapshot_every > 0.0).then_some(args.snapshot_every),
        snapshot_at: render_at.clone(),
        iterations: args.iterations.or(defaults.iterations),
        hops: plan
            .problem
            .phases
            .iter()
            .filter(|p| p.domain == loam::problem::Domain::Flight)
            .count()
            .max(1),
        ..defaults
    };
    let z_d0 = plan.nodes[0].x[loam::model::hopper::state::Z_D];
    let started = Instant::now();
    super::interrupt::install();
    let what = if beds.len() == 1 {
        "DEM replay".to_string()
    } else {
        format!("{} DEM replays side by side", beds.len())
    };
    let spinner = super::progress::spinner(
        quiet && beds.len() == 1,
        &format!("{what} (settling, then t ≤ {} s)", args.t_max),
    );
    let mut engine = super::progress::Stepped::new(engine.as_mut(), spinner, bed.scene.time_step());
    let replays = replay_hopper_scenes(
        &mut engine,
        &beds,
        &robot,
        foot_radius,
        &|t| command.at(t),
        z_d0,
        &settings,
    )
    .map_err(dem_error)?;
    drop(engine);
    let wall_time = started.elapsed().as_secs_f64();

    // The same command on the added-mass model of the medium, for comparison: the plan's own
    // model when it was planned on one (its parameters), else the poppy-seed preset.
    let seeds = if plan.problem.terrain.model == problem::TerrainModel::AddedMass {
        plan.problem.terrain.clone()
    } else {
        problem::Terrain::default()
    };
    let (reduced, reduced_error) =
        match replay::replay(plan, &seeds, loam::sim::reduced::Settings::default()) {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.to_string())),
        };
    let terrain = loam::terrain::Terrain::from_problem(&seeds, foot_radius);
    let added_mass_rest_depth = -terrain.rest_height(robot.total_mass() * robot.gravity);

    let scene = &bed.scene;
    let mut codes = Vec::with_capacity(beds.len());
    for (args, dem) in realisations.iter().zip(replays) {
        let dem = dem.map_err(dem_error)?;
        let out = args.out_dir.clone().unwrap_or_else(|| plan.dir.join(name));
        let params = dem.params;
        let written = write_snapshots(&out, &dem, &scene.container, &render_at, params.time_step)?;
        let summary = DemSummary {
            backend: name,
            bed: bed_label(bed_path, args),
            grains: bed.grains.len(),
            grain_radius_m: scene.grains.radius,
            time_step_s: params.time_step,
            contact: params.law,
            settle_time_s: settings.settle_time,
            solver_iterations: matches!(params.law, loam::sim::dem::ContactLaw::ProjectedJacobi)
                .then_some(params.iterations),
            plan_terrain: replay::terrain_label(&plan.problem.terrain),
            planned_apex_rise_m: plan.apex_rise,
            apex_rise_m: dem.apex_rise,
            reached_apex: dem.reached_apex,
            reduced_order_terrain: replay::terrain_label(&seeds),
            reduced_order_error: reduced_error.clone(),
            reduced_order_apex_rise_m: reduced.as_ref().and_then(|(_, s)| s.apex_rise_m),
            takeoff_s: dem.takeoff_time,
            reduced_order_takeoff_s: reduced.as_ref().and_then(|(_, s)| s.takeoff_s),
            planned_takeoff_s: reduced
                .as_ref()
                .map_or(f64::NAN, |(_, s)| s.planned_takeoff_s),
            apex_time_s: dem.apex_time,
            rest_depth_m: dem.rest_depth,
            added_mass_rest_depth_m: added_mass_rest_depth,
            rest_bed_force_n: dem.rest_bed_force,
            robot_weight_n: robot.total_mass() * robot.gravity,
            wall_time_s: wall_time,
            replays_side_by_side: beds.len(),
            simulated_time_s: dem.samples.last().map_or(0.0, |s| s.t),
        };
        // dem.json records the plan and the hash of dem_bodies.csv; both written together.
        output::identity::write_derived(
            &plan.plan_id,
            Some((&out.join("dem_bodies.csv"), bodies_csv(&dem).as_bytes())),
            &out.join("dem.json"),
            &summary,
        )?;
        if !quiet {
            print_summary(&summary, &out, &written);
        }
        for t in &written.not_rendered {
            eprintln!(
                "warning: --render-at {t} s not rendered: the replay ended at {:.4} s{}",
                summary.simulated_time_s,
                if summary.reached_apex { " (apex)" } else { "" }
            );
        }
        codes.push(if dem.reached_apex { 0 } else { 1 });
    }
    Ok(codes)
}

/// `--settle-time`, or the robot's default: a number of seconds, 0 or more.
fn settle_time(args: &DemArgs, default: f64) -> anyhow::Result<f64> {
    let t = args.settle_time.unwrap_or(default);
    if !(t >= 0.0 && t.is_finite()) {
        return Err(BadInput(format!(
            "--settle-time {t}: must be a number of seconds, 0 or more"
        ))
        .into());
    }
    Ok(t)
}

/// `--bed`, which the DEM backends need.
fn bed_path(args: &DemArgs) -> anyhow::Result<&PathBuf> {
    args.bed.as_ref().ok_or_else(|| {
        BadInput("--backend dem-cpu/dem-cuda replays on a bed: give --bed CHECKPOINT (made by `loam dem prepare BED.yaml`)".into())
            .into()
    })
}

/// The bed of `--bed`, nudged where `args` asks for another realisation of it.
fn load_bed(path: &Path, args: &DemArgs) -> anyhow::Result<Checkpoint> {
    let bed = Checkpoint::load(path).map_err(dem_error)?;
    match args.nudge_grain {
        None => Ok(bed),
        Some(grain) => bed.nudged(grain).map_err(|e| {
            BadInput(format!("nudging grain {grain} of {}: {e}", path.display())).into()
        }),
    }
}

/// The bed as `dem.json` names it: its file, and the grain nudged for a realisation.
fn bed_label(path: &Path, args: &DemArgs) -> String {
    match args.nudge_grain {
        None => path.display().to_string(),
        Some(grain) => format!("{} (grain {grain} nudged by 1 ulp)", path.display()),
    }
}

/// The DEM engine `backend` names, and its name.
fn engine(
    backend: BackendChoice,
    scenes: usize,
) -> anyhow::Result<(Box<dyn Backend>, &'static str)> {
    Ok(match backend {
        BackendChoice::DemCpu if scenes == 1 => (Box::new(CpuBackend::new()), "dem-cpu"),
        BackendChoice::DemCpu => (Box::new(CpuScenes::new(scenes)), "dem-cpu"),
        BackendChoice::DemCuda => {
            // Probe first: without a driver, a device or NVRTC this is a clear error.
            loam::sim::dem::cuda::probe()
                .map_err(|e| anyhow::Error::new(e).context("--backend dem-cuda"))?;
            (Box::new(CudaBackend::new(scenes)), "dem-cuda")
        }
        BackendChoice::Reduced | BackendChoice::Mdp => {
            unreachable!("the reduced and MDP backends do not come here")
        }
    })
}

/// `dem.json` of a planar robot's DEM replay (written after `plan_id` and `csv_sha256`, the
/// hash of `dem_replay.csv`).
#[derive(Serialize)]
struct PlanarDemRecord {
    backend: &'static str,
    bed: String,
    grains: usize,
    grain_radius_m: f64,
    /// The bed's contact law and its parameters.
    contact: loam::sim::dem::ContactLaw,
    /// Each contact's solid on the grains (a disc of the plan's added-mass foot, a wrench
    /// space's measured block, else a box on its sole), and a box's extent across the plane
    /// [m].
    feet: Vec<loam::sim::dem::planar::GrainFoot>,
    foot_depth_m: f64,
    settle_time_s: f64,
    #[serde(flatten)]
    summary: loam::sim::dem::planar::PlanarDemSummary,
    wall_time_s: f64,
}

/// `loam simulate RUN_DIR --backend dem-cpu --bed CHECKPOINT` for a planar robot's plan
/// (`sim::dem::planar`): writes `<backend>/dem_replay.csv` and `<backend>/dem.json`.
pub fn run_planar(
    run_dir: &Path,
    backend: BackendChoice,
    args: &DemArgs,
    quiet: bool,
) -> anyhow::Result<u8> {
    use loam::sim::dem::planar::{replay_planar, PlanarDemSettings};
    let bed_path = bed_path(args)?;
    let settle_time = settle_time(args, PlanarDemSettings::default().settle_time)?;
    if !(args.foot_depth > 0.0 && args.foot_depth.is_finite()) {
        return Err(BadInput(format!(
            "--foot-depth {}: the feet's extent across the plane must be positive [m]",
            args.foot_depth
        ))
        .into());
    }
    if args.render_at.is_some() || args.iterations.is_some() {
        return Err(BadInput(
            "--render-at and --iterations are for the hopper's DEM replay; a planar robot's \
             takes --bed and --foot-depth"
                .into(),
        )
        .into());
    }
    let run = loam::api::read_planar_run(run_dir)?;
    let bed = load_bed(bed_path, args)?;
    let feet = run.grain_feet();
    if let (loam::problem::planar::PlanarTerrainConfig::WrenchSpace(_), false) =
        (&run.problem.terrain, quiet)
    {
        if feet.first() == Some(&loam::sim::dem::planar::GrainFoot::Box) {
            eprintln!(
                "note: the wrench space's data file is not where the run recorded it (or has \
             changed), so its measured foot is unknown: each foot is a box on its sole"
            );
        }
    }
    let (mut engine, name) = engine(backend, 1)?;
    let settings = PlanarDemSettings {
        depth: args.foot_depth,
        settle_time,
        time_step: args.time_step,
        feet,
        apex: run.dem_apex(),
        ..PlanarDemSettings::default()
    };
    let duration = run.table.t.last().copied().unwrap_or(0.0);
    let started = Instant::now();
    super::interrupt::install();
    let spinner = super::progress::spinner(
        quiet,
        &format!(
            "DEM replay (settling {} s, then the plan's {duration:.3} s)",
            settings.settle_time
        ),
    );
    let mut stepped =
        super::progress::Stepped::new(engine.as_mut(), spinner, bed.scene.time_step());
    let dem =
        replay_planar(&mut stepped, &bed, &run.robot, &run.table, &settings).map_err(dem_error)?;
    drop(stepped);
    let record = PlanarDemRecord {
        backend: name,
        bed: bed_label(bed_path, args),
        grains: bed.grains.len(),
        grain_radius_m: bed.scene.grains.radius,
        contact: bed.scene.step_params().law,
        feet: settings.feet.clone(),
        foot_depth_m: settings.depth,
        settle_time_s: settings.settle_time,
        summary: dem.summary.clone(),
        wall_time_s: started.elapsed().as_secs_f64(),
    };
    let out = args.out_dir.clone().unwrap_or_else(|| run_dir.join(name));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    output::identity::write_derived(
        &run.plan_id,
        Some((
            &out.join("dem_replay.csv"),
            planar_csv(&run.robot, &dem).as_bytes(),
        )),
        &out.join("dem.json"),
        &record,
    )?;
    if !quiet {
        let s = &dem.summary;
        println!(
            "DEM replay ({name}, {} grains): centre of mass travelled {:.4} m (plan {:.4} m), \
             peak rise {:.4} m (plan {:.4} m); settled {:.1} mm below its planned start, the \
             grains carrying {:.2} N of its {:.2} N weight; deepest sole {:.1} mm",
            record.grains,
            s.achieved_distance_m,
            s.planned_distance_m,
            s.achieved_com_peak_m,
            s.planned_com_peak_m,
            s.settle_sink_m * 1e3,
            s.settled_bed_force_n,
            s.robot_weight_n,
            -s.deepest_sole_m * 1e3
        );
        if s.start_speed_mps > 0.005 {
            println!(
                "  the robot was still moving ({:.3} m/s) when the plan's clock started: a \
                 longer --settle-time gives it a fairer start",
                s.start_speed_mps
            );
        }
        if let (Some(t), Some(body)) = (s.fell_at_s, &s.fell_body) {
            println!(
                "  the robot fell at t = {t:.3} s: its {body} went below the surface, where only \
                 the feet meet the grains; the replay stops there"
            );
        }
        println!(
            "  {} steps in {:.1} s; wrote {}/{{dem_replay.csv, dem.json}}",
            s.steps,
            record.wall_time_s,
            out.display()
        );
    }
    // A replay that could not follow the plan to its end is not a success.
    Ok(if dem.summary.fell_at_s.is_some() {
        1
    } else {
        0
    })
}

/// The planar DEM replay as a table: t, the coordinates, their rates (`d_` names), the
/// inputs, and per contact the grains' `_fx`, `_fz`, `_tau` and the sole's `_height` above
/// the surface (t < 0 while settling).
fn planar_csv(
    robot: &loam::model::planar::PlanarRobot,
    dem: &loam::sim::dem::planar::PlanarDemReplay,
) -> String {
    let mut columns = vec!["t".to_string()];
    columns.extend(robot.coordinates.iter().map(|c| c.name.clone()));
    columns.extend(robot.coordinates.iter().map(|c| format!("d_{}", c.name)));
    columns.extend(robot.inputs.iter().map(|i| i.name.clone()));
    for c in &robot.contacts {
        for part in ["fx", "fz", "tau", "height"] {
            columns.push(format!("{}_{part}", c.name));
        }
    }
    let mut out = columns.join(",");
    out.push('\n');
    for s in &dem.samples {
        out.push_str(&format!("{:.6}", s.t));
        let feet = s
            .wrenches
            .iter()
            .zip(&s.heights)
            .flat_map(|(w, h)| [w[0], w[1], w[2], *h]);
        for v in s.q.iter().chain(&s.v).chain(&s.u).copied().chain(feet) {
            out.push_str(&format!(",{v:.9e}"));
        }
        out.push('\n');
    }
    out
}

fn dem_error(e: DemError) -> anyhow::Error {
    if e.is_bad_input() {
        BadInput(e.to_string()).into()
    } else {
        e.into()
    }
}

/// The render times, checked before any work: each within the run (0..--t-max), and none
/// asked for without snapshots.
fn render_times(args: &DemArgs) -> anyhow::Result<Vec<f64>> {
    let snapshots = args.snapshot_every > 0.0;
    let Some(times) = &args.render_at else {
        return Ok(if snapshots {
            [0.0, 0.06, 0.1, 0.14]
                .into_iter()
                .filter(|t| *t <= args.t_max)
                .collect()
        } else {
            Vec::new()
        });
    };
    if !snapshots && !times.is_empty() {
        return Err(BadInput(
            "--render-at renders saved grains, and --snapshot-every 0 saves none; give \
             --snapshot-every a positive interval or leave --render-at out"
                .into(),
        )
        .into());
    }
    for &t in times {
        if !(t >= 0.0 && t <= args.t_max) {
            return Err(BadInput(format!(
                "--render-at {t}: outside the run, which spans 0 to --t-max {} s; give times \
                 in that range",
                args.t_max
            ))
            .into());
        }
    }
    Ok(times.clone())
}

/// What `write_snapshots` wrote.
struct Written {
    /// Snapshots written (see `loam::output::dem::snapshot` for the files of each).
    snapshots: usize,
    renders: Vec<PathBuf>,
    /// Render times after the replay's end (it stopped at the apex before them).
    not_rendered: Vec<f64>,
}

/// The snapshots as a series for ParaView (the grains and the foot at each, see
/// `loam::output::dem::snapshot`), and a side-view render at each of `render_at`, from the
/// snapshot of the step that starts at or within one step `dt` after it (the replay saved it
/// there).
fn write_snapshots(
    out: &Path,
    dem: &HopperReplay,
    container: &Container,
    render_at: &[f64],
    dt: f64,
) -> anyhow::Result<Written> {
    // An earlier replay's series goes, also when this one saves none.
    let frames = out.join("snapshots");
    let mut series = Series::create(&frames).context("clearing earlier snapshots")?;
    if dem.snapshots.is_empty() {
        std::fs::remove_dir(&frames).ok(); // only if nothing else is in it
    } else {
        for snap in &dem.snapshots {
            let g = &snap.grains;
            let foot = Surface::of_shape(
                &Shape::Disc {
                    radius: snap.foot_radius,
                    thickness: snap.foot_thickness,
                },
                container,
            );
            let grains = Grains {
                positions: &g.position,
                radii: &g.radius,
                velocities: &g.velocity,
            };
            series
                .add(snap.t, &grains, &[foot.placed(snap.foot_centre, &IDENTITY)])
                .context("writing a snapshot")?;
        }
    }
    let mut written = Written {
        snapshots: dem.snapshots.len(),
        renders: Vec::new(),
        not_rendered: Vec::new(),
    };
    for &t in render_at {
        let Some(snap) = dem
            .snapshots
            .iter()
            .find(|s| s.t >= t - 1e-12 && s.t - t < dt - 1e-12)
        else {
            written.not_rendered.push(t);
            continue;
        };
        let g = &snap.grains;
        let (lo, hi) = bounds(&g.position);
        let foot = Shape::Disc {
            radius: snap.foot_radius,
            thickness: snap.foot_thickness,
        };
        let bodies: [(&dyn Sdf, [f64; 3]); 1] = [(&foot, snap.foot_centre)];
        // The bed and the foot: a grain flung high above the bed would otherwise stretch the
        // image into a tall empty strip (it is left out of view).
        let top = (snap.surface_height + 0.02).max(snap.foot_centre[2] + 0.03);
        let view = SideView {
            // A slab through the foot's axis: the grains in front would hide the crater.
            slab: Some(0.01),
            speed_range: Some([0.0, 0.5]),
            ..SideView::new([lo[0], hi[0]], [0.0, top], 1200)
        };
        let path = out.join(format!("render_t{:.3}.png", snap.t));
        render_side_view(
            &path,
            &RenderInput {
                positions: &g.position,
                radii: &g.radius,
                velocities: &g.velocity,
                bodies: &bodies,
                time: snap.t,
                view,
            },
        )
        .context("rendering a side view")?;
        written.renders.push(path);
    }
    Ok(written)
}

fn bounds(points: &[[f64; 3]]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

fn print_summary(s: &DemSummary, out: &Path, written: &Written) {
    let mm = |v: f64| v * 1e3;
    println!(
        "replayed the {} plan on {} grains ({}; {}; dt {:.3e} s) in {:.1} s for {:.3} s simulated",
        s.plan_terrain,
        s.grains,
        s.backend,
        match s.solver_iterations {
            Some(n) => format!("projected Jacobi, {n} iterations"),
            None => s.contact.name().replace('_', "-"),
        },
        s.time_step_s,
        s.wall_time_s,
        s.simulated_time_s
    );
    println!(
        "  rest depth {:.2} mm (added-mass model {:.2} mm); bed force at rest {:.2} N, weight {:.2} N",
        mm(s.rest_depth_m),
        mm(s.added_mass_rest_depth_m),
        s.rest_bed_force_n,
        s.robot_weight_n
    );
    println!(
        "  apex rise {:.2} mm{}   planned {:.2} mm   reduced-order on the added-mass model {}",
        mm(s.apex_rise_m),
        if s.reached_apex {
            ""
        } else {
            " (no apex before t_max)"
        },
        mm(s.planned_apex_rise_m),
        s.reduced_order_apex_rise_m
            .map_or("-".into(), |a| format!("{:.2} mm", mm(a)))
    );
    if let Some(error) = &s.reduced_order_error {
        println!(
            "  the reduced-order replay on {} failed: {error}",
            s.reduced_order_terrain
        );
    }
    if let Some(t) = s.takeoff_s {
        println!("  takeoff {t:.4} s   planned {:.4} s", s.planned_takeoff_s);
    }
    // Only what this run wrote.
    let mut files = vec!["dem_bodies.csv".to_string(), "dem.json".to_string()];
    if written.snapshots > 0 {
        files.push(format!(
            "snapshots/ ({} snapshots of grains and foot as VTK, PLY and VTP; {})",
            written.snapshots,
            Series::INDEX
        ));
    }
    files.extend(written.renders.iter().map(|p| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }));
    println!("  wrote {}/ ({})", out.display(), files.join(", "));
}
