//! Planar robots end to end through the real binary: every shipped planar problem is a
//! fixture (found by a glob) that must converge and replay, in the hybrid simulator, within
//! 0.5 % of its key figure (the default mesh refinement's tolerance); the hopper's plans are unchanged by the toolkit; bad schedules and
//! robots are refused with file, line, field and exit code 2.

use crate::common;

use std::path::Path;

use common::run::{loam, read_json, shipped_problems, solve_to};
use common::temp_dir::TempDir;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_shipped_problem_converges_and_replays_within_half_a_percent() {
    let files = shipped_problems();
    assert!(
        files.len() >= 3,
        "expected the hopper, monopod, quadruped and foot problems: {files:?}"
    );
    for file in files {
        let dir = TempDir::new("planar");
        let out = dir.path().join("run");
        let solution = solve_to(&file, &out);
        assert_eq!(solution["converged"], true, "{}", file.display());
        let sim = loam(manifest(), &["simulate", out.to_str().unwrap(), "-q"]);
        assert_eq!(sim.status, Some(0), "{}: {}", file.display(), sim.stderr);
        let replay = read_json(&out.join("replay.json"));
        let task = &solution["problem"]["task"];
        if task["periodic"] == true {
            // A gait: every stride of the replay within the file's mesh tolerance of the
            // plan's length and apex (tests/suite/gaits.rs checks the rest).
            let tolerance = solution["problem"]["mesh"]["tolerance"].as_f64().unwrap();
            let strides = replay["strides"].as_array().expect("a gait's strides");
            assert!(!strides.is_empty(), "{}", file.display());
            for stride in strides {
                for key in ["length_error_rel", "apex_error_rel"] {
                    let e = stride[key].as_f64().unwrap();
                    assert!(e <= tolerance, "{}: {stride}", file.display());
                }
            }
            continue;
        }
        if task["distance"].is_number() {
            let planned = replay["planned_distance_m"].as_f64().unwrap();
            let achieved = replay["achieved_distance_m"].as_f64().unwrap();
            assert!((planned - task["distance"].as_f64().unwrap()).abs() < 1e-6);
            assert!(
                (achieved - planned).abs() <= 0.005 * planned.abs(),
                "{}: replayed distance {achieved} against the plan's {planned}",
                file.display()
            );
        }
        let planned = replay["planned_com_peak_m"].as_f64().unwrap();
        let achieved = replay["achieved_com_peak_m"].as_f64().unwrap();
        assert!(
            (achieved - planned).abs() <= 0.005 * planned.abs().max(0.01),
            "{}: replayed centre-of-mass peak rise {achieved} against the plan's {planned}",
            file.display()
        );
    }
}

fn refused(yaml: &str, expect: &[&str]) {
    let dir = TempDir::new("bad");
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, yaml).unwrap();
    let out = loam(manifest(), &["check", file.to_str().unwrap()]);
    let stderr = &out.stderr;
    assert_eq!(out.status, Some(2), "{stderr}");
    assert!(stderr.contains("bad.yaml"), "{stderr}");
    for e in expect {
        assert!(stderr.contains(e), "`{e}` not in: {stderr}");
    }
}

#[test]
fn an_unknown_contact_in_the_schedule_is_refused_with_its_line() {
    refused(
        "robot:\n  model: monopod\nschedule:\n  - {contacts: [foot]}\n  - {contacts: [toe]}\n",
        &[
            "bad.yaml:5:",
            "schedule[1].contacts[0]",
            "no contact `toe`",
            "`foot`",
        ],
    );
}

#[test]
fn the_former_hopper_planners_guesses_are_unknown_values() {
    for guess in ["ballistic", "best"] {
        refused(
            &format!(
                "robot:\n  model: monopod\nschedule:\n  - {{contacts: [foot]}}\n  - {{contacts: []}}\ninitial_guess: {guess}\n"
            ),
            &[
                "initial_guess",
                &format!("unknown value `{guess}`"),
                "zero, auto, rest, footholds",
            ],
        );
    }
}

#[test]
fn a_phase_that_neither_lifts_nor_lands_a_foot_is_refused() {
    refused(
        "robot:\n  model: monopod\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n  - {contacts: []}\n",
        &[
            "bad.yaml:6:",
            "schedule[2].contacts",
            "the same feet as schedule[1]",
            "must lift a foot that is on the ground or land one that is not",
        ],
    );
}

#[test]
fn a_link_of_zero_mass_is_refused() {
    refused(
        "robot:\n  model: quadruped\n  shank_mass: 0\n",
        &["bad.yaml:3:", "robot.shank_mass", "> 0 kg"],
    );
}

