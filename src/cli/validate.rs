//! `loam validate RUN`: the verdict on a plan, one command. The plan's command is replayed in
//! every simulator that applies and the outcomes are put side by side against the plan:
//!
//! - the reduced-order model on the plan's own contact model (the transcription's error),
//! - the reduced-order model on the other closed-form grounds (`--terrain`, default `rigid`
//!   and `poppy_seeds`: what the plan does where its ground model is wrong),
//! - the DEM on `--bed`, over `--realisations` copies of the bed (the bed as given, then
//!   copies with one grain moved by one ulp: a chaotic bed's outcome differs from copy to
//!   copy, so one DEM replay is one draw, and the mean and its spread are the verdict).
//!
//! It writes `RUN/validation/`: `validation.csv` and `validation.json` (one row per simulator
//! and outcome: realisations, mean ± sd, error of the mean against the plan), the figure
//! `validation.png`/`.svg`, and each DEM realisation's replay in `dem-<backend>-rNN/`.
//!
//! Choices: the outcomes are the task's own measures (the hopper's apex rise; a planar robot's
//! distance and the centre of mass's peak rise), the numbers a researcher checks a plan by.
//! The sample standard deviation is over the realisations (n − 1), and the standard error of
//! the mean (sd / √n) is reported beside it, so a user can see whether N was enough. A plan
//! on a wrench space has its MDP replay from the solve as its own row, and replays on the
//! closed-form grounds and the grains as any planar plan; a problem file in `--terrain` whose
//! terrain is a wrench space adds the MDP simulator's row (`sim::mdp::plan`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;

use super::simulate::Backend;
use super::simulate_dem::DemArgs;
use super::BadInput;
use loam::api::{self, SimulateOptions};
use loam::plot::validation::ValidationFigure;

#[derive(clap::Args)]
pub struct Args {
    /// A folder written by `loam solve` (holding solution.json and trajectory.csv).
    pub run_dir: PathBuf,
    /// Other grounds to replay on in the reduced-order model (comma-separated presets or
    /// problem files, as `loam simulate --terrain` takes). The plan's own ground is always
    /// the first row.
    #[arg(long, value_delimiter = ',', default_value = "rigid,poppy_seeds")]
    pub terrain: Vec<String>,
    /// A bed written by `loam dem prepare`: adds the DEM verdict over --realisations copies.
    #[arg(long, value_name = "CHECKPOINT")]
    pub bed: Option<PathBuf>,
    /// The DEM engine (with --bed).
    #[arg(long, value_enum, default_value = "dem-cpu")]
    pub backend: Backend,
    /// DEM replays on copies of the bed (the bed itself, then copies with one grain nudged by
    /// one ulp): the spread of the outcome over realisations. At least 1.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub realisations: usize,
    /// DEM realisations replayed side by side, this many at a time, as the scenes of one
    /// backend: of one launch on the GPU, stepped in parallel on the CPU (each writes its own
    /// folder; realisation s is bit for bit the single replay of its bed). Default: all on
    /// dem-cuda, 2 on dem-cpu (measured with the hopper's own coupling, now removed: on two
    /// quiet cores two shipped-bed replays side by side took 186 s against 213 s one after
    /// the other).
    #[arg(long, value_name = "K")]
    pub side_by_side: Option<usize>,
    /// A planar robot's feet on the grains: their extent across the plane [m].
    #[arg(long, default_value_t = 0.05)]
    pub foot_depth: f64,
    /// How long the robot settles on the bed before the plan's clock starts [s] (default 0.2).
    #[arg(long)]
    pub settle_time: Option<f64>,
    /// The grain step Δt [s] (default: as `loam simulate`).
    #[arg(long)]
    pub time_step: Option<f64>,
    /// The DEM replays stop at this time on the plan's clock at the latest [s] (default: the
    /// plan's end, and for an apex task up to 0.5 s past it while the robot still rises).
    #[arg(long)]
    pub t_max: Option<f64>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// One row of the verdict: one simulator on one ground, one outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// `reduced`, `mdp` or the DEM engine (`dem-cpu`, `dem-cuda`).
    pub simulator: String,
    /// The ground: the plan's own (`own: …`), a preset, a file, or the bed's checkpoint.
    pub terrain: String,
    /// Whether this is the model the plan was made on.
    pub own_model: bool,
    /// `apex_rise_m`, `distance_m` or `com_peak_rise_m`.
    pub outcome: String,
    pub planned: f64,
    pub realisations: usize,
    /// Realisations whose replay did what it had to (reached the apex, ran to the plan's end).
    pub completed: usize,
    pub values: Vec<f64>,
    pub mean: Option<f64>,
    pub sd: Option<f64>,
    /// Standard error of the mean, sd / √n.
    pub sem: Option<f64>,
    /// (mean − planned) / |planned|; null where the plan's value is 0.
    pub error_rel: Option<f64>,
    /// Why there is no number, where the simulator refused or failed.
    pub note: Option<String>,
    /// The files behind the row, relative to the run folder.
    pub files: Vec<String>,
}

