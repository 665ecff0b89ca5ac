//! `loam bench`'s CasADi-Python peer (bench/peer/hopper_casadi.py) against loam: two
//! independent computations of the hopper's jump. loam plans the hopper's robot file with its
//! planar multibody planner (generalized coordinates, accelerations and the foot's force as
//! variables, the equations of motion as rows); the peer transcribes the same optimal control
//! problem by hand in the hopper's own coordinates (z_m, z_r, z_f, explicit dynamics). For
//! every shipped problem of the hopper's robot file (the bench recognises it), as its file
//! states it and on rigid ground, with the trapezoidal scheme and Hermite-Simpson:
//! - loam's plan (as the bench solves it, and as `loam solve` writes it where its mesh
//!   refinement changed the mesh), mapped into the peer's variables, costs in the peer's NLP
//!   what loam says it costs and satisfies every one of the peer's rows and bounds;
//! - the peer restarted there stays at that optimum (or steps to a cheaper neighbour that is
//!   an optimum of loam's NLP too: measured once, on Hermite-Simpson on the bed);
//! - the other way, the peer's ends (restarted at loam's optimum, and from its own guess, as
//!   the bench runs it), mapped into loam's variables with the accelerations and the foot's
//!   force the peer's model gives, cost in loam's NLP what the peer says and satisfy its rows.

#![cfg(feature = "planner")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;

use loam::api::{self, SolveOptions, Solved};
use loam::planner::planar::{self, PlanarPlan, PlanarPlanner};
use loam::planner::Transcribe;
use loam::problem::planar::{PlanarProblem, RobotConfig};
use loam::problem::Strategy;
use loam::solver::{OptionValue, SolveSettings};
use loam::transcription::Trajectory;
use serde_json::{json, Value};

use crate::common::run::{loam, shipped_problems};
use crate::common::temp_dir::TempDir;

/// The objective at loam's plan, the peer's against loam's, relative: the same quadrature of
/// the same numbers (½u² at the nodes, the durations), summed in another order.
const SAME_OBJECTIVE: f64 = 1e-12;

/// How far loam's plan may be outside a row or bound of the peer's NLP (SI units: N, m, m/s,
/// m/s²). loam's plan satisfies its own rows to IPOPT's `constr_viol_tol` (1e-8, on rows in
/// newtons for its equations of motion) and its bounds to IPOPT's `bound_relax_factor`
/// (1e-8); the peer's rows are those rows through the coordinate maps (sums of up to three)
/// and, for an acceleration (the foot's as it leaves the bed), divided by the foot's mass,
/// 0.044 kg: 1e-8 N / 0.044 kg ≈ 2.3e-7 m/s² at worst. 1e-6 leaves a factor four; a
/// difference between the two problems (a 5 % force margin is 0.57 N, a bound of 1 mm is
/// 1e-3) is thousands of times larger. The other way, the peer's plans satisfy its rows to
/// the same 1e-8, and loam's rows are those through the same maps. (Measured: 1.0e-8 at
/// most, both ways.)
const FEASIBLE: f64 = 1e-6;

/// The peer restarted at loam's optimum ends there (and loam restarted at a cheaper plan of
/// the peer's): the objective within this, relative.
const SAME_OPTIMUM: f64 = 1e-6;

/// One problem to check: a hopper problem file with `--set` overrides.
struct Case {
    name: String,
    file: PathBuf,
    sets: Vec<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The peer's input for `file` with `sets`, as `loam bench --peer-input` prints it, or what
/// the bench said where the problem has no peer.
fn peer_input(file: &Path, sets: &[String]) -> Result<Value, String> {
    let mut args = vec!["bench", "--peer-input", file.to_str().expect("UTF-8 path")];
    for set in sets {
        args.extend(["--set", set]);
    }
    let out = loam(root(), &args);
    if out.code() != 0 {
        return Err(out.stderr);
    }
    Ok(serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("--peer-input printed {:?}: {e}", out.stdout)))
}

