//! The `loam` binary end to end: exit codes, error messages, and the files `solve` writes.
//!
//! Each test runs the real binary in its own temporary folder. Solves are few (one per
//! shipped problem, one infeasible, one with `--set`) to keep the file fast.

use crate::common;

use common::run::{assert_exit, loam, read_json, shipped, Output};
use common::temp_dir::TempDir;
use std::path::{Path, PathBuf};

use serde_json::Value;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The shipped problem files of the hopper, found by globbing `problems/hopper_*.yaml` (every
/// shipped problem converges and replays: planar_plans.rs), but its rail over a wrench space.
fn shipped_problems() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read problems/")
        .map(|entry| entry.expect("read problems/ entry").path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("hopper_") && name.ends_with(".yaml") && name != "hopper_rail.yaml"
        })
        .collect();
    files.sort();
    assert!(files.len() >= 3, "no problems/hopper_*.yaml found");
    files
}

/// The 1-based number of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` not in fixture"))
        + 1
}

fn number(json: &Value, pointer: &str) -> f64 {
    json.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("solution.json has no number at {pointer}"))
}

/// Asserts the run was refused as bad input (exit 2, an `error:` on stderr, nothing on stdout)
/// and that the `--out` folder was not created.
fn assert_refused(output: &Output, out: &Path) {
    assert_eq!(output.code(), 2, "{}", output.dump());
    assert!(output.stderr.starts_with("error: "), "{}", output.dump());
    assert!(output.stdout.is_empty(), "{}", output.dump());
    assert!(
        !out.exists(),
        "{} was created for a refused run:\n{}",
        out.display(),
        output.dump()
    );
}

/// Runs both `check FILE` and `solve FILE --out OUT` on a bad problem file; both must refuse it
/// with exit 2, write nothing, and give the same message. Returns that message.
fn refuse(dir: &TempDir, file: &str, text: &str) -> String {
    dir.write(file, text);
    let out = dir.path().join("out");
    let check = loam(dir.path(), &["check", file]);
    assert_refused(&check, &out);
    let solve = loam(dir.path(), &["solve", file, "--out", "out"]);
    assert_refused(&solve, &out);
    assert!(!dir.path().join("runs").exists(), "solve created runs/");
    assert_eq!(check.stderr, solve.stderr, "check and solve disagree");
    check.stderr
}

fn assert_contains(haystack: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            haystack.contains(needle),
            "expected `{needle}` in:\n{haystack}"
        );
    }
}

// ---------------------------------------------------------------------------
// Bad input: exit 2, a message naming file, line, field and what is accepted, nothing written
// ---------------------------------------------------------------------------

#[test]
fn malformed_yaml_names_the_file_and_line() {
    let dir = TempDir::new("malformed");
    let text = "name: x\ntask:\n  apex_rise: 1\n apex_of: rod\n";
    let line = line_of(text, " apex_of");
    let error = refuse(&dir, "bad.yaml", text);
    assert_contains(&error, &[&format!("bad.yaml:{line}:"), "not valid YAML"]);

    // A tab in the indentation gets a hint.
    let text = "task:\n\tapex_rise: 1\n";
    let line = line_of(text, "\tapex_rise");
    let error = refuse(&dir, "tab.yaml", text);
    assert_contains(
        &error,
        &[&format!("tab.yaml:{line}:"), "not valid YAML", "tab"],
    );
}

#[test]
fn misspelt_field_suggests_the_right_name() {
    let dir = TempDir::new("misspelt");
    let text = "name: hop\ntask:\n  apex_rize: 0.06\n";
    let line = line_of(text, "apex_rize");
    let error = refuse(&dir, "bad.yaml", text);
    assert_contains(
        &error,
        &[
            &format!("bad.yaml:{line}:"),
            "task.apex_rize",
            "unknown field `apex_rize`",
            "did you mean `apex_rise`?",
            "accepted: start, end, distance, apex_rise",
        ],
    );
}

