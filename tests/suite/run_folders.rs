//! Run folders that hang together (issue 11, items 1 and 2): every file made from a plan
//! records the plan's identity, readers refuse files that do not belong together (exit 2,
//! naming the files), a re-solve archives what no longer belongs, replays on a terrain file
//! are named after it, `solution.json` records what reproduces the run, and a committed sweep
//! without its plan folders keeps its command figure. Each through the real binary, in a
//! temporary folder, on the fast rigid-ground hopper.

use crate::common;

use std::path::{Path, PathBuf};

use common::run::{assert_exit, loam, read_json, shipped, Output};
use common::temp_dir::TempDir;

/// `loam solve problems/PROBLEM --set task.apex_rise=APEX --out OUT [-q]` in `dir`.
fn solve_output(dir: &TempDir, problem: &str, out: &str, apex: f64, quiet: bool) -> Output {
    let file = shipped(problem);
    let apex = format!("task.apex_rise={apex}");
    let mut args = vec!["solve", &file, "--set", &apex, "--out", out];
    if quiet {
        args.push("-q");
    }
    loam(dir.path(), &args)
}

/// Solves the rigid-ground hopper for an apex rise of `apex` into `dir/out`.
fn solve(dir: &TempDir, out: &str, apex: f64) {
    let output = solve_output(dir, "hopper_rigid.yaml", out, apex, true);
    assert_eq!(output.code(), 0, "{}", output.dump());
}

fn run_ok(dir: &TempDir, args: &[&str]) -> Output {
    let output = loam(dir.path(), args);
    assert_eq!(output.code(), 0, "{}", output.dump());
    output
}

/// Asserts exit 2 with an error holding every needle.
fn assert_refused(output: &Output, needles: &[&str]) {
    assert_exit(output, 2, needles);
    assert!(output.stderr.starts_with("error: "), "{}", output.dump());
}

/// A 50 mm plan in `dir/a` and a 70 mm plan in `dir/b`.
fn two_plans(dir: &TempDir) -> (PathBuf, PathBuf) {
    solve(dir, "a", 0.05);
    solve(dir, "b", 0.07);
    (dir.path().join("a"), dir.path().join("b"))
}

fn plan_id(run: &Path) -> String {
    read_json(&run.join("solution.json"))["plan_id"]
        .as_str()
        .expect("solution.json has a plan_id")
        .to_string()
}

/// The names in a folder, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn copy_files(from: &Path, to: &Path, files: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for file in files {
        std::fs::copy(from.join(file), to.join(file))
            .unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
}

fn is_hex(text: &str, digits: usize) -> bool {
    text.len() == digits && text.bytes().all(|b| b.is_ascii_hexdigit())
}

// ---------------------------------------------------------------------------
// Re-solving into a folder
// ---------------------------------------------------------------------------

/// The 60 mm plan's replays and figures, then a 90 mm re-solve into the same folder: the
/// folder holds the 90 mm plan alone, `loam plot` draws no stale replay, and the 60 mm plan
/// with its replays is a complete run folder under archive/<its plan_id>/.
#[test]
fn a_re_solve_archives_the_replays_and_figures_of_the_previous_plan() {
    let dir = TempDir::new("resolve");
    solve(&dir, "run", 0.06);
    run_ok(&dir, &["simulate", "run", "-q"]);
    run_ok(&dir, &["simulate", "run", "--terrain", "poppy_seeds", "-q"]);
    run_ok(&dir, &["plot", "run", "--svg-only", "-q"]);
    let old = plan_id(&dir.path().join("run"));

    let output = solve_output(&dir, "hopper_rigid.yaml", "run", 0.09, false);
    assert_eq!(output.code(), 0, "{}", output.dump());
    let run = dir.path().join("run");
    let new = plan_id(&run);
    assert_ne!(new, old);
    assert!(
        output.stdout.contains(&format!("archive/{old}")),
        "the summary does not say where the old plan went:\n{}",
        output.dump()
    );
    assert_eq!(
        names(&run),
        ["archive", "ipopt.log", "solution.json", "trajectory.csv"],
        "something of the 60 mm plan is left beside the 90 mm plan"
    );
    let archived = run.join("archive").join(&old);
    assert_eq!(
        names(&archived),
        [
            "ipopt.log",
            "plots",
            "replay-on-poppy_seeds.csv",
            "replay-on-poppy_seeds.json",
            "replay.csv",
            "replay.json",
            "solution.json",
            "trajectory.csv"
        ]
    );
    let replay = read_json(&archived.join("replay.json"));
    assert_eq!(replay["plan_id"], old.as_str());
    assert!((replay["planned_apex_rise_m"].as_f64().unwrap() - 0.06).abs() < 1e-4);

    // The figure of the new plan has no replay; the archived plan still plots whole.
    run_ok(&dir, &["plot", "run", "--svg-only", "-q"]);
    let svg = std::fs::read_to_string(run.join("plots/planar_run.svg")).unwrap();
    assert!(
        svg.contains("no replay.csv in this folder"),
        "a replay was drawn"
    );
    assert!(!run.join("plots/planar_run-on-poppy_seeds.svg").exists());
    let archived_arg = format!("run/archive/{old}");
    run_ok(&dir, &["plot", &archived_arg, "--svg-only", "-q"]);
    let svg =
        std::fs::read_to_string(archived.join("plots/planar_run-on-poppy_seeds.svg")).unwrap();
    assert!(svg.contains("replay-on-poppy_seeds.csv"));

    // A replay of the new plan records the new plan.
    run_ok(&dir, &["simulate", "run", "-q"]);
    assert_eq!(read_json(&run.join("replay.json"))["plan_id"], new.as_str());
}

