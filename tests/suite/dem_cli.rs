//! `loam dem prepare` and `loam dem intrude` end to end, and their bad-input errors (exit 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use loam::sim::dem::Scene;

use crate::common;
use common::scenes::TINY_BED;

fn loam(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loam"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the loam binary runs")
}

fn folder(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("dem_cli_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn prepare_then_intrude_writes_a_checkpoint_and_a_force_table() {
    let dir = folder("e2e");
    // Wide enough for the shipped 38 mm foot mesh below.
    let wide = TINY_BED
        .replace("radius: 0.03", "radius: 0.05")
        .replace("count: 60", "count: 170");
    std::fs::write(dir.join("tiny.yaml"), wide).unwrap();
    let out = loam(&["dem", "prepare", "tiny.yaml", "-o", "tiny.bed"], &dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = loam(
        &[
            "dem",
            "intrude",
            "tiny.bed",
            "--radius",
            "0.01",
            "--velocity",
            "0.1",
            "--depth",
            "0.01",
            "-o",
            "force.csv",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.join("force.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "t,depth,F_x,F_y,F_z,tau_x,tau_y,tau_z"
    );
    assert!(csv.lines().count() > 5);

    // A mesh body: the shipped foot disc intrudes; an open mesh is refused before any step.
    let foot = concat!(env!("CARGO_MANIFEST_DIR"), "/problems/meshes/foot_disc.obj");
    let out = loam(
        &[
            "dem",
            "intrude",
            "tiny.bed",
            "--body",
            "mesh",
            "--mesh",
            foot,
            "--spacing",
            "0.002",
            "--velocity",
            "0.1",
            "--depth",
            "0.005",
            "-o",
            "mesh.csv",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let open = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 2 3 4\n";
    std::fs::write(dir.join("open.obj"), open).unwrap();
    let out = loam(
        &[
            "dem",
            "intrude",
            "tiny.bed",
            "--body",
            "mesh",
            "--mesh",
            "open.obj",
            "--velocity",
            "0.1",
            "--depth",
            "0.005",
            "-o",
            "open.csv",
        ],
        &dir,
    );
    assert_bad_input(&out, &["open.obj", "not closed", "open edge"]);
    assert!(!dir.join("open.csv").exists());
}

fn assert_bad_input(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    let message = stderr(out);
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
}

#[test]
fn a_missing_or_foreign_checkpoint_is_bad_input() {
    let dir = folder("checkpoint");
    let intrude = |file: &str| {
        loam(
            &[
                "dem",
                "intrude",
                file,
                "--radius",
                "0.01",
                "--velocity",
                "0.1",
                "--depth",
                "0.01",
            ],
            &dir,
        )
    };
    assert_bad_input(&intrude("missing.bed"), &["missing.bed", "cannot read"]);
    std::fs::write(dir.join("foreign.bed"), "solid cube\nfacet normal 0 0 1\n").unwrap();
    assert_bad_input(
        &intrude("foreign.bed"),
        &["foreign.bed", "not a loam bed checkpoint"],
    );
    // A real checkpoint cut short.
    std::fs::write(dir.join("tiny.yaml"), TINY_BED).unwrap();
    assert!(
        loam(&["dem", "prepare", "tiny.yaml", "-o", "tiny.bed"], &dir)
            .status
            .success()
    );
    let bytes = std::fs::read(dir.join("tiny.bed")).unwrap();
    std::fs::write(dir.join("cut.bed"), &bytes[..bytes.len() - 100]).unwrap();
    assert_bad_input(&intrude("cut.bed"), &["cut.bed", "truncated"]);
}

#[test]
fn a_non_positive_time_step_or_radius_is_bad_input_naming_the_field() {
    let dir = folder("scene");
    let cases = [
        (
            TINY_BED.replace("settle:", "time_step: 0\nsettle:"),
            vec!["time_step", "positive"],
        ),
        (
            TINY_BED.replace("radius: 0.004", "radius: -0.004"),
            vec!["grains.radius", "positive"],
        ),
        (
            TINY_BED.replace("friction: 0.5", "friction: 0.5, colour: red"),
            vec!["colour", ".yaml:2:", "expected one of"],
        ),
        (
            TINY_BED.replace("shape: cylinder", "shape: sphere"),
            vec!["sphere", "cylinder", "box"],
        ),
    ];
    for (k, (text, needles)) in cases.iter().enumerate() {
        let file = format!("bad{k}.yaml");
        std::fs::write(dir.join(&file), text).unwrap();
        let out = loam(&["dem", "prepare", &file], &dir);
        let mut needles = needles.clone();
        needles.push(&file);
        assert_bad_input(&out, &needles);
    }
    // A scene file that is not there is the user's to fix, as a missing problem file is.
    let out = loam(&["dem", "prepare", "missing.yaml"], &dir);
    assert_bad_input(&out, &["could not read", "missing.yaml"]);
    let out = loam(
        &[
            "dem",
            "intrude",
            "x.bed",
            "--radius",
            "0",
            "--velocity",
            "0.1",
            "--depth",
            "0.01",
        ],
        &dir,
    );
    assert_bad_input(&out, &["--radius", "positive"]);
}

/// Every shipped bed scene is a fixture: it parses and validates.
#[test]
fn every_shipped_bed_scene_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/beds");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            Scene::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            count += 1;
        }
    }
    assert!(count >= 1, "no scenes in {}", dir.display());
}
