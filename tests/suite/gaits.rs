//! Gaits: periodic plans through the real binary. The monopod's shipped gait converges at its
//! defaults with its periodicity closed, its stride time fixed by its speed and its stride
//! starting at the apex; its replay over three strides keeps every stride within 2 % of the
//! plan; the first stride of a replay over three is the one-stride replay; a gait's bad input
//! is refused with the field and what is accepted (exit 2).

use crate::common;

use std::path::Path;

use common::run::{assert_exit, loam, read_json, shipped};
use common::temp_dir::TempDir;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The trajectory's rows (t, phase, node, states..., controls...) and its header.
fn trajectory(run: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(run.join("trajectory.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    (header, rows)
}

/// `loam solve problems/NAME --out RUN -q`, which must exit 0; its solution.json.
fn solve(name: &str, run: &Path) -> serde_json::Value {
    let file = shipped(name);
    let solve = loam(
        manifest(),
        &["solve", &file, "--out", run.to_str().unwrap(), "-q"],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());
    read_json(&run.join("solution.json"))
}

#[test]
fn the_monopod_gait_closes_its_stride_at_its_speed_and_holds_for_three_strides() {
    let dir = TempDir::new("gait");
    let run = dir.path().join("gait");
    let solution = solve("monopod_gait.yaml", &run);
    assert_eq!(solution["converged"], true);
    let key = &solution["key_figures"];
    let residual = key["periodicity_residual"].as_f64().unwrap();
    assert!(residual < 1e-8, "periodicity residual {residual}");
    let cot = key["cost_of_transport"].as_f64().unwrap();
    assert!(cot > 0.0 && cot < 1.0, "cost of transport {cot}");
    // distance / speed = 0.3 / 0.6 s.
    let duration = key["duration_s"].as_f64().unwrap();
    assert!((duration - 0.5).abs() < 1e-8, "stride time {duration}");
    assert!((key["distance_m"].as_f64().unwrap() - 0.3).abs() < 1e-8);

    // Apex to apex: the centre of mass neither rises nor falls at the first node. The
    // monopod's centre of mass velocity from its bodies' is checked through the plan's own
    // numbers: the start's vertical velocity of every body is what the planner summed.
    let (header, rows) = trajectory(&run);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (first, last) = (&rows[0], rows.last().unwrap());
    for name in [
        "z", "pitch", "hip", "leg", "d_x", "d_z", "d_pitch", "d_hip", "d_leg",
    ] {
        let j = col(name);
        assert!(
            (last[j] - first[j]).abs() < 1e-8,
            "{name}: start {} end {}",
            first[j],
            last[j]
        );
    }
    assert!((last[col("x")] - first[col("x")] - 0.3).abs() < 1e-8);

    // Three strides, each within 2 % of the plan's length and apex.
    let sim = loam(manifest(), &["simulate", run.to_str().unwrap(), "-q"]);
    assert_eq!(sim.code(), 0, "{}", sim.dump());
    let replay = read_json(&run.join("replay.json"));
    assert_eq!(replay["complete"], true);
    let strides = replay["strides"].as_array().unwrap();
    assert_eq!(strides.len(), 3);
    for stride in strides {
        assert!((stride["planned_length_m"].as_f64().unwrap() - 0.3).abs() < 1e-8);
        for key in ["length_error_rel", "apex_error_rel"] {
            let e = stride[key].as_f64().unwrap();
            assert!(e < 0.02, "{key} {e}: {stride}");
        }
    }
    // Three touchdowns and three lift-offs, one of each a stride.
    let events = replay["events"].as_array().unwrap();
    for kind in ["touchdown", "lift-off"] {
        let n = events.iter().filter(|e| e["kind"] == kind).count();
        assert_eq!(n, 3, "{kind}: {events:?}");
    }

    // The first stride of the three is the plan replayed once: two independent runs of the
    // event loop over the same first 0.5 s.
    let once = loam(
        manifest(),
        &["simulate", run.to_str().unwrap(), "--strides", "1", "-q"],
    );
    assert_eq!(once.code(), 0, "{}", once.dump());
    let single = read_json(&run.join("replay.json"));
    let one = &single["strides"][0];
    let of_three = &strides[0];
    for key in ["length_m", "apex_m"] {
        let (a, b) = (one[key].as_f64().unwrap(), of_three[key].as_f64().unwrap());
        assert!((a - b).abs() < 1e-7, "{key}: {a} alone, {b} of three");
    }
    assert!(single["strides"].as_array().unwrap().len() == 1);
}

#[test]
fn a_plan_of_three_strides_replays_once_and_costs_three_strides() {
    let dir = TempDir::new("gait3");
    let run = dir.path().join("three");
    let solution = solve("monopod_gait_three_strides.yaml", &run);
    let key = &solution["key_figures"];
    assert!(key["periodicity_residual"].as_f64().unwrap() < 1e-8);
    assert!((key["duration_s"].as_f64().unwrap() - 1.5).abs() < 1e-8);
    // Three strides of one gait cost about three of its strides (the one-stride plan's
    // 3.63e-4, measured): each stride is free to differ, so no more than three of them.
    let objective = solution["objective"].as_f64().unwrap();
    assert!(
        objective > 3.0 * 3.5e-4 && objective < 3.0 * 3.8e-4,
        "{objective}"
    );
    let sim = loam(manifest(), &["simulate", run.to_str().unwrap(), "-q"]);
    assert_eq!(sim.code(), 0, "{}", sim.dump());
    let replay = read_json(&run.join("replay.json"));
    let strides = replay["strides"].as_array().unwrap();
    assert_eq!(strides.len(), 1, "the plan once covers its three strides");
    assert!((strides[0]["planned_length_m"].as_f64().unwrap() - 0.9).abs() < 1e-8);
    assert!(strides[0]["length_error_rel"].as_f64().unwrap() < 0.02);
}

/// `loam check` of the gait with `--set`s: exit 2 naming the field and what is accepted.
fn refused(sets: &[&str], needles: &[&str]) {
    let file = shipped("monopod_gait.yaml");
    let mut args = vec!["check", file.as_str()];
    for set in sets {
        args.extend(["--set", set]);
    }
    let out = loam(manifest(), &args);
    let mut all = vec!["monopod_gait.yaml"];
    all.extend_from_slice(needles);
    assert_exit(&out, 2, &all);
}

#[test]
fn a_gaits_bad_input_is_refused_with_the_field() {
    // A schedule that never touches the ground cannot close a stride.
    refused(
        &["schedule=[{contacts: []}]"],
        &["task.periodic", "never touches the ground"],
    );
    // A stride of 0.
    refused(
        &["task.distance=0", "task.speed=null"],
        &["task.distance", "stride of 0"],
    );
    // Speeds: not a number > 0, without a distance, out of the durations' reach.
    refused(&["task.speed=0"], &["task.speed", "finite number > 0"]);
    refused(&["task.speed=-1"], &["task.speed", "finite number > 0"]);
    refused(&["task.speed=.nan"], &["task.speed", "NaN"]);
    refused(
        &["task.distance=null"],
        &["task.speed", "set task.distance"],
    );
    refused(
        &["task.speed=10"],
        &[
            "task.speed",
            "0.0300 s",
            "accepted speeds 0.2308 to 3.3333 m/s",
        ],
    );
    // The minimum-time objective against a fixed stride time.
    refused(
        &["task.objective=time"],
        &["task.objective", "task.speed fixes"],
    );
    // Strides: at least one, and only for a gait.
    refused(&["task.strides=0"], &["task.strides", "at least 1"]);
    refused(
        &["task.periodic=false", "task.strides=2"],
        &["task.strides", "task.periodic: true"],
    );
}

#[test]
fn more_than_one_stride_of_a_plan_that_is_not_a_gait_is_refused() {
    let dir = TempDir::new("not-gait");
    let run = dir.path().join("hop");
    solve("monopod_hop.yaml", &run);
    let out = loam(
        manifest(),
        &["simulate", run.to_str().unwrap(), "--strides", "3"],
    );
    assert_exit(
        &out,
        2,
        &["--strides 3", "not a gait", "accepted for it: 1"],
    );
}

/// A gait warm-started from its neighbour at another speed (`--warm-start`): its durations
/// held first, scaled to the new stride time, then released; it reaches the cold solve's
/// optimum (measured: 2.981605e-4 at 0.55 m/s from 0.6 m/s, both on the file's first mesh).
#[test]
fn a_warm_start_across_speeds_reaches_the_cold_optimum() {
    let dir = TempDir::new("gait-warm");
    let file = shipped("monopod_gait.yaml");
    // One mesh: a tolerance no replay misses, so that both plans stay on the file's nodes.
    let solve = |name: &str, speed: &str, warm: Option<&str>| {
        let mut args = vec![
            "solve",
            file.as_str(),
            "--set",
            "mesh.tolerance=1000",
            "--set",
            speed,
            "--out",
            name,
            "-q",
        ];
        if let Some(from) = warm {
            args.extend(["--warm-start", from]);
        }
        let out = loam(dir.path(), &args);
        assert_eq!(out.code(), 0, "{}", out.dump());
        read_json(&dir.path().join(name).join("solution.json"))
    };
    solve("at-0.6", "task.speed=0.6", None);
    let cold = solve("cold", "task.speed=0.55", None);
    let warm = solve("warm", "task.speed=0.55", Some("at-0.6"));
    assert_eq!(warm["provenance"]["warm_start"]["kind"], "plan");
    let (c, w) = (
        cold["objective"].as_f64().unwrap(),
        warm["objective"].as_f64().unwrap(),
    );
    assert!((c - w).abs() <= 1e-6 * c, "cold {c}, warm {w}");
    let duration = warm["key_figures"]["duration_s"].as_f64().unwrap();
    assert!(
        (duration - 0.3 / 0.55).abs() < 1e-8,
        "stride time {duration}"
    );
}

/// `initial_guess: footholds` (the gait's guess from its schedule) reaches the monopod
/// stride's optimum that the rest guess reaches; the hopper refuses it by name.
#[test]
fn the_footholds_guess_reaches_the_strides_optimum() {
    use common::run::{assert_exit, loam, read_json};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("gaits_footholds");
    let _ = std::fs::remove_dir_all(&dir);
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut objectives = Vec::new();
    for guess in ["rest", "footholds"] {
        let out = dir.join(guess);
        let set = format!("initial_guess={guess}");
        let solve = loam(
            manifest,
            &[
                "solve",
                "problems/monopod_gait.yaml",
                "--set",
                &set,
                "--out",
                out.to_str().unwrap(),
                "-q",
            ],
        );
        assert_exit(&solve, 0, &[]);
        let solution = read_json(&out.join("solution.json"));
        assert_eq!(
            solution["provenance"]["warm_start"]["kind"], guess,
            "{}",
            solution["provenance"]
        );
        objectives.push(solution["objective"].as_f64().unwrap());
    }
    assert!(
        (objectives[0] - objectives[1]).abs() < 1e-6 * objectives[0],
        "{objectives:?}"
    );
    let refused = loam(
        manifest,
        &[
            "check",
            "problems/hopper_granular.yaml",
            "--set",
            "initial_guess=ballistic",
        ],
    );
    // The former hopper planner's guess is not one of the one planner's.
    assert_exit(
        &refused,
        2,
        &["initial_guess", "ballistic", "zero", "rest", "footholds"],
    );
}

/// `task.swing_height` on rigid ground (the law's planner; the sand's is in `wrench_hop`):
/// the monopod's stride keeps its foot above the tent h · (1 − |2k/(N−1) − 1|) at every node
/// of both flights, and without it the same stride's foot is below that tent somewhere (the
/// rows bind: the test can fail).
#[test]
fn a_swing_height_keeps_the_swinging_foot_above_its_tent() {
    use loam::planner::planar::plan;
    use loam::problem::load_any;
    use loam::solver::SolveSettings;
    let height = 0.08;
    let lowest_margin = |overrides: &[String]| -> f64 {
        let problem = load_any(Path::new(&shipped("monopod_gait.yaml")), overrides).unwrap();
        let settings = SolveSettings {
            log_level: 0,
            options: loam::api::solver_options(&problem),
            ..SolveSettings::default()
        };
        let planned = plan(&problem, &settings, None).unwrap();
        assert!(planned.report.converged, "{overrides:?}");
        let robot = &planned.planner.robot;
        let n_q = robot.n_q();
        let mut lowest = f64::INFINITY;
        for (p, phase) in planned.trajectory.phases.iter().enumerate() {
            if !problem.schedule[p].contacts.is_empty() {
                continue;
            }
            let n = phase.states.len();
            for (k, x) in phase.states.iter().enumerate() {
                let tent = height * (1.0 - (2.0 * k as f64 / (n - 1) as f64 - 1.0).abs());
                for z in loam::terrain::rigid::clearance(robot, 0, &x[..n_q]) {
                    lowest = lowest.min(z - tent);
                }
            }
        }
        lowest
    };
    let with = lowest_margin(&[format!("task.swing_height={height}")]);
    assert!(with > -1e-7, "the foot dips {with} m below its tent");
    let without = lowest_margin(&[]);
    assert!(
        without < -1e-3,
        "without it the foot clears the tent anyway ({without})"
    );
}
