//! A planar robot two-way coupled to a DEM bed (`sim::dem::planar`): the planar foot of the
//! wrench-space paper, scaled to a small bed of coarse grains, standing and pushed.

use std::sync::OnceLock;

use loam::model::planar::foot::PlanarFootParams;
use loam::model::planar::PlanarRobot;
use loam::sim::dem::planar::{
    replay_planar, replay_planar_scenes, PlanarDemReplay, PlanarDemSettings,
};
use loam::sim::dem::{bed, Backend, Checkpoint, CpuBackend, CpuScenes, Scene};
use loam::sim::planar::PlanTable;

const SCENE: &str = "
container: { shape: box, half_x: 0.06, half_y: 0.035 }
grains: { radius: 0.004, size_spread: 0.1, density: 1000, friction: 0.5, fill_height: 0.04, seed: 5 }
settle: { kinetic_energy: 1.0e-12, max_time: 3.0 }
";

fn test_bed() -> &'static Checkpoint {
    static BED: OnceLock<Checkpoint> = OnceLock::new();
    BED.get_or_init(|| {
        let scene = Scene::parse(SCENE, std::path::Path::new("<planar test>")).unwrap();
        let mut backend = CpuBackend::new();
        let bed = bed::prepare(&mut backend, &scene).unwrap();
        assert!(bed.info.settled, "{:?}", bed.info);
        bed
    })
}

/// The paper's foot shrunk to the bed: 0.4 kg, a 4 cm sole.
fn foot() -> PlanarRobot {
    PlanarFootParams {
        mass: 0.4,
        inertia: 2e-4,
        width: 0.04,
        height: 0.04,
        com_height: 0.02,
        force_x_limit: (-20.0, 20.0),
        force_z_limit: (-20.0, 20.0),
        torque_limit: (-2.0, 2.0),
    }
    .build(9.81)
}

/// A plan that holds the foot's sole at `depth` below the surface from t = 0 to `duration`,
/// reached in a straight line from the surface over the first half (no feedforward input).
fn plan(robot: &PlanarRobot, depth: f64, duration: f64) -> PlanTable {
    let n = robot.body.n_q();
    let at = |z_offset: f64| {
        let mut x = robot.standing.clone();
        x[1] -= z_offset;
        x.extend(vec![0.0; n]);
        x
    };
    PlanTable {
        t: vec![0.0, 0.5 * duration, duration],
        x: vec![at(0.0), at(depth), at(depth)],
        u: vec![vec![0.0; robot.inputs.len()]; 3],
        phase: vec![0, 0, 0],
    }
}

fn replay(depth: f64) -> PlanarDemReplay {
    let robot = foot();
    let settings = PlanarDemSettings {
        settle_time: 0.1,
        depth: 0.03,
        ..PlanarDemSettings::default()
    };
    let mut backend = CpuBackend::new();
    replay_planar(
        &mut backend,
        test_bed(),
        &robot,
        &plan(&robot, depth, 0.4),
        &settings,
    )
    .unwrap()
}

/// Mean over the samples from `from` on of the grains' vertical force and the commanded F_z.
fn mean_forces(replay: &PlanarDemReplay, from: f64) -> (f64, f64) {
    let late: Vec<_> = replay.samples.iter().filter(|s| s.t >= from).collect();
    let n = late.len() as f64;
    let grains = late.iter().map(|s| s.wrenches[0][1]).sum::<f64>() / n;
    let push = late.iter().map(|s| s.u[1]).sum::<f64>() / n;
    (grains, push)
}

/// At rest, the grains and the foot's own vertical input carry its weight between them: the
/// forces the coupling hands the robot's dynamics balance gravity.
#[test]
fn the_grains_and_the_push_carry_the_foots_weight() {
    let robot = foot();
    let weight = robot.body.total_mass() * 9.81;
    for depth in [0.0, 0.01] {
        let r = replay(depth);
        let (grains, push) = mean_forces(&r, 0.3);
        println!(
            "sole held at {depth} m: grains {grains:.3} N + push {push:.3} N against weight \
             {weight:.3} N; deepest sole {:.4} m; summary {:?}",
            r.summary.deepest_sole_m, r.summary
        );
        assert!(
            (grains + push - weight).abs() < 0.05 * weight,
            "grains {grains} + push {push} vs weight {weight}"
        );
        // The balance holds in the mean: the foot creeps slowly (the grains yield under the
        // servo's push), so its momentum hardly changes over the window.
    }
}

