//! The CasADi-Python peer: `bench/peer/hopper_casadi.py`, the hopper's jump transcribed by
//! hand with CasADi's Python API in the hopper's own coordinates and solved by the same IPOPT
//! through `casadi.nlpsol`. Each solve is its own `python3` process, the way a researcher
//! runs it.
//!
//! [`input`] builds what the script reads from a resolved planar problem whose robot is the
//! hopper's robot file (robots/hopper.yaml: recognised by its structure), in the script's
//! terms: masses, spring, drive and limits from the robot description, the ground, the
//! schedule, the task, the scheme, the IPOPT options and, for `strategy: two_stage`, the
//! durations loam's first stage holds (`PlanarPlanner::stage_one`, so that both hold the same
//! ones). The script's docstring states the format.

use std::fmt;
use std::io::Write;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::Instant;

use anyhow::{bail, Context};
use loam::model::planar::description::{
    ActuatorKind, BodySpec, ContactShape, JointSpec, JointType, RobotDescription,
};
use loam::planner::planar::{self, PlanarPlanner};
use loam::planner::Transcribe;
use loam::problem::planar::{Objective, PlanarProblem, PlanarTerrainConfig, RobotConfig};
use loam::problem::{InitialGuess, Scheme, Strategy};
use loam::solver::OptionValue;
use serde_json::{json, Value};

/// The script, compiled in so that the bench runs the one it was built with.
const SCRIPT: &str = include_str!("../../../bench/peer/hopper_casadi.py");

/// Where `import casadi` finds the CasADi (and IPOPT) loam links, with NumPy (build.rs).
const PYTHONPATH: &str = env!("LOAM_CASADI_PYTHONPATH");

/// Why a problem has no peer.
#[derive(Debug)]
pub enum Refusal {
    /// The robot is not the hopper: the bench has no peer for it and says nothing.
    NotHopper(String),
    /// The hopper, asked for something the peer does not transcribe.
    Unsupported(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotHopper(why) | Refusal::Unsupported(why) => f.write_str(why),
        }
    }
}

/// The hopper's bodies and joints in a robot description, by role.
struct Hopper<'a> {
    motor: &'a BodySpec,
    rod: &'a BodySpec,
    foot: &'a BodySpec,
    stroke: &'a JointSpec,
    leg: &'a JointSpec,
}

/// The hopper's bodies in `d`, or what differs from the hopper's structure: a base on a
/// vertical rail (`locked: [x, pitch]`) under which a rod slides down on a driven prismatic
/// joint, and under the rod a foot on a sprung one, with one point contact at the foot's
/// origin; every axis (0, −1) from its parent's origin, every centre of mass at its body's
/// origin, so that stroke = z_motor − z_rod and leg = z_rod − z_foot.
fn recognise(d: &RobotDescription) -> Result<Hopper<'_>, String> {
    let bases: Vec<&BodySpec> = d.bodies.iter().filter(|b| b.joint.is_none()).collect();
    let [motor] = bases[..] else {
        return Err(format!("{} bodies without a joint", bases.len()));
    };
    let child = |parent: &BodySpec| -> Result<&BodySpec, String> {
        let children: Vec<&BodySpec> = d
            .bodies
            .iter()
            .filter(|b| b.joint.as_ref().is_some_and(|j| j.parent == parent.name))
            .collect();
        match children[..] {
            [child] => Ok(child),
            _ => Err(format!(
                "{} bodies hang from `{}`, the hopper's hang one",
                children.len(),
                parent.name
            )),
        }
    };
    let rod = child(motor)?;
    let foot = child(rod)?;
    if d.bodies.len() != 3 {
        return Err(format!("{} bodies, the hopper's are 3", d.bodies.len()));
    }
    fn joint(body: &BodySpec) -> Result<&JointSpec, String> {
        let j = body.joint.as_ref().expect("a body under another");
        if j.kind != JointType::Prismatic || j.axis != Some([0.0, -1.0]) || j.origin != [0.0, 0.0] {
            return Err(format!(
                "joint `{}` is not prismatic along (0, −1) from its parent's origin",
                j.name
            ));
        }
        Ok(j)
    }
    let (stroke, leg) = (joint(rod)?, joint(foot)?);
    if let Some(b) = [motor, rod, foot].into_iter().find(|b| b.com != [0.0, 0.0]) {
        return Err(format!(
            "body `{}` has its centre of mass off its origin",
            b.name
        ));
    }
    let mut locked = d.locked.clone();
    locked.sort();
    if locked != ["pitch", "x"] {
        return Err(format!(
            "locked {:?}, the hopper's rail locks [x, pitch]",
            d.locked
        ));
    }
    match &d.springs[..] {
        [spring] if spring.joint == leg.name => {}
        _ => return Err(format!("its springs are not one, on `{}`", leg.name)),
    }
    match &d.actuators[..] {
        [a] if a.joint == stroke.name && a.kind == ActuatorKind::Force && a.drive.is_some() => {}
        _ => {
            return Err(format!(
                "its actuators are not one drive on `{}`",
                stroke.name
            ))
        }
    }
    match &d.contacts[..] {
        [c] if c.body == foot.name && c.point == [0.0, 0.0] && c.shape == ContactShape::Point => {}
        _ => {
            return Err(format!(
                "its contacts are not one point at `{}`'s origin",
                foot.name
            ))
        }
    }
    Ok(Hopper {
        motor,
        rod,
        foot,
        stroke,
        leg,
    })
}

