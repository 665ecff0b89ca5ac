//! The committed results against the code (issue 35, "results that cannot go stale"): the
//! cheap part of `results/` is computed again by the real binary, into temporary folders, and
//! compared with the committed files. A drift fails with the file, the field and both values;
//! `bash results/regenerate.sh --cheap` writes the results again.
//!
//! Checked:
//! - `results/jump-sweep/replays.csv`: the 16-plan sweep solved and replayed again, every plan
//!   on both grounds, every row;
//! - every committed run folder (`results/*/solution.json`) whose committed solve took at most
//!   `MAX_SOLVE_S`: its own command again (`provenance.command_line`, `--out` a temporary
//!   folder), then `loam simulate` for each committed reduced-order replay
//!   (`replay.json`, `replay-on-<preset>.json`);
//! - every committed MDP scenario (`results/mdp/*/scenario.json`): its command again.
//!
//! Skipped, each with its reason printed (`--nocapture` shows them): DEM replays (`dem-cpu/`,
//! `dem-cuda/`, `results/dem/`: minutes to hours of grains, a GPU for `dem-cuda`), solves whose
//! committed time exceeds `MAX_SOLVE_S`, figures (`plots/`, `results/wrench_space/`: pictures,
//! no numbers). `results/README.md`, "What CI checks", lists them.
//!
//! Tolerances, measured on this 2-core machine (results/README.md, "What CI checks"):
//! - Strings (statuses, terrains), booleans and integers (IPOPT's iteration counts, node
//!   counts) are compared exactly: loam runs MUMPS with one BLAS thread, and two runs of one
//!   binary gave the same plans bit for bit, iteration counts included; a changed start or
//!   formulation moves the count (the `ballistic` against the `rest` guess: 119 against 44
//!   iterations at 60 mm on poppy seeds, for the same optimum to 1.4e-8).
//! - Numbers within `REL` = 1e-6 of the committed value, plus `ABS` = 1e-9 in the field's SI
//!   unit (m, s, m²/s, or a ratio) for values at zero. Two solve paths to the same optimum
//!   gave objectives 1.4e-8 apart but phase durations 2.5e-6 and replayed apexes up to 6e-6
//!   apart (relative); rounding alone changed nothing here (bit for bit). Distinct local optima
//!   differ by 4e-4 and more (0.047632 against 0.047653 at 60 mm on poppy seeds). So 1e-6
//!   leaves room for another machine's rounding (not measured: no second kind of machine was
//!   at hand) and fails a new optimum, and another path to an old one through its durations
//!   and replays (and its iteration count).
//! - `replays.csv` prints 7 significant digits: one unit of the last printed digit is added,
//!   since a value that moved by rounding can print one unit apart.
//! - Wall times (`solve_s`, `timing_s`, `median_step_us`) are not compared.

