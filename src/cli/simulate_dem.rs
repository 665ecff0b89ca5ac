//! `loam simulate RUN_DIR --backend dem-cpu|dem-cuda --bed CHECKPOINT`: a planar robot's plan
//! (the hopper's robot file among them) replayed on the robot standing in a bed of simulated
//! grains (`sim::dem::planar`), and `loam validate`'s realisations of the bed, several at
//! once as the scenes of one backend (`replay_planar_scenes`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use loam::output;
use loam::output::dem::render::{render_side_view, RenderInput, SideView};
use loam::output::dem::snapshot::{Grains, Series};
use loam::sim::dem::cuda::CudaBackend;
use loam::sim::dem::planar::{
    replay_planar_scenes, GrainFoot, PlanarDemReplay, PlanarDemSettings, PlanarDemSummary,
};
use loam::sim::dem::sdf::{Sdf, Shape, Vec3};
use loam::sim::dem::surface::{Rotation, Surface};
use loam::sim::dem::{Backend, Checkpoint, Container, CpuBackend, CpuScenes, DemError};
use serde::Serialize;

use super::simulate::Backend as BackendChoice;
use super::BadInput;

/// DEM options of `loam simulate`.
#[derive(clap::Args, Clone, Debug)]
pub struct DemArgs {
    /// A bed written by `loam dem prepare` (required for the DEM backends).
    #[arg(long, value_name = "CHECKPOINT")]
    pub bed: Option<PathBuf>,
    /// Save the grains and the feet (VTK, PLY and a ParaView series, snapshots/snapshots.pvd)
    /// every this many seconds from t = 0; 0: none.
    #[arg(long, default_value_t = 0.02)]
    pub snapshot_every: f64,
    /// Render side views (PNG) at these times [s] (comma-separated, within the replay: 0 to
    /// the plan's end, or to --t-max; the grains are saved at each). Default with snapshots
    /// on: 0,0.06,0.1,0.14 (those within the replay); with --snapshot-every 0, none.
    #[arg(long, value_delimiter = ',')]
    pub render_at: Option<Vec<f64>>,
    /// Stop the replay at this time on the plan's clock at the latest [s] (default: the
    /// plan's end, and for an apex task up to 0.5 s past it while the robot still rises); a
    /// replay stopped short of that exits 1.
    #[arg(long)]
    pub t_max: Option<f64>,
    /// Projected-Jacobi iterations per grain step (default: the bed's; a Hertz-Mindlin bed has
    /// none; the bed's forces still change with this number, see README).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// The feet's extent across the robot's plane [m] (a foot drawn as a box on its
    /// contact's sole; a disc or a measured block keeps its own size).
    #[arg(long, default_value_t = 0.05)]
    pub foot_depth: f64,
    /// The grain step Δt [s] (default: the bed scene's, but at most 0.05 of the grains'
    /// Rayleigh time for a Hertz-Mindlin bed, where a robot's replay converged; at most 0.125
    /// of it is accepted): a replay's convergence check runs it again at half the step.
    #[arg(long)]
    pub time_step: Option<f64>,
    /// How long the robot settles on the bed, holding the plan's first state, before the
    /// plan's clock starts [s] (default 0.2).
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

/// Why a plan of the hopper's own planner gets no DEM replay: its coupling was folded into
/// the planar robots' one.
pub fn legacy_refusal(run_dir: &Path) -> BadInput {
    BadInput(format!(
        "{}: a plan of the hopper's own planner; the DEM replays a planar robot's plan, and the \
         hopper is one as a robot file: re-solve the jump with `loam solve \
         problems/hopper_granular.yaml` (robots/hopper.yaml) and replay that run",
        run_dir.display()
    ))
}

/// `loam simulate RUN --backend dem-*` on a folder that is not a planar robot's run (a plan
/// of loam's former hopper planner, or no run at all): the bed is checked (and the GPU, for
/// dem-cuda) as for any replay, then the folder is refused (exit 2) saying why.
pub fn run(
    run_dir: &Path,
    backend: BackendChoice,
    args: &DemArgs,
    _quiet: bool,
) -> anyhow::Result<u8> {
    let bed = bed_path(args)?;
    load_bed(bed, args)?;
    if backend == BackendChoice::DemCuda {
        engine(backend, 1)?;
    }
    if loam::api::is_former_hopper_run(run_dir) {
        return Err(legacy_refusal(run_dir).into());
    }
    // Not a run at all: the reader says what is missing.
    loam::api::read_planar_run(run_dir)?;
    Err(legacy_refusal(run_dir).into())
}

/// `--settle-time`, or the default: a number of seconds, 0 or more.
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

/// The DEM engine `backend` names for `scenes` realisations side by side, and its name.
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
    /// Projected-Jacobi iterations per step (absent for the Hertz-Mindlin law, which has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    solver_iterations: Option<usize>,
    /// Each contact's solid on the grains (a disc of the plan's added-mass foot, a wrench
    /// space's measured block, else a box on its sole), and a box's extent across the plane
    /// [m].
    feet: Vec<GrainFoot>,
    foot_depth_m: f64,
    settle_time_s: f64,
    #[serde(flatten)]
    summary: PlanarDemSummary,
    /// Wall time of the replay; with several realisations side by side, of all of them.
    wall_time_s: f64,
    /// Realisations replayed together in one backend (1 for a single replay).
    replays_side_by_side: usize,
}