#[test]
fn wrong_type_says_what_is_accepted() {
    let dir = TempDir::new("wrong-type");
    let text = "schedule:\n  - contacts: [foot]\n    nodes: many\n  - contacts: []\n";
    let line = line_of(text, "nodes: many");
    let error = refuse(&dir, "bad.yaml", text);
    assert_contains(
        &error,
        &[
            &format!("bad.yaml:{line}:"),
            "schedule[0].nodes",
            "\"many\"",
            "expected usize",
        ],
    );
}

#[test]
fn negative_mass_is_refused_with_its_unit() {
    let dir = TempDir::new("negative-mass");
    let text = "terrain:\n  model: rigid\nrobot:\n  model: monopod\n  body_mass: -1\n";
    let line = line_of(text, "body_mass");
    let error = refuse(&dir, "bad.yaml", text);
    assert_contains(
        &error,
        &[
            &format!("bad.yaml:{line}:"),
            "robot.body_mass",
            "> 0 kg",
            "got -1",
        ],
    );
}

#[test]
fn duration_bounds_out_of_order() {
    let dir = TempDir::new("duration");
    let text = "robot: {model: monopod}\nschedule:\n  - {contacts: [foot]}\n  - contacts: []\n    duration: [0.3, 0.2]\n";
    let line = line_of(text, "duration");
    let error = refuse(&dir, "bad.yaml", text);
    assert_contains(
        &error,
        &[
            &format!("bad.yaml:{line}:"),
            "schedule[1].duration",
            "must be [min, max] with 0 < min <= max s, got [0.3, 0.2]",
        ],
    );
}

#[test]
fn unknown_enum_value_lists_the_accepted_ones() {
    let dir = TempDir::new("enum");
    let text = "# ground\nterrain:\n  model: sand\n";
    let line = line_of(text, "sand");
    let error = refuse(&dir, "bad.yaml", text);
    assert_contains(
        &error,
        &[
            &format!("bad.yaml:{line}:"),
            "terrain.model",
            "unknown value `sand`",
            "rigid",
            "added_mass",
        ],
    );
}

#[test]
fn bad_set_names_the_override() {
    let dir = TempDir::new("bad-set");
    let problem = shipped("hopper_rigid.yaml");
    let out = dir.path().join("out");
    let cases: &[(&str, &[&str])] = &[
        (
            "task.apex_rize=0.1",
            &["unknown field `apex_rize`", "did you mean `apex_rise`?"],
        ),
        (
            "robot.description.bodies.0.mass=-1",
            &["robot.description.bodies[0].mass", "> 0 kg", "got -1"],
        ),
        ("task.apex_rise", &["malformed override", "PATH=VALUE"]),
        ("terrain.model=sand", &["unknown value `sand`", "rigid"]),
        ("schedule.5.nodes=3", &["out of range"]),
    ];
    for (set, expected) in cases {
        for command in ["check", "solve"] {
            let mut args = vec![command, &problem, "--set", set];
            if command == "solve" {
                args.extend(["--out", "out"]);
            }
            let output = loam(dir.path(), &args);
            assert_refused(&output, &out);
            assert_contains(
                &output.stderr,
                &["hopper_rigid.yaml", &format!("--set {set}")],
            );
            assert_contains(&output.stderr, expected);
        }
    }
    assert!(!dir.path().join("runs").exists());
}

/// A planar problem's `terrain` accepts the fields of its `model`: switching the model with
/// `--set terrain.model=...` leaves the old model's fields behind, and the refusal says to
/// replace the section whole (which then solves).
#[test]
fn switching_a_sections_model_by_set_says_how() {
    let dir = TempDir::new("set-model");
    let problem = shipped("hopper_granular.yaml");
    let output = loam(
        dir.path(),
        &["check", &problem, "--set", "terrain.model=rigid"],
    );
    assert_exit(
        &output,
        2,
        &[
            "--set terrain.model=rigid",
            "unknown field `medium` in `terrain`",
            "--set 'terrain={model: rigid}'",
        ],
    );
    let output = loam(
        dir.path(),
        &["check", &problem, "--set", "terrain={model: rigid}"],
    );
    assert_eq!(output.code(), 0, "{}", output.dump());
}