/// The same problem solved again gives the same plan (IPOPT is deterministic here), whose
/// replays still belong: nothing is archived.
#[test]
fn a_re_solve_to_the_same_plan_keeps_its_replays() {
    let dir = TempDir::new("same");
    solve(&dir, "run", 0.06);
    run_ok(&dir, &["simulate", "run", "-q"]);
    let run = dir.path().join("run");
    let id = plan_id(&run);
    solve(&dir, "run", 0.06);
    assert_eq!(
        plan_id(&run),
        id,
        "the same problem gave another trajectory"
    );
    assert_eq!(
        names(&run),
        [
            "ipopt.log",
            "replay.csv",
            "replay.json",
            "solution.json",
            "trajectory.csv"
        ]
    );
    run_ok(&dir, &["plot", "run", "--png-only", "-q"]);
}

/// A failed write leaves the folder's plan as it was and no temporary behind: here the
/// archive cannot be made because `archive` is a file.
#[test]
fn a_re_solve_that_cannot_archive_leaves_the_old_plan_and_no_temporaries() {
    let dir = TempDir::new("unwritable");
    solve(&dir, "run", 0.06);
    run_ok(&dir, &["simulate", "run", "-q"]);
    let run = dir.path().join("run");
    std::fs::write(run.join("archive"), "in the way").unwrap();
    let before = names(&run);
    let old = plan_id(&run);
    let output = solve_output(&dir, "hopper_rigid.yaml", "run", 0.09, true);
    // Results that cannot be written: the environment's failure, exit 3.
    assert_eq!(output.code(), 3, "{}", output.dump());
    assert!(output.stderr.contains("archive"), "{}", output.dump());
    assert_eq!(names(&run), before, "files were added or left behind");
    assert_eq!(plan_id(&run), old);
    run_ok(&dir, &["plot", "run", "--png-only", "-q"]);
}

// ---------------------------------------------------------------------------
// Readers refuse files that do not belong together
// ---------------------------------------------------------------------------

#[test]
fn a_truncated_trajectory_is_refused_by_simulate_and_plot() {
    let dir = TempDir::new("truncated");
    solve(&dir, "run", 0.06);
    let run = dir.path().join("run");
    let csv = std::fs::read_to_string(run.join("trajectory.csv")).unwrap();
    let kept: Vec<&str> = csv.lines().take(40).collect();
    std::fs::write(run.join("trajectory.csv"), kept.join("\n") + "\n").unwrap();

    for args in [&["simulate", "run"][..], &["plot", "run"][..]] {
        let output = loam(dir.path(), args);
        assert_refused(
            &output,
            &[
                "run/trajectory.csv",
                "run/solution.json",
                "do not belong together",
                &plan_id(&run),
            ],
        );
    }
    assert_eq!(
        names(&run),
        ["ipopt.log", "solution.json", "trajectory.csv"]
    );
}

