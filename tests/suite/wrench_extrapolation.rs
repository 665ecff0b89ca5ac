//! The wrench set beyond its data (issue 32, item 1; docs/WRENCH_SPACE.md "Beyond the
//! data"): loam's RFT Sand-like data cut as the paper's measured Sand was taken (depth to
//! 0.05 m, tilt to 0.9 rad), then bodies driven beyond that box. Under `extrapolate` (the
//! default) the set keeps growing with depth at the deepest layers' rate and extends in tilt
//! to ±π/2, so bodies come to rest; under `clamp` the same loads sink without limit. Steps
//! outside the data are counted per foot in `loam mdp run`'s summary and flagged.

use crate::common;

use std::f64::consts::FRAC_PI_2;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::run::{loam, read_json};
use common::temp_dir::TempDir;
use loam::model::planar::{PlanarFootParams, PlanarRobot};
use loam::sim::mdp::{MdpOptions, MdpSim};
use loam::terrain::wrench_set::WrenchSet;
use loam::terrain::wrench_space::{BeyondData, WrenchSpace, WrenchSpaceData};

const G: f64 = 9.81;
/// The cut: the paper's Sand data reach 0.05 m deep (loam's Sand-like grid has a layer
/// there) and 0.9 rad of tilt.
const DEPTH_CUT: f64 = 0.05;
const TILT_CUT: f64 = 0.9;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems/data/wrench_space")
        .join(name)
}

/// The shipped Sand-like RFT data (the §3.5 foot, ζ = 0.4 N/cm³, d to −0.10 m, φ to 1.5 rad)
/// with only the nodes inside the cut.
fn cut_sand_data(beyond: BeyondData) -> WrenchSpaceData {
    let mut data = WrenchSpaceData::load(&shipped("rft_sand_like.yaml")).unwrap();
    data.nodes
        .retain(|n| n.depth >= -DEPTH_CUT - 1e-12 && n.tilt <= TILT_CUT + 1e-12);
    data.interpolation.beyond_data = beyond;
    data
}

fn cut_sand(beyond: BeyondData) -> WrenchSpace {
    let space = WrenchSpace::from_data(cut_sand_data(beyond)).unwrap();
    assert_eq!(space.depth_range(), (-DEPTH_CUT, 0.0));
    assert_eq!(space.tilt_range(), (-TILT_CUT, TILT_CUT));
    space
}

/// The pebble-like medium of the paper's second data set, as RFT: the Sand-like data's foot,
/// directions and cut grid (d to 0.05 m by 0.01, φ to 0.9 rad by 0.15) in Li et al.'s generic
/// medium ten times stiffer (ζ = 4 N/cm³ against 0.4).
fn cut_pebbles(beyond: BeyondData) -> WrenchSpace {
    use loam::terrain::wrench_space::{beyond::fitted_rft, Kernel, Medium};
    // The Sand-like data's own RFT medium (their foot, torque point and directions), stiffer.
    let mut model = fitted_rft(&cut_sand_data(beyond)).expect("RFT data fit RFT");
    model.medium = Medium::Generic { zeta: 4.0 };
    model.segments = 40;
    let depths: Vec<f64> = (0..=5).map(|k| -0.01 * k as f64).collect();
    let tilts: Vec<f64> = (0..=6).map(|k| 0.15 * k as f64).collect();
    let mut data = model.generate(&depths, &tilts, Kernel::Cubic);
    data.interpolation.beyond_data = beyond;
    WrenchSpace::from_data(data).unwrap()
}

/// `loam mdp run problems/mdp/SCENARIO.yaml --set terrain.data=DATA --out OUT --no-plots
/// EXTRA...` in `dir`, which must exit 0.
fn mdp_run(dir: &Path, scenario: &str, data: &Path, out: &str, extra: &[&str]) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems/mdp")
        .join(format!("{scenario}.yaml"));
    let set = format!("terrain.data={}", data.display());
    let mut args = vec![
        "mdp",
        "run",
        file.to_str().unwrap(),
        "--set",
        &set,
        "--out",
        out,
        "--no-plots",
    ];
    args.extend_from_slice(extra);
    let output = loam(dir, &args);
    assert_eq!(output.status, Some(0), "{}", output.dump());
}

