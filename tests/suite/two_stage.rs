//! The two-stage solve (`strategy: two_stage`, docs/MODEL.md 5.2): phase durations held for a
//! few iterations, then released from that point with its multipliers.

use crate::common::run::loam;
use crate::common::temp_dir::TempDir;

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn solve(dir: &std::path::Path, out: &str, args: &[&str]) -> serde_json::Value {
    let problem = root().join("problems/hopper_granular.yaml");
    let mut all = vec!["solve", problem.to_str().unwrap(), "--out", out, "-q"];
    all.extend_from_slice(args);
    let run = loam(dir, &all);
    assert_eq!(run.code(), 0, "{}", run.dump());
    let text = std::fs::read_to_string(dir.join(out).join("solution.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// On the bed the two stages reach the one-stage optimum (to IPOPT's tolerance), and
/// `solution.json` lists both stages, whose iterations add up to the plan's.
#[test]
fn two_stages_reach_the_one_stage_optimum_on_poppy_seeds() {
    let dir = TempDir::new("two_stage_poppy");
    let one = solve(dir.path(), "one", &["--set", "strategy=one_stage"]);
    let two = solve(dir.path(), "two", &[]);
    assert_eq!(one["converged"], true);
    assert_eq!(two["converged"], true);
    let (a, b) = (
        one["objective"].as_f64().unwrap(),
        two["objective"].as_f64().unwrap(),
    );
    assert!(b <= a * (1.0 + 1e-6), "two stages {b} against one {a}");
    assert!(one.get("stages").is_none(), "one stage lists no stages");
    let stages = two["stages"].as_array().unwrap();
    assert_eq!(stages[0]["stage"], "hold durations");
    assert_eq!(stages[1]["stage"], "release");
    assert_eq!(stages[1]["converged"], true);
    let sum: u64 = stages
        .iter()
        .map(|s| s["iterations"].as_u64().unwrap())
        .sum();
    assert_eq!(two["iterations"].as_u64().unwrap(), sum);
    // The first stage ran at most its iterations (the file's `stage_one.iterations`: 50).
    assert!(stages[0]["iterations"].as_u64().unwrap() <= 50);
}

/// A problem's own first stage: the stance held where it says, the flight free; the held
/// stance is what the first stage's plan has (its objective is that of a 0.15 s stance).
#[test]
fn a_problem_sets_its_first_stage() {
    let dir = TempDir::new("two_stage_own");
    let held = solve(
        dir.path(),
        "held",
        &[
            "--set",
            "schedule.0.duration=[0.15, 0.15]",
            "--set",
            "strategy=one_stage",
        ],
    );
    let staged = solve(
        dir.path(),
        "staged",
        &[
            "--set",
            "stage_one={durations: [0.15, null], iterations: 500}",
        ],
    );
    let first = &staged["stages"][0];
    assert_eq!(
        first["converged"], true,
        "given room, the first stage converges"
    );
    // Holding the stance by its bounds or by the first stage is the same problem.
    let (a, b) = (
        held["objective"].as_f64().unwrap(),
        first["objective"].as_f64().unwrap(),
    );
    assert!(
        (a - b).abs() <= 1e-6 * a,
        "held by bounds {a}, by the first stage {b}"
    );
    // Released, the plan is no dearer than the held one.
    assert!(staged["objective"].as_f64().unwrap() <= a * (1.0 + 1e-6));
}

/// Bad first stages: exit 2, naming the field, nothing written.
#[test]
fn bad_first_stages_are_refused() {
    let dir = TempDir::new("two_stage_bad");
    for (set, field) in [
        ("stage_one={durations: [0.1]}", "stage_one.durations"),
        (
            "stage_one={durations: [0.5, null]}",
            "stage_one.durations[0]",
        ),
        (
            "stage_one={durations: [0.1, null], iterations: 0}",
            "stage_one.iterations",
        ),
        ("strategy=three_stage", "strategy"),
    ] {
        let problem = root().join("problems/hopper_granular.yaml");
        let args = vec![
            "solve",
            problem.to_str().unwrap(),
            "--out",
            "bad",
            "-q",
            "--set",
            set,
        ];
        let out = loam(dir.path(), &args);
        assert_eq!(out.code(), 2, "{set}: {}", out.dump());
        assert!(out.stderr.contains(field), "{set}: {}", out.dump());
        assert!(!dir.path().join("bad").exists(), "{set}: nothing written");
    }
}

/// `loam bench` times a planar problem as its file states it, with one stage and with two,
/// each row with the objective it reached (the two strategies reach the same 60 mm optimum on
/// the bed), and skips a problem it cannot time with the reason instead of stopping.
#[test]
fn bench_times_a_planar_problem_in_both_strategies_and_skips_a_rail() {
    let dir = TempDir::new("two_stage_bench");
    let jump = root().join("problems/hopper_granular.yaml");
    let rail = root().join("problems/hopper_rail.yaml");
    let out = loam(
        dir.path(),
        &[
            "bench",
            jump.to_str().unwrap(),
            rail.to_str().unwrap(),
            "--repeat",
            "1",
        ],
    );
    assert_eq!(out.code(), 0, "{}", out.dump());
    let objective = |config: &str| -> f64 {
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with("hopper_granular") && l.contains(config))
            .unwrap_or_else(|| panic!("no {config} row:\n{}", out.dump()));
        line.split_whitespace().last().unwrap().parse().unwrap()
    };
    let (one, two) = (objective("1-stage"), objective("2-stage"));
    assert!((one - two).abs() < 2e-6, "1-stage {one}, 2-stage {two}");
    assert_eq!(objective(" file "), two, "the file names two stages");
    assert!(
        out.stdout.contains("2-stage/1-stage time"),
        "{}",
        out.dump()
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("hopper_rail") && l.contains("skipped: a wrench-space")),
        "{}",
        out.dump()
    );
}

/// `--warm-start RUN` on a planar problem with another mesh: the 31-node plan resampled onto
/// 61 nodes per phase starts IPOPT, which converges to the cold 61-node plan's optimum (the
/// finer mesh's objective, lower than the coarse one's); the provenance names the source plan.
/// A run of another robot is refused, naming the file.
#[test]
fn a_planar_plan_starts_a_finer_mesh() {
    let dir = TempDir::new("two_stage_warm_mesh");
    let coarse = solve(dir.path(), "coarse", &[]);
    let fine_mesh = [
        "--set",
        "schedule.0.nodes=61",
        "--set",
        "schedule.1.nodes=61",
    ];
    let cold = solve(dir.path(), "cold", &fine_mesh);
    let mut args = fine_mesh.to_vec();
    args.extend(["--warm-start", "coarse"]);
    let warm = solve(dir.path(), "warm", &args);
    assert_eq!(warm["converged"], true);
    assert_eq!(warm["provenance"]["warm_start"]["kind"], "plan");
    assert_eq!(
        warm["provenance"]["warm_start"]["plan_id"],
        coarse["plan_id"]
    );
    let (c, w) = (
        cold["objective"].as_f64().unwrap(),
        warm["objective"].as_f64().unwrap(),
    );
    assert!((c - w).abs() <= 1e-6 * c, "cold {c}, warm {w}");
    assert!(w < coarse["objective"].as_f64().unwrap());
    // Another robot's plan cannot start this one.
    let monopod = root().join("problems/monopod_hop.yaml");
    let out = loam(
        dir.path(),
        &[
            "solve",
            monopod.to_str().unwrap(),
            "--out",
            "mono",
            "-q",
            "--warm-start",
            "coarse",
        ],
    );
    assert_eq!(out.code(), 2, "{}", out.dump());
    assert!(out.stderr.contains("trajectory.csv"), "{}", out.dump());
    assert!(!dir.path().join("mono").exists());
}