/// A folder from before plan identities (solution.json without `plan_id`, as 37eb56e wrote
/// it): refused with the reason, and archived whole by the next solve.
#[test]
fn a_folder_without_plan_identities_is_refused_then_archived() {
    let dir = TempDir::new("legacy");
    solve(&dir, "run", 0.06);
    run_ok(&dir, &["simulate", "run", "-q"]);
    let run = dir.path().join("run");
    for file in ["solution.json", "replay.json"] {
        let mut json = read_json(&run.join(file));
        json.as_object_mut().unwrap().remove("plan_id");
        std::fs::write(run.join(file), json.to_string()).unwrap();
    }
    for args in [&["simulate", "run"][..], &["plot", "run"][..]] {
        let output = loam(dir.path(), args);
        assert_refused(&output, &["run/solution.json", "no `plan_id`", "solve"]);
    }
    solve(&dir, "run", 0.06);
    let archive = names(&run.join("archive"));
    assert_eq!(archive.len(), 1, "{archive:?}");
    assert!(archive[0].starts_with("unidentified-"), "{archive:?}");
    assert_eq!(
        names(&run.join("archive").join(&archive[0])),
        [
            "ipopt.log",
            "replay.csv",
            "replay.json",
            "solution.json",
            "trajectory.csv"
        ]
    );
    run_ok(&dir, &["plot", "run", "--png-only", "-q"]);
}

/// One plan's solution.json beside another plan's trajectory (a 50 mm and a 70 mm plan).
#[test]
fn another_plans_solution_is_refused() {
    let dir = TempDir::new("swapped");
    let (a, b) = two_plans(&dir);
    std::fs::copy(b.join("solution.json"), a.join("solution.json")).unwrap();
    for args in [
        &["simulate", "a"][..],
        &["simulate", "a", "--terrain", "poppy_seeds"][..],
        &["plot", "a"][..],
    ] {
        let output = loam(dir.path(), args);
        assert_refused(
            &output,
            &[
                "a/trajectory.csv",
                "a/solution.json",
                "do not belong together",
            ],
        );
    }
    assert_eq!(names(&a), ["ipopt.log", "solution.json", "trajectory.csv"]);
}

/// A replay made from another plan, put beside this one; and a replay whose CSV was cut.
#[test]
fn a_replay_of_another_plan_or_cut_short_is_refused_by_plot() {
    let dir = TempDir::new("foreign-replay");
    let (a, b) = two_plans(&dir);
    run_ok(&dir, &["simulate", "b", "--terrain", "poppy_seeds", "-q"]);
    copy_files(
        &b,
        &a,
        &["replay-on-poppy_seeds.csv", "replay-on-poppy_seeds.json"],
    );
    let output = loam(dir.path(), &["plot", "a"]);
    assert_refused(
        &output,
        &[
            "a/replay-on-poppy_seeds.csv",
            "a/solution.json",
            &plan_id(&b),
            &plan_id(&a),
            "another plan",
        ],
    );
    assert!(!a.join("plots").exists());

    // A replay CSV without the record of its plan.
    std::fs::remove_file(a.join("replay-on-poppy_seeds.json")).unwrap();
    let output = loam(dir.path(), &["plot", "a"]);
    assert_refused(&output, &["a/replay-on-poppy_seeds.csv", "no"]);
    std::fs::remove_file(a.join("replay-on-poppy_seeds.csv")).unwrap();

    // The plan's own replay, cut short.
    run_ok(&dir, &["simulate", "a", "-q"]);
    let csv = std::fs::read_to_string(a.join("replay.csv")).unwrap();
    std::fs::write(a.join("replay.csv"), &csv[..csv.len() / 2]).unwrap();
    let output = loam(dir.path(), &["plot", "a"]);
    assert_refused(
        &output,
        &["a/replay.csv", "does not match", "a/replay.json"],
    );
}

/// A planar robot's plan goes through the same checks (the committed planar fixture).
#[test]
fn a_planar_plan_cut_short_is_refused() {
    let dir = TempDir::new("planar");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/planar_run");
    let run = dir.path().join("run");
    copy_files(&fixture, &run, &["solution.json", "trajectory.csv"]);
    let csv = std::fs::read_to_string(run.join("trajectory.csv")).unwrap();
    std::fs::write(run.join("trajectory.csv"), csv.replacen("e-", "e-1", 1)).unwrap();
    for args in [&["simulate", "run"][..], &["plot", "run"][..]] {
        let output = loam(dir.path(), args);
        assert_refused(
            &output,
            &["run/trajectory.csv", "run/solution.json", "do not belong"],
        );
    }
    assert_eq!(names(&run), ["solution.json", "trajectory.csv"]);
}

