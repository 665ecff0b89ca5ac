//! `loam material calibrate`: each candidate's measurements are the DEM experiments a user can
//! run by hand (`dem prepare` of the bed with the candidate's values written into the scene,
//! `dem intrude` of the target's intruder into it), its residuals and score are those of its
//! values, the best candidate is written as a material file that reads back, the exit code
//! says whether the targets were met, and bad input exits 2 with nothing written.

use std::path::Path;

use crate::common::run::{assert_exit, loam, read_json};
use crate::common::temp_dir::TempDir;

/// Coarse grains (4 mm) so that each experiment runs in about a second; the target numbers
/// are made up (the tests are about the mechanics, not poppy seeds).
const MATERIAL: &str = "name: tiny
grains: { radius: 0.004, size_spread: 0.1, density: 1000, friction: 0.5, wall_friction: 0.3 }
contact: { law: hertz_mindlin, youngs_modulus: 1.0e7, poisson_ratio: 0.3, restitution: 0.5, rolling_friction: 0.0 }
targets:
  - { quantity: packing_fraction, value: 0.57, tolerance: 0.02, units: \"1\", source: test }
  - quantity: intrusion_force
    intruder: { shape: disc, radius: 0.02, thickness: 0.005 }
    speed: 0.1
    depths: [0.005, 0.010]
    values: [1.0, 2.0]
    units: N
    source: test
  - { quantity: collapse_runout, aspect_ratios: [1.0], values: [1.2], units: \"1\", source: test }
";

const BED: &str = "material: tiny.yaml
container: { shape: cylinder, radius: 0.04 }
grains: { fill_height: 0.03, seed: 3 }
settle: { kinetic_energy: 1.0e-8, max_time: 1.0 }
";

const COLUMN: &str = "material: tiny.yaml
container: { shape: box, half_x: 0.12, half_y: 0.016 }
grains: { wall_friction: 0.0, seed: 1 }
fills:
  - { x: [-0.12, -0.072], fill_height: 0.037 }
walls:
  - { axis: x, at: -0.072, grains: below, remove_at: 0.0 }
rough_floor: {}
settle: { kinetic_energy: 1.0e-9, max_time: 1.0 }
";

fn setup(label: &str) -> TempDir {
    let dir = TempDir::new(label);
    for (name, text) in [
        ("tiny.yaml", MATERIAL),
        ("bed.yaml", BED),
        ("column.yaml", COLUMN),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn calibrate(dir: &Path, extra: &[&str]) -> crate::common::run::Output {
    let mut args = vec![
        "material",
        "calibrate",
        "tiny.yaml",
        "--bed",
        "bed.yaml",
        "--column",
        "column.yaml",
        "--collapse-time",
        "0.4",
        "--out",
        "out",
    ];
    args.extend_from_slice(extra);
    loam(dir, &args)
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn calibration_measures_each_candidate_as_the_dem_commands_do_and_keeps_the_best() {
    let dir = setup("calibrate");
    let out = calibrate(dir.path(), &["--vary", "contact.rolling_friction=0,0.2"]);
    let record = read_json(&dir.path().join("out/calibration.json"));
    let candidates = record["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2);
    // Residuals and scores are those of the values; the best has the lowest score; the exit
    // code says whether it met every target.
    let mut scores = Vec::new();
    for c in candidates {
        let ms = c["measurements"].as_array().unwrap();
        assert_eq!(ms.len(), 4, "packing, two depths, one collapse: {c}");
        let mut worst: f64 = 0.0;
        for m in ms {
            let (t, v, tol) = (f(&m["target"]), f(&m["value"]), f(&m["tolerance"]));
            assert!((f(&m["residual"]) - (v - t) / t).abs() < 1e-12, "{m}");
            assert!((f(&m["score"]) - (v - t).abs() / tol).abs() < 1e-12, "{m}");
            worst = worst.max(f(&m["score"]));
        }
        assert!((f(&c["score"]) - worst).abs() < 1e-12);
        scores.push(worst);
    }
    let best = record["best"].as_u64().unwrap() as usize;
    assert!(scores.iter().all(|s| *s >= scores[best]), "{scores:?}");
    let met = record["met"].as_bool().unwrap();
    assert_eq!(met, scores[best] <= 1.0);
    assert_exit(&out, if met { 0 } else { 1 }, &[]);
    assert!(
        out.stdout.contains("best: rolling_friction="),
        "{}",
        out.dump()
    );
    // The intrusion forces' tolerance is 15 % of the target, the packing's its own 0.02.
    let first = candidates[0]["measurements"].as_array().unwrap();
    assert!((f(&first[0]["tolerance"]) - 0.02).abs() < 1e-15);
    assert!((f(&first[1]["tolerance"]) - 0.15).abs() < 1e-12);

    // Candidate 2 (rolling friction 0.2) by hand: the bed scene with the value written in.
    std::fs::write(
        dir.path().join("bed02.yaml"),
        format!("{BED}contact: {{ rolling_friction: 0.2 }}\n"),
    )
    .unwrap();
    let prepared = loam(
        dir.path(),
        &["dem", "prepare", "bed02.yaml", "-o", "bed02.bed"],
    );
    assert_exit(&prepared, 0, &[]);
    let info = loam(dir.path(), &["dem", "info", "bed02.bed"]);
    let text = info.stdout.clone();
    let fraction: f64 = text
        .split("volume fraction ")
        .nth(1)
        .and_then(|s| s.split(|c: char| c == ',' || c.is_whitespace()).next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no volume fraction in {text}"));
    let second = candidates[1]["measurements"].as_array().unwrap();
    assert!(
        (f(&second[0]["value"]) - fraction).abs() < 6e-4,
        "calibration's packing {} against dem prepare's {fraction}",
        second[0]["value"]
    );
    // ... and the intruder pushed into it: the force at 5 and 10 mm.
    let intruded = loam(
        dir.path(),
        &[
            "dem",
            "intrude",
            "bed02.bed",
            "--radius",
            "0.02",
            "--thickness",
            "0.005",
            "--velocity",
            "0.1",
            "--depth",
            "0.012",
            "-o",
            "force.csv",
        ],
    );
    assert_exit(&intruded, 0, &[]);
    let csv = std::fs::read_to_string(dir.path().join("force.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let (d, fz) = (
        header.iter().position(|h| *h == "depth").unwrap(),
        header.iter().position(|h| *h == "F_z").unwrap(),
    );
    let rows: Vec<(f64, f64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            (c[d], c[fz])
        })
        .collect();
    for (k, depth) in [(1, 0.005), (2, 0.010)] {
        let by_hand = rows
            .windows(2)
            .find(|w| w[0].0 <= depth && depth <= w[1].0)
            .map(|w| w[0].1 + (w[1].1 - w[0].1) * (depth - w[0].0) / (w[1].0 - w[0].0))
            .expect("the intrusion reached the depth");
        let calibrated = f(&second[k]["value"]);
        assert!(
            (calibrated - by_hand).abs() <= 1e-9 * by_hand.abs().max(1.0),
            "force at {depth} m: calibration {calibrated}, dem intrude {by_hand}"
        );
    }
    // The collapse ran on its own settled aspect ratio and was held to the target there.
    let collapse = &second[3];
    let a = f(&collapse["aspect_ratio"]);
    assert!(a > 0.5 && a < 2.0, "settled aspect ratio {a}");
    assert!(
        (f(&collapse["target"]) - 1.2 * a).abs() < 1e-9,
        "{collapse}"
    );

    // The best candidate as a material file: it reads back, with the best value.
    let best_value = f(&candidates[best]["values"][0][1]);
    let file = dir.path().join("out/tiny.calibrated.yaml");
    let again = loam(
        dir.path(),
        &[
            "material",
            "calibrate",
            file.to_str().unwrap(),
            "--bed",
            "bed.yaml",
            "--column",
            "column.yaml",
            "--vary",
            "grains.friction=0.5",
            "--collapse-time",
            "0.05",
            "--out",
            "again",
        ],
    );
    assert!(
        matches!(again.status, Some(0) | Some(1)),
        "{}",
        again.dump()
    );
    let material: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        material["contact"]["rolling_friction"].as_f64(),
        Some(best_value)
    );
    for name in ["calibration.csv", "calibration.png", "calibration.svg"] {
        assert!(dir.path().join("out").join(name).is_file(), "{name}");
    }
    // `loam plot` redraws the figure from the record.
    std::fs::remove_file(dir.path().join("out/calibration.png")).unwrap();
    let plotted = loam(dir.path(), &["plot", "out"]);
    assert_exit(&plotted, 0, &[]);
    assert!(dir.path().join("out/calibration.png").is_file());
    // One CSV line per measurement.
    let lines = std::fs::read_to_string(dir.path().join("out/calibration.csv"))
        .unwrap()
        .lines()
        .count();
    assert_eq!(lines, 1 + 2 * 4);
}

#[test]
fn calibration_refuses_bad_input_and_writes_nothing() {
    let dir = setup("calibrate-bad");
    std::fs::write(
        dir.path().join("bare.yaml"),
        "name: bare\ngrains: { radius: 0.004, density: 1000, friction: 0.5 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("no_intruder.yaml"),
        MATERIAL.replace(
            "    intruder: { shape: disc, radius: 0.02, thickness: 0.005 }\n",
            "",
        ),
    )
    .unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--vary", "contact.rolling_friction=-0.1"],
            "rolling_friction",
        ),
        (&["--vary", "grains.density=900"], "cannot be calibrated"),
        (&["--vary", "contact.rolling_friction=x"], "is not a number"),
        (&["--collapse-time", "0"], "--collapse-time"),
        (
            &[
                "--vary",
                "contact.rolling_friction=0",
                "--vary",
                "contact.rolling_friction=1",
            ],
            "twice",
        ),
    ];
    for (extra, needle) in cases {
        let out = calibrate(dir.path(), extra);
        assert_exit(&out, 2, &[needle]);
        assert!(!dir.path().join("out").exists(), "{extra:?} wrote out/");
    }
    for (file, bed, needle) in [
        ("bare.yaml", "bed.yaml", "no target"),
        ("no_intruder.yaml", "bed.yaml", "intruder"),
        ("tiny.yaml", "missing.yaml", "missing.yaml"),
    ] {
        let out = loam(
            dir.path(),
            &["material", "calibrate", file, "--bed", bed, "--out", "out"],
        );
        assert_exit(&out, 2, &[needle]);
        assert!(!dir.path().join("out").exists());
    }
}