use crate::common;
use common::temp_dir::TempDir;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Relative tolerance on every compared number (see the module's docs for why).
const REL: f64 = 1e-6;
/// Absolute floor, in the field's SI unit, for values at or near zero.
const ABS: f64 = 1e-9;
/// A run folder whose committed solve (`timing_s.total`) took longer is skipped: the whole
/// check must stay well under 2 minutes on 2 cores.
const MAX_SOLVE_S: f64 = 10.0;

/// The jump sweep's arguments, as `results/regenerate.sh` gives them: the hopper as a robot
/// file on both grounds. The committed rows must be exactly the rows this makes (same plans,
/// same order): a changed sweep in `regenerate.sh` fails here until this line follows it.
const SWEEP_ARGS: &[&str] = &[
    "sweep",
    "problems/hopper_granular.yaml",
    "--vary",
    "task.apex_rise=0.03:0.10:0.01",
    "--vary",
    "terrain=[{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}, {model: rigid}]",
];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn results() -> PathBuf {
    repo().join("results")
}

/// A path as the failure messages name it: relative to the repository.
fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The drifts found, one line each; the test fails at the end with all of them.
#[derive(Default)]
struct Drifts(Vec<String>);

impl Drifts {
    fn push(
        &mut self,
        file: &Path,
        field: &str,
        committed: impl std::fmt::Display,
        fresh: impl std::fmt::Display,
        why: &str,
    ) {
        self.0.push(format!(
            "{}: {field}: committed {committed}, fresh {fresh} ({why})",
            shown(file)
        ));
    }

    fn number(&mut self, file: &Path, field: &str, committed: f64, fresh: f64, unit: f64) {
        if committed.is_nan() && fresh.is_nan() {
            return;
        }
        let tolerance = REL * committed.abs() + unit + ABS;
        let difference = (fresh - committed).abs();
        if difference <= tolerance {
            return;
        }
        let relative = if committed != 0.0 {
            format!("relative difference {:.1e}", difference / committed.abs())
        } else {
            format!("difference {difference:.1e}")
        };
        self.push(
            file,
            field,
            committed,
            fresh,
            &format!("{relative}, tolerance {tolerance:.1e}"),
        );
    }

    /// Compares two JSON values: strings, booleans and integers exactly, other numbers within
    /// the tolerance, objects and arrays element by element.
    fn json(&mut self, file: &Path, field: &str, committed: &Value, fresh: &Value) {
        match (committed, fresh) {
            (Value::Number(a), Value::Number(b)) if a.is_f64() || b.is_f64() => {
                self.number(file, field, a.as_f64().unwrap(), b.as_f64().unwrap(), 0.0)
            }
            (Value::Object(a), Value::Object(b)) => {
                for (key, value) in a {
                    let inner = format!("{field}.{key}");
                    match b.get(key) {
                        Some(other) => self.json(file, &inner, value, other),
                        None => self.push(
                            file,
                            &inner,
                            value,
                            "absent",
                            "the fresh run has no such field",
                        ),
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    self.push(
                        file,
                        &format!("{field} (length)"),
                        a.len(),
                        b.len(),
                        "exact",
                    );
                }
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    self.json(file, &format!("{field}[{i}]"), x, y);
                }
            }
            (a, b) if a == b => {}
            (a, b) => self.push(file, field, a, b, "exact"),
        }
    }

    fn assert_none(self, what: &str) {
        assert!(
            self.0.is_empty(),
            "{what}: {} value(s) drifted from the committed results:\n  {}\n\
             If the change is intended, regenerate them (bash results/regenerate.sh --cheap), \
             check the figures and the README claims that quote them, and commit.",
            self.0.len(),
            self.0.join("\n  ")
        );
    }
}

/// Prints why a committed result is not checked (seen with `--nocapture`).
fn skip(what: &Path, why: &str) {
    println!("results_fresh: not checked: {}: {why}", shown(what));
}

/// Runs a committed command line again (`loam ARGS`, program dropped) with its `--out` moved
/// to `out`, quietly; the exit code must be the one a committed converged run had (0).
fn rerun(file: &Path, command_line: &Value, out: &Path) {
    let words: Vec<&str> = command_line
        .as_array()
        .unwrap_or_else(|| panic!("{}: no command_line", shown(file)))
        .iter()
        .map(|w| w.as_str().expect("command_line word"))
        .collect();
    let mut args: Vec<String> = Vec::new();
    let mut words = words.into_iter().skip(1);
    while let Some(word) = words.next() {
        match word {
            "--out" => {
                words.next();
            }
            w if w.starts_with("--out=") => {}
            "-q" | "--quiet" => {}
            w => args.push(w.to_owned()),
        }
    }
    args.extend([
        "--out".into(),
        out.to_str().expect("UTF-8 path").into(),
        "-q".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = common::run::loam(repo(), &args);
    assert!(
        run.status == Some(0) || run.status == Some(1),
        "{}: `loam {}` failed:\n{}",
        shown(file),
        args.join(" "),
        run.dump()
    );
}

/// `loam simulate` arguments that remake a committed reduced-order replay, from its name;
/// None for a replay whose terrain the name does not give (`replay-on-<stem>-<hash>`).
fn replay_args(name: &str) -> Option<Vec<&str>> {
    match name {
        "replay.json" => Some(vec![]),
        "replay-on-rigid.json" => Some(vec!["--terrain", "rigid"]),
        "replay-on-poppy_seeds.json" => Some(vec!["--terrain", "poppy_seeds"]),
        _ => None,
    }
}

/// The fields of `solution.json` that are the plan's result (not its timing, provenance or
/// multipliers): compared field by field.
const SOLUTION_FIELDS: &[&str] = &[
    "status",
    "converged",
    "iterations",
    "objective",
    "apex_rise_m",
    "key_figures",
    "phases",
    "replay",
];

/// The fields of a start (`starts`, with `initial_guess: best`) compared.
const START_FIELDS: &[&str] = &[
    "guess",
    "status",
    "converged",
    "iterations",
    "objective",
    "kept",
];

/// Replay summaries: every top-level value except these (identities; lists and objects, which
/// hold the per-state detail, are not the summary).
const REPLAY_SKIPPED: &[&str] = &["plan_id", "csv_sha256"];

fn check_run_folder(committed: &Path, drifts: &mut Drifts) {
    let solution_file = committed.join("solution.json");
    let solution = common::run::read_json(&solution_file);
    let seconds = solution["timing_s"]["total"]
        .as_f64()
        .unwrap_or(f64::INFINITY);
    if seconds > MAX_SOLVE_S {
        skip(
            committed,
            &format!("its solve took {seconds:.1} s when committed (the check solves only those under {MAX_SOLVE_S} s)"),
        );
        return;
    }
    for dem in ["dem-cpu", "dem-cuda"] {
        if committed.join(dem).is_dir() {
            skip(
                &committed.join(dem),
                "a DEM replay (minutes of grains; dem-cuda needs a GPU)",
            );
        }
    }
    let temp = TempDir::new("results-fresh");
    let out = temp.path().join("run");
    rerun(
        &solution_file,
        &solution["provenance"]["command_line"],
        &out,
    );
    let fresh = common::run::read_json(&out.join("solution.json"));
    for field in SOLUTION_FIELDS {
        if let Some(value) = solution.get(*field) {
            let other = fresh.get(*field).unwrap_or(&Value::Null);
            drifts.json(&solution_file, field, value, other);
        }
    }
    if let Some(starts) = solution.get("starts").and_then(Value::as_array) {
        let others = fresh["starts"].as_array().cloned().unwrap_or_default();
        if starts.len() != others.len() {
            drifts.push(
                &solution_file,
                "starts (length)",
                starts.len(),
                others.len(),
                "exact",
            );
        }
        for (i, (start, other)) in starts.iter().zip(&others).enumerate() {
            for field in START_FIELDS {
                drifts.json(
                    &solution_file,
                    &format!("starts[{i}].{field}"),
                    &start[*field],
                    &other[*field],
                );
            }
        }
    }
    let mut replays: Vec<PathBuf> = std::fs::read_dir(committed)
        .expect("run folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("replay") && name.ends_with(".json")
        })
        .collect();
    replays.sort();
    for replay_file in replays {
        let name = replay_file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let fresh_file = out.join(&name);
        // `loam solve` writes a wrench-space plan's replay itself; the others come from
        // `loam simulate`.
        if !fresh_file.exists() {
            let Some(extra) = replay_args(&name) else {
                skip(&replay_file, "a replay on a terrain its name does not give");
                continue;
            };
            let mut args = vec!["simulate", out.to_str().expect("UTF-8 path"), "-q"];
            args.extend(extra);
            let run = common::run::loam(repo(), &args);
            assert!(
                run.status == Some(0) || run.status == Some(1),
                "{}: `loam {}` failed:\n{}",
                shown(&replay_file),
                args.join(" "),
                run.dump()
            );
        }
        let replay = common::run::read_json(&replay_file);
        let other = common::run::read_json(&fresh_file);
        for (key, value) in replay.as_object().expect("replay JSON object") {
            if REPLAY_SKIPPED.contains(&key.as_str()) || value.is_object() || value.is_array() {
                continue;
            }
            drifts.json(
                &replay_file,
                key,
                value,
                other.get(key).unwrap_or(&Value::Null),
            );
        }
    }
}

/// Folders directly under `results/` (sorted).
fn result_folders() -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(results())
        .expect("results/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    folders
}

#[test]
fn run_folders_match_a_fresh_solve_and_replay() {
    let mut drifts = Drifts::default();
    let mut checked = 0;
    for folder in result_folders() {
        if folder.join("solution.json").is_file() {
            check_run_folder(&folder, &mut drifts);
            checked += 1;
        } else if folder.ends_with("dem") {
            skip(
                &folder,
                "the DEM study (beds, intrusions, replays: minutes to hours each)",
            );
        } else if folder.ends_with("wrench_space") {
            skip(
                &folder,
                "figures of the wrench spaces, no committed numbers",
            );
        }
    }
    assert!(
        checked >= 2,
        "found only {checked} run folders under results/"
    );
    drifts.assert_none("results/*/ run folders");
}

/// The check can fail: a copy of `results/hopper_granular` whose objective was edited by hand
/// (one part in a thousand) is one drift, naming the file, the field and both values; the
/// unedited copy is none.
#[test]
fn a_committed_value_edited_by_hand_is_a_drift() {
    let temp = TempDir::new("results-edited");
    let copy = temp.path().join("hopper_granular");
    std::fs::create_dir(&copy).expect("mkdir");
    for entry in std::fs::read_dir(results().join("hopper_granular")).expect("results/") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, copy.join(path.file_name().unwrap())).expect("copy");
        }
    }
    let mut unedited = Drifts::default();
    check_run_folder(&copy, &mut unedited);
    assert!(unedited.0.is_empty(), "{:?}", unedited.0);

    let file = copy.join("solution.json");
    let mut solution = common::run::read_json(&file);
    let objective = solution["objective"].as_f64().expect("an objective");
    solution["objective"] = (objective * 1.001).into();
    std::fs::write(&file, serde_json::to_string_pretty(&solution).unwrap()).expect("write");
    let mut edited = Drifts::default();
    check_run_folder(&copy, &mut edited);
    assert_eq!(edited.0.len(), 1, "{:?}", edited.0);
    let line = &edited.0[0];
    assert!(
        line.contains("solution.json: objective: committed ")
            && line.contains(&format!("{}", objective * 1.001))
            && line.contains("relative difference 1.0e-3"),
        "{line}"
    );
}

