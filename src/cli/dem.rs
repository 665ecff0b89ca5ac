//! `loam dem prepare|intrude` and `loam bench dem`: the discrete-element bed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use loam::sim::dem::cuda::CudaBackend;
use loam::sim::dem::intrude::{intrude, intrusion_csv, IntrudeSettings};
use loam::sim::dem::sdf::Shape;
use loam::sim::dem::{
    bed, Backend, BodyGeometry, ContactLaw, CpuBackend, DemError, HertzMindlin, Scene, StepParams,
};

use super::{interrupt, progress, BadInput};

mod run;

#[derive(clap::Subcommand)]
pub enum DemCommand {
    /// Pour a bed described by a scene file, settle it and write its checkpoint.
    Prepare(PrepareArgs),
    /// Drive a body down through a prepared bed; write force and torque against depth (CSV).
    Intrude(IntrudeArgs),
    /// Describe a prepared bed: grains, contact law, time step, surface, packing.
    Info(InfoArgs),
    /// Run a scene (fill regions, gates, a rough floor; see docs/DEM.md) for a time after
    /// settling; write grain snapshots (VTK series), summary.json and a figure of the deposit.
    Run(run::RunArgs),
    /// Write the same bed with one grain moved by one rounding step (1 ulp): another
    /// realisation of a chaotic bed, for the spread of a DEM replay (see results/README.md).
    Nudge(NudgeArgs),
}

#[derive(clap::Args)]
pub struct NudgeArgs {
    /// A bed checkpoint written by `loam dem prepare`.
    pub checkpoint: PathBuf,
    /// The grain to move (0-based, in the checkpoint's order).
    #[arg(long)]
    pub grain: usize,
    /// Where to write the nudged checkpoint.
    #[arg(long, short)]
    pub output: PathBuf,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    /// A bed checkpoint written by `loam dem prepare`.
    pub checkpoint: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct PrepareArgs {
    /// The bed's scene file (YAML; see problems/beds/).
    pub scene: PathBuf,
    /// Where to write the checkpoint (default: runs/beds/<scene name>.bed).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BodyKind {
    /// A flat disc (radius, thickness) with its axis vertical.
    Disc,
    /// A vertical solid cylinder (radius, thickness = height).
    Cylinder,
    /// A box with square top (radius = half width, thickness = height).
    Box,
    /// A closed triangle mesh (OBJ or STL) given by --mesh, sampled on a grid (--spacing).
    Mesh,
}

#[derive(clap::Args)]
pub struct IntrudeArgs {
    /// A bed checkpoint written by `loam dem prepare`.
    pub checkpoint: PathBuf,
    #[arg(long, value_enum, default_value = "disc")]
    pub body: BodyKind,
    /// The body's radius (half width for a box) [m]; default: the robot's foot, 38 mm.
    #[arg(long, default_value_t = 0.038)]
    pub radius: f64,
    /// The body's thickness (height) [m].
    #[arg(long, default_value_t = 0.005)]
    pub thickness: f64,
    /// Downward speed [m/s].
    #[arg(long)]
    pub velocity: f64,
    /// Final depth of the body's lowest point below the surface [m].
    #[arg(long)]
    pub depth: f64,
    /// The mesh of a `--body mesh` (OBJ or STL, closed, in metres, origin at the body's
    /// reference point).
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// Grid spacing of the mesh's signed distance field [m].
    #[arg(long, default_value_t = 0.001)]
    pub spacing: f64,
    /// Jacobi iterations per step (projected_jacobi beds; default: the bed scene's).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Δt [s] (default: the bed scene's; at most the contact law's stable step).
    #[arg(long)]
    pub time_step: Option<f64>,
    /// Output CSV (default: runs/intrude/<checkpoint name>_<body>.csv).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Where to step the bed: the CPU (all rayon threads) or an NVIDIA GPU (the same step;
    /// a run is another realisation of the chaotic bed, as a nudged grain gives).
    #[arg(long, value_enum, default_value = "cpu")]
    pub backend: BenchBackend,
}

#[derive(clap::Args)]
pub struct BenchDemArgs {
    /// Grain counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1000,4000,16000,65000")]
    pub sizes: Vec<usize>,
    /// Timed steps per repeat.
    #[arg(long, default_value_t = 50)]
    pub steps: usize,
    /// Repeats per size (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// The contact law to measure.
    #[arg(long, value_enum, default_value = "hertz-mindlin")]
    pub law: LawKind,
    /// Projected-Jacobi iterations per step (law projected-jacobi).
    #[arg(long, default_value_t = 10)]
    pub iterations: usize,
    /// Also measure these prepared beds at rest, each with its own scene's law and step
    /// (e.g. the shipped poppy-seed bed).
    #[arg(long, value_name = "CHECKPOINT")]
    pub bed: Vec<PathBuf>,
    /// Also run the peer DEM codes (LIGGGHTS, YADE) on the shipped bed in the same run,
    /// through bench/peers/run.sh; a peer that is not installed is skipped.
    #[arg(long)]
    pub peers: bool,
    /// The backend to time: the CPU (all rayon threads) or an NVIDIA GPU.
    #[arg(long, value_enum, default_value = "cpu")]
    pub backend: BenchBackend,
    /// Copies of each bed stepped together (the CUDA backend's scenes per launch); a
    /// particle-step counts every copy's grains.
    #[arg(long, default_value_t = 1)]
    pub scenes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchBackend {
    Cpu,
    Cuda,
}

impl BenchBackend {
    /// The GPU's description for `cuda` (a missing driver, device or NVRTC is an error that
    /// names the option), None for the CPU.
    fn probe(self) -> anyhow::Result<Option<loam::sim::dem::cuda::DeviceInfo>> {
        Ok(match self {
            BenchBackend::Cpu => None,
            BenchBackend::Cuda => Some(
                loam::sim::dem::cuda::probe()
                    .map_err(|e| anyhow::Error::new(e).context("--backend cuda"))?,
            ),
        })
    }

