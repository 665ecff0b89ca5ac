//! A gait's plan (`task.periodic`: one stride whose end is its start moved forward by the
//! stride length) replayed over several strides: the plan's nodes repeated stride after
//! stride, each moved forward by the stride and later by the stride time, so that the servo
//! tracks the next stride where the last one ended and the feed-forward inputs repeat. Nothing
//! resets the robot between strides: what one stride leaves (a forward lean, a lost bit of
//! speed) is where the next one starts, so the replay says whether the gait holds open loop.
//!
//! Each stride is measured against the plan: its length (the base's advance over the stride
//! time) and its apex (the highest centre of mass above the ground, the surface at z = 0).

use serde::Serialize;

use super::{replay, PlanTable, PlanarReplay, PlanarSimError, ReplaySettings};
use crate::problem::planar::PlanarProblem;

/// One stride of a replay (one period of the plan: its `task.strides` strides), against the
/// plan.
#[derive(Clone, Debug, Serialize)]
pub struct StrideReport {
    /// 1 for the first stride.
    pub stride: usize,
    pub planned_length_m: f64,
    pub length_m: f64,
    pub length_error_rel: f64,
    /// The highest centre of mass over the stride, above the ground \[m\].
    pub planned_apex_m: f64,
    pub apex_m: f64,
    pub apex_error_rel: f64,
}

impl PlanTable {
    /// The plan's nodes repeated `strides` times: stride k's nodes at k stride times later,
    /// its base (state 0, the base's x) k stride lengths farther, its phases numbered on.
    pub fn tiled(&self, strides: usize, phases: usize) -> PlanTable {
        let period = *self.t.last().expect("a plan has nodes") - self.t[0];
        let length = self.x.last().unwrap()[0] - self.x[0][0];
        let mut tiled = PlanTable {
            t: Vec::new(),
            x: Vec::new(),
            u: Vec::new(),
            phase: Vec::new(),
        };
        for k in 0..strides {
            for i in 0..self.t.len() {
                let mut x = self.x[i].clone();
                x[0] += k as f64 * length;
                tiled.t.push(self.t[i] + k as f64 * period);
                tiled.x.push(x);
                tiled.u.push(self.u[i].clone());
                tiled.phase.push(self.phase[i] + k * phases);
            }
        }
        tiled
    }
}

/// How many strides a gait's replay runs by default (`loam simulate`, and a gait's mesh
/// refinement): an open-loop gait's departure grows stride by stride, so one stride's error
/// does not say whether it holds.
pub const DEFAULT_STRIDES: usize = 3;

/// The replay `loam simulate` makes of a plan in the event loop: a gait (`task.periodic`)
/// over `periods` repetitions of its plan (`None`: enough for [`DEFAULT_STRIDES`] strides),
/// any other plan once.
pub fn replay_plan(
    problem: &PlanarProblem,
    plan: &PlanTable,
    periods: Option<usize>,
    settings: &ReplaySettings,
) -> Result<PlanarReplay, PlanarSimError> {
    replay_plan_with(problem, plan, periods, |p, t| replay(p, t, settings))
}

/// [`replay_plan`] by any simulator's `replay` (the event loop's, the MDP simulator's).
pub fn replay_plan_with<E>(
    problem: &PlanarProblem,
    plan: &PlanTable,
    periods: Option<usize>,
    replay: impl FnOnce(&PlanarProblem, &PlanTable) -> Result<PlanarReplay, E>,
) -> Result<PlanarReplay, E> {
    if problem.task.periodic {
        let periods = periods.unwrap_or(problem.task.replay_periods(DEFAULT_STRIDES));
        strides_of(problem, plan, periods, replay)
    } else {
        replay(problem, plan)
    }
}

/// A periodic plan replayed over `strides` strides by `replay` (a simulator's replay of a
/// problem and its plan table: the event loop's, or the MDP simulator's), every stride
/// measured against the plan (`summary.strides`). Stride boundaries are plan nodes, which
/// every replay samples.
pub fn strides_of<E>(
    problem: &PlanarProblem,
    plan: &PlanTable,
    strides: usize,
    replay: impl FnOnce(&PlanarProblem, &PlanTable) -> Result<PlanarReplay, E>,
) -> Result<PlanarReplay, E> {
    let strides = strides.max(1);
    let mut tiled_problem = problem.clone();
    tiled_problem.schedule = (0..strides)
        .flat_map(|_| problem.schedule.iter().cloned())
        .collect();
    let tiled = plan.tiled(strides, problem.schedule.len());
    let mut replay = replay(&tiled_problem, &tiled)?;
    let robot = problem.robot.build(problem.gravity);
    let n = robot.body.n_q();
    let com_z = |x: &[f64]| robot.body.centre_of_mass(&x[..n])[1];
    let period = *plan.t.last().unwrap() - plan.t[0];
    let planned_length = plan.x.last().unwrap()[0] - plan.x[0][0];
    let planned_apex = plan
        .x
        .iter()
        .map(|x| com_z(x))
        .fold(f64::NEG_INFINITY, f64::max);
    replay.summary.strides = stride_reports(
        &replay.rows,
        |x| com_z(x),
        period,
        (planned_length, planned_apex),
        strides,
    );
    Ok(replay)
}

/// Each of `strides` strides of a replay's `rows` (t, then the state: the base's x first)
/// against the plan's `(length, apex)`, a stride lasting `period`: its length (the base's
/// advance from one stride boundary to the next, boundaries being rows at k · period) and its
/// apex (the highest `com_z` of the state over the stride). Strides stop at the first whose
/// boundaries the replay did not reach.
pub fn stride_reports(
    rows: &[Vec<f64>],
    com_z: impl Fn(&[f64]) -> f64,
    period: f64,
    (planned_length, planned_apex): (f64, f64),
    strides: usize,
) -> Vec<StrideReport> {
    let relative = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-9);
    // The sample at (or nearest) a time: stride boundaries are plan nodes, sampled exactly.
    let at = |t: f64| {
        rows.iter()
            .min_by(|a, b| (a[0] - t).abs().total_cmp(&(b[0] - t).abs()))
            .filter(|row| (row[0] - t).abs() < 1e-6)
    };
    (0..strides)
        .map_while(|k| {
            let (t0, t1) = (k as f64 * period, (k + 1) as f64 * period);
            let (start, end) = (at(t0)?, at(t1)?);
            let apex = rows
                .iter()
                .filter(|row| row[0] >= t0 - 1e-9 && row[0] <= t1 + 1e-9)
                .map(|row| com_z(&row[1..]))
                .fold(f64::NEG_INFINITY, f64::max);
            let length = end[1] - start[1];
            Some(StrideReport {
                stride: k + 1,
                planned_length_m: planned_length,
                length_m: length,
                length_error_rel: relative(length, planned_length),
                planned_apex_m: planned_apex,
                apex_m: apex,
                apex_error_rel: relative(apex, planned_apex),
            })
        })
        .collect()
}
