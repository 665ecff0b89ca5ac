//! The wrench-space `dem` generator (docs/WRENCH_SPACE.md, "Implemented"): the paper's protocol
//! on loam's DEM, checked against `intrude` (same machinery, another driver), against the
//! mirror symmetry of the bed, against RFT's torque sign, and end to end through the binary.
//!
//! One small bed serves every test: about 800 grains of 2.5 mm radius (±10 %) in a 3 cm
//! cylinder filled 3 cm, prepared once per test binary; a foot 25 mm wide, 15 mm out of plane
//! and 40 mm tall, the torque point 20 mm up its axis, driven at 5 cm/s.

use std::path::Path;
use std::sync::OnceLock;

use loam::sim::dem::intrude::{intrude, IntrudeSettings};
use loam::sim::dem::wrench_space::DemProtocol;
use loam::sim::dem::{bed, Checkpoint, CpuBackend, Scene};
use loam::terrain::wrench_space::{Foot, Medium, RftModel, WrenchSpace};

use crate::common;
use common::run::loam;
use common::temp_dir::TempDir;

const SCENE: &str = "\
container: { shape: cylinder, radius: 0.03 }
grains: { radius: 0.0025, size_spread: 0.1, density: 1000, friction: 0.5, fill_height: 0.03, seed: 5 }
settle: { kinetic_energy: 1.0e-10, max_time: 3.0 }
";

/// The command line's grid: d = 0 and −1 cm, φ = 0 and 0.3.
const GRID: [&str; 8] = [
    "--depth-max",
    "0.01",
    "--depth-step",
    "0.01",
    "--tilt-max",
    "0.3",
    "--tilt-step",
    "0.3",
];

const FOOT: Foot = Foot {
    width: 0.025,
    height: 0.04,
    thickness: 0.015,
};
const TORQUE_POINT: f64 = 0.02;
const SPEED: f64 = 0.05;
const DEPTH: f64 = -0.01;

fn small_bed() -> &'static Checkpoint {
    static BED: OnceLock<Checkpoint> = OnceLock::new();
    BED.get_or_init(|| {
        let scene = Scene::parse(SCENE, Path::new("<wrench-space dem test>")).unwrap();
        let bed = bed::prepare(&mut CpuBackend::new(), &scene).unwrap();
        assert!(bed.info.settled, "{:?}", bed.info);
        bed
    })
}

/// The protocol at the test's speed, descending at the drag speed (as `intrude` does).
fn protocol() -> DemProtocol {
    DemProtocol {
        foot: FOOT,
        torque_point: TORQUE_POINT,
        velocity_scale: [SPEED, SPEED, 0.5],
        directions: vec![[0.0, -1.0, 0.0]],
        duration: 0.1,
        window: 0.02,
        approach_speed: SPEED,
        start_height: None,
    }
}

fn read(tilt: f64, direction: [f64; 3]) -> [f64; 3] {
    let p = protocol();
    p.check(small_bed(), &[DEPTH], &[tilt]).unwrap();
    p.read(
        &mut CpuBackend::new(),
        small_bed(),
        DEPTH,
        tilt,
        p.twist(direction),
    )
    .unwrap()
    .wrench
}

