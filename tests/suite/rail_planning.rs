//! Planning with wrench spaces: the hopper on an inclined rail (docs/WRENCH_SPACE.md section
//! 4.4, tests P1-P5).

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::run::{assert_exit, loam, read_json};
use common::temp_dir::TempDir;

use loam::model::hopper::{state, Hopper};
use loam::model::rail::RailWrenches;
use loam::planner::rail::{self, RailJump, RailPlan};
use loam::problem::{self, Problem};
use loam::sim::command::Command;
use loam::sim::mdp::rail as mdp_rail;
use loam::sim::mdp::QpSolver;
use loam::sim::reduced::{self, Simulator};
use loam::solver::SolveSettings;
use loam::terrain::hull::HalfSpaces;
use loam::terrain::wrench_space::WrenchSpace;
use loam::terrain::{AddedMass, Terrain};
use loam::transcription::{PhaseTrajectory, Trajectory};

fn quiet() -> SolveSettings {
    SolveSettings {
        log_level: 0,
        ..SolveSettings::default()
    }
}

/// The shipped 60 mm poppy-seed jump with no added mass (c_g = 0: the bed's force is F_hyd(d))
/// and `nodes` per phase.
fn granular(nodes: usize) -> Problem {
    let overrides = [
        "terrain.surrounding_mass_scaling=0".to_string(),
        format!("phases.0.nodes={nodes}"),
        format!("phases.1.nodes={nodes}"),
    ];
    problem::load(Path::new("problems/hopper_granular.yaml"), &overrides).unwrap()
}

fn bed(problem: &Problem) -> AddedMass {
    AddedMass::from_medium(
        &problem.terrain.medium_parameters(),
        problem.robot.foot_radius,
    )
}

fn rail_plan(jump: &RailJump, start: Option<&Trajectory>) -> RailPlan {
    let plan = rail::plan(jump, &quiet(), start, None).unwrap();
    assert!(
        plan.report.converged,
        "rail plan at α = {}: {:?} after {} iterations",
        jump.rail.angle, plan.report.status, plan.report.iterations
    );
    plan
}

/// The reduced-order replay (adaptive integration with events, MODEL.md section 2's stick
/// law) of a command from `initial` on `terrain`: the apex rise [m], and the rod's height at
/// `times`.
fn reduced_replay(
    robot: &Hopper,
    terrain: &Terrain,
    command: &Command,
    initial: &[f64],
    times: &[f64],
) -> (f64, Vec<f64>) {
    let sim = Simulator {
        robot,
        terrain,
        command,
        settings: reduced::Settings::default(),
    };
    let x0: [f64; state::COUNT] = initial.try_into().unwrap();
    let run = sim.run(x0, times).unwrap();
    let rod = times
        .iter()
        .map(|&t| {
            let s = run
                .samples
                .iter()
                .min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs()))
                .unwrap();
            assert!((s.t - t).abs() < 1e-12, "a sample at {t}");
            s.x[state::Z_R]
        })
        .collect();
    (run.apex_rise().expect("an apex"), rod)
}