#[test]
fn missing_file_names_the_path() {
    let dir = TempDir::new("missing");
    let out = dir.path().join("out");
    for args in [
        &["check", "no_such_problem.yaml"][..],
        &["solve", "no_such_problem.yaml", "--out", "out"][..],
    ] {
        let output = loam(dir.path(), args);
        assert_refused(&output, &out);
        assert_contains(
            &output.stderr,
            &["no_such_problem.yaml", "cannot read the problem file"],
        );
    }
    assert!(!dir.path().join("runs").exists());
}

const UNKNOWN_IPOPT_OPTION: &str = "terrain:\n  model: rigid\nsolver:\n  not_an_option: 1\n";

#[test]
fn unknown_ipopt_option_is_refused_with_ipopts_message() {
    let dir = TempDir::new("ipopt-option");
    dir.write("bad.yaml", UNKNOWN_IPOPT_OPTION);
    let output = loam(dir.path(), &["solve", "bad.yaml", "--out", "out"]);
    assert_ne!(output.code(), 0, "{}", output.dump());
    assert!(output.stdout.is_empty(), "{}", output.dump());
    assert_contains(
        &output.stderr,
        &["error: ", "not_an_option", "It is not a valid option"],
    );
    // No result files, and no IPOPT log (temporary or kept).
    let out = dir.path().join("out");
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .map(|entries| entries.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "left in out/: {leftovers:?}");
}

#[test]

fn unknown_ipopt_option_exits_2() {
    let dir = TempDir::new("ipopt-option-code");
    dir.write("bad.yaml", UNKNOWN_IPOPT_OPTION);
    let output = loam(dir.path(), &["solve", "bad.yaml", "--out", "out"]);
    assert_eq!(output.code(), 2, "{}", output.dump());
}

#[test]

fn unknown_ipopt_option_creates_no_folder() {
    let dir = TempDir::new("ipopt-option-folder");
    dir.write("bad.yaml", UNKNOWN_IPOPT_OPTION);
    let output = loam(dir.path(), &["solve", "bad.yaml", "--out", "out"]);
    assert_ne!(output.code(), 0, "{}", output.dump());
    let out = dir.path().join("out");
    assert!(!out.exists(), "{} was created", out.display());
}

#[test]

fn check_refuses_unknown_ipopt_option() {
    let dir = TempDir::new("ipopt-option-check");
    dir.write("bad.yaml", UNKNOWN_IPOPT_OPTION);
    let output = loam(dir.path(), &["check", "bad.yaml"]);
    assert_eq!(output.code(), 2, "{}", output.dump());
    assert_contains(
        &output.stderr,
        &["not_an_option", "It is not a valid option"],
    );
}

// ---------------------------------------------------------------------------
// Solving
// ---------------------------------------------------------------------------

