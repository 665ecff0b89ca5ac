//! `loam material calibrate MATERIAL [--vary PATH=v,...]...`: the material's targets measured
//! in the DEM for every candidate set of parameter values; the residuals, the best candidate
//! as a material file, and a figure (see `loam::sim::dem::calibrate`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use loam::plot::calibration::CalibrationFigure;
use loam::sim::dem::calibrate::{self, Experiments, Measurement, PARAMETERS};
use loam::sim::dem::material::{Material, Quantity};
use loam::sim::dem::{scene_file, DemError};
use serde::Serialize;

use super::BadInput;

#[derive(clap::Subcommand)]
pub enum MaterialCommand {
    /// Fit the DEM parameters a material's targets do not fix: run the targets' experiments
    /// (the bed's packing, the intruder's force against depth, the column collapses) for
    /// every combination of --vary values; write the residuals, the best candidate as a
    /// material file and a figure. Exit 0 when the best candidate meets every target, 1 when
    /// none does (all is still written).
    Calibrate(CalibrateArgs),
}

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// The material file (materials/*.yaml) with its targets.
    pub material: PathBuf,
    /// A parameter and its candidate values, `PATH=v1,v2,...` (repeat for a grid of every
    /// combination). PATH: contact.rolling_friction, contact.restitution,
    /// contact.youngs_modulus, contact.poisson_ratio, grains.friction, grains.wall_friction.
    /// Default: contact.rolling_friction=0,0.1,0.2,0.3.
    #[arg(long, value_name = "PATH=V,...")]
    pub vary: Vec<String>,
    /// The bed scene poured for the packing fraction and pushed into for the intrusion force
    /// (its `material` stands for the candidate).
    #[arg(
        long,
        default_value = "problems/beds/poppy_bed.yaml",
        value_name = "SCENE"
    )]
    pub bed: PathBuf,
    /// The column-collapse scene (one fill behind a removed x gate), varied to each target
    /// aspect ratio.
    #[arg(
        long,
        default_value = "scenes/column_collapse.yaml",
        value_name = "SCENE"
    )]
    pub column: PathBuf,
    /// How long each collapse runs after its gate is removed [s].
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub collapse_time: f64,
    /// Output folder (default: runs/calibrate/<material name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(command: MaterialCommand) -> anyhow::Result<u8> {
    match command {
        MaterialCommand::Calibrate(args) => calibrate_cmd(args),
    }
}

/// One candidate and what it measured (`calibration.json`).
#[derive(Serialize)]
struct Candidate {
    values: Vec<(String, f64)>,
    score: f64,
    measurements: Vec<Measurement>,
}

#[derive(Serialize)]
struct Record {
    /// The material's name.
    name: String,
    material: String,
    bed: String,
    column: String,
    collapse_time_s: f64,
    parameters: Vec<String>,
    candidates: Vec<Candidate>,
    best: usize,
    met: bool,
    wall_seconds: f64,
}

fn bad(message: String) -> anyhow::Error {
    BadInput(message).into()
}

/// `--vary` parsed: each parameter with its values, checked.
fn parse_vary(args: &CalibrateArgs) -> anyhow::Result<Vec<(String, Vec<f64>)>> {
    let specs: Vec<String> = if args.vary.is_empty() {
        vec!["contact.rolling_friction=0,0.1,0.2,0.3".into()]
    } else {
        args.vary.clone()
    };
    let accepted: Vec<&str> = PARAMETERS.iter().map(|p| p.0).collect();
    let mut out: Vec<(String, Vec<f64>)> = Vec::new();
    for spec in specs {
        let Some((path, values)) = spec.split_once('=') else {
            return Err(bad(format!(
                "--vary {spec}: write PATH=v1,v2,... (PATH one of {})",
                accepted.join(", ")
            )));
        };
        if !accepted.contains(&path) {
            return Err(bad(format!(
                "--vary {spec}: {path} cannot be calibrated; accepted: {}",
                accepted.join(", ")
            )));
        }
        if out.iter().any(|(p, _)| p == path) {
            return Err(bad(format!("--vary {path} is given twice")));
        }
        let values = values
            .split(',')
            .map(|v| {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| bad(format!("--vary {spec}: {v:?} is not a number")))
            })
            .collect::<anyhow::Result<Vec<f64>>>()?;
        out.push((path.to_string(), values));
    }
    Ok(out)
}

