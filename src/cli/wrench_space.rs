//! `loam wrench-space build|import|info`: make, read in and describe wrench-space data files
//! (docs/WRENCH_SPACE.md, "Implemented").

use std::path::PathBuf;
use std::time::Instant;

use loam::sim::dem::wrench_space::{self as dem, DemProtocol};
use loam::sim::dem::{Checkpoint, CpuBackend};
use loam::terrain::hull::{self, TABLE_II_MIN_NORM};
use loam::terrain::wrench_space::data::{sphere_directions, Foot, WrenchSpaceData};
use loam::terrain::wrench_space::{import, BeyondData, Kernel, Medium, RftModel, WrenchSpace};

use super::BadInput;

#[derive(clap::Subcommand)]
pub enum WrenchSpaceCommand {
    /// Compute a data file with a generator (RFT, or the paper's protocol on the DEM) on a
    /// grid of depths and tilts.
    Build(BuildArgs),
    /// Read measured wrenches from a CSV (depth,tilt,direction,force_x,force_z,torque) and a
    /// YAML header (a data file without `nodes`) into a data file.
    Import(ImportArgs),
    /// Describe a data file: medium, foot, nodes, directions, depth and tilt ranges.
    Info(InfoArgs),
    /// Draw a data file's sections (F_x–F_z and F_z–τ at several depths and tilts, with the
    /// data points and the interpolated hull between nodes): DIR/wrench_slices.{png,svg}.
    Plot(PlotArgs),
}

