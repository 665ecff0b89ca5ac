//! Replaying a run folder's plan in the reduced-order simulator (`sim::planar`) or the MDP
//! simulator and writing the replay beside it: `loam simulate RUN_DIR [--terrain ...]`. The
//! DEM backends stay in the command line (`src/cli/simulate_dem.rs`).

use std::path::{Path, PathBuf};

use super::ApiError;
use crate::output::identity;
use crate::output::run;
use crate::problem;
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use crate::sim::planar;

/// How to replay (the flags of `loam simulate`).
#[derive(Clone, Debug)]
pub struct SimulateOptions {
    /// Another ground: a preset (`rigid`, `poppy_seeds`) or a problem file whose `terrain`
    /// section is used; `None`, the plan's own.
    pub terrain: Option<String>,
    /// The hopper's integrator: relative and absolute tolerances of its error control.
    pub rtol: f64,
    pub atol: f64,
    /// A planar robot's replay stops after this many integrator steps (written, marked
    /// incomplete).
    pub max_steps: usize,
    /// A periodic plan (a gait) is replayed this many times over, each period measured
    /// against the plan; `None`: enough periods to run three strides
    /// (`PlanarTask::replay_periods`). Only a periodic plan takes more than 1.
    pub strides: Option<usize>,
    /// Which simulator replays: by default the one the ground asks for.
    pub simulator: Simulator,
    /// The MDP simulator's longest step \[s\] (`None`: 1 ms); each interval of the plan is
    /// cut into equal steps no longer.
    pub mdp_step: Option<f64>,
}

/// The simulator of a replay (`loam simulate --backend`, the DEM's aside).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Simulator {
    /// The MDP simulator on a wrench-space terrain, the reduced-order model on any other.
    #[default]
    Auto,
    /// The reduced-order model with event detection: rigid ground, a bed, a spring ground.
    Reduced,
    /// The maximum-dissipation simulator (`sim::mdp`): a planar robot on a wrench space.
    Mdp,
}

impl Default for SimulateOptions {
    /// `loam simulate`'s defaults.
    fn default() -> Self {
        SimulateOptions {
            terrain: None,
            rtol: 1e-10,
            atol: 1e-12,
            max_steps: planar::ReplaySettings::default().max_steps,
            strides: None,
            simulator: Simulator::Auto,
            mdp_step: None,
        }
    }
}

/// A replay written into its run folder.
#[derive(Clone, Debug)]
pub struct Simulated {
    /// The files' stem: `replay` on the plan's own ground, `replay-on-...` on another.
    pub stem: String,
    /// The replay's samples (`<stem>.csv`) and its comparison with the plan (`<stem>.json`).
    pub csv: PathBuf,
    pub json: PathBuf,
    /// Whether the replay did what it had to: the hopper reached an apex, a planar robot's
    /// replay the plan's end. `loam simulate` exits 1 when it did not.
    pub complete: bool,
    /// What the replay measured (`<stem>.json`'s body).
    pub summary: planar::PlanarReplaySummary,
}

/// Replays the plan in `run_dir` and writes `<stem>.csv` and `<stem>.json` there.
pub fn simulate(run_dir: &Path, options: &SimulateOptions) -> Result<Simulated, ApiError> {
    if is_former_hopper_run(run_dir) {
        return Err(ApiError::BadInput(format!(
            "{}: a plan of loam's former hopper planner, which no longer replays; solve its \
             problem again as a robot file (problems/hopper_granular.yaml is the paper's jump \
             written so)",
            run_dir.display()
        )));
    }
    simulate_planar(run_dir, options)
}

fn written(
    run_dir: &Path,
    stem: &str,
    complete: bool,
    summary: planar::PlanarReplaySummary,
) -> Simulated {
    Simulated {
        stem: stem.to_string(),
        csv: run_dir.join(format!("{stem}.csv")),
        json: run_dir.join(format!("{stem}.json")),
        complete,
        summary,
    }
}

/// What a terrain spec names, before it is read as one kind of robot's ground.
enum TerrainSpec<'a> {
    Rigid,
    Medium(problem::MediumPreset),
    File { path: &'a Path, stem: String },
}

/// A preset name, unless a file of that name exists, or a problem file.
fn terrain_spec(spec: &str) -> Result<TerrainSpec<'_>, ApiError> {
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
        return Err(ApiError::BadInput(format!(
            "terrain {spec}: not a terrain preset (accepted: rigid, poppy_seeds) nor a problem file"
        )));
    }
    let stem = path
        .file_stem()
        .map_or("terrain".into(), |s| s.to_string_lossy().into_owned());
    Ok(TerrainSpec::File { path, stem })
}

