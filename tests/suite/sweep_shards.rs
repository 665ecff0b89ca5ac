//! Sweeps across machines and across interruptions: `loam sweep --shard I/N` and
//! `loam sweep merge` give the tables of an unsharded run; a sweep stopped by SIGINT leaves
//! no temporary files and, run again, finishes into the table of an uninterrupted run.
//!
//! Every sweep is a few heights of the hopper's jump as a robot file (problems/hopper_granular.yaml)
//! on coarse meshes (15 + 15 nodes: a second or less a plan on 2 cores). `sweep.csv` holds no
//! wall time and is compared whole; `replays.csv` without its `solve_s` column.

use crate::common;

use std::path::{Path, PathBuf};

use common::run::{interrupt_when, loam, read_json, shipped, Output};
use common::temp_dir::TempDir;

/// The meshes of every sweep here.
const COARSE: [&str; 4] = [
    "--set",
    "schedule.0.nodes=15",
    "--set",
    "schedule.1.nodes=15",
];

/// Both grounds of the paper's sweep, as `--vary` takes them.
const GROUNDS: &str =
    "terrain=[{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}, {model: rigid}]";

/// `loam sweep hopper_granular.yaml --set (coarse) ARGS --out OUT` in `dir`, and its arguments.
fn sweep_args<'a>(file: &'a str, out: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["sweep", file];
    all.extend_from_slice(&COARSE);
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out]);
    all
}

fn sweep(dir: &Path, out: &str, args: &[&str]) -> Output {
    let file = shipped("hopper_granular.yaml");
    loam(dir, &sweep_args(&file, out, args))
}

/// A table's lines, without the column `drop` if it has one (a wall time).
fn table_without(path: &Path, drop: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().expect("a header");
    let time = loam::plot::table::fields_of(header)
        .iter()
        .position(|c| c == drop);
    std::iter::once(header)
        .chain(lines)
        .map(|line| match time {
            Some(time) => {
                let mut fields = loam::plot::table::fields_of(line);
                fields.remove(time);
                fields.join("|")
            }
            None => line.to_string(),
        })
        .collect()
}

/// `sweep.csv`, whole.
fn table(path: &Path) -> Vec<String> {
    table_without(path, "")
}

/// Files under `dir` (recursively) whose name marks a write in progress.
fn temporary_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(".tmp") {
                found.push(path);
            }
        }
    }
    found
}

/// Shards 1..=N of a sweep into `out`, then `loam sweep merge out`.
fn run_shards(dir: &Path, out: &str, args: &[&str], count: usize) -> Output {
    for index in 1..=count {
        let shard = format!("{index}/{count}");
        let mut all = args.to_vec();
        all.extend_from_slice(&["--shard", &shard, "-q"]);
        let run = sweep(dir, out, &all);
        assert_eq!(run.code(), 0, "shard {shard}: {}", run.dump());
        assert!(
            !dir.join(out).join("sweep.csv").exists()
                && !dir.join(out).join("replays.csv").exists(),
            "shard {shard} wrote a table of the whole sweep"
        );
    }
    loam(dir, &["sweep", "merge", out])
}

