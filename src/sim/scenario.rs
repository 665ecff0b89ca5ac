//! A scenario ([`crate::problem::scenario::Scenario`]) run in the maximum-dissipation
//! simulator: the PID loops compute the inputs from the state, the simulator steps, and every
//! step becomes a row of a table with named columns.
//!
//! Columns (units in docs/WRENCH_SPACE.md, "Scenario output"): `t` \[s\]; the robot's
//! coordinates by name \[m or rad\]; their rates `d_<name>` \[m/s or rad/s\]; the inputs by
//! name \[N or N m\]; per foot `<foot>_depth` (signed depth of the sole centre along the
//! surface normal, < 0 below) \[m\], `<foot>_tilt` (foot axis from the surface normal) \[rad\],
//! the terrain's wrench on the foot in surface axes `<foot>_fx`, `<foot>_fz` \[N\] and its
//! torque about the torque point `<foot>_tau` \[N m\], `<foot>_clamped` (1 where the
//! configuration was clamped: into the data, or the tilt to ±π/2) and `<foot>_outside` (1
//! where the foot was below the surface outside its data's box). Row k holds the state at
//! t_k and the inputs and wrenches of the step from t_k; the last row, the final state with
//! the last step's inputs and wrenches repeated.

use std::sync::Arc;

use serde::Serialize;

use crate::model::planar::PlanarRobot;
use crate::problem::scenario::{Control, Reference, Scenario};
use crate::sim::mdp::{GrainInertia, MdpOptions, MdpSim, Pid, PidGains};
use crate::terrain::wrench_set::WrenchSet;

/// A scenario's run: the table and what it measured.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub summary: ScenarioSummary,
}

/// Key figures of a run.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioSummary {
    pub steps: usize,
    pub duration_s: f64,
    /// The base's pose at the end (x, z \[m\], pitch \[rad\]).
    pub final_base: [f64; 3],
    /// |v| at the end (all coordinates, mixed units) and its largest entry.
    pub final_speed: f64,
    /// Per foot: the deepest depth reached \[m\] (0 if never below the surface).
    pub deepest_m: Vec<(String, f64)>,
    /// Per foot: the depth at the end \[m\].
    pub final_depth_m: Vec<(String, f64)>,
    /// Steps on which a foot's configuration was clamped into the data.
    pub clamped_steps: usize,
    /// Per foot: steps with the foot below the surface outside its data's box.
    pub outside_data_steps: Vec<(String, usize)>,
    /// The share of steps with any foot outside its data's box.
    pub outside_data_share: f64,
    /// Median wall time per step \[µs\].
    pub median_step_us: f64,
    /// The simulator's settings: step, slope, form of W, QP solver, grain inertia, hold.
    pub simulator: MdpOptions,
}

/// Why a run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("step {step} (t = {t:.4} s): {message}")]
    Step {
        step: usize,
        t: f64,
        message: String,
    },
    #[error("the state is not finite at t = {t:.4} s")]
    Diverged { t: f64 },
}