impl Row {
    fn new(simulator: &str, terrain: &str, own: bool, outcome: &str, planned: f64) -> Row {
        Row {
            simulator: simulator.into(),
            terrain: terrain.into(),
            own_model: own,
            outcome: outcome.into(),
            planned,
            realisations: 0,
            completed: 0,
            values: Vec::new(),
            mean: None,
            sd: None,
            sem: None,
            error_rel: None,
            note: None,
            files: Vec::new(),
        }
    }

    /// Mean, spread and error from `values`.
    fn finish(mut self) -> Row {
        let n = self.values.len();
        if n > 0 {
            let mean = self.values.iter().sum::<f64>() / n as f64;
            self.mean = Some(mean);
            if n > 1 {
                let var =
                    self.values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
                self.sd = Some(var.sqrt());
                self.sem = Some(var.sqrt() / (n as f64).sqrt());
            }
            if self.planned.abs() > 1e-12 {
                self.error_rel = Some((mean - self.planned) / self.planned.abs());
            }
        }
        self
    }
}

/// `validation.json` (after `plan_id` and `csv_sha256`, the hash of `validation.csv`).
#[derive(Serialize)]
struct Verdict<'a> {
    run: String,
    /// The problem's name (its `name`, or its file's stem) and the ground it was planned on.
    problem: String,
    plan_terrain: String,
    rows: &'a [Row],
    wall_time_s: f64,
}

