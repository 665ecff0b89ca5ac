//! `loam robot info|check|draw|export`: robot files (`robots/*.yaml`, docs/ROBOTS.md).

use std::path::{Path, PathBuf};

use loam::model::planar::description::RobotDescription;
use loam::model::planar::{MonopodParams, PlanarFootParams, PlanarRobot, QuadrupedParams};

use super::BadInput;

#[derive(clap::Subcommand)]
pub enum RobotCommand {
    /// Bodies, degrees of freedom, joints with their limits, actuators, contacts, total mass
    /// and centre of mass in the standing posture.
    Info(FileArgs),
    /// Validate a robot file: exit 0 and one line, or exit 2 naming file, line and field.
    Check(FileArgs),
    /// Draw the robot in its standing posture (PNG and SVG).
    Draw(DrawArgs),
    /// Write a shipped preset (planar_foot, monopod, quadruped) as a robot file to edit.
    Export(ExportArgs),
    /// Import a URDF into the sagittal plane as a robot file (docs/ROBOTS.md, "From a URDF").
    Import(ImportArgs),
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The URDF file.
    pub urdf: PathBuf,
    /// The plane to keep: only `xz` (the sagittal plane; joints must turn about y or slide
    /// in the plane).
    #[arg(long, default_value = "xz")]
    pub plane: String,
    /// The robot file to write (refused if it exists unless --force); default: standard
    /// output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The robot's name; default: the URDF's.
    #[arg(long)]
    pub name: Option<String>,
    /// Overwrite the output file.
    #[arg(long)]
    pub force: bool,
}

#[derive(clap::Args)]
pub struct FileArgs {
    /// A robot file (YAML), or a preset's name (planar_foot, monopod, quadruped).
    pub file: PathBuf,
    /// Override a field of the robot file: --set bodies.1.mass=2 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub overrides: Vec<String>,
    /// g [m/s²] the robot is built under.
    #[arg(long, default_value_t = 9.81)]
    pub gravity: f64,
}

