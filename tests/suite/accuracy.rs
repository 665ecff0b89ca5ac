//! Plans accurate to their own model at the default settings, and multi-start: every height
//! of the hopper's jump sweep (30-100 mm, poppy seeds and rigid ground, through the robot
//! file `problems/hopper_granular.yaml`) replays within 0.5 % of its task or is reported as not
//! converged; `starts: N` keeps the best of its starts, lists them all, and reaches the
//! cheaper rigid optima a single start misses; refinement keeps the optimum it refines.

use crate::common;

use std::path::{Path, PathBuf};

use common::run::{assert_exit, loam, read_json};
use common::temp_dir::TempDir;

fn problem() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/hopper_granular.yaml")
}

/// `loam solve hopper_granular.yaml --set ARGS... --out DIR/name -q`: its exit code and, when it
/// wrote one, its solution.json.
fn solve(dir: &Path, name: &str, sets: &[&str]) -> (i32, Option<serde_json::Value>) {
    let file = problem();
    let mut args = vec!["solve", file.to_str().unwrap(), "--out", name, "-q"];
    for set in sets {
        args.extend(["--set", set]);
    }
    let out = loam(dir, &args);
    assert!(matches!(out.code(), 0 | 1), "{sets:?}: {}", out.dump());
    let path = dir.join(name).join("solution.json");
    (out.code(), path.is_file().then(|| read_json(&path)))
}

#[test]
fn every_height_of_the_jump_sweep_replays_within_half_a_percent_or_is_reported() {
    let dir = TempDir::new("accuracy");
    for (terrain, set) in [
        ("poppy_seeds", None),
        ("rigid", Some("terrain={model: rigid}")),
    ] {
        for mm in (30..=100).step_by(10) {
            let name = format!("{terrain}-{mm}");
            let rise = format!("task.apex_rise={}", mm as f64 / 1e3);
            let mut sets = vec![rise.as_str()];
            sets.extend(set);
            let (code, solution) = solve(dir.path(), &name, &sets);
            let solution = solution.unwrap_or_else(|| panic!("{name}: no solution.json"));
            if code == 1 {
                // Reported: not converged (IPOPT's status), never a plan passed off as good.
                assert_eq!(solution["converged"], false, "{name}");
                // Measured: only the bed's 90 and 100 mm, from the rest guess.
                assert!(terrain == "poppy_seeds" && mm >= 90, "{name}: {solution}");
                continue;
            }
            assert_eq!(solution["converged"], true, "{name}");
            assert_eq!(solution["mesh_tolerance_met"], true, "{name}");
            let sim = loam(dir.path(), &["simulate", &name, "-q"]);
            assert_eq!(sim.code(), 0, "{name}: {}", sim.dump());
            let replay = read_json(&dir.path().join(&name).join("replay.json"));
            let planned = replay["planned_apex_rise_m"].as_f64().unwrap();
            let achieved = replay["achieved_apex_rise_m"].as_f64().unwrap();
            assert!(
                (planned - mm as f64 / 1e3).abs() < 1e-6,
                "{name}: plan {planned}"
            );
            assert!(
                (achieved - planned).abs() <= 0.005 * planned,
                "{name}: the rod rises {achieved} m in the replay, {planned} m in the plan"
            );
        }
    }
}

/// On rigid ground at 50 mm, eight starts (the first the one-stage solve, 0.01064; the others
/// two stages from durations held at Halton points): every start is listed, one kept, the
/// best, never worse than the single start, and refinement stays on it. (The pumping plan at
/// 0.00631, below the hopper planner's 0.00646, is the file's own two stages', which hold the
/// stance at its 0.2 s cap; no Halton point holds it that long.)
#[test]
fn several_starts_keep_the_best_plan_and_list_every_start() {
    let dir = TempDir::new("starts");
    let rigid = "terrain={model: rigid}";
    let one_stage = "strategy=one_stage";
    let (code, one) = solve(
        dir.path(),
        "one",
        &[rigid, one_stage, "task.apex_rise=0.05"],
    );
    assert_eq!(code, 0);
    let one = one.unwrap();
    assert!(one.get("starts").is_none());
    let (code, eight) = solve(
        dir.path(),
        "eight",
        &[rigid, one_stage, "task.apex_rise=0.05", "starts=8"],
    );
    assert_eq!(code, 0);
    let eight = eight.unwrap();
    let starts = eight["starts"].as_array().unwrap();
    assert_eq!(starts.len(), 8);
    assert_eq!(starts[0]["held_durations"].as_array().unwrap().len(), 0);
    // Start 1 holds the stance at the middle of [0.01, 0.2] s and the flight at a third of
    // [0.01, 0.6] s (Halton bases 2 and 3).
    let held: Vec<f64> = starts[1]["held_durations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_f64().unwrap())
        .collect();
    assert!((held[0] - 0.105).abs() < 1e-12 && (held[1] - (0.01 + 0.59 / 3.0)).abs() < 1e-12);
    let kept: Vec<&serde_json::Value> = starts.iter().filter(|s| s["kept"] == true).collect();
    assert_eq!(kept.len(), 1);
    let best = starts
        .iter()
        .filter(|s| s["converged"] == true)
        .map(|s| s["objective"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(kept[0]["objective"].as_f64().unwrap(), best);
    // The kept start's plan is the one refined, and refinement stays on its optimum.
    let refinement = eight["refinement"].as_array().unwrap();
    assert_eq!(refinement[0]["objective"].as_f64().unwrap(), best);
    let objective = eight["objective"].as_f64().unwrap();
    let single = one["objective"].as_f64().unwrap();
    assert!(
        best <= single * (1.0 + 1e-9),
        "best start {best}, one {single}"
    );
    assert!(
        objective <= best * 1.001,
        "refined {objective} against {best}"
    );
}

#[test]
fn zero_starts_are_refused_naming_the_field() {
    let dir = TempDir::new("starts_bad");
    let file = problem();
    for (set, needle) in [("starts=0", "must be at least 1"), ("starts=-2", "starts")] {
        let out = loam(
            dir.path(),
            &[
                "solve",
                file.to_str().unwrap(),
                "--set",
                set,
                "--out",
                "bad",
            ],
        );
        assert_exit(&out, 2, &["starts", needle]);
        assert!(!dir.path().join("bad").exists(), "{set}: wrote a run");
    }
}