/// P1: at α = 0 a wrench space whose pure-down capacity is F_hyd(d) is the 1-D granular
/// model without added mass (c_g = 0), whose force law the reduced-order simulator integrates
/// in continuous time with events and the bed's stick law (0 ≤ load ≤ F_hyd holds the foot).
/// The rail plan (the MDP step in stance) replayed there reaches its planned apex within 1 mm
/// at 31 nodes, and closer at 61 and 121.
///
/// The specification compares with the 1-D granular *plan* at c_g = 0; that plan does not
/// exist: IPOPT reports the 1-D NLP infeasible at c_g = 0 (its stance applies F_hyd whenever
/// the foot touches, so the foot cannot stop and unload before take-off without moving up,
/// which ż_f ≤ 0 forbids; added mass hides that between nodes). The simulator that holds the
/// 1-D law exactly is the reference instead.
#[test]
fn p1_at_zero_angle_the_rail_plan_replays_in_the_1d_granular_simulator() {
    let (mut gaps, mut stance_gaps) = (Vec::new(), Vec::new());
    let mut previous: Option<Trajectory> = None;
    for nodes in [31, 61, 121] {
        let problem = granular(nodes);
        let robot = Hopper::from_problem(&problem);
        let terrain = Terrain::AddedMass(bed(&problem));
        let jump = RailJump::from_problem(&problem, 0.0, RailWrenches::Hydrostatic(bed(&problem)))
            .unwrap();
        // The finer grids start from the coarser plan, so that all three are one plan.
        let guess = previous.as_ref().map(|t| resampled(t, nodes));
        let plan = rail_plan(&jump, guess.as_ref());
        previous = Some(plan.trajectory.clone());
        let stance = &plan.trajectory.phases[0];
        let start = &stance.states[0];
        let command = mdp_rail::command_of(&plan.trajectory);
        let times: Vec<f64> = (0..nodes).map(|k| stance.node_time(k)).collect();
        let (apex, rod) = reduced_replay(&robot, &terrain, &command, start, &times);
        let stance_gap = rod
            .iter()
            .zip(&stance.states)
            .map(|(z, x)| (z - x[state::Z_R]).abs())
            .fold(0.0, f64::max);
        let rest = robot.rest_state(&terrain, start[state::Z_D]);
        println!(
            "N = {nodes}: rail plan {} iterations, objective {:.6e}, stance {:.1} ms, apex \
             {:.3} mm; reduced-order replay apex {:.3} mm, rod within {:.3} mm of the plan's \
             stance nodes; rest foot {:.4} mm (1-D model {:.4} mm)",
            plan.report.iterations,
            plan.report.objective,
            stance.duration * 1e3,
            plan.apex_rise * 1e3,
            apex * 1e3,
            stance_gap * 1e3,
            start[state::Z_F] * 1e3,
            rest[state::Z_F] * 1e3,
        );
        assert!((start[state::Z_F] - rest[state::Z_F]).abs() < 1e-9);
        gaps.push((apex - plan.apex_rise).abs());
        stance_gaps.push(stance_gap);
    }
    // The stance is first order: the rod's path within the stance halves its distance to the
    // continuous-time replay with every doubling (2.9, 1.4, 0.7 mm measured).
    assert!(
        stance_gaps[1] < 0.6 * stance_gaps[0] && stance_gaps[2] < 0.6 * stance_gaps[1],
        "stance gaps {stance_gaps:?}"
    );
    // The spec's 1 mm at 31 nodes (0.33 mm measured); finer grids closer still. Beyond 61
    // nodes the apex gap is at the level of the plans' own differences (each grid's optimum
    // is another plan; 0.01 and 0.07 mm), so it is bounded rather than required to fall at
    // every doubling.
    assert!(gaps[0] < 1e-3, "gap at 31 nodes {:.3} mm", gaps[0] * 1e3);
    assert!(gaps[1] < gaps[0] && gaps[2] < gaps[0], "gaps {gaps:?}");
    assert!(gaps[1] < 2e-4 && gaps[2] < 2e-4, "gaps {gaps:?}");
}

/// `trajectory` on `nodes` nodes per phase, by linear interpolation in time.
fn resampled(trajectory: &Trajectory, nodes: usize) -> Trajectory {
    let lerp = |rows: &[Vec<f64>], s: f64| -> Vec<f64> {
        let x = s * (rows.len() - 1) as f64;
        let i = (x.floor() as usize).min(rows.len() - 2);
        let f = x - i as f64;
        rows[i]
            .iter()
            .zip(&rows[i + 1])
            .map(|(a, b)| a + f * (b - a))
            .collect()
    };
    Trajectory {
        phases: trajectory
            .phases
            .iter()
            .map(|p| {
                let at = |k: usize| k as f64 / (nodes - 1) as f64;
                PhaseTrajectory {
                    name: p.name.clone(),
                    duration: p.duration,
                    states: (0..nodes).map(|k| lerp(&p.states, at(k))).collect(),
                    controls: (0..nodes).map(|k| lerp(&p.controls, at(k))).collect(),
                    ..Default::default()
                }
            })
            .collect(),
    }
}

const DATA: &str = "problems/data/wrench_space/rft_poppy_hopper_disc.yaml";

/// The shipped 60 mm jump on the rail at `angle` over the RFT poppy-seed data of the
/// hopper's disc foot.
fn data_jump(angle: f64) -> RailJump {
    let problem = problem::load(Path::new("problems/hopper_granular.yaml"), &[]).unwrap();
    let space = WrenchSpace::load(Path::new(DATA)).unwrap();
    RailJump::from_problem(&problem, angle, RailWrenches::Data(Arc::new(space))).unwrap()
}