/// Whether `run_dir` holds a plan of loam's former hopper planner (its problem has `phases`).
pub fn is_former_hopper_run(run_dir: &Path) -> bool {
    std::fs::read_to_string(run_dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json["problem"].get("phases").is_some())
}

/// Whether `run_dir` holds a planar robot's plan (its problem has a `schedule`).
pub fn is_planar_run(run_dir: &Path) -> bool {
    std::fs::read_to_string(run_dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json["problem"].get("schedule").is_some())
}

/// A planar run folder's plan: its problem, robot, nodes and identity (`solution.json` and
/// `trajectory.csv` checked to be one plan). Read by every replay of a planar plan.
pub struct SavedPlanarPlan {
    pub problem: PlanarProblem,
    pub robot: crate::model::planar::PlanarRobot,
    pub table: planar::PlanTable,
    pub plan_id: String,
    /// A wrench-space plan's data file as the run recorded it (`provenance.data_files`): its
    /// path and SHA-256.
    pub wrench_data: Option<(PathBuf, String)>,
}

/// Reads a planar run folder's plan; a folder that is not one is bad input naming the file.
pub fn read_planar_run(run_dir: &Path) -> Result<SavedPlanarPlan, ApiError> {
    let bad = |message: String| ApiError::BadInput(message);
    let files = run::read_plan_files(run_dir).map_err(|e| bad(e.to_string()))?;
    let problem: PlanarProblem =
        serde_json::from_value(files.json["problem"].clone()).map_err(|e| {
            bad(format!(
                "{}: `problem` is not a planar problem: {e}",
                files.solution_path.display()
            ))
        })?;
    let robot = problem.robot.build(problem.gravity);
    let csv = String::from_utf8_lossy(&files.trajectory);
    let table = planar::read_plan(&csv, &robot)
        .map_err(|e| bad(format!("{}: {e}", files.trajectory_path.display())))?;
    let expected: usize = problem.schedule.iter().map(|p| p.nodes).sum();
    if table.t.len() != expected {
        return Err(bad(format!(
            "{}: {} nodes, but the plan's schedule has {expected}: the trajectory does not \
             belong to this solution.json",
            files.trajectory_path.display(),
            table.t.len()
        )));
    }
    let wrench_data = files.json["provenance"]["data_files"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["field"] == "terrain.data")
        .and_then(|d| {
            Some((
                PathBuf::from(d["path"].as_str()?),
                d["sha256"].as_str()?.to_string(),
            ))
        });
    Ok(SavedPlanarPlan {
        problem,
        robot,
        table,
        plan_id: files.plan_id,
        wrench_data,
    })
}

impl SavedPlanarPlan {
    /// How each of the robot's contacts meets DEM grains: the foot the plan's ground model
    /// puts under every contact where it has one (the added-mass model's disc of
    /// `foot_radius`; a wrench space's measured foot, when its data file is where the run
    /// recorded it), else the contact's own disc where the robot gives it a `radius` (a plan
    /// made on rigid ground meets the grains with the robot's real foot), else a box on the
    /// contact's sole (`sim::dem::planar::GrainFoot`).
    pub fn grain_feet(&self) -> Vec<crate::sim::dem::planar::GrainFoot> {
        use crate::sim::dem::planar::GrainFoot;
        // The data's foot, when the file is still where the run recorded it, unchanged.
        let measured = || {
            let (path, sha256) = self.wrench_data.as_ref()?;
            let bytes = std::fs::read(path).ok()?;
            if problem::sha256_hex(&bytes) != *sha256 {
                return None;
            }
            let space = crate::terrain::wrench_space::WrenchSpace::load(path).ok()?;
            let foot = &space.data().foot;
            Some(GrainFoot::Block {
                width: foot.width,
                height: foot.height,
                thickness: foot.thickness,
            })
        };
        // 5 mm thick, the hopper's foot disc (`DISC_FOOT_THICKNESS`).
        let disc = |radius| GrainFoot::Disc {
            radius,
            thickness: crate::sim::dem::planar::DISC_FOOT_THICKNESS,
        };
        let ground_foot = match &self.problem.terrain {
            PlanarTerrainConfig::WrenchSpace(_) => Some(measured().unwrap_or(GrainFoot::Box)),
            PlanarTerrainConfig::AddedMass(ground) => Some(disc(ground.radius())),
            _ => None,
        };
        self.robot
            .contacts
            .iter()
            .map(|c| ground_foot.unwrap_or_else(|| c.radius.map_or(GrainFoot::Box, disc)))
            .collect()
    }