#[derive(clap::Args)]
pub struct PlotArgs {
    /// The data file.
    pub file: PathBuf,
    /// Where the figures go (default: runs/wrench-space/<file stem>/, e.g.
    /// runs/wrench-space/rft_sand_like/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Generator {
    /// Resistive force theory on the rectangular foot (analytic).
    Rft,
    /// The paper's protocol on loam's DEM: drag a kinematic box foot through the bed of
    /// --bed at every node and direction and read the grains' resistance.
    Dem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MediumName {
    /// Loosely packed poppy seeds (0.254 N/cm³ vertical).
    PoppySeedsLoose,
    /// Close-packed poppy seeds (0.464 N/cm³ vertical).
    PoppySeedsClosePacked,
    /// Li et al.'s generic fit scaled by --zeta.
    Generic,
}

#[derive(clap::Args)]
pub struct BuildArgs {
    #[arg(long, value_enum, default_value = "rft")]
    pub generator: Generator,
    /// The RFT medium (rft only; default poppy-seeds-loose).
    #[arg(long, value_enum)]
    pub medium: Option<MediumName>,
    /// ζ = α_z(0, π/2) of a `generic` medium [N/cm³] (0.4: the spec's Sand-like test medium).
    #[arg(long)]
    pub zeta: Option<f64>,
    /// The name written in the file's `medium` field (default: the medium's; for dem,
    /// `dem_<bed file name>`).
    #[arg(long)]
    pub medium_name: Option<String>,
    /// Foot width along the sole [m].
    #[arg(long, default_value_t = 0.10)]
    pub foot_width: f64,
    /// Foot height along its axis [m].
    #[arg(long, default_value_t = 0.30)]
    pub foot_height: f64,
    /// Foot width out of the plane [m].
    #[arg(long, default_value_t = 0.10)]
    pub foot_thickness: f64,
    /// Height of the torque point above the sole centre [m].
    #[arg(long, default_value_t = loam::terrain::wrench_space::data::DEFAULT_TORQUE_POINT)]
    pub torque_point: f64,
    /// s_x [m/s], s_z [m/s], s_ω [rad/s] (the paper's Sand and Pebbles scale).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 3,
        default_value = "0.02,0.02,0.3"
    )]
    pub velocity_scale: Vec<f64>,
    /// Deepest node: depths 0, −step, …, −max [m].
    #[arg(long, default_value_t = 0.10)]
    pub depth_max: f64,
    #[arg(long, default_value_t = 0.01)]
    pub depth_step: f64,
    /// Largest tilt: tilts 0, step, …, max [rad] (mirrors are made by the model).
    #[arg(long, default_value_t = 1.5)]
    pub tilt_max: f64,
    #[arg(long, default_value_t = 0.15)]
    pub tilt_step: f64,
    /// Rings of 8 directions between the poles: 3 gives m = 26, 7 gives m = 58.
    #[arg(long, default_value_t = 3, conflicts_with = "directions")]
    pub rings: usize,
    /// The unit velocity directions (x, z, omega) to use instead of --rings: a YAML file
    /// holding a list of [x, z, omega] triples, or a data file or import header whose
    /// `directions` it takes (they must be unit vectors, distinct and mirror-closed).
    #[arg(long)]
    pub directions: Option<PathBuf>,
    /// Segments per side of the foot's outline.
    #[arg(long, default_value_t = 40)]
    pub segments: usize,
    #[arg(long, value_enum, default_value = "cubic")]
    pub kernel: KernelName,
    /// dem: the bed, a checkpoint written by `loam dem prepare` (hertz_mindlin law).
    #[arg(long)]
    pub bed: Option<PathBuf>,
    /// dem: t_total [s], the time at the constant twist; θ is reached at 0.8 t_total.
    #[arg(long, default_value_t = loam::sim::dem::wrench_space::DEFAULT_DURATION)]
    pub t_total: f64,
    /// dem: width of the moving average centred on 0.8 t_total [s] (default 0.2 t_total).
    #[arg(long)]
    pub filter_window: Option<f64>,
    /// dem: speed of the straight descent from above the surface to the start pose [m/s].
    #[arg(long, default_value_t = loam::sim::dem::wrench_space::DEFAULT_APPROACH_SPEED)]
    pub approach_speed: f64,
    /// dem: height of the foot's lowest point above the surface where the descent starts [m]
    /// (default: a grain diameter).
    #[arg(long)]
    pub start_height: Option<f64>,
    /// The data file to write (YAML).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelName {
    /// r³ on spacing-scaled θ with an affine tail (loam's default).
    Cubic,
    /// r on raw θ, no tail (the authors' Sand model).
    PaperLinear,
    /// exp(−(2.7 r)²) on raw θ, no tail (the authors' Pebbles model).
    PaperGaussian,
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The measured wrenches (CSV).
    pub csv: PathBuf,
    /// Medium, foot, torque point, velocity scale, directions, interpolation (YAML, the data
    /// format without `nodes`).
    #[arg(long)]
    pub header: PathBuf,
    /// The data file to write (YAML).
    #[arg(long)]
    pub out: PathBuf,
    /// Take nodes that leave holes in the grid of their depths x tilts (refused otherwise,
    /// naming the first missing node); the holes are listed in the provenance.
    #[arg(long)]
    pub allow_missing_nodes: bool,
    /// The data's x axis points the other way from loam's (a drag toward +x resisted by +x
    /// force): negate every F_x and torque. Data that disagree in sign with RFT for the same
    /// foot are refused without it.
    #[arg(long)]
    pub flip_x: bool,
    /// Replace the wrenches at tilt 0 by their mirror average 1/2 (w_i + S w_pi(i)) (what
    /// loam's generated data use). Off by default for measured data, unless the header's
    /// `interpolation.mirror_average` says true: the data are taken as measured.
    #[arg(long)]
    pub mirror_average: bool,
    /// The RBF weights that come with the data (the authors' model), as a CSV
    /// depth,tilt,direction,weight_x,weight_z,weight_tau with a row per node and direction;
    /// needs a paper kernel in the header, and must reproduce every node (checked).
    #[arg(long)]
    pub weights: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    /// A wrench-space data file (YAML).
    pub file: PathBuf,
}

pub fn run(command: WrenchSpaceCommand) -> anyhow::Result<u8> {
    match command {
        WrenchSpaceCommand::Build(args) => build(args),
        WrenchSpaceCommand::Import(args) => run_import(args),
        WrenchSpaceCommand::Info(args) => info(args),
        WrenchSpaceCommand::Plot(args) => plot(args),
    }
}

