//! Plans replayed in the MDP simulator on a wrench-space terrain (`sim::mdp::plan`): a plan
//! made on rigid ground, and a gait, checked on the sand through `loam simulate --terrain
//! FILE` and `loam validate`; what the simulator cannot step is refused, exit 2.

use std::path::Path;

use crate::common::csv::{column, read_csv};
use crate::common::run::{assert_exit, loam, read_json, replay_on, shipped, solve_to, Output};
use crate::common::temp_dir::TempDir;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `loam solve problems/NAME.yaml` into `dir/NAME`, then `loam simulate` of it on the
/// shipped sand (`--terrain problems/monopod_sand_hop.yaml`): the run folder and the replay's
/// output (its exit code unchecked).
fn solved_and_replayed_on_sand(dir: &Path, name: &str) -> (std::path::PathBuf, Output) {
    let run = dir.join(name);
    solve_to(&manifest().join(format!("problems/{name}.yaml")), &run);
    let sand = shipped("monopod_sand_hop.yaml");
    let out = loam(
        dir,
        &["simulate", run.to_str().unwrap(), "--terrain", &sand],
    );
    (run, out)
}

#[test]
fn a_plan_made_on_rigid_ground_is_replayed_on_sand_and_validate_lists_it() {
    let dir = TempDir::new("mdp-replay");
    let run = dir.path().join("hop");
    let solution = solve_to(&manifest().join("problems/monopod_hop.yaml"), &run);
    let run_arg = run.to_str().unwrap();
    let sand = shipped("monopod_sand_hop.yaml");
    let out = loam(dir.path(), &["simulate", run_arg, "--terrain", &sand]);
    assert!(matches!(out.code(), 0 | 1), "{}", out.dump());
    let (csv, json) = replay_on(&run, "monopod_sand_hop");
    let record = read_json(&json);
    assert_eq!(record["plan_id"], solution["plan_id"]);
    assert_eq!(record["terrain"]["model"], "wrench_space");
    assert_eq!(record["integration"]["max_step_s"], 1e-3);
    assert!(record["integration"]["method"]
        .as_str()
        .unwrap()
        .starts_with("MDP step"));
    // The replay samples every node of the plan (steps cut each interval evenly), and starts
    // from the plan's first state.
    let (header, rows) = read_csv(&csv);
    let (plan_header, plan_rows) = read_csv(&run.join("trajectory.csv"));
    let t = column(&header, &rows, "t");
    let plan_t = column(&plan_header, &plan_rows, "t");
    let last = *plan_t.last().unwrap();
    if record["complete"] == true {
        for tk in &plan_t {
            assert!(
                t.iter().any(|tr| (tr - tk).abs() < 1e-12),
                "no sample at node time {tk}"
            );
        }
        assert!((t.last().unwrap() - last).abs() < 1e-12);
        let steps = record["integration"]["steps"].as_u64().unwrap() as usize;
        assert_eq!(steps + 1, t.len());
    }
    for name in ["x", "z", "pitch", "hip", "leg"] {
        let (a, b) = (
            column(&header, &rows, name)[0],
            column(&plan_header, &plan_rows, name)[0],
        );
        assert_eq!(a, b, "{name} at the start");
    }
    // `--backend mdp` names the same simulator: the same replay, byte for byte.
    let first = std::fs::read(&csv).unwrap();
    let out = loam(
        dir.path(),
        &[
            "simulate",
            run_arg,
            "--terrain",
            &sand,
            "--backend",
            "mdp",
            "-q",
        ],
    );
    assert!(matches!(out.code(), 0 | 1), "{}", out.dump());
    assert_eq!(first, std::fs::read(&csv).unwrap());

    // The verdict lists the MDP row beside the reduced-order ones, with simulate's number.
    let terrains = format!("rigid,poppy_seeds,{sand}");
    let out = loam(dir.path(), &["validate", run_arg, "--terrain", &terrains]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    let verdict = read_json(&run.join("validation/validation.json"));
    let mdp = verdict["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["simulator"] == "mdp" && r["outcome"] == "distance_m")
        .unwrap_or_else(|| panic!("no MDP row in {verdict}"));
    assert_eq!(mdp["own_model"], false);
    assert_eq!(mdp["completed"], 1);
    let replayed = read_json(&json)["achieved_distance_m"].as_f64().unwrap();
    assert_eq!(mdp["mean"].as_f64().unwrap(), replayed);
}

#[test]
fn a_gait_is_replayed_stride_after_stride_on_sand() {
    let dir = TempDir::new("mdp-gait");
    let (run, out) = solved_and_replayed_on_sand(dir.path(), "monopod_gait");
    assert!(matches!(out.code(), 0 | 1), "{}", out.dump());
    let record = read_json(&replay_on(&run, "monopod_sand_hop").1);
    let strides = record["strides"].as_array().unwrap();
    if record["complete"] == true {
        assert_eq!(strides.len(), 3, "{record}");
    }
    assert!(!strides.is_empty(), "{record}");
    assert_eq!(strides[0]["planned_length_m"], 0.3);
}

#[test]
fn what_the_mdp_simulator_cannot_step_is_refused_with_exit_2() {
    let dir = TempDir::new("mdp-refusals");
    let hop = dir.path().join("hop");
    solve_to(&manifest().join("problems/monopod_hop.yaml"), &hop);
    let hop_arg = hop.to_str().unwrap();
    let sand = shipped("monopod_sand_hop.yaml");
    let before: Vec<_> = std::fs::read_dir(&hop).unwrap().collect();
    // No wrench space to step on.
    let out = loam(dir.path(), &["simulate", hop_arg, "--backend", "mdp"]);
    assert_exit(&out, 2, &["--backend mdp", "--terrain FILE"]);
    // The reduced-order model has no law for a wrench space.
    let out = loam(
        dir.path(),
        &[
            "simulate",
            hop_arg,
            "--terrain",
            &sand,
            "--backend",
            "reduced",
        ],
    );
    assert_exit(&out, 2, &["--backend reduced", "wrench space"]);
    // A step that is not a positive time, and a step for the reduced-order model.
    for step in ["0", "-1e-3", "NaN"] {
        let flag = format!("--mdp-step={step}");
        let out = loam(
            dir.path(),
            &["simulate", hop_arg, "--terrain", &sand, &flag],
        );
        assert_exit(&out, 2, &["step"]);
    }
    let out = loam(dir.path(), &["simulate", hop_arg, "--mdp-step", "1e-3"]);
    assert_exit(&out, 2, &["--mdp-step"]);
    assert_eq!(std::fs::read_dir(&hop).unwrap().count(), before.len());
}

/// A plan with a drive and a rail (the hopper's robot file, planned on the added-mass bed)
/// replays on the RFT poppy-seed wrench space of its own foot: the drive's states step with
/// it, the rail holds x and pitch exactly, and the verdict is complete.
#[test]
fn a_plan_with_a_drive_and_a_rail_is_replayed_on_sand() {
    let dir = TempDir::new("mdp-drive");
    let jump = dir.path().join("jump");
    solve_to(&manifest().join("problems/hopper_granular.yaml"), &jump);
    let sand = shipped("hopper_rail.yaml");
    let out = loam(
        dir.path(),
        &["simulate", jump.to_str().unwrap(), "--terrain", &sand],
    );
    assert_exit(&out, 0, &[]);
    let (header, rows) = read_csv(&replay_on(&jump, "hopper_rail").0);
    let (x, pitch, command) = (
        column(&header, &rows, "x"),
        column(&header, &rows, "pitch"),
        column(&header, &rows, "motor_command"),
    );
    assert!(rows.len() > 100);
    assert!(x.iter().all(|&v| v == x[0]), "the rail let x move");
    assert!(
        pitch.iter().all(|&v| v == pitch[0]),
        "the rail let pitch move"
    );
    // The drive's command moves as the plan commands it.
    let moved = command
        .iter()
        .map(|c| (c - command[0]).abs())
        .fold(0.0, f64::max);
    assert!(moved > 1e-3, "the drive's command stayed at {}", command[0]);
}

#[test]
fn a_mass_dropped_on_sand_comes_to_rest_where_the_sand_carries_its_weight() {
    // The spring ground's drop (a 1 kg point mass, no inputs) replayed on the sand: nothing
    // but gravity and the sand's wrenches act, so where it stops the sand must carry m g, no
    // shallower than the depth where the data's pure-down capacity first reaches m g (the
    // capacity found here by bisection on the data, apart from the simulator).
    let dir = TempDir::new("mdp-drop");
    let (run, out) = solved_and_replayed_on_sand(dir.path(), "spring_drop");
    assert_eq!(out.code(), 0, "{}", out.dump());
    let (csv, json) = replay_on(&run, "monopod_sand_hop");
    let record = read_json(&json);
    assert_eq!(record["events"][0]["kind"], "touchdown", "{record}");
    let (header, rows) = read_csv(&csv);
    let z = column(&header, &rows, "z");
    let vz = column(&header, &rows, "d_z");
    let fz = column(&header, &rows, "foot_fz");
    let (z_end, vz_end, fz_end) = (*z.last().unwrap(), *vz.last().unwrap(), *fz.last().unwrap());
    let weight = 9.81;
    assert!(vz_end.abs() < 1e-9, "still moving: {vz_end}");
    assert!(
        (fz_end - weight).abs() < 1e-9,
        "the sand carries {fz_end} N"
    );
    let space = loam::terrain::wrench_space::WrenchSpace::load(
        &manifest().join("problems/data/wrench_space/rft_sand_monopod.yaml"),
    )
    .unwrap();
    let capacity = |d: f64| {
        space
            .vertices(&d, &0.0)
            .iter()
            .map(|w| w[1])
            .fold(0.0, f64::max)
    };
    let (mut deep, mut shallow) = (space.depth_range().0, 0.0);
    assert!(capacity(deep) > weight);
    for _ in 0..60 {
        let mid = 0.5 * (deep + shallow);
        if capacity(mid) >= weight {
            deep = mid;
        } else {
            shallow = mid;
        }
    }
    println!("stopped {z_end:.5} m deep; the sand first carries m g at {deep:.5} m");
    assert!(
        capacity(z_end) >= weight,
        "{} N at {z_end} m",
        capacity(z_end)
    );
    assert!(
        z_end <= deep + 1e-9,
        "stopped at {z_end} m, above the rest depth {deep} m"
    );
    // It went in at about 1.4 m/s, so it stops deeper than it would rest if lowered slowly,
    // but within the data.
    assert!(z_end >= space.depth_range().0, "{z_end}");
}