    /// What a DEM replay of this plan measures as its apex: for a task with `apex_rise`, the
    /// rise of `apex_of` (the centre of mass without one), waiting up to 0.5 s past the plan's
    /// end for a higher hop's later apex.
    pub fn dem_apex(&self) -> Option<crate::sim::dem::planar::ApexTask> {
        self.problem
            .task
            .apex_rise
            .map(|_| crate::sim::dem::planar::ApexTask {
                body: self.problem.task.apex_body(&self.robot),
                wait: 0.5,
            })
    }
}

/// A planar plan's ground from a terrain spec: `rigid` or a medium preset with the plan's
/// friction, or a planar problem file's `terrain` (as that file states it), with the replay's
/// stem and, for a wrench space, the file its data are named relative to (its `data_sha256`
/// filled in, so that the stem's hash and the replay's summary cover the data).
///
/// A medium preset presses the plan's foot into the bed: its own bed's `foot_radius` where it
/// was planned on one, else the robot's feet's `radius`, else the default disc (the rule of a
/// problem file's `terrain.foot_radius`, [`AddedMassGroundConfig::fill_foot_radius`]).
fn planar_terrain(
    spec: &str,
    plan: &PlanarProblem,
) -> Result<(PlanarTerrainConfig, String, Option<PathBuf>), ApiError> {
    use crate::problem::planar::{AddedMassGroundConfig, RigidGroundConfig};
    let own = &plan.terrain;
    let friction = own
        .contact_model::<f64>()
        .map_or(RigidGroundConfig::default().friction, |m| {
            m.ground().friction
        });
    let (path, stem) = match terrain_spec(spec)? {
        TerrainSpec::Rigid => {
            let terrain = PlanarTerrainConfig::Rigid(RigidGroundConfig { friction });
            return Ok((terrain, "replay-on-rigid".into(), None));
        }
        TerrainSpec::Medium(medium) => {
            let mut bed = AddedMassGroundConfig {
                friction,
                medium,
                foot_radius: match own {
                    PlanarTerrainConfig::AddedMass(bed) => bed.foot_radius,
                    _ => None,
                },
                ..Default::default()
            };
            bed.fill_foot_radius(&plan.robot, plan.gravity);
            let terrain = PlanarTerrainConfig::AddedMass(bed);
            return Ok((terrain, format!("replay-on-{spec}"), None));
        }
        TerrainSpec::File { path, stem } => (path, stem),
    };
    let mut terrain = problem::load_any(path, &[])?.terrain;
    let data_file = match &mut terrain {
        PlanarTerrainConfig::WrenchSpace(ground) => {
            ground.data_sha256 = Some(super::wrench_data::wrench_data_sha256(path, ground)?);
            Some(path.to_path_buf())
        }
        _ => None,
    };
    let value = serde_json::to_value(&terrain).expect("a terrain serializes");
    Ok((
        terrain,
        format!("replay-on-{stem}-{}", identity::short_hash(&value)),
        data_file,
    ))
}