fn plot(args: PlotArgs) -> anyhow::Result<u8> {
    let figure =
        loam::plot::wrench::WrenchSlices::load(&args.file).map_err(|e| BadInput(e.to_string()))?;
    let out = args.out.unwrap_or_else(|| {
        let stem = args.file.file_stem().unwrap_or_default().to_string_lossy();
        std::path::Path::new("runs/wrench-space").join(&*stem)
    });
    for file in loam::plot::save(&figure, &out.join("wrench_slices"), Default::default())? {
        println!("{}", file.display());
    }
    Ok(0)
}

/// The grid 0, −step, …, −max (or +), to 12 decimals so that 3 × 0.01 is written 0.03.
fn grid(flag: &str, max: f64, step: f64, sign: f64) -> Result<Vec<f64>, BadInput> {
    let count = max / step;
    if !(max.is_finite() && step.is_finite() && max > 0.0 && step > 0.0)
        || (count - count.round()).abs() > 1e-9 * count.max(1.0)
    {
        return Err(BadInput(format!(
            "--{flag}-max {max} and --{flag}-step {step}: both must be > 0 and the step must \
             divide the maximum"
        )));
    }
    Ok((0..=count.round() as usize)
        .map(|k| sign * (k as f64 * step * 1e12).round() / 1e12 + 0.0)
        .collect())
}

/// The directions of `--directions FILE` (a list of triples, or a file's `directions`), or
/// the sphere of `--rings`.
fn build_directions(args: &BuildArgs) -> anyhow::Result<Vec<[f64; 3]>> {
    let Some(path) = &args.directions else {
        if args.rings == 0 {
            return Err(BadInput("--rings must be >= 1".into()).into());
        }
        return Ok(sphere_directions(args.rings));
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("--directions {}: cannot read: {e}", path.display())))?;
    let refuse = |message: String| BadInput(format!("--directions {}: {message}", path.display()));
    let tree: serde_yaml::Value =
        serde_yaml::from_str(&text).map_err(|e| refuse(format!("not YAML ({e})")))?;
    let list = match tree.get("directions") {
        Some(list) => list.clone(),
        None if tree.is_sequence() => tree,
        None => {
            return Err(refuse(
                "expected a list of [x, z, omega] triples, or a file with `directions:`".into(),
            )
            .into())
        }
    };
    let directions: Vec<[f64; 3]> = serde_yaml::from_value(list)
        .map_err(|e| refuse(format!("each direction is [x, z, omega] ({e})")))?;
    // Checked now, not after minutes of DEM runs.
    loam::terrain::wrench_space::data::check_directions(&directions)
        .map_err(|e| refuse(e.to_string()))?;
    Ok(directions)
}

fn build(args: BuildArgs) -> anyhow::Result<u8> {
    let directions = build_directions(&args)?;
    let depths = grid("depth", args.depth_max, args.depth_step, -1.0)?;
    let tilts = grid("tilt", args.tilt_max, args.tilt_step, 1.0)?;
    let kernel = match args.kernel {
        KernelName::Cubic => Kernel::Cubic,
        KernelName::PaperLinear => Kernel::PaperLinear,
        KernelName::PaperGaussian => Kernel::PaperGaussian,
    };
    let foot = Foot {
        width: args.foot_width,
        height: args.foot_height,
        thickness: args.foot_thickness,
    };
    let velocity_scale = [
        args.velocity_scale[0],
        args.velocity_scale[1],
        args.velocity_scale[2],
    ];
    let generate = match args.generator {
        Generator::Rft => build_rft,
        Generator::Dem => build_dem,
    };
    let data = generate(
        &args,
        foot,
        velocity_scale,
        directions,
        &depths,
        &tilts,
        kernel,
    )?;
    // Validate and fit before writing: nothing is written for data the model refuses.
    let space = WrenchSpace::from_data(data).map_err(|e| BadInput(e.to_string()))?;
    loam::output::write_atomic(&args.out, space.data().to_yaml().as_bytes())?;
    println!("wrote {}", args.out.display());
    print_summary(&space);
    Ok(0)
}