/// Checks `solution.json`, `trajectory.csv` and `ipopt.log` in `out`; returns the solution.
fn check_results(out: &Path) -> Value {
    let solution = read_json(&out.join("solution.json"));
    for pointer in [
        "/status",
        "/converged",
        "/iterations",
        "/objective",
        "/max_violation",
        "/key_figures/com_rise_m",
        "/timing_s/setup",
        "/timing_s/solve",
        "/timing_s/total",
        "/problem/task/apex_rise",
    ] {
        assert!(
            solution.pointer(pointer).is_some(),
            "solution.json lacks {pointer}"
        );
    }
    let phases = solution["phases"].as_array().expect("phases is a list");
    assert!(!phases.is_empty());
    for phase in phases {
        assert!(phase["contacts"].is_array(), "{phase}");
        assert!(
            phase["duration_s"].as_f64().is_some_and(|d| d > 0.0),
            "{phase}"
        );
    }
    let nodes: u64 = solution["problem"]["schedule"]
        .as_array()
        .expect("problem.schedule is a list")
        .iter()
        .map(|phase| phase["nodes"].as_u64().expect("nodes"))
        .sum();

    let csv = std::fs::read_to_string(out.join("trajectory.csv")).expect("trajectory.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    // The hopper's robot file: its coordinates, their rates, the drive's states and command
    // rate, and the foot's force.
    for column in [
        "t",
        "phase",
        "z",
        "stroke",
        "leg",
        "d_z",
        "d_stroke",
        "d_leg",
        "motor_integral",
        "motor_command",
        "motor",
        "foot_fz",
    ] {
        assert!(header.contains(&column), "no `{column}` in {header:?}");
    }
    let rows: Vec<&str> = lines.filter(|line| !line.is_empty()).collect();
    assert_eq!(rows.len() as u64, nodes, "one row per node");
    for row in &rows {
        assert_eq!(row.split(',').count(), header.len(), "row `{row}`");
    }

    let log = std::fs::read_to_string(out.join("ipopt.log")).expect("ipopt.log");
    assert!(log.contains("Ipopt"), "ipopt.log: {log}");
    solution
}

#[test]
fn every_shipped_problem_checks_and_solves() {
    let dir = TempDir::new("shipped");
    for file in shipped_problems() {
        let file = file.to_str().expect("UTF-8 path");
        let check = loam(dir.path(), &["check", file]);
        assert_eq!(check.code(), 0, "check {file}: {}", check.dump());
        assert!(check.stdout.contains(": ok"), "{}", check.dump());

        let out = dir.path().join("out");
        let _ = std::fs::remove_dir_all(&out);
        let solve = loam(dir.path(), &["solve", file, "--out", "out"]);
        assert_eq!(solve.code(), 0, "solve {file}: {}", solve.dump());
        assert!(
            solve.stdout.contains("converged: IPOPT Solve_Succeeded"),
            "{}",
            solve.dump()
        );

        let solution = check_results(&out);
        assert_eq!(solution["converged"], true, "{file}");
        assert_eq!(solution["status"], "Solve_Succeeded", "{file}");
        assert!(number(&solution, "/max_violation") < 1e-6, "{file}");
    }
}

#[test]
fn infeasible_jump_is_reported_not_converged() {
    let dir = TempDir::new("infeasible");
    let output = loam(
        dir.path(),
        &[
            "solve",
            &shipped("hopper_rigid.yaml"),
            "--set",
            "task.apex_rise=2.0",
            "--out",
            "out",
        ],
    );
    assert_eq!(output.code(), 1, "{}", output.dump());
    let solution = check_results(&dir.path().join("out"));
    assert_eq!(solution["converged"], false);
    assert_eq!(number(&solution, "/problem/task/apex_rise"), 2.0);
    let status = solution["status"].as_str().expect("status");
    assert_ne!(status, "Solve_Succeeded");
    assert_contains(&output.stdout, &["NOT CONVERGED", status]);
    assert_contains(&output.stdout, &["worst violated constraints"]);

    let worst = solution["worst_violations"]
        .as_array()
        .expect("worst_violations is a list");
    assert!(!worst.is_empty());
    for violation in worst {
        let name = violation["name"].as_str().expect("a violation has a name");
        assert!(!name.is_empty());
    }
    // The worst one is printed by name.
    let first = worst[0]["name"].as_str().unwrap();
    assert_contains(&output.stdout, &[first]);
}

#[test]
fn set_overrides_the_file_and_results_default_to_runs_name() {
    let dir = TempDir::new("set");
    let problem = shipped("hopper_rigid.yaml");
    let output = loam(
        dir.path(),
        &["solve", &problem, "--set", "task.apex_rise=0.05", "-q"],
    );
    assert_eq!(output.code(), 0, "{}", output.dump());
    assert!(output.stdout.is_empty(), "-q printed: {}", output.dump());
    // Without --out, results go to runs/<problem name> (ignored by git), never to results/.
    let solution = check_results(&dir.path().join("runs").join("hopper_rigid"));
    assert!(!dir.path().join("results").exists());
    assert_eq!(solution["converged"], true);
    assert_eq!(number(&solution, "/problem/task/apex_rise"), 0.05);
}

// ---------------------------------------------------------------------------
// simulate
// ---------------------------------------------------------------------------

#[test]
fn simulate_replays_on_the_plans_terrain_and_on_another() {
    let dir = TempDir::new("simulate");
    let solve = loam(
        dir.path(),
        &["solve", &shipped("hopper_rigid.yaml"), "--out", "run", "-q"],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());

    let own = loam(dir.path(), &["simulate", "run"]);
    assert_eq!(own.code(), 0, "{}", own.dump());
    assert_contains(&own.stdout, &["apex rise", "lift-off", "replay.csv"]);
    let summary = read_json(&dir.path().join("run/replay.json"));
    let rise = number(&summary, "/achieved_apex_rise_m");
    assert!((rise - 0.06).abs() < 0.0006, "replayed rise {rise}");
    let csv = std::fs::read_to_string(dir.path().join("run/replay.csv")).unwrap();
    assert!(csv.starts_with("mode,t,x,z,pitch,stroke,leg,d_x,d_z,d_pitch,d_stroke,d_leg,"));

    let other = loam(dir.path(), &["simulate", "run", "--terrain", "poppy_seeds"]);
    assert_eq!(other.code(), 0, "{}", other.dump());
    let summary = read_json(&dir.path().join("run/replay-on-poppy_seeds.json"));
    assert_eq!(summary["terrain"]["model"], "added_mass");
    assert!(
        number(&summary, "/achieved_apex_rise_m") < 0.05,
        "{summary}"
    );
}

#[test]
fn simulate_refuses_a_missing_folder() {
    let dir = TempDir::new("simulate-missing");
    let out = loam(dir.path(), &["simulate", "no/such/run"]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["no/such/run", "no such folder"]);
}

#[test]
fn simulate_refuses_a_folder_that_is_not_a_loam_result() {
    let dir = TempDir::new("simulate-foreign");
    dir.write("notes.txt", "hello");
    let out = loam(dir.path(), &["simulate", "."]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["not a loam result", "solution.json"]);
    dir.write("solution.json", "{\"status\": 1}");
    let out = loam(dir.path(), &["simulate", "."]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["not a loam result", "loam_version"]);
}

#[test]
fn simulate_refuses_an_unknown_terrain_preset() {
    let dir = TempDir::new("simulate-terrain");
    let solve = loam(
        dir.path(),
        &["solve", &shipped("hopper_rigid.yaml"), "--out", "run", "-q"],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());
    let out = loam(dir.path(), &["simulate", "run", "--terrain", "quicksand"]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["quicksand", "rigid, poppy_seeds"]);
    assert!(!dir.path().join("run/replay-on-quicksand.csv").exists());
}

// ---------------------------------------------------------------------------
// sweep
// ---------------------------------------------------------------------------

#[test]
fn sweep_refuses_a_malformed_range_before_solving() {
    let dir = TempDir::new("sweep-range");
    for range in [
        "task.apex_rise=0.03:0.10",
        "task.apex_rise=0.10:0.03:0",
        "task.apex_rise=0.03:0.10:-1",
        "task.apex_rise",
    ] {
        let out = loam(
            dir.path(),
            &[
                "sweep",
                &shipped("hopper_rigid.yaml"),
                "--vary",
                range,
                "--out",
                "sw",
            ],
        );
        assert_eq!(out.code(), 2, "{range}: {}", out.dump());
        assert_contains(&out.stderr, &["--vary", "START:STOP:STEP"]);
        assert!(!dir.path().join("sw").exists(), "{range} wrote output");
    }
    // A field that does not exist is the problem loader's error, with its suggestion.
    let out = loam(
        dir.path(),
        &[
            "sweep",
            &shipped("hopper_rigid.yaml"),
            "--vary",
            "task.apex_hieght=0.03,0.04",
            "--out",
            "sw",
        ],
    );
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["apex_hieght", "apex_rise"]);
    assert!(!dir.path().join("sw").exists());
}

