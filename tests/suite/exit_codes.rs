//! The exit-code table of README ("Exit codes"), command by command: an output that cannot be
//! written is the environment (3) and leaves nothing behind; an empty problem file is bad
//! input (2). The unwritable output is a path under a regular file, which fails for every
//! user (a read-only folder does not stop root, who runs CI).

use crate::common::run::{assert_exit, loam, loam_with_env, prepare_coarse_bed, solve_to};
use crate::common::temp_dir::TempDir;

fn manifest(path: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

#[test]
fn an_output_that_cannot_be_written_exits_3_for_every_command() {
    let dir = TempDir::new("exit-codes");
    dir.write("blocker", "a file where a folder is needed\n");
    prepare_coarse_bed(dir.path());
    solve_to(
        std::path::Path::new(&manifest("problems/hopper_rigid.yaml")),
        &dir.path().join("run"),
    );
    let (rigid, step, mdp, monopod) = (
        manifest("problems/hopper_rigid.yaml"),
        manifest("problems/planar_foot_step.yaml"),
        manifest("problems/mdp/foot_drop_erect.yaml"),
        manifest("robots/monopod.yaml"),
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["solve", &rigid, "--out", "blocker/run"],
        vec!["solve", &step, "--out", "blocker/run"],
        vec![
            "sweep",
            &rigid,
            "--vary",
            "task.apex_rise=0.05,0.06",
            "--out",
            "blocker/sweep",
        ],
        vec!["plot", "run", "--out", "blocker/plots"],
        vec!["dem", "prepare", "coarse.yaml", "-o", "blocker/bed.bed"],
        vec![
            "dem",
            "intrude",
            "coarse.bed",
            "--velocity",
            "0.1",
            "--depth",
            "0.01",
            "--output",
            "blocker/i.csv",
        ],
        vec![
            "dem",
            "run",
            "coarse.yaml",
            "--for",
            "0.01",
            "--out",
            "blocker/scene",
        ],
        vec!["mdp", "run", &mdp, "--out", "blocker/mdp"],
        vec![
            "wrench-space",
            "build",
            "--generator",
            "rft",
            "--out",
            "blocker/w.yaml",
        ],
        vec!["robot", "draw", &monopod, "--out", "blocker/robot"],
        vec!["robot", "export", "monopod", "-o", "blocker/r.yaml"],
    ];
    for args in &cases {
        let output = loam(dir.path(), args);
        assert_exit(&output, 3, &["blocker"]);
        assert!(
            dir.path().join("blocker").is_file(),
            "{args:?} replaced the file"
        );
    }
    // A run whose validation folder cannot be made: refused before any replay is written.
    std::fs::write(dir.path().join("run/validation"), "a file\n").unwrap();
    assert_exit(&loam(dir.path(), &["validate", "run"]), 3, &["validation"]);
    assert!(!dir.path().join("run/replay-on-poppy_seeds.json").exists());
}

#[test]
fn an_empty_or_comment_only_problem_is_bad_input() {
    let dir = TempDir::new("exit-codes-empty");
    dir.write("empty.yaml", "");
    dir.write("comments.yaml", "# nothing but a comment\n\n");
    for file in ["empty.yaml", "comments.yaml"] {
        for args in [vec!["solve", file, "--out", "run"], vec!["check", file]] {
            assert_exit(&loam(dir.path(), &args), 2, &[file]);
        }
        assert!(!dir.path().join("run").exists());
    }
}

/// A GPU or its libraries missing, as the environment says (`CUDA_VISIBLE_DEVICES` empty hides
/// every device where a driver is installed; where none is, the driver library is missing):
/// every command that can step the DEM on CUDA exits 3 naming the backend, before it computes
/// or writes anything (`validate` used to write its reduced-order replays first).
#[test]
fn a_missing_gpu_is_the_environment_for_every_command_that_uses_one() {
    let dir = TempDir::new("exit-codes-gpu");
    prepare_coarse_bed(dir.path());
    solve_to(
        std::path::Path::new(&manifest("problems/hopper_rigid.yaml")),
        &dir.path().join("run"),
    );
    solve_to(
        std::path::Path::new(&manifest("problems/planar_foot_step.yaml")),
        &dir.path().join("planar"),
    );
    let before = |run: &str| {
        let mut names: Vec<_> = std::fs::read_dir(dir.path().join(run))
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let (hopper_files, planar_files) = (before("run"), before("planar"));
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "simulate",
            "run",
            "--backend",
            "dem-cuda",
            "--bed",
            "coarse.bed",
        ],
        vec![
            "simulate",
            "planar",
            "--backend",
            "dem-cuda",
            "--bed",
            "coarse.bed",
        ],
        vec![
            "validate",
            "run",
            "--bed",
            "coarse.bed",
            "--backend",
            "dem-cuda",
        ],
        vec![
            "validate",
            "planar",
            "--bed",
            "coarse.bed",
            "--backend",
            "dem-cuda",
        ],
        vec![
            "dem",
            "intrude",
            "coarse.bed",
            "--velocity",
            "0.1",
            "--depth",
            "0.01",
            "--backend",
            "cuda",
            "--output",
            "intrude.csv",
        ],
        vec!["bench", "dem", "--backend", "cuda"],
    ];
    for args in &cases {
        let output = loam_with_env(dir.path(), args, &[("CUDA_VISIBLE_DEVICES", "")]);
        assert_exit(&output, 3, &["--backend", "cuda"]);
    }
    assert_eq!(
        before("run"),
        hopper_files,
        "a refused command wrote into the run"
    );
    assert_eq!(
        before("planar"),
        planar_files,
        "a refused command wrote into the run"
    );
    assert!(!dir.path().join("intrude.csv").exists());
}
