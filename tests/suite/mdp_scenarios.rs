//! The wrench-space paper's experiments as shipped scenarios, run through the real binary
//! (`loam mdp run`) on the shipped RFT wrench spaces: what each must show, the result folder
//! and its figures, and clear errors for bad scenario files.

use crate::common;

use std::path::Path;

use common::run::{loam, read_json, shipped};
use common::temp_dir::TempDir;

/// Runs a shipped scenario into `dir/out` and returns its `scenario.json` and trajectory.
fn run_scenario(dir: &TempDir, name: &str, extra: &[&str]) -> (serde_json::Value, Table) {
    let path = shipped(&format!("mdp/{name}.yaml"));
    let mut args = vec!["mdp", "run", path.as_str(), "--out", "out"];
    args.extend_from_slice(extra);
    let out = loam(dir.path(), &args);
    assert_eq!(out.status, Some(0), "{}", out.dump());
    let json = read_json(&dir.path().join("out/scenario.json"));
    let table = Table::read(&dir.path().join("out/trajectory.csv"));
    (json, table)
}

/// A CSV with a header, as numbers.
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<f64>>,
}

impl Table {
    fn read(path: &Path) -> Table {
        let text = std::fs::read_to_string(path).expect("read trajectory.csv");
        let mut lines = text.lines();
        let columns = lines
            .next()
            .expect("header")
            .split(',')
            .map(str::to_string)
            .collect();
        let rows = lines
            .map(|l| l.split(',').map(|c| c.parse().expect("a number")).collect())
            .collect();
        Table { columns, rows }
    }

    fn column(&self, name: &str) -> Vec<f64> {
        let k = self
            .columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.columns));
        self.rows.iter().map(|r| r[k]).collect()
    }
}

fn summary(json: &serde_json::Value, key: &str) -> f64 {
    json["summary"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("summary.{key}"))
}

/// Upright drop from 2 cm (spec M2 through the CLI): the foot stays upright and comes to rest
/// where the work of the bed's capacity k d (k = ζ A = 0.4 N/cm³ × 0.01 m² = 4000 N/m) has
/// taken the fall's energy: ½ k d*² = m g (0.02 + d*), d* = 0.0504 m.
#[test]
fn an_upright_foot_dropped_on_sand_sinks_to_the_energy_balance_depth_and_stays_upright() {
    let dir = TempDir::new("erect");
    let (json, table) = run_scenario(&dir, "foot_drop_erect", &[]);
    let (m, g, k, h): (f64, f64, f64, f64) = (7.357, 9.81, 4000.0, 0.02);
    let d_star = (m * g + ((m * g) * (m * g) + 2.0 * k * m * g * h).sqrt()) / k;
    let depth = -json["summary"]["final_depth_m"][0][1]
        .as_f64()
        .expect("depth");
    assert!(
        (depth / d_star - 1.0).abs() < 0.01,
        "rest depth {depth:.5} m, energy balance {d_star:.5} m"
    );
    let pitch = table.column("pitch");
    let worst = pitch.iter().fold(0.0_f64, |a, p| a.max(p.abs()));
    assert!(worst < 1e-9, "the upright foot tilted by {worst:e} rad");
    assert!(summary(&json, "final_speed") < 1e-6, "not at rest: {json}");
    for figure in ["mdp_run.png", "filmstrip.png"] {
        assert!(
            dir.path().join("out/plots").join(figure).is_file(),
            "{figure}"
        );
    }
}

/// Tilted drops (spec M3): 0.2 rad tips over (beyond 0.8 rad), and comes to rest.
#[test]
fn a_foot_dropped_tilted_tips_over_and_comes_to_rest() {
    let dir = TempDir::new("tilted");
    let (json, _) = run_scenario(&dir, "foot_drop_tilted", &[]);
    let pitch = json["summary"]["final_base"][2].as_f64().expect("pitch");
    assert!(pitch.abs() > 0.8, "ended at pitch {pitch} rad: did not tip");
    assert!(summary(&json, "final_speed") < 1e-6, "not at rest: {json}");

    let dir = TempDir::new("nearly-upright");
    let (json, _) = run_scenario(
        &dir,
        "foot_drop_tilted",
        &["--set", "start.pose.pitch=0.01"],
    );
    let pitch = json["summary"]["final_base"][2].as_f64().expect("pitch");
    assert!(
        pitch.abs() < 0.05,
        "0.01 rad should balance, ended at {pitch} rad"
    );
}

/// The quadruped held standing on sand sinks until the bed carries it, then stands still:
/// the four feet's normal forces sum to its weight.
#[test]
fn the_quadruped_standing_on_sand_carries_its_weight_on_four_feet() {
    let dir = TempDir::new("stand");
    let (json, table) = run_scenario(&dir, "quadruped_stand", &[]);
    let mass = 40.0 + 4.0 * (4.0 + 0.43 + 1.76);
    let weight = mass * 9.81;
    let last = table.rows.len() - 2; // the last step's row (the final row has no wrench)
    let total: f64 = ["front_left", "front_right", "hind_left", "hind_right"]
        .iter()
        .map(|f| table.column(&format!("{f}_fz"))[last])
        .sum();
    assert!(
        (total / weight - 1.0).abs() < 0.01,
        "feet carry {total:.2} N of {weight:.2} N"
    );
    assert!(
        summary(&json, "final_speed") < 1e-4,
        "not standing still: {json}"
    );
}

