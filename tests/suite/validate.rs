//! `loam validate RUN`: one verdict over every simulator that applies. Each row must be the
//! number the simulator itself wrote (agreement with `loam simulate` and the DEM replays'
//! own records), its statistics must be those of its values, and bad input must exit 2 and
//! write nothing.

use std::path::Path;

use crate::common::run::{assert_exit, loam, prepare_coarse_bed, read_json, solve_to};
use crate::common::temp_dir::TempDir;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rows(verdict: &serde_json::Value) -> &Vec<serde_json::Value> {
    verdict["rows"].as_array().expect("rows")
}

fn row<'a>(
    verdict: &'a serde_json::Value,
    simulator: &str,
    own: bool,
    outcome: &str,
) -> &'a serde_json::Value {
    rows(verdict)
        .iter()
        .find(|r| r["simulator"] == simulator && r["own_model"] == own && r["outcome"] == outcome)
        .unwrap_or_else(|| panic!("no row {simulator} own={own} {outcome} in {verdict}"))
}

/// The hopper's 60 mm plan on poppy seeds (its robot file's committed run,
/// `results/hopper_granular`): its own model within 1 %, the rigid-ground row is `loam simulate
/// --terrain rigid`'s number, and the DEM rows are the realisations' own records (the bed,
/// then a nudged copy, side by side as the scenes of one CPU backend), with mean and sd of
/// those values.
#[test]
fn validate_puts_the_simulators_side_by_side() {
    let dir = TempDir::new("validate");
    prepare_coarse_bed(dir.path());
    let run = dir.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    for file in ["solution.json", "trajectory.csv"] {
        let committed = manifest().join("results/hopper_granular").join(file);
        std::fs::copy(committed, run.join(file)).unwrap();
    }
    let run_arg = run.to_str().unwrap();
    let output = loam(
        dir.path(),
        &[
            "validate",
            run_arg,
            "--bed",
            "coarse.bed",
            "--realisations",
            "2",
        ],
    );
    assert!(matches!(output.code(), 0 | 1), "{}", output.dump());
    assert!(
        output.stdout.contains("realisation 2/2 (grain"),
        "{}",
        output.dump()
    );
    let verdict = read_json(&run.join("validation/validation.json"));

    let own = row(&verdict, "reduced", true, "apex_rise_m");
    let replay = read_json(&run.join("replay.json"));
    assert_eq!(own["mean"], replay["achieved_apex_rise_m"], "{own}");
    assert!(own["error_rel"].as_f64().unwrap().abs() < 0.01, "{own}");
    assert!(
        (own["planned"].as_f64().unwrap() - 0.06).abs() < 1e-9,
        "{own}"
    );

    let rigid = row(&verdict, "reduced", false, "apex_rise_m");
    assert_eq!(rigid["terrain"], "rigid");
    let by_hand = loam(
        dir.path(),
        &["simulate", run_arg, "--terrain", "rigid", "-q"],
    );
    assert_exit(&by_hand, 0, &[]);
    let on_rigid = read_json(&run.join("replay-on-rigid.json"));
    assert_eq!(rigid["mean"], on_rigid["achieved_apex_rise_m"], "{rigid}");
    // The plan's own ground is not replayed twice.
    assert!(!rows(&verdict).iter().any(|r| r["terrain"] == "poppy_seeds"));

    let dem = row(&verdict, "dem-cpu", false, "apex_rise_m");
    assert_eq!(dem["realisations"], 2);
    let values: Vec<f64> = dem["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let files = dem["files"].as_array().unwrap();
    for (k, (value, file)) in values.iter().zip(files).enumerate() {
        let record = read_json(&run.join(file.as_str().unwrap()));
        assert_eq!(
            record["achieved_apex_rise_m"].as_f64(),
            Some(*value),
            "realisation {k}"
        );
        assert_eq!(record["replays_side_by_side"], 2, "{record}");
        assert_eq!(
            record["bed"].as_str().unwrap().contains("nudged"),
            k > 0,
            "{record}"
        );
        assert_eq!(record["plan_id"], verdict["plan_id"]);
    }
    let mean = values.iter().sum::<f64>() / 2.0;
    let sd = ((values[0] - mean).powi(2) + (values[1] - mean).powi(2)).sqrt();
    assert!((dem["mean"].as_f64().unwrap() - mean).abs() < 1e-15);
    assert!((dem["sd"].as_f64().unwrap() - sd).abs() < 1e-15);

    let csv = std::fs::read_to_string(run.join("validation/validation.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + rows(&verdict).len(), "{csv}");
    assert!(csv.starts_with("simulator,terrain,own_model,outcome,planned,realisations"));
    for figure in ["validation.png", "validation.svg"] {
        assert!(run.join("validation").join(figure).is_file(), "{figure}");
    }
    assert_eq!(verdict["problem"], "hopper_granular");
    // `loam plot RUN` redraws the verdict from its table.
    std::fs::remove_file(run.join("validation/validation.png")).unwrap();
    assert_exit(
        &loam(dir.path(), &["plot", run_arg, "--png-only", "-q"]),
        0,
        &[],
    );
    assert!(run.join("validation/validation.png").is_file());
}

/// A planar robot's plan: the task's two outcomes (distance, the centre of mass's peak rise)
/// for each ground, its own model within 1 % of the plan.
#[test]
fn validate_a_planar_plan() {
    let dir = TempDir::new("validate-planar");
    let run = dir.path().join("run");
    solve_to(&manifest().join("problems/planar_foot_step.yaml"), &run);
    let output = loam(dir.path(), &["validate", run.to_str().unwrap(), "-q"]);
    assert_exit(&output, 0, &[]);
    let verdict = read_json(&run.join("validation/validation.json"));
    let replay = read_json(&run.join("replay.json"));
    let own = row(&verdict, "reduced", true, "distance_m");
    assert_eq!(own["mean"], replay["achieved_distance_m"]);
    assert!(own["error_rel"].as_f64().unwrap().abs() < 0.01, "{own}");
    row(&verdict, "reduced", true, "com_peak_rise_m");
    // Rigid ground is its own; the bed is the other ground.
    let bed = row(&verdict, "reduced", false, "distance_m");
    assert_eq!(bed["terrain"], "poppy_seeds");
    assert_eq!(rows(&verdict).len(), 4, "{verdict}");
}

/// Bad input exits 2, names what to fix, and writes nothing.
#[test]
fn validate_refuses_bad_input() {
    let dir = TempDir::new("validate-bad");
    let run = dir.path().join("run");
    solve_to(&manifest().join("problems/planar_foot_step.yaml"), &run);
    let run_arg = run.to_str().unwrap();
    dir.write("empty.bed", "");
    for (args, needle) in [
        (vec!["--realisations", "0"], "--realisations 0"),
        (
            vec!["--bed", "missing.bed"],
            "--bed missing.bed: no such file",
        ),
        (vec!["--terrain", "marsh"], "--terrain marsh: not a preset"),
        (
            vec!["--bed", "empty.bed", "--backend", "reduced"],
            "--backend reduced",
        ),
    ] {
        let mut all = vec!["validate", run_arg];
        all.extend(args);
        assert_exit(&loam(dir.path(), &all), 2, &[needle]);
        assert!(!run.join("validation").exists(), "{needle}: wrote files");
    }
    assert_exit(
        &loam(dir.path(), &["validate", "nowhere"]),
        2,
        &["nowhere: not a run folder"],
    );
    // A plan of the hopper's own planner (its problem has no `schedule`) gets no DEM replay:
    // refused before anything runs, saying to re-solve the jump with the robot file.
    std::fs::create_dir_all(dir.path().join("legacy")).unwrap();
    dir.write("legacy/solution.json", r#"{"problem": {"robot": {}}}"#);
    prepare_coarse_bed(dir.path());
    assert_exit(
        &loam(dir.path(), &["validate", "legacy", "--bed", "coarse.bed"]),
        2,
        &["hopper's own planner", "problems/hopper_granular.yaml"],
    );
    assert!(!dir.path().join("legacy/validation").exists());
}
