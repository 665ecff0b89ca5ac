//! Any planar robot's plan replayed in the MDP simulator on a wrench-space terrain: the
//! verdict on the sand for a plan made on rigid ground, a bed or a spring ground (`loam
//! simulate RUN --terrain FILE` where FILE's terrain is a wrench space, `--backend mdp`, and
//! the MDP row of `loam validate`).
//!
//! The plan is run as the event-loop replay runs it (`sim::planar`): the plan's inputs plus
//! the same servos on the plan's joint references (`sim::planar::servo_command`, the same
//! gains), from the plan's first state, open loop on the base. The controller samples at each
//! step's start and holds its command over the step (a digital controller at 1/h); the steps
//! divide every interval between the plan's nodes evenly, no longer than `max_step` (1 ms by
//! default, the MDP simulator's own default), so that a sample falls on every node, where the
//! departures from the plan and a gait's strides are measured. The summary is the event
//! loop's (`sim::planar::summarise`), so the two simulators' rows compare the same figures.
//! A row of the replay holds the state at its time and the inputs and wrenches (world axes,
//! the torque about the sole's torque point) of the step that ended there; the first row, the
//! first step's inputs and no wrench.
//!
//! Choices, each for a reason:
//! - **The plan's start as it is.** A plan made on rigid ground starts with its feet at the
//!   surface; on the sand they sink as the plan's clock runs, which is what the plan would
//!   meet there (the closed-form replays on another ground start the same way).
//! - **Every contact a sole of the data's foot.** A wrench space is measured for one foot
//!   (the data file's `foot`); the simulator puts it under every contact of the robot, as the
//!   wrench-space planner does. A robot whose feet differ from the data's is replayed on the
//!   data's foot: the table says which data.
//! - **Drives as the planner steps them.** A drive's input is the plan's command rate (it
//!   is a servo of its own); the step takes the effort its state gives, and its integrator
//!   and command advance by explicit Euler over the step, as the wrench-space planner's
//!   ground step does. Locked coordinates (a rail) stay where they are, as the MDP step
//!   holds them.

use std::sync::Arc;

use super::{GrainInertia, MdpError, MdpOptions, MdpSim};
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use crate::sim::planar::{
    mode_name, replay_columns, replay_plan_with, servo_command, servo_gains, summarise, Event,
    Integration, PlanTable, PlanarReplay, Ran,
};
use crate::terrain::wrench_set::WrenchSet;

/// How the MDP replay steps.
#[derive(Clone, Copy, Debug)]
pub struct MdpReplaySettings {
    /// The longest step \[s\]; each interval of the plan is cut into equal steps no longer.
    pub max_step: f64,
    /// The replay stops (written, marked incomplete) after this many steps.
    pub max_steps: usize,
    /// Step each interval of a phase with feet on the sand in one step, as a plan made on
    /// this wrench space was transcribed (`planner::planar::wrench_space`: its ground phases
    /// are this simulator's step at the plan's interval), flights still at `max_step`. The
    /// replay of such a plan on its own ground; a plan made on another ground is replayed
    /// at `max_step` throughout.
    pub ground_steps_as_planned: bool,
}

impl Default for MdpReplaySettings {
    fn default() -> Self {
        MdpReplaySettings {
            max_step: MdpOptions::default().step,
            max_steps: 2_000_000,
            ground_steps_as_planned: false,
        }
    }
}

/// The replay `loam simulate` makes of a plan on a wrench space: a gait (`task.periodic`)
/// over `periods` repetitions of its plan (`None`: enough for three strides), any other plan
/// once. `problem.terrain` is the wrench space's section (its grain inertia); `set` its data.
pub fn replay_plan(
    problem: &PlanarProblem,
    plan: &PlanTable,
    set: Arc<dyn WrenchSet>,
    periods: Option<usize>,
    settings: &MdpReplaySettings,
) -> Result<PlanarReplay, MdpError> {
    replay_plan_with(problem, plan, periods, |p, t| replay(p, t, set, settings))
}

