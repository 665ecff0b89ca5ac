//! The transcription's error per interval (`solution.json` `transcription_error`, MODEL.md
//! 5.3) against what it must be: on a double integrator (a cart pushed by a force, its
//! minimum-effort acceleration linear in time, its position cubic) the trapezoidal rule's
//! local error is h²|a_k+1 − a_k| / 12 exactly, so it falls 8-fold when h halves, and
//! Hermite-Simpson integrates the cubic exactly.

use std::path::Path;

use crate::common::csv::{column, read_csv};
use crate::common::run::{assert_exit, loam, read_json};
use crate::common::temp_dir::TempDir;

const SLIDER: &str = r#"name: slider
locked: [x, z, pitch]
bodies:
  - {name: base, mass: 1.0, inertia: 0.01}
  - name: cart
    mass: 2.0
    inertia: 0.01
    joint: {name: slide, parent: base, type: prismatic, axis: [1.0, 0.0]}
actuators:
  - {name: push, joint: slide, kind: force, limit: [-10.0, 10.0]}
contacts:
  - {name: foot, body: base, point: [0.0, 0.0], shape: point}
"#;

const TRANSFER: &str = r#"name: transfer
robot: {file: slider.yaml}
terrain: {model: rigid}
schedule:
  - {contacts: [foot], nodes: 11, duration: [1.0, 1.0]}
task:
  start: {set: {slide: 0.0}}
  end: {set: {slide: 0.3}}
  objective: effort
"#;

fn solve(dir: &TempDir, name: &str, sets: &[&str]) -> serde_json::Value {
    let mut args = vec!["solve", "transfer.yaml", "--out", name, "-q"];
    for set in sets {
        args.extend(["--set", set]);
    }
    assert_exit(&loam(dir.path(), &args), 0, &[]);
    read_json(&dir.path().join(name).join("solution.json"))
}

fn errors(solution: &serde_json::Value) -> Vec<f64> {
    solution["transcription_error"]["intervals"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect()
}

#[test]
fn the_interval_error_is_the_schemes_local_error() {
    let dir = TempDir::new("transcription-error");
    dir.write("slider.yaml", SLIDER);
    dir.write("transfer.yaml", TRANSFER);

    let coarse = solve(&dir, "n11", &[]);
    let e = errors(&coarse);
    assert_eq!(e.len(), 10);
    let (header, rows) = read_csv(&dir.path().join("n11/trajectory.csv"));
    let a = column(&header, &rows, "dd_slide");
    let slide = column(&header, &rows, "slide");
    let scale = 1.0 + slide.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let h = 0.1;
    for k in 0..10 {
        let expected = h * h * (a[k + 1] - a[k]).abs() / 12.0 / scale;
        assert!(
            (e[k] - expected).abs() <= 1e-6 * expected + 1e-12,
            "interval {k}: {} against h²|Δa|/12 = {expected}",
            e[k]
        );
    }

    // Local error O(h³): 8-fold per halving.
    let mut previous = coarse["transcription_error"]["max"].as_f64().unwrap();
    for nodes in [21, 41] {
        let fine = solve(
            &dir,
            &format!("n{nodes}"),
            &[&format!("schedule.0.nodes={nodes}")],
        );
        let max = fine["transcription_error"]["max"].as_f64().unwrap();
        let ratio = previous / max;
        assert!((7.5..8.5).contains(&ratio), "{nodes} nodes: ratio {ratio}");
        previous = max;
    }

    let simpson = solve(&dir, "hs", &["transcription.scheme=hermite_simpson"]);
    let max = simpson["transcription_error"]["max"].as_f64().unwrap();
    assert!(max < 1e-9, "Hermite-Simpson on a cubic: {max}");
}

/// Every shipped planar problem's solution reports an error per interval of every phase.
#[test]
fn every_phase_reports_its_intervals() {
    let dir = TempDir::new("transcription-error-shipped");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = dir.path().join("step");
    let output = loam(
        manifest,
        &[
            "solve",
            "problems/planar_foot_step.yaml",
            "--out",
            run.to_str().unwrap(),
            "-q",
        ],
    );
    assert_exit(&output, 0, &[]);
    let solution = read_json(&run.join("solution.json"));
    let record = &solution["transcription_error"];
    let phases = solution["phases"].as_array().unwrap();
    let intervals = record["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), phases.len());
    let (mut max, mut sum) = (0.0_f64, 0.0_f64);
    for (phase, errors) in phases.iter().zip(intervals) {
        let errors = errors.as_array().unwrap();
        assert_eq!(errors.len() + 1, phase["nodes"].as_u64().unwrap() as usize);
        for e in errors {
            let e = e.as_f64().unwrap();
            assert!(e.is_finite() && e >= 0.0);
            max = max.max(e);
            sum += e;
        }
    }
    assert_eq!(record["max"].as_f64(), Some(max));
    // The total is the intervals' sum (to rounding: the order of the additions).
    let total = record["total"].as_f64().expect("transcription_error.total");
    assert!(
        (total - sum).abs() <= 1e-12 * sum && total >= max,
        "total {total}, sum {sum}"
    );
}
