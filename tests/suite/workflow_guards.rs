//! Everyday workflows that used to give wrong output or the wrong exit code (issue 11), each
//! through the real binary: a closed stdout, the bench's wording, a linear solver IPOPT cannot
//! load, Ctrl-C during a solve, a sweep over a terrain parameter, and the DEM's sanity checks.
//!
//! Exit codes: 2 bad input (with a message naming the file or flag and what is accepted),
//! 1 a simulation that failed.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::run::{assert_exit, loam, shipped};
use common::scenes::TINY_BED;
use common::temp_dir::TempDir;

/// A granular plan solved into `dir/run`.
fn solved_plan(dir: &TempDir) {
    let out = loam(
        dir.path(),
        &[
            "solve",
            &shipped("hopper_granular.yaml"),
            "--out",
            "run",
            "-q",
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.dump());
}

/// A bed wide enough for the robot's 38 mm foot, `layers` deep in grains of `radius`, prepared
/// into `dir/NAME.bed` (about a second): hard contacts at a 1 ms step, so replays are quick
/// and a starved Jacobi solver lets the foot fall through.
fn bed(dir: &TempDir, name: &str, radius: f64, fill_height: f64) {
    dir.write(
        &format!("{name}.yaml"),
        &format!(
            "container: {{ shape: cylinder, radius: 0.05 }}\n\
             grains: {{ radius: {radius}, density: 1000, friction: 0.5, fill_height: {fill_height}, seed: 3 }}\n\
             settle: {{ kinetic_energy: 1.0e-8, max_time: 1.0 }}\n\
             contact: {{ law: projected_jacobi }}\n"
        ),
    );
    let out = loam(
        dir.path(),
        &[
            "dem",
            "prepare",
            &format!("{name}.yaml"),
            "-o",
            &format!("{name}.bed"),
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.dump());
}

// ---------------------------------------------------------------------------
// 1. A closed stdout
// ---------------------------------------------------------------------------

/// `loam solve ... | head -1`: the reader is gone before loam prints; no panic (exit 101),
/// and the results written before printing are all there.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = TempDir::new("pipe");
    let mut child = Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(["solve", &shipped("hopper_rigid.yaml"), "--out", "out"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loam");
    drop(child.stdout.take()); // the pipe's only reader closes before the solve ends
    let output = child.wait_with_output().expect("wait for loam");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(output.status.code(), Some(101), "{stderr}");
    // Ended quietly: by SIGPIPE, as any Unix filter, or with success.
    use std::os::unix::process::ExitStatusExt;
    assert!(
        output.status.signal() == Some(libc_sigpipe()) || output.status.success(),
        "{:?} {stderr}",
        output.status
    );
    for file in ["solution.json", "trajectory.csv", "ipopt.log"] {
        assert!(
            dir.path().join("out").join(file).is_file(),
            "{file} missing"
        );
    }
}

fn libc_sigpipe() -> i32 {
    13 // SIGPIPE on Linux
}

// ---------------------------------------------------------------------------
// 1b. Ctrl-C during a solve
// ---------------------------------------------------------------------------

/// Whether IPOPT is at work on a solve into `folder` (its temporary log is there) and
/// `after` seconds have passed since `started`.
fn ipopt_running(folder: &Path, started: std::time::Instant, after: f64) -> bool {
    started.elapsed().as_secs_f64() >= after
        && std::fs::read_dir(folder)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".ipopt.log.tmp")
            })
}

/// Starts `loam solve problems/monopod_hop.yaml --out OUT` in `dir` (seconds of IPOPT) and
/// sends it SIGINT once IPOPT is at work (its temporary log is in OUT) and half a second has
/// passed; returns what it printed. Panics if the solve finished first.
fn interrupt_solve(dir: &Path, out: &str) -> common::run::Output {
    let folder = dir.join(out);
    let started = std::time::Instant::now();
    let file = shipped("monopod_hop.yaml");
    common::run::interrupt_when(dir, &["solve", &file, "--out", out], || {
        ipopt_running(&folder, started, 0.5)
    })
}

