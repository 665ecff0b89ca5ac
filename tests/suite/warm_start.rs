//! Warm starts from earlier runs: `loam solve --warm-start RUN_DIR` and `loam sweep
//! --warm-start` (the hopper's jump as a robot file, problems/hopper_granular.yaml), across
//! heights and across terrains.
//!
//! The 60 mm
//! poppy-seed jump started from the rigid-ground plan converges to another local optimum than
//! the cold solve from the rest guess, a slightly better one (0.047632 against 0.047653): the
//! tests check what holds, that every start from a plan reaches that same optimum and none a
//! worse one than the cold solve, and that a plan started from itself stays where it is.

use crate::common;
use common::csv::read_quoted;

use std::path::Path;

use common::run::{loam, read_json, shipped, Output};
use common::temp_dir::TempDir;

/// `loam solve FILE --out OUT -q ARGS` in `dir`, which must converge; its solution.json.
fn solve(dir: &Path, file: &str, out: &str, args: &[&str]) -> serde_json::Value {
    let file = shipped(file);
    let mut all = vec!["solve", file.as_str(), "--out", out, "-q"];
    all.extend_from_slice(args);
    let output = loam(dir, &all);
    assert_eq!(output.code(), 0, "{}", output.dump());
    read_json(&dir.join(out).join("solution.json"))
}

fn objective(solution: &serde_json::Value) -> f64 {
    solution["objective"].as_f64().expect("an objective")
}

/// Asserts that two plans' objectives agree within `tolerance`, relative.
fn same_objective(a: &serde_json::Value, b: &serde_json::Value, tolerance: f64, what: &str) {
    let (a, b) = (objective(a), objective(b));
    assert!(
        (a - b).abs() <= tolerance * b.abs(),
        "{what}: {a} against {b}"
    );
}

#[test]
fn a_granular_solve_starts_from_a_rigid_plan_and_records_it() {
    let dir = TempDir::new("across-terrains");
    let d = dir.path();
    let rigid = solve(d, "hopper_rigid.yaml", "rigid", &[]);
    let cold = solve(d, "hopper_granular.yaml", "cold", &[]);
    let warm = solve(
        d,
        "hopper_granular.yaml",
        "warm",
        &["--warm-start", "rigid"],
    );
    assert_eq!(
        warm["provenance"]["warm_start"],
        serde_json::json!({"kind": "plan", "plan_id": rigid["plan_id"], "dir": "rigid"})
    );
    assert_eq!(warm["solver_options"]["warm_start_init_point"], "yes");
    // The task holds: the rod's apex 60 mm above its start (the centre of mass rises more).
    assert!(warm["key_figures"]["com_rise_m"].as_f64().unwrap() > 0.06);
    // Another local optimum than the cold solve's, never a worse one.
    assert!(
        objective(&warm) <= objective(&cold) * (1.0 + 1e-6),
        "warm {} cold {}",
        objective(&warm),
        objective(&cold)
    );

    // The same optimum from another start: the 50 mm poppy-seed plan.
    solve(
        d,
        "hopper_granular.yaml",
        "granular50",
        &["--set", "task.apex_rise=0.05"],
    );
    let from_50 = solve(
        d,
        "hopper_granular.yaml",
        "from50",
        &["--warm-start", "granular50"],
    );
    same_objective(
        &from_50,
        &warm,
        1e-6,
        "from 50 mm against from rigid ground",
    );

    // A plan started from itself stays at its optimum.
    let again = solve(
        d,
        "hopper_granular.yaml",
        "again",
        &["--warm-start", "cold"],
    );
    same_objective(&again, &cold, 1e-6, "restarted against cold");
    assert_eq!(
        again["provenance"]["warm_start"]["plan_id"],
        cold["plan_id"]
    );
}

/// `loam solve ... --warm-start FROM --out out` in `dir` must exit 2 with every needle in its
/// message and leave no `out`.
fn refused(dir: &Path, from: &str, extra: &[&str], needles: &[&str]) -> Output {
    let file = shipped("hopper_granular.yaml");
    let mut args = vec!["solve", file.as_str(), "--warm-start", from, "--out", "out"];
    args.extend_from_slice(extra);
    let output = loam(dir, &args);
    assert_eq!(output.code(), 2, "{}", output.dump());
    for needle in needles {
        assert!(
            output.stderr.contains(needle),
            "{needle}: {}",
            output.dump()
        );
    }
    assert!(!dir.join("out").exists(), "{}", output.dump());
    output
}

#[test]
fn a_start_that_is_not_a_loam_run_or_does_not_fit_is_refused_writing_nothing() {
    let dir = TempDir::new("refused");
    let d = dir.path();
    std::fs::create_dir(d.join("notes")).unwrap();
    std::fs::write(d.join("notes/readme.txt"), "not a run").unwrap();
    refused(d, "notes", &[], &["--warm-start", "not a loam result"]);
    refused(d, "missing", &[], &["--warm-start", "no such folder"]);

    // Another robot: the message names the columns the plan lacks.
    let monopod = solve(d, "monopod_hop.yaml", "monopod", &[]);
    assert_eq!(monopod["converged"], true);
    refused(
        d,
        "monopod",
        &[],
        &["--warm-start", "monopod", "trajectory.csv"],
    );
}