// ---------------------------------------------------------------------------
// Replays on a terrain file
// ---------------------------------------------------------------------------

/// `--terrain FILE` names the replay after the file and a hash of its parameters, records
/// every parameter, and leaves the preset's replay as it was.
#[test]
fn a_terrain_file_replay_is_named_after_the_file_and_leaves_the_preset_alone() {
    let dir = TempDir::new("terrain-file");
    solve(&dir, "run", 0.06);
    let run = dir.path().join("run");
    run_ok(&dir, &["simulate", "run", "--terrain", "poppy_seeds", "-q"]);
    let preset = std::fs::read(run.join("replay-on-poppy_seeds.json")).unwrap();
    let preset_csv = std::fs::read(run.join("replay-on-poppy_seeds.csv")).unwrap();

    dir.write(
        "soft.yaml",
        "terrain:\n  model: added_mass\n  drag_scaling: 5\n",
    );
    dir.write(
        "softer.yaml",
        "terrain:\n  model: added_mass\n  drag_scaling: 2\n",
    );
    let output = run_ok(&dir, &["simulate", "run", "--terrain", "soft.yaml"]);
    run_ok(&dir, &["simulate", "run", "--terrain", "softer.yaml", "-q"]);

    let named = |stem: &str| -> Vec<String> {
        names(&run)
            .into_iter()
            .filter(|n| n.starts_with(&format!("replay-on-{stem}-")))
            .collect()
    };
    let soft = named("soft");
    assert_eq!(soft.len(), 2, "{:?}", names(&run)); // .csv and .json
    let hash = soft[0]
        .trim_start_matches("replay-on-soft-")
        .trim_end_matches(".csv");
    assert!(is_hex(hash, 8), "{}", soft[0]);
    assert!(output.stdout.contains(&format!("replay-on-soft-{hash}")));
    let softer = named("softer");
    assert_eq!(softer.len(), 2);
    assert!(!softer[0].contains(hash), "two terrains, one hash");

    // The preset's replay is untouched; each record carries its own terrain's parameters.
    assert_eq!(
        std::fs::read(run.join("replay-on-poppy_seeds.json")).unwrap(),
        preset
    );
    assert_eq!(
        std::fs::read(run.join("replay-on-poppy_seeds.csv")).unwrap(),
        preset_csv
    );
    let record = read_json(&run.join(format!("replay-on-soft-{hash}.json")));
    let preset = read_json(&run.join("replay-on-poppy_seeds.json"));
    // The ground as the file set it: its medium, and the one field it changed (the others
    // are the medium's, written as null).
    assert_eq!(record["terrain"]["model"], "added_mass");
    assert_eq!(record["terrain"]["medium"], "poppy_seeds");
    assert_eq!(record["terrain"]["drag_scaling"], 5.0);
    assert!(preset["terrain"]["drag_scaling"].is_null(), "{preset}");
    assert_eq!(record["plan_id"], plan_id(&run).as_str());
    // Another drag, another motion under the same command.
    assert_ne!(
        record["achieved_apex_rise_m"],
        preset["achieved_apex_rise_m"]
    );
    run_ok(&dir, &["plot", "run", "--svg-only", "-q"]);
}

// ---------------------------------------------------------------------------
// Provenance
// ---------------------------------------------------------------------------