/// Every shipped problem whose robot is the hopper's robot file (the bench recognises it),
/// as it stands and on rigid ground, each with the trapezoidal scheme and Hermite-Simpson.
fn hopper_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for file in shipped_problems() {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let input = match peer_input(&file, &[]) {
            Ok(input) => input,
            Err(why) => {
                if !why.contains("the peer transcribes the hopper's robot file") {
                    println!("{stem}: no peer: {}", why.trim());
                }
                continue;
            }
        };
        let mut grounds = vec![(String::new(), vec![])];
        if input["terrain"]["model"] != "rigid" {
            grounds.push((
                " on rigid ground".to_string(),
                vec!["terrain={model: rigid}".to_string()],
            ));
        }
        for (ground, sets) in grounds {
            for (scheme, set) in [("", None), (", Hermite-Simpson", Some("hermite_simpson"))] {
                let mut sets = sets.clone();
                if let Some(scheme) = set {
                    sets.push(format!("transcription.scheme={scheme}"));
                }
                cases.push(Case {
                    name: format!("{stem}{ground}{scheme}"),
                    file: file.clone(),
                    sets,
                });
            }
        }
    }
    assert!(
        cases.iter().any(|c| c.name == "hopper_granular"),
        "problems/hopper_granular.yaml has a peer"
    );
    cases
}