/// Every file under `dir` with its bytes, by path relative to it.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

/// Ctrl-C during `loam solve`: exit 130 with one line that says so, IPOPT's temporary log
/// removed, no result of the half-finished solve; a folder holding another plan is left
/// exactly as it was (nothing archived), and a folder the run created is gone again.
#[test]
fn ctrl_c_stops_a_solve_leaving_no_temporary_and_no_result() {
    let dir = TempDir::new("sigint-solve");

    let out = interrupt_solve(dir.path(), "fresh");
    assert_exit(&out, 130, &["interrupted", "nothing was written"]);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.dump());
    let left = contents(&dir.path().join("fresh"));
    assert!(
        left.is_empty(),
        "left behind: {:?}",
        left.iter().map(|f| &f.0).collect::<Vec<_>>()
    );

    let solved = loam(
        dir.path(),
        &[
            "solve",
            &shipped("hopper_rigid.yaml"),
            "--out",
            "kept",
            "-q",
        ],
    );
    assert_eq!(solved.status, Some(0), "{}", solved.dump());
    let before = contents(&dir.path().join("kept"));
    assert!(before.iter().any(|f| f.0 == "solution.json"));
    let out = interrupt_solve(dir.path(), "kept");
    assert_exit(&out, 130, &["interrupted", "kept"]);
    let after = contents(&dir.path().join("kept"));
    assert_eq!(
        after.iter().map(|f| &f.0).collect::<Vec<_>>(),
        before.iter().map(|f| &f.0).collect::<Vec<_>>(),
        "files added or removed"
    );
    assert!(after == before, "a file of the earlier plan changed");
}

/// Ctrl-C during a warm-started solve stops the whole solve: the warm start is not taken for
/// one that did not converge and solved again from the problem's guess (it was, until
/// 2026-11-29: the signal then also stopped that second solve at its iteration 0).
#[test]
fn ctrl_c_stops_a_warm_start_without_solving_again() {
    let dir = TempDir::new("sigint-warm");
    let file = shipped("monopod_hop.yaml");
    let start = loam(dir.path(), &["solve", &file, "--out", "start", "-q"]);
    assert_eq!(start.status, Some(0), "{}", start.dump());
    // On the next mesh the warm solve takes many seconds (hundreds of iterations).
    let folder = dir.path().join("warm");
    let began = std::time::Instant::now();
    let running = || ipopt_running(&folder, began, 1.0);
    let out = common::run::interrupt_when(
        dir.path(),
        &[
            "solve",
            &file,
            "--set",
            "schedule.0.nodes=41",
            "--set",
            "schedule.1.nodes=41",
            "--set",
            "schedule.2.nodes=21",
            "--set",
            "mesh.tolerance=1000",
            "--warm-start",
            "start",
            "--out",
            "warm",
        ],
        running,
    );
    assert_exit(&out, 130, &["interrupted", "nothing was written"]);
    assert!(
        !out.stderr.contains("solved again"),
        "the interrupted warm start was solved again: {}",
        out.dump()
    );
}

// ---------------------------------------------------------------------------
// 2. The bench's ratio
// ---------------------------------------------------------------------------

/// The ratio is loam's time over the CasADi peer's, and the word follows from it.
#[test]
fn bench_says_slower_above_one_and_faster_below() {
    let dir = TempDir::new("bench");
    let out = loam(
        dir.path(),
        &["bench", &shipped("hopper_rigid.yaml"), "--repeat", "1"],
    );
    assert_eq!(out.status, Some(0), "{}", out.dump());
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("loam/peer time"))
        .unwrap_or_else(|| panic!("no `loam/peer time` line:\n{}", out.dump()));
    let ratio: f64 = line
        .split("loam/peer time")
        .nth(1)
        .and_then(|rest| rest.trim().split(':').next())
        .and_then(|r| r.trim().parse().ok())
        .unwrap_or_else(|| panic!("no ratio in {line:?}"));
    if ratio > 1.0 {
        assert!(
            line.contains("slower") && !line.contains("faster"),
            "{line}"
        );
    } else if ratio < 1.0 {
        assert!(
            line.contains("faster") && !line.contains("slower"),
            "{line}"
        );
    }
}

