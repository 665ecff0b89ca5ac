//! `loam bench`'s CasADi-Python peer (bench/peer/hopper_casadi.py) against loam: two
//! independent transcriptions of the hopper's jump, solved by the same IPOPT with the same
//! options, must be the same NLP. Checked on every shipped hopper problem: the bounds, the
//! objective and every constraint row compared at the same points; the optimum from the
//! all-zero guess; and loam's optimum handed to the peer as its start.

#![cfg(feature = "planner")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use loam::planner;
use loam::problem::{self, Problem};
use loam::solver::SolveSettings;
use serde_json::{json, Value};

/// From the all-zero guess the two IPOPT runs on hopper_granular take the same steps for 11
/// iterations (the logs agree to every printed digit), then part at the 7th digit, which the
/// restoration phase that follows amplifies: loam ends at 0.047653, the peer at 0.047632, two
/// local optima. Rounding decides between them (the two transcriptions sum the same terms in
/// a different order: loam per element, CasADi over the whole graph), so for these problems
/// the zero-guess objectives are printed, not compared; the rows compared below and the peer
/// kept at loam's optimum are what show the same NLP there. (The other way round does not
/// test anything: started cold at 0.047632, IPOPT's barrier pushes loam and the peer alike
/// out of that shallow optimum and both end at 0.047653.)
const ZERO_GUESS_PATHS_PART: &[&str] = &["hopper_granular"];

const TOLERANCE: f64 = 1e-6;

/// The shipped hopper problems (the planar robots' have no peer), by glob.
fn hopper_problems() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read problems/")
        .map(|entry| entry.expect("read problems/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .filter(|path| !problem::is_planar(&std::fs::read_to_string(path).unwrap(), &[]))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "expected the shipped hopper problems");
    files
}

/// Runs the peer script with `flags` on `input` and returns what it printed, parsed.
fn peer(input: &Value, flags: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/peer/hopper_casadi.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .args(flags)
        .env("PYTHONPATH", env!("LOAM_CASADI_PYTHONPATH"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the peer failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("the peer printed {line:?}: {e}"))
}

fn settings(problem: &Problem) -> SolveSettings {
    SolveSettings {
        options: planner::solver_options(problem),
        ..SolveSettings::default()
    }
}

/// A bound from the peer's JSON, where an infinite one is null.
fn bound(value: &Value, lower: bool) -> f64 {
    let infinite = if lower {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    value.as_f64().unwrap_or(infinite)
}

fn assert_close(what: &str, loam: f64, peer: f64, tolerance: f64) {
    let same = if loam.is_finite() {
        (loam - peer).abs() <= tolerance * loam.abs().max(1.0)
    } else {
        loam == peer
    };
    assert!(same, "{what}: loam {loam}, peer {peer}");
}

#[test]
fn the_peer_and_loam_solve_the_same_nlp() {
    if Command::new("python3").arg("--version").output().is_err() {
        println!("skipped: python3 is not on PATH, and the peer is a Python script");
        return;
    }
    for file in hopper_problems() {
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        // IPOPT's adaptive barrier, as the peer runs it (the shipped two hops ask for the
        // monotone one, which from this guess reaches a cheaper optimum, 0.0061023).
        let problem = problem::load(
            &file,
            &[
                "initial_guess=zero".to_string(),
                "solver.mu_strategy=adaptive".to_string(),
            ],
        )
        .unwrap();
        let settings = settings(&problem);
        let loam = planner::plan(&problem, &settings, None, None)
            .unwrap()
            .report;
        assert!(loam.converged, "{name}: loam from zero: {}", loam.status);
        let input = json!({"problem": &problem, "solver_options": &loam.options});

        let from_zero = peer(&input, &["--with-x"]);
        assert_eq!(
            from_zero["converged"], true,
            "{name}: peer from zero: {from_zero}"
        );
        let peer_objective = from_zero["objective"].as_f64().unwrap();
        let peer_x: Vec<f64> = serde_json::from_value(from_zero["x"].clone()).unwrap();
        println!(
            "{name} from the all-zero guess: loam {:.10} ({} iterations), peer {peer_objective:.10} \
             ({} iterations)",
            loam.objective, loam.iterations, from_zero["iterations"]
        );
        if !ZERO_GUESS_PATHS_PART.contains(&name.as_str()) {
            assert_close(
                &format!("{name}: optimum from the all-zero guess"),
                loam.objective,
                peer_objective,
                TOLERANCE,
            );
        }

        // The same functions and bounds, row by row, at both optima and at the zero guess
        // (measured: they agree to rounding, 2e-16 relative at worst).
        let (_, mut nlp) = planner::transcribe(&problem).unwrap();
        assert_eq!(peer_x.len(), nlp.n_variables(), "{name}: variable count");
        let points = [loam.x.clone(), peer_x, vec![0.0; nlp.n_variables()]];
        let mut evaluate = input.clone();
        evaluate["points"] = json!(points);
        let peer_nlp = peer(&evaluate, &["--evaluate"]);
        for (key, loam_bounds) in [
            ("lbx", &nlp.x_lower),
            ("ubx", &nlp.x_upper),
            ("lbg", &nlp.g_lower),
            ("ubg", &nlp.g_upper),
        ] {
            let peer_bounds = peer_nlp[key].as_array().unwrap();
            assert_eq!(peer_bounds.len(), loam_bounds.len(), "{name}: {key} length");
            for (i, (a, b)) in loam_bounds.iter().zip(peer_bounds).enumerate() {
                let b = bound(b, key.starts_with('l'));
                assert_close(&format!("{name}: {key}[{i}]"), *a, b, 1e-12);
            }
        }
        for (p, x) in points.iter().enumerate() {
            let mut g = vec![0.0; nlp.n_constraints()];
            let f = nlp.eval_value(x, &mut g).unwrap();
            assert_close(
                &format!("{name}: f at point {p}"),
                f,
                peer_nlp["f"][p].as_f64().unwrap(),
                1e-12,
            );
            let peer_g = peer_nlp["g"][p].as_array().unwrap();
            assert_eq!(peer_g.len(), g.len(), "{name}: constraint count");
            for (r, (a, b)) in g.iter().zip(peer_g).enumerate() {
                let what = format!("{name}: point {p}, row {r} ({})", nlp.constraint_name(r));
                assert_close(&what, *a, b.as_f64().unwrap(), 1e-12);
            }
        }

        // loam's optimum as the peer's start: the peer stays there.
        let mut start = input.clone();
        start["x0"] = json!(loam.x);
        let from_loam = peer(&start, &[]);
        assert_eq!(from_loam["converged"], true, "{name}: {from_loam}");
        assert_close(
            &format!("{name}: the peer started at loam's optimum"),
            loam.objective,
            from_loam["objective"].as_f64().unwrap(),
            TOLERANCE,
        );
    }
}