/// Runs the peer script with `flags` on `input` and returns what it printed, parsed.
fn peer(input: &Value, flags: &[&str]) -> Value {
    let script = root().join("bench/peer/hopper_casadi.py");
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

/// Where the hopper's quantities sit in loam's plan, and how its joints place its bodies: a
/// prismatic joint puts its body at its parent's height + origin_z + axis_z q (the rail holds
/// pitch at 0), so that with robots/hopper.yaml's axes (0, −1) z_r = z_m − stroke and
/// z_f = z_r − leg. Read from the robot file and loam's own state and control names.
struct Columns {
    /// In the state: z, ż, stroke, its rate, leg, its rate, the drive's integrator and
    /// command.
    z: usize,
    dz: usize,
    stroke: usize,
    d_stroke: usize,
    leg: usize,
    d_leg: usize,
    integral: usize,
    command: usize,
    /// In the controls: the drive's command rate, the accelerations of z, stroke and leg,
    /// the foot's force (F_x, F_z) and impulse (along z).
    u: usize,
    dd_z: usize,
    dd_stroke: usize,
    dd_leg: usize,
    fx: usize,
    fz: usize,
    impulse_z: usize,
    /// (origin_z, axis_z) of the stroke's and the leg's joints.
    stroke_joint: (f64, f64),
    leg_joint: (f64, f64),
}

impl Columns {
    fn of(problem: &PlanarProblem, plan: &PlanarPlan) -> Columns {
        let RobotConfig::File(robot) = &problem.robot else {
            panic!("the hopper's problems name its robot file")
        };
        let d = &robot.description;
        let motor = d.bodies.iter().find(|b| b.joint.is_none()).unwrap();
        let child = |parent: &str| {
            d.bodies
                .iter()
                .find(|b| b.joint.as_ref().is_some_and(|j| j.parent == parent))
                .unwrap()
        };
        let rod = child(&motor.name);
        let foot = child(&rod.name);
        let (stroke, leg) = (rod.joint.as_ref().unwrap(), foot.joint.as_ref().unwrap());
        let find = |names: &[String], name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .unwrap_or_else(|| panic!("no `{name}` in {names:?}"))
        };
        let states = plan.planner.state_names();
        let controls = plan.planner.control_names();
        let state = |name: &str| find(&states, name);
        let control = |name: &str| find(&controls, name);
        let drive = &d.actuators[0].name;
        let contact = &d.contacts[0].name;
        Columns {
            z: state("z"),
            dz: state("d_z"),
            stroke: state(&stroke.name),
            d_stroke: state(&format!("d_{}", stroke.name)),
            leg: state(&leg.name),
            d_leg: state(&format!("d_{}", leg.name)),
            integral: state(&format!("{drive}_integral")),
            command: state(&format!("{drive}_command")),
            u: control(drive),
            dd_z: control("dd_z"),
            dd_stroke: control(&format!("dd_{}", stroke.name)),
            dd_leg: control(&format!("dd_{}", leg.name)),
            fx: control(&format!("{contact}_fx")),
            fz: control(&format!("{contact}_fz")),
            impulse_z: control(&format!("impulse_{contact}_fz")),
            stroke_joint: (stroke.origin[1], stroke.axis.unwrap()[1]),
            leg_joint: (leg.origin[1], leg.axis.unwrap()[1]),
        }
    }

    /// One node of loam's plan, (x, u), as the peer's (z_m, ż_m, z_r, ż_r, z_f, ż_f, e, z_d, u).
    fn to_peer(&self, x: &[f64], c: &[f64]) -> [f64; 9] {
        let ((o_s, a_s), (o_l, a_l)) = (self.stroke_joint, self.leg_joint);
        let z_r = x[self.z] + o_s + a_s * x[self.stroke];
        let z_f = z_r + o_l + a_l * x[self.leg];
        let v_r = x[self.dz] + a_s * x[self.d_stroke];
        let v_f = v_r + a_l * x[self.d_leg];
        [
            x[self.z],
            x[self.dz],
            z_r,
            v_r,
            z_f,
            v_f,
            x[self.integral],
            x[self.command],
            c[self.u],
        ]
    }

    /// The peer's node `p` (its 9 variables) and what its model says there, `motion`
    /// (z̈_m, z̈_r, z̈_f, the ground's force), written into loam's node (x, u): the entries
    /// the hopper's quantities set; the rest (the rail's locked coordinates) kept.
    fn from_peer(&self, p: &[f64], motion: &[f64], x: &mut [f64], c: &mut [f64]) {
        let ((o_s, a_s), (o_l, a_l)) = (self.stroke_joint, self.leg_joint);
        x[self.z] = p[0];
        x[self.dz] = p[1];
        x[self.stroke] = (p[2] - p[0] - o_s) / a_s;
        x[self.d_stroke] = (p[3] - p[1]) / a_s;
        x[self.leg] = (p[4] - p[2] - o_l) / a_l;
        x[self.d_leg] = (p[5] - p[3]) / a_l;
        x[self.integral] = p[6];
        x[self.command] = p[7];
        c[self.u] = p[8];
        c[self.dd_z] = motion[0];
        c[self.dd_stroke] = (motion[1] - motion[0]) / a_s;
        c[self.dd_leg] = (motion[2] - motion[1]) / a_l;
        c[self.fx] = 0.0;
        c[self.fz] = motion[3];
    }
}

/// loam's plan in the peer's variables: per phase, (z_m, ż_m, z_r, ż_r, z_f, ż_f, e, z_d, u)
/// at each node, then at each midpoint (Hermite-Simpson), then the duration.
fn peer_point(columns: &Columns, plan: &PlanarPlan) -> Vec<f64> {
    let mut out = Vec::new();
    for phase in &plan.trajectory.phases {
        for (x, c) in phase.states.iter().zip(&phase.controls) {
            out.extend(columns.to_peer(x, c));
        }
        for (x, c) in phase.mid_states.iter().zip(&phase.mid_controls) {
            out.extend(columns.to_peer(x, c));
        }
        out.push(phase.duration);
    }
    out
}