/// The plans at α = 0, then 0.2 and 0.4 rad each from the previous one (P5's warm start).
fn data_plans() -> Vec<RailPlan> {
    let mut plans: Vec<RailPlan> = Vec::new();
    println!(
        "longest stable step {:.3} ms",
        data_jump(0.0).rail.stable_step() * 1e3
    );
    for angle in [0.0, 0.2, 0.4] {
        let start = plans.last().map(|p| p.trajectory.clone());
        let plan = rail_plan(&data_jump(angle), start.as_ref());
        println!(
            "α = {angle}: {} iterations, objective {:.6e}, stance {:.1} ms, flight {:.1} ms, \
             rest foot {:.3} mm along the rail",
            plan.report.iterations,
            plan.report.objective,
            plan.trajectory.phases[0].duration * 1e3,
            plan.trajectory.phases[1].duration * 1e3,
            plan.trajectory.phases[0].states[0][state::Z_F] * 1e3,
        );
        plans.push(plan);
    }
    plans
}

/// P2, P3 and P5 on the RFT data: α = 0.2 and 0.4 solve from the α = 0 plan (P5); every
/// planned wrench lies in W(θ) by the H-form (P2); the MDP simulator, given the plan's
/// command, reproduces the stance node by node and reaches the planned apex within 1 mm (P3).
#[test]
fn p2_p3_p5_plans_on_rft_data_at_three_rail_angles() {
    for plan in data_plans() {
        let jump = &plan.jump;
        let stance = &plan.trajectory.phases[0];
        let n = state::COUNT;
        // Inside W up to IPOPT's own bound relaxation (1e-8 relative): slack relative to the
        // largest vertex.
        let mut worst: f64 = f64::INFINITY;
        for k in 0..stance.states.len() - 1 {
            let x = &stance.states[k];
            let lambda = &stance.controls[k][1..];
            let w = jump.wrench(x, lambda);
            let vertices = jump.rail.vertices(&x[state::Z_F]);
            if vertices.iter().all(|v| v.iter().all(|c| *c == 0.0)) {
                assert!(
                    w.iter().all(|c| c.abs() < 1e-9),
                    "node {k}: {w:?} above the bed"
                );
                continue;
            }
            let hull = HalfSpaces::of_wrench_space(&vertices).unwrap();
            let scale = vertices.iter().map(|v| norm(v)).fold(0.0, f64::max);
            worst = worst.min(hull.slack(&w) / scale);
            assert_eq!(stance.controls[k].len(), 1 + jump.rail.n_vertices());
            assert_eq!(x.len(), n);
        }
        assert!(
            worst >= -1e-7,
            "α = {}: a wrench outside W by {worst:e} of its scale",
            jump.rail.angle
        );

        let replay =
            mdp_rail::replay(&jump.rail, &plan.trajectory, 20, QpSolver::ActiveSet).unwrap();
        let mut drift: f64 = 0.0;
        for (k, planned) in stance.states.iter().enumerate() {
            let replayed = &replay.states[k];
            for i in [state::Z_M, state::Z_R, state::Z_F] {
                drift = drift.max((replayed[i] - planned[i]).abs());
            }
        }
        let apex = replay.apex_rise.expect("the replay reaches an apex");
        println!(
            "α = {}: wrench inside W by {worst:.2e} (relative); MDP replay: stance drift {drift:.2e} m, \
             apex {:.3} mm (planned {:.3} mm), steps outside the data {}",
            jump.rail.angle,
            apex * 1e3,
            plan.apex_rise * 1e3,
            replay.outside_steps
        );
        assert!(
            drift < 1e-6,
            "α = {}: stance drift {drift:e} m",
            jump.rail.angle
        );
        assert!(
            (apex - plan.apex_rise).abs() < 1e-3,
            "α = {}: replay apex {apex} m, planned {} m",
            jump.rail.angle,
            plan.apex_rise
        );
        assert_eq!(replay.outside_steps, 0);
    }
}

