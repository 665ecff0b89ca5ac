//! Warm starts from earlier runs: `loam solve --warm-start RUN_DIR` and `loam sweep
//! --warm-start` (the hopper's jump as a robot file, problems/hopper_jump.yaml), across
//! heights and across terrains; the hopper planner's own chain (`loam::sweep::chain`, which
//! `loam bench sweep` times).
//!
//! A plan made on rigid ground starts a poppy-seed solve only once its heights are lowered by
//! the foot's rest depth on the bed; its multipliers are taken by row name. The 60 mm
//! poppy-seed jump started from the rigid-ground plan converges to another local optimum than
//! the cold solve from the rest guess, a slightly better one (0.047632 against 0.047653): the
//! tests check what holds, that every start from a plan reaches that same optimum and none a
//! worse one than the cold solve, and that a plan started from itself stays where it is.

use crate::common;

use std::path::Path;

use common::run::{loam, read_json, shipped, Output};
use common::temp_dir::TempDir;
use loam::model::hopper::state;
use loam::planner::{self, warm_start};
use loam::problem;
use loam::terrain::Terrain;

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
    assert!((warm["apex_rise_m"].as_f64().unwrap() - 0.06).abs() < 1e-6);
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
        &["--set", "task.apex_height=0.05"],
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

#[test]
fn a_rigid_plan_is_lowered_onto_the_bed_by_the_foots_rest_depth() {
    let dir = TempDir::new("shift");
    solve(dir.path(), "hopper_rigid.yaml", "rigid", &[]);
    let (_, start) = loam::output::run::read_warm_start(&dir.path().join("rigid")).unwrap();
    let granular = problem::load(Path::new(&shipped("hopper_granular.yaml")), &[]).unwrap();
    let (jump, nlp) = planner::transcribe(&granular).unwrap();

    // The shift is the depth at which the bed's static resistance carries the robot.
    let shift = warm_start::rest_shift(&start.jump, &jump);
    let depth = -shift[state::Z_F];
    let Terrain::AddedMass(bed) = &jump.terrain else {
        panic!("a bed")
    };
    let weight = jump.robot.total_mass() * jump.robot.gravity;
    assert!((bed.static_resistance(depth) - weight).abs() < 1e-6 * weight);
    assert!((0.007..0.008).contains(&depth), "{depth}");
    for height in [state::Z_M, state::Z_R] {
        assert!((shift[height] - shift[state::Z_F]).abs() < 1e-12);
    }
    for other in [state::V_M, state::V_R, state::V_F, state::E, state::Z_D] {
        assert_eq!(shift[other], 0.0);
    }

    // Moved, the rigid plan starts at the bed's rest: every variable the granular problem
    // fixes (the start at rest, the foot's speed at takeoff) is at its value.
    let (x0, multipliers) = start.point(&jump, &nlp);
    let fixed: Vec<usize> = (0..x0.len())
        .filter(|&i| nlp.x_lower[i] == nlp.x_upper[i])
        .collect();
    assert!(fixed.len() >= 6, "{fixed:?}");
    for i in fixed {
        assert!(
            (x0[i] - nlp.x_lower[i]).abs() < 1e-9,
            "{}: {} against {}",
            nlp.variable_name(i),
            x0[i],
            nlp.x_lower[i]
        );
    }

    // Multipliers by row name: a row both problems have keeps the rigid plan's; a row only
    // the bed has starts at zero.
    let named: std::collections::HashMap<&str, f64> = start
        .multipliers
        .constraints
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect();
    let (mut shared, mut own) = (0, 0);
    for r in 0..nlp.n_constraints() {
        let name = nlp.constraint_name(r);
        match named.get(name.as_str()) {
            Some(&value) => {
                assert_eq!(multipliers.g[r], value, "{name}");
                shared += 1;
            }
            None => {
                assert_eq!(multipliers.g[r], 0.0, "{name}");
                own += 1;
            }
        }
    }
    assert!(named.contains_key("stance interval 8: defect z_m"));
    assert!(shared > 10 * own && own > 0, "{shared} shared, {own} own");
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

    // Another node count: the message says what differs.
    solve(
        d,
        "hopper_rigid.yaml",
        "rigid",
        &["--set", "phases.0.nodes=21"],
    );
    refused(
        d,
        "rigid",
        &[],
        &[
            "cannot start this problem",
            "stance 21 nodes",
            "stance 31 nodes",
        ],
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

/// `loam sweep hopper_jump.yaml (coarse(nodes)) ARGS --out OUT -q` in `dir`, which must exit
/// 0 (every plan converged); its `sweep.csv` as (run folder, objective) per row.
fn planar_sweep(dir: &Path, out: &str, nodes: usize, args: &[&str]) -> Vec<(String, f64)> {
    let file = shipped("hopper_jump.yaml");
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

/// A CSV whose fields may be quoted (a sweep's varied section, `"{model: rigid}"`), as
/// (header, rows of fields).
fn read_quoted(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(loam::plot::table::fields_of);
    let header = lines.next().expect("a header");
    (header, lines.collect())
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
    let solved = solve(d, "hopper_jump.yaml", "solved", &args);
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

/// A sweep over heights builds its NLP once (`planner::Transcriptions`): the kept NLP, moved
/// to another height, has the bounds of a fresh transcription at that height, and a warm
/// chain of solves on it gives the plans of the same chain transcribed afresh for every
/// height, bit for bit (same iterations, same variables); another terrain transcribes anew.
#[test]
fn a_height_sweep_transcribes_once_and_plans_as_if_it_transcribed_every_height() {
    use loam::solver::SolveSettings;
    for file in ["hopper_rigid.yaml", "hopper_two_hops.yaml"] {
        let at = |height: f64| {
            let set = vec![format!("task.apex_height={height}")];
            problem::load(Path::new(&shipped(file)), &set).unwrap()
        };
        let settings = |p: &problem::Problem| SolveSettings {
            options: planner::solver_options(p),
            ..SolveSettings::default()
        };
        let mut kept = planner::Transcriptions::default();
        let (mut start_kept, mut start_fresh) = (None, None);
        for (i, height) in [0.05, 0.07, 0.09].into_iter().enumerate() {
            let p = at(height);
            let (kept_plan, _) =
                warm_start::plan_from_with(&p, &settings(&p), start_kept.as_ref(), None, &mut kept)
                    .unwrap();
            let (fresh_plan, _) =
                warm_start::plan_from(&p, &settings(&p), start_fresh.as_ref(), None).unwrap();
            let what = format!("{file} at {height} m");
            assert!(kept_plan.report.converged, "{what}");
            assert_eq!(
                kept_plan.report.iterations, fresh_plan.report.iterations,
                "{what}"
            );
            assert_eq!(kept_plan.report.x, fresh_plan.report.x, "{what}");
            assert!((kept_plan.apex_rise - height).abs() < 1e-4, "{what}");
            if i > 0 {
                // The kept NLP at this height has the bounds of a fresh transcription.
                let (_, fresh) = planner::transcribe(&p).unwrap();
                let (_, reused) = kept.take(&p).unwrap();
                assert_eq!(reused.g_lower, fresh.g_lower, "{what}");
                assert_eq!(reused.g_upper, fresh.g_upper, "{what}");
                assert_eq!(reused.x_lower, fresh.x_lower, "{what}");
                assert_eq!(reused.x_upper, fresh.x_upper, "{what}");
                kept.keep(&p, reused);
            }
            start_kept = Some(warm_start::PlanStart::of(&kept_plan));
            start_fresh = Some(warm_start::PlanStart::of(&fresh_plan));
        }
        if file != "hopper_rigid.yaml" {
            continue; // several hops are planned on rigid ground only
        }
        // Another terrain shares nothing: the kept rigid NLP is not reused for the bed.
        let mut bed = at(0.05);
        bed.terrain.model = problem::TerrainModel::AddedMass;
        let (_, reused) = kept.take(&bed).unwrap();
        let (_, fresh) = planner::transcribe(&bed).unwrap();
        assert_eq!(reused.g_lower, fresh.g_lower, "{file} on the bed");
        assert_eq!(reused.jac_rows, fresh.jac_rows, "{file} on the bed");
    }
}

/// The hopper planner's chain (`loam::sweep::chain`, which `loam bench sweep` times) follows
/// its first plan's local optimum. From the highest jump down, the rigid sweep's warm plans reach the cold plans' optima or better ones at every height (measured:
/// the same at 100-50 mm, better at 40 and 30 mm), which is why `loam bench sweep` and the
/// README sweep heights from the top down; from the bottom up they end worse at 7 of 8
/// heights (up to 65 %), which this test also pins so that the advice stays true.
#[test]
fn the_hopper_planners_chain_from_the_top_down_reaches_the_cold_optima_or_better() {
    use loam::sweep::chain::solve_in_order;
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/hopper_rigid.yaml");
    let heights = [
        "0.10", "0.09", "0.08", "0.07", "0.06", "0.05", "0.04", "0.03",
    ];
    let problems: Vec<problem::Problem> = heights
        .iter()
        .map(|h| problem::load(&file, &[format!("task.apex_height={h}")]).unwrap())
        .collect();
    let sweep = |problems: &[problem::Problem], warm: bool| {
        let mut ends = Vec::new();
        solve_in_order(problems.iter(), warm, |_, plan| {
            assert!(plan.report.converged, "{}", plan.report.status.name());
            ends.push(plan.report.objective);
            Ok::<(), planner::PlanError>(())
        })
        .unwrap();
        ends
    };
    let cold = sweep(&problems, false);
    let down = sweep(&problems, true);
    for ((h, c), w) in heights.iter().zip(&cold).zip(&down) {
        assert!(
            *w <= c * (1.0 + 1e-6),
            "{h} m: warm from above {w}, cold {c}"
        );
    }
    let mut up_problems = problems.clone();
    up_problems.reverse();
    let up = sweep(&up_problems, true);
    let worse = up
        .iter()
        .zip(cold.iter().rev())
        .filter(|(w, c)| **w > **c * 1.01)
        .count();
    assert!(worse >= 5, "from the bottom up, {worse} of 8 heights worse");
}