/// The peer's plan `x` in loam's variables, on the mesh of loam's `template`: states and
/// command rates from `x`, accelerations and the foot's force from the peer's model at each
/// node and midpoint (`motion`), each landing's impulse (`impulse`, per phase).
fn loam_trajectory(
    columns: &Columns,
    template: &Trajectory,
    x: &[f64],
    motion: &Value,
    impulse: &Value,
) -> Trajectory {
    let motion: Vec<Vec<f64>> = serde_json::from_value(motion.clone()).unwrap();
    let impulse: Vec<f64> = serde_json::from_value(impulse.clone()).unwrap();
    let mut trajectory = template.clone();
    let (mut at, mut slot) = (0, 0);
    for (p, phase) in trajectory.phases.iter_mut().enumerate() {
        let nodes = phase.states.len();
        let slots = phase.states.iter_mut().zip(phase.controls.iter_mut());
        let mids = phase
            .mid_states
            .iter_mut()
            .zip(phase.mid_controls.iter_mut());
        for (k, (state, control)) in slots.chain(mids).enumerate() {
            columns.from_peer(&x[at..at + 9], &motion[slot], state, control);
            control[columns.impulse_z] = if k == 0 { impulse[p] } else { 0.0 };
            at += 9;
            slot += 1;
        }
        assert!(nodes > 1);
        phase.duration = x[at];
        at += 1;
    }
    assert_eq!(at, x.len(), "the peer's variables, all mapped");
    trajectory
}

/// A bound from the peer's JSON, where an infinite one is null.
fn bound(value: &Value, lower: bool) -> f64 {
    value.as_f64().unwrap_or(if lower {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    })
}

/// The largest amount by which `values` leave [lower, upper], and where.
fn worst(values: &[f64], lower: &Value, upper: &Value, names: &Value) -> (f64, String) {
    let (lower, upper, names) = (
        lower.as_array().unwrap(),
        upper.as_array().unwrap(),
        names.as_array().unwrap(),
    );
    assert_eq!(values.len(), lower.len());
    assert_eq!(values.len(), upper.len());
    assert_eq!(values.len(), names.len());
    let mut out = (0.0, String::from("none"));
    for (i, v) in values.iter().enumerate() {
        let outside = (bound(&lower[i], true) - v).max(v - bound(&upper[i], false));
        if outside > out.0 {
            out = (outside, names[i].as_str().unwrap().to_string());
        }
    }
    out
}

/// IPOPT restarted at a converged point (in both, for the "stays" checks): the barrier
/// where a solve to `tol` 1e-8 leaves it, μ = 1e-9, and the point and its bound multipliers
/// pushed off their bounds by no more than that. (loam's own warm-start options, μ = 1e-3
/// and pushes of 1e-4, are for a neighbour's plan, not an optimum: from its own rigid-ground
/// optimum they took loam to another, 8 % dearer.)
fn restart_options() -> Vec<(String, OptionValue)> {
    vec![
        (
            "warm_start_init_point".into(),
            OptionValue::Str("yes".into()),
        ),
        ("warm_start_bound_push".into(), OptionValue::Num(1e-9)),
        ("warm_start_mult_bound_push".into(), OptionValue::Num(1e-9)),
        ("mu_init".into(), OptionValue::Num(1e-9)),
    ]
}

/// The peer's plan `x` in loam's NLP: loam's trajectory, its objective there and the largest
/// violation of a row or bound it finds, with where.
fn in_loam(
    problem: &PlanarProblem,
    plan: &PlanarPlan,
    columns: &Columns,
    input: &Value,
    x: &[f64],
) -> (Trajectory, f64, (f64, String)) {
    let mut evaluate = input.clone();
    evaluate["points"] = json!([x]);
    let peer_nlp = peer(&evaluate, &["--evaluate"]);
    let trajectory = loam_trajectory(
        columns,
        &plan.trajectory,
        x,
        &peer_nlp["motion"][0],
        &peer_nlp["impulse"][0],
    );
    let planner = Rc::new(PlanarPlanner::new(problem));
    let mut nlp = planner.nlp().unwrap();
    let point = nlp.pack(&trajectory);
    let mut g = vec![0.0; nlp.n_constraints()];
    let f = nlp.eval_value(&point, &mut g).unwrap();
    let mut worst = (0.0, String::from("none"));
    if let Some(v) = nlp.violations(&g, 0.0).first() {
        worst = (v.violation, v.name.clone());
    }
    for (i, v) in point.iter().enumerate() {
        let outside = (nlp.x_lower[i] - v).max(v - nlp.x_upper[i]);
        if outside > worst.0 {
            worst = (outside, nlp.variable_name(i));
        }
    }
    (trajectory, f, worst)
}

