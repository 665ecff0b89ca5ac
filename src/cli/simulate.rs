//! `loam simulate RUN_DIR`: replay a saved plan's command and compare with the plan: in
//! `sim::planar` (on its own contact model or another), in the MDP simulator on a wrench
//! space, or on DEM grains (`simulate_dem.rs`).

use std::path::{Path, PathBuf};

use loam::api;
use loam::sim::planar;

use super::BadInput;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The reduced-order model with event detection (MODEL.md sections 1 and 2).
    Reduced,
    /// The maximum-dissipation simulator on a wrench-space terrain (docs/WRENCH_SPACE.md):
    /// a planar robot's plan on `--terrain FILE`, FILE's terrain a wrench space.
    Mdp,
    /// The discrete-element bed on the CPU.
    DemCpu,
    /// The discrete-element bed on a CUDA GPU.
    DemCuda,
}

#[derive(clap::Args)]
pub struct Args {
    /// A folder written by `loam solve` (holding solution.json and trajectory.csv).
    pub run_dir: PathBuf,
    /// Replay on another terrain: a preset (`rigid`, `poppy_seeds`) or a problem file whose
    /// `terrain` section is used. Default: the plan's own terrain. The replay is named after
    /// it: replay-on-<preset>, or replay-on-<file stem>-<hash of its parameters> for a file.
    #[arg(long, value_name = "PRESET|FILE")]
    pub terrain: Option<String>,
    /// The simulator [default: reduced, or mdp when the terrain is a wrench space]
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Relative tolerance of the integrator's error control.
    #[arg(long, default_value_t = 1e-10)]
    pub rtol: f64,
    /// Absolute tolerance of the integrator's error control.
    #[arg(long, default_value_t = 1e-12)]
    pub atol: f64,
    /// A planar robot's replay stops after this many integrator steps; what it has is written,
    /// marked incomplete (`"complete": false` in replay.json), and simulate exits 1.
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    pub max_steps: usize,
    /// A gait's plan (`task.periodic`): replay the plan this many times over, each time
    /// measured against the plan's length and apex (replay.json's `strides`) [default for a
    /// gait: enough times to run three strides, a plan holding `task.strides` of them; any
    /// other plan: 1]
    #[arg(long, value_name = "N")]
    pub strides: Option<usize>,
    /// The MDP simulator's longest step [s]: every interval of the plan is cut into equal
    /// steps no longer than this [default: 0.001]
    #[arg(long, value_name = "SECONDS")]
    pub mdp_step: Option<f64>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub dem: super::simulate_dem::DemArgs,
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let planar = api::is_planar_run(&args.run_dir);
    if let Some(backend @ (Backend::DemCpu | Backend::DemCuda)) = args.backend {
        if args.terrain.is_some() {
            return Err(BadInput(
                "--terrain chooses the contact model of --backend reduced or mdp; the DEM backends \
                 replay on the grains of --bed"
                    .into(),
            )
            .into());
        }
        if planar {
            return super::simulate_dem::run_planar(&args.run_dir, backend, &args.dem, args.quiet);
        }
        return super::simulate_dem::run(&args.run_dir, backend, &args.dem, args.quiet);
    }
    if args.dem.bed.is_some() {
        return Err(BadInput(
            "--bed is for the DEM backends: add --backend dem-cpu (or dem-cuda)".into(),
        )
        .into());
    }
    let options = api::SimulateOptions {
        terrain: args.terrain.clone(),
        rtol: args.rtol,
        atol: args.atol,
        max_steps: args.max_steps,
        strides: args.strides,
        simulator: match args.backend {
            None => api::Simulator::Auto,
            Some(Backend::Mdp) => api::Simulator::Mdp,
            Some(_) => api::Simulator::Reduced,
        },
        mdp_step: args.mdp_step,
    };
    let simulated = api::simulate(&args.run_dir, &options)?;
    print_planar(
        &simulated.summary,
        &args.run_dir,
        &simulated.stem,
        args.quiet,
    );
    // An incomplete replay is a failed simulation (exit 1), as a solve that did not converge.
    Ok(if simulated.complete { 0 } else { 1 })
}

/// Prints a planar replay's summary; a replay that stopped short is said on stderr whatever
/// `quiet` says.
fn print_planar(s: &planar::PlanarReplaySummary, run_dir: &Path, stem: &str, quiet: bool) {
    if let Some(reason) = &s.stopped {
        // Written, marked incomplete, and said on stderr whatever --quiet says: a script
        // must not take a partial replay for a verdict on the plan.
        eprintln!(
            "replay stopped before the plan's end: {reason}\n  wrote what it has to {}/{{{stem}.csv, {stem}.json}}, marked incomplete (\"complete\": false)",
            run_dir.display()
        );
    }
    if !quiet {
        let steps = s
            .integration
            .steps
            .map_or("an incomplete replay of".to_string(), |n| n.to_string());
        println!(
            "replayed {} steps: distance {:.4} m (plan {:.4} m, {:.2}% off), centre of mass peak rise {:.4} m (plan {:.4} m, {:.2}% off)",
            steps,
            s.achieved_distance_m,
            s.planned_distance_m,
            100.0 * s.distance_error_rel,
            s.achieved_com_peak_m,
            s.planned_com_peak_m,
            100.0 * s.com_peak_error_rel
        );
        if let (Some(planned), Some(achieved), Some(rel)) = (
            s.planned_apex_rise_m,
            s.achieved_apex_rise_m,
            s.apex_rise_error_rel,
        ) {
            println!(
                "  the task's apex rise {achieved:.5} m (plan {planned:.5} m, {:.2}% off)",
                100.0 * rel
            );
        }
        for k in &s.strides {
            println!(
                "  stride {}: length {:.4} m (plan {:.4} m, {:.2}% off), apex {:.4} m (plan {:.4} m, {:.2}% off)",
                k.stride,
                k.length_m,
                k.planned_length_m,
                100.0 * k.length_error_rel,
                k.apex_m,
                k.planned_apex_m,
                100.0 * k.apex_error_rel
            );
        }
        // In a bed, feet held on the verge of sinking creep (sink, stick, sink, ...): those
        // events are counted here and listed in replay.json.
        let creeping = |kind: &str| matches!(kind, "sinks" | "sticks");
        for e in s.events.iter().filter(|e| !creeping(e.kind)) {
            println!("  {:>8.4} s  {:<10} {}", e.t, e.kind, e.contact);
        }
        let in_bed: Vec<_> = s.events.iter().filter(|e| creeping(e.kind)).collect();
        if let (Some(first), Some(last)) = (in_bed.first(), in_bed.last()) {
            println!(
                "  {} times a foot began or stopped sinking into the bed, from {:.4} s to {:.4} s (replay.json lists them)",
                in_bed.len(),
                first.t,
                last.t
            );
        }
        if s.max_friction_excess > 0.0 {
            println!(
                "  holding the feet needed more friction than the ground has (excess {:.1}% of μ F_z)",
                100.0 * s.max_friction_excess
            );
        }
        if s.max_unloaded_side_force_n > 0.0 {
            println!(
                "  a foot the ground had let go of (F_z = 0, below the surface) was held sideways by up to {:.3} N",
                s.max_unloaded_side_force_n
            );
        }
        for limit in s.joint_limits.iter().filter(|l| l.samples_outside > 0) {
            println!(
                "  `{}` left its limits in {} samples (by up to {:.3e})",
                limit.coordinate, limit.samples_outside, limit.max_excess
            );
        }
        println!(
            "  wrote {}/{{{stem}.csv, {stem}.json}} (on {})",
            run_dir.display(),
            s.terrain.model_name()
        );
    }
}