#[test]
fn simulate_on_grains_needs_a_bed_and_says_what_is_missing() {
    let dir = TempDir::new("simulate-dem");
    let solve = loam(
        dir.path(),
        &["solve", &shipped("hopper_rigid.yaml"), "--out", "run", "-q"],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());

    let out = loam(dir.path(), &["simulate", "run", "--backend", "dem-cpu"]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["--bed", "loam dem prepare"]);

    let out = loam(
        dir.path(),
        &[
            "simulate",
            "run",
            "--backend",
            "dem-cpu",
            "--bed",
            "no-such.bed",
        ],
    );
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["no-such.bed"]);

    dir.write("foreign.bed", "not a checkpoint at all");
    let out = loam(
        dir.path(),
        &[
            "simulate",
            "run",
            "--backend",
            "dem-cpu",
            "--bed",
            "foreign.bed",
        ],
    );
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["foreign.bed"]);
    assert!(!dir.path().join("run/dem-cpu").exists());

    let out = loam(dir.path(), &["simulate", "run", "--bed", "foreign.bed"]);
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["--backend dem-cpu"]);
}

#[test]
fn simulate_on_a_gpu_without_one_says_why_and_is_not_bad_input() {
    // CI has no GPU: the CUDA backend must refuse with the probe's reason, never panic.
    // Where a GPU exists this checks only that a missing bed is asked for.
    let dir = TempDir::new("simulate-cuda");
    let solve = loam(
        dir.path(),
        &["solve", &shipped("hopper_rigid.yaml"), "--out", "run", "-q"],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());
    dir.write("tiny.yaml", "container: { shape: box, half_x: 0.02, half_y: 0.02 }\ngrains: { radius: 0.003, density: 1000, friction: 0.5, count: 20, seed: 1 }\n");
    let prepare = loam(
        dir.path(),
        &["dem", "prepare", "tiny.yaml", "-o", "tiny.bed"],
    );
    assert!(
        prepare.code() == 0 || prepare.code() == 1,
        "{}",
        prepare.dump()
    );
    let out = loam(
        dir.path(),
        &[
            "simulate",
            "run",
            "--backend",
            "dem-cuda",
            "--bed",
            "tiny.bed",
            "--t-max",
            "0.01",
        ],
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.dump());
    if loam::sim::dem::cuda::probe().is_err() {
        // No GPU: the environment's failure, exit 3.
        assert_eq!(out.code(), 3, "{}", out.dump());
        assert_contains(&out.stderr, &["dem-cuda"]);
    }
}