/// loam restarted at `trajectory` (one stage: a given start is otherwise held and released):
/// its objective.
fn loam_restarted(problem: &PlanarProblem, trajectory: &Trajectory) -> f64 {
    let one = PlanarProblem {
        strategy: Strategy::OneStage,
        stage_one: None,
        ..problem.clone()
    };
    let mut settings = SolveSettings {
        options: planar::solver_options(problem),
        ..SolveSettings::default()
    };
    settings.options.extend(restart_options());
    let again = planar::plan_from(&one, &settings, Some(trajectory), None).unwrap();
    assert!(
        again.report.converged,
        "loam restarted: {}",
        again.report.status
    );
    again.report.objective
}

/// loam's `plan` of `problem` against the peer's NLP of the same problem (`input`), both
/// ways: loam's optimum in the peer's NLP, the peer's optima in loam's.
fn check(label: &str, problem: &PlanarProblem, plan: &PlanarPlan, input: &Value) {
    let report = &plan.report;
    let loam_objective = report.objective;
    assert!(report.converged, "{label}: loam: {}", report.status);
    let columns = Columns::of(problem, plan);
    let x = peer_point(&columns, plan);

    // loam's optimum in the peer's NLP: what it costs there, how far outside any row.
    let mut evaluate = input.clone();
    evaluate["points"] = json!([x]);
    let nlp = peer(&evaluate, &["--evaluate"]);
    let f = nlp["f"][0].as_f64().unwrap();
    assert!(
        (f - loam_objective).abs() <= SAME_OBJECTIVE * loam_objective.abs(),
        "{label}: the peer's objective at loam's plan {f}, loam's {loam_objective}"
    );
    let g: Vec<f64> = serde_json::from_value(nlp["g"][0].clone()).unwrap();
    assert!(!g.is_empty(), "{label}: the peer's NLP has rows");
    let rows = worst(&g, &nlp["lbg"], &nlp["ubg"], &nlp["g_names"]);
    let bounds = worst(&x, &nlp["lbx"], &nlp["ubx"], &nlp["x_names"]);
    println!(
        "{label}: loam {loam_objective:.10} ({} iterations, {} variables); in the peer's NLP \
         ({} variables, {} rows): {f:.10}, worst row {:.1e} ({}), worst bound {:.1e} ({})",
        report.iterations,
        plan.n_variables,
        x.len(),
        g.len(),
        rows.0,
        rows.1,
        bounds.0,
        bounds.1
    );
    assert!(
        rows.0 <= FEASIBLE,
        "{label}: loam's plan violates the peer's row {rows:?}"
    );
    assert!(
        bounds.0 <= FEASIBLE,
        "{label}: loam's plan violates the peer's bound {bounds:?}"
    );

    // The peer restarted at loam's optimum stays there; or, where IPOPT steps from it to a
    // cheaper neighbour, that neighbour is a plan of loam's NLP too (checked below).
    let mut start = input.clone();
    start["x0"] = json!(x);
    for (name, value) in restart_options() {
        start["solver_options"][name] = json!(value);
    }
    let from_loam = peer(&start, &["--with-x"]);
    assert_eq!(from_loam["converged"], true, "{label}: {from_loam}");
    let stayed = from_loam["objective"].as_f64().unwrap();
    let moved = (stayed - loam_objective).abs() > SAME_OPTIMUM * loam_objective.abs();
    assert!(
        !moved || stayed < loam_objective,
        "{label}: the peer restarted at loam's optimum {loam_objective} ended at {stayed}"
    );
    // From its own guess, as the bench runs it (which optimum it reaches is printed, not
    // asserted: the jump has several local optima, and two transcriptions take IPOPT along
    // different paths).
    let cold = peer(input, &["--with-x"]);
    assert_eq!(
        cold["converged"], true,
        "{label}: the peer from its guess: {cold}"
    );

    // The peer's optima in loam's NLP: what they cost there, how far outside any row. Where
    // the peer stepped from loam's optimum to a cheaper neighbour, loam restarted there
    // stays: an optimum of loam's own NLP, which loam's solve passed by. (Not asserted at
    // every end: restarted at the peer's rigid-ground optimum from its guess, which is loam's
    // own to 5e-8, loam went on to another, 4 % dearer. IPOPT's restart is fragile there in
    // loam's NLP, which says nothing about whether the two problems are the same.)
    for (what, end, restart) in [
        ("restarted at loam's", &from_loam, moved),
        ("from its guess", &cold, false),
    ] {
        let objective = end["objective"].as_f64().unwrap();
        let x: Vec<f64> = serde_json::from_value(end["x"].clone()).unwrap();
        let (trajectory, f, violation) = in_loam(problem, plan, &columns, input, &x);
        println!(
            "{label}: the peer {what} ends at {objective:.10} ({} iterations); in loam's NLP: \
             {f:.10}, worst violation {:.1e} ({})",
            end["iterations"], violation.0, violation.1
        );
        assert!(
            (f - objective).abs() <= SAME_OBJECTIVE * objective.abs(),
            "{label}: loam's objective at the peer's plan ({what}) {f}, the peer's {objective}"
        );
        assert!(
            violation.0 <= FEASIBLE,
            "{label}: the peer's plan ({what}) violates loam's {violation:?}"
        );
        if restart {
            let again = loam_restarted(problem, &trajectory);
            println!("{label}: loam restarted at the peer's cheaper plan ends at {again:.10}");
            assert!(
                (again - objective).abs() <= SAME_OPTIMUM * objective.abs(),
                "{label}: loam restarted at the peer's plan {objective} ended at {again}"
            );
        }
    }
}