/// P4: the Jacobian of the maximum-dissipation rows that CasADi derives against central
/// differences of the rows' values, near a plan on the RFT data (α = 0.2).
#[test]
fn p4_dissipation_derivatives_match_finite_differences() {
    let jump = data_jump(0.2);
    let mut nlp = rail::transcribe(&jump).unwrap();
    let mut x = nlp.pack(&jump.rest_guess().unwrap());
    // A point off the guess: every variable moved a little, deterministically.
    for (i, xi) in x.iter_mut().enumerate() {
        *xi += 1e-3 * ((i as f64 * 0.7).sin());
    }
    let rows: Vec<usize> = (0..nlp.n_constraints())
        .filter(|&r| nlp.constraint_name(r).contains("dissipation"))
        .collect();
    assert_eq!(
        rows.len(),
        (jump.stance.0 - 1) * (jump.rail.n_vertices() + 1)
    );
    let mut grad = vec![0.0; nlp.n_variables()];
    let mut jac = vec![0.0; nlp.jac_rows.len()];
    nlp.eval_first(&x, &mut grad, &mut jac).unwrap();
    // The first four intervals' rows, every column they touch.
    let checked: Vec<usize> = rows[..4 * (jump.rail.n_vertices() + 1)].to_vec();
    let columns: std::collections::BTreeSet<usize> = (0..jac.len())
        .filter(|&e| checked.contains(&nlp.jac_rows[e]))
        .map(|e| nlp.jac_cols[e])
        .collect();
    let mut g_plus = vec![0.0; nlp.n_constraints()];
    let mut g_minus = vec![0.0; nlp.n_constraints()];
    let mut worst: f64 = 0.0;
    let mut entries = 0;
    for &c in &columns {
        let step = 1e-6 * x[c].abs().max(1e-2);
        let mut xp = x.clone();
        xp[c] += step;
        nlp.eval_value(&xp, &mut g_plus).unwrap();
        xp[c] -= 2.0 * step;
        nlp.eval_value(&xp, &mut g_minus).unwrap();
        for e in 0..jac.len() {
            let r = nlp.jac_rows[e];
            if nlp.jac_cols[e] != c || !checked.contains(&r) {
                continue;
            }
            let fd = (g_plus[r] - g_minus[r]) / (2.0 * step);
            let error = (jac[e] - fd).abs() / jac[e].abs().max(fd.abs()).max(1e-3);
            worst = worst.max(error);
            entries += 1;
        }
    }
    println!(
        "{entries} Jacobian entries of {} rows: worst relative error {worst:.2e}",
        checked.len()
    );
    assert!(entries > 100);
    assert!(worst < 1e-6, "worst relative error {worst:e}");
}