/// Every combination of the values, the first parameter slowest.
fn grid(vary: &[(String, Vec<f64>)]) -> Vec<Vec<(String, f64)>> {
    let mut sets: Vec<Vec<(String, f64)>> = vec![Vec::new()];
    for (path, values) in vary {
        sets = sets
            .into_iter()
            .flat_map(|set| {
                values.iter().map(move |v| {
                    let mut s = set.clone();
                    s.push((path.clone(), *v));
                    s
                })
            })
            .collect();
    }
    sets
}

fn read(path: &Path, what: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        bad(format!(
            "--{what} {}: cannot be read ({e}); give a scene file",
            path.display()
        ))
    })
}

fn calibrate_cmd(args: CalibrateArgs) -> anyhow::Result<u8> {
    let material = Material::load(&args.material).map_err(|e| {
        if e.is_bad_input() || matches!(e, DemError::Io { .. }) {
            bad(e.to_string())
        } else {
            e.into()
        }
    })?;
    let name = material.name.clone().unwrap_or_else(|| {
        args.material
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "material".into())
    });
    if !(args.collapse_time > 0.0 && args.collapse_time.is_finite()) {
        return Err(bad(format!(
            "--collapse-time is {}; it must be a positive time in seconds",
            args.collapse_time
        )));
    }
    let measurable = material
        .targets
        .iter()
        .filter(|t| t.quantity != Quantity::AngleOfRepose)
        .count();
    if measurable == 0 {
        return Err(bad(format!(
            "{}: no target to calibrate against (targets: packing_fraction, intrusion_force, \
             collapse_runout; angle_of_repose is not measured)",
            args.material.display()
        )));
    }
    let vary = parse_vary(&args)?;
    let sets = grid(&vary);
    let bed_text = read(&args.bed, "bed")?;
    let column_text = read(&args.column, "column")?;
    let needs_column = material
        .targets
        .iter()
        .any(|t| t.quantity == Quantity::CollapseRunout);
    // Every candidate is a valid material, and every scene reads with it: checked before
    // any grain moves.
    let mut candidates = Vec::with_capacity(sets.len());
    for set in &sets {
        let mut m = material.clone();
        for (path, value) in set {
            calibrate::set_in_material(&mut m, path, *value)
                .map_err(|e| bad(format!("--vary {path}: {e}")))?;
        }
        m.validate().map_err(|(field, message)| {
            bad(format!(
                "--vary: {}: {field} {message}",
                args.material.display()
            ))
        })?;
        scene_file::parse_with_material(&bed_text, &args.bed, &m)
            .map_err(|e| bad(e.to_string()))?;
        if needs_column {
            scene_file::parse_with_material(&column_text, &args.column, &m)
                .map_err(|e| bad(e.to_string()))?;
        }
        candidates.push(m);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("runs/calibrate").join(&name));
    loam::output::ensure_writable(&out)?;

    let started = Instant::now();
    let experiments = Experiments {
        bed: (&bed_text, &args.bed),
        column: (&column_text, &args.column),
        collapse_time: args.collapse_time,
    };
    println!(
        "calibrating {name} ({}): {} candidate(s) of {}",
        args.material.display(),
        sets.len(),
        vary.iter()
            .map(|(p, v)| format!("{p} in {v:?}"))
            .collect::<Vec<_>>()
            .join(" × ")
    );
    let mut measured = Vec::with_capacity(sets.len());
    for (k, (set, m)) in sets.iter().zip(&candidates).enumerate() {
        let label = values_label(set);
        let say = |s: String| eprintln!("  [{}/{}] {label}: {s}", k + 1, sets.len());
        let measurements = calibrate::measure(m, set, &experiments, &say)?;
        let score = calibrate::score(&measurements);
        println!(
            "  [{}/{}] {label}: worst residual {:.2} of its tolerance ({:.0} s so far)",
            k + 1,
            sets.len(),
            score,
            started.elapsed().as_secs_f64()
        );
        measured.push(Candidate {
            values: set.clone(),
            score,
            measurements,
        });
    }
    let best = (0..measured.len())
        .min_by(|a, b| measured[*a].score.total_cmp(&measured[*b].score))
        .unwrap_or(0);
    let met = measured[best].score <= 1.0;
    let record = Record {
        name: name.clone(),
        material: args.material.display().to_string(),
        bed: args.bed.display().to_string(),
        column: args.column.display().to_string(),
        collapse_time_s: args.collapse_time,
        parameters: vary.iter().map(|(p, _)| p.clone()).collect(),
        candidates: measured,
        best,
        met,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    write(&out, &name, &record, &candidates[best], &args)?;
    print_table(&record);
    println!(
        "best: {} (worst residual {:.2} of its tolerance): {}",
        values_label(&record.candidates[best].values),
        record.candidates[best].score,
        if met {
            "meets every target"
        } else {
            "does NOT meet every target"
        }
    );
    println!("wrote {}/ (calibration.csv, calibration.json, {name}.calibrated.yaml, calibration.png, .svg)", out.display());
    Ok(if met { 0 } else { 1 })
}

