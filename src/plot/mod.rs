//! Figures from loam's result folders, as PNG and SVG (with `plotters`).
//!
//! [`plot_dir`] looks at a folder, finds what loam wrote there and draws every figure that
//! applies into `<dir>/plots/`:
//!
//! | the folder holds | figure |
//! |---|---|
//! | `solution.json` + `trajectory.csv` (a `loam solve` run), an optional `replay.csv` | `planar_run`: base and joint coordinates, inputs with their limits, contact normal forces against time, phases shaded, the replay dashed; `filmstrip`: stick figures along the plan at equal scale; with `animate`, `animation.gif`: the moving stick figure; per `replay-on-<ground>.csv`, `planar_run-on-<ground>` with that replay |
//! | `sweep.csv` (a `loam sweep`) | `sweep_planar` (planned and replayed figures against the first varied field), `sweep_apex` (from `replays.csv`, a sweep over grounds: commanded against achieved apex per group, the paper's Fig. 5) and `sweep_commands` (every plan's actuator command against time, one panel per ground, the paper's Fig. 6); a hopper-planner `sweep.csv` of an older loam: `sweep_apex` |
//!
//! Before drawing, the files are checked to belong together (`output::identity`): the plan's
//! `solution.json` and `trajectory.csv`, each replay against its JSON record and the plan, a
//! each sweep plan present.
//! A figure whose data is absent (a committed sweep keeps `sweep.csv` but not its plans) is
//! skipped, and [`PlotReport::skipped`] says why; the file already there is left as it was.
//!
//! Reading (`table`, `data`, `planar::read`), drawing (`planar`, `planar_sweep`, `sweep`,
//! `sweep_commands`) and the shared look (`style`) live apart. Nothing here prints.

mod animation;
pub mod calibration;
mod data;
pub mod dem_scene;
mod planar;
mod planar_sweep;
mod robot;
mod style;
mod sweep;
mod sweep_commands;
pub mod table;
pub mod validation;
pub mod wrench;

use std::path::{Path, PathBuf};

pub use robot::RobotDrawing;
pub use style::{save, Formats};
pub use sweep::GroupSummary;

use crate::output::identity::{self, IdentityError, PlanRef};
use crate::output::OutputError;

/// Why a folder could not be plotted.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("{} does not exist or is not a folder", path.display())]
    NotAFolder { path: PathBuf },
    #[error(
        "{} is not a loam result: {missing} (a run holds solution.json and trajectory.csv, \
         a sweep sweep.csv)",
        path.display()
    )]
    NotALoamResult { path: PathBuf, missing: String },
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no data (a header line and at least one record are expected)", path.display())]
    Empty { path: PathBuf },
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: no column `{column}` (the header has: {found})", path.display())]
    MissingColumn {
        path: PathBuf,
        column: String,
        found: String,
    },
    #[error("{}: {message}", path.display())]
    Json { path: PathBuf, message: String },
    /// A file whose content the figure cannot use, and why.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("the embedded font could not be loaded")]
    Font,
    #[error("drawing failed: {message}")]
    Draw { message: String },
    #[error("drawing {} failed: {message}", path.display())]
    Render { path: PathBuf, message: String },
    #[error(transparent)]
    Write(#[from] OutputError),
    #[error(transparent)]
    Identity(#[from] IdentityError),
}

/// Options of [`plot_dir`].
#[derive(Clone, Debug, Default)]
pub struct PlotSettings {
    /// Where the figures go; default `<dir>/plots`.
    pub out_dir: Option<PathBuf>,
    /// Which formats to write; default PNG and SVG.
    pub formats: Formats,
    /// Also write `animation.gif` for a planar robot's run (a plan or an MDP simulation).
    pub animate: bool,
}

/// What [`detect`] found in a folder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contents {
    /// `solution.json` and `trajectory.csv` are both there.
    pub run: bool,
    /// `replay.csv` and `replay-on-<terrain>.csv`, sorted (own terrain first).
    pub replays: Vec<PathBuf>,
    pub sweep: bool,
    /// `scenario.json` and `trajectory.csv`: a run of `loam mdp run`.
    pub mdp: bool,
    /// `calibration.json`: the output of `loam material calibrate`.
    pub calibration: bool,
}

/// The figures [`plot_dir`] wrote.
#[derive(Clone, Debug, Default)]
pub struct PlotReport {
    pub files: Vec<PathBuf>,
    /// The replays drawn over the plan (empty without a run).
    pub replays: Vec<PathBuf>,
    /// The sweep's groups (empty without a sweep), in the apex figure's order.
    pub sweep_groups: Vec<GroupSummary>,
    /// Figures not drawn for want of their data: (figure name, why).
    pub skipped: Vec<(String, String)>,
}