/// Pressed 1 cm into the bed, the foot goes about that deep (its servo tracks the plan) and
/// the grains push back harder than with the sole held at the surface.
#[test]
fn a_foot_pressed_into_the_bed_is_pushed_back_harder() {
    let surface = replay(0.0);
    let pressed = replay(0.01);
    let (at_surface, _) = mean_forces(&surface, 0.3);
    let (deep, _) = mean_forces(&pressed, 0.3);
    let depth = -pressed.samples.last().unwrap().heights[0];
    assert!(
        (depth - 0.01).abs() < 0.004,
        "the pressed sole is {depth} m deep"
    );
    assert!(deep > at_surface + 0.5, "{deep} N against {at_surface} N");
}

/// A plan whose feet sweep further than the container is refused before any grain moves.
#[test]
fn a_plan_wider_than_the_bed_is_refused() {
    let robot = foot();
    let mut table = plan(&robot, 0.0, 0.2);
    table.x[2][0] += 0.2;
    let mut backend = CpuBackend::new();
    let error = replay_planar(
        &mut backend,
        test_bed(),
        &robot,
        &table,
        &PlanarDemSettings::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("larger bed"), "{error}");
}

/// The bed and two copies with one grain nudged by one ulp: the two grains nearest the top of
/// the bed under the foot's sole, so that the nudge reaches the foot within the replay.
fn realisations() -> &'static [Checkpoint] {
    static BEDS: OnceLock<Vec<Checkpoint>> = OnceLock::new();
    BEDS.get_or_init(|| {
        let bed = test_bed();
        let top = bed.info.surface_height;
        let mut near: Vec<usize> = (0..bed.grains.len()).collect();
        let distance = |i: &usize| {
            let p = bed.grains.position[*i];
            p[0].hypot(p[1]).hypot(p[2] - top)
        };
        near.sort_by(|a, b| distance(a).total_cmp(&distance(b)));
        vec![
            bed.clone(),
            bed.nudged(near[0]).unwrap(),
            bed.nudged(near[1]).unwrap(),
        ]
    })
}

/// A short replay for the batches: the foot pressed 1 cm in over 0.2 s after 0.05 s of
/// settling.
fn batch_settings() -> PlanarDemSettings {
    PlanarDemSettings {
        settle_time: 0.05,
        depth: 0.03,
        ..PlanarDemSettings::default()
    }
}

/// What a replay computed, every number to the bit: `{:?}` writes each f64 in the fewest
/// digits that read back as the same bits.
fn bits(replay: &PlanarDemReplay) -> String {
    format!("{:?} {:?}", replay.samples, replay.summary)
}

/// Realisations side by side on the CPU's scenes (`replay_planar_scenes` on `CpuScenes`):
/// scene s of the batch is the single replay of bed s, every sample and the summary to the
/// bit, and the nudged beds are other realisations (the batch did not replay one bed three
/// times).
#[test]
fn realisations_side_by_side_are_the_single_replays_bit_for_bit() {
    let robot = foot();
    let table = plan(&robot, 0.01, 0.2);
    let settings = batch_settings();
    let beds = realisations();
    let alone: Vec<PlanarDemReplay> = beds
        .iter()
        .map(|bed| replay_planar(&mut CpuBackend::new(), bed, &robot, &table, &settings).unwrap())
        .collect();
    let together: Vec<PlanarDemReplay> = replay_planar_scenes(
        &mut CpuScenes::new(beds.len()),
        beds,
        &robot,
        &table,
        &settings,
    )
    .unwrap()
    .into_iter()
    .map(Result::unwrap)
    .collect();
    assert_eq!(alone.len(), together.len());
    for (s, (a, t)) in alone.iter().zip(&together).enumerate() {
        assert!(a.samples.len() > 200, "realisation {s}: {:?}", a.summary);
        assert_eq!(bits(a), bits(t), "realisation {s}");
        assert_eq!(
            a.summary.achieved_distance_m.to_bits(),
            t.summary.achieved_distance_m.to_bits()
        );
        assert!(t.snapshots.is_empty());
    }
    assert!(
        bits(&alone[1]) != bits(&alone[0]) && bits(&alone[2]) != bits(&alone[0]),
        "a nudged bed replayed exactly as the bed"
    );
}

