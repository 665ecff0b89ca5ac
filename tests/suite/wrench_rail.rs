//! The hopper on an inclined rail over a wrench space (docs/WRENCH_SPACE.md section 4.4),
//! planned through the one planar pipeline: the hopper's robot file on a guide tilted by
//! `guide_angle`, its PI drive and locked base in the wrench-space planner's ground step.

use crate::common;

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use common::run::{assert_exit, loam, read_json, replay_on};
use common::temp_dir::TempDir;

use loam::planner::planar::wrench_space::{self, WrenchSpacePlanner};
use loam::planner::planar::PlanarPlanner;
use loam::problem::planar::PlanarProblem;
use loam::solver::SolveSettings;
use loam::terrain::hull::HalfSpaces;
use loam::terrain::wrench_space::WrenchSpace;
use loam::transcription::{Nlp, Scheme};

const FILE: &str = "problems/hopper_rail.yaml";
const DATA: &str = "problems/data/wrench_space/rft_poppy_hopper_disc.yaml";

/// The rail planner that this pipeline replaced reached 0.0329547 on the shipped problem
/// (½∫u² dt, 309 iterations; its last committed run, results/hopper_rail before the fold).
const RAIL_PLANNER_OPTIMUM: f64 = 0.0329547;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn problem(angle: f64) -> PlanarProblem {
    loam::problem::load_any(
        &root().join(FILE),
        &[format!("robot.description.guide_angle={angle}")],
    )
    .unwrap()
}

fn planner(angle: f64) -> Rc<PlanarPlanner> {
    let space = WrenchSpace::load(&root().join(DATA)).unwrap();
    Rc::new(PlanarPlanner::on_wrench_space(
        &problem(angle),
        Arc::new(space),
    ))
}

fn hop(angle: f64) -> Arc<WrenchSpacePlanner> {
    Arc::clone(planner(angle).wrench_space.as_ref().unwrap())
}

/// The stable step is the boundary of stability of the ground step's linear part: just
/// below it neither the free nor the held map grows, just above it one grows clearly; and it
/// is the rail model's own 4.786 ms (its drive loop), measured by the rail planner this
/// pipeline replaced on the same robot.
#[test]
fn the_stable_step_is_where_the_drive_loop_turns_unstable() {
    for angle in [0.0, 0.2] {
        let hop = hop(angle);
        let q = hop.rest_configuration().unwrap();
        let h = hop.stable_step(&q).expect("the drive loop bounds the step");
        println!("α = {angle}: longest stable step {:.4} ms", h * 1e3);
        assert!((h - 4.7859e-3).abs() < 2e-6, "stable step {h} s");
        for held in [true, false] {
            let below = hop.spectral_radius(&q, 0.99 * h, held);
            assert!(below <= 1.0 + 1e-6, "held {held}: radius {below} at 0.99 h");
        }
        let above = [true, false].map(|held| hop.spectral_radius(&q, 1.02 * h, held));
        assert!(above.iter().any(|&r| r > 1.01), "radii {above:?} at 1.02 h");
    }
}

/// At rest the foot sits where the wrench space's capacity along the rail carries the
/// hopper's weight along it (m g cos α): a vertex carries exactly that there, none more.
#[test]
fn the_rest_depth_carries_the_weight_along_the_rail() {
    for angle in [0.0, 0.4] {
        let hop = hop(angle);
        let depth = hop.rest_depth().unwrap();
        let weight = hop.robot.body.total_mass() * hop.robot.body.gravity * f64::cos(angle);
        let along = |d: f64| {
            hop.space
                .vertices(&d, &angle)
                .iter()
                .map(|w| -angle.sin() * w[0] + angle.cos() * w[1])
                .fold(0.0, f64::max)
        };
        println!("α = {angle}: rest depth {:.3} mm", depth * 1e3);
        assert!(((along(depth) - weight) / weight).abs() < 1e-6);
        let q = hop.rest_configuration().unwrap();
        let foot = hop.contact_frame(&q, 0);
        assert!((foot.depth - depth).abs() < 1e-12);
        assert!(
            (foot.tilt - angle).abs() < 1e-12,
            "the foot leans with the rail"
        );
    }
}