#[test]
fn a_cold_sweep_in_three_shards_merges_into_the_unsharded_tables_and_figures() {
    let dir = TempDir::new("shards-cold");
    let args = ["--vary", "task.apex_rise=0.08:0.04:0.02", "--vary", GROUNDS];
    let whole = sweep(dir.path(), "whole", &[&args[..], &["-q"]].concat());
    assert_eq!(whole.code(), 0, "{}", whole.dump());

    let merged = run_shards(dir.path(), "sharded", &args, 3);
    assert_eq!(merged.code(), 0, "{}", merged.dump());
    let sharded = dir.path().join("sharded");
    // Every shard wrote files of its own.
    for index in 1..=3 {
        for ext in ["json", "csv"] {
            assert!(sharded.join(format!("shard-{index}-of-3.{ext}")).is_file());
        }
    }
    let expected = table(&dir.path().join("whole/sweep.csv"));
    assert_eq!(expected.len(), 1 + 3 * 2, "{expected:#?}");
    assert_eq!(table(&sharded.join("sweep.csv")), expected);
    // Every plan on both grounds, as the unsharded sweep replays them.
    let replays = table_without(&dir.path().join("whole/replays.csv"), "solve_s");
    assert_eq!(replays.len(), 1 + 6 * 2, "{replays:#?}");
    assert_eq!(
        table_without(&sharded.join("replays.csv"), "solve_s"),
        replays
    );
    for figure in ["sweep_planar.png", "sweep_apex.png", "sweep_commands.png"] {
        assert!(sharded.join("plots").join(figure).is_file(), "{figure}");
    }
    assert!(
        merged.stdout.contains("merged 3 shards (6 plans)"),
        "{}",
        merged.dump()
    );
}

#[test]
fn a_warm_sweep_in_two_shards_merges_into_the_unsharded_table() {
    // Two chains (one per ground) of two heights: each shard solves one chain, its first plan
    // cold and the second from it, as the unsharded sweep does.
    let dir = TempDir::new("shards-warm");
    let args = [
        "--vary",
        "task.apex_rise=0.06,0.05",
        "--vary",
        GROUNDS,
        "--warm-start",
    ];
    let whole = sweep(dir.path(), "whole", &[&args[..], &["-q"]].concat());
    assert_eq!(whole.code(), 0, "{}", whole.dump());
    let merged = run_shards(dir.path(), "sharded", &args, 2);
    assert_eq!(merged.code(), 0, "{}", merged.dump());
    let expected = table(&dir.path().join("whole/sweep.csv"));
    assert_eq!(expected.len(), 1 + 4);
    // Same objectives, iterations and convergence, bit for bit: the chains are the same.
    assert_eq!(table(&dir.path().join("sharded/sweep.csv")), expected);
    for sweep_dir in ["whole", "sharded"] {
        let folder = dir.path().join(sweep_dir);
        for ground in [
            "model_added_mass_medium_poppy_seeds_foot_radius_0.038",
            "model_rigid",
        ] {
            // The chain's second plan started from its first.
            let first = format!("apex_rise=0.06-terrain={ground}");
            let second = format!("apex_rise=0.05-terrain={ground}");
            let cold = read_json(&folder.join(&first).join("solution.json"));
            let warm = read_json(&folder.join(&second).join("solution.json"));
            assert_eq!(
                cold["provenance"]["warm_start"],
                serde_json::json!({"kind": "rest"})
            );
            assert_eq!(
                warm["provenance"]["warm_start"]["plan_id"], cold["plan_id"],
                "{sweep_dir}/{second}"
            );
        }
        // Every plan has IPOPT's log, and no temporary is left.
        for entry in std::fs::read_dir(&folder).unwrap() {
            let point = entry.unwrap().path();
            if !point.join("solution.json").is_file() {
                continue;
            }
            let log = std::fs::read_to_string(point.join("ipopt.log")).unwrap_or_default();
            assert!(log.contains("EXIT:"), "{}: no ipopt.log", point.display());
        }
        assert_eq!(temporary_files(&folder), Vec::<PathBuf>::new());
    }
}

/// `loam sweep merge sw` must refuse (exit 2, nothing written) with `message`.
fn merge_refuses(dir: &Path, message: &str) {
    let merged = loam(dir, &["sweep", "merge", "sw"]);
    assert_eq!(merged.code(), 2, "{}", merged.dump());
    assert!(
        merged.stderr.contains(message),
        "{message}: {}",
        merged.dump()
    );
    assert!(!dir.join("sw/sweep.csv").exists());
}