#[test]
fn mdp_scenarios_match_a_fresh_run() {
    let mut drifts = Drifts::default();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(results().join("mdp"))
        .expect("results/mdp/")
        .map(|e| e.expect("entry").path().join("scenario.json"))
        .filter(|p| p.is_file())
        .collect();
    folders.sort();
    assert!(!folders.is_empty(), "no results/mdp/*/scenario.json");
    let temp = TempDir::new("results-fresh-mdp");
    for (i, file) in folders.iter().enumerate() {
        let committed = common::run::read_json(file);
        let out = temp.path().join(i.to_string());
        rerun(file, &committed["command_line"], &out);
        let fresh = common::run::read_json(&out.join("scenario.json"));
        let mut summary = committed["summary"].clone();
        let mut other = fresh["summary"].clone();
        // A wall time, not a result.
        for s in [&mut summary, &mut other] {
            if let Some(map) = s.as_object_mut() {
                map.remove("median_step_us");
            }
        }
        drifts.json(file, "summary", &summary, &other);
    }
    drifts.assert_none("results/mdp/");
}

/// One unit of the last printed digit of a number as `replays.csv` prints it (`2.987038e-2`,
/// `0.030000`): a value that moved by rounding alone can print one unit apart.
fn printed_unit(text: &str) -> f64 {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    10f64.powi(exponent - decimals)
}