/// The two media of the paper's experiments, cut as its data were.
fn media() -> [(&'static str, fn(BeyondData) -> WrenchSpace); 2] {
    [("sand", cut_sand), ("pebbles", cut_pebbles)]
}

/// The spec's test object: 0.10 × 0.30 m, centre of mass 0.15 m up, `mass` kg.
fn foot(mass: f64) -> PlanarRobot {
    PlanarFootParams {
        mass,
        width: 0.10,
        height: 0.30,
        com_height: 0.15,
        ..Default::default()
    }
    .build(G)
}

/// The largest F_z of the set's vertices at (d, φ): its vertical capacity.
fn vertical_capacity(set: &dyn WrenchSet, depth: f64, tilt: f64) -> f64 {
    set.query(depth, tilt)
        .vertices
        .iter()
        .map(|w| w[1])
        .fold(0.0, f64::max)
}

/// The sole centre's depth and the foot's tilt from the foot's (x, z, pitch).
fn sole(q: &[f64]) -> (f64, f64) {
    (q[1] - 0.15 * q[2].cos(), q[2])
}

/// What a run of the foot did.
struct Drop {
    q: Vec<f64>,
    v: Vec<f64>,
    /// The deepest sole depth reached [m] (negative).
    deepest: f64,
    /// The largest F_z the ground put on the foot [N].
    largest_fz: f64,
    /// Steps with the foot outside the data's box.
    outside_steps: usize,
}

fn drop_foot(set: WrenchSpace, mass: f64, q0: [f64; 3], v0: [f64; 3], steps: usize) -> Drop {
    let robot = foot(mass);
    let sim = MdpSim::uniform(&robot, Arc::new(set), MdpOptions::default()).unwrap();
    let (mut q, mut v) = (q0.to_vec(), v0.to_vec());
    let mut drop = Drop {
        q: vec![],
        v: vec![],
        deepest: 0.0,
        largest_fz: 0.0,
        outside_steps: 0,
    };
    for _ in 0..steps {
        let report = sim.step(&q, &v, &[0.0; 3]).unwrap();
        let contact = &report.contacts[0];
        drop.largest_fz = drop.largest_fz.max(contact.wrench[1]);
        drop.outside_steps += usize::from(contact.outside);
        (q, v) = (report.q, report.v);
        drop.deepest = drop.deepest.min(sole(&q).0);
        if !sole(&q).0.is_finite() || sole(&q).0 < -5.0 {
            break;
        }
    }
    drop.q = q;
    drop.v = v;
    drop
}

fn speed(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

#[test]
fn the_set_grows_beyond_the_deepest_node_at_the_rate_of_the_deepest_layers() {
    let set = cut_sand(BeyondData::Extrapolate);
    let full = WrenchSpace::load(&shipped("rft_sand_like.yaml")).unwrap();
    // Pure down at the deepest node: ζ|d|A = 0.4 N/cm³ × 5 cm × 100 cm² = 200 N.
    let deepest = vertical_capacity(&set, -DEPTH_CUT, 0.0);
    assert!((deepest - 200.0).abs() < 1e-6, "{deepest}");
    for depth in [-0.06, -0.08, -0.1] {
        let query = set.query(depth, 0.0);
        assert!(query.outside && query.clamped.is_none());
        let capacity = vertical_capacity(&set, depth, 0.0);
        // RFT's pure-down force is linear in depth: the extension reproduces it exactly, and
        // with it the full data's nodes.
        let linear = 4000.0 * -depth;
        let from_full = vertical_capacity(&full, depth, 0.0);
        println!(
            "d = {depth}: capacity {capacity:.3} N (RFT {linear:.3}, full data {from_full:.3})"
        );
        assert!(
            (capacity / linear - 1.0).abs() < 1e-6,
            "{capacity} vs {linear}"
        );
    }
    // Every vertex keeps at least its size at the deepest node, at every tilt.
    for tilt in [0.0_f64, 0.45, -0.9, 1.2, -1.5] {
        let base = set
            .query(-DEPTH_CUT, tilt.clamp(-TILT_CUT, TILT_CUT))
            .vertices;
        let deep = set.query(-0.1, tilt).vertices;
        for (b, d) in base.iter().zip(&deep) {
            let norm = |w: &[f64; 3]| (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
            assert!(
                norm(d) >= norm(b) * (1.0 - 1e-12),
                "tilt {tilt}: {d:?} < {b:?}"
            );
        }
    }
    // Clamped, the set stops at the deepest node.
    let clamped = cut_sand(BeyondData::Clamp);
    let query = clamped.query(-0.1, 0.0);
    assert_eq!(query.clamped, Some((-DEPTH_CUT, 0.0)));
    assert!(query.outside);
    assert!((vertical_capacity(&clamped, -0.1, 0.0) - deepest).abs() < 1e-9);
}

#[test]
fn queries_outside_the_data_extrapolate_by_default_or_clamp_and_say_so() {
    let mut space = WrenchSpace::load(&shipped("rft_sand_like.yaml")).unwrap();
    assert_eq!(space.depth_range(), (-0.1, 0.0));
    assert_eq!(space.tilt_range(), (-1.5, 1.5));
    assert_eq!(space.beyond_data(), BeyondData::Extrapolate);
    // Extrapolated: flagged outside, not clamped; deeper is more (RFT's pure down is
    // 4000 N/m × |d|, and the deepest layers continue it).
    let deep = space.query(-0.25, 0.3);
    assert!(deep.outside);
    assert_eq!(deep.clamped, None);
    let pure_down = |q: &loam::terrain::wrench_set::WrenchQuery| q.vertices[0][1];
    assert!((pure_down(&space.query(-0.25, 0.0)) - 1000.0).abs() < 1e-6);
    assert!(pure_down(&deep) > pure_down(&space.query(-0.1, 0.3)));
    // Beyond π/2 the tilt is clamped in either mode.
    let over = space.query(-0.05, -2.0);
    assert_eq!(over.clamped, Some((-0.05, -std::f64::consts::FRAC_PI_2)));
    assert!(over.outside);
    let inside = space.query(-0.05, 1.0);
    assert!(!inside.outside && inside.clamped.is_none());

    space.set_beyond_data(BeyondData::Clamp);
    let deep = space.query(-0.25, 0.3);
    assert_eq!(deep.clamped, Some((-0.1, 0.3)));
    assert!(deep.outside);
    assert_eq!(deep.vertices, space.query(-0.1, 0.3).vertices);
    let tilted = space.query(-0.05, -2.0);
    assert_eq!(tilted.clamped, Some((-0.05, -1.5)));
    assert_eq!(space.query(-0.05, 1.0).clamped, None);
    let above = space.query(0.02, 3.0);
    assert_eq!(above.clamped, None);
    assert!(!above.outside);
    assert!(above.vertices.iter().flatten().all(|&c| c == 0.0));
    assert_eq!(above.vertices.len(), 26);
}

/// The choice is a field of the data file, `interpolation.beyond_data`, written only when it
/// is not the default (so files written before it existed read and write the same).
#[test]
fn beyond_data_is_a_field_of_the_data_file() {
    let mut data = cut_sand_data(BeyondData::Extrapolate);
    assert!(data.to_yaml().contains("interpolation: {kernel: cubic}\n"));
    data.interpolation.beyond_data = BeyondData::Clamp;
    let text = data.to_yaml();
    assert!(text.contains("interpolation: {kernel: cubic, beyond_data: clamp}\n"));
    let dir = TempDir::new("beyond_field");
    let path = dir.path().join("clamped.yaml");
    std::fs::write(&path, &text).unwrap();
    let space = WrenchSpace::load(&path).unwrap();
    assert_eq!(space.beyond_data(), BeyondData::Clamp);
    assert_eq!(space.query(-0.08, 0.2).clamped, Some((-DEPTH_CUT, 0.2)));
}

/// A foot of 25.5 kg (weight 250 N, above the deepest node's 200 N) released at rest with its
/// sole on the surface: the work of a capacity k d (k = 4000 N/m) balances the fall at
/// d = 2 W / k = 0.125 m, 2.5 times the deepest node. Clamped at 200 N it never stops.
#[test]
fn a_body_pushed_twice_as_deep_as_the_data_feels_more_than_the_deepest_node_and_stops() {
    let mass = 250.0 / G;
    let k = 4000.0;
    let expected = 2.0 * 250.0 / k;
    let deepest_node = 200.0;
    let start = [0.0, 0.15, 0.0];
    let run = drop_foot(
        cut_sand(BeyondData::Extrapolate),
        mass,
        start,
        [0.0; 3],
        2000,
    );
    let (depth, tilt) = sole(&run.q);
    println!(
        "extrapolated: rest depth {:.5} m (energy balance {expected:.5}), deepest {:.5}, \
         largest F_z {:.1} N, |v| {:.2e}, {} steps outside",
        -depth,
        -run.deepest,
        run.largest_fz,
        speed(&run.v),
        run.outside_steps
    );
    assert!(-run.deepest >= 2.0 * DEPTH_CUT, "{}", run.deepest);
    assert!(run.largest_fz > 1.2 * deepest_node, "{}", run.largest_fz);
    assert!(speed(&run.v) < 1e-6, "not at rest: {:?}", run.v);
    assert!((-depth / expected - 1.0).abs() < 0.01, "rest depth {depth}");
    assert!(tilt.abs() < 1e-9);
    assert!(run.outside_steps > 0);

    let sunk = drop_foot(cut_sand(BeyondData::Clamp), mass, start, [0.0; 3], 2000);
    println!(
        "clamped: depth {:.3} m after 2 s, speed {:.2} m/s",
        -sole(&sunk.q).0,
        speed(&sunk.v)
    );
    assert!(sole(&sunk.q).0 < -1.0 && speed(&sunk.v) > 1.0);
}

/// The paper's upright drop (its Fig. 9) on the cut data: the test foot (7.357 kg) from
/// 2 cm. A rate-independent bed stops a dropped foot where the work of its vertical capacity
/// has taken the fall's energy, ∫₀^d* C(s) ds = W (0.02 + d*), C read from the set itself;
/// there the weight is inside W (C(d*) ≥ W) and the ground carries exactly W.
#[test]
fn an_upright_foot_dropped_on_cut_data_rests_at_the_balance_of_its_weight_and_the_capacity() {
    for (medium, cut) in media() {
        let set = cut(BeyondData::Extrapolate);
        let mass = 7.357;
        let weight = mass * G;
        // The balance from the set's own capacity, by the trapezoidal rule in 0.1 mm steps.
        let (mut work, mut d, ds) = (0.0, 0.0, 1e-4);
        let mut previous = 0.0;
        let balance = loop {
            let next = vertical_capacity(&set, -(d + ds), 0.0);
            let more = work + 0.5 * (previous + next) * ds;
            if more >= weight * (0.02 + d + ds) {
                // Linear within the last interval.
                let (f0, f1) = (work - weight * (0.02 + d), more - weight * (0.02 + d + ds));
                break d + ds * f0 / (f0 - f1);
            }
            (work, d, previous) = (more, d + ds, next);
        };
        // Where the capacity first carries the weight (the static balance), for the record.
        let static_depth = (1..)
            .map(|k| k as f64 * 1e-5)
            .find(|&d| vertical_capacity(&set, -d, 0.0) >= weight)
            .unwrap();
        let run = drop_foot(set, mass, [0.0, 0.17, 0.0], [0.0; 3], 2000);
        let (depth, tilt) = sole(&run.q);
        let capacity = vertical_capacity(&cut(BeyondData::Extrapolate), depth, 0.0);
        println!(
        "upright on {medium}: rest depth {:.5} m, work balance {balance:.5} m (C(d) = W at {static_depth:.5} m), \
         |v| {:.2e}, capacity at rest {capacity:.1} N for W = {weight:.1} N, {} steps outside",
        -depth,
        speed(&run.v),
        run.outside_steps
    );
        assert!(speed(&run.v) < 1e-6, "not at rest: {:?}", run.v);
        assert!(tilt.abs() < 1e-9, "tipped: {tilt}");
        assert!(
            (-depth / balance - 1.0).abs() < 0.05,
            "{depth} vs {balance}"
        );
        assert!(capacity >= weight);
    }
}

/// The paper's tilted drop (its Fig. 9): released 2 cm up at 0.2 rad, the foot tips over and
/// comes to rest lying on its side (1.2 < |φ| ≤ π/2, not rolled over), although the data end
/// at 0.9 rad of tilt. RFT evaluated directly (no data) rests at 1.301 rad, the full shipped
/// data (to 1.5 rad) at 1.303. Clamped at 0.9 rad the foot rolls over and sinks without limit.
#[test]
fn a_foot_dropped_tilted_on_cut_data_tips_over_and_rests_lying_down() {
    let start = [-0.15 * 0.2_f64.sin(), 0.02 + 0.15 * 0.2_f64.cos(), 0.2];
    for (medium, cut) in media() {
        let run = drop_foot(cut(BeyondData::Extrapolate), 7.357, start, [0.0; 3], 3000);
        let (depth, tilt) = sole(&run.q);
        println!(
        "{medium}, extrapolated: tilt {tilt:.4} rad, sole depth {:.4} m, |v| {:.2e}, deepest {:.4} m, \
         {} of 3000 steps outside",
        -depth,
        speed(&run.v),
        -run.deepest,
        run.outside_steps
    );
        assert!(tilt.abs() > 1.2 && tilt.abs() <= FRAC_PI_2, "tilt {tilt}");
        // |v| over (ẋ, ż, ψ̇): every part of the foot slower than 1 mm/s (its far corner is
        // within 0.35 m of the centre of mass, so ψ̇ ≤ 1e-3 bounds it by 0.35 mm/s).
        assert!(speed(&run.v) < 1e-3, "not at rest: {:?}", run.v);
        assert!(-depth < 2.0 * DEPTH_CUT, "sole {depth}");
        assert!(run.outside_steps > 1000);

        if medium == "sand" {
            let rolled = drop_foot(cut(BeyondData::Clamp), 7.357, start, [0.0; 3], 3000);
            let (depth, tilt) = sole(&rolled.q);
            println!("clamped: tilt {tilt:.4} rad, sole depth {:.3} m", -depth);
            assert!(tilt.abs() > FRAC_PI_2 && -depth > 1.0);
        }
    }
}

/// `loam mdp run` on the cut data: the steps outside the data per foot in `scenario.json` and
/// `trajectory.csv`, a flag on the summary line when they are more than 20 % of the run, and
/// `--beyond-data clamp` taking the clamp instead; a run inside its data is not flagged.
#[test]
fn mdp_run_counts_steps_outside_the_data_per_foot_and_flags_a_run_mostly_outside() {
    let dir = TempDir::new("outside_data");
    std::fs::write(
        dir.path().join("cut.yaml"),
        cut_sand_data(BeyondData::Extrapolate).to_yaml(),
    )
    .unwrap();
    let scenario = |name: &str, pitch: f64, data: &str| {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            format!(
                "robot: {{model: planar_foot, width: 0.10, height: 0.30, com_height: 0.15}}\n\
                 terrain: {{data: {data}}}\n\
                 start:\n  pose: {{x: {x}, z: {z}, pitch: {pitch}}}\n\
                 control: {{kind: none}}\nduration: 1.5\ntime_step: 0.001\n",
                x = -0.15 * pitch.sin(),
                z = 0.02 + 0.15 * pitch.cos(),
            ),
        )
        .unwrap();
    };
    scenario("tilted", 0.2, "cut.yaml");
    let full = shipped("rft_sand_like.yaml");
    scenario("inside", 0.0, full.to_str().unwrap());
    let run = |name: &str, extra: &[&str]| {
        let file = format!("{name}.yaml");
        let mut args = vec!["mdp", "run", &file, "--out", name, "--no-plots"];
        args.extend_from_slice(extra);
        let out = loam(dir.path(), &args);
        assert_eq!(out.status, Some(0), "{}", out.dump());
        (out, read_json(&dir.path().join(name).join("scenario.json")))
    };

    let (out, json) = run("tilted", &[]);
    let summary = &json["summary"];
    println!("{}{summary}", out.stdout);
    assert_eq!(json["beyond_data"], "extrapolate");
    let steps = summary["steps"].as_u64().unwrap() as f64;
    let per_foot = &summary["outside_data_steps"][0];
    assert_eq!(per_foot[0], "foot");
    let outside = per_foot[1].as_u64().unwrap() as f64;
    let share = summary["outside_data_share"].as_f64().unwrap();
    assert!(outside > 0.2 * steps, "{outside} of {steps}");
    assert!((share - outside / steps).abs() < 1e-12, "one foot: {share}");
    let first_line = out.stdout.lines().next().unwrap();
    assert!(first_line.contains("[FLAG: "), "{first_line}");
    assert!(out
        .stdout
        .contains("extrapolated there (steps per foot: foot "));
    // The table's column agrees with the count (its last row repeats the final state).
    let text = std::fs::read_to_string(dir.path().join("tilted/trajectory.csv")).unwrap();
    let mut lines = text.lines();
    let k = lines
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "foot_outside")
        .expect("a foot_outside column");
    let ones: f64 = lines
        .map(|l| l.split(',').nth(k).unwrap().parse::<f64>().unwrap())
        .collect::<Vec<_>>()
        .split_last()
        .map(|(_, rows)| rows.iter().sum())
        .unwrap();
    assert_eq!(ones, outside);
    let rest_tilt = summary["final_base"][2].as_f64().unwrap();
    assert!(rest_tilt > 1.2 && rest_tilt < FRAC_PI_2, "{rest_tilt}");

    let (out, json) = run("tilted", &["--beyond-data", "clamp"]);
    assert_eq!(json["beyond_data"], "clamp");
    assert!(out.stdout.contains("clamped into it"), "{}", out.stdout);
    assert!(json["summary"]["final_base"][1].as_f64().unwrap() < -0.5);

    let (out, json) = run("inside", &[]);
    assert_eq!(json["summary"]["outside_data_steps"][0][1], 0);
    assert!(!out.stdout.contains("FLAG"), "{}", out.stdout);
}

/// The quadruped's RFT data cut at 3 cm deep and 0.9 rad (its feet settle about 5 cm deep):
/// standing and on the 0.2 rad slope, the shipped scenarios end where they end on the full
/// data (to 10 cm), and clamped they sink (measured: base 0.75-0.85 m down after 1.5 s).
#[test]
fn the_quadruped_on_data_cut_above_its_rest_depth_stands_and_stops_as_on_the_full_data() {
    let dir = TempDir::new("quadruped_cut");
    let full = shipped("rft_sand_quadruped.yaml");
    let mut data = WrenchSpaceData::load(&full).unwrap();
    data.nodes
        .retain(|n| n.depth >= -0.03 - 1e-12 && n.tilt <= TILT_CUT + 1e-12);
    let cut = dir.path().join("cut.yaml");
    std::fs::write(&cut, data.to_yaml()).unwrap();
    let run = |scenario: &str, data: &Path, beyond: &str| {
        let out = format!("{scenario}_{beyond}");
        mdp_run(dir.path(), scenario, data, &out, &["--beyond-data", beyond]);
        read_json(&dir.path().join(&out).join("scenario.json"))["summary"].clone()
    };
    let number = |summary: &serde_json::Value, key: &str, i: usize| -> f64 {
        summary[key][i]
            .as_f64()
            .unwrap_or_else(|| summary[key][i][1].as_f64().unwrap())
    };
    for scenario in ["quadruped_stand", "quadruped_slope"] {
        let reference = run(scenario, &full, "extrapolate");
        let extrapolated = run(scenario, &cut, "extrapolate");
        let clamped = run(scenario, &cut, "clamp");
        println!(
            "{scenario}: full data base {}, deepest {}; cut and extrapolated base {}, deepest {}, \
             outside {}; cut and clamped base {}",
            reference["final_base"],
            reference["deepest_m"],
            extrapolated["final_base"],
            extrapolated["deepest_m"],
            extrapolated["outside_data_share"],
            clamped["final_base"]
        );
        assert_eq!(reference["outside_data_share"], 0.0);
        assert!(extrapolated["outside_data_share"].as_f64().unwrap() > 0.5);
        assert!(extrapolated["final_speed"].as_f64().unwrap() < 1e-3);
        for i in 0..4 {
            let (a, b) = (
                number(&extrapolated, "deepest_m", i),
                number(&reference, "deepest_m", i),
            );
            assert!((a / b - 1.0).abs() < 0.05, "foot {i}: {a} vs {b}");
        }
        for i in 0..2 {
            let (a, b) = (
                number(&extrapolated, "final_base", i),
                number(&reference, "final_base", i),
            );
            assert!((a - b).abs() < 0.01, "base {i}: {a} vs {b}");
        }
        assert!(number(&clamped, "final_base", 1) < number(&reference, "final_base", 1) - 0.3);
    }
}

/// The paper's quadruped experiments on loam's RFT Sand-like medium and a pebble-like medium
/// ten times stiffer (ζ = 0.4 and 4 N/cm³), each with data to 0.05 m deep and 0.9 rad: the
/// standing quadruped (PD servos, `quadruped_stand`) comes to rest, its joints slower than
/// 0.01 rad/s over the last 0.2 s (an ankle oscillation on stiff media was reported; on these
/// media the joints end below 1e-4 rad/s); on the 0.2 rad slope (`quadruped_slope`, joints
/// locked) it slides downhill and stops, higher on the stiffer medium.
#[test]
fn the_quadruped_stands_still_and_stops_on_a_slope_on_sand_and_on_a_stiffer_medium() {
    let dir = TempDir::new("quadruped_media");
    let mut stopped_height = Vec::new();
    for zeta in ["0.4", "4"] {
        let data = format!("zeta{zeta}.yaml");
        let built = loam(
            dir.path(),
            &[
                "wrench-space",
                "build",
                "--generator",
                "rft",
                "--medium",
                "generic",
                "--zeta",
                zeta,
                "--foot-width",
                "0.15",
                "--foot-height",
                "0.10",
                "--foot-thickness",
                "0.15",
                "--torque-point",
                "0.05",
                "--depth-max",
                "0.05",
                "--depth-step",
                "0.005",
                "--tilt-max",
                "0.9",
                "--tilt-step",
                "0.15",
                "--out",
                &data,
            ],
        );
        assert_eq!(built.status, Some(0), "{}", built.dump());
        for scenario in ["quadruped_stand", "quadruped_slope"] {
            let out = format!("{scenario}-{zeta}");
            mdp_run(dir.path(), scenario, &dir.path().join(&data), &out, &[]);
            let text = std::fs::read_to_string(dir.path().join(&out).join("trajectory.csv"));
            let text = text.unwrap();
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().unwrap().split(',').collect();
            let rows: Vec<Vec<f64>> = lines
                .map(|l| {
                    l.split(',')
                        .map(|v| v.parse().unwrap_or(f64::NAN))
                        .collect()
                })
                .collect();
            let joint_rates: Vec<usize> = (0..header.len())
                .filter(|&k| {
                    header[k].starts_with("d_") && !["d_x", "d_z", "d_pitch"].contains(&header[k])
                })
                .collect();
            assert_eq!(joint_rates.len(), 12);
            let late = &rows[rows.len() - 200..];
            let fastest = late
                .iter()
                .flat_map(|r| joint_rates.iter().map(move |&k| r[k].abs()))
                .fold(0.0, f64::max);
            let summary =
                read_json(&dir.path().join(&out).join("scenario.json"))["summary"].clone();
            let base = |i: usize| summary["final_base"][i].as_f64().unwrap();
            println!("{scenario} on zeta {zeta}: fastest joint {fastest:.2e} rad/s in the last 0.2 s, base ({:.4}, {:.4}) m", base(0), base(1));
            assert!(
                fastest < 0.01,
                "{scenario} on zeta {zeta}: a joint at {fastest} rad/s"
            );
            assert!(summary["final_speed"].as_f64().unwrap() < 1e-3, "{summary}");
            if scenario == "quadruped_slope" {
                assert!(
                    base(0) < -0.01,
                    "zeta {zeta}: did not slide downhill: {summary}"
                );
                stopped_height.push(base(1));
            }
        }
    }
    assert!(
        stopped_height[1] > stopped_height[0] + 0.01,
        "stopped at z {stopped_height:?} (sand, stiffer)"
    );
}