fn build_rft(
    args: &BuildArgs,
    foot: Foot,
    velocity_scale: [f64; 3],
    directions: Vec<[f64; 3]>,
    depths: &[f64],
    tilts: &[f64],
    kernel: Kernel,
) -> anyhow::Result<WrenchSpaceData> {
    if args.bed.is_some() {
        return Err(BadInput("--bed applies to --generator dem only".into()).into());
    }
    let medium = match (
        args.medium.unwrap_or(MediumName::PoppySeedsLoose),
        args.zeta,
    ) {
        (MediumName::Generic, Some(zeta)) if zeta.is_finite() && zeta > 0.0 => {
            Medium::Generic { zeta }
        }
        (MediumName::Generic, _) => {
            return Err(BadInput("--medium generic needs --zeta > 0 [N/cm³]".into()).into())
        }
        (_, Some(_)) => {
            return Err(BadInput("--zeta applies to --medium generic only".into()).into())
        }
        (MediumName::PoppySeedsLoose, None) => Medium::PoppySeedsLoose,
        (MediumName::PoppySeedsClosePacked, None) => Medium::PoppySeedsClosePacked,
    };
    if args.segments == 0 {
        return Err(BadInput("--segments must be >= 1".into()).into());
    }
    let model = RftModel {
        medium,
        foot,
        torque_point: args.torque_point,
        velocity_scale,
        directions,
        segments: args.segments,
    };
    let mut data = model.generate(depths, tilts, kernel);
    if let Some(name) = &args.medium_name {
        data.medium = name.clone();
    }
    Ok(data)
}

/// The paper's protocol on the DEM, one run after another (the CPU backend already uses every
/// core within a run), with the cost estimated before the first run and a line per run.
fn build_dem(
    args: &BuildArgs,
    foot: Foot,
    velocity_scale: [f64; 3],
    directions: Vec<[f64; 3]>,
    depths: &[f64],
    tilts: &[f64],
    kernel: Kernel,
) -> anyhow::Result<WrenchSpaceData> {
    if args.medium.is_some() || args.zeta.is_some() {
        return Err(BadInput(
            "--medium and --zeta apply to --generator rft only; the dem \
                             generator's medium is the bed's (--bed)"
                .into(),
        )
        .into());
    }
    let path = args.bed.as_ref().ok_or_else(|| {
        BadInput(
            "--generator dem needs --bed BED.bed, a bed checkpoint written by \
             `loam dem prepare SCENE.yaml` (e.g. problems/beds/poppy_bed_small.yaml)"
                .into(),
        )
    })?;
    let bed = Checkpoint::load(path).map_err(|e| BadInput(format!("--bed: {e}")))?;
    if !velocity_scale.iter().all(|s| *s > 0.0 && s.is_finite()) {
        return Err(BadInput(format!(
            "--velocity-scale {velocity_scale:?}: each scale must be positive"
        ))
        .into());
    }
    let protocol = DemProtocol {
        foot,
        torque_point: args.torque_point,
        velocity_scale,
        directions,
        duration: args.t_total,
        window: args
            .filter_window
            .unwrap_or(dem::DEFAULT_WINDOW_FRACTION * args.t_total),
        approach_speed: args.approach_speed,
        start_height: args.start_height,
    };
    protocol
        .check(&bed, depths, tilts)
        .map_err(|e| BadInput(e.to_string()))?;
    let (runs, steps) = protocol.grid_steps(&bed, depths, tilts);
    let per_step = protocol.time_per_step(&mut CpuBackend::new(), &bed, depths, tilts)?;
    eprintln!(
        "dem: {runs} runs ({} depths below the surface x {} tilts x {} directions), {steps} \
         steps of {:.2e} s on {} grains; measured {:.2} ms per step here, so about {:.1} min",
        depths.iter().filter(|d| **d < 0.0).count(),
        tilts.len(),
        protocol.directions.len(),
        bed.scene.time_step(),
        bed.grains.len(),
        1e3 * per_step,
        steps as f64 * per_step / 60.0
    );
    let name = path
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let medium = args
        .medium_name
        .clone()
        .unwrap_or_else(|| format!("dem_{name}"));
    let started = Instant::now();
    let mut report = |r: &dem::RunReport| {
        let w = r.reading.wrench;
        let elapsed = started.elapsed().as_secs_f64();
        eprintln!(
            "run {}/{}: d {} m, tilt {} rad, direction {:2} -> F_x {:8.3} N, F_z {:8.3} N, \
             tau {:8.4} N m  ({:.0} s, about {:.0} s left)",
            r.done,
            r.runs,
            r.depth,
            r.tilt,
            r.direction,
            w[0],
            w[1],
            w[2],
            elapsed,
            elapsed / r.done as f64 * (r.runs - r.done) as f64
        );
    };
    let mut backend = CpuBackend::new();
    let bed_name = path.display().to_string();
    let data = protocol.generate(
        &mut backend,
        &bed,
        &bed_name,
        medium,
        depths,
        tilts,
        kernel,
        &mut report,
    )?;
    Ok(data)
}