#[test]
fn merge_refuses_a_missing_an_unfinished_and_a_foreign_shard() {
    let dir = TempDir::new("shards-refused");
    let shard = |out: &str, heights: &str, shard: &str| {
        let run = sweep(
            dir.path(),
            out,
            &[
                "--set",
                "terrain={model: rigid}",
                "--vary",
                heights,
                "--shard",
                shard,
                "-q",
            ],
        );
        assert_eq!(run.code(), 0, "{}", run.dump());
    };
    let sw = dir.path().join("sw");
    let ours = "task.apex_rise=0.04,0.05";
    shard("sw", ours, "1/2");
    merge_refuses(dir.path(), "shard 2/2 is missing (no shard-2-of-2.json)");

    // Another sweep's shard 2 (other heights), started (its manifest is there).
    shard("other", "task.apex_rise=0.05,0.06", "2/2");
    let foreign = dir.path().join("other/shard-2-of-2.json");
    std::fs::copy(foreign, sw.join("shard-2-of-2.json")).unwrap();
    merge_refuses(
        dir.path(),
        "shard-2-of-2.json is from another sweep than shard-1-of-2.json: \
         --vary task.apex_rise=0.05,0.06 against task.apex_rise=0.04,0.05",
    );

    // Our own shard 2, started but not finished (no CSV).
    shard("sw", ours, "2/2");
    std::fs::remove_file(sw.join("shard-2-of-2.csv")).unwrap();
    merge_refuses(dir.path(), "shard 2/2 has not finished");

    // Shards of another split in the same folder.
    shard("sw", ours, "2/2");
    std::fs::copy(sw.join("shard-1-of-2.json"), sw.join("shard-1-of-3.json")).unwrap();
    merge_refuses(dir.path(), "different splits");
    std::fs::remove_file(sw.join("shard-1-of-3.json")).unwrap();

    // A plan folder that is not there (shards on separate file systems).
    let plan = sw.join("apex_rise=0.05");
    std::fs::rename(&plan, dir.path().join("elsewhere")).unwrap();
    merge_refuses(dir.path(), "the plan folders apex_rise=0.05 are not there");
    std::fs::rename(dir.path().join("elsewhere"), &plan).unwrap();

    let merged = loam(dir.path(), &["sweep", "merge", "sw", "-q"]);
    assert_eq!(merged.code(), 0, "{}", merged.dump());
    assert_eq!(table(&sw.join("sweep.csv")).len(), 1 + 2);
    // No ground varied: no replays.csv, and the sweep's own figures.
    assert!(!sw.join("replays.csv").exists());
    assert!(sw.join("plots/sweep_commands.png").is_file());
}

#[test]
fn a_malformed_shard_is_refused_before_any_work() {
    let dir = TempDir::new("shards-bad");
    for shard in ["0/3", "4/3", "x", "3", "1/0"] {
        let run = sweep(
            dir.path(),
            "sw",
            &["--vary", "task.apex_rise=0.04,0.05", "--shard", shard],
        );
        assert_eq!(run.code(), 2, "{shard}: {}", run.dump());
        assert!(
            run.stderr.contains("--shard") && run.stderr.contains("I/N"),
            "{shard}: {}",
            run.dump()
        );
        assert!(!dir.path().join("sw").exists(), "{shard}");
    }
}

/// Starts `loam sweep ... --out OUT` and sends it SIGINT as soon as `ready` holds for the
/// folder; returns what it printed. Panics if the sweep finished first.
fn interrupt_sweep(dir: &Path, out: &str, args: &[&str], ready: impl Fn(&Path) -> bool) -> Output {
    let folder = dir.join(out);
    let file = shipped("hopper_granular.yaml");
    interrupt_when(dir, &sweep_args(&file, out, args), || ready(&folder))
}

/// The plan folders of a sweep that a run marked done.
fn done_plans(folder: &Path) -> Vec<PathBuf> {
    let mut done: Vec<PathBuf> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("sweep_point.json").is_file())
        .collect();
    done.sort();
    done
}