#[test]
fn a_robot_at_rest_cannot_start_in_flight() {
    refused(
        "robot:\n  model: monopod\nschedule:\n  - {contacts: []}\n  - {contacts: [foot]}\n",
        &["schedule[0].contacts", "cannot be in flight"],
    );
}

#[test]
fn an_unknown_robot_model_lists_the_accepted_ones() {
    refused(
        "robot:\n  model: biped\n",
        &["robot", "monopod", "quadruped"],
    );
}

#[test]
fn input_limits_out_of_order_are_refused_on_the_robot() {
    refused(
        "robot:\n  model: monopod\n  hip_torque_limit: [30, -30]\n",
        &["robot", "hip_torque", "lower < upper", "got [30, -30]"],
    );
}

/// A shipped planar problem on the added-mass terrain, and its terrain section.
fn bed_problem(
    file: &Path,
) -> (
    loam::problem::planar::PlanarProblem,
    loam::problem::planar::AddedMassGroundConfig,
) {
    use loam::problem::{load_any, planar::PlanarTerrainConfig};
    let problem = load_any(file, &[]).unwrap();
    let PlanarTerrainConfig::AddedMass(ground) = problem.terrain.clone() else {
        panic!("{}: an added-mass problem", file.display());
    };
    (problem, ground)
}

/// On the added-mass bed the planner's start is the bed's static equilibrium, found by the
/// NLP; the terrain's own bisection on F_hyd(d) = m g must give the same depth. The foot
/// leaves the bed having stopped sinking and never drops below the floor it left.
#[test]
fn on_poppy_seeds_the_monopod_starts_where_the_bed_carries_its_weight() {
    let file = manifest().join("problems/monopod_granular_hop.yaml");
    let (problem, ground) = bed_problem(&file);
    let robot = problem.robot.build(problem.gravity);
    let weight = robot.body.total_mass() * problem.gravity;
    let rest_depth = ground.bed().equilibrium_depth(weight);

    let dir = TempDir::new("bed");
    let out = dir.path().join("run");
    assert_eq!(solve_to(&file, &out)["converged"], true);
    let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let q = |row: &[f64]| -> Vec<f64> {
        robot
            .coordinates
            .iter()
            .map(|c| row[column(&c.name)])
            .collect()
    };
    let velocity = |row: &[f64]| -> Vec<f64> {
        robot
            .coordinates
            .iter()
            .map(|c| row[column(&format!("d_{}", c.name))])
            .collect()
    };
    let foot_z = |row: &[f64]| robot.contact_point(&q(row), 0)[1];

    let start = &rows[0];
    assert!(
        (-foot_z(start) - rest_depth).abs() < 1e-6,
        "start depth {} m, the bed carries the weight at {rest_depth} m",
        -foot_z(start)
    );
    let fz = start[column("foot_fz")];
    assert!(
        (fz - weight).abs() < 1e-6 * weight,
        "F_z {fz} N, weight {weight} N"
    );

    let phase = column("phase");
    let last_stance = rows.iter().rposition(|r| r[phase] == 0.0).unwrap();
    let lift = &rows[last_stance];
    let foot = &robot.contacts[0];
    let vz = robot
        .body
        .point_velocity(&q(lift), &velocity(lift), foot.body, foot.point)[1];
    assert!(vz.abs() < 1e-6, "the foot leaves the bed at ż = {vz} m/s");
    let floor = foot_z(lift);
    assert!(
        floor < -rest_depth,
        "the push sinks the foot deeper than at rest"
    );
    for row in &rows[last_stance + 1..] {
        assert!(foot_z(row) >= floor - 1e-7, "below the crater's floor");
    }
}

#[test]
fn a_foot_cannot_land_in_an_added_mass_bed() {
    refused(
        "robot:\n  model: monopod\nterrain: {model: added_mass}\nschedule:\n  - {contacts: [foot]}\n  - {contacts: []}\n  - {contacts: [foot]}\n",
        &[
            "bad.yaml:7:",
            "schedule[2].contacts[0]",
            "lands in the bed",
            "model: rigid",
        ],
    );
}