/// `results/jump-sweep/replays.csv`: every plan of the sweep on both grounds, in the columns
/// of the apex figure (the paper's Fig. 5).
#[test]
fn jump_sweep_matches_a_fresh_sweep() {
    sweep_matches_a_fresh_sweep("jump-sweep", "replays.csv", SWEEP_ARGS);
}

/// `results/FOLDER/FILE` against `loam ARGS --out TEMP` 's FILE, row by row.
fn sweep_matches_a_fresh_sweep(folder: &str, file: &str, sweep_args: &[&str]) {
    let committed_file = results().join(folder).join(file);
    let temp = TempDir::new("results-fresh-sweep");
    let out = temp.path().join("sweep");
    let mut args: Vec<&str> = sweep_args.to_vec();
    args.extend(["--out", out.to_str().expect("UTF-8 path"), "-q"]);
    let run = common::run::loam(repo(), &args);
    // A sweep with unreachable heights (90, 100 mm on poppy seeds) exits 1.
    assert!(
        run.status == Some(0) || run.status == Some(1),
        "`loam {}` failed:\n{}",
        args.join(" "),
        run.dump()
    );
    let (header, rows) = common::csv::read_csv(&committed_file);
    let (fresh_header, fresh_rows) = common::csv::read_csv(&out.join(file));
    assert_eq!(
        header,
        fresh_header,
        "{}: the columns differ from a fresh sweep's",
        shown(&committed_file)
    );
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let key = |row: &Vec<String>| {
        format!(
            "{} on {}",
            row[column("run_dir")],
            row[column("replay_terrain")]
        )
    };
    let keys: Vec<String> = rows.iter().map(key).collect();
    let fresh_keys: Vec<String> = fresh_rows.iter().map(key).collect();
    assert_eq!(
        keys,
        fresh_keys,
        "{}: not the plans a fresh sweep makes (loam {})",
        shown(&committed_file),
        sweep_args.join(" ")
    );
    let exact = [
        "plan_terrain",
        "apex_target_m",
        "status",
        "converged",
        "iterations",
        "replay_terrain",
        "run_dir",
    ];
    let numbers = ["planned_apex_m", "achieved_apex_m", "error_m", "objective"];
    let mut drifts = Drifts::default();
    for (row, fresh) in rows.iter().zip(&fresh_rows) {
        let name = key(row);
        for (i, field) in header.iter().enumerate() {
            let label = format!("{name}: {field}");
            if numbers.contains(&field.as_str()) {
                let committed: f64 = row[i]
                    .parse()
                    .unwrap_or_else(|_| panic!("{label}: {}", row[i]));
                let value: f64 = fresh[i]
                    .parse()
                    .unwrap_or_else(|_| panic!("{label}: {}", fresh[i]));
                let unit = printed_unit(&row[i]).max(printed_unit(&fresh[i]));
                drifts.number(&committed_file, &label, committed, value, unit);
            } else if (exact.contains(&field.as_str()) || i >= column("objective") + 1)
                && row[i] != fresh[i]
            {
                drifts.push(&committed_file, &label, &row[i], &fresh[i], "exact");
            }
        }
    }
    drifts.assert_none(&shown(&committed_file));
}