/// Pure-down at φ = 0: the same trajectory as `intrude` at the same speed from the same
/// height, so F_z at d = −1 cm (the widest moving average, 0.4 t_total: ±2.5 mm of travel)
/// must agree with intrude's force averaged over the same depths; what differs is the driver
/// (the pose set every step, the reading, the depth of `p_center` against the lowest point).
/// The two runs are not bit-identical (the descent's speed is rounded to whole steps) and the
/// bed is chaotic: under a foot five grains wide intrude's force swings between 0.5 and 1.9 N
/// within 1 mm of travel, so two realisations of the same intrusion differ by their scatter.
/// Measured: 1.44 N against 1.23 N (17 %); the 10 % needs a wider foot or a finer
/// bed than a test can afford, so the test allows 25 %. A sign or depth-convention error
/// would be off by far more (the force doubles between 5 and 10 mm).
/// F_x and τ vanish by symmetry up to the bed's scatter: a foot five grains wide feels the
/// grains' arrangement, so the test allows |F_x| ≤ 0.15 F_z and |τ| ≤ 0.15 F_z·w/2 (the
/// torque of the whole vertical force at the sole's edge).
#[test]
fn pushing_straight_down_agrees_with_intrude_and_is_symmetric() {
    let bed = small_bed();
    let p = DemProtocol {
        duration: 0.25,
        window: 0.1,
        ..protocol()
    };
    let travel = 0.5 * p.window * SPEED;
    p.check(bed, &[DEPTH], &[0.0]).unwrap();
    let twist = p.twist([0.0, -1.0, 0.0]);
    let w = p
        .read(&mut CpuBackend::new(), bed, DEPTH, 0.0, twist)
        .unwrap()
        .wrench;
    let settings = IntrudeSettings {
        speed: SPEED,
        depth: -DEPTH + travel + 0.0005,
        start_height: None,
        sample_travel: Some(0.0002),
        friction: None,
        iterations: None,
        time_step: None,
    };
    let geometry = protocol().geometry();
    let samples = intrude(&mut CpuBackend::new(), bed, geometry, &settings).unwrap();
    let rows: Vec<f64> = samples
        .iter()
        .filter(|s| (s.depth + DEPTH).abs() <= travel)
        .map(|s| s.force[2])
        .collect();
    let intruded = rows.iter().sum::<f64>() / rows.len() as f64;
    eprintln!(
        "pure down at d = {DEPTH}: dem generator (F_x, F_z, tau) = {w:?}; intrude F_z = \
         {intruded:.4} N ({} rows)",
        rows.len()
    );
    assert!(w[1] > 0.0, "the bed must push the foot up: {w:?}");
    assert!(
        (w[1] - intruded).abs() <= 0.25 * intruded,
        "F_z {} N against intrude's {intruded} N",
        w[1]
    );
    assert!(
        w[0].abs() <= 0.15 * w[1],
        "F_x {} against F_z {}",
        w[0],
        w[1]
    );
    let edge = w[1] * 0.5 * FOOT.width;
    assert!(w[2].abs() <= 0.15 * edge, "tau {} against {edge}", w[2]);
}

/// Dragging sideways at φ = 0 to +x and to −x: the bed is the same (statistically symmetric,
/// not exactly), so F_x and τ must be mirrored and F_z equal, within the bed's scatter. The
/// scatter of one reading on this bed is about 20 % (the pure-down test: 17 % between two
/// realisations), and two drags through different grains differ by up to twice that or more:
/// the test allows 50 % of the larger magnitude of each component. Measured at the old default
/// step (0.2 T_R): F_x −0.177 against +0.235 N (25 %), F_z 0.246 against 0.303 N (19 %),
/// τ −0.0033 against +0.0036 N m (7 %); at 0.1 T_R (2026-11-26): F_x −0.120 against +0.215 N
/// (44 %), F_z 0.181 against 0.112 N (38 %), τ −0.0024 against +0.0034 N m (30 %). A sign
/// error in F_x or τ would be off by 200 %.
#[test]
fn mirrored_drags_give_mirrored_wrenches() {
    let plus = read(0.0, [1.0, 0.0, 0.0]);
    let minus = read(0.0, [-1.0, 0.0, 0.0]);
    eprintln!("drag +x: {plus:?}; drag -x: {minus:?}");
    assert!(plus[0] < 0.0 && minus[0] > 0.0, "{plus:?} {minus:?}");
    for (c, sign) in [(0, -1.0), (1, 1.0), (2, -1.0)] {
        let scale = plus[c].abs().max(minus[c].abs());
        assert!(
            (plus[c] - sign * minus[c]).abs() <= 0.5 * scale,
            "component {c}: +x {} against -x {}",
            plus[c],
            minus[c]
        );
    }
}