fn values_label(set: &[(String, f64)]) -> String {
    set.iter()
        .map(|(p, v)| format!("{}={v}", p.rsplit('.').next().unwrap_or(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn item_label(m: &Measurement) -> String {
    loam::plot::calibration::item_label(&serde_json::to_value(m).unwrap_or_default())
}

fn number(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.6e}"))
}

fn csv(record: &Record) -> String {
    let mut out = String::from(
        "candidate,values,quantity,at,target,tolerance,value,residual,score,aspect_ratio,note\n",
    );
    for (k, c) in record.candidates.iter().enumerate() {
        for m in &c.measurements {
            out.push_str(&format!(
                "{k},\"{}\",{:?},{},{},{},{},{},{},{},\"{}\"\n",
                values_label(&c.values),
                item_label(m),
                number(m.at),
                number(Some(m.target)),
                number(Some(m.tolerance)),
                number(m.value),
                number(m.residual),
                number(m.score),
                number(m.aspect_ratio),
                m.note.clone().unwrap_or_default().replace('"', "'")
            ));
        }
    }
    out
}

fn write(
    out: &Path,
    name: &str,
    record: &Record,
    best: &Material,
    args: &CalibrateArgs,
) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(record)? + "\n";
    let mut material = best.clone();
    material.name = Some(format!("{name}_calibrated"));
    let header = format!(
        "# {name} calibrated by `loam material calibrate {}` against its targets:\n\
         # {} (worst residual {:.2} of its tolerance; calibration.csv beside this file).\n",
        args.material.display(),
        values_label(&record.candidates[record.best].values),
        record.candidates[record.best].score
    );
    let yaml = header + &serde_yaml::to_string(&material)?;
    let csv = csv(record);
    let material_file = out.join(format!("{name}.calibrated.yaml"));
    loam::output::write_files_atomic(&[
        (&out.join("calibration.json"), json.as_bytes()),
        (&out.join("calibration.csv"), csv.as_bytes()),
        (&material_file, yaml.as_bytes()),
    ])?;
    CalibrationFigure::of(&serde_json::to_value(record)?).save(&out.join("calibration"))?;
    Ok(())
}

fn print_table(record: &Record) {
    println!(
        "{:<28} {:<34} {:>12} {:>12} {:>9}",
        "candidate", "target", "target", "measured", "residual"
    );
    for c in &record.candidates {
        for m in &c.measurements {
            println!(
                "{:<28} {:<34} {:>12.4} {:>12} {:>9}",
                values_label(&c.values),
                item_label(m),
                m.target,
                m.value.map_or("-".into(), |v| format!("{v:.4}")),
                m.residual
                    .map_or(m.note.clone().unwrap_or_default(), |r| format!(
                        "{:+.1} %",
                        100.0 * r
                    ))
            );
        }
    }
}