fn run_import(args: ImportArgs) -> anyhow::Result<u8> {
    let mut header = read_header(&args.header)?;
    header.interpolation.mirror_average |= args.mirror_average;
    let csv = std::fs::read_to_string(&args.csv)
        .map_err(|e| BadInput(format!("could not read {}: {e}", args.csv.display())))?;
    let options = import::ImportOptions {
        allow_missing_nodes: args.allow_missing_nodes,
        flip_x: args.flip_x,
    };
    let mut data = import::import_with(header, &csv, &args.csv, options)?;
    if let Some(path) = &args.weights {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BadInput(format!("could not read {}: {e}", path.display())))?;
        import::attach_weights(&mut data, &text, path)?;
    }
    let space = WrenchSpace::from_data(data).map_err(|e| {
        // A complaint about the given weights is about the weights' file.
        let about_weights = matches!(
            &e,
            loam::terrain::wrench_space::WrenchSpaceError::Invalid { field: Some(f), .. }
                if f.starts_with("rbf_weights")
        );
        match (&args.weights, about_weights) {
            (Some(weights), true) => e.in_file(weights),
            _ => e.in_file(&args.csv),
        }
    })?;
    loam::output::write_atomic(&args.out, space.data().to_yaml().as_bytes())?;
    println!("wrote {}", args.out.display());
    print_summary(&space);
    Ok(0)
}

/// A header is a data file without nodes: read it as one, and refuse nodes in it.
fn read_header(path: &std::path::Path) -> anyhow::Result<WrenchSpaceData> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("could not read {}: {e}", path.display())))?;
    let header: WrenchSpaceData = loam::problem::load_yaml(&text).map_err(|e| {
        let line = e.line.map(|l| format!(":{l}")).unwrap_or_default();
        let field = e.field.map(|f| format!(": {f}")).unwrap_or_default();
        BadInput(format!("{}{line}{field}: {}", path.display(), e.message))
    })?;
    if !header.nodes.is_empty() {
        return Err(BadInput(format!(
            "{}: nodes: a header has no nodes (they come from the CSV)",
            path.display()
        ))
        .into());
    }
    // A data file may leave its directions to the default (the paper's 26); measured data
    // must say which directions their CSV's indices mean.
    let tree: serde_yaml::Value = serde_yaml::from_str(&text).unwrap_or_default();
    let mut header = header;
    // Measured data are not averaged unless the header (or --mirror-average) asks for it.
    if tree
        .get("interpolation")
        .and_then(|i| i.get("mirror_average"))
        .is_none()
    {
        header.interpolation.mirror_average = false;
    }
    if tree.get("directions").is_none() {
        return Err(BadInput(format!(
            "{}: directions: missing; a header must list the unit velocity directions (x, z, \
             omega) its CSV's direction indices refer to, in order (the default, the paper's \
             26, would be a guess)",
            path.display()
        ))
        .into());
    }
    Ok(header)
}

