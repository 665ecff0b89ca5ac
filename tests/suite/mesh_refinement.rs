//! `loam solve --refine TOL`: a planar plan whose replay on its own contact model departs from
//! it by more than TOL is solved again on a mesh with every interval halved, started from the
//! coarser plan, until it does not.

use crate::common;

use std::path::{Path, PathBuf};

use common::run::loam;
use common::temp_dir::TempDir;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn refinement_halves_the_mesh_until_the_replay_agrees() {
    let dir = TempDir::new("refine");
    let problem = root().join("problems/hopper_granular.yaml");
    let problem = problem.to_str().unwrap();
    // The hopper's 70 mm jump on 31 + 31 nodes replays 0.39 % off its peak.
    let coarse = loam(
        dir.path(),
        &[
            "solve",
            problem,
            "--set",
            "task.apex_rise=0.07",
            "--out",
            "coarse",
            "-q",
        ],
    );
    assert_eq!(coarse.code(), 0, "{}", coarse.dump());
    let out = loam(dir.path(), &["simulate", "coarse", "-q"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    let coarse_error = json(&dir.path().join("coarse/replay.json"))["com_peak_error_rel"]
        .as_f64()
        .unwrap();
    assert!(coarse_error > 0.001, "coarse error {coarse_error}");

    let fine = loam(
        dir.path(),
        &[
            "solve",
            problem,
            "--set",
            "task.apex_rise=0.07",
            "--out",
            "fine",
            "--refine",
            "0.001",
        ],
    );
    assert_eq!(fine.code(), 0, "{}", fine.dump());
    assert!(
        fine.stdout.contains("refinement     nodes [31, 31]"),
        "{}",
        fine.dump()
    );
    assert!(fine.stdout.contains("nodes [61, 61]"), "{}", fine.dump());
    // The solved problem records the final mesh, and its plan replays within the tolerance.
    let solution = json(&dir.path().join("fine/solution.json"));
    let nodes: Vec<u64> = solution["problem"]["schedule"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["nodes"].as_u64().unwrap())
        .collect();
    assert_eq!(nodes, vec![61, 61]);
    assert_eq!(solution["converged"], true);
    let out = loam(dir.path(), &["simulate", "fine", "-q"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    let fine_error = json(&dir.path().join("fine/replay.json"))["com_peak_error_rel"]
        .as_f64()
        .unwrap();
    assert!(fine_error <= 0.001, "refined error {fine_error}");
    // The finer mesh also finds the cheaper plan the coarse one could not represent.
    let coarse_objective = json(&dir.path().join("coarse/solution.json"))["objective"]
        .as_f64()
        .unwrap();
    assert!(solution["objective"].as_f64().unwrap() < coarse_objective);
}

#[test]
fn refine_refuses_what_it_cannot_refine() {
    let dir = TempDir::new("refine_bad");
    let cases = [
        ("problems/hopper_granular.yaml", "0", "x", "--refine 0"),
        (
            "problems/monopod_sand_hop.yaml",
            "0.01",
            "y",
            "not refined yet",
        ),
    ];
    for (problem, tol, out_dir, says) in cases {
        let path = root().join(problem);
        let out = loam(
            dir.path(),
            &[
                "solve",
                path.to_str().unwrap(),
                "--refine",
                tol,
                "--out",
                out_dir,
            ],
        );
        assert_eq!(out.code(), 2, "{}", out.dump());
        assert!(out.stderr.contains(says), "{}", out.dump());
    }
    assert!(!dir.path().join("x").exists() && !dir.path().join("y").exists());
}

/// The problem's own `mesh:` field refines as `--refine` does, records every round in
/// solution.json, and a tolerance that its rounds cannot reach exits 1 with the last plan
/// written; bad fields exit 2 naming them.
#[test]
fn a_problem_states_its_mesh_refinement() {
    let dir = TempDir::new("refine_field");
    let problem = root().join("problems/hopper_granular.yaml");
    let problem = problem.to_str().unwrap();
    let solve = |out: &str, mesh: &str| {
        loam(
            dir.path(),
            &[
                "solve",
                problem,
                "--set",
                "task.apex_rise=0.07",
                "--set",
                mesh,
                "--out",
                out,
                "-q",
            ],
        )
    };
    let fine = solve("fine", "mesh={tolerance: 0.001}");
    assert_eq!(fine.code(), 0, "{}", fine.dump());
    let solution = json(&dir.path().join("fine/solution.json"));
    let rounds = solution["refinement"]
        .as_array()
        .expect("refinement rounds");
    assert_eq!(rounds.len(), 2, "{solution}");
    assert_eq!(rounds[0]["nodes"], serde_json::json!([31, 31]));
    assert_eq!(rounds[1]["nodes"], serde_json::json!([61, 61]));
    assert!(rounds[0]["error"].as_f64().unwrap() > 0.001);
    assert!(rounds[1]["error"].as_f64().unwrap() <= 0.001);
    assert_eq!(solution["problem"]["mesh"]["max_rounds"], 3);

    // One round cannot reach 1e-6: exit 1, the refined plan written, the rounds recorded.
    let short = solve("short", "mesh={tolerance: 1.0e-6, max_rounds: 1}");
    assert_eq!(short.code(), 1, "{}", short.dump());
    assert!(short.stderr.contains("still"), "{}", short.dump());
    let solution = json(&dir.path().join("short/solution.json"));
    assert_eq!(solution["refinement"].as_array().unwrap().len(), 2);

    for (mesh, field) in [
        ("mesh={tolerance: 0}", "mesh.tolerance"),
        ("mesh={tolerance: .nan}", "mesh.tolerance"),
        ("mesh={tolerance: 0.01, max_rounds: 0}", "mesh.max_rounds"),
    ] {
        let out = solve("bad", mesh);
        assert_eq!(out.code(), 2, "{mesh}: {}", out.dump());
        assert!(out.stderr.contains(field), "{mesh}: {}", out.dump());
    }
    assert!(!dir.path().join("bad").exists());
}

/// `loam bench` on a problem with `mesh:` adds the `refined` row: the file's solve and its
/// refinement, reaching the finer mesh's cheaper plan (70 mm: 61 + 61 nodes).
#[test]
fn bench_reports_what_refinement_costs() {
    let dir = TempDir::new("refine_bench");
    let robot = root().join("robots/hopper.yaml");
    let text = std::fs::read_to_string(root().join("problems/hopper_granular.yaml"))
        .unwrap()
        .replace("../robots/hopper.yaml", robot.to_str().unwrap())
        .replace("apex_rise: 0.06 ", "apex_rise: 0.07 ");
    let file = dir.write("refined_jump.yaml", &(text + "mesh: {tolerance: 0.001}\n"));
    let out = loam(
        dir.path(),
        &["bench", file.to_str().unwrap(), "--repeat", "1"],
    );
    assert_eq!(out.code(), 0, "{}", out.dump());
    let row = |config: &str| -> Vec<String> {
        out.stdout
            .lines()
            .find(|l| l.starts_with("refined_jump") && l.contains(config))
            .unwrap_or_else(|| panic!("no {config} row:\n{}", out.dump()))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let objective = |r: &[String]| r.last().unwrap().parse::<f64>().unwrap();
    let (file_row, refined_row) = (row(" file "), row(" refined "));
    assert!(
        objective(&refined_row) < objective(&file_row),
        "{}",
        out.dump()
    );
}