fn norm(v: &[f64; 3]) -> f64 {
    v.iter().map(|c| c * c).sum::<f64>().sqrt()
}

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped problem end to end: `loam solve` plans, replays in the MDP simulator and
/// writes the plan with its replay; the files say what a user needs.
#[test]
fn the_shipped_rail_problem_solves_and_replays() {
    let dir = TempDir::new("rail-solve");
    let out = dir.path().join("run");
    let solve = loam(
        manifest(),
        &[
            "solve",
            "problems/hopper_rail.yaml",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
    );
    assert_exit(&solve, 0, &[]);
    let solution = read_json(&out.join("solution.json"));
    assert_eq!(solution["converged"], true);
    let planned = solution["apex_rise_m"].as_f64().unwrap();
    assert!((planned - 0.06).abs() < 1e-6, "{solution}");
    let replayed = solution["replay"]["apex_rise_m"].as_f64().unwrap();
    assert!((replayed - planned).abs() < 1e-3, "replay {replayed} m");
    assert!(solution["replay"]["stance_difference_m"].as_f64().unwrap() < 1e-6);
    assert_eq!(solution["rail"]["angle_rad"], 0.2);
    let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    let weights: Vec<String> = (1..=26).map(|i| format!("lambda_{i}")).collect();
    assert_eq!(
        header,
        format!(
            "t,phase,node,z_m,v_m,z_r,v_r,z_f,v_f,e,z_d,u,G,F_x,F_z,tau,{}",
            weights.join(",")
        )
    );
    assert_eq!(csv.lines().count(), 1 + 31 + 31);

    let replay = std::fs::read_to_string(out.join("mdp_replay.csv")).unwrap();
    assert!(
        replay.starts_with("t,z_m,v_m,z_r,v_r,z_f,v_f,e,z_d,G\n"),
        "{replay:.80}"
    );
    let plot = loam(
        manifest(),
        &["plot", out.to_str().unwrap(), "--png-only", "-q"],
    );
    assert_exit(&plot, 0, &[]);
    assert!(out.join("plots/rail_run.png").is_file());

    // The plan starts the same jump on a steeper rail (P5 from the command line): from the
    // rest guess that takes 699 iterations (12.9 s on this 2-core machine), from the 0.2 rad
    // plan 158.
    let steeper = dir.path().join("steeper");
    let warm = loam(
        manifest(),
        &[
            "solve",
            "problems/hopper_rail.yaml",
            "--set",
            "terrain.rail_angle=0.4",
            "--warm-start",
            out.to_str().unwrap(),
            "--out",
            steeper.to_str().unwrap(),
            "-q",
        ],
    );
    assert_exit(&warm, 0, &[]);
    let warmed = read_json(&steeper.join("solution.json"));
    assert_eq!(warmed["converged"], true);
    assert_eq!(warmed["rail"]["angle_rad"], 0.4);
    let source = &warmed["provenance"]["warm_start"];
    assert_eq!(source["kind"], "plan", "{warmed}");
    assert_eq!(source["plan_id"], solution["plan_id"]);
    let iterations = warmed["iterations"].as_u64().unwrap();
    assert!(
        iterations < 400,
        "{iterations} iterations from the warm start"
    );
    assert!((warmed["apex_rise_m"].as_f64().unwrap() - 0.06).abs() < 1e-6);

    // Starts that cannot start it are refused, and nothing is written.
    let refused = dir.path().join("refused");
    for (set, from, expected) in [
        (
            "phases.0.nodes=21",
            out.to_str().unwrap(),
            &["31 stance and 31 flight nodes", "21 and 31"][..],
        ),
        (
            "name=x",
            "results/hopper_granular",
            &["not a plan of the hopper on a rail"][..],
        ),
    ] {
        let run = loam(
            manifest(),
            &[
                "solve",
                "problems/hopper_rail.yaml",
                "--set",
                set,
                "--warm-start",
                from,
                "--out",
                refused.to_str().unwrap(),
            ],
        );
        assert_exit(&run, 2, expected);
        assert!(!refused.exists());
    }

    // The reduced-order simulator does not read rail plans, and says so.
    let simulate = loam(manifest(), &["simulate", out.to_str().unwrap()]);
    assert_exit(&simulate, 2, &["wrench-space terrain", "replay"]);
}

/// `loam check` transcribes a rail problem without solving it, and refuses a bad one as
/// `loam solve` does.
#[test]
fn check_transcribes_the_rail_problem() {
    let ok = loam(manifest(), &["check", "problems/hopper_rail.yaml"]);
    assert_exit(&ok, 0, &[]);
    for needle in ["ok", "rail at 0.2 rad", "variables"] {
        assert!(ok.stdout.contains(needle), "{needle}: {}", ok.dump());
    }
    let bad = loam(
        manifest(),
        &[
            "check",
            "problems/hopper_rail.yaml",
            "--set",
            "terrain.rail_angle=1.0",
        ],
    );
    assert_exit(&bad, 2, &["terrain.rail_angle", "outside the data's tilts"]);
}

/// Bad rail problems exit 2 with the file, the field and what is accepted, and write nothing.
#[test]
fn bad_rail_problems_are_refused_with_their_field() {
    let dir = TempDir::new("rail-bad");
    let out = dir.path().join("run");
    let cases: [(&str, &[&str]); 5] = [
        (
            "terrain.rail_angle=1.0",
            &["terrain.rail_angle", "outside the data's tilts", "0.8"],
        ),
        (
            "terrain.rail_angle=2.0",
            &["terrain.rail_angle", "(-pi/2, pi/2)"],
        ),
        (
            "terrain.data=data/none.yaml",
            &["terrain.data", "none.yaml"],
        ),
        (
            "transcription.scheme=hermite_simpson",
            &["transcription.scheme", "trapezoidal"],
        ),
        ("phases.0.nodes=3", &["at most", "more nodes"]),
    ];
    for (set, needles) in cases {
        let run = loam(
            manifest(),
            &[
                "solve",
                "problems/hopper_rail.yaml",
                "--set",
                set,
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_exit(&run, 2, needles);
        assert!(!out.exists(), "{set}: wrote {}", out.display());
    }
    let granular = loam(
        manifest(),
        &[
            "check",
            "problems/hopper_granular.yaml",
            "--set",
            "terrain.rail_angle=0.2",
        ],
    );
    assert_exit(
        &granular,
        2,
        &["terrain.rail_angle", "only `model: wrench_space`"],
    );
}

/// A wrench-space run records its data file (absolute path and SHA-256) in its provenance;
/// `loam solve RUN` solves it again on that file, and refuses once the file has changed.
#[test]
fn a_rail_run_is_solved_again_on_the_data_it_recorded_and_only_on_that() {
    let dir = TempDir::new("rail_again");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = "data/wrench_space/rft_poppy_hopper_disc.yaml";
    std::fs::create_dir_all(dir.path().join("data/wrench_space")).unwrap();
    std::fs::copy(root.join("problems").join(data), dir.path().join(data)).unwrap();
    std::fs::copy(
        root.join("problems/hopper_rail.yaml"),
        dir.path().join("rail.yaml"),
    )
    .unwrap();
    let out = loam(dir.path(), &["solve", "rail.yaml", "--out", "a", "-q"]);
    assert_exit(&out, 0, &[]);
    let solution = read_json(&dir.path().join("a/solution.json"));
    let recorded = &solution["provenance"]["data_files"][0];
    assert_eq!(recorded["field"], "terrain.data");
    let bytes = std::fs::read(dir.path().join(data)).unwrap();
    let sha = loam::problem::sha256_hex(&bytes);
    assert_eq!(recorded["sha256"], sha.as_str());

    let out = loam(dir.path(), &["solve", "a", "--out", "b", "-q"]);
    assert_exit(&out, 0, &[]);
    let csv =
        |run: &str| std::fs::read_to_string(dir.path().join(run).join("trajectory.csv")).unwrap();
    assert_eq!(csv("a"), csv("b"), "the same plan on the same data");

    let mut changed = bytes.clone();
    changed.extend_from_slice(b"\n# edited\n");
    std::fs::write(dir.path().join(data), changed).unwrap();
    let out = loam(dir.path(), &["solve", "a", "--out", "c", "-q"]);
    assert_exit(&out, 2, &["changed since the run"]);
    assert!(
        out.stderr.contains("changed since the run"),
        "{}",
        out.dump()
    );
    assert!(!dir.path().join("c").exists());
}

/// The rail's MDP step below the data: a foot pushed to twice the deepest node's depth, moving
/// down, meets more resistance along the rail than at the deepest node (the set extrapolated
/// as everywhere else, docs/WRENCH_SPACE.md "Beyond the data"), and the step says it was
/// outside; with the data clamped it meets the deepest node's resistance and no more.
#[test]
fn the_rail_step_below_the_data_extrapolates_unless_the_data_clamp() {
    use loam::terrain::wrench_space::BeyondData;
    let mut jump = data_jump(0.2);
    let lowest = jump.rail.lowest_foot();
    let state_at = |z_f: f64| {
        let mut x = vec![0.0; state::COUNT];
        x[state::Z_F] = z_f;
        x[state::V_F] = -50.0; // more than any wrench here can stop in one step
        x[state::Z_R] = z_f + 0.06;
        x[state::Z_M] = z_f + 0.06;
        x
    };
    let force = |jump: &RailJump, z_f: f64| {
        let step = mdp_rail::step(&jump.rail, &state_at(z_f), 0.0, 1e-3, QpSolver::ActiveSet);
        let step = step.unwrap();
        (step.force, step.outside, step.clamped)
    };
    let (at_deepest, outside, _) = force(&jump, lowest * 0.999);
    assert!(!outside);
    let (deeper, outside, clamped) = force(&jump, 2.0 * lowest);
    println!("force along the rail: {at_deepest:.2} N at the deepest node, {deeper:.2} N at twice its depth");
    assert!(outside && clamped.is_none());
    assert!(deeper > 1.2 * at_deepest, "{deeper} N vs {at_deepest} N");

    let RailWrenches::Data(space) = &jump.rail.wrenches else {
        unreachable!()
    };
    let mut clamping = (**space).clone();
    clamping.set_beyond_data(BeyondData::Clamp);
    jump.rail.wrenches = RailWrenches::Data(Arc::new(clamping));
    let (held, outside, clamped) = force(&jump, 2.0 * lowest);
    assert!(outside && clamped.is_some());
    assert!(
        (held - at_deepest).abs() < 0.05 * at_deepest,
        "{held} N vs {at_deepest} N"
    );
}