    /// A fresh engine; `scenes` copies of each bed per launch on the GPU.
    fn engine(self, scenes: usize) -> Box<dyn Backend> {
        match self {
            BenchBackend::Cpu => Box::new(CpuBackend::new()),
            BenchBackend::Cuda => Box::new(CudaBackend::new(scenes)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LawKind {
    /// Soft spheres (E = 1e7 Pa, ν = 0.3, e = 0.5) at the default step (law::DEFAULT_FRACTION
    /// of the Rayleigh time).
    HertzMindlin,
    /// Hard spheres by projected Jacobi at Δt = 1 ms.
    ProjectedJacobi,
}

/// DEM errors the user can fix become `BadInput` (exit code 2).
fn classify(error: DemError) -> anyhow::Error {
    if error.is_bad_input() {
        BadInput(error.to_string()).into()
    } else {
        error.into()
    }
}

pub fn run(command: DemCommand) -> anyhow::Result<u8> {
    match command {
        DemCommand::Prepare(args) => prepare(args),
        DemCommand::Intrude(args) => run_intrude(args),
        DemCommand::Info(args) => info(args),
        DemCommand::Nudge(args) => nudge(args),
        DemCommand::Run(args) => run::run(args),
    }
}

fn nudge(args: NudgeArgs) -> anyhow::Result<u8> {
    let checkpoint = bed::Checkpoint::load(&args.checkpoint).map_err(classify)?;
    let nudged = checkpoint
        .nudged(args.grain)
        .map_err(|e| BadInput(format!("--grain {}: {e}", args.grain)))?;
    nudged.save(&args.output)?;
    println!(
        "wrote {}: {} with grain {} moved by one ulp in x",
        args.output.display(),
        args.checkpoint.display(),
        args.grain
    );
    Ok(0)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The folder `file` will be written into can be written (exit 3 now, not after minutes of
/// computing).
fn ensure_parent_writable(file: &Path) -> Result<(), loam::output::OutputError> {
    loam::output::ensure_writable(
        file.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
}

fn prepare(args: PrepareArgs) -> anyhow::Result<u8> {
    let scene = Scene::load(&args.scene).map_err(classify)?;
    let output = args
        .output
        .unwrap_or_else(|| Path::new("runs/beds").join(format!("{}.bed", stem(&args.scene))));
    // Before minutes of pouring: an unwritable destination is found now (exit 3).
    ensure_parent_writable(&output)?;
    println!(
        "pouring {} grains (radius {} m, spread {}) into {}",
        scene.grain_count(),
        scene.grains.radius,
        scene.grains.size_spread,
        scene.container
    );
    let start = Instant::now();
    interrupt::install();
    let mut cpu = CpuBackend::new();
    let mut backend = progress::Stepped::new(
        &mut cpu,
        progress::spinner(false, "pouring and settling"),
        scene.time_step(),
    );
    let checkpoint = bed::prepare(&mut backend, &scene).map_err(classify)?;
    drop(backend);
    checkpoint.save(&output)?;
    let info = &checkpoint.info;
    println!(
        "{} after {:.2} s simulated ({:.1} s wall): surface at {:.4} m, volume fraction {:.3}, \
         kinetic energy {:.2e} J per grain",
        if info.settled {
            "settled"
        } else {
            "NOT settled (settle.max_time ran out)"
        },
        info.settle_time,
        start.elapsed().as_secs_f64(),
        info.surface_height,
        info.volume_fraction,
        info.kinetic_energy_per_grain
    );
    println!("wrote {}", output.display());
    Ok(if info.settled { 0 } else { 1 })
}

fn run_intrude(args: IntrudeArgs) -> anyhow::Result<u8> {
    if args.iterations == Some(0) {
        return Err(BadInput("--iterations is 0; at least 1 is needed".into()).into());
    }
    for (name, v) in [
        ("--radius", args.radius),
        ("--thickness", args.thickness),
        ("--velocity", args.velocity),
        ("--depth", args.depth),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(BadInput(format!("{name} is {v}; it must be a positive number")).into());
        }
    }
    let checkpoint = bed::Checkpoint::load(&args.checkpoint).map_err(classify)?;
    let bed_depth = checkpoint.info.surface_height;
    if args.depth >= bed_depth {
        return Err(BadInput(format!(
            "--depth {} m is below the floor of the bed in {}: it is {bed_depth:.4} m deep \
             (surface to floor); give a depth less than {bed_depth:.4} m",
            args.depth,
            args.checkpoint.display()
        ))
        .into());
    }
    let shape = match args.body {
        BodyKind::Disc => Shape::Disc {
            radius: args.radius,
            thickness: args.thickness,
        },
        BodyKind::Cylinder => Shape::Cylinder {
            radius: args.radius,
            half_height: 0.5 * args.thickness,
        },
        BodyKind::Box => Shape::Box {
            half_extents: [args.radius, args.radius, 0.5 * args.thickness],
        },
        BodyKind::Mesh => Shape::Plane,
    };
    let geometry = if args.body == BodyKind::Mesh {
        let path = args.mesh.as_ref().ok_or_else(|| {
            BadInput("--body mesh needs --mesh FILE (an OBJ or STL triangle mesh)".into())
        })?;
        let mesh =
            loam::sim::dem::mesh::TriangleMesh::load(path).map_err(|e| BadInput(e.to_string()))?;
        let field =
            loam::sim::dem::mesh::GridSdf::from_mesh(&mesh, args.spacing, 2.0 * args.spacing)
                .map_err(|e| BadInput(e.to_string()))?;
        BodyGeometry::Field(std::sync::Arc::new(field))
    } else {
        BodyGeometry::Shape(shape)
    };
    let settings = IntrudeSettings {
        speed: args.velocity,
        depth: args.depth,
        start_height: None,
        sample_travel: None,
        friction: None,
        iterations: args.iterations,
        time_step: args.time_step,
    };
    let output = args.output.unwrap_or_else(|| {
        Path::new("runs/intrude").join(format!("{}_{:?}.csv", stem(&args.checkpoint), args.body))
    });
    ensure_parent_writable(&output)?;
    args.backend.probe()?;
    let mut engine = args.backend.engine(1);
    interrupt::install();
    let mut backend = progress::Stepped::new(
        engine.as_mut(),
        progress::spinner(false, &format!("intruding to {} m", args.depth)),
        args.time_step.unwrap_or(checkpoint.scene.time_step()),
    );
    let start = Instant::now();
    let samples = intrude(&mut backend, &checkpoint, geometry, &settings).map_err(classify)?;
    drop(backend);
    loam::output::write_atomic(&output, intrusion_csv(&samples).as_bytes())?;
    if let Some(last) = samples.last() {
        println!(
            "{} rows in {:.1} s; at depth {:.4} m the bed pushes back with {:.3} N",
            samples.len(),
            start.elapsed().as_secs_f64(),
            last.depth,
            last.force[2]
        );
    }
    println!("wrote {}", output.display());
    Ok(0)
}

fn info(args: InfoArgs) -> anyhow::Result<u8> {
    let checkpoint = bed::Checkpoint::load(&args.checkpoint).map_err(classify)?;
    let scene = &checkpoint.scene;
    let params = scene.step_params();
    let summary = serde_json::json!({
        "checkpoint": args.checkpoint.display().to_string(),
        "grains": checkpoint.grains.len(),
        "contact": scene.contact,
        "time_step_s": params.time_step,
        "container": scene.container,
        "surface_height_m": checkpoint.info.surface_height,
        "volume_fraction": checkpoint.info.volume_fraction,
        "settled": checkpoint.info.settled,
        "settle_time_s": checkpoint.info.settle_time,
    });
    if args.json {
        println!("{summary}");
    } else {
        println!(
            "{}: {} grains, {} law, dt = {:.4e} s; surface at {:.4} m, volume fraction {:.3}, \
             {} after {:.3} s",
            args.checkpoint.display(),
            checkpoint.grains.len(),
            params.law.name(),
            params.time_step,
            checkpoint.info.surface_height,
            checkpoint.info.volume_fraction,
            if checkpoint.info.settled {
                "settled"
            } else {
                "NOT settled"
            },
            checkpoint.info.settle_time
        );
    }
    Ok(0)
}

pub fn bench(args: BenchDemArgs) -> anyhow::Result<u8> {
    if args.steps == 0 || args.repeat == 0 || args.iterations == 0 || args.scenes == 0 {
        return Err(
            BadInput("--steps, --repeat, --iterations and --scenes must be ≥ 1".into()).into(),
        );
    }
    if args.backend == BenchBackend::Cpu && args.scenes != 1 {
        return Err(BadInput(
            "--scenes is the CUDA backend's (many scenes per launch): add --backend cuda".into(),
        )
        .into());
    }
    if args.peers && args.backend == BenchBackend::Cuda {
        return Err(BadInput(
            "--peers compares with the CPU peers on this machine: use --backend cpu".into(),
        )
        .into());
    }
    // A backend for each measurement (the device's memory is freed between sizes).
    let device = args.backend.probe()?;
    let scenes = args.scenes;
    let fresh = || args.backend.engine(scenes);
    let material = HertzMindlin::default();
    let (law, time_step) = match args.law {
        LawKind::HertzMindlin => (
            ContactLaw::HertzMindlin(material),
            loam::sim::dem::law::DEFAULT_FRACTION
                * material.rayleigh_time(loam::sim::dem::bench::RADIUS, 1000.0),
        ),
        LawKind::ProjectedJacobi => (ContactLaw::ProjectedJacobi, 1e-3),
    };
    let params = StepParams {
        law,
        time_step,
        gravity: [0.0, 0.0, -9.81],
        iterations: args.iterations,
        relaxation: 1.0,
        stabilisation: 0.2,
        friction: 0.5,
        wall_friction: 0.5,
        contact_margin: 0.1,
    };
    let law_text = match args.law {
        LawKind::HertzMindlin => "Hertz-Mindlin (E = 1e7 Pa, ν = 0.3, e = 0.5)".to_string(),
        LawKind::ProjectedJacobi => format!("projected Jacobi, {} iterations", args.iterations),
    };
    let engine = match &device {
        None => format!(
            "DEM CPU backend, {} rayon threads",
            rayon::current_num_threads()
        ),
        Some(d) => format!(
            "DEM CUDA backend on {} ({}, {:.0} GiB), {} scene{} per launch",
            d.name,
            d.arch(),
            d.total_memory as f64 / (1u64 << 30) as f64,
            scenes,
            if scenes == 1 { "" } else { "s" }
        ),
    };
    println!(
        "{engine}, {law_text}, dt = {:.3e} s, {} steps x {} repeats",
        time_step, args.steps, args.repeat
    );
    println!(
        "{:>7} {:>14} {:>16} {:>11} {:>10}  {:>6} {:>6} {:>6} {:>6}",
        "grains",
        "contacts/grain",
        "particle-steps/s",
        "x real time",
        "ms/step",
        "broad",
        "narrow",
        "solver",
        "integr"
    );
    let mut rows = Vec::new();
    for &size in &args.sizes {
        let (grains, container) = loam::sim::dem::bench::column(size);
        rows.push((
            grain_label(size, scenes),
            loam::sim::dem::bench::measure_on(
                fresh().as_mut(),
                scenes,
                &grains,
                &container,
                args.steps,
                args.repeat,
                &params,
            )
            .map_err(classify)?,
        ));
    }
    let mut bed_rates = Vec::new();
    for path in &args.bed {
        let checkpoint = bed::Checkpoint::load(path).map_err(classify)?;
        let p = checkpoint.scene.step_params();
        let row = loam::sim::dem::bench::measure_on(
            fresh().as_mut(),
            scenes,
            &checkpoint.grains,
            &checkpoint.scene.container,
            args.steps,
            args.repeat,
            &p,
        )
        .map_err(classify)?;
        println!(
            "bed {}: {} law, dt = {:.3e} s",
            path.display(),
            p.law.name(),
            p.time_step
        );
        bed_rates.push((checkpoint.grains.len(), row.particle_steps_per_second));
        rows.push((grain_label(checkpoint.grains.len(), scenes), row));
    }
    for (size, row) in rows {
        // The GPU's step is one stream of kernels: its phases are not timed apart.
        let phases = if device.is_some() {
            format!("{:>6} {:>6} {:>6} {:>6}", "-", "-", "-", "-")
        } else {
            format!(
                "{:>5.1}% {:>5.1}% {:>5.1}% {:>5.1}%",
                row.fractions[0] * 100.0,
                row.fractions[1] * 100.0,
                row.fractions[2] * 100.0,
                row.fractions[3] * 100.0
            )
        };
        println!(
            "{:>7} {:>14.2} {:>16.3e} {:>11.4} {:>10.2}  {phases}",
            size,
            row.contacts_per_grain,
            row.particle_steps_per_second,
            row.real_time_factor,
            row.milliseconds_per_step,
        );
    }
    let phases = match args.law {
        LawKind::HertzMindlin => {
            "kick-drift and neighbour list, pair forces, gather with the grains' closing kick \
             (walls, bodies), the bodies' closing kick"
        }
        LawKind::ProjectedJacobi => {
            "broadphase, narrowphase, velocity solver, position correction + integration"
        }
    };
    println!(
        "contacts: per grain (each counted once); x real time: simulated seconds per wall \
         second{}; percentages: {phases}",
        if scenes > 1 {
            " of each scene; grains: per scene x scenes"
        } else {
            ""
        }
    );
    if args.peers {
        // The peers time their own settling of the shipped and large beds; each is compared
        // with the `--bed` row of the same grain count (within 2 %), if there is one.
        let hints: Vec<usize> = bed_rates.iter().map(|(grains, _)| *grains).collect();
        let speeds = super::bench::dem_peers::run_peer_speed(&hints);
        for s in &speeds {
            let workers = match (s.processes, s.threads) {
                (Some(p), _) => format!("{p} process{}", if p == 1 { "" } else { "es" }),
                (_, Some(t)) => format!("{t} thread{}", if t == 1 { "" } else { "s" }),
                _ => String::new(),
            };
            let versus = bed_rates
                .iter()
                .find(|(grains, _)| grains.abs_diff(s.grains) * 50 <= s.grains)
                .map_or(String::new(), |(_, rate)| {
                    let ratio = rate / s.particle_steps_per_s;
                    format!(
                        "; loam {ratio:.2}x its speed ({})",
                        if ratio >= 1.0 {
                            "loam faster"
                        } else {
                            "loam slower"
                        }
                    )
                });
            println!(
                "peer {:<9} {:<8} {:>7} grains {:>16.3e} particle-steps/s  ({}, {workers}, {} steps in {:.1} s{versus})",
                s.peer,
                s.bed.as_deref().unwrap_or("shipped"),
                s.grains,
                s.particle_steps_per_s,
                s.version.as_deref().unwrap_or("version unknown"),
                s.steps,
                s.wall_s
            );
        }
    }
    Ok(0)
}

/// A bench row's grain count: `n`, or `n x scenes` when several copies step together.
fn grain_label(grains: usize, scenes: usize) -> String {
    if scenes == 1 {
        grains.to_string()
    } else {
        format!("{grains}x{scenes}")
    }
}
