//! Sweeps across machines and across interruptions: `loam sweep --shard I/N` and
//! `loam sweep merge` give the table of an unsharded run; a sweep stopped by SIGINT leaves
//! no temporary files and, run again, finishes into the table of an uninterrupted run.
//!
//! Every sweep is a few heights of problems/hopper_rigid.yaml (well under a second a plan).
//! Tables are compared with their `solve_s` column (wall time) left out.

use crate::common;

use std::path::{Path, PathBuf};

use common::run::{interrupt_when, loam, Output};
use common::temp_dir::TempDir;

fn rigid() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems/hopper_rigid.yaml")
        .display()
        .to_string()
}

/// `loam sweep hopper_rigid.yaml ARGS --out OUT`.
fn sweep(dir: &Path, out: &str, args: &[&str]) -> Output {
    let file = rigid();
    let mut all = vec!["sweep", file.as_str()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out]);
    loam(dir, &all)
}

/// `sweep.csv` without its `solve_s` column (the wall time of each solve).
fn table(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().expect("a header");
    let time = header
        .split(',')
        .position(|c| c == "solve_s")
        .expect("a solve_s column");
    std::iter::once(header)
        .chain(lines)
        .map(|line| {
            let mut fields: Vec<&str> = line.split(',').collect();
            fields.remove(time);
            fields.join(",")
        })
        .collect()
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
    }
    loam(dir, &["sweep", "merge", out])
}

#[test]
fn a_cold_sweep_in_three_shards_merges_into_the_unsharded_table_and_figures() {
    let dir = TempDir::new("shards-cold");
    let heights = ["--vary", "task.apex_height=0.04:0.08:0.01"];
    let whole = sweep(dir.path(), "whole", &[&heights[..], &["-q"]].concat());
    assert_eq!(whole.code(), 0, "{}", whole.dump());

    let merged = run_shards(dir.path(), "sharded", &heights, 3);
    assert_eq!(merged.code(), 0, "{}", merged.dump());
    let sharded = dir.path().join("sharded");
    // Every shard wrote files of its own; none wrote the sweep's table.
    for index in 1..=3 {
        for ext in ["json", "csv"] {
            assert!(sharded.join(format!("shard-{index}-of-3.{ext}")).is_file());
        }
    }
    let expected = table(&dir.path().join("whole/sweep.csv"));
    assert_eq!(expected.len(), 1 + 2 * 5, "{expected:#?}");
    assert_eq!(table(&sharded.join("sweep.csv")), expected);
    for figure in ["sweep_apex.png", "sweep_commands.png"] {
        assert!(sharded.join("plots").join(figure).is_file(), "{figure}");
    }
    assert!(
        merged.stdout.contains("merged 3 shards (5 plans)"),
        "{}",
        merged.dump()
    );
}

#[test]
fn a_warm_sweep_in_three_shards_merges_into_the_unsharded_table() {
    // Three chains (one per motor force) of two heights: each shard solves one chain, its
    // first plan cold and the second from it, as the unsharded sweep does.
    let dir = TempDir::new("shards-warm");
    let args = [
        "--vary",
        "task.apex_height=0.05,0.06",
        "--vary",
        "task.max_motor_force=44,46,48",
        "--warm-start",
    ];
    let whole = sweep(dir.path(), "whole", &[&args[..], &["-q"]].concat());
    assert_eq!(whole.code(), 0, "{}", whole.dump());
    let merged = run_shards(dir.path(), "sharded", &args, 3);
    assert_eq!(merged.code(), 0, "{}", merged.dump());
    let expected = table(&dir.path().join("whole/sweep.csv"));
    assert_eq!(expected.len(), 1 + 2 * 6);
    // Same objectives, iterations and convergence, bit for bit: the chains are the same.
    assert_eq!(table(&dir.path().join("sharded/sweep.csv")), expected);
    // The second plan of each chain was warm-started: fewer iterations than its cold first.
    let iterations = |row: &str| row.split(',').nth(5).unwrap().parse::<u32>().unwrap();
    for chain in expected[1..].chunks(4) {
        assert!(iterations(&chain[2]) < iterations(&chain[0]), "{chain:#?}");
    }
    // Every plan has IPOPT's log, the warm-started ones too, and no temporary is left.
    for sweep_dir in ["whole", "sharded"] {
        for entry in std::fs::read_dir(dir.path().join(sweep_dir)).unwrap() {
            let point = entry.unwrap().path();
            if !point.join("solution.json").is_file() {
                continue;
            }
            let log = std::fs::read_to_string(point.join("ipopt.log")).unwrap_or_default();
            assert!(log.contains("EXIT:"), "{}: no ipopt.log", point.display());
            for file in std::fs::read_dir(&point).unwrap() {
                let name = file.unwrap().file_name().to_string_lossy().into_owned();
                assert!(!name.contains(".tmp"), "{}: {name} left", point.display());
            }
        }
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
            &["--vary", heights, "--shard", shard, "-q"],
        );
        assert_eq!(run.code(), 0, "{}", run.dump());
    };
    let sw = dir.path().join("sw");
    let ours = "task.apex_height=0.04,0.05";
    shard("sw", ours, "1/2");
    merge_refuses(dir.path(), "shard 2/2 is missing (no shard-2-of-2.json)");

    // Another sweep's shard 2 (other heights), started (its manifest is there).
    shard("other", "task.apex_height=0.05,0.06", "2/2");
    let foreign = dir.path().join("other/shard-2-of-2.json");
    std::fs::copy(foreign, sw.join("shard-2-of-2.json")).unwrap();
    merge_refuses(
        dir.path(),
        "shard-2-of-2.json is from another sweep than shard-1-of-2.json: \
         --vary task.apex_height=0.05,0.06 against task.apex_height=0.04,0.05",
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
    let merged = loam(dir.path(), &["sweep", "merge", "sw", "-q"]);
    assert_eq!(merged.code(), 0, "{}", merged.dump());
    assert_eq!(table(&sw.join("sweep.csv")).len(), 1 + 2 * 2);
}

#[test]
fn a_malformed_shard_is_refused_before_any_work() {
    let dir = TempDir::new("shards-bad");
    for shard in ["0/3", "4/3", "x", "3", "1/0"] {
        let run = sweep(
            dir.path(),
            "sw",
            &["--vary", "task.apex_height=0.04,0.05", "--shard", shard],
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
    let file = rigid();
    let mut all = vec!["sweep", file.as_str()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out]);
    interrupt_when(dir, &all, || ready(&folder))
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
    let total = table(&folder.join("sweep.csv")).len() / 2;
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
    let args = ["--vary", "task.apex_height=0.03:0.10:0.01", "--jobs", "1"];
    interrupt_and_resume("interrupt-cold", &args, |folder| {
        !done_plans(folder).is_empty()
            && temporary_files(folder)
                .iter()
                .any(|p| p.to_string_lossy().contains(".ipopt.log.tmp"))
    });
}

#[test]
fn an_interrupted_warm_sweep_resumes_its_chain_to_the_same_table() {
    // Interrupted inside IPOPT (its intermediate callback stops it); the resumed chain starts
    // its next plan from the last one kept, as the uninterrupted run does, so even the
    // iteration counts agree.
    let args = ["--vary", "task.apex_height=0.03:0.10:0.005", "--warm-start"];
    interrupt_and_resume("interrupt-warm", &args, |folder| {
        !done_plans(folder).is_empty()
    });
}