/// The peer's input for `problem` (without `x0` or `points`), or why it has none.
pub fn input(problem: &PlanarProblem) -> Result<Value, Refusal> {
    let RobotConfig::File(file) = &problem.robot else {
        return Err(Refusal::NotHopper(format!(
            "the peer transcribes the hopper's robot file (robots/hopper.yaml); the robot is \
             the preset {}",
            problem.robot.model_name()
        )));
    };
    let d = &file.description;
    let hopper = recognise(d).map_err(|why| {
        Refusal::NotHopper(format!(
            "the peer transcribes the hopper's robot file (robots/hopper.yaml); robot `{}` is \
             not built like it: {why}",
            d.name
        ))
    })?;
    let unsupported = |what: String| Refusal::Unsupported(format!("the peer has no {what}"));
    if d.guide_angle != 0.0 {
        return Err(unsupported("tilted rail (guide_angle)".into()));
    }
    let (spring, actuator) = (&d.springs[0], &d.actuators[0]);
    let contact = &d.contacts[0].name;

    let terrain = match &problem.terrain {
        PlanarTerrainConfig::Rigid(_) => json!({"model": "rigid"}),
        PlanarTerrainConfig::AddedMass(ground) => {
            let m = ground.medium_parameters();
            json!({
                "model": "added_mass",
                "foot_radius": ground.radius(),
                "recruitment_rate": m.recruitment_rate,
                "shear_band_angle_deg": m.shear_band_angle_deg,
                "surrounding_mass_scaling": m.surrounding_mass_scaling,
                "volume_fraction": m.volume_fraction,
                "grain_density": m.grain_density,
                "penetration_stiffness": m.penetration_stiffness,
                "resistive_stress": m.resistive_stress,
                "drag_scaling": m.drag_scaling,
            })
        }
        other => {
            return Err(unsupported(format!(
                "`{}` ground (it plans on rigid ground and the added-mass bed)",
                other.model_name()
            )))
        }
    };

    let mut schedule = Vec::new();
    for (p, phase) in problem.schedule.iter().enumerate() {
        let stance = match &phase.contacts[..] {
            [] => false,
            [c] if c == contact => true,
            _ => {
                return Err(unsupported(format!(
                    "phase {p}'s contacts {:?}",
                    phase.contacts
                )))
            }
        };
        schedule.push(json!({"stance": stance, "nodes": phase.nodes, "duration": phase.duration}));
    }
    if !problem
        .schedule
        .iter()
        .enumerate()
        .all(|(p, phase)| phase.contacts.is_empty() == (p % 2 == 1))
        || problem.schedule.len() % 2 != 0
    {
        return Err(unsupported(
            "schedule but stance and flight in turn, from a stance to the flight to the apex"
                .into(),
        ));
    }

    let task = &problem.task;
    let Some(apex_rise) = task.apex_rise else {
        return Err(unsupported("task without an apex_rise".into()));
    };
    let mut start_stroke = None;
    for (name, value) in &task.start.set {
        if *name != hopper.stroke.name {
            return Err(unsupported(format!("task.start.set of `{name}`")));
        }
        start_stroke = Some(*value);
    }
    let end = &task.end;
    if !task.start.at_rest
        || end.at_rest
        || !end.set.is_empty()
        || !end.change.is_empty()
        || task.distance.is_some()
        || task.periodic
        || task.speed.is_some()
        || task.swing_height.is_some()
    {
        return Err(unsupported(
            "task but a jump from rest to an apex (no end, distance, periodicity, speed or \
             swing height)"
                .into(),
        ));
    }
    // With a drive the effort's scale is 1: both are ½∫u² dt.
    if !matches!(task.objective, Objective::InputsSquared | Objective::Effort) {
        return Err(unsupported(format!(
            "objective {:?} (it minimises ½∫u² dt)",
            task.objective
        )));
    }
    let apex_of = match task.apex_of.as_deref() {
        None => Value::Null,
        Some(name) if name == hopper.motor.name => json!("motor"),
        Some(name) if name == hopper.rod.name => json!("rod"),
        Some(name) if name == hopper.foot.name => json!("foot"),
        Some(name) => return Err(unsupported(format!("body `{name}` to lift"))),
    };
    let initial_guess = match problem.initial_guess {
        InitialGuess::Rest => "rest",
        InitialGuess::Zero => "zero",
        other => return Err(unsupported(format!("initial guess {other:?}"))),
    };
    if problem.starts > 1 {
        return Err(unsupported(format!(
            "several starts (starts: {})",
            problem.starts
        )));
    }

    // loam's defaults, the problem's `solver` on top, as IPOPT gets them.
    let mut solver_options = serde_json::Map::new();
    for (name, value) in loam::solver::default_options()
        .into_iter()
        .chain(planar::solver_options(problem))
    {
        if name == "linear_solver" && value == OptionValue::Str("loam".into()) {
            return Err(unsupported(
                "`linear_solver: loam` (loam's own, not CasADi's)".into(),
            ));
        }
        solver_options.insert(name, json!(value));
    }
    let two_stage = match problem.strategy {
        Strategy::OneStage => Value::Null,
        Strategy::TwoStage => two_stage(problem)?,
    };

    let limits = |j: &JointSpec| json!({"position": j.position, "velocity": j.velocity});
    Ok(json!({
        "robot": {
            "mass": {
                "motor": hopper.motor.mass,
                "rod": hopper.rod.mass,
                "foot": hopper.foot.mass,
            },
            "spring": {
                "stiffness": spring.stiffness,
                "damping": spring.damping,
                "rest": spring.rest,
            },
            "drive": actuator.drive,
            "force_limit": actuator.limit,
            "stroke": limits(hopper.stroke),
            "leg": limits(hopper.leg),
            "standing_stroke": d.standing.get(&hopper.stroke.name).copied().unwrap_or(0.0),
        },
        "gravity": problem.gravity,
        "terrain": terrain,
        "schedule": schedule,
        "task": {
            "apex_rise": apex_rise,
            "apex_of": apex_of,
            "start_stroke": start_stroke,
            "contact_margin": task.contact_margin,
        },
        "scheme": match problem.transcription.scheme {
            Scheme::Trapezoidal => "trapezoidal",
            Scheme::HermiteSimpson => "hermite_simpson",
        },
        "initial_guess": initial_guess,
        "solver_options": solver_options,
        "two_stage": two_stage,
    }))
}

