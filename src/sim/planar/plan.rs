//! The plan a replay follows: its nodes as a table read from `trajectory.csv`, and the servo
//! gains that track it.

use crate::model::planar::PlanarRobot;

/// Servo bandwidth and damping ratio.
const SERVO: f64 = 2.0 * std::f64::consts::PI * 8.0;

/// A plan as a table of nodes: times, states, inputs, contacts per node.
#[derive(Clone, Debug)]
pub struct PlanTable {
    pub t: Vec<f64>,
    /// Per node: the state (q, v, drive states).
    pub x: Vec<Vec<f64>>,
    /// Per node: the inputs.
    pub u: Vec<Vec<f64>>,
    /// Per node: its phase.
    pub phase: Vec<usize>,
}

impl PlanTable {
    /// A plan's nodes as the table `read_plan` would read from its `trajectory.csv`: the
    /// states and the first `n_inputs` controls (the inputs).
    #[cfg(feature = "planner")]
    pub fn from_trajectory(
        trajectory: &crate::transcription::Trajectory,
        n_inputs: usize,
    ) -> PlanTable {
        let mut table = PlanTable {
            t: Vec::new(),
            x: Vec::new(),
            u: Vec::new(),
            phase: Vec::new(),
        };
        let mut t0 = 0.0;
        for (p, phase) in trajectory.phases.iter().enumerate() {
            for k in 0..phase.states.len() {
                table.t.push(t0 + phase.node_time(k));
                table.x.push(phase.states[k].clone());
                table.u.push(phase.controls[k][..n_inputs].to_vec());
                table.phase.push(p);
            }
            t0 += phase.duration;
        }
        table
    }

    /// The plan's state and inputs at `t` (linear between nodes; at a phase boundary, the
    /// next phase's first node; the last node's after the end).
    pub fn at(&self, t: f64) -> (Vec<f64>, Vec<f64>) {
        self.at_piece(self.piece(t), t)
    }

    /// The node that starts the interval holding `t`: the last node at or before `t` (at a
    /// phase boundary, where two nodes share a time, the next phase's first node).
    pub fn piece(&self, t: f64) -> usize {
        self.t.partition_point(|&tk| tk <= t).saturating_sub(1)
    }

    /// The plan's state and inputs at `t` on the interval that node `k` starts (linear
    /// between node k and node k + 1, clamped to the interval; node k's after the end).
    pub fn at_piece(&self, k: usize, t: f64) -> (Vec<f64>, Vec<f64>) {
        let ts = &self.t;
        if k + 1 >= ts.len() || ts[k + 1] <= ts[k] {
            return (self.x[k].clone(), self.u[k].clone());
        }
        let s = ((t - ts[k]) / (ts[k + 1] - ts[k])).clamp(0.0, 1.0);
        let lerp = |a: &[f64], b: &[f64]| -> Vec<f64> {
            a.iter().zip(b).map(|(a, b)| a + s * (b - a)).collect()
        };
        (
            lerp(&self.x[k], &self.x[k + 1]),
            lerp(&self.u[k], &self.u[k + 1]),
        )
    }
}

/// The servo the replays add to a plan's inputs: per input, the position and velocity gains
/// of an 8 Hz, critically damped loop on its coordinate, from M at the plan's first state
/// (none on a drive, a servo of its own).
pub fn servo_gains(robot: &PlanarRobot, plan: &PlanTable) -> Vec<(f64, f64)> {
    let n = robot.body.n_q();
    let m0 = robot.body.mass_matrix(&plan.x[0][..n]);
    robot
        .inputs
        .iter()
        .map(|i| {
            if i.drive.is_some() {
                return (0.0, 0.0);
            }
            let m = m0[i.coordinate][i.coordinate];
            (m * SERVO * SERVO, 2.0 * m * SERVO)
        })
        .collect()
}

/// The inputs the servos apply at coordinates `q` and rates `v` against the plan's
/// `reference` (its state and inputs at that time): u_i = u_plan,i + K_p (q_plan,j − q_j) +
/// K_d (v_plan,j − v_j) on input i's coordinate j, clamped to the input's limits; a drive's
/// input is the plan's (the drive is a servo of its own). `kp`, `kd` from [`servo_gains`].
pub fn servo_command(
    robot: &PlanarRobot,
    kp: &[f64],
    kd: &[f64],
    reference: (&[f64], &[f64]),
    q: &[f64],
    v: &[f64],
) -> Vec<f64> {
    let (xr, ur) = reference;
    let n = robot.body.n_q();
    robot
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            if input.drive.is_some() {
                return ur[i];
            }
            let j = input.coordinate;
            let u = ur[i] + kp[i] * (xr[j] - q[j]) + kd[i] * (xr[n + j] - v[j]);
            u.clamp(input.limit.0, input.limit.1)
        })
        .collect()
}

/// Reads a planar `trajectory.csv` (as `loam solve` writes it) into a plan table.
pub fn read_plan(csv: &str, robot: &PlanarRobot) -> Result<PlanTable, String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or("empty trajectory.csv")?
        .split(',')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("trajectory.csv has no column `{name}`"))
    };
    let t_col = col("t")?;
    let phase_col = col("phase")?;
    let mut x_cols = Vec::new();
    for name in robot.state_names() {
        x_cols.push(col(&name)?);
    }
    let mut u_cols = Vec::new();
    for i in &robot.inputs {
        u_cols.push(col(&i.name)?);
    }
    let mut table = PlanTable {
        t: Vec::new(),
        x: Vec::new(),
        u: Vec::new(),
        phase: Vec::new(),
    };
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != header.len() {
            return Err(format!(
                "trajectory.csv line {}: {} cells, the header has {}",
                i + 2,
                cells.len(),
                header.len()
            ));
        }
        let num = |j: usize| -> Result<f64, String> {
            cells[j].parse::<f64>().map_err(|_| {
                format!(
                    "trajectory.csv line {}: `{}` is not a number",
                    i + 2,
                    cells[j]
                )
            })
        };
        table.t.push(num(t_col)?);
        table.phase.push(num(phase_col)? as usize);
        table
            .x
            .push(x_cols.iter().map(|&j| num(j)).collect::<Result<_, _>>()?);
        table
            .u
            .push(u_cols.iter().map(|&j| num(j)).collect::<Result<_, _>>()?);
    }
    if table.t.len() < 2 {
        return Err("trajectory.csv has fewer than two nodes".into());
    }
    Ok(table)
}