/// The `#define NAME "value"` of a header of the CasADi wheel loam was built against.
fn header_define(header: &str, name: &str) -> String {
    let path = Path::new(env!("LOAM_CASADI_DIR"))
        .join("include")
        .join(header);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .find_map(|line| {
            line.strip_prefix(&format!("#define {name} "))
                .map(|v| v.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("no {name} in {path:?}"))
}

#[test]
fn solution_json_records_what_reproduces_the_run() {
    let dir = TempDir::new("provenance");
    let before = std::time::SystemTime::now();
    let args = [
        "solve",
        &shipped("hopper_rigid.yaml"),
        "--set",
        "initial_guess=zero",
        "--out",
        "run",
        "-q",
    ];
    let output = loam(dir.path(), &args);
    assert!(matches!(output.code(), 0 | 1), "{}", output.dump());
    let after = std::time::SystemTime::now();
    let run = dir.path().join("run");
    let solution = read_json(&run.join("solution.json"));
    let provenance = &solution["provenance"];

    // The identity is the hash of the saved problem and trajectory, recomputed here.
    let trajectory = std::fs::read(run.join("trajectory.csv")).unwrap();
    let id = solution["plan_id"].as_str().unwrap();
    assert!(is_hex(id, 16), "{id}");
    assert_eq!(
        id,
        loam::output::identity::plan_id(&solution["problem"], &trajectory)
    );

    assert_eq!(solution["loam_version"], env!("CARGO_PKG_VERSION"));
    let commit = provenance["loam_commit"].as_str().unwrap();
    assert!(
        commit == "unknown" || (commit.len() >= 7 && is_hex(commit, commit.len())),
        "{commit}"
    );
    assert!(
        provenance["loam_commit_dirty"].is_boolean() || commit == "unknown",
        "{provenance}"
    );
    let command: Vec<&str> = provenance["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(command[0].ends_with("loam"), "{command:?}");
    assert_eq!(command[1..], args);
    assert_eq!(
        provenance["warm_start"],
        serde_json::json!({"kind": "zero"})
    );
    assert_eq!(solution["solver_options"]["tol"], 1e-8);

    // The libraries' own answers agree with the headers of the wheel loam was built against.
    assert_eq!(
        provenance["casadi_version"],
        header_define("casadi/config.h", "CASADI_VERSION_STRING").as_str()
    );
    assert_eq!(
        provenance["ipopt_version"],
        header_define("coin-or/IpoptConfig.h", "IPOPT_VERSION").as_str()
    );
    // The folder the libraries come from, as `loam --version` names it.
    let library_dir = provenance["casadi_dir"].as_str().unwrap();
    assert!(
        std::path::Path::new(library_dir)
            .join("libcasadi.so")
            .exists(),
        "{library_dir}"
    );
    let version = loam(dir.path(), &["--version"]);
    assert!(
        version.stdout.contains(library_dir) && version.stdout.contains(commit),
        "{}",
        version.dump()
    );

    // RFC 3339, UTC, to the second, within the run.
    let stamp = provenance["written_at"].as_str().unwrap();
    assert!(stamp.ends_with('Z') && stamp.len() == 20, "{stamp}");
    let written = humantime::parse_rfc3339(stamp).expect("RFC 3339");
    let second = std::time::Duration::from_secs(1);
    assert!(
        written + second >= before && written <= after + second,
        "{stamp}"
    );

    // The default guess is recorded as such.
    let output = loam(
        dir.path(),
        &[
            "solve",
            &shipped("hopper_rigid.yaml"),
            "--out",
            "rest",
            "-q",
        ],
    );
    assert_eq!(output.code(), 0, "{}", output.dump());
    let solution = read_json(&dir.path().join("rest/solution.json"));
    assert_eq!(
        solution["provenance"]["warm_start"],
        serde_json::json!({"kind": "rest"})
    );
}

// ---------------------------------------------------------------------------
// DEM replays
// ---------------------------------------------------------------------------

/// A DEM replay records its plan and its CSV's hash; after a re-solve it is archived with its
/// plan, and one put back beside the new plan is refused.
#[test]
fn a_dem_replay_belongs_to_its_plan() {
    let dir = TempDir::new("dem");
    dir.write(
        "coarse.yaml",
        "container: { shape: cylinder, radius: 0.05 }\n\
         grains: { radius: 0.004, density: 1000, friction: 0.5, fill_height: 0.02, seed: 3 }\n\
         settle: { kinetic_energy: 1.0e-8, max_time: 1.0 }\n",
    );
    run_ok(&dir, &["dem", "prepare", "coarse.yaml", "-o", "coarse.bed"]);
    let plan = solve_output(&dir, "hopper_granular.yaml", "run", 0.06, true);
    assert_eq!(plan.code(), 0, "{}", plan.dump());
    let run = dir.path().join("run");
    let dem = loam(
        dir.path(),
        &[
            "simulate",
            "run",
            "--backend",
            "dem-cpu",
            "--bed",
            "coarse.bed",
            "--iterations",
            "20",
            "--snapshot-every",
            "0",
            "-q",
        ],
    );
    assert!(matches!(dem.code(), 0 | 1), "{}", dem.dump());
    let record = read_json(&run.join("dem-cpu/dem.json"));
    let old = plan_id(&run);
    assert_eq!(record["plan_id"], old.as_str());
    assert_eq!(
        record["csv_sha256"],
        loam::output::identity::content_hash(
            &std::fs::read(run.join("dem-cpu/dem_replay.csv")).unwrap()
        )
        .as_str()
    );
    // `plot RUN` draws the DEM replay over the plan.
    let plotted = run_ok(&dir, &["plot", "run", "--png-only"]);
    assert!(
        plotted.stdout.contains("dem-cpu/dem_replay.csv"),
        "{}",
        plotted.dump()
    );

    let resolve = solve_output(&dir, "hopper_granular.yaml", "run", 0.05, true);
    assert_eq!(resolve.code(), 0, "{}", resolve.dump());
    assert!(!run.join("dem-cpu").exists());
    let archived: PathBuf = run.join("archive").join(&old).join("dem-cpu");
    assert!(archived.join("dem.json").is_file());

    // Put back beside the new plan, it is refused.
    copy_files(
        &archived,
        &run.join("dem-cpu"),
        &["dem.json", "dem_replay.csv"],
    );
    let output = loam(dir.path(), &["plot", "run"]);
    assert_refused(
        &output,
        &["run/dem-cpu", "dem", &old, &plan_id(&run), "another plan"],
    );
}

// ---------------------------------------------------------------------------
// A committed sweep
// ---------------------------------------------------------------------------

/// results/jump-sweep's tables and figures without its plan folders: `loam plot` redraws the
/// apex figure from sweep.csv and replays.csv, says why it skips the command figure, and leaves
/// that figure as it was.
#[test]
fn a_sweep_without_its_plan_folders_keeps_its_command_figure() {
    let dir = TempDir::new("committed-sweep");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/jump-sweep");
    let sweep = dir.path().join("jump-sweep");
    copy_files(&committed, &sweep, &["sweep.csv", "replays.csv"]);
    copy_files(
        &committed.join("plots"),
        &sweep.join("plots"),
        &["sweep_commands.png", "sweep_commands.svg"],
    );
    let before = std::fs::read(sweep.join("plots/sweep_commands.png")).unwrap();
    let output = run_ok(&dir, &["plot", "jump-sweep"]);
    assert!(
        output.stdout.contains("skipped sweep_commands")
            && output.stdout.contains("column run")
            && output.stdout.contains("trajectory.csv"),
        "{}",
        output.dump()
    );
    assert!(
        !output.stdout.contains("sweep_commands.png"),
        "{}",
        output.dump()
    );
    assert_eq!(
        std::fs::read(sweep.join("plots/sweep_commands.png")).unwrap(),
        before,
        "sweep_commands.png was rewritten"
    );
    assert!(sweep.join("plots/sweep_apex.png").is_file());
}

/// An output folder that cannot be written is found before the solve (exit 3, the code for
/// I/O and environment errors, not 1, the solver's), and nothing is written.
#[test]
fn an_unwritable_output_folder_exits_3_before_solving() {
    let dir = TempDir::new("unwritable-out");
    // A file where the folder's parent should be: unwritable even for root.
    std::fs::write(dir.path().join("blocked"), "a file").unwrap();
    let output = solve_output(&dir, "hopper_granular.yaml", "blocked/run", 0.06, true);
    assert_exit(&output, 3, &["could not write", "blocked/run"]);
    assert!(!output.stdout.contains("converged"), "{}", output.dump());
}

/// An empty or comment-only problem file is a mistake, not a request for the defaults.
#[test]
fn an_empty_problem_file_is_refused() {
    let dir = TempDir::new("empty-problem");
    for (name, text) in [
        ("empty.yaml", ""),
        ("comments.yaml", "# nothing yet\n\n# at all\n"),
    ] {
        dir.write(name, text);
        let output = loam(dir.path(), &["solve", name, "--out", "run"]);
        assert_exit(&output, 2, &[name, "the file is empty"]);
        assert!(!dir.path().join("run").exists(), "{}", output.dump());
    }
}