/// `loam sweep` of a planar problem: every point planned and replayed, one row each in
/// sweep.csv with a column per varied field; the hopper's warm chains are refused up front.
#[test]
fn a_planar_sweep_plans_and_replays_every_point() {
    let dir = TempDir::new("sweep");
    let out = dir.path().join("sweep");
    let file = manifest().join("problems/planar_foot_granular_lift.yaml");
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            file.to_str().unwrap(),
            "--vary",
            "task.distance=0.05,0.1",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ];
        args.extend_from_slice(extra);
        loam(manifest(), &args)
    };
    let run = sweep(&[]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["task.distance", "run", "converged"]);
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    for (row, distance) in rows.iter().zip([0.05, 0.1]) {
        assert_eq!(row[0].parse::<f64>().unwrap(), distance);
        assert_eq!(row[column("converged")], "true");
        let planned: f64 = row[column("distance_m")].parse().unwrap();
        assert!((planned - distance).abs() < 1e-6, "{row:?}");
        let error: f64 = row[column("replay_distance_error_rel")].parse().unwrap();
        assert!(error < 0.01, "{row:?}");
        let folder = out.join(row[column("run")]);
        assert!(folder.join("solution.json").is_file() && folder.join("replay.json").is_file());
    }
    let plot = loam(
        manifest(),
        &["plot", out.to_str().unwrap(), "--png-only", "-q"],
    );
    assert_eq!(plot.status, Some(0), "{}", plot.stderr);
    assert!(out.join("plots/sweep_planar.png").is_file());
}

/// A planar sweep may vary a whole section (`--vary 'terrain=[{model: rigid}, {...}]'`, one
/// point per ground): the hopper file's jump at two heights on both grounds, each plan on its
/// ground's optimum path, and an apex task's columns (the rod's apex, planned and replayed,
/// within 0.5 %); the section's value is one quoted CSV field, and the figure draws.
#[test]
fn a_planar_sweep_varies_whole_terrain_sections_and_reports_the_apex() {
    let dir = TempDir::new("sweep_sections");
    let out = dir.path().join("sweep");
    let file = manifest().join("problems/hopper_granular.yaml");
    let run = loam(
        manifest(),
        &[
            "sweep",
            file.to_str().unwrap(),
            "--vary",
            "task.apex_rise=0.05,0.06",
            "--vary",
            "terrain=[{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}, {model: rigid}]",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
    );
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<String> = loam::plot::table::fields_of(lines.next().unwrap());
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<Vec<String>> = lines.map(loam::plot::table::fields_of).collect();
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert_eq!(row[column("converged")], "true", "{row:?}");
        let target: f64 = row[column("task.apex_rise")].parse().unwrap();
        let planned: f64 = row[column("planned_apex_rise_m")].parse().unwrap();
        let error: f64 = row[column("replay_apex_rise_error_rel")].parse().unwrap();
        assert!((planned - target).abs() < 1e-6, "{row:?}");
        assert!(error < 0.005, "{row:?}");
        let folder = out.join(&row[column("run")]);
        let solution: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("solution.json")).unwrap())
                .unwrap();
        let model = &solution["problem"]["terrain"]["model"];
        assert_eq!(
            model,
            if row[column("terrain")] == "{model: rigid}" {
                "rigid"
            } else {
                "added_mass"
            },
            "{row:?}"
        );
    }
    // The 60 mm poppy-seed point is the file's own problem: its optimum.
    let own = rows
        .iter()
        .find(|r| r[0] == "0.06" && r[column("terrain")].contains("added_mass"))
        .unwrap();
    let objective: f64 = own[column("objective")].parse().unwrap();
    assert!((objective - 0.047632).abs() < 1e-6, "{own:?}");
    // Every plan replayed on both grounds of the sweep (the paper's Fig. 5): its own replay's
    // apex as sweep.csv has it; the other ground's as `loam simulate RUN --terrain` gives it
    // with the ground named apart (the preset `rigid`; the problem file, whose bed is the
    // sweep's); the bed's plans overshoot on rigid ground and the rigid plans barely leave
    // the bed, as the paper found.
    let replays = std::fs::read_to_string(out.join("replays.csv")).unwrap();
    let mut lines = replays.lines();
    let head: Vec<String> = loam::plot::table::fields_of(lines.next().unwrap());
    let at = |name: &str| head.iter().position(|h| h == name).unwrap();
    let crossed: Vec<Vec<String>> = lines.map(loam::plot::table::fields_of).collect();
    assert_eq!(crossed.len(), 8, "{replays}");
    for row in &crossed {
        let achieved: f64 = row[at("achieved_apex_m")].parse().unwrap();
        let target: f64 = row[at("apex_target_m")].parse().unwrap();
        let (plan, ground) = (&row[at("plan_terrain")], &row[at("replay_terrain")]);
        let point = rows
            .iter()
            .find(|r| r[column("run")] == row[at("run_dir")])
            .unwrap();
        if plan == ground {
            let own: f64 = point[column("replay_apex_rise_m")].parse().unwrap();
            // replays.csv prints 7 significant digits, as the hopper's sweep.csv does.
            assert!((achieved - own).abs() <= 1e-6 * own.abs(), "{row:?}");
        } else {
            let (terrain, stem) = if ground == "rigid" {
                ("rigid".to_string(), "replay-on-rigid".to_string())
            } else {
                (
                    file.to_str().unwrap().to_string(),
                    "replay-on-hopper_granular-".to_string(),
                )
            };
            let run_dir = out.join(&row[at("run_dir")]);
            let sim = loam(
                manifest(),
                &[
                    "simulate",
                    run_dir.to_str().unwrap(),
                    "--terrain",
                    &terrain,
                    "-q",
                ],
            );
            assert_eq!(sim.status, Some(0), "{}", sim.stderr);
            let written = std::fs::read_dir(&run_dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    let name = p.file_name().unwrap().to_str().unwrap();
                    name.starts_with(&stem) && name.ends_with(".json")
                })
                .unwrap();
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(written).unwrap()).unwrap();
            let apart = json["achieved_apex_rise_m"].as_f64().unwrap();
            assert!(
                (achieved - apart).abs() <= 1e-6 * apart.abs() + 1e-12,
                "{row:?}: {apart}"
            );
            if ground == "rigid" {
                assert!(achieved > 1.3 * target, "{row:?}");
            } else {
                assert!(achieved < 0.5 * target, "{row:?}");
            }
        }
    }
    let plot = loam(manifest(), &["plot", out.to_str().unwrap(), "-q"]);
    assert_eq!(plot.status, Some(0), "{}", plot.stderr);
    assert!(out.join("plots/sweep_apex.png").is_file());
    let plot = loam(
        manifest(),
        &["plot", out.to_str().unwrap(), "--png-only", "-q"],
    );
    assert_eq!(plot.status, Some(0), "{}", plot.stderr);
}