#[test]
fn dem_nudge_moves_one_grain_by_one_ulp_and_refuses_a_missing_grain() {
    let dir = TempDir::new("dem-nudge");
    dir.write(
        "tiny.yaml",
        "container: { shape: box, half_x: 0.02, half_y: 0.02 }\ngrains: { radius: 0.003, density: 1000, friction: 0.5, count: 20, seed: 1 }\n",
    );
    let prepare = loam(
        dir.path(),
        &["dem", "prepare", "tiny.yaml", "-o", "tiny.bed"],
    );
    assert_eq!(prepare.code(), 0, "{}", prepare.dump());
    let out = loam(
        dir.path(),
        &[
            "dem",
            "nudge",
            "tiny.bed",
            "--grain",
            "7",
            "-o",
            "nudged.bed",
        ],
    );
    assert_eq!(out.code(), 0, "{}", out.dump());
    let load = |name: &str| loam::sim::dem::bed::Checkpoint::load(&dir.path().join(name)).unwrap();
    let (a, b) = (load("tiny.bed"), load("nudged.bed"));
    for (i, (p, q)) in a.grains.position.iter().zip(&b.grains.position).enumerate() {
        for k in 0..3 {
            let expected = if i == 7 && k == 0 {
                p[k].next_up()
            } else {
                p[k]
            };
            assert_eq!(
                q[k].to_bits(),
                expected.to_bits(),
                "grain {i} coordinate {k}"
            );
        }
    }
    assert_eq!(a.grains.velocity, b.grains.velocity);
    let out = loam(
        dir.path(),
        &["dem", "nudge", "tiny.bed", "--grain", "20", "-o", "bad.bed"],
    );
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert_contains(&out.stderr, &["--grain 20", "20 grains"]);
    assert!(!dir.path().join("bad.bed").exists(), "nothing written");
}