/// loam's two stages as the peer's input states them: the durations loam's first stage holds
/// per phase (null: free), its iteration cap, the durations held instead should IPOPT find
/// the first stage infeasible, and the options the release adds (docs/MODEL.md 5.2).
fn two_stage(problem: &PlanarProblem) -> Result<Value, Refusal> {
    let planner = Rc::new(PlanarPlanner::new(problem));
    let nlp = planner
        .nlp()
        .map_err(|e| Refusal::Unsupported(format!("loam's NLP could not be built: {e}")))?;
    let rule = planner.stage_one(&nlp);
    let per_phase = |held: &[(usize, f64)]| -> Vec<Option<f64>> {
        (0..problem.schedule.len())
            .map(|p| {
                let i = nlp.duration_index(p);
                held.iter().find(|(j, _)| *j == i).map(|(_, d)| *d)
            })
            .collect()
    };
    let release: serde_json::Map<String, Value> = loam::planner::warm_start_options()
        .into_iter()
        .map(|(name, value)| (name, json!(value)))
        .collect();
    Ok(json!({
        "held": per_phase(&rule.held),
        "iterations": rule.iterations,
        "if_infeasible": rule.if_infeasible.as_deref().map(|held| per_phase(held)),
        "release_options": release,
    }))
}

/// One solve by the peer, timed as loam's are.
pub struct PeerRun {
    /// Building the NLP and the `nlpsol` objects, inside the process [s].
    pub setup: f64,
    /// The solver calls, inside the process [s].
    pub solve: f64,
    pub iterations: usize,
    pub converged: bool,
    pub objective: f64,
    /// The process's wall time less set-up and solve: Python's start-up, `import casadi`,
    /// loading IPOPT's plugin, reading and writing the JSON [s].
    pub startup: f64,
}