/// Runs `scenario` for `robot` with `terrain` under every foot. `progress` is told the
/// fraction done now and then.
pub fn run(
    scenario: &Scenario,
    robot: &PlanarRobot,
    terrain: Arc<dyn WrenchSet>,
    mut progress: impl FnMut(f64),
) -> Result<ScenarioRun, ScenarioError> {
    let h = scenario.time_step;
    let options = MdpOptions {
        step: h,
        slope: scenario.terrain.slope,
        grain_inertia: GrainInertia::BodyMultiple(scenario.terrain.grain_inertia),
        joint_hold: match &scenario.control {
            Control::Hold(hold) => Some(hold.clone()),
            _ => None,
        },
        ..MdpOptions::default()
    };
    let (mut q, mut v) = scenario.start_state(robot);
    let mut sim =
        MdpSim::uniform(robot, terrain, options.clone()).map_err(|e| ScenarioError::Step {
            step: 0,
            t: 0.0,
            message: e.to_string(),
        })?;
    sim.set_hold_target(&q).map_err(|e| ScenarioError::Step {
        step: 0,
        t: 0.0,
        message: e.to_string(),
    })?;
    // The tracking loops: a PID per input on its coordinate, its reference from key frames.
    let mut tracking = match &scenario.control {
        Control::Track(tracking) => {
            let gains = tracking.gains_for(robot, &q);
            let names: Vec<&str> = robot.inputs.iter().map(|i| i.name.as_str()).collect();
            let pid = Pid::new(
                robot,
                &names,
                PidGains {
                    proportional: gains.iter().map(|g| g.kp).collect(),
                    integral: gains.iter().map(|g| g.ki).collect(),
                    derivative: gains.iter().map(|g| g.kd).collect(),
                },
            )
            .expect("one gain per input of the robot's own");
            let references: Vec<Reference> = robot
                .inputs
                .iter()
                .map(|i| {
                    let j = i.coordinate;
                    Reference::new(tracking, &robot.coordinates[j].name, q[j])
                })
                .collect();
            Some((pid, references))
        }
        _ => None,
    };
    let mut columns = vec!["t".to_string()];
    columns.extend(robot.coordinates.iter().map(|c| c.name.clone()));
    columns.extend(robot.coordinates.iter().map(|c| format!("d_{}", c.name)));
    columns.extend(robot.inputs.iter().map(|i| i.name.clone()));
    for c in &robot.contacts {
        for suffix in ["depth", "tilt", "fx", "fz", "tau", "clamped", "outside"] {
            columns.push(format!("{}_{suffix}", c.name));
        }
    }
    let steps = (scenario.duration / h).round() as usize;
    let n_feet = robot.contacts.len();
    let mut rows = Vec::with_capacity(steps + 1);
    let mut deepest = vec![0.0_f64; n_feet];
    let mut clamped_steps = 0;
    let mut outside = vec![0_usize; n_feet];
    let mut outside_steps = 0;
    let mut times = Vec::with_capacity(steps);
    let mut last = vec![[0.0; 7]; n_feet];
    let mut last_u = vec![0.0; robot.inputs.len()];
    let row = |t: f64, q: &[f64], v: &[f64], u: &[f64], feet: &[[f64; 7]]| {
        let mut r = vec![t];
        r.extend_from_slice(q);
        r.extend_from_slice(v);
        r.extend_from_slice(u);
        for f in feet {
            r.extend_from_slice(f);
        }
        r
    };
    for k in 0..steps {
        let t = k as f64 * h;
        let u = match &mut tracking {
            Some((pid, references)) => {
                let (r, rate): (Vec<f64>, Vec<f64>) = references.iter().map(|r| r.at(t)).unzip();
                let u = pid.command(h, &q, &v, &r, &rate);
                u.iter()
                    .zip(&robot.inputs)
                    .map(|(u, input)| u.clamp(input.limit.0, input.limit.1))
                    .collect()
            }
            None => vec![0.0; robot.inputs.len()],
        };
        let start = std::time::Instant::now();
        let report = sim.step(&q, &v, &u).map_err(|e| ScenarioError::Step {
            step: k,
            t,
            message: e.to_string(),
        })?;
        times.push(start.elapsed().as_secs_f64());
        // The row of step k: the state at t, the inputs applied over [t, t + h] and the
        // wrenches that act over it.
        let mut any_clamped = false;
        for (i, c) in report.contacts.iter().enumerate() {
            let w = c.wrench;
            let clamped = c.clamped.is_some();
            any_clamped |= clamped;
            last[i] = [
                c.depth,
                c.tilt,
                w[0],
                w[1],
                w[2],
                f64::from(u8::from(clamped)),
                f64::from(u8::from(c.outside)),
            ];
            deepest[i] = deepest[i].min(c.depth);
            outside[i] += usize::from(c.outside);
        }
        clamped_steps += usize::from(any_clamped);
        outside_steps += usize::from(report.contacts.iter().any(|c| c.outside));
        rows.push(row(t, &q, &v, &u, &last));
        last_u = u;
        q = report.q;
        v = report.v;
        if !q.iter().chain(&v).all(|x| x.is_finite()) {
            return Err(ScenarioError::Diverged { t: t + h });
        }
        if k % 256 == 0 {
            progress(k as f64 / steps as f64);
        }
    }
    // The final state, where the terrain is: the contacts as the next step would see them.
    let feet = sim.contacts(&q).map_err(|e| ScenarioError::Step {
        step: steps,
        t: steps as f64 * h,
        message: e.to_string(),
    })?;
    for (i, c) in feet.iter().enumerate() {
        // The wrench of the last step, kept (none acts at an instant).
        last[i][0] = c.depth;
        last[i][1] = c.tilt;
    }
    let t_end = steps as f64 * h;
    rows.push(row(t_end, &q, &v, &last_u, &last));
    times.sort_by(f64::total_cmp);
    let names = |values: &[f64]| -> Vec<(String, f64)> {
        robot
            .contacts
            .iter()
            .zip(values)
            .map(|(c, d)| (c.name.clone(), *d))
            .collect()
    };
    let final_depth: Vec<f64> = feet.iter().map(|c| c.depth).collect();
    let summary = ScenarioSummary {
        steps,
        duration_s: t_end,
        final_base: [q[0], q[1], q[2]],
        final_speed: v.iter().map(|x| x * x).sum::<f64>().sqrt(),
        deepest_m: names(&deepest),
        final_depth_m: names(&final_depth),
        clamped_steps,
        outside_data_steps: robot
            .contacts
            .iter()
            .zip(&outside)
            .map(|(c, n)| (c.name.clone(), *n))
            .collect(),
        outside_data_share: outside_steps as f64 / steps.max(1) as f64,
        median_step_us: times.get(times.len() / 2).copied().unwrap_or(0.0) * 1e6,
        simulator: options,
    };
    Ok(ScenarioRun {
        columns,
        rows,
        summary,
    })
}
