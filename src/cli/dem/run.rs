//! `loam dem run SCENE --for T [--out DIR]`: a general scene run for a time, its grains
//! written as a VTK series, its measurements as `summary.json`, its deposit as a figure.

use std::path::{Path, PathBuf};
use std::time::Instant;

use loam::output::dem::snapshot::{Grains, Series};
use loam::plot::dem_scene::{lube_runout, Deposit};
use loam::sim::dem::run::{self as scene_run, RunSettings};
use loam::sim::dem::{Backend, CpuBackend, DemError, Scene};

use super::super::{interrupt, progress, BadInput};
use super::{classify, stem};

#[derive(clap::Args)]
pub struct RunArgs {
    /// The scene file (YAML; see scenes/ and docs/DEM.md).
    pub scene: PathBuf,
    /// Simulated time to run after settling [s].
    #[arg(long = "for", value_name = "SECONDS")]
    pub duration: f64,
    /// Output folder (default: runs/dem/<scene name>/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Snapshot interval [s] (default: a tenth of --for); t = 0 and the end are always written.
    #[arg(long, value_name = "SECONDS")]
    pub snapshot_every: Option<f64>,
}

pub fn run(args: RunArgs) -> anyhow::Result<u8> {
    if !(args.duration > 0.0 && args.duration.is_finite()) {
        return Err(BadInput(format!(
            "--for is {}; it must be a positive time in seconds",
            args.duration
        ))
        .into());
    }
    let every = args.snapshot_every.unwrap_or(args.duration / 10.0);
    if !(every > 0.0 && every.is_finite()) {
        return Err(BadInput(format!(
            "--snapshot-every is {every}; it must be a positive time in seconds"
        ))
        .into());
    }
    let scene = Scene::load(&args.scene).map_err(classify)?;
    let out = args
        .out
        .unwrap_or_else(|| Path::new("runs/dem").join(stem(&args.scene)));
    // Bad input is found above, before anything is written; an unwritable folder now.
    loam::output::ensure_writable(&out)?;
    println!(
        "{}: {} grains{}{}, Δt = {:.3e} s, running {} s after settling",
        args.scene.display(),
        scene.grain_count(),
        scene
            .material
            .as_ref()
            .map(|m| format!(" of {m}"))
            .unwrap_or_default(),
        if scene.rough_floor.is_some() {
            " on a rough floor"
        } else {
            ""
        },
        scene.time_step(),
        args.duration
    );
    let start = Instant::now();
    interrupt::install();
    let mut cpu = CpuBackend::new();
    let mut backend = progress::Stepped::new(
        &mut cpu,
        progress::spinner(false, "settling and running"),
        scene.time_step(),
    );
    let prepared = scene_run::prepare(&mut backend, &scene).map_err(classify)?;
    let snapshots = out.join("snapshots");
    let mut series: Option<Series> = None;
    // A snapshot that cannot be written stops the run; its error (exit 3) is kept here.
    let mut failed: Option<anyhow::Error> = None;
    let mut write = |t: f64, g: &loam::sim::dem::GrainState| -> Result<(), DemError> {
        let written = (|| -> anyhow::Result<()> {
            if series.is_none() {
                loam::output::ensure_writable(&snapshots)?;
                series = Some(Series::create(&snapshots)?);
            }
            let grains = Grains {
                positions: &g.position,
                radii: &g.radius,
                velocities: &g.velocity,
            };
            series.as_mut().map_or(Ok(()), |s| s.add(t, &grains, &[]))?;
            Ok(())
        })();
        written.map_err(|e| {
            failed = Some(e);
            DemError::Unphysical("a snapshot could not be written".into())
        })
    };
    let settings = RunSettings {
        duration: args.duration,
        snapshot_every: every,
    };
    let summary = scene_run::run(&mut backend, &scene, &prepared, settings, &mut write);
    if let Some(e) = failed {
        return Err(e);
    }
    let summary = summary.map_err(classify)?;
    let end = backend.grains().map_err(classify)?;
    drop(backend);
    let mut json = serde_json::to_value(&summary)?;
    json["scene"] = serde_json::json!(args.scene.display().to_string());
    json["wall_seconds"] = serde_json::json!(start.elapsed().as_secs_f64());
    loam::output::write_atomic(
        &out.join("summary.json"),
        (serde_json::to_string_pretty(&json)? + "\n").as_bytes(),
    )?;
    let initial: Vec<f64> = prepared.grains.position.iter().map(|x| x[2]).collect();
    let fixed: Vec<bool> = end.inverse_mass.iter().map(|w| *w <= 0.0).collect();
    let [half_x, _] = scene.container.half_extents();
    let c = summary.collapse;
    let at = |length: f64| c.map(|c| c.back + c.direction * length);
    let figure = Deposit {
        title: format!(
            "{} at t = {:.2} s{}",
            stem(&args.scene),
            summary.time,
            c.map(|c| format!(
                ": a = {:.2}, ΔL/L0 = {:.2} (Lube et al. 2005: {:.2})",
                c.aspect_ratio,
                c.runout_ratio,
                lube_runout(c.aspect_ratio)
            ))
            .unwrap_or_default()
        ),
        positions: &end.position,
        radii: &end.radius,
        initial_heights: &initial,
        fixed: &fixed,
        x_range: [-half_x, half_x],
        gate: c.map(|c| c.gate),
        front: at(c.map_or(0.0, |c| c.final_length)),
        law_front: c.and_then(|c| at(c.initial_length * (1.0 + lube_runout(c.aspect_ratio)))),
    };
    figure.save_png(&out.join("deposit"))?;
    println!(
        "t = {:.3} s: kinetic energy {:.3e} J ({:.3e} J per grain){} ({:.1} s wall)",
        summary.time,
        summary.kinetic_energy,
        summary.kinetic_energy_per_grain,
        c.map(|c| format!(
            "; column a = {:.3} (L0 {:.4} m, H0 {:.4} m): runout ΔL/L0 = {:.3}, {} grains \
             beyond the front",
            c.aspect_ratio, c.initial_length, c.initial_height, c.runout_ratio, c.escaped
        ))
        .unwrap_or_default(),
        start.elapsed().as_secs_f64()
    );
    println!("wrote {}", out.display());
    Ok(if summary.settled { 0 } else { 1 })
}