/// The shipped problem through `loam solve`: it converges at the rail planner's optimum or
/// below, its stance at the stable-step cap, every planned wrench inside W(θ), and
/// the MDP simulator given the plan's command reproduces the stance node by node and
/// reaches the planned apex within 1 mm (WRENCH_SPACE.md P2 and P3).
#[test]
fn the_shipped_rail_problem_plans_at_the_rail_planners_optimum_and_replays() {
    let dir = TempDir::new("wrench_rail");
    let out = dir.path().join("run");
    let solve = loam(
        root(),
        &["solve", FILE, "--out", out.to_str().unwrap(), "-q"],
    );
    assert_exit(&solve, 0, &[]);
    let solution = read_json(&out.join("solution.json"));
    assert_eq!(solution["converged"], true);
    let objective = solution["objective"].as_f64().unwrap();
    println!(
        "objective {objective:.7} in {} iterations (the rail planner: {RAIL_PLANNER_OPTIMUM})",
        solution["iterations"]
    );
    assert!(
        objective <= RAIL_PLANNER_OPTIMUM + 1e-6,
        "objective {objective} against the rail planner's {RAIL_PLANNER_OPTIMUM}"
    );
    let replay = &solution["replay"];
    assert!(replay["ground_difference"].as_f64().unwrap() < 1e-6);
    let apex = replay["apex_rise_m"].as_f64().unwrap();
    assert!((apex - 0.06).abs() < 1e-3, "replayed apex {apex} m");
    assert_eq!(replay["clamped_steps"], 0);

    // `loam simulate --terrain` replays it again in the MDP simulator through the replay
    // every plan gets on a wrench space (steps of at most 1 ms, the drive's states stepped
    // with them, the rail's coordinates held): five steps for each of the plan's, within 1 %
    // of its apex (0.75 % measured).
    let again = loam(
        root(),
        &["simulate", out.to_str().unwrap(), "--terrain", FILE, "-q"],
    );
    assert_exit(&again, 0, &[]);
    let (_, record) = replay_on(&out, "hopper_rail");
    let record = read_json(&record);
    assert_eq!(record["complete"], true);
    let rise = record["achieved_apex_rise_m"].as_f64().unwrap();
    println!("replayed through `simulate`: apex {:.3} mm", rise * 1e3);
    assert!((rise - 0.06).abs() < 6e-4, "replayed apex {rise} m");

    // The plan starts a steeper rail (`--warm-start`: every NLP variable is in its
    // trajectory.csv): 181 iterations to 0.0406942 measured, where the rest guess and its
    // relaxation take 360 to 0.0434185 (`plans_at_zero_and_steeper_angles...`).
    let steeper = dir.path().join("steeper");
    let warm = loam(
        root(),
        &[
            "solve",
            FILE,
            "--set",
            "robot.description.guide_angle=0.4",
            "--warm-start",
            out.to_str().unwrap(),
            "--out",
            steeper.to_str().unwrap(),
            "-q",
        ],
    );
    assert_exit(&warm, 0, &[]);
    let warm = read_json(&steeper.join("solution.json"));
    assert_eq!(warm["converged"], true);
    assert_eq!(warm["provenance"]["warm_start"]["kind"], "plan");
    assert_eq!(
        warm["provenance"]["warm_start"]["plan_id"],
        solution["plan_id"]
    );
    let (iterations, objective) = (
        warm["iterations"].as_u64().unwrap(),
        warm["objective"].as_f64().unwrap(),
    );
    println!("0.2 -> 0.4 rad warm: {iterations} iterations, objective {objective:.7}");
    assert!(iterations < 300 && objective <= 0.0434185 + 1e-6);

    // The stance at its cap: 30 steps of 0.9 × the stable step.
    let hop = hop(0.2);
    let stance = solution["phases"][0]["duration_s"].as_f64().unwrap();
    let (cap, _) = hop.ground_duration_cap(0).unwrap().unwrap();
    // At the cap, up to IPOPT's relaxation of the bound.
    assert!(
        stance <= cap * (1.0 + 1e-6) && stance >= cap * (1.0 - 1e-3),
        "stance {stance} s, cap {cap} s"
    );
}

/// P2 on plans at two more angles, solved in-process from the rest guess: every planned
/// wrench at a stance node lies in W(θ) by the H-form (up to IPOPT's bound relaxation).
#[test]
fn plans_at_zero_and_steeper_angles_keep_every_wrench_in_the_set() {
    let settings = SolveSettings {
        log_level: 0,
        options: loam::api::solver_options(&problem(0.0)),
        ..SolveSettings::default()
    };
    for angle in [0.0, 0.4] {
        let planner = planner(angle);
        let hop = planner.wrench_space.as_ref().unwrap();
        let plan = wrench_space::plan(&planner, &settings, None, None).unwrap();
        assert!(
            plan.report.converged,
            "α = {angle}: {:?} after {} iterations",
            plan.report.status, plan.report.iterations
        );
        let l = hop.layout();
        let stance = &plan.trajectory.phases[0];
        let mut worst: f64 = f64::INFINITY;
        for (x, u) in stance.states.iter().zip(&stance.controls) {
            let frame = hop.contact_frame(&x[..l.n_q], 0);
            let lambda = &u[l.lambda(0)..l.lambda(0) + l.m];
            let vertices = hop.space.vertices(&frame.depth, &frame.tilt);
            if vertices.iter().all(|v| v.iter().all(|c| *c == 0.0)) {
                continue;
            }
            let w = hop.full_wrench(&frame, lambda);
            let hull = HalfSpaces::of_wrench_space(&vertices).unwrap();
            let scale = vertices
                .iter()
                .map(|v| v.iter().map(|c| c * c).sum::<f64>().sqrt())
                .fold(0.0, f64::max);
            worst = worst.min(hull.slack(&w) / scale);
        }
        println!(
            "α = {angle}: {} iterations, objective {:.6e}, stance {:.1} ms; wrenches inside W \
             by {worst:.2e}",
            plan.report.iterations,
            plan.report.objective,
            stance.duration * 1e3
        );
        assert!(
            worst >= -1e-7,
            "α = {angle}: a wrench outside W by {worst:e}"
        );
    }
}