/// A batch refuses snapshots (a single replay's only), a backend of another number of scenes
/// and beds that are not realisations of one scene, before any grain moves.
#[test]
fn realisations_side_by_side_refuse_snapshots_and_a_backend_of_another_size() {
    let robot = foot();
    let table = plan(&robot, 0.01, 0.2);
    let beds = &realisations()[..2];
    let refusal = |backend: &mut dyn Backend, beds: &[Checkpoint], settings: &PlanarDemSettings| {
        replay_planar_scenes(backend, beds, &robot, &table, settings)
            .unwrap_err()
            .to_string()
    };
    for snapshots in [
        PlanarDemSettings {
            snapshot_every: Some(0.05),
            ..batch_settings()
        },
        PlanarDemSettings {
            snapshot_at: vec![0.1],
            ..batch_settings()
        },
    ] {
        let err = refusal(&mut CpuScenes::new(2), beds, &snapshots);
        assert!(
            err.contains("snapshots are taken from a single replay"),
            "{err}"
        );
    }
    let err = refusal(&mut CpuScenes::new(3), beds, &batch_settings());
    assert!(
        err.contains("2 realisations on a cpu backend of 3 scenes"),
        "{err}"
    );
    let err = refusal(&mut CpuBackend::new(), beds, &batch_settings());
    assert!(err.contains("of 1 scenes"), "{err}");
    let mut other = beds[1].clone();
    other.scene.grains.friction += 0.1;
    let err = refusal(
        &mut CpuScenes::new(2),
        &[beds[0].clone(), other],
        &batch_settings(),
    );
    assert!(err.contains("not of one bed"), "{err}");
    let err = refusal(&mut CpuScenes::new(2), &[], &batch_settings());
    assert!(err.contains("no bed"), "{err}");
}

use crate::common;

