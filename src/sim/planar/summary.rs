//! A replay measured against its plan: the one summary (`replay.json`) that every simulator
//! replaying a planar robot's plan writes, the event loop's (`super::replay`) and the MDP
//! simulator's on a wrench space (`sim::mdp::plan`), so that their rows of `loam validate`
//! compare the same figures computed the same way.

use super::{Event, Integration, LimitCount, PlanTable, PlanarReplaySummary};
use crate::model::planar::PlanarRobot;
use crate::problem::planar::PlanarProblem;

/// What a replay ran: its samples (rows of `t`, then the state, as [`replay_columns`]) and
/// what it tracked between them.
pub struct Ran<'a> {
    pub rows: &'a [Vec<f64>],
    /// The state where the replay ended.
    pub x_end: &'a [f64],
    /// The highest rise of the centre of mass over the replay \[m\].
    pub peak: f64,
    /// `task.apex_of`'s body's rise at that highest centre of mass \[m\] (unused without
    /// `apex_of`).
    pub apex_rise: f64,
    pub max_friction_excess: f64,
    pub max_unloaded_side_force: f64,
    pub events: Vec<Event>,
    pub integration: Integration,
    /// Why the replay stopped before the plan's end (`None`: it reached it).
    pub stopped: Option<String>,
}

/// The columns of a planar replay's rows (`replay.csv` after its `mode`): t, the state, the
/// inputs, and every contact's wrench (F_x, F_z, τ).
pub fn replay_columns(robot: &PlanarRobot) -> Vec<String> {
    let mut columns = vec!["t".to_string()];
    columns.extend(robot.state_names());
    columns.extend(robot.inputs.iter().map(|i| i.name.clone()));
    for c in &robot.contacts {
        for part in ["fx", "fz", "tau"] {
            columns.push(format!("{}_{part}", c.name));
        }
    }
    columns
}

/// The replay `ran` of `plan` (of `problem`, on `problem.terrain`) against the plan: distance,
/// rises and peak, the task's apex, the coordinates' largest departures at the plan's nodes
/// (from the samples within `sample_every` of each node), and the joint limits it left.
pub fn summarise(
    problem: &PlanarProblem,
    robot: &PlanarRobot,
    plan: &PlanTable,
    sample_every: f64,
    ran: Ran<'_>,
) -> PlanarReplaySummary {
    let n = robot.body.n_q();
    let rows = ran.rows;
    let x = ran.x_end;
    let com_z = |x: &[f64]| robot.body.centre_of_mass(&x[..n])[1];
    let com0 = com_z(&plan.x[0]);
    let names = robot.state_names();
    let joint_limits: Vec<LimitCount> = robot
        .state_bounds()
        .into_iter()
        .enumerate()
        .filter(|(_, (lo, hi))| lo.is_finite() || hi.is_finite())
        .map(|(i, (lo, hi))| {
            let excess: Vec<f64> = rows
                .iter()
                .map(|row| (lo - row[1 + i]).max(row[1 + i] - hi))
                .filter(|e| *e > 1e-9)
                .collect();
            LimitCount {
                coordinate: names[i].clone(),
                samples_outside: excess.len(),
                max_excess: excess.iter().copied().fold(0.0, f64::max),
            }
        })
        .collect();
    // Errors at the plan's nodes, from the samples nearest in time.
    let mut max_error = vec![0.0_f64; n];
    for (k, &tk) in plan.t.iter().enumerate() {
        let row = rows
            .iter()
            .min_by(|a, b| (a[0] - tk).abs().total_cmp(&(b[0] - tk).abs()))
            .unwrap();
        if (row[0] - tk).abs() <= sample_every {
            for j in 0..n {
                max_error[j] = max_error[j].max((row[1 + j] - plan.x[k][j]).abs());
            }
        }
    }
    let planned_distance = plan.x.last().unwrap()[0] - plan.x[0][0];
    let achieved_distance = x[0] - plan.x[0][0];
    let planned_peak = plan
        .x
        .iter()
        .map(|xk| com_z(xk) - com0)
        .fold(f64::NEG_INFINITY, f64::max);
    // The task's apex: the body's rise at the plan's highest node and in the replay.
    let (planned_apex, achieved_apex) = match problem.task.apex_rise {
        None => (None, None),
        Some(_) => {
            let top = plan
                .x
                .iter()
                .max_by(|a, b| com_z(a).total_cmp(&com_z(b)))
                .unwrap();
            match problem.task.apex_body(robot) {
                Some(b) => {
                    let z0 = super::events::body_height(&robot.body, &plan.x[0][..n], b);
                    let planned = super::events::body_height(&robot.body, &top[..n], b) - z0;
                    (Some(planned), Some(ran.apex_rise))
                }
                None => (Some(planned_peak), Some(ran.peak)),
            }
        }
    };
    let relative = |a: f64, b: f64| {
        if b.abs() > 1e-9 {
            (a - b).abs() / b.abs()
        } else {
            (a - b).abs()
        }
    };
    PlanarReplaySummary {
        planned_distance_m: planned_distance,
        achieved_distance_m: achieved_distance,
        distance_error_rel: relative(achieved_distance, planned_distance),
        planned_com_rise_m: com_z(plan.x.last().unwrap()) - com0,
        achieved_com_rise_m: com_z(x) - com0,
        planned_com_peak_m: planned_peak,
        achieved_com_peak_m: ran.peak,
        com_peak_error_rel: relative(ran.peak, planned_peak),
        planned_apex_rise_m: planned_apex,
        achieved_apex_rise_m: achieved_apex,
        apex_rise_error_rel: planned_apex.zip(achieved_apex).map(|(p, a)| relative(a, p)),
        max_coordinate_error: robot
            .coordinates
            .iter()
            .zip(max_error)
            .map(|(c, e)| (c.name.clone(), e))
            .collect(),
        max_friction_excess: ran.max_friction_excess,
        max_unloaded_side_force_n: ran.max_unloaded_side_force,
        joint_limits,
        events: ran.events,
        strides: Vec::new(),
        planned_contacts: problem
            .schedule
            .iter()
            .map(|p| p.contacts.clone())
            .collect(),
        terrain: problem.terrain.clone(),
        integration: ran.integration,
        complete: ran.stopped.is_none(),
        stopped: ran.stopped,
    }
}
