//! The planar monopod hopping forward on a wrench-space terrain (docs/WRENCH_SPACE.md
//! section 4.4, second task; `planner::planar::wrench_space`), from the shipped problem file through
//! `loam solve` and `loam plot`: the plan converges, its wrenches lie in W(θ), and its inputs
//! replayed open loop in the MDP simulator reproduce it. Bad files exit 2 with their field.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::run::{loam, read_json, shipped};
use common::temp_dir::TempDir;

use loam::planner::planar::wrench_space::WrenchSpacePlanner;
use loam::problem::load_any;
use loam::problem::planar::PlanarProblem;
use loam::terrain::hull::HalfSpaces;
use loam::terrain::wrench_space::WrenchSpace;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sand() -> WrenchSpace {
    WrenchSpace::load(&manifest().join("problems/data/wrench_space/rft_sand_monopod.yaml")).unwrap()
}

fn shipped_problem() -> PlanarProblem {
    load_any(Path::new(&shipped("monopod_sand_hop.yaml")), &[]).unwrap()
}

/// A CSV's columns by name (a column of text, as a replay's `mode`, reads as NaN).
fn columns(path: &Path) -> std::collections::HashMap<String, Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let names: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let mut values = vec![Vec::new(); names.len()];
    for line in lines {
        for (i, cell) in line.split(',').enumerate() {
            values[i].push(cell.parse().unwrap_or(f64::NAN));
        }
    }
    names.into_iter().zip(values).collect()
}