fn simulate_planar(run_dir: &Path, options: &SimulateOptions) -> Result<Simulated, ApiError> {
    let SavedPlanarPlan {
        mut problem,
        table,
        plan_id,
        wrench_data,
        ..
    } = read_planar_run(run_dir)?;
    let mut stem = "replay".to_string();
    let mut data_file = None;
    // A plan made on a wrench space, replayed on its own ground: the data file the run
    // recorded (unchanged since), its ground phases stepped as they were planned.
    let mut own_sand = None;
    if let (None, PlanarTerrainConfig::WrenchSpace(_)) = (&options.terrain, &problem.terrain) {
        let (path, sha256) = wrench_data.ok_or_else(|| {
            ApiError::BadInput(format!(
                "{}: the run records no wrench-space data file; name the ground: --terrain \
                 FILE (the problem file it was solved from)",
                run_dir.display()
            ))
        })?;
        let bytes = std::fs::read(&path).map_err(|e| {
            ApiError::BadInput(format!(
                "{}: its wrench space {}: {e}; name the ground: --terrain FILE",
                run_dir.display(),
                path.display()
            ))
        })?;
        if problem::sha256_hex(&bytes) != sha256 {
            return Err(ApiError::BadInput(format!(
                "{}: its wrench space {} changed since the plan was made (sha256 differs); \
                 name the ground: --terrain FILE",
                run_dir.display(),
                path.display()
            )));
        }
        let space = crate::terrain::wrench_space::WrenchSpace::load(&path)
            .map_err(|e| ApiError::BadInput(format!("{}: {e}", path.display())))?;
        own_sand = Some(std::sync::Arc::new(space));
        // Beside the solve's open-loop `replay.csv`: this one has the servos every `loam
        // simulate` replay has.
        stem = "replay-servos".to_string();
    }
    if let Some(spec) = &options.terrain {
        let (ground, named, file) = planar_terrain(spec, &problem)?;
        if ground != problem.terrain || file.is_some() {
            problem.terrain = ground;
            stem = named;
            data_file = file;
        }
    }
    let on_wrench_space = matches!(problem.terrain, PlanarTerrainConfig::WrenchSpace(_));
    match (options.simulator, on_wrench_space, &data_file) {
        (Simulator::Reduced, true, _) => {
            return Err(ApiError::BadInput(
                "--backend reduced: the ground is a wrench space, for which the reduced-order \
                 model has no contact law; replay it with --backend mdp (or leave --backend out)"
                    .into(),
            ))
        }
        (Simulator::Mdp, false, _) => {
            return Err(ApiError::BadInput(format!(
                "--backend mdp steps on a wrench space, and the ground here is {}: name one with \
                 --terrain FILE, a planar problem file whose terrain is a wrench space (such as \
                 problems/monopod_sand_hop.yaml)",
                problem.terrain.model_name()
            )))
        }
        (_, false, _) if options.mdp_step.is_some() => {
            return Err(ApiError::BadInput(
                "--mdp-step is the MDP simulator's step, and this replay is the reduced-order \
                 model's (its steps follow its error control: --rtol, --atol)"
                    .into(),
            ))
        }
        _ => {}
    }
    let settings = planar::ReplaySettings {
        max_steps: options.max_steps,
        ..Default::default()
    };
    match (problem.task.periodic, options.strides) {
        (_, Some(0)) => {
            return Err(ApiError::BadInput(
                "--strides 0: a replay runs at least one stride".into(),
            ))
        }
        (false, Some(n)) if n > 1 => {
            return Err(ApiError::BadInput(format!(
                "--strides {n}: {} is not a gait (its task is not periodic), so it has one \
                 stride; accepted for it: 1",
                run_dir.display()
            )))
        }
        _ => {}
    }
    let sand = match (&data_file, own_sand) {
        (Some(file), _) => Some((super::wrench_space_of(file, &problem.terrain)?, false)),
        (None, Some(space)) => Some((space, true)),
        (None, None) => None,
    };
    let replay = match sand {
        Some((space, as_planned)) => {
            use crate::sim::mdp::{plan as mdp_plan, MdpError};
            let mut settings = mdp_plan::MdpReplaySettings {
                max_steps: options.max_steps,
                ground_steps_as_planned: as_planned,
                ..Default::default()
            };
            if let Some(step) = options.mdp_step {
                settings.max_step = step;
            }
            mdp_plan::replay_plan(&problem, &table, space, options.strides, &settings).map_err(
                |e| match e {
                    // What the simulator cannot take (a drive, a rail) is the input's fault.
                    MdpError::Robot(_) | MdpError::Option { .. } => ApiError::BadInput(format!(
                        "{}: cannot be replayed in the MDP simulator: {e}",
                        run_dir.display()
                    )),
                    e => ApiError::Failed(format!("replaying the plan: {e}")),
                },
            )?
        }
        None => planar::replay_plan(&problem, &table, options.strides, &settings)
            .map_err(|e| ApiError::Failed(format!("replaying the plan: {e}")))?,
    };
    let mut csv = String::from("mode,");
    csv.push_str(&replay.columns.join(","));
    csv.push('\n');
    for (row, mode) in replay.rows.iter().zip(&replay.modes) {
        csv.push_str(mode);
        for v in row {
            csv.push_str(&format!(",{v:.9e}"));
        }
        csv.push('\n');
    }
    let written = written(
        run_dir,
        &stem,
        replay.summary.complete,
        replay.summary.clone(),
    );
    identity::write_derived(
        &plan_id,
        Some((&written.csv, csv.as_bytes())),
        &written.json,
        &replay.summary,
    )?;
    Ok(written)
}