#[derive(serde::Deserialize)]
struct Report {
    objective: f64,
    iterations: usize,
    converged: bool,
    setup_s: f64,
    solve_s: f64,
}

/// Runs the script with `flags` on `input` and returns the JSON line it printed, and the
/// process's wall time [s].
pub fn run(input: &Value, flags: &[&str]) -> anyhow::Result<(Value, f64)> {
    if PYTHONPATH.is_empty() {
        bail!("the CasADi loam was built against (LOAM_CASADI_DIR) is not a Python package");
    }
    let path = match std::env::var_os("PYTHONPATH") {
        Some(user) if !user.is_empty() => {
            let mut path = std::ffi::OsString::from(PYTHONPATH);
            path.push(":");
            path.push(user);
            path
        }
        _ => PYTHONPATH.into(),
    };
    let started = Instant::now();
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .args(flags)
        .env("PYTHONPATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run python3")?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.to_string().as_bytes())
        .context("cannot hand the problem to python3")?;
    let output = child.wait_with_output().context("python3")?;
    let wall = started.elapsed().as_secs_f64();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        bail!(
            "bench/peer/hopper_casadi.py failed ({}): {}",
            output.status,
            last.unwrap_or("no message")
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty());
    let report = serde_json::from_str(line.unwrap_or_default())
        .with_context(|| format!("bench/peer/hopper_casadi.py printed {line:?}"))?;
    Ok((report, wall))
}

/// Solves `input` (the script's input, [`input`]) once.
pub fn solve(input: &Value) -> anyhow::Result<PeerRun> {
    let (report, wall) = run(input, &[])?;
    let report: Report = serde_json::from_value(report.clone())
        .with_context(|| format!("bench/peer/hopper_casadi.py printed {report}"))?;
    Ok(PeerRun {
        setup: report.setup_s,
        solve: report.solve_s,
        iterations: report.iterations,
        converged: report.converged,
        objective: report.objective,
        startup: wall - report.setup_s - report.solve_s,
    })
}