/// `loam simulate RUN --backend dem-cpu --bed BED` on a planar robot's plan, end to end: a
/// 1 kg foot's 2 cm step on a bed `loam dem prepare` made; its refusals exit 2 and write
/// nothing.
#[test]
fn simulate_replays_a_planar_plan_on_a_prepared_bed() {
    use common::run::{assert_exit, loam, read_json};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dem_planar_cli");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bed.yaml"), SCENE).unwrap();
    let prepare = loam(&dir, &["dem", "prepare", "bed.yaml", "-o", "bed.bed"]);
    assert_exit(&prepare, 0, &[]);
    let run = dir.join("run");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = vec![
        "solve".to_string(),
        "problems/planar_foot_step.yaml".into(),
        "--out".into(),
        run.to_str().unwrap().into(),
        "-q".into(),
    ];
    for set in [
        "robot.mass=1.0",
        "robot.inertia=5e-4",
        "robot.width=0.03",
        "robot.height=0.04",
        "robot.com_height=0.02",
        "robot.force_x_limit=[-20,20]",
        "robot.force_z_limit=[-30,30]",
        "robot.torque_limit=[-2,2]",
        "task.distance=0.02",
    ] {
        args.extend(["--set".to_string(), set.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_exit(&loam(manifest, &args), 0, &[]);
    let solution = read_json(&run.join("solution.json"));

    let run_arg = run.to_str().unwrap();
    let simulate = |extra: &[&str]| {
        let mut a = vec!["simulate", run_arg, "--backend", "dem-cpu", "-q"];
        a.extend(extra);
        loam(&dir, &a)
    };
    assert_exit(&simulate(&[]), 2, &["--bed"]);
    assert_exit(
        &simulate(&["--bed", "bed.bed", "--foot-depth", "0"]),
        2,
        &["--foot-depth"],
    );
    // 10 cm across the plane does not fit a 7 cm wide box.
    assert_exit(
        &simulate(&["--bed", "bed.bed", "--foot-depth", "0.1"]),
        2,
        &["larger bed"],
    );
    assert_exit(
        &simulate(&["--bed", "bed.bed", "--settle-time=-1"]),
        2,
        &["--settle-time"],
    );
    assert_exit(
        &simulate(&["--bed", "bed.bed", "--render-at", "50"]),
        2,
        &["--render-at 50", "outside the replay"],
    );
    assert_exit(
        &simulate(&[
            "--bed",
            "bed.bed",
            "--snapshot-every",
            "0",
            "--render-at",
            "0.1",
        ]),
        2,
        &["--render-at", "--snapshot-every"],
    );
    assert_exit(
        &simulate(&["--bed", "bed.bed", "--t-max", "0"]),
        2,
        &["--t-max"],
    );
    assert!(!run.join("dem-cpu").exists(), "a refusal wrote files");

    // By default the grains and the foot are saved every 0.02 s and drawn at 0 and 0.1 s.
    let ok = simulate(&["--bed", "bed.bed", "--foot-depth", "0.03"]);
    assert_exit(&ok, 0, &[]);
    let snapshots = run.join("dem-cpu/snapshots");
    assert!(snapshots.join("snapshots.pvd").is_file());
    assert!(snapshots.join("bodies_0000.vtk").is_file());
    for render in ["render_t0.000.png", "render_t0.100.png"] {
        assert!(run.join("dem-cpu").join(render).is_file(), "{render}");
    }
    let record = read_json(&run.join("dem-cpu/dem.json"));
    assert_eq!(record["plan_id"], solution["plan_id"], "{record}");
    assert_eq!(record["foot_depth_m"], 0.03);
    assert_eq!(record["settle_time_s"], 0.2);
    assert!(
        record["start_speed_mps"].as_f64().unwrap() >= 0.0,
        "{record}"
    );
    // The foot's base is servoed to the plan, so it steps the planned 2 cm on the grains.
    let planned = record["planned_distance_m"].as_f64().unwrap();
    let achieved = record["achieved_distance_m"].as_f64().unwrap();
    assert!((planned - 0.02).abs() < 1e-6, "{record}");
    assert!((achieved - planned).abs() < 0.003, "{record}");
    let csv = std::fs::read_to_string(run.join("dem-cpu/dem_replay.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "t,x,z,pitch,d_x,d_z,d_pitch,force_x,force_z,torque,foot_fx,foot_fz,foot_tau,foot_height"
    );
    // Settling samples come first (t < 0), then the plan's clock to its end.
    let times: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(times[0] < -0.19 && times.windows(2).all(|w| w[1] > w[0]));
    let end = solution["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["duration_s"].as_f64().unwrap())
        .sum::<f64>();
    assert!(
        (times.last().unwrap() - end).abs() < 1e-3,
        "ends at {:?}, plan {end}",
        times.last()
    );

    // Stopped by --t-max before the plan's end: written, marked, exit 1.
    let short = simulate(&[
        "--bed",
        "bed.bed",
        "--foot-depth",
        "0.03",
        "--t-max",
        "0.05",
    ]);
    assert_exit(&short, 1, &[]);
    let stopped = read_json(&run.join("dem-cpu/dem.json"));
    assert!(
        (stopped["stopped_at_s"].as_f64().unwrap() - 0.05).abs() < 1e-3,
        "{stopped}"
    );
    assert!(record.get("stopped_at_s").is_none(), "{record}");

    // `loam validate` takes the same replay over two realisations of the bed, side by side
    // (the scenes of one CPU backend): the first is the replay above to the bit, the second a
    // nudged copy; each row value is its record's.
    let verdict = loam(
        &dir,
        &[
            "validate",
            run_arg,
            "--bed",
            "bed.bed",
            "--foot-depth",
            "0.03",
            "--realisations",
            "2",
            "--side-by-side",
            "2",
            "-q",
        ],
    );
    assert_exit(&verdict, 0, &[]);
    let table = read_json(&run.join("validation/validation.json"));
    let dem = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["simulator"] == "dem-cpu" && r["outcome"] == "distance_m")
        .unwrap_or_else(|| panic!("no DEM distance row: {table}"));
    assert_eq!(dem["realisations"], 2);
    assert_eq!(dem["values"][0].as_f64(), Some(achieved), "{dem}");
    let nudged = read_json(&run.join("validation/dem-cpu-r01/dem.json"));
    assert_eq!(dem["values"][1], nudged["achieved_distance_m"]);
    assert!(
        nudged["bed"].as_str().unwrap().contains("nudged"),
        "{nudged}"
    );
}

/// The monopod with its leg held 0.8 rad off the vertical topples: its body reaches the
/// surface, where only feet meet the grains, and the replay stops there and says so instead
/// of letting the body pass through the bed.
#[test]
fn a_toppling_robot_stops_the_replay_when_its_body_reaches_the_grains() {
    use loam::model::planar::monopod::MonopodParams;
    let robot = MonopodParams::default().build(9.81);
    let n = robot.body.n_q();
    let mut x = robot.standing.clone();
    x[3] = 0.8; // hip
                // The base above the surface so that the foot, now swung out, just touches it.
    let foot = robot.contact_point(&x, 0);
    x[1] -= foot[1];
    x.extend(vec![0.0; n]);
    let plan = PlanTable {
        t: vec![0.0, 1.5],
        x: vec![x.clone(), x],
        u: vec![vec![0.0; robot.inputs.len()]; 2],
        phase: vec![0, 0],
    };
    let settings = PlanarDemSettings {
        settle_time: 0.0,
        depth: 0.05,
        point_foot_half_width: 0.03,
        ..PlanarDemSettings::default()
    };
    let mut backend = CpuBackend::new();
    let r = replay_planar(&mut backend, test_bed(), &robot, &plan, &settings).unwrap();
    let s = &r.summary;
    println!("{s:?}");
    let fell = s.fell_at_s.expect("the monopod falls");
    assert!(fell < 1.5, "{s:?}");
    assert_eq!(s.fell_body.as_deref(), Some("body"), "{s:?}");
    assert!((r.samples.last().unwrap().t - fell).abs() < 1e-9);
}

/// The hopper described as a robot file (`problems/hopper_granular.yaml`, a planar plan; the
/// committed run `results/hopper_granular`) jumps on the grains: `loam simulate --backend
/// dem-cpu` stands it on a disc of the plan's `foot_radius`, lets it settle with the grains
/// carrying its weight, and replays the plan past its end to the apex. (It was held within
/// 3 % of the hopper's own DEM coupling on this bed, which is gone.) These coarse, light
/// grains carry the robot at their surface, and the jump is nearly rigid ground's: 91.8 mm,
/// where the plan replayed on rigid ground rises 95.7 mm (`results/hopper_granular`).
#[test]
fn the_hopper_as_a_robot_file_jumps_on_the_grains() {
    use common::run::{assert_exit, loam, read_json};
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dem_planar_hopper");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A cylinder wide enough for the 7.6 cm disc, of coarse grains (about 700).
    std::fs::write(
        dir.join("bed.yaml"),
        "container: { shape: cylinder, radius: 0.05 }\n\
         grains: { radius: 0.004, size_spread: 0.1, density: 1000, friction: 0.5, \
         fill_height: 0.04, seed: 11 }\n\
         settle: { kinetic_energy: 1.0e-12, max_time: 3.0 }\n",
    )
    .unwrap();
    assert_exit(
        &loam(&dir, &["dem", "prepare", "bed.yaml", "-o", "bed.bed"]),
        0,
        &[],
    );
    let committed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/hopper_granular");
    // `loam simulate RUN --backend dem-cpu` on the bed of a copy of a committed run, as
    // `name`, without snapshots, with `more` arguments.
    let replay = |run: &std::path::Path, name: &str, more: &[&str]| {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        for file in ["solution.json", "trajectory.csv"] {
            std::fs::copy(run.join(file), dir.join(name).join(file)).unwrap();
        }
        let mut args = vec![
            "simulate",
            name,
            "--backend",
            "dem-cpu",
            "--bed",
            "bed.bed",
            "--snapshot-every",
            "0",
            "-q",
        ];
        args.extend_from_slice(more);
        loam(&dir, &args)
    };
    let simulate = replay(&committed, "run", &[]);
    assert_exit(&simulate, 0, &[]);
    let record = read_json(&dir.join("run/dem-cpu/dem.json"));
    println!("{record}");
    assert_eq!(
        record["feet"],
        serde_json::json!([{"shape": "disc", "radius": 0.038, "thickness": 0.005}]),
        "{record}"
    );
    // Settled at rest with the grains carrying its weight; the planned rise is the task's,
    // and the grains' apex came (the replay went on past the plan's end).
    let weight = record["robot_weight_n"].as_f64().unwrap();
    let carried = record["settled_bed_force_n"].as_f64().unwrap();
    assert!((carried - weight).abs() < 0.01 * weight, "{record}");
    assert!(
        record["start_speed_mps"].as_f64().unwrap() < 0.005,
        "{record}"
    );
    assert!(
        (record["planned_apex_rise_m"].as_f64().unwrap() - 0.06).abs() < 1e-6,
        "{record}"
    );
    assert_eq!(record["reached_apex"], true, "{record}");
    let rise = record["achieved_apex_rise_m"].as_f64().unwrap();
    assert!((0.085..0.1).contains(&rise), "apex rise {rise} m: {record}");
    assert!(!dir.join("run/dem-cpu/snapshots").exists());

    // One robot, one foot: the hopper's plan made on rigid ground (`results/hopper_rigid`)
    // meets the grains with the same 3.8 cm disc, its robot file's contact `radius`, not a
    // box on a point foot (a short replay: the foot is what is checked).
    let simulate = replay(
        &committed.with_file_name("hopper_rigid"),
        "rigid",
        &["--settle-time", "0.01", "--t-max", "0.01"],
    );
    assert!(matches!(simulate.code(), 0 | 1), "{}", simulate.dump());
    let record = read_json(&dir.join("rigid/dem-cpu/dem.json"));
    assert_eq!(
        record["feet"],
        serde_json::json!([{"shape": "disc", "radius": 0.038, "thickness": 0.005}]),
        "{record}"
    );
}