/// The outcomes of one replay's record, as (outcome, planned, achieved, completed).
type Outcomes = Vec<(&'static str, f64, Option<f64>, bool)>;

fn read_json(path: &Path) -> anyhow::Result<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The task's measures in a replay's record (`replay*.json` or `dem.json`, the hopper's or a
/// planar robot's).
fn outcomes(record: &serde_json::Value) -> Outcomes {
    let f = |key: &str| record[key].as_f64();
    let complete = record["complete"].as_bool().unwrap_or(true)
        && record["fell_at_s"].is_null()
        && record["stopped_at_s"].is_null();
    if let Some(planned) = f("planned_apex_rise_m") {
        // The hopper's record names it `apex_rise_m` (and says whether the apex came), a
        // planar robot's `achieved_apex_rise_m`.
        let value = f("apex_rise_m").or(f("achieved_apex_rise_m"));
        let reached = record["reached_apex"]
            .as_bool()
            .unwrap_or(value.is_some() && complete);
        return vec![("apex_rise_m", planned, value, reached)];
    }
    vec![
        (
            "distance_m",
            f("planned_distance_m").unwrap_or(f64::NAN),
            f("achieved_distance_m"),
            complete,
        ),
        (
            "com_peak_rise_m",
            f("planned_com_peak_m").unwrap_or(f64::NAN),
            f("achieved_com_peak_m"),
            complete,
        ),
    ]
}

/// Rows of one simulator from its realisations' records.
fn rows_of(
    simulator: &str,
    terrain: &str,
    own: bool,
    records: &[(serde_json::Value, String)],
) -> Vec<Row> {
    let Some((first, _)) = records.first() else {
        return Vec::new();
    };
    outcomes(first)
        .into_iter()
        .enumerate()
        .map(|(i, (name, planned, _, _))| {
            let mut row = Row::new(simulator, terrain, own, name, planned);
            for (record, file) in records {
                let (_, _, value, complete) = outcomes(record)[i];
                row.realisations += 1;
                row.completed += usize::from(complete);
                row.values.extend(value);
                row.files.push(file.clone());
            }
            row.finish()
        })
        .collect()
}

/// Rows that say why a simulator gave no number, one per outcome of the plan.
fn refused(simulator: &str, terrain: &str, outcomes: &[(String, f64)], why: &str) -> Vec<Row> {
    outcomes
        .iter()
        .map(|(name, planned)| {
            let mut row = Row::new(simulator, terrain, false, name, *planned);
            row.note = Some(why.to_string());
            row
        })
        .collect()
}

fn relative(run: &Path, file: &Path) -> String {
    file.strip_prefix(run).unwrap_or(file).display().to_string()
}

/// The plan's own ground, as a label.
fn own_label(solution: &serde_json::Value) -> String {
    let terrain = &solution["problem"]["terrain"];
    let model = terrain["model"].as_str().unwrap_or("?");
    match terrain["medium"].as_str() {
        Some(medium) if model == "added_mass" => format!("{model} ({medium})"),
        _ => model.to_string(),
    }
}

/// Whether the preset `spec` is the plan's own ground model (then its row is the own one).
fn is_own_preset(spec: &str, solution: &serde_json::Value) -> bool {
    let model = solution["problem"]["terrain"]["model"]
        .as_str()
        .unwrap_or("");
    (spec == "rigid" && model == "rigid") || (spec == "poppy_seeds" && model == "added_mass")
}

/// Checks everything a user gave before anything runs (exit 2, nothing written).
fn check(args: &Args) -> anyhow::Result<()> {
    if !args.run_dir.join("solution.json").is_file() {
        return Err(BadInput(format!(
            "{}: not a run folder (no solution.json); give a folder `loam solve` wrote",
            args.run_dir.display()
        ))
        .into());
    }
    for spec in &args.terrain {
        let preset = matches!(spec.as_str(), "rigid" | "poppy_seeds");
        if !preset && !Path::new(spec).is_file() {
            return Err(BadInput(format!(
                "--terrain {spec}: not a preset (accepted: rigid, poppy_seeds) nor a problem file"
            ))
            .into());
        }
    }
    if args.realisations == 0 {
        return Err(BadInput(
            "--realisations 0: the DEM verdict needs at least 1 realisation".into(),
        )
        .into());
    }
    if args.side_by_side == Some(0) {
        return Err(BadInput(
            "--side-by-side 0: at least 1 realisation at a time (accepted: 1 to --realisations)"
                .into(),
        )
        .into());
    }
    if matches!(args.backend, Backend::Reduced | Backend::Mdp) {
        let name = if args.backend == Backend::Mdp {
            "mdp"
        } else {
            "reduced"
        };
        return Err(BadInput(format!(
            "--backend {name}: the DEM engine is dem-cpu or dem-cuda (the reduced-order rows \
             always run, and the MDP's for every wrench-space problem file in --terrain)"
        ))
        .into());
    }
    if let Some(bed) = &args.bed {
        if !bed.is_file() {
            return Err(BadInput(format!(
                "--bed {}: no such file (make one with `loam dem prepare BED.yaml`)",
                bed.display()
            ))
            .into());
        }
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    check(&args)?;
    let started = Instant::now();
    let run = &args.run_dir;
    let solution = read_json(&run.join("solution.json"))?;
    let own = own_label(&solution);
    let wrench_plan = solution["problem"]["terrain"]["model"] == "wrench_space";
    let out = run.join("validation");
    // Before any replay: a folder that cannot be written, or a GPU that is not there, is
    // found now (exit 3), not after the reduced-order rows are written.
    loam::output::ensure_writable(run)?;
    if args.bed.is_some() && args.backend == Backend::DemCuda {
        loam::sim::dem::cuda::probe()
            .map_err(|e| anyhow::Error::new(e).context("--backend dem-cuda"))?;
    }
    // The DEM replays a planar robot's plan only: a plan of the hopper's own planner is
    // refused before anything is written.
    if args.bed.is_some() && !api::is_planar_run(run) {
        return Err(super::simulate_dem::legacy_refusal(run).into());
    }
    std::fs::create_dir_all(&out)
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot create {}", out.display())))?;
    let say = |text: String| {
        if !args.quiet {
            println!("{text}");
        }
    };

    let mut rows = Vec::new();
    // The plan's own model first.
    if wrench_plan {
        let file = run.join("replay.json");
        let record = read_json(&file)?;
        let planned = solution["problem"]["task"]["distance"]
            .as_f64()
            .unwrap_or(0.0);
        let mut row = Row::new("mdp", &format!("own: {own}"), true, "distance_m", planned);
        row.realisations = 1;
        row.completed = 1;
        row.values.extend(record["distance_m"].as_f64());
        row.files.push(relative(run, &file));
        rows.push(row.finish());
    } else {
        let simulated = api::simulate(run, &SimulateOptions::default())?;
        let record = read_json(&simulated.json)?;
        rows.extend(rows_of(
            "reduced",
            &format!("own: {own}"),
            true,
            &[(record, relative(run, &simulated.json))],
        ));
    }
    let planned: Vec<(String, f64)> = rows
        .iter()
        .map(|r| (r.outcome.clone(), r.planned))
        .collect();
    say(format!(
        "{} on its own model ({own}): replayed",
        run.display()
    ));

    for spec in &args.terrain {
        if is_own_preset(spec, &solution) {
            continue;
        }
        let options = SimulateOptions {
            terrain: Some(spec.clone()),
            ..Default::default()
        };
        match api::simulate(run, &options) {
            Ok(simulated) => {
                let record = read_json(&simulated.json)?;
                let simulator = if record["terrain"]["model"] == "wrench_space" {
                    "mdp"
                } else {
                    "reduced"
                };
                rows.extend(rows_of(
                    simulator,
                    spec,
                    false,
                    &[(record, relative(run, &simulated.json))],
                ));
                say(format!("  on {spec}: replayed"));
            }
            Err(api::ApiError::BadInput(why) | api::ApiError::Failed(why)) => {
                say(format!("  on {spec}: no replay ({why})"));
                rows.extend(refused("reduced", spec, &planned, &why));
            }
            Err(e) => return Err(e.into()),
        }
    }

    if let Some(bed) = &args.bed {
        let name = match args.backend {
            Backend::DemCuda => "dem-cuda",
            _ => "dem-cpu",
        };
        rows.extend(dem_rows(&args, bed, name, &out, &planned, &say)?);
    }

    let csv = table_csv(&rows);
    loam::output::write_atomic(&out.join("validation.csv"), csv.as_bytes())?;
    let verdict = Verdict {
        run: run.display().to_string(),
        problem: solution["problem"]["name"].as_str().map_or_else(
            || relative(run.parent().unwrap_or(run), run),
            str::to_string,
        ),
        plan_terrain: own.clone(),
        rows: &rows,
        wall_time_s: started.elapsed().as_secs_f64(),
    };
    let plan_id = solution["plan_id"].as_str().unwrap_or("");
    loam::output::identity::write_derived(
        plan_id,
        Some((&out.join("validation.csv"), csv.as_bytes())),
        &out.join("validation.json"),
        &verdict,
    )?;
    let files =
        ValidationFigure::load(&out.join("validation.json"))?.save(&out.join("validation"))?;
    if !args.quiet {
        print_table(&rows);
        println!(
            "wrote {} and {} figure files in {:.1} s",
            out.join("validation.{csv,json}").display(),
            files.len(),
            verdict.wall_time_s
        );
    }
    let all_ran = rows
        .iter()
        .all(|r| r.note.is_some() || r.completed == r.realisations);
    Ok(if all_ran { 0 } else { 1 })
}

/// The DEM rows: `--realisations` replays on the bed and its nudged copies.
fn dem_rows(
    args: &Args,
    bed: &Path,
    name: &str,
    out: &Path,
    planned: &[(String, f64)],
    say: &dyn Fn(String),
) -> anyhow::Result<Vec<Row>> {
    let grains = loam::sim::dem::Checkpoint::load(bed)
        .map_err(|e| BadInput(format!("--bed {}: {e}", bed.display())))?
        .grains
        .len();
    let mut records = Vec::new();
    let started = Instant::now();
    let side_by_side = match (args.side_by_side, args.backend) {
        (Some(k), _) => k,
        (None, Backend::DemCuda) => args.realisations,
        (None, _) => 2,
    };
    let realisation = |k: usize| {
        // Realisation 0 is the bed itself; the others move grains spread over the bed.
        let nudge = (k > 0).then(|| (k * grains / args.realisations).min(grains - 1));
        DemArgs {
            bed: Some(bed.to_path_buf()),
            snapshot_every: 0.0,
            render_at: None,
            t_max: args.t_max,
            iterations: None,
            foot_depth: args.foot_depth,
            time_step: args.time_step,
            settle_time: args.settle_time,
            out_dir: Some(out.join(format!("{name}-r{k:02}"))),
            nudge_grain: nudge,
        }
    };
    // A replay the grains could not carry on (a foot through the bed's floor, a step that
    // failed): the DEM's row says why, and the other rows stand.
    let failed = |e: &anyhow::Error| {
        e.downcast_ref::<BadInput>().is_none() && e.downcast_ref::<std::io::Error>().is_none()
    };
    let mut k = 0;
    while k < args.realisations {
        let batch: Vec<DemArgs> = (k..(k + side_by_side).min(args.realisations))
            .map(realisation)
            .collect();
        // The batch as the scenes of one backend.
        let results = match super::simulate_dem::run_planar_realisations(
            &args.run_dir,
            args.backend,
            &batch,
            true,
        ) {
            Ok(results) => results,
            Err(e) if failed(&e) => vec![Err(e)],
            Err(e) => return Err(e),
        };
        let mut codes = Vec::new();
        for result in results {
            match result {
                Ok(code) => codes.push(code),
                Err(e) if failed(&e) => {
                    say(format!("  {name}: no replay ({e:#})"));
                    return Ok(refused(
                        name,
                        &bed.display().to_string(),
                        planned,
                        &format!("{e:#}"),
                    ));
                }
                Err(e) => return Err(e),
            }
        }
        for (dem, code) in batch.iter().zip(codes) {
            let dir = dem.out_dir.clone().expect("a realisation's folder");
            let record = read_json(&dir.join("dem.json"))?;
            k += 1;
            let elapsed = started.elapsed().as_secs_f64();
            let left = elapsed / k as f64 * (args.realisations - k) as f64;
            let shown: Vec<String> = outcomes(&record)
                .iter()
                .map(|(n, _, v, _)| format!("{n} {}", v.map_or("-".into(), |v| format!("{v:.4}"))))
                .collect();
            say(format!(
                "  {name} realisation {}/{}{}: {}{} ({elapsed:.0} s, about {left:.0} s left)",
                k,
                args.realisations,
                dem.nudge_grain
                    .map_or(String::new(), |g| format!(" (grain {g} nudged)")),
                shown.join(", "),
                if code == 0 { "" } else { ", incomplete" },
            ));
            records.push((record, relative(&args.run_dir, &dir.join("dem.json"))));
        }
    }
    Ok(rows_of(name, &bed.display().to_string(), false, &records))
}

fn number(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.9e}"))
}

fn table_csv(rows: &[Row]) -> String {
    let mut csv = String::from(
        "simulator,terrain,own_model,outcome,planned,realisations,completed,mean,sd,sem,error_rel,note\n",
    );
    for r in rows {
        let quoted = |s: &str| format!("\"{}\"", s.replace('"', "'"));
        csv.push_str(&format!(
            "{},{},{},{},{:.9e},{},{},{},{},{},{},{}\n",
            r.simulator,
            quoted(&r.terrain),
            r.own_model,
            r.outcome,
            r.planned,
            r.realisations,
            r.completed,
            number(r.mean),
            number(r.sd),
            number(r.sem),
            number(r.error_rel),
            r.note.as_deref().map(quoted).unwrap_or_default()
        ));
    }
    csv
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<10} {:<34} {:<16} {:>10} {:>4} {:>22} {:>9}",
        "simulator", "ground", "outcome", "planned", "n", "outcome (mean ± sd)", "error"
    );
    for r in rows {
        let spread = match (r.mean, r.sd) {
            (Some(m), Some(s)) => format!("{m:.4} ± {s:.4}"),
            (Some(m), None) => format!("{m:.4}"),
            _ => "-".into(),
        };
        let error = r
            .error_rel
            .map_or("-".into(), |e| format!("{:+.1} %", 100.0 * e));
        let ground: String = r.terrain.chars().take(34).collect();
        println!(
            "{:<10} {:<34} {:<16} {:>10.4} {:>4} {:>22} {:>9}",
            r.simulator, ground, r.outcome, r.planned, r.realisations, spread, error
        );
        if let Some(note) = &r.note {
            println!("           {note}");
        }
    }
}
