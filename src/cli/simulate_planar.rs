//! `loam simulate RUN_DIR` for a planar robot's plan: the hybrid replay of `sim/planar.rs`.

use std::path::Path;

use anyhow::Context;
use loam::output::identity;
use loam::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use loam::sim::planar;

use super::BadInput;

/// Whether `run_dir` holds a planar robot's plan (its problem has a `schedule`).
pub fn is_planar_run(run_dir: &Path) -> bool {
    std::fs::read_to_string(run_dir.join("solution.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json["problem"].get("schedule").is_some())
}

/// A planar run folder's plan: its problem, robot, nodes and identity (solution.json and
/// trajectory.csv checked to be one plan).
pub struct PlanarRun {
    pub problem: PlanarProblem,
    pub robot: loam::model::planar::PlanarRobot,
    pub table: planar::PlanTable,
    pub plan_id: String,
}

pub fn read_planar_run(run_dir: &Path) -> anyhow::Result<PlanarRun> {
    let files = loam::output::run::read_plan_files(run_dir).map_err(|e| BadInput(e.to_string()))?;
    let (solution_path, csv_path) = (&files.solution_path, &files.trajectory_path);
    let problem: PlanarProblem =
        serde_json::from_value(files.json["problem"].clone()).map_err(|e| {
            BadInput(format!(
                "{}: `problem` is not a planar problem: {e}",
                solution_path.display()
            ))
        })?;
    let robot = problem.robot.build(problem.gravity);
    let csv = String::from_utf8_lossy(&files.trajectory);
    let table = planar::read_plan(&csv, &robot)
        .map_err(|e| BadInput(format!("{}: {e}", csv_path.display())))?;
    let expected: usize = problem.schedule.iter().map(|p| p.nodes).sum();
    if table.t.len() != expected {
        return Err(BadInput(format!(
            "{}: {} nodes, but the plan's schedule has {expected}: the trajectory does not belong to this solution.json",
            csv_path.display(),
            table.t.len()
        ))
        .into());
    }
    Ok(PlanarRun {
        problem,
        robot,
        table,
        plan_id: files.plan_id,
    })
}

/// The ground of `--terrain SPEC` for a planar plan: `rigid` or a medium preset (the added-mass
/// bed, `poppy_seeds`), with the plan's friction, or a planar problem file's `terrain` section
/// (any contact model but a wrench space). Returns it with the replay's file stem:
/// `replay-on-<preset>` or `replay-on-<file stem>-<8 hex digits of the terrain's hash>`.
fn terrain_of(
    spec: &str,
    own: &PlanarTerrainConfig,
) -> anyhow::Result<(PlanarTerrainConfig, String)> {
    use loam::problem::planar::{AddedMassGroundConfig, RigidGroundConfig};
    let friction = match own {
        PlanarTerrainConfig::Rigid(g) => g.friction,
        PlanarTerrainConfig::AddedMass(g) => g.friction,
        PlanarTerrainConfig::Spring(g) => g.friction,
        PlanarTerrainConfig::WrenchSpace(_) => RigidGroundConfig::default().friction,
    };
    let path = Path::new(spec);
    if spec == "rigid" {
        let terrain = PlanarTerrainConfig::Rigid(RigidGroundConfig { friction });
        return Ok((terrain, "replay-on-rigid".into()));
    }
    if let Ok(medium) = loam::problem::load_yaml::<loam::problem::MediumPreset>(spec) {
        if !path.exists() {
            let terrain = PlanarTerrainConfig::AddedMass(AddedMassGroundConfig {
                friction,
                medium,
                ..Default::default()
            });
            return Ok((terrain, format!("replay-on-{spec}")));
        }
    }
    if !path.is_file() {
        return Err(BadInput(format!(
            "--terrain {spec}: not a terrain preset (accepted: rigid, poppy_seeds) nor a problem file"
        ))
        .into());
    }
    let terrain = match loam::problem::load_any(path, &[])? {
        loam::problem::AnyProblem::Planar(p) => p.terrain,
        loam::problem::AnyProblem::Hopper(_) => {
            return Err(BadInput(format!(
                "--terrain {spec}: the hopper's problem file; a planar robot's plan replays on a planar problem file's terrain or a preset (rigid, poppy_seeds)"
            ))
            .into())
        }
    };
    if let PlanarTerrainConfig::WrenchSpace(_) = terrain {
        return Err(BadInput(format!(
            "--terrain {spec}: a wrench-space terrain; plans replay on wrench spaces in the MDP simulator only from `loam solve` on that terrain"
        ))
        .into());
    }
    let value = serde_json::to_value(&terrain)?;
    let hash = identity::content_hash(identity::canonical_json(&value).as_bytes());
    let stem = path
        .file_stem()
        .map_or("terrain".into(), |s| s.to_string_lossy().into_owned());
    Ok((terrain, format!("replay-on-{stem}-{}", &hash[..8])))
}

pub fn run(
    run_dir: &Path,
    terrain: Option<&str>,
    quiet: bool,
    max_steps: usize,
) -> anyhow::Result<u8> {
    let PlanarRun {
        mut problem,
        table,
        plan_id,
        ..
    } = read_planar_run(run_dir)?;
    if let PlanarTerrainConfig::WrenchSpace(_) = &problem.terrain {
        return Err(BadInput(format!(
            "{}: a plan on a wrench space is replayed in the MDP simulator by `loam solve` \
             itself (replay.csv in the same folder); `loam simulate` replays plans on rigid \
             ground, or on grains with --backend dem-cpu --bed CHECKPOINT",
            run_dir.display()
        ))
        .into());
    }
    // Another ground: the same robot and commands on another contact model.
    let mut stem = "replay".to_string();
    if let Some(spec) = terrain {
        let (ground, named) = terrain_of(spec, &problem.terrain)?;
        if ground != problem.terrain {
            problem.terrain = ground;
            stem = named;
        }
    }
    let settings = planar::ReplaySettings {
        max_steps,
        ..Default::default()
    };
    let replay = planar::replay(&problem, &table, &settings).context("replaying the plan")?;
    let mut out = String::from("mode,");
    out.push_str(&replay.columns.join(","));
    out.push('\n');
    for (row, mode) in replay.rows.iter().zip(&replay.modes) {
        out.push_str(mode);
        for v in row {
            out.push_str(&format!(",{v:.9e}"));
        }
        out.push('\n');
    }
    identity::write_derived(
        &plan_id,
        Some((&run_dir.join(format!("{stem}.csv")), out.as_bytes())),
        &run_dir.join(format!("{stem}.json")),
        &replay.summary,
    )?;
    let s = &replay.summary;
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
            problem.terrain.model_name()
        );
    }
    // An incomplete replay is a failed simulation (exit 1), as a solve that did not converge.
    Ok(if s.complete { 0 } else { 1 })
}