#[test]
fn the_peer_and_loam_plan_the_same_jump() {
    if Command::new("python3").arg("--version").output().is_err() {
        println!("skipped: python3 is not on PATH, and the peer is a Python script");
        return;
    }
    for case in hopper_cases() {
        let any = api::load(&case.file, &case.sets).unwrap();
        let problem = &any;
        let input = peer_input(&case.file, &case.sets).unwrap();

        // As the bench solves it: the file's mesh.
        let settings = SolveSettings {
            options: planar::solver_options(problem),
            ..SolveSettings::default()
        };
        let plan = planar::plan(problem, &settings, None).unwrap();
        check(&case.name, problem, &plan, &input);

        // As `loam solve` solves and writes it, with its mesh refinement: where that changed
        // the mesh, the refined plan against the peer's input for the run's problem.
        let solved = api::solve(&any, &case.file, SolveOptions::default()).unwrap();
        let dir = TempDir::new("bench-peer");
        solved.write(dir.path(), solved.provenance(), None).unwrap();
        let Solved {
            problem: solved_problem,
            plan,
            ..
        } = solved;
        if solved_problem.schedule == problem.schedule {
            continue;
        }
        let input = peer_input(dir.path(), &[]).unwrap();
        let nodes: Vec<usize> = solved_problem.schedule.iter().map(|p| p.nodes).collect();
        check(
            &format!("{}, refined to {nodes:?} nodes", case.name),
            &solved_problem,
            &plan,
            &input,
        );
    }
}