// ---------------------------------------------------------------------------
// 3. A linear solver this IPOPT cannot load
// ---------------------------------------------------------------------------

#[test]
fn a_linear_solver_without_its_library_is_bad_input_for_check_and_solve() {
    let dir = TempDir::new("ma27");
    let file = shipped("hopper_rigid.yaml");
    for args in [
        vec!["check", &file, "--set", "solver.linear_solver=ma27"],
        vec![
            "solve",
            &file,
            "--set",
            "solver.linear_solver=ma27",
            "--out",
            "out",
        ],
    ] {
        let out = loam(dir.path(), &args);
        // The option, the value, the cause and what works instead.
        assert_exit(
            &out,
            2,
            &[
                "hopper_rigid.yaml",
                "linear_solver",
                "ma27",
                "libhsl",
                "mumps",
            ],
        );
        assert!(out.stdout.is_empty(), "{}", out.dump());
    }
    assert!(!dir.path().join("out").exists(), "solve wrote a run");
    // The built-in one is fine.
    let out = loam(
        dir.path(),
        &["check", &file, "--set", "solver.linear_solver=mumps"],
    );
    assert_eq!(out.status, Some(0), "{}", out.dump());
}

// ---------------------------------------------------------------------------
// 4. A sweep over a terrain parameter
// ---------------------------------------------------------------------------

#[test]
fn a_sweep_keeps_every_varied_value_in_its_csv_table_and_figures() {
    let dir = TempDir::new("sweep");
    let values = ["5", "10", "17.2"];
    let out = loam(
        dir.path(),
        &[
            "sweep",
            &shipped("hopper_granular.yaml"),
            "--vary",
            "terrain.drag_scaling=5,10,17.2",
            "--out",
            "sw",
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.dump());

    let csv = std::fs::read_to_string(dir.path().join("sw/sweep.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let (varied, objective, iterations) = (
        column("terrain.drag_scaling"),
        column("objective"),
        column("iterations"),
    );
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3, "{csv}"); // one row per plan
    let seen: Vec<&str> = rows.iter().map(|r| r[varied]).collect();
    assert_eq!(seen, values, "{csv}");
    for r in &rows {
        let number = |i: usize| r[i].parse::<f64>().unwrap_or(f64::NAN);
        assert!(number(objective) > 0.0, "{csv}");
        assert!(number(iterations) >= 1.0, "{csv}");
    }
    // A drag is a ground of its own: every plan is replayed on every drag of the sweep.
    let replays = std::fs::read_to_string(dir.path().join("sw/replays.csv")).unwrap();
    assert_eq!(replays.lines().count(), 1 + 9, "{replays}");

    // The console table: a drag_scaling column with each value, a row per plan and ground.
    let table_header = out.stdout.lines().next().unwrap_or_default();
    assert!(table_header.contains("drag_scaling"), "{}", out.dump());
    for v in values {
        let count = out
            .stdout
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(v))
            .count();
        assert_eq!(
            count,
            3,
            "value {v} not in three table rows:\n{}",
            out.dump()
        );
    }

    // The figures: the commands one panel per drag; the apex figure, whose groups are named
    // by the medium, is skipped saying why rather than merging three grounds into one.
    let plot = loam(dir.path(), &["plot", "sw"]);
    assert_eq!(plot.status, Some(0), "{}", plot.dump());
    assert!(dir.path().join("sw/plots/sweep_commands.png").is_file());
    assert!(
        plot.stdout.contains("skipped sweep_apex") && plot.stdout.contains("poppy_seeds"),
        "{}",
        plot.dump()
    );
}