fn info(args: InfoArgs) -> anyhow::Result<u8> {
    let space = WrenchSpace::load(&args.file)?;
    println!("{}", args.file.display());
    print_summary(&space);
    Ok(0)
}

fn print_summary(space: &WrenchSpace) {
    let data = space.data();
    let (d_min, d_max) = space.depth_range();
    let (_, tilt_max) = space.tilt_range();
    let largest = |c: usize| {
        data.nodes
            .iter()
            .flat_map(|n| n.wrenches.iter().map(move |w| w[c].abs()))
            .fold(0.0, f64::max)
    };
    let pairs = space
        .mirror()
        .iter()
        .enumerate()
        .filter(|(i, &p)| *i < p)
        .count();
    let selves = space
        .mirror()
        .iter()
        .enumerate()
        .filter(|(i, &p)| *i == p)
        .count();
    println!("  medium          {}", data.medium);
    println!(
        "  generator       {} ({})",
        data.provenance.generator,
        data.provenance
            .parameters
            .iter()
            .map(|(k, v)| format!("{k}: {}", without_float_noise(v)))
            .collect::<Vec<_>>()
            .join("; ")
    );
    println!(
        "  foot            {} x {} m, {} m out of plane; torque point {} m up the axis",
        data.foot.width, data.foot.height, data.foot.thickness, data.torque_point
    );
    println!(
        "  directions      {} (mirror-closed: {pairs} pairs, {selves} self-mirrored); velocity \
         scale ({}, {}, {})",
        space.n_directions(),
        data.velocity_scale[0],
        data.velocity_scale[1],
        data.velocity_scale[2]
    );
    let pair_list: Vec<String> = space
        .mirror()
        .iter()
        .enumerate()
        .filter(|(i, &p)| *i <= p)
        .map(|(i, &p)| match i == p {
            true => format!("{i}"),
            false => format!("{i}-{p}"),
        })
        .collect();
    println!(
        "  mirror pairs    {} (S_v u_i = u_j for each i-j; a lone index is its own mirror)",
        pair_list.join(" ")
    );
    println!(
        "  nodes           {} in the file (tilt >= 0), {} with mirrors",
        data.nodes.len(),
        data.nodes.len() + data.nodes.iter().filter(|n| n.tilt > 0.0).count()
    );
    println!("  depth range     {d_min} .. {d_max} m (zero above 0)");
    println!("  tilt range      -{tilt_max} .. {tilt_max} rad");
    let (deepest, next) = space.layers().depth;
    match space.beyond_data() {
        BeyondData::Clamp => {
            println!("  beyond the data clamp: a query outside the box above is moved into it")
        }
        BeyondData::Extrapolate => println!(
            "  beyond the data extrapolate: deeper than {deepest} m linearly from the layers \
             {deepest} and {next} m; tilts to +-pi/2 by {}",
            match space.fitted_rft() {
                Some(rft) => match rft.medium {
                    Medium::Generic { zeta } => format!(
                        "the change of the generic RFT medium fitted to the data, zeta = {zeta:.4} N/cm^3"
                    ),
                    other => format!("the change of the RFT medium {}", other.name()),
                },

                None => format!(
                    "the linear extension from the layers {} and {} rad (no RFT medium fits)",
                    space.layers().tilt.0,
                    space.layers().tilt.1
                ),
            }
        ),
    }
    println!(
        "  largest         |F_x| {:.4} N, |F_z| {:.4} N, |tau| {:.4} N m",
        largest(0),
        largest(1),
        largest(2)
    );
    println!(
        "  interpolation   {}{}",
        data.interpolation.kernel.name(),
        match data.rbf_weights.is_empty() {
            true => ", fitted to the nodes",
            false => ", the weights that came with the data (they reproduce every node)",
        }
    );
    let asymmetries = space.untilted_asymmetries();
    let per_node = asymmetries
        .iter()
        .filter(|(_, a)| *a > 0.0)
        .map(|(d, a)| match 0.5 * a {
            change if change >= 1e-3 => format!("d {d}: {change:.4}"),
            change => format!("d {d}: {change:.1e}"),
        })
        .collect::<Vec<_>>();
    let moved = match per_node.len() {
        0 => "no node moved (the data are mirror-symmetric at tilt 0)".to_owned(),
        _ => format!(
            "largest change per node [N or N m]: {}",
            per_node.join(", ")
        ),
    };
    match data.interpolation.mirror_average {
        true => println!(
            "  mirror average  on: tilt-0 wrenches replaced by 1/2 (w_i + S w_pi(i)); {moved}"
        ),
        false => println!(
            "  mirror average  off: tilt-0 wrenches as measured (asymmetry {:.4}, half of it \
             is what averaging would move); the interpolant passes through every node",
            space.untilted_asymmetry()
        ),
    }
    let holes = import::grid_holes(data.nodes.iter());
    println!(
        "  missing nodes   {}",
        match holes.len() {
            0 => "none (the nodes fill the grid of their depths x tilts)".to_owned(),
            _ => holes
                .iter()
                .map(|(d, t)| format!("(d = {d}, tilt = {t})"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    );
    match concavity(data) {
        Ok(Some((average, worst, (d, t), count))) => println!(
            "  concavity       average {average:.6e}, worst {worst:.6e} at (d = {d}, tilt = \
             {t}), over the {count} nodes below the surface as given (Table II: per node the \
             largest slack of a wrench with |w| >= {TABLE_II_MIN_NORM} to the nearest facet of \
             conv({{0}} and the node's wrenches), over its |w|)"
        ),
        Ok(None) => println!("  concavity       no node below the surface"),
        Err(e) => println!("  concavity       not computed: {e}"),
    }
}

/// The paper's Table II concavity of the data's nodes below the surface, as given: (average,
/// worst, the worst node's (d, φ), the node count); `None` without such nodes.
#[allow(clippy::type_complexity)]
fn concavity(
    data: &WrenchSpaceData,
) -> Result<Option<(f64, f64, (f64, f64), usize)>, loam::terrain::hull::HullError> {
    let mut values = Vec::new();
    for node in data.nodes.iter().filter(|n| n.depth < 0.0) {
        values.push((
            hull::concavity(&node.wrenches, TABLE_II_MIN_NORM)?,
            (node.depth, node.tilt),
        ));
    }
    let Some(&(worst, at)) = values.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        return Ok(None);
    };
    let average = values.iter().map(|v| v.0).sum::<f64>() / values.len() as f64;
    Ok(Some((average, worst, at, values.len())))
}

/// `text` with every number written with more than 12 significant digits (a generator's
/// provenance records `0.06760000000000001`, the product 0.4 x 0.169) rounded to 12.
fn without_float_noise(text: &str) -> String {
    let shorten = |token: &str| -> String {
        let digits = token.chars().filter(char::is_ascii_digit).count();
        match token.parse::<f64>() {
            Ok(x) if digits > 12 && x.is_finite() && x != 0.0 => {
                let decimals = (11 - x.abs().log10().floor() as i32).max(0) as usize;
                let rounded = format!("{x:.decimals$}");
                let rounded = rounded.trim_end_matches('0').trim_end_matches('.');
                rounded.to_owned()
            }
            _ => token.to_owned(),
        }
    };
    let mut out = String::new();
    let mut token = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | 'E' | '+') {
            token.push(c);
        } else {
            out.push_str(&shorten(&token));
            token.clear();
            out.push(c);
        }
    }
    out.push_str(&shorten(&token));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn float_noise_is_rounded_and_other_text_kept() {
        assert_eq!(
            super::without_float_noise(
                "A10 0.06760000000000001, B-11 0.022000000000000002, C11 -0.049600000000000005, \
                 D10 0.0352, medium: generic_zeta_0.4; segments 40, 1e-7"
            ),
            "A10 0.0676, B-11 0.022, C11 -0.0496, D10 0.0352, medium: generic_zeta_0.4; \
             segments 40, 1e-7"
        );
    }
}