/// `loam simulate RUN_DIR --backend dem-cpu --bed CHECKPOINT` for a planar robot's plan
/// (`sim::dem::planar`): writes `<backend>/dem_replay.csv`, `<backend>/dem.json`, and the
/// snapshots and renders asked for.
pub fn run_planar(
    run_dir: &Path,
    backend: BackendChoice,
    args: &DemArgs,
    quiet: bool,
) -> anyhow::Result<u8> {
    let mut codes = run_planar_realisations(run_dir, backend, std::slice::from_ref(args), quiet)?;
    codes.remove(0)
}

/// Replays the plan on several realisations of one bed at once (`loam validate`):
/// `realisations` differ only in `out_dir` and `nudge_grain`; they run as the scenes of one
/// backend (the GPU's one launch, or the CPU's scenes side by side) and each writes its own
/// folder, as a single replay does. The outer error is the batch's (bad input, a bed the plan
/// does not fit, a failed step, files that cannot be written); each realisation's own result
/// is its exit code, or why its replay failed (a foot through the bed's floor).
pub fn run_planar_realisations(
    run_dir: &Path,
    backend: BackendChoice,
    realisations: &[DemArgs],
    quiet: bool,
) -> anyhow::Result<Vec<anyhow::Result<u8>>> {
    let Some(args) = realisations.first() else {
        return Ok(Vec::new());
    };
    let bed_path = bed_path(args)?;
    let settle_time = settle_time(args, PlanarDemSettings::default().settle_time)?;
    if !(args.foot_depth > 0.0 && args.foot_depth.is_finite()) {
        return Err(BadInput(format!(
            "--foot-depth {}: the feet's extent across the plane must be positive [m]",
            args.foot_depth
        ))
        .into());
    }
    if args.t_max.is_some_and(|t| !(t > 0.0 && t.is_finite()))
        || !(args.snapshot_every >= 0.0 && args.snapshot_every.is_finite())
    {
        return Err(BadInput(format!(
            "--t-max {} must be positive and --snapshot-every {} not negative",
            args.t_max.map_or("-".into(), |t| t.to_string()),
            args.snapshot_every
        ))
        .into());
    }
    if args.iterations == Some(0) {
        return Err(BadInput("--iterations 0: at least 1 is needed".into()).into());
    }
    let run = loam::api::read_planar_run(run_dir)?;
    let apex = run.dem_apex();
    let duration = run.table.t.last().copied().unwrap_or(0.0);
    let horizon = args
        .t_max
        .unwrap_or(duration + apex.map_or(0.0, |a| a.wait));
    let render_at = render_times(args, horizon)?;
    let beds = realisations
        .iter()
        .map(|a| load_bed(bed_path, a))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bed = &beds[0];
    let feet = run.grain_feet();
    if let (loam::problem::planar::PlanarTerrainConfig::WrenchSpace(_), false) =
        (&run.problem.terrain, quiet)
    {
        if feet.first() == Some(&GrainFoot::Box) {
            eprintln!(
                "note: the wrench space's data file is not where the run recorded it (or has \
             changed), so its measured foot is unknown: each foot is a box on its sole"
            );
        }
    }
    let (mut engine, name) = engine(backend, beds.len())?;
    let settings = PlanarDemSettings {
        depth: args.foot_depth,
        settle_time,
        time_step: args.time_step,
        feet,
        apex,
        t_max: args.t_max,
        iterations: args.iterations,
        snapshot_every: (args.snapshot_every > 0.0).then_some(args.snapshot_every),
        snapshot_at: render_at.clone(),
        ..PlanarDemSettings::default()
    };
    let started = Instant::now();
    super::interrupt::install();
    let what = if beds.len() == 1 {
        "DEM replay".to_string()
    } else {
        format!("{} DEM replays side by side", beds.len())
    };
    let spinner = super::progress::spinner(
        quiet && beds.len() == 1,
        &format!(
            "{what} (settling {} s, then the plan's {duration:.3} s)",
            settings.settle_time
        ),
    );
    let mut stepped =
        super::progress::Stepped::new(engine.as_mut(), spinner, bed.scene.time_step());
    let replays = replay_planar_scenes(&mut stepped, &beds, &run.robot, &run.table, &settings)
        .map_err(dem_error)?;
    drop(stepped);
    let wall_time = started.elapsed().as_secs_f64();

    let mut codes = Vec::with_capacity(beds.len());
    for (args, dem) in realisations.iter().zip(replays) {
        let dem = match dem {
            Ok(dem) => dem,
            Err(e) => {
                codes.push(Err(dem_error(e)));
                continue;
            }
        };
        let params = dem.params;
        let record = PlanarDemRecord {
            backend: name,
            bed: bed_label(bed_path, args),
            grains: bed.grains.len(),
            grain_radius_m: bed.scene.grains.radius,
            contact: params.law,
            solver_iterations: matches!(params.law, loam::sim::dem::ContactLaw::ProjectedJacobi)
                .then_some(params.iterations),
            feet: settings.feet.clone(),
            foot_depth_m: settings.depth,
            settle_time_s: settings.settle_time,
            summary: dem.summary.clone(),
            wall_time_s: wall_time,
            replays_side_by_side: beds.len(),
        };
        let out = args.out_dir.clone().unwrap_or_else(|| run_dir.join(name));
        std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
        let written = write_snapshots(
            &out,
            &dem,
            &bed.scene.container,
            &render_at,
            params.time_step,
        )?;
        output::identity::write_derived(
            &run.plan_id,
            Some((
                &out.join("dem_replay.csv"),
                planar_csv(&run.robot, &dem).as_bytes(),
            )),
            &out.join("dem.json"),
            &record,
        )?;
        let s = &dem.summary;
        if !quiet {
            print_summary(&record, &out, &written);
        }
        let end = dem.samples.last().map_or(0.0, |s| s.t);
        for t in &written.not_rendered {
            eprintln!("warning: --render-at {t} s not rendered: the replay ended at {end:.4} s");
        }
        // A replay that could not follow the plan to its end is not a success.
        codes.push(Ok(if s.fell_at_s.is_some() || s.stopped_at_s.is_some() {
            1
        } else {
            0
        }));
    }
    Ok(codes)
}