// ---------------------------------------------------------------------------
// 5. DEM sanity
// ---------------------------------------------------------------------------

/// (a) With 5 Jacobi iterations the grains do not hold the robot and the foot sinks through
/// the floor: a failed simulation (exit 1) that says so, and no dem.json.
#[test]
fn a_foot_below_the_container_floor_fails_the_replay() {
    let dir = TempDir::new("floor");
    solved_plan(&dir);
    bed(&dir, "fine", 0.002, 0.015);
    let out = loam(
        dir.path(),
        &[
            "simulate",
            "run",
            "--backend",
            "dem-cpu",
            "--bed",
            "fine.bed",
            "--iterations",
            "5",
            "--snapshot-every",
            "0",
        ],
    );
    assert_exit(&out, 1, &["foot", "below the container's floor"]);
    assert!(!dir.path().join("run/dem-cpu/dem.json").exists());
}

/// (b) A time step at which gravity alone moves a grain more than its radius per step is
/// refused before pouring (it was saved as "settled" at a volume fraction of 1.9e303).
#[test]
fn an_exploding_time_step_is_bad_input() {
    let dir = TempDir::new("dt");
    dir.write(
        "coarse.yaml",
        &TINY_BED.replace("settle:", "time_step: 0.5\nsettle:"),
    );
    let out = loam(
        dir.path(),
        &["dem", "prepare", "coarse.yaml", "-o", "coarse.bed"],
    );
    assert_exit(
        &out,
        2,
        &["coarse.yaml", "time_step", "0.5", "must be below"],
    );
    assert!(!dir.path().join("coarse.bed").exists());
}