/// Finds what loam wrote in `dir`. A folder with none of loam's result files is
/// [`PlotError::NotALoamResult`], naming what is missing.
pub fn detect(dir: &Path) -> Result<Contents, PlotError> {
    if !dir.is_dir() {
        return Err(PlotError::NotAFolder {
            path: dir.to_path_buf(),
        });
    }
    let has = |name: &str| dir.join(name).is_file();
    let entries = std::fs::read_dir(dir).map_err(|source| PlotError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut replays: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n == "replay.csv" || (n.starts_with("replay-on-") && n.ends_with(".csv"))
                })
        })
        .collect();
    replays.sort_by_key(|p| {
        let name = p.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        (name != "replay.csv", name)
    });
    let contents = Contents {
        run: has("solution.json") && has("trajectory.csv"),
        replays,
        sweep: has("sweep.csv"),
        mdp: has("scenario.json") && has("trajectory.csv"),
        calibration: has("calibration.json"),
    };
    if contents.run || contents.sweep || contents.mdp || contents.calibration {
        return Ok(contents);
    }
    let missing = match (has("solution.json"), has("trajectory.csv")) {
        (true, false) => "solution.json is there but trajectory.csv is missing".to_string(),
        (false, true) => "trajectory.csv is there but solution.json is missing".to_string(),
        _ if !contents.replays.is_empty() => {
            "replay files are there but the plan (solution.json, trajectory.csv) is missing"
                .to_string()
        }
        _ => "none of solution.json, scenario.json, trajectory.csv, sweep.csv, calibration.json \
             is there"
            .to_string(),
    };
    Err(PlotError::NotALoamResult {
        path: dir.to_path_buf(),
        missing,
    })
}

/// Draws every figure that applies to `dir` (see the module docs) and returns the files.
pub fn plot_dir(dir: &Path, settings: &PlotSettings) -> Result<PlotReport, PlotError> {
    let contents = detect(dir)?;
    verify(dir, &contents)?;
    let out = settings
        .out_dir
        .clone()
        .unwrap_or_else(|| dir.join("plots"));
    let mut report = PlotReport::default();
    // The time series and the filmstrip of a planar robot's run, named `series`.
    let planar_figures = |run: &planar::PlanarRun, series: &str| -> Result<_, PlotError> {
        let mut files = style::save(&planar::RunFigure(run), &out.join(series), settings.formats)?;
        files.extend(style::save(
            &planar::Filmstrip::new(run),
            &out.join("filmstrip"),
            settings.formats,
        )?);
        if settings.animate {
            files.push(animation::Animation::new(run).save(&out.join("animation.gif"))?);
        }
        Ok(files)
    };
    if contents.calibration {
        // Beside its record, as `loam material calibrate` draws it (or in --out).
        let stem = match &settings.out_dir {
            Some(o) => o.join("calibration"),
            None => dir.join("calibration"),
        };
        let figure = calibration::CalibrationFigure::load(&dir.join("calibration.json"))?;
        report
            .files
            .extend(style::save(&figure, &stem, settings.formats)?);
    }
    if contents.mdp {
        let run = planar::PlanarRun::load_mdp(dir)?;
        report.files.extend(planar_figures(&run, "mdp_run")?);
        if let [foot] = &run.robot.contacts[..] {
            let figure = wrench::WrenchDepth::load(dir, &run.name, &foot.name)?;
            report.files.extend(style::save(
                &figure,
                &out.join("wrench_depth"),
                settings.formats,
            )?);
        }
    }
    if contents.run && !planar::is_planar(dir) {
        return Err(PlotError::NotALoamResult {
            path: dir.to_path_buf(),
            missing: "a plan of loam's former hopper planner, which is no longer drawn; solve its \
                      problem again as a robot file (problems/hopper_granular.yaml)"
                .into(),
        });
    }
    if contents.run {
        let run = planar::PlanarRun::load(dir)?;
        report.files.extend(planar_figures(&run, "planar_run")?);
        if run.replay.is_some() {
            report.replays = vec![dir.join("replay.csv")];
        }
        if run.dem.is_some() {
            report.replays.extend(planar::dem_replay_csv(dir));
        }
        // The plan replayed on other contact models (`simulate --terrain`): one figure each.
        for path in &contents.replays {
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let Some(ground) = stem.strip_prefix("replay-on-") else {
                continue;
            };
            let other = planar::PlanarRun::load_on(dir, stem)?;
            report.files.extend(style::save(
                &planar::RunFigure(&other),
                &out.join(format!("planar_run-on-{ground}")),
                settings.formats,
            )?);
            report.replays.push(path.clone());
        }
    }
    if contents.sweep && planar_sweep::is_planar_sweep(dir) {
        let figure = planar_sweep::PlanarSweepFigure::load(dir)?;
        report.files.extend(style::save(
            &figure,
            &out.join("sweep_planar"),
            settings.formats,
        )?);
        // A sweep over grounds: every plan on every ground, the paper's Fig. 5.
        let replays = dir.join("replays.csv");
        if replays.is_file() {
            match planar_sweep::replay_grounds_drawn(&replays)? {
                Ok(()) => {
                    let sweep = data::Sweep::load_file(&replays)?;
                    save_apex(&sweep, &out, settings, &mut report)?;
                }
                Err(why) => report.skipped.push(("sweep_apex".into(), why)),
            }
        }
        // The planned commands of every point, the paper's Fig. 6.
        let plans = sweep_plans(dir)?;
        if plans.present.is_empty() {
            report.skipped.push((
                "sweep_commands".into(),
                format!(
                    "none of the {} plan folders that sweep.csv names (column run) is here with its trajectory.csv",
                    plans.named
                ),
            ));
        } else {
            for run in &plans.present {
                identity::verify_plan(run)?;
            }
            let commands = sweep_commands::CommandFigure::load(dir)?;
            report.files.extend(style::save(
                &commands,
                &out.join("sweep_commands"),
                settings.formats,
            )?);
        }
    } else if contents.sweep {
        // The hopper planner's sweep.csv of an older loam: its apex figure, from its own
        // columns (those of replays.csv); its command figure needs a planar sweep's plans.
        let sweep = data::Sweep::load(dir)?;
        save_apex(&sweep, &out, settings, &mut report)?;
        let plans: std::collections::BTreeSet<&PathBuf> =
            sweep.rows.iter().map(|r| &r.run_dir).collect();
        report.skipped.push((
            "sweep_commands".into(),
            format!(
                "sweep.csv is an older loam's sweep by the hopper planner ({} plans in column \
                 run_dir); the command figure draws a robot file's sweep from each plan's \
                 trajectory.csv: sweep it again (loam sweep problems/hopper_granular.yaml ...)",
                plans.len()
            ),
        ));
    }
    if contents.run && dir.join("validation/validation.json").is_file() {
        // `loam validate`'s figure, redrawn from its table beside it (or under --out).
        let stem = match &settings.out_dir {
            Some(o) => o.join("validation"),
            None => dir.join("validation/validation"),
        };
        let json = dir.join("validation/validation.json");
        let plan_id = identity::verify_plan(dir)?;
        let plan = PlanRef {
            plan_id: &plan_id,
            solution: &dir.join("solution.json"),
        };
        match identity::verify_derived(&json, Some(&json.with_extension("csv")), Some(plan)) {
            Ok(_) => {
                let figure = validation::ValidationFigure::load(&json)?;
                report
                    .files
                    .extend(style::save(&figure, &stem, settings.formats)?);
            }
            // Another plan's verdict (the run was solved again since): said, not drawn.
            Err(e) => report.skipped.push(("validation".into(), e.to_string())),
        }
    }
    Ok(report)
}