/// Interrupts a sweep once `ready`, checks what it left, resumes it and compares the table
/// with an uninterrupted run's.
fn interrupt_and_resume(label: &str, args: &[&str], ready: impl Fn(&Path) -> bool) {
    let dir = TempDir::new(label);
    let stopped = interrupt_sweep(dir.path(), "sw", args, ready);
    assert_eq!(stopped.status, Some(130), "{}", stopped.dump());
    assert!(
        stopped.stderr.contains("interrupted")
            && stopped.stderr.contains("run the same command again"),
        "{}",
        stopped.dump()
    );
    let folder = dir.path().join("sw");
    assert_eq!(temporary_files(&folder), Vec::<PathBuf>::new());
    assert!(
        !folder.join("sweep.csv").exists(),
        "a sweep.csv after an interruption"
    );
    let kept = done_plans(&folder);
    assert!(!kept.is_empty(), "{}", stopped.dump());
    let kept_solution = std::fs::metadata(kept[0].join("solution.json"))
        .and_then(|m| m.modified())
        .unwrap();

    let resumed = sweep(dir.path(), "sw", args);
    assert_eq!(resumed.code(), 0, "{}", resumed.dump());
    assert!(
        resumed
            .stdout
            .contains(&format!("{} done by an earlier run, kept", kept.len())),
        "{}",
        resumed.dump()
    );
    // A plan done before the interruption was not solved again.
    let after = std::fs::metadata(kept[0].join("solution.json"))
        .and_then(|m| m.modified())
        .unwrap();
    assert_eq!(
        after,
        kept_solution,
        "{} was solved again",
        kept[0].display()
    );

    let whole = sweep(dir.path(), "whole", &[args, &["-q"]].concat());
    assert_eq!(whole.code(), 0, "{}", whole.dump());
    assert_eq!(
        table(&folder.join("sweep.csv")),
        table(&dir.path().join("whole/sweep.csv"))
    );

    // A plan whose files are half written (no marker, a truncated trajectory) is redone; the
    // others are kept.
    let redo = &kept[0];
    let trajectory = std::fs::read(redo.join("trajectory.csv")).unwrap();
    std::fs::remove_file(redo.join("sweep_point.json")).unwrap();
    std::fs::write(
        redo.join("trajectory.csv"),
        &trajectory[..trajectory.len() / 2],
    )
    .unwrap();
    let again = sweep(dir.path(), "sw", args);
    assert_eq!(again.code(), 0, "{}", again.dump());
    let total = table(&folder.join("sweep.csv")).len() - 1;
    assert!(
        again
            .stdout
            .contains(&format!("{} done by an earlier run, kept", total - 1)),
        "{}",
        again.dump()
    );
    assert_eq!(
        std::fs::read(redo.join("trajectory.csv")).unwrap(),
        trajectory
    );
    assert_eq!(
        table(&folder.join("sweep.csv")),
        table(&dir.path().join("whole/sweep.csv"))
    );
}

#[test]
fn an_interrupted_cold_sweep_leaves_no_temporary_files_and_resumes_to_the_same_table() {
    // One solve at a time; interrupted while a `loam solve` writes its IPOPT log
    // (`.ipopt.log.tmp<pid>`) after at least one plan is done.
    let args = [
        "--set",
        "terrain={model: rigid}",
        "--vary",
        "task.apex_rise=0.03:0.10:0.01",
        "--jobs",
        "1",
    ];
    interrupt_and_resume("interrupt-cold", &args, |folder| {
        !done_plans(folder).is_empty()
            && temporary_files(folder)
                .iter()
                .any(|p| p.to_string_lossy().contains(".ipopt.log.tmp"))
    });
}

#[test]
fn an_interrupted_warm_sweep_resumes_its_chain_to_the_same_table() {
    // The resumed chain starts its next plan from the last one kept, as the uninterrupted run
    // does, so even the iteration counts agree.
    let args = ["--vary", "task.apex_rise=0.08:0.03:0.01", "--warm-start"];
    interrupt_and_resume("interrupt-warm", &args, |folder| {
        !done_plans(folder).is_empty()
    });
}
