//! Controllers that drive the MDP simulator: a PID on chosen inputs (the wrench-space paper's
//! accuracy test: the rigid foot following a reference path in (x, z, φ)), and the
//! implicit joint hold that keeps a legged robot's joints at a posture ([`JointHold`]).

use serde::{Deserialize, Serialize};

use crate::model::planar::PlanarRobot;

// The joint hold is also a scenario file's `control: {kind: hold}`: the schema declares it.
pub use crate::problem::scenario::JointHold;

/// Proportional, integral and derivative gains, one per controlled input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PidGains {
    pub proportional: Vec<f64>,
    pub integral: Vec<f64>,
    pub derivative: Vec<f64>,
}

impl PidGains {
    /// The paper's gains on the foot's (x, z, φ): K_p = [8000, 20000, 300],
    /// K_i = [4000, 6000, 1000], K_d = [200, 400, 10] (N/m, N/(m s), N s/m and the same per
    /// radian for φ).
    pub fn paper_foot() -> PidGains {
        PidGains {
            proportional: vec![8000.0, 20000.0, 300.0],
            integral: vec![4000.0, 6000.0, 1000.0],
            derivative: vec![200.0, 400.0, 10.0],
        }
    }
}

/// A PID on some of a robot's inputs: input `inputs[k]` pushes on its own coordinate j and
/// gets u = K_p (q_ref,j − q_j) + K_i ∫(q_ref,j − q_j) dt + K_d (v_ref,j − v_j). Nothing
/// else (no gravity compensation: the integral finds it, as in the paper), no saturation
/// (the paper's gains ask for more than the planner's input limits).
#[derive(Clone, Debug)]
pub struct Pid {
    inputs: Vec<usize>,
    coordinates: Vec<usize>,
    gains: PidGains,
    n_inputs: usize,
    integral: Vec<f64>,
}

impl Pid {
    /// A PID on the named inputs of `robot`; Err names the missing input or the gain list of
    /// the wrong length.
    pub fn new(robot: &PlanarRobot, inputs: &[&str], gains: PidGains) -> Result<Pid, String> {
        let indices: Vec<usize> = inputs
            .iter()
            .map(|name| {
                robot.input(name).ok_or_else(|| {
                    let known: Vec<&str> = robot.inputs.iter().map(|i| i.name.as_str()).collect();
                    format!(
                        "robot `{}` has no input `{name}` (it has {})",
                        robot.name,
                        known.join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        for (what, list) in [
            ("proportional", &gains.proportional),
            ("integral", &gains.integral),
            ("derivative", &gains.derivative),
        ] {
            if list.len() != indices.len() {
                return Err(format!(
                    "{what} gains: {} values for {} inputs",
                    list.len(),
                    indices.len()
                ));
            }
        }
        Ok(Pid {
            coordinates: indices
                .iter()
                .map(|&i| robot.inputs[i].coordinate)
                .collect(),
            inputs: indices,
            gains,
            n_inputs: robot.inputs.len(),
            integral: vec![0.0; inputs.len()],
        })
    }

    /// The planar foot's PID with the paper's gains on force_x, force_z, torque (its
    /// coordinates are the COM's x, z and the pitch).
    pub fn paper_foot(robot: &PlanarRobot) -> Result<Pid, String> {
        Pid::new(
            robot,
            &["force_x", "force_z", "torque"],
            PidGains::paper_foot(),
        )
    }

    /// The full input vector for this step (zero on inputs the PID does not drive);
    /// `reference` and `reference_rate` hold one value per controlled input; the integral
    /// advances by `step` seconds.
    pub fn command(
        &mut self,
        step: f64,
        q: &[f64],
        v: &[f64],
        reference: &[f64],
        reference_rate: &[f64],
    ) -> Vec<f64> {
        let mut u = vec![0.0; self.n_inputs];
        for k in 0..self.inputs.len() {
            let j = self.coordinates[k];
            let error = reference[k] - q[j];
            self.integral[k] += step * error;
            u[self.inputs[k]] = self.gains.proportional[k] * error
                + self.gains.integral[k] * self.integral[k]
                + self.gains.derivative[k] * (reference_rate[k] - v[j]);
        }
        u
    }
}
