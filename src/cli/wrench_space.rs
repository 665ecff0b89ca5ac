//! `loam wrench-space build|import|info`: make, read in and describe wrench-space data files
//! (docs/WRENCH_SPACE.md, "Implemented").

use std::path::PathBuf;

use loam::terrain::wrench_space::data::{sphere_directions, Foot, WrenchSpaceData};
use loam::terrain::wrench_space::{import, Kernel, Medium, RftModel, WrenchSpace};

use super::BadInput;

#[derive(clap::Subcommand)]
pub enum WrenchSpaceCommand {
    /// Compute a data file with a generator (RFT) on a grid of depths and tilts.
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
    /// Where the figures go (default: plots/ next to the file's name, e.g.
    /// rft_sand_like-plots/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Generator {
    /// Resistive force theory on the rectangular foot (analytic). The `dem` generator is not
    /// written yet (it needs DEM bodies that rotate).
    Rft,
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
    #[arg(long, value_enum, default_value = "poppy-seeds-loose")]
    pub medium: MediumName,
    /// ζ = α_z(0, π/2) of a `generic` medium [N/cm³] (0.4: the spec's Sand-like test medium).
    #[arg(long)]
    pub zeta: Option<f64>,
    /// The name written in the file's `medium` field (default: the medium's).
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
    #[arg(long, default_value_t = 3)]
    pub rings: usize,
    /// Segments per side of the foot's outline.
    #[arg(long, default_value_t = 40)]
    pub segments: usize,
    #[arg(long, value_enum, default_value = "cubic")]
    pub kernel: KernelName,
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
        args.file.with_file_name(format!("{stem}-plots"))
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

fn build(args: BuildArgs) -> anyhow::Result<u8> {
    let Generator::Rft = args.generator;
    let medium = match (args.medium, args.zeta) {
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
    if args.segments == 0 || args.rings == 0 {
        return Err(BadInput("--segments and --rings must be >= 1".into()).into());
    }
    let depths = grid("depth", args.depth_max, args.depth_step, -1.0)?;
    let tilts = grid("tilt", args.tilt_max, args.tilt_step, 1.0)?;
    let kernel = match args.kernel {
        KernelName::Cubic => Kernel::Cubic,
        KernelName::PaperLinear => Kernel::PaperLinear,
        KernelName::PaperGaussian => Kernel::PaperGaussian,
    };
    let model = RftModel {
        medium,
        foot: Foot {
            width: args.foot_width,
            height: args.foot_height,
            thickness: args.foot_thickness,
        },
        torque_point: args.torque_point,
        velocity_scale: [
            args.velocity_scale[0],
            args.velocity_scale[1],
            args.velocity_scale[2],
        ],
        directions: sphere_directions(args.rings),
        segments: args.segments,
    };
    let mut data = model.generate(&depths, &tilts, kernel);
    if let Some(name) = args.medium_name {
        data.medium = name;
    }
    // Validate and fit before writing: nothing is written for data the model refuses.
    let space = WrenchSpace::from_data(data).map_err(|e| BadInput(e.to_string()))?;
    loam::output::write_atomic(&args.out, space.data().to_yaml().as_bytes())?;
    println!("wrote {}", args.out.display());
    print_summary(&space);
    Ok(0)
}

fn run_import(args: ImportArgs) -> anyhow::Result<u8> {
    let header = read_header(&args.header)?;
    let csv = std::fs::read_to_string(&args.csv)
        .map_err(|e| BadInput(format!("could not read {}: {e}", args.csv.display())))?;
    let data = import::import(header, &csv, &args.csv)?;
    let space = WrenchSpace::from_data(data).map_err(|e| e.in_file(&args.csv))?;
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
            .map(|(k, v)| format!("{k}: {v}"))
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
    println!(
        "  nodes           {} in the file (tilt >= 0), {} with mirrors",
        data.nodes.len(),
        data.nodes.len() + data.nodes.iter().filter(|n| n.tilt > 0.0).count()
    );
    println!("  depth range     {d_min} .. {d_max} m (clamped outside, zero above 0)");
    println!("  tilt range      -{tilt_max} .. {tilt_max} rad (clamped outside)");
    println!(
        "  largest         |F_x| {:.4} N, |F_z| {:.4} N, |tau| {:.4} N m",
        largest(0),
        largest(1),
        largest(2)
    );
    println!(
        "  interpolation   {}; mirror asymmetry at tilt 0 averaged away: {:.3e}",
        data.interpolation.kernel.name(),
        space.untilted_asymmetry()
    );
}