/// A guide tilted past the data's tilts, or past ±π/2, or one that holds z, is refused with
/// the field, exit 2, and nothing written.
#[test]
fn a_guide_angle_the_data_or_the_plane_cannot_take_is_refused() {
    let dir = TempDir::new("wrench_rail_bad");
    for (angle, needle) in [
        ("0.9", "outside the data's tilts"),
        ("2.0", "guide_angle"),
        ("nan", "guide_angle"),
    ] {
        let out = dir.path().join(format!("run-{angle}"));
        let solve = loam(
            root(),
            &[
                "solve",
                FILE,
                "--set",
                &format!("robot.description.guide_angle={angle}"),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_exit(&solve, 2, &["guide_angle", needle]);
        assert!(!out.exists(), "{angle}: {} was written", out.display());
    }
    // A guide that holds z leaves the planner no way into the sand.
    let out = dir.path().join("run-locked");
    let solve = loam(
        root(),
        &[
            "solve",
            FILE,
            "--set",
            "robot.description.locked=[x, z, pitch]",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_exit(&solve, 2, &["robot", "`locked` holds z"]);
    assert!(!out.exists());
}

/// A run of another robot cannot start the rail: exit 2, naming the columns, nothing written.
#[test]
fn a_warm_start_from_another_robots_wrench_space_run_is_refused() {
    let dir = TempDir::new("wrench_rail_warm");
    let out = dir.path().join("run");
    let other = root().join("results/monopod_sand_hop");
    let solve = loam(
        root(),
        &[
            "solve",
            FILE,
            "--warm-start",
            other.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_exit(&solve, 2, &["--warm-start", "columns"]);
    assert!(!out.exists());
}

/// WRENCH_SPACE.md's P4 on the rail as the planar pipeline transcribes it: the Jacobian of
/// the ground phase's rows that CasADi derives (the maximum-dissipation rows, the equations
/// of motion with the drive and the projected wrench, the step's defects) against central
/// differences of the rows' values, near the rest guess at α = 0.2 (every variable moved
/// off it, the guide's held x and pitch too).
#[test]
fn p4_the_ground_rows_derivatives_match_finite_differences() {
    let hop = hop(0.2);
    let mut nlp = Nlp::build(&hop.ocp().unwrap(), Scheme::Trapezoidal).unwrap();
    let mut x = nlp.pack(&hop.rest_guess().unwrap());
    // A point off the guess: every variable moved a little, deterministically.
    for (i, xi) in x.iter_mut().enumerate() {
        *xi += 1e-3 * ((i as f64 * 0.7).sin());
    }
    let mut grad = vec![0.0; nlp.n_variables()];
    let mut jac = vec![0.0; nlp.jac_rows.len()];
    nlp.eval_first(&x, &mut grad, &mut jac).unwrap();
    // The rows of the stance's first intervals (dissipation, dynamics, drive force, step).
    let first = [
        "p0_stance_foot interval 1:",
        "p0_stance_foot interval 2:",
        "p0_stance_foot node 1:",
        "p0_stance_foot node 2:",
        "maximum dissipation 0 1:",
        "maximum dissipation 0 2:",
    ];
    let checked: std::collections::BTreeSet<usize> = (0..nlp.n_constraints())
        .filter(|&r| {
            let name = nlp.constraint_name(r);
            first.iter().any(|p| name.starts_with(p))
        })
        .collect();
    let all_names: Vec<String> = checked.iter().map(|&r| nlp.constraint_name(r)).collect();
    assert!(
        all_names.iter().any(|n| n.contains("dissipation")),
        "no dissipation row among {all_names:?}"
    );
    let columns: std::collections::BTreeSet<usize> = (0..jac.len())
        .filter(|&e| checked.contains(&nlp.jac_rows[e]))
        .map(|e| nlp.jac_cols[e])
        .collect();
    let mut g_plus = vec![0.0; nlp.n_constraints()];
    let mut g_minus = vec![0.0; nlp.n_constraints()];
    let (mut worst, mut entries): (f64, usize) = (0.0, 0);
    let mut worst_at = String::new();
    for &c in &columns {
        let step = 1e-4 * x[c].abs().max(1e-2);
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
            if error > worst {
                worst_at = format!("{} by {}", nlp.constraint_name(r), nlp.variable_name(c));
            }
            worst = worst.max(error);
            entries += 1;
        }
    }
    println!(
        "{entries} Jacobian entries of {} rows: worst relative error {worst:.2e} ({worst_at})",
        checked.len()
    );
    assert!(entries > 100, "{entries} entries");
    // Steps of 1e-4 of a variable (1e-6 at least): the dissipation rows are tens of newtons
    // times metres per second, and steps of 1e-8 left round-off of 4e-5 on their smallest
    // entries; at these steps 5e-7 (measured), where a wrong derivative is off by its size.
    assert!(worst < 1e-6, "worst relative error {worst:e} ({worst_at})");
}