/// Replays `plan` once on the wrench space `set` (see the module's docs). A replay that
/// cannot go on (a step's QP fails, the state diverges, `max_steps`) is returned as far as
/// it went, marked incomplete; errors are for what cannot start.
pub fn replay(
    problem: &PlanarProblem,
    plan: &PlanTable,
    set: Arc<dyn WrenchSet>,
    settings: &MdpReplaySettings,
) -> Result<PlanarReplay, MdpError> {
    let refuse = |message: String| Err(MdpError::Robot(message));
    let PlanarTerrainConfig::WrenchSpace(ground) = &problem.terrain else {
        return refuse(format!(
            "the MDP simulator steps on a wrench space, not on {} ground",
            problem.terrain.model_name()
        ));
    };
    let robot = problem.robot.build(problem.gravity);
    if !(settings.max_step > 0.0 && settings.max_step.is_finite()) {
        return Err(MdpError::Option {
            field: "step",
            message: format!("must be a finite time > 0 s, got {}", settings.max_step),
        });
    }
    let n = robot.n_q();
    let mut sim = MdpSim::uniform(
        &robot,
        set,
        MdpOptions {
            step: settings.max_step,
            grain_inertia: GrainInertia::BodyMultiple(ground.grain_inertia),
            ..MdpOptions::default()
        },
    )?;
    let (kp, kd): (Vec<f64>, Vec<f64>) = servo_gains(&robot, plan).into_iter().unzip();
    let (mut q, mut v) = (plan.x[0][..n].to_vec(), plan.x[0][n..2 * n].to_vec());
    let mut drives = plan.x[0][2 * n..].to_vec();
    let command = |k: usize, t: f64, q: &[f64], v: &[f64]| {
        let (xr, ur) = plan.at_piece(k, t);
        servo_command(&robot, &kp, &kd, (&xr, &ur), q, v)
    };
    let in_contact = |reports: &[super::ContactReport]| -> Vec<usize> {
        (0..reports.len())
            .filter(|&c| reports[c].in_contact)
            .collect()
    };
    let row = |t: f64, q: &[f64], v: &[f64], d: &[f64], u: &[f64], wrenches: &[[f64; 3]]| {
        let mut row = vec![t];
        row.extend(q.iter().chain(v).chain(d).chain(u));
        for w in wrenches {
            row.extend(w);
        }
        row
    };
    let n_contacts = robot.contacts.len();
    let mut contacts = in_contact(&sim.contacts(&q)?);
    let mut rows = vec![row(
        0.0,
        &q,
        &v,
        &drives,
        &command(0, 0.0, &q, &v),
        &vec![[0.0; 3]; n_contacts],
    )];
    let mut modes = vec![mode_name(&robot, &contacts)];
    let mut events = Vec::new();
    let mut outside_said = vec![false; n_contacts];
    // The centre of mass's highest rise and the apex body's rise there.
    let com0 = robot.body.centre_of_mass(&q)[1];
    let apex_body = problem.task.apex_body(&robot);
    let body_z = |q: &[f64], b: usize| {
        let frames = robot.body.frames(q);
        frames[b].transform(robot.body.bodies[b].com)[1]
    };
    let apex_z0 = apex_body.map(|b| body_z(&q, b));
    let (mut peak, mut apex_rise) = (0.0_f64, 0.0_f64);
    let mut steps = 0_usize;
    let mut stopped = None;
    'plan: for k in 0..plan.t.len() - 1 {
        let (t0, t1) = (plan.t[k], plan.t[k + 1]);
        if t1 <= t0 {
            continue; // a phase boundary: two nodes at one time
        }
        let on_sand = settings.ground_steps_as_planned
            && problem
                .schedule
                .get(plan.phase[k])
                .is_some_and(|p| !p.contacts.is_empty());
        let m = if on_sand {
            1
        } else {
            ((t1 - t0) / settings.max_step - 1e-9).ceil().max(1.0) as usize
        };
        let h = (t1 - t0) / m as f64;
        sim.set_step(h)?;
        for s in 0..m {
            if steps >= settings.max_steps {
                stopped = Some(format!(
                    "more than {} steps (--max-steps) at t = {:.4} s",
                    settings.max_steps,
                    t0 + s as f64 * h
                ));
                break 'plan;
            }
            let t = t0 + s as f64 * h;
            let u = command(k, t, &q, &v);
            let x: Vec<f64> = q.iter().chain(&v).chain(&drives).copied().collect();
            let efforts = robot.efforts(&x, &u);
            let report = match sim.step(&q, &v, &efforts) {
                Ok(report) => report,
                Err(e) => {
                    stopped = Some(format!("the MDP step at t = {t:.4} s: {e}"));
                    break 'plan;
                }
            };
            steps += 1;
            for (d, rate) in drives.iter_mut().zip(robot.drive_rates(&x, &u)) {
                *d += h * rate;
            }
            if !report.q.iter().chain(&report.v).all(|x| x.is_finite()) {
                stopped = Some(format!(
                    "the replay diverged at t = {t:.4} s (a state is not finite)"
                ));
                break 'plan;
            }
            // Contacts as the step saw them (at its start).
            let now = in_contact(&report.contacts);
            for c in 0..n_contacts {
                let (was, is) = (contacts.contains(&c), now.contains(&c));
                if was != is {
                    events.push(Event {
                        t,
                        kind: if is { "touchdown" } else { "lift-off" },
                        contact: robot.contacts[c].name.clone(),
                    });
                }
                if report.contacts[c].outside && !outside_said[c] {
                    outside_said[c] = true;
                    events.push(Event {
                        t,
                        kind: "outside the data",
                        contact: robot.contacts[c].name.clone(),
                    });
                }
            }
            contacts = now;
            q = report.q;
            v = report.v;
            let t_end = if s + 1 == m { t1 } else { t + h };
            let wrenches: Vec<[f64; 3]> = report.contacts.iter().map(|c| c.wrench_world).collect();
            rows.push(row(t_end, &q, &v, &drives, &u, &wrenches));
            modes.push(mode_name(&robot, &contacts));
            let rise = robot.body.centre_of_mass(&q)[1] - com0;
            if rise > peak {
                peak = rise;
                if let (Some(b), Some(z0)) = (apex_body, apex_z0) {
                    apex_rise = body_z(&q, b) - z0;
                }
            }
        }
    }
    let x_end: Vec<f64> = q.iter().chain(&v).chain(&drives).copied().collect();
    let summary = summarise(
        problem,
        &robot,
        plan,
        settings.max_step,
        Ran {
            rows: &rows,
            x_end: &x_end,
            peak,
            apex_rise,
            // The wrench is in the data's set by construction: a foot never needs more.
            max_friction_excess: 0.0,
            max_unloaded_side_force: 0.0,
            events,
            integration: Integration {
                method: "MDP step (semi-implicit Euler, maximum dissipation over the wrench \
                         space; sim::mdp), the servos sampled at each step's start",
                rtol: None,
                atol: None,
                max_step_s: Some(settings.max_step),
                steps: stopped.is_none().then_some(steps),
                rejected: stopped.is_none().then_some(0),
            },
            stopped,
        },
    );
    Ok(PlanarReplay {
        columns: replay_columns(&robot),
        rows,
        modes,
        summary,
    })
}