fn print_summary(record: &PlanarDemRecord, out: &Path, written: &Written) {
    let s = &record.summary;
    println!(
        "DEM replay ({}, {} grains): centre of mass travelled {:.4} m (plan {:.4} m), \
         peak rise {:.4} m (plan {:.4} m); settled {:.1} mm below its planned start, the \
         grains carrying {:.2} N of its {:.2} N weight; deepest sole {:.1} mm",
        record.backend,
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
    if let (Some(planned), Some(achieved)) = (s.planned_apex_rise_m, s.achieved_apex_rise_m) {
        println!(
            "  apex rise {:.2} mm{} (plan {:.2} mm)",
            achieved * 1e3,
            if s.reached_apex == Some(true) {
                ""
            } else {
                ", no apex before the replay's end"
            },
            planned * 1e3
        );
    }
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
    if let Some(t) = s.stopped_at_s {
        println!("  stopped at --t-max, t = {t:.3} s, before the plan's end");
    }
    // Only what this run wrote.
    let mut files = vec!["dem_replay.csv".to_string(), "dem.json".to_string()];
    if written.snapshots > 0 {
        files.push(format!(
            "snapshots/ ({} snapshots of grains and feet as VTK, PLY and VTP; {})",
            written.snapshots,
            Series::INDEX
        ));
    }
    files.extend(written.renders.iter().map(|p| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }));
    println!(
        "  {} steps in {:.1} s; wrote {}/ ({})",
        s.steps,
        record.wall_time_s,
        out.display(),
        files.join(", ")
    );
}