/// The hopper's jump as a robot file on coarse meshes (`nodes` + `nodes`), as the sweeps here
/// solve it.
fn coarse(nodes: usize) -> Vec<String> {
    (0..2)
        .flat_map(|phase| {
            [
                "--set".to_string(),
                format!("schedule.{phase}.nodes={nodes}"),
            ]
        })
        .collect()
}

const BED: &str = "{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}";

/// `loam sweep hopper_granular.yaml (coarse(nodes)) ARGS --out OUT -q` in `dir`, which must exit
/// 0 (every plan converged); its `sweep.csv` as (run folder, objective) per row.
fn planar_sweep(dir: &Path, out: &str, nodes: usize, args: &[&str]) -> Vec<(String, f64)> {
    let file = shipped("hopper_granular.yaml");
    let mesh = coarse(nodes);
    let mut all = vec!["sweep", file.as_str()];
    all.extend(mesh.iter().map(String::as_str));
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out, "-q"]);
    let output = loam(dir, &all);
    assert_eq!(output.code(), 0, "{}", output.dump());
    let (header, rows) = read_quoted(&dir.join(out).join("sweep.csv"));
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    rows.iter()
        .map(|r| {
            let objective = r[column("objective")].parse().expect("an objective");
            (r[column("run")].clone(), objective)
        })
        .collect()
}

#[test]
fn a_warm_sweep_across_terrains_records_the_plan_each_point_started_from() {
    // Two chains (50 and 60 mm), each rigid ground first (cold), then poppy seeds from it, at
    // 21 + 21 nodes (at 15 + 15 the warm start at 50 mm does not converge, and its point is
    // solved again from the guess, which its provenance then records).
    let dir = TempDir::new("sweep");
    let d = dir.path();
    let grounds = format!("terrain=[{{model: rigid}}, {BED}]");
    planar_sweep(
        d,
        "sw",
        21,
        &[
            "--vary",
            &grounds,
            "--vary",
            "task.apex_rise=0.05,0.06",
            "--warm-start",
        ],
    );
    let bed_folder = "terrain=model_added_mass_medium_poppy_seeds_foot_radius_0.038";
    for height in ["0.05", "0.06"] {
        let rigid_dir = format!("sw/terrain=model_rigid-apex_rise={height}");
        let granular_dir = format!("sw/{bed_folder}-apex_rise={height}");
        let rigid = read_json(&d.join(&rigid_dir).join("solution.json"));
        let granular = read_json(&d.join(&granular_dir).join("solution.json"));
        assert_eq!(
            rigid["provenance"]["warm_start"],
            serde_json::json!({"kind": "rest"})
        );
        assert_eq!(
            granular["provenance"]["warm_start"],
            serde_json::json!({"kind": "plan", "plan_id": rigid["plan_id"], "dir": rigid_dir}),
            "{height}"
        );
        assert_eq!(granular["converged"], true, "{height}");
    }

    // The sweep starts its plan as `loam solve --warm-start` does: the same optimum.
    let terrain = format!("terrain={BED}");
    let mesh = coarse(21);
    let mut args: Vec<&str> = mesh.iter().map(String::as_str).collect();
    args.extend([
        "--set",
        &terrain,
        "--set",
        "task.apex_rise=0.06",
        "--warm-start",
        "sw/terrain=model_rigid-apex_rise=0.06",
    ]);
    let solved = solve(d, "hopper_granular.yaml", "solved", &args);
    let swept = read_json(&d.join(format!("sw/{bed_folder}-apex_rise=0.06/solution.json")));
    same_objective(&solved, &swept, 1e-9, "loam solve against loam sweep");
}

/// A warm chain down the heights on poppy seeds (15 + 15 nodes) reaches the cold sweep's
/// optima (or better) at every height, each plan started from the one above it, and records
/// that start.
#[test]
fn a_warm_sweep_from_the_top_down_reaches_the_cold_optima_and_records_its_starts() {
    let dir = TempDir::new("sweep-chain");
    let d = dir.path();
    let terrain = format!("terrain={BED}");
    let heights = "task.apex_rise=0.08:0.04:0.01";
    let cold = planar_sweep(d, "cold", 15, &["--set", &terrain, "--vary", heights]);
    let warm = planar_sweep(
        d,
        "warm",
        15,
        &["--set", &terrain, "--vary", heights, "--warm-start"],
    );
    assert_eq!(cold.len(), 5);
    for ((run, c), (warm_run, w)) in cold.iter().zip(&warm) {
        assert_eq!(run, warm_run);
        assert!(*w <= c * (1.0 + 1e-6), "{run}: warm {w}, cold {c}");
    }
    // The first plan cold, every other from the one above it.
    let mut previous: Option<(String, serde_json::Value)> = None;
    for (run, _) in &warm {
        let folder = format!("warm/{run}");
        let solution = read_json(&d.join(&folder).join("solution.json"));
        let expected = match &previous {
            None => serde_json::json!({"kind": "rest"}),
            Some((dir, plan_id)) => {
                serde_json::json!({"kind": "plan", "plan_id": plan_id, "dir": dir})
            }
        };
        assert_eq!(solution["provenance"]["warm_start"], expected, "{run}");
        previous = Some((folder, solution["plan_id"].clone()));
    }
}