/// A foot dragged sideways is pushed back at its sole, below the torque point, so it feels a
/// torque turning its top toward the motion: clockwise (τ < 0) for +x. RFT on the same foot
/// and twist gives the same signs, and so must the DEM (planar torque = −τ_y: a sign slip in
/// the frame conversion flips it). A tilted foot (φ = 0.3) dragged +x agrees too.
#[test]
fn a_sideways_drag_has_rfts_torque_sign() {
    let rft = RftModel {
        medium: Medium::PoppySeedsLoose,
        foot: FOOT,
        torque_point: TORQUE_POINT,
        velocity_scale: [SPEED, SPEED, 0.5],
        directions: vec![[1.0, 0.0, 0.0]],
        segments: 40,
    };
    for tilt in [0.0, 0.3] {
        let dem = read(tilt, [1.0, 0.0, 0.0]);
        let analytic = rft.wrench(DEPTH, tilt, [SPEED, 0.0, 0.0]);
        eprintln!("tilt {tilt}: dem {dem:?}; rft {analytic:?}");
        assert!(analytic[2] < 0.0, "RFT's torque {analytic:?}");
        assert!(dem[0] < 0.0, "F_x must resist the motion: {dem:?}");
        assert_eq!(
            dem[2].signum(),
            analytic[2].signum(),
            "{dem:?} {analytic:?}"
        );
    }
}

/// The binary end to end on a saved copy of the bed: one depth below the surface, tilts 0 and
/// 0.3, m = 10 directions (one ring); the file loads, validates, says where it came from, and
/// the surface row is zero.
#[test]
fn the_generated_file_loads_and_validates() {
    let dir = TempDir::new("dem-build");
    small_bed().save(&dir.path().join("small.bed")).unwrap();
    let args: Vec<&str> = [
        "wrench-space",
        "build",
        "--generator",
        "dem",
        "--bed",
        "small.bed",
        "--foot-width",
        "0.02",
        "--foot-height",
        "0.03",
        "--foot-thickness",
        "0.012",
        "--torque-point",
        "0.015",
        "--velocity-scale",
        "0.05",
        "0.05",
        "0.5",
        "--rings",
        "1",
        "--t-total",
        "0.05",
        "--approach-speed",
        "0.2",
        "--out",
        "dem.yaml",
    ]
    .iter()
    .chain(&GRID)
    .copied()
    .collect();
    let out = loam(dir.path(), &args);
    assert_eq!(out.code(), 0, "{}", out.dump());
    assert!(out.stderr.contains("20 runs"), "{}", out.dump());
    let space = WrenchSpace::load(&dir.path().join("dem.yaml")).unwrap();
    let data = space.data();
    assert_eq!(data.provenance.generator, "dem");
    for key in ["bed", "bed_scene", "t_total_s", "filter", "time_step_s"] {
        assert!(data.provenance.parameters.contains_key(key), "{key}");
    }
    assert_eq!(data.nodes.len(), 4);
    for node in &data.nodes {
        let zero = node.wrenches.iter().all(|w| *w == [0.0; 3]);
        assert_eq!(zero, node.depth == 0.0, "{node:?}");
    }
    // Straight down (direction 0) is resisted upward below the surface.
    assert!(data.nodes[2].wrenches[0][1] > 0.0, "{:?}", data.nodes[2]);
}

/// Bad input: exit 2, an error naming the flag, nothing written.
#[test]
fn bad_dem_input_is_refused_with_the_flag_named() {
    let dir = TempDir::new("dem-bad");
    small_bed().save(&dir.path().join("small.bed")).unwrap();
    dir.write("scene.yaml", SCENE);
    let base = [
        "wrench-space",
        "build",
        "--generator",
        "dem",
        "--foot-height",
        "0.04",
        "--foot-thickness",
        "0.015",
        "--out",
        "x.yaml",
    ];
    let cases: [(&[&str], &[&str]); 4] = [
        (&["--foot-width", "0.025"], &["--generator dem needs --bed"]),
        (
            &["--foot-width", "0.025", "--bed", "missing.bed"],
            &["--bed", "missing.bed", "cannot read"],
        ),
        (
            &["--foot-width", "0.025", "--bed", "scene.yaml"],
            &["--bed", "not a loam bed checkpoint"],
        ),
        (
            &["--foot-width", "0.08", "--bed", "small.bed"],
            &["--foot-width 0.08", "wall"],
        ),
    ];
    for (extra, expected) in cases {
        let args: Vec<&str> = base.iter().chain(&GRID).chain(extra).copied().collect();
        let out = loam(dir.path(), &args);
        assert_eq!(out.code(), 2, "{extra:?}: {}", out.dump());
        for text in expected {
            assert!(out.stderr.contains(text), "{extra:?}: {}", out.dump());
        }
        assert!(
            !dir.path().join("x.yaml").exists(),
            "{extra:?} wrote a file"
        );
    }
}