/// The replay's stick law on the bed, against statics: the planar foot held at the depth
/// where F_hyd carries its weight stays there and the bed carries exactly m g; pulled up with
/// twice its weight it leaves the bed at once; pushed down with its weight again it sinks,
/// and comes to rest stuck where F_hyd carries at least the load.
#[test]
fn the_replays_stick_law_on_the_bed_holds_lifts_and_sinks_as_statics_says() {
    use loam::sim::planar::{replay, PlanTable, ReplaySettings};
    let (problem, ground) =
        bed_problem(&manifest().join("problems/planar_foot_granular_lift.yaml"));
    let bed = ground.bed();
    let robot = problem.robot.build(problem.gravity);
    let weight = robot.body.total_mass() * problem.gravity;
    let depth = bed.equilibrium_depth(weight);
    let mut x = robot.standing.clone();
    x[1] -= depth;
    x.extend(vec![0.0; robot.n_q()]);
    let fz_input = robot.input("force_z").expect("the foot's vertical force");
    // A plan that holds the rest state with a constant vertical force `push` [N] (+ = up).
    let run = |push: f64| {
        let mut u = vec![0.0; robot.inputs.len()];
        u[fz_input] = push;
        let plan = PlanTable {
            t: vec![0.0, 0.3],
            x: vec![x.clone(), x.clone()],
            u: vec![u.clone(), u],
            phase: vec![0, 0],
        };
        replay(
            &problem,
            &plan,
            &ReplaySettings {
                sample_every: 1e-3,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let fz_column = |r: &loam::sim::planar::PlanarReplay| {
        r.columns.iter().position(|c| c == "foot_fz").unwrap()
    };
    let foot_z = |row: &[f64]| robot.contact_point(&row[1..1 + robot.n_q()], 0)[1];

    let rest = run(0.0);
    let last = rest.rows.last().unwrap();
    assert!(rest.summary.events.iter().all(|e| e.kind != "lift-off"));
    assert!(
        (foot_z(last) + depth).abs() < 1e-6,
        "moved to {}",
        foot_z(last)
    );
    let fz = last[fz_column(&rest)];
    assert!(
        (fz - weight).abs() < 1e-6 * weight,
        "F_z {fz} N, weight {weight} N"
    );

    let pulled = run(2.0 * weight);
    let first = &pulled.summary.events[0];
    assert_eq!(first.kind, "lift-off", "{:?}", pulled.summary.events);
    assert!(first.t < 1e-3, "left at {} s", first.t);

    // Pushed: the servo holds the plan's height with K_p (8 Hz on the foot's mass), so the
    // foot sinks until the bed carries weight + push + K_p Δd; it comes to rest stuck there
    // or a little deeper (it overshoots while sinking, and a stuck foot takes any load up to
    // F_hyd).
    let pushed = run(-weight);
    let last = pushed.rows.last().unwrap();
    let end_depth = -foot_z(last);
    assert!(
        end_depth > depth + 1e-3,
        "sank to {end_depth} m from {depth} m"
    );
    assert!(
        pushed.summary.events.iter().any(|e| e.kind == "sinks"),
        "{:?}",
        pushed.summary.events
    );
    let fz = last[fz_column(&pushed)];
    assert!(fz > weight && fz <= bed.static_resistance(end_depth) * (1.0 + 1e-9));
    let speed = last[1 + robot.n_q() + 1].abs();
    assert!(speed < 1e-3, "still moving at {speed} m/s");
}

/// The quadruped standing on rigid ground, all four feet held, with joint torques that hold
/// its weight (a least-squares statics B u + Σ Jᵀ w = h(q, 0) solved here, apart from the
/// simulator): the replay does not move it, and at every sample the ground's vertical forces
/// add up to m g and its horizontal ones to 0.
#[test]
fn the_quadruped_at_rest_on_rigid_ground_carries_its_weight_and_stays() {
    use loam::problem::load_any;
    use loam::sim::planar::{replay, PlanTable, ReplaySettings};
    use loam::terrain::rigid;
    use nalgebra::{DMatrix, DVector};

    let file = manifest().join("problems/quadruped_stand.yaml");
    let problem = load_any(&file, &[]).unwrap();
    let robot = problem.robot.build(problem.gravity);
    let n = robot.n_q();
    let q = robot.standing.clone();
    let v = vec![0.0; n];
    // Columns: the inputs (B), then every held direction of every foot (Jᵀ).
    let m = robot.inputs.len();
    let feet: Vec<usize> = (0..robot.contacts.len()).collect();
    let rows: Vec<Vec<f64>> = feet
        .iter()
        .flat_map(|&c| rigid::jacobian(&robot, c, &q))
        .collect();
    let mut a = DMatrix::zeros(n, m + rows.len());
    for (i, input) in robot.inputs.iter().enumerate() {
        a[(input.coordinate, i)] = 1.0;
    }
    for (r, row) in rows.iter().enumerate() {
        for j in 0..n {
            a[(j, m + r)] = row[j];
        }
    }
    let h = DVector::from_vec(robot.body.bias_forces(&q, &v));
    let y = a.clone().svd(true, true).solve(&h, 1e-12).unwrap();
    assert!((&a * &y - &h).norm() < 1e-9 * h.norm(), "no statics");
    let u: Vec<f64> = y.iter().take(m).copied().collect();
    for (ui, input) in u.iter().zip(&robot.inputs) {
        assert!(
            *ui >= input.limit.0 && *ui <= input.limit.1,
            "{}: {ui} N m",
            input.name
        );
    }

    let mut x = q.clone();
    x.extend(&v);
    let plan = PlanTable {
        t: vec![0.0, 0.5],
        x: vec![x.clone(), x.clone()],
        u: vec![u.clone(), u],
        phase: vec![0, 0],
    };
    let settings = ReplaySettings {
        sample_every: 1e-2,
        ..Default::default()
    };
    let replay = replay(&problem, &plan, &settings).unwrap();
    assert!(
        replay.summary.events.is_empty(),
        "{:?}",
        replay.summary.events
    );
    let column = |name: &str| replay.columns.iter().position(|c| c == name).unwrap();
    let weight = robot.body.total_mass() * problem.gravity;
    for row in &replay.rows {
        let (mut fx, mut fz) = (0.0, 0.0);
        for c in &robot.contacts {
            fx += row[column(&format!("{}_fx", c.name))];
            fz += row[column(&format!("{}_fz", c.name))];
        }
        assert!(
            (fz - weight).abs() < 1e-9 * weight,
            "t = {}: the feet carry {fz} N of {weight} N",
            row[0]
        );
        assert!(fx.abs() < 1e-9 * weight, "t = {}: Σ F_x = {fx} N", row[0]);
        for j in 0..2 * n {
            assert!(
                (row[1 + j] - x[j]).abs() < 1e-9,
                "t = {}: {} moved to {} from {}",
                row[0],
                replay.columns[1 + j],
                row[1 + j],
                x[j]
            );
        }
    }
    assert!(replay.rows.last().unwrap()[0] >= 0.5 - 1e-12);
}
