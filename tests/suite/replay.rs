//! `loam simulate RUN --terrain F` for every shipped run and every shipped problem file: a
//! replay or a clear refusal, never a panic. (The replay's physics: planar_replay_physics.rs;
//! plans replayed on their own ground: the mesh refinement's tests.)

use crate::common;

use std::path::Path;

use common::run::loam;
use common::temp_dir::TempDir;

/// Copies `from` (a folder of files and folders) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read folder") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

#[test]
fn simulate_with_any_shipped_terrain_replays_or_refuses_never_panics() {
    // Every shipped run (results/*) against every shipped problem file, both presets and its
    // own ground:
    // a replay (exit 0, or 1 for a replay that never reached its apex) or a clear refusal
    // (exit 2, `error: --terrain ...` or why the run cannot be replayed), never a panic.
    let dir = TempDir::new("terrains");
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut runs = Vec::new();
    for entry in std::fs::read_dir(&results).expect("results/") {
        let path = entry.expect("entry").path();
        if path.join("solution.json").is_file() {
            let copy = dir.path().join(path.file_name().unwrap());
            copy_tree(&path, &copy);
            runs.push(copy);
        }
    }
    assert!(runs.len() >= 5, "shipped runs: {runs:?}");
    let problems = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut terrains: Vec<String> = std::fs::read_dir(&problems)
        .expect("problems/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.to_str().expect("UTF-8 path").to_owned())
        .collect();
    terrains.sort();
    assert!(terrains.len() >= 10, "shipped problems: {terrains:?}");
    terrains.extend(["rigid".to_owned(), "poppy_seeds".to_owned()]);
    let mut replayed = 0;
    for run in &runs {
        // Each terrain, and none (the run's own ground).
        for terrain in terrains.iter().map(Some).chain([None]) {
            let mut args = vec!["simulate", run.to_str().unwrap(), "-q"];
            if let Some(terrain) = terrain {
                args.extend(["--terrain", terrain]);
            }
            let out = loam(dir.path(), &args);
            let label = format!("{} --terrain {terrain:?}", run.display());
            assert!(matches!(out.status, Some(0..=2)), "{label}: {}", out.dump());
            assert!(!out.stderr.contains("panicked"), "{label}: {}", out.dump());
            if out.code() == 2 {
                assert!(out.stderr.starts_with("error: "), "{label}: {}", out.dump());
            } else {
                replayed += 1;
            }
        }
    }
    assert!(replayed > 10, "some pairs replay: {replayed}");
}