#[derive(clap::Args)]
pub struct DrawArgs {
    #[command(flatten)]
    pub robot: FileArgs,
    /// Folder for `<name>.png` and `<name>.svg`. Default runs/robots/.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    /// planar_foot, monopod or quadruped (with their default parameters).
    pub preset: String,
    /// Where to write the robot file; default: standard output.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

pub fn run(command: RobotCommand) -> anyhow::Result<u8> {
    match command {
        RobotCommand::Info(args) => {
            let robot = load(&args)?;
            print!("{}", describe(&robot));
            Ok(0)
        }
        RobotCommand::Check(args) => {
            let robot = load(&args)?;
            println!(
                "{}: ok (robot `{}`: {} bodies, {} degrees of freedom, {} actuators, {} contacts)",
                args.file.display(),
                robot.name,
                robot.body.bodies.len(),
                robot.n_q(),
                robot.inputs.len(),
                robot.contacts.len()
            );
            Ok(0)
        }
        RobotCommand::Draw(args) => {
            let robot = load(&args.robot)?;
            let dir = args.out.unwrap_or_else(|| PathBuf::from("runs/robots"));
            std::fs::create_dir_all(&dir).map_err(|e| {
                anyhow::Error::new(e).context(format!("cannot create {}", dir.display()))
            })?;
            let figure = loam::plot::RobotDrawing {
                robot: &robot,
                q: robot.standing.clone(),
            };
            let written = loam::plot::save(
                &figure,
                &dir.join(&robot.name),
                loam::plot::Formats::default(),
            )?;
            for path in written {
                println!("{}", path.display());
            }
            Ok(0)
        }
        RobotCommand::Import(args) => {
            if args.plane != "xz" {
                return Err(BadInput(format!(
                    "--plane {}: accepted: xz (the sagittal plane)",
                    args.plane
                ))
                .into());
            }
            let text = std::fs::read_to_string(&args.urdf).map_err(|e| {
                BadInput(format!(
                    "{}: cannot read the URDF: {e}",
                    args.urdf.display()
                ))
            })?;
            let description = loam::model::planar::urdf::import(&text, args.name.as_deref())
                .map_err(|e| BadInput(format!("{}: {e}", args.urdf.display())))?;
            let yaml = format!(
                "# Imported by `loam robot import` from {} into the x-z plane.\n{}",
                args.urdf.display(),
                loam::problem::robot_yaml(&description)
            );
            match args.output {
                Some(path) => {
                    if path.exists() && !args.force {
                        return Err(BadInput(format!(
                            "{} exists; pass --force to overwrite it",
                            path.display()
                        ))
                        .into());
                    }
                    loam::output::write_atomic(&path, yaml.as_bytes())?;
                    println!("wrote {}", path.display());
                }
                None => print!("{yaml}"),
            }
            Ok(0)
        }
        RobotCommand::Export(args) => {
            let robot = preset(&args.preset, 9.81).ok_or_else(|| {
                BadInput(format!(
                    "unknown preset `{}`; accepted: planar_foot, monopod, quadruped",
                    args.preset
                ))
            })?;
            let text = loam::problem::robot_yaml(&RobotDescription::from_robot(&robot));
            match args.output {
                Some(path) => loam::output::write_atomic(&path, text.as_bytes())?,
                None => print!("{text}"),
            }
            Ok(0)
        }
    }
}

/// A shipped preset with its default parameters.
fn preset(name: &str, gravity: f64) -> Option<PlanarRobot> {
    Some(match name {
        "planar_foot" => PlanarFootParams::default().build(gravity),
        "monopod" => MonopodParams::default().build(gravity),
        "quadruped" => QuadrupedParams::default().build(gravity),
        _ => None?,
    })
}

fn load(args: &FileArgs) -> anyhow::Result<PlanarRobot> {
    if !args.file.exists() && args.overrides.is_empty() {
        if let Some(robot) = args.file.to_str().and_then(|n| preset(n, args.gravity)) {
            return Ok(robot);
        }
    }
    let description = loam::problem::load_robot(Path::new(&args.file), &args.overrides)?;
    let robot = description.build(args.gravity);
    robot
        .validate()
        .map_err(|e| BadInput(format!("{}: {e}", args.file.display())))?;
    Ok(robot)
}

fn limits(c: &loam::model::planar::Channel) -> String {
    let mut parts = Vec::new();
    let (lo, hi) = c.position_limit;
    if lo.is_finite() || hi.is_finite() {
        parts.push(format!("position [{lo}, {hi}] {}", c.unit));
    }
    if c.velocity_limit.is_finite() {
        parts.push(format!("|velocity| <= {} {}/s", c.velocity_limit, c.unit));
    }
    if parts.is_empty() {
        "unlimited".into()
    } else {
        parts.join(", ")
    }
}

/// The text `loam robot info` prints.
fn describe(robot: &PlanarRobot) -> String {
    let body = &robot.body;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "robot `{}`: {} bodies, {} degrees of freedom (x, z, pitch and {} joints), {} actuators, {} contacts",
        robot.name,
        body.bodies.len(),
        robot.n_q(),
        body.bodies.len() - 1,
        robot.inputs.len(),
        robot.contacts.len()
    ));
    let q = &robot.standing;
    let com = body.centre_of_mass(q);
    line(format!(
        "total mass {} kg; centre of mass in the standing posture (x, z) = ({:.4}, {:.4}) m",
        body.total_mass(),
        com[0],
        com[1]
    ));
    line("bodies:".into());
    for (b, spec) in body.bodies.iter().enumerate() {
        let joint = match &spec.joint {
            None => "floating base (x, z, pitch)".to_string(),
            Some(joint) => {
                let c = &robot.coordinates[b + 2];
                let kind = match joint.kind {
                    loam::model::multibody::JointKind::Revolute => "revolute".to_string(),
                    loam::model::multibody::JointKind::Prismatic { axis } => {
                        format!("prismatic along [{}, {}]", axis[0], axis[1])
                    }
                };
                format!(
                    "joint `{}` ({kind}) on `{}`, {}",
                    c.name,
                    body.bodies[joint.parent].name,
                    limits(c)
                )
            }
        };
        line(format!(
            "  {:<16} {:>9} kg  I {:>9} kg m²  {joint}",
            spec.name, spec.mass, spec.inertia
        ));
    }
    line("actuators:".into());
    for input in &robot.inputs {
        line(format!(
            "  {:<22} on `{}`, [{}, {}] {}",
            input.name,
            robot.coordinates[input.coordinate].name,
            input.limit.0,
            input.limit.1,
            input.unit
        ));
    }
    if !robot.springs.is_empty() {
        line("springs:".into());
        for s in &robot.springs {
            line(format!(
                "  on `{}`: stiffness {}, damping {}, rest {}",
                robot.coordinates[s.coordinate].name, s.stiffness, s.damping, s.rest
            ));
        }
    }
    line("contacts (in the standing posture):".into());
    for c in &robot.contacts {
        let p = robot.contact_point(q, robot.contact(&c.name).unwrap_or(0));
        let shape = match (c.half_width > 0.0, c.radius) {
            (true, _) => format!("sole of half width {} m", c.half_width),
            (false, Some(r)) => format!("point, its footprint a disc of radius {r} m"),
            (false, None) => "point".into(),
        };
        line(format!(
            "  {:<16} on `{}`, {shape}, at (x, z) = ({:.4}, {:.4}) m",
            c.name, body.bodies[c.body].name, p[0], p[1]
        ));
    }
    out
}