/// (b) A bed that exploded anyway (grains below the floor, a packing fraction no spheres
/// reach, a non-finite energy) is a failed simulation, not a settled bed.
#[test]
fn an_exploded_bed_is_a_failed_simulation() {
    use loam::sim::dem::bed::{check_sane, BedInfo};
    use loam::sim::dem::GrainState;
    let grains = |z: f64| GrainState {
        position: vec![[0.0, 0.0, 0.004], [0.01, 0.0, z]],
        velocity: vec![[0.0; 3]; 2],
        radius: vec![0.004; 2],
        inverse_mass: vec![1.0; 2],
        angular_velocity: Vec::new(),
    };
    let info = |fraction: f64, energy: f64| BedInfo {
        surface_height: 0.008,
        settled: true,
        settle_time: 0.5,
        kinetic_energy_per_grain: energy,
        volume_fraction: fraction,
    };
    assert!(check_sane(&grains(0.004), &info(0.6, 1e-10)).is_ok());
    for (g, i, needle) in [
        (grains(-0.5), info(0.6, 1e-10), "below the container floor"),
        (grains(f64::NAN), info(0.6, 1e-10), "non-finite"),
        (grains(0.004), info(1.9e303, 1e-10), "volume fraction"),
        (grains(0.004), info(0.6, f64::INFINITY), "kinetic energy"),
    ] {
        let e = check_sane(&g, &i).unwrap_err();
        assert!(!e.is_bad_input(), "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
}

/// (c) A depth below the bed's floor is bad input before any step.
#[test]
fn an_intrusion_below_the_floor_is_bad_input_at_once() {
    let dir = TempDir::new("depth");
    dir.write("tiny.yaml", TINY_BED);
    let prepared = loam(
        dir.path(),
        &["dem", "prepare", "tiny.yaml", "-o", "tiny.bed"],
    );
    assert_eq!(prepared.status, Some(0), "{}", prepared.dump());
    let started = std::time::Instant::now();
    let out = loam(
        dir.path(),
        &[
            "dem",
            "intrude",
            "tiny.bed",
            "--radius",
            "0.01",
            "--velocity",
            "0.1",
            "--depth",
            "0.5",
            "-o",
            "force.csv",
        ],
    );
    assert_exit(
        &out,
        2,
        &["--depth", "0.5", "tiny.bed", "floor", "less than"],
    );
    assert!(started.elapsed().as_secs_f64() < 5.0, "it ran first");
    assert!(!dir.path().join("force.csv").exists());
}

/// (d) and (e): the console lists only files written; render times outside the run, or with
/// no snapshots to render, are refused; those inside are rendered at the time asked.
#[test]
fn snapshots_and_renders_are_what_was_asked_and_listed_as_written() {
    let dir = TempDir::new("renders");
    solved_plan(&dir);
    bed(&dir, "coarse", 0.004, 0.02);
    let simulate = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "run",
            "--backend",
            "dem-cpu",
            "--bed",
            "coarse.bed",
            "--iterations",
            "5",
        ];
        args.extend_from_slice(extra);
        loam(dir.path(), &args)
    };

    // (d) No snapshots: none listed, none on disk.
    let out = simulate(&["--snapshot-every", "0"]);
    assert!(matches!(out.status, Some(0 | 1)), "{}", out.dump());
    let wrote = out
        .stdout
        .lines()
        .find(|l| l.contains("wrote"))
        .unwrap_or_else(|| panic!("no `wrote` line:\n{}", out.dump()));
    assert!(!wrote.contains("snapshots"), "{wrote}");
    assert!(!wrote.contains("render"), "{wrote}");
    assert!(!dir.path().join("run/dem-cpu/snapshots").exists());
    let renders = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("render_"))
            .collect::<Vec<_>>()
    };
    assert!(renders(&dir.path().join("run/dem-cpu")).is_empty());

    // (e) Outside the run, or nothing to render: refused before any work.
    let out = simulate(&["--t-max", "0.3", "--render-at", "0,5"]);
    assert_exit(&out, 2, &["--render-at", "5", "--t-max"]);
    let out = simulate(&["--render-at=-0.1"]);
    assert_exit(&out, 2, &["--render-at", "-0.1"]);
    let out = simulate(&["--snapshot-every", "0", "--render-at", "0.05"]);
    assert_exit(&out, 2, &["--render-at", "--snapshot-every"]);

    // Honoured: 0.03 s is between the 0.05 s snapshots, and is rendered at 0.03 s.
    std::fs::remove_dir_all(dir.path().join("run/dem-cpu")).unwrap();
    let out = simulate(&["--snapshot-every", "0.05", "--render-at", "0.03"]);
    assert!(matches!(out.status, Some(0 | 1)), "{}", out.dump());
    assert_eq!(
        renders(&dir.path().join("run/dem-cpu")),
        ["render_t0.030.png"],
        "{}",
        out.dump()
    );
    let wrote = out.stdout.lines().find(|l| l.contains("wrote")).unwrap();
    assert!(wrote.contains("render_t0.030.png"), "{wrote}");
    assert!(wrote.contains("snapshots/"), "{wrote}");

    // The ParaView series lists grains and foot at each snapshot's time, from 0 and through
    // the rendered 0.03 s, as many as the console says, every file there.
    let listed = common::pvd::read_pvd(&dir.path().join("run/dem-cpu/snapshots/snapshots.pvd"));
    let grains: Vec<f64> = listed
        .iter()
        .filter(|d| d.part == 0)
        .map(|d| d.timestep)
        .collect();
    let bodies: Vec<f64> = listed
        .iter()
        .filter(|d| d.part == 1)
        .map(|d| d.timestep)
        .collect();
    assert_eq!(grains, bodies);
    assert!(grains.windows(2).all(|w| w[0] < w[1]), "{grains:?}");
    assert_eq!(grains[..3], [0.0, 0.03, 0.05], "{grains:?}");
    assert!(
        wrote.contains(&format!("{} snapshots", grains.len())),
        "{wrote} vs {grains:?}"
    );
    for set in &listed {
        assert!(set.file.is_file(), "{} not written", set.file.display());
    }
}