/// Checks that the files [`plot_dir`] is about to draw belong together.
fn verify(dir: &Path, contents: &Contents) -> Result<(), PlotError> {
    let solution = dir.join("solution.json");
    if contents.run {
        let plan_id = identity::verify_plan(dir)?;
        let plan = PlanRef {
            plan_id: &plan_id,
            solution: &solution,
        };
        for csv in &contents.replays {
            identity::verify_derived(&csv.with_extension("json"), Some(csv), Some(plan))?;
        }
        // The DEM replay drawn over the plan must be of this plan (its `dem.json`).
        if let Some(csv) = planar::dem_replay_csv(dir) {
            identity::verify_derived(&csv.with_file_name("dem.json"), Some(&csv), Some(plan))?;
        }
    }
    Ok(())
}

/// The plan folders a sweep names, and those of them that are here.
struct SweepPlans {
    named: usize,
    present: Vec<PathBuf>,
}

/// The achieved-against-commanded apex figure of `sweep` into `out/sweep_apex`, its groups'
/// errors into the report.
fn save_apex(
    sweep: &data::Sweep,
    out: &Path,
    settings: &PlotSettings,
    report: &mut PlotReport,
) -> Result<(), PlotError> {
    let apex = sweep::ApexFigure::new(sweep);
    report.sweep_groups = apex.summary();
    report.files.extend(style::save(
        &apex,
        &out.join("sweep_apex"),
        settings.formats,
    )?);
    Ok(())
}

/// The plan folders a planar sweep's `sweep.csv` names (column `run`), and those of them
/// that are here with their plan.
fn sweep_plans(dir: &Path) -> Result<SweepPlans, PlotError> {
    let table = table::Table::read(&dir.join("sweep.csv"))?;
    let mut named: Vec<&str> = table.text("run")?;
    named.sort();
    named.dedup();
    let present = named
        .iter()
        .map(|run| dir.join(run))
        .filter(|run| run.join("trajectory.csv").is_file() && run.join("solution.json").is_file())
        .collect();
    Ok(SweepPlans {
        named: named.len(),
        present,
    })
}