/// The straight accuracy path (spec M9's descent, along the paper's diagonal): the PID
/// tracks the reference within a few millimetres once in the bed.
#[test]
fn the_pid_foot_follows_its_straight_path_into_the_sand() {
    let dir = TempDir::new("straight");
    let (_, table) = run_scenario(&dir, "foot_accuracy_straight", &[]);
    let (t, x, z) = (table.column("t"), table.column("x"), table.column("z"));
    for (i, &ti) in t.iter().enumerate().step_by(100) {
        let s = (ti / 4.2857).min(1.0);
        let (xr, zr) = (0.06 * s, 0.16 - 0.06 * s);
        let err = (x[i] - xr).hypot(z[i] - zr);
        assert!(err < 0.01, "t = {ti:.2} s: {err:.4} m off the path");
    }
}

/// Bad scenario files: exit 2, the file, line and field, what is accepted; nothing written.
#[test]
fn bad_scenarios_are_refused_with_the_field_and_what_is_accepted() {
    let dir = TempDir::new("bad");
    let data = shipped("data/wrench_space/rft_sand_like.yaml");
    let cases = [
        (
            format!("robot: {{model: planar_foot}}\nterrain: {{data: {data}}}\nstart:\n  pose: {{knee: 0.1}}\n"),
            "start.pose.knee",
            "x, z, pitch",
        ),
        (
            format!("robot: {{model: quadruped}}\nterrain: {{data: {data}}}\ncontrol:\n  kind: track\n  reference:\n    - {{t: 0.5, x: 0.1}}\n"),
            "control.reference[0].x",
            "not an actuated coordinate",
        ),
        (
            "robot: {model: planar_foot}\nterrain: {data: no_such_file.yaml}\n".to_string(),
            "terrain.data",
            "no_such_file.yaml",
        ),
        (
            format!("robot: {{model: planar_foot}}\nterrain: {{data: {data}}}\ntime_step: 0.5\n"),
            "time_step",
            "(0, 0.01]",
        ),
    ];
    for (k, (text, field, accepted)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("bad{k}.yaml"));
        std::fs::write(&file, text).expect("write");
        let out = loam(
            dir.path(),
            &["mdp", "run", file.to_str().expect("path"), "--out", "never"],
        );
        assert_eq!(out.status, Some(2), "{}", out.dump());
        for needle in [
            format!("bad{k}.yaml:"),
            field.to_string(),
            accepted.to_string(),
        ] {
            assert!(
                out.stderr.contains(&needle),
                "no `{needle}` in:\n{}",
                out.dump()
            );
        }
        assert!(!dir.path().join("never").exists(), "wrote a result folder");
    }
}

/// Spec M9: the foot under the paper's PID descends straight down at 0.02 m/s; while it
/// slips, the simulated F_z is the interpolated capacity straight down, ζ A |d| = 4000 N/m × |d|
/// for this foot (resistive force theory's pure-down wrench, which the cubic interpolant with
/// its affine tail reproduces), within 2 %.
#[test]
fn m9_a_pid_descent_feels_the_capacity_straight_down() {
    let dir = TempDir::new("descent");
    let data = shipped("data/wrench_space/rft_sand_like.yaml");
    let scenario = format!(
        "robot: {{model: planar_foot, width: 0.10, height: 0.30, com_height: 0.15}}
terrain: {{data: {data}}}
start: {{pose: {{z: 0.16}}}}
control:
  kind: track
  reference:
    - {{t: 0.0, x: 0.0, z: 0.16, pitch: 0.0}}
    - {{t: 4.0, x: 0.0, z: 0.08, pitch: 0.0}}
  gains:
    x: {{kp: 8000, ki: 4000, kd: 200}}
    z: {{kp: 20000, ki: 6000, kd: 400}}
    pitch: {{kp: 300, ki: 1000, kd: 10}}
duration: 4.0
"
    );
    let file = dir.path().join("descent.yaml");
    std::fs::write(&file, scenario).expect("write");
    let out = loam(
        dir.path(),
        &[
            "mdp",
            "run",
            file.to_str().expect("path"),
            "--out",
            "out",
            "--no-plots",
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.dump());
    let table = Table::read(&dir.path().join("out/trajectory.csv"));
    let (d, fz, vz) = (
        table.column("foot_depth"),
        table.column("foot_fz"),
        table.column("d_z"),
    );
    let mut checked = 0;
    for i in 0..d.len() - 1 {
        // Deeper than a centimetre and moving down at about the commanded speed.
        if d[i] < -0.01 && vz[i] < -0.015 {
            let capacity = 4000.0 * -d[i];
            assert!(
                (fz[i] / capacity - 1.0).abs() < 0.02,
                "d = {:.4} m: F_z {:.2} N, capacity {capacity:.2} N",
                d[i],
                fz[i]
            );
            checked += 1;
        }
    }
    assert!(
        checked > 1000,
        "only {checked} rows slipping down in the bed"
    );
}