/// The planar DEM replay as a table: t, the coordinates, their rates (`d_` names), the
/// inputs, and per contact the grains' `_fx`, `_fz`, `_tau` and the sole's `_height` above
/// the surface (t < 0 while settling).
fn planar_csv(robot: &loam::model::planar::PlanarRobot, dem: &PlanarDemReplay) -> String {
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

/// The render times, checked before any work: each within the replay (0 to `horizon`, the
/// plan's end or `--t-max`), and none asked for without snapshots.
fn render_times(args: &DemArgs, horizon: f64) -> anyhow::Result<Vec<f64>> {
    let snapshots = args.snapshot_every > 0.0;
    let Some(times) = &args.render_at else {
        return Ok(if snapshots {
            [0.0, 0.06, 0.1, 0.14]
                .into_iter()
                .filter(|t| *t <= horizon)
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
        if !(t >= 0.0 && t <= horizon) {
            return Err(BadInput(format!(
                "--render-at {t}: outside the replay, which spans 0 to {horizon} s (the plan's \
                 end, or --t-max); give times in that range"
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
    /// Render times after the replay's end.
    not_rendered: Vec<f64>,
}

/// A foot's solid turned by its orientation, as a field in the world's axes about its centre
/// (what a side view outlines).
struct Turned<'a> {
    shape: &'a Shape,
    rotation: Rotation,
}

impl Sdf for Turned<'_> {
    fn distance(&self, p: Vec3) -> f64 {
        // Into the body's frame: Rᵀ p.
        let r = &self.rotation;
        let local: Vec3 = std::array::from_fn(|i| (0..3).map(|j| r[j][i] * p[j]).sum());
        self.shape.distance(local)
    }
}

/// The snapshots as a series for ParaView (the grains and the feet at each, see
/// `loam::output::dem::snapshot`), and a side-view render at each of `render_at`, from the
/// snapshot of the step that starts at or within one step `dt` after it (the replay saved it
/// there).
fn write_snapshots(
    out: &Path,
    dem: &PlanarDemReplay,
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
            let feet: Vec<Surface> = snap
                .feet
                .iter()
                .map(|(shape, state)| {
                    Surface::of_shape(shape, container).placed(state.position, &state.rotation())
                })
                .collect();
            let grains = Grains {
                positions: &g.position,
                radii: &g.radius,
                velocities: &g.velocity,
            };
            series
                .add(snap.t, &grains, &feet)
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
        let turned: Vec<Turned> = snap
            .feet
            .iter()
            .map(|(shape, state)| Turned {
                shape,
                rotation: state.rotation(),
            })
            .collect();
        let bodies: Vec<(&dyn Sdf, Vec3)> = turned
            .iter()
            .zip(&snap.feet)
            .map(|(foot, (_, state))| (foot as &dyn Sdf, state.position))
            .collect();
        // The bed and the feet: a grain flung high above the bed would otherwise stretch the
        // image into a tall empty strip (it is left out of view).
        let highest = snap
            .feet
            .iter()
            .map(|(_, state)| state.position[2])
            .fold(f64::NEG_INFINITY, f64::max);
        let top = (snap.surface_height + 0.02).max(highest + 0.03);
        let view = SideView {
            // A slab through the robot's plane: the grains in front would hide the crater.
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