#[test]
fn the_monopod_hops_forward_on_sand_and_its_plan_replays_in_the_mdp_simulator() {
    let dir = TempDir::new("wrench-hop");
    let out = dir.path().join("run");
    let solve = loam(
        manifest(),
        &[
            "solve",
            &shipped("monopod_sand_hop.yaml"),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    println!("{}", solve.stdout);
    assert_eq!(solve.code(), 0, "{}", solve.dump());
    let solution = read_json(&out.join("solution.json"));
    assert_eq!(solution["converged"], true);
    let distance = solution["problem"]["task"]["distance"].as_f64().unwrap();
    let planned = solution["key_figures"]["distance_m"].as_f64().unwrap();
    assert!((planned - distance).abs() < 1e-6, "planned {planned}");
    // The resolved problem records the data's hash, so the plan's identity covers the data.
    let bytes = std::fs::read(manifest().join("problems/data/wrench_space/rft_sand_monopod.yaml"));
    let hash = loam::problem::sha256_hex(&bytes.unwrap());
    assert_eq!(solution["problem"]["terrain"]["data_sha256"], hash.as_str());
    let trajectory = std::fs::read(out.join("trajectory.csv")).unwrap();
    let mut other_data = solution["problem"].clone();
    other_data["terrain"]["data_sha256"] = "0".repeat(64).into();
    assert_eq!(
        solution["plan_id"],
        loam::output::identity::plan_id(&solution["problem"], &trajectory).as_str()
    );
    assert_ne!(
        solution["plan_id"],
        loam::output::identity::plan_id(&other_data, &trajectory).as_str()
    );

    // Every planned ground wrench lies in W(θ) (the H-form of the hull at that node's θ).
    let space = sand();
    let plan = columns(&out.join("trajectory.csv"));
    let mut worst: f64 = 0.0;
    let mut in_sand = 0;
    for i in 0..plan["t"].len() {
        let (depth, tilt) = (plan["foot_depth"][i], plan["foot_tilt"][i]);
        if plan["phase"][i] != 0.0 || depth >= 0.0 {
            continue;
        }
        in_sand += 1;
        let vertices = space.vertices(&depth, &tilt);
        let hull = HalfSpaces::of_wrench_space(&vertices).unwrap();
        let w = [plan["foot_fx"][i], plan["foot_fz"][i], plan["foot_tau"][i]];
        let scale = vertices
            .iter()
            .flatten()
            .fold(0.0_f64, |m, c| m.max(c.abs()));
        worst = worst.max(-hull.slack(&w) / scale);
    }
    println!("{in_sand} nodes in the sand; largest excess over W: {worst:.1e} (relative)");
    assert!(in_sand >= 20);
    assert!(worst <= 1e-7);

    // The MDP replay of the inputs alone (solution.json `replay`, replay.csv).
    let replay = &solution["replay"];
    let ground = replay["ground_difference"].as_f64().unwrap();
    let travelled = replay["distance_m"].as_f64().unwrap();
    println!("replay: ground nodes within {ground:.1e}, travelled {travelled} m");
    // The ground phase is the simulator's own step: the replay leaves it only by what IPOPT's
    // tolerance leaves in the dissipation rows, grown by the explicit step (measured 6e-6).
    assert!(ground < 1e-4, "ground nodes {ground} from the plan");
    // The flight, trapezoidal in the plan, is replayed in 20 simulator steps per interval:
    // the distance travelled within 1 % (measured 0.05 %).
    assert!(
        (travelled - distance).abs() < 0.01 * distance,
        "travelled {travelled} m, planned {distance} m"
    );
    // The replay's foot ends near the surface, where the plan touches down.
    let end_depth = replay["end_depths_m"][0].as_f64().unwrap();
    assert!(end_depth.abs() < 0.01, "foot at {end_depth} m");
    let replayed = columns(&out.join("replay.csv"));
    let end_x = *replayed["x"].last().unwrap();
    assert!(
        (end_x - travelled).abs() < 1e-9,
        "replay.csv ends at x = {end_x}"
    );

    // `loam plot` draws it as a planar run, the replay dashed.
    let plot = loam(manifest(), &["plot", out.to_str().unwrap()]);
    assert_eq!(plot.code(), 0, "{}", plot.dump());
    for figure in ["planar_run.png", "filmstrip.png"] {
        assert!(out.join("plots").join(figure).is_file(), "{figure}");
    }
    // The ground phase's nodes of a `loam simulate` replay (the CSV `stem` in the run) against
    // the plan's: the largest difference of any coordinate.
    let ground_nodes = solution["problem"]["schedule"][0]["nodes"]
        .as_u64()
        .unwrap() as usize;
    let departure = |stem: &str| {
        let replay = columns(&out.join(stem));
        let mut worst: f64 = 0.0;
        for k in 0..ground_nodes {
            let t = plan["t"][k];
            let i = replay["t"]
                .iter()
                .position(|&tr| (tr - t).abs() < 1e-9)
                .unwrap_or_else(|| panic!("no replay sample at node {k}, t = {t}"));
            for name in ["x", "z", "pitch", "hip", "leg"] {
                worst = worst.max((replay[name][i] - plan[name][k]).abs());
            }
        }
        worst
    };
    // `loam simulate` replays it on its own ground (the data file the run recorded), the
    // servos on and the ground phase at the plan's own step: the planner's MDP rows, step for
    // step, so the replay meets the plan at every node of the push-off to the NLP's tolerance.
    let simulate = loam(manifest(), &["simulate", out.to_str().unwrap()]);
    assert_eq!(simulate.code(), 0, "{}", simulate.dump());
    let worst = departure("replay-servos.csv");
    assert!(
        worst < 1e-4,
        "own ground: the push-off departs by {worst:e}"
    );
    // Named, the plan replays through the same MDP replay (`sim::mdp::plan`: the servos on,
    // the controller sampled at each step's start); at one step per interval everywhere
    // (`--mdp-step 1`) the ground phase meets the plan as well.
    let simulate = loam(
        manifest(),
        &[
            "simulate",
            out.to_str().unwrap(),
            "--terrain",
            &shipped("monopod_sand_hop.yaml"),
            "--mdp-step",
            "1",
        ],
    );
    assert_eq!(simulate.code(), 0, "{}", simulate.dump());
    let stem = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with("replay-on-monopod_sand_hop-") && n.ends_with(".csv"))
        .expect("the replay's csv");
    let worst = departure(&stem);
    assert!(
        worst < 1e-4,
        "ground phase departs from the plan by {worst:e}"
    );
    let record = read_json(&out.join(stem.replace(".csv", ".json")));
    assert_eq!(record["terrain"]["model"], "wrench_space");
    assert_eq!(record["terrain"]["data_sha256"], hash.as_str());
    assert_eq!(record["integration"]["max_step_s"], 1.0);

    // The verdict of `loam validate` takes the sand plan through every simulator: its own MDP
    // replay, the reduced-order model on rigid ground, and the grains (a 2 cm bed of 4 mm
    // grains, which the plan's 6.5 cm deep push goes through: the DEM row then says why it
    // has no number, and the other rows stand).
    std::fs::write(
        dir.path().join("coarse.yaml"),
        "container: { shape: box, half_x: 0.17, half_y: 0.06 }\n\
         grains: { radius: 0.004, density: 1000, friction: 0.5, fill_height: 0.02, seed: 3 }\n\
         settle: { kinetic_energy: 1.0e-8, max_time: 1.0 }\n",
    )
    .unwrap();
    let prepare = loam(
        dir.path(),
        &["dem", "prepare", "coarse.yaml", "-o", "coarse.bed"],
    );
    assert_eq!(prepare.code(), 0, "{}", prepare.dump());
    let validate = loam(
        dir.path(),
        &[
            "validate",
            out.to_str().unwrap(),
            "--terrain",
            "rigid",
            "--bed",
            "coarse.bed",
            "--realisations",
            "1",
            "-q",
        ],
    );
    assert!(matches!(validate.code(), 0 | 1), "{}", validate.dump());
    let verdict = read_json(&out.join("validation/validation.json"));
    let rows = verdict["rows"].as_array().unwrap();
    let find = |simulator: &str| {
        rows.iter()
            .find(|r| r["simulator"] == simulator && r["outcome"] == "distance_m")
            .unwrap_or_else(|| panic!("no {simulator} row in {verdict}"))
    };
    assert_eq!(find("mdp")["own_model"], true);
    let rigid = find("reduced");
    assert_eq!(rigid["terrain"], "rigid");
    assert!(rigid["mean"].is_number(), "{rigid}");
    let dem = find("dem-cpu");
    assert!(
        dem["mean"].is_number() || dem["note"].as_str().is_some_and(|n| !n.is_empty()),
        "{dem}"
    );
}

#[test]
fn a_schedule_of_two_ground_phases_in_a_row_is_refused_by_the_planner_too() {
    let mut hop = WrenchSpacePlanner::from_problem(&shipped_problem(), Arc::new(sand()));
    hop.validate().unwrap();
    hop.phases[1].contacts = vec![0];
    let error = hop.validate().unwrap_err().to_string();
    assert!(error.contains("phases 0 and 1 are both ground"), "{error}");
    // A flight first: only a gait's stride starts in flight.
    hop.phases.swap(0, 1);
    hop.phases[0].contacts.clear();
    let error = hop.validate().unwrap_err().to_string();
    assert!(error.contains("starts on the ground"), "{error}");
    hop.phases.truncate(1);
    let error = hop.validate().unwrap_err().to_string();
    assert!(error.contains("touches the sand"), "{error}");
}

#[test]
fn bad_wrench_space_problems_exit_2_with_their_field_and_write_nothing() {
    let dir = TempDir::new("wrench-hop-bad");
    let file = shipped("monopod_sand_hop.yaml");
    let cases: [(&[&str], &str, &str); 8] = [
        (
            &["--set", "terrain.data_sha256=0123abcd"],
            "terrain.data_sha256",
            "not the stated 0123abcd: the data changed",
        ),
        (
            &["--set", "terrain.data=data/wrench_space/none.yaml"],
            "terrain.data",
            "none.yaml",
        ),
        (
            &["--set", "schedule.1.contacts=[foot]"],
            "schedule[1].contacts",
            "a ground phase after a ground phase",
        ),
        (
            &["--set", "task.objective=cost_of_transport"],
            "task.objective",
            "accepted `effort`",
        ),
        (
            &["--set", "terrain.grain_inertia=-1"],
            "terrain.grain_inertia",
            ">= 0",
        ),
        (
            &["--set", "transcription.scheme=hermite_simpson"],
            "transcription.scheme",
            "accepted `trapezoidal`",
        ),
        (
            &["--set", "task.swing_height=-0.01"],
            "task.swing_height",
            "must be a finite height > 0 m",
        ),
        (
            &["--set", "task.start.at_rest=false"],
            "task.start.at_rest",
            "must be true but for a gait",
        ),
    ];
    for (overrides, field, words) in cases {
        let out = dir.path().join("out");
        let mut args = vec!["solve", file.as_str(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(overrides);
        let run = loam(manifest(), &args);
        assert_eq!(run.code(), 2, "{overrides:?}: {}", run.dump());
        assert!(run.stderr.contains(field), "{field}: {}", run.dump());
        assert!(run.stderr.contains(words), "{words}: {}", run.dump());
        assert!(!out.exists(), "{overrides:?} wrote {}", out.display());
    }
}

/// A gait's stride on sand (`problems/monopod_gait_sand.yaml`, periodic, starting in flight at
/// its apex): it converges at the file's settings, closes its stride to 1e-8, keeps the swing
/// foot above its tent, and its open-loop MDP replay (the plan's own ground step) runs the
/// first of three strides within 1 % of the plan's length and apex. The later strides are
/// recorded, not asserted: an open-loop gait departs stride by stride (docs/WRENCH_SPACE.md,
/// "Gaits on sand").
#[test]
fn a_periodic_stride_on_sand_closes_and_its_first_replayed_stride_holds() {
    let dir = TempDir::new("wrench-gait");
    let out = dir.path().join("run");
    let solve = loam(
        manifest(),
        &[
            "solve",
            &shipped("monopod_gait_sand.yaml"),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());
    let solution = read_json(&out.join("solution.json"));
    assert_eq!(solution["converged"], true);
    let key = &solution["key_figures"];
    let residual = key["periodicity_residual"].as_f64().unwrap();
    assert!(residual < 1e-8, "periodicity residual {residual}");
    assert!((key["distance_m"].as_f64().unwrap() - 0.2).abs() < 1e-8);
    assert!((key["duration_s"].as_f64().unwrap() - 0.5).abs() < 1e-8);
    assert!(key["cost_of_transport"].as_f64().unwrap() > 0.0);
    // The swing foot mid-flight: at least the tent's height (1 cm at the middle node).
    let plan = columns(&out.join("trajectory.csv"));
    let (phase, node, depth) = (&plan["phase"], &plan["node"], &plan["foot_depth"]);
    for i in 0..phase.len() {
        if phase[i] != 1.0 && node[i] == 10.0 {
            assert!(depth[i] >= 0.01 - 1e-6, "foot at {} m mid-flight", depth[i]);
        }
    }
    let replay = read_json(&out.join("replay.json"));
    let strides = replay["strides"].as_array().unwrap();
    assert_eq!(strides.len(), 3, "{replay}");
    let first = &strides[0];
    for field in ["length_error_rel", "apex_error_rel"] {
        let e = first[field].as_f64().unwrap();
        assert!(e < 0.01, "stride 1 {field} {e}");
    }
    // The replay of the first stride's ground phase is the plan's own step.
    let ground = replay["ground_difference"].as_f64().unwrap();
    assert!(ground < 5e-3, "ground nodes within {ground} m");
}

/// `loam sweep` takes a wrench-space problem: every point is solved (here cut at one IPOPT
/// iteration a stage, so each ends not converged, exit 1) and its row holds the solve's own
/// MDP replay (the replay columns filled from `replay.json`), with no second replay.
#[test]
fn a_sweep_of_a_wrench_space_problem_records_each_solves_mdp_replay() {
    let dir = TempDir::new("wrench-sweep");
    let out = dir.path().join("sweep");
    let sweep = loam(
        manifest(),
        &[
            "sweep",
            &shipped("monopod_sand_hop.yaml"),
            "--vary",
            "task.distance=0.2,0.3",
            "--set",
            "solver.max_iter=1",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(sweep.code(), 1, "{}", sweep.dump());
    let table = columns(&out.join("sweep.csv"));
    assert_eq!(table["task.distance"], vec![0.2, 0.3]);
    for (i, replayed) in table["replay_distance_m"].iter().enumerate() {
        assert!(replayed.is_finite(), "row {i}: no replay distance");
    }
    for point in ["distance=0.2", "distance=0.3"] {
        let run = out.join(point);
        assert!(
            run.join("replay.json").is_file(),
            "{point}: the solve's replay"
        );
        assert!(
            !run.join("replay-servos.json").exists(),
            "{point}: replayed twice"
        );
    }
}

/// A plan of the same robot made on rigid ground starts a plan on sand (`--warm-start`): its
/// states, inputs and accelerations are read, resampled to the sand's nodes, with the vertex
/// weights and y at 0, and marked as made on another ground (so the relaxation runs first).
/// Another robot's run is refused with the wrench-space reading's reason.
#[test]
fn a_gait_made_on_rigid_ground_reads_as_a_start_on_sand() {
    let dir = TempDir::new("wrench-cross-start");
    let rigid = dir.path().join("rigid");
    let solve = loam(
        manifest(),
        &[
            "solve",
            &shipped("monopod_gait.yaml"),
            "--set",
            "task.distance=0.2",
            "--set",
            "task.speed=0.4",
            "--set",
            "schedule.1.duration=[0.05,0.45]",
            "--out",
            rigid.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(solve.code(), 0, "{}", solve.dump());
    let problem = load_any(Path::new(&shipped("monopod_gait_sand.yaml")), &[]).unwrap();
    let hop = WrenchSpacePlanner::from_problem(&problem, Arc::new(sand()));
    let (start, _, other_ground) = loam::api::wrench_start(&rigid, &hop).unwrap();
    assert!(other_ground);
    let l = hop.layout();
    let plan = columns(&rigid.join("trajectory.csv"));
    for (p, phase) in start.phases.iter().enumerate() {
        assert_eq!(phase.states.len(), hop.phases[p].nodes);
        for u in &phase.controls {
            assert_eq!(u.len(), l.n_u());
            assert!(
                u[l.lambda(0)..].iter().all(|v| *v == 0.0),
                "vertex weights and y at 0"
            );
        }
    }
    // The ends of the stride are the rigid plan's first and last nodes.
    let last = plan["x"].len() - 1;
    let (first_x, last_x) = (
        &start.phases[0].states[0],
        start.phases[2].states.last().unwrap(),
    );
    for (i, name) in ["x", "z", "pitch", "hip", "leg"].iter().enumerate() {
        assert!(
            (first_x[i] - plan[*name][0]).abs() < 1e-9,
            "{name} at the start"
        );
        assert!(
            (last_x[i] - plan[*name][last]).abs() < 1e-9,
            "{name} at the end"
        );
    }
    // The hopper's rail run is another robot: refused, saying its columns differ.
    let error = loam::api::wrench_start(&manifest().join("results/hopper_rail"), &hop)
        .unwrap_err()
        .to_string();
    assert!(error.contains("columns"), "{error}");
}
