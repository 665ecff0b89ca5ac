//! The MDP simulator for the hopper on an inclined rail (`model::rail`): the step of the
//! module docs with the foot as the one contact, and the replay of a rail plan's commands.
//!
//! The rail holds the foot to one degree of freedom, so the step's QP has the hopper's foot
//! coordinate alone (the mass matrix is diagonal and J_t has no other column): G = J_tᵀ/m_f,
//! Ĥ = m_f + J_pᵀ M_g J_p with M_g = 2 diag(m_f, m_f, ·) (the paper's factor), and the same
//! vertex-form solvers and safeguards as the planar robots' step.

use nalgebra::{DMatrix, DVector};

use super::{qp, vertex_impulses, MdpError, QpSolver};
use crate::model::hopper::state;
use crate::model::rail::RailHopper;
use crate::sim::command::{Command, Interpolation};
use crate::transcription::Trajectory;

/// What one step did at the foot.
#[derive(Clone, Debug, PartialEq)]
pub struct RailStep {
    pub state: Vec<f64>,
    /// The terrain's wrench (F_x [N], F_z [N], τ [N m]); 0 out of the bed.
    pub wrench: [f64; 3],
    /// Its generalized force along the rail [N].
    pub force: f64,
    /// Set when the foot was below the data's deepest node and the data clamp
    /// (`interpolation.beyond_data: clamp`): the depth used instead [m].
    pub clamped: Option<f64>,
    /// Whether the foot was below the data's deepest node (extrapolated there by default, as
    /// every wrench-space simulator does: docs/WRENCH_SPACE.md, "Beyond the data").
    pub outside: bool,
}

/// One maximum-dissipation step of length `h` from `x` under command rate `u`.
#[allow(non_snake_case)]
pub fn step(
    rail: &RailHopper,
    x: &[f64],
    u: f64,
    h: f64,
    solver: QpSolver,
) -> Result<RailStep, MdpError> {
    let free = rail.step(x, &u, &0.0, &h);
    let depth = rail.depth(&x[state::Z_F]);
    let outside = x[state::Z_F] < rail.lowest_foot();
    // The wrench set's own query: inside the data the interpolant; below the deepest node
    // extrapolated (or clamped, as the data say), like the planar robots' step.
    let (vertices, clamped) = match &rail.wrenches {
        crate::model::rail::RailWrenches::Data(space) if outside => {
            use crate::terrain::wrench_set::WrenchSet;
            let query = space.query(depth, rail.angle);
            (query.vertices, query.clamped.map(|(d, _)| d))
        }
        _ => (rail.vertices(&x[state::Z_F]), None),
    };
    let none = RailStep {
        state: free.clone(),
        wrench: [0.0; 3],
        force: 0.0,
        clamped,
        outside,
    };
    if depth >= 0.0 || vertices.iter().all(|w| w.iter().all(|c| *c == 0.0)) {
        return Ok(none);
    }
    let m_f = rail.hopper.params.foot_mass;
    let twist = rail.twist();
    let J_t = DMatrix::from_row_slice(1, 3, &twist);
    let G = J_t.transpose() / m_f;
    let H_hat = m_f + 2.0 * m_f * (twist[0] * twist[0] + twist[1] * twist[1]);
    let Q = &G * H_hat * G.transpose();
    let Q = 0.5 * (&Q + Q.transpose());
    let r = DVector::from_column_slice(G.column(0).as_slice()) * (H_hat * free[state::V_F]);
    let sets = [vertices.as_slice()];
    let c = vertex_impulses(&Q, &r, &sets, h, solver)?;
    let c = qp::feasible_and_no_worse(&Q, &r, c);
    let wrench = [c[0] / h, c[1] / h, c[2] / h];
    let force = rail.rail_force(&wrench);
    Ok(RailStep {
        state: rail.step(x, &u, &force, &h),
        wrench,
        force,
        clamped,
        outside,
    })
}

/// A replay of a rail plan in the MDP simulator.
#[derive(Clone, Debug)]
pub struct RailReplay {
    /// At each step's start: time [s], state, and the terrain's force along the rail over the
    /// step [N] (0 at the last entry).
    pub times: Vec<f64>,
    pub states: Vec<Vec<f64>>,
    pub forces: Vec<f64>,
    /// The first step at which the terrain stopped acting with the foot moving up.
    pub takeoff_time: Option<f64>,
    /// Vertical rise of the rod from the start to the apex [m], and when [s].
    pub apex_rise: Option<f64>,
    pub apex_time: Option<f64>,
    /// Steps whose foot lay below the data (extrapolated there, or clamped when the data say
    /// `beyond_data: clamp`).
    pub outside_steps: usize,
}

/// The command z_d(t) of a rail plan: straight lines between its nodes. That is the stance's
/// own (z_d,k+1 = z_d,k + h u_k) and the trapezoidal flight's (MODEL.md's replay convention).
pub fn command_of(plan: &Trajectory) -> Command {
    let mut times = Vec::new();
    let mut positions = Vec::new();
    let mut offset = 0.0;
    for phase in &plan.phases {
        for (k, x) in phase.states.iter().enumerate() {
            times.push(offset + phase.node_time(k));
            positions.push(x[state::Z_D]);
        }
        offset += phase.duration;
    }
    let rates = vec![0.0; times.len()];
    Command::new(&times, &positions, &rates, Interpolation::Linear)
        .expect("a plan's nodes are finite and in time order")
}

/// Replays the plan's command ([`command_of`]) from its first state: the stance with the
/// plan's own steps (so a plan that obeys maximum dissipation is reproduced), then the
/// flight in `flight_substeps` steps per plan interval, the command held after the plan's
/// end, until the apex (the momentum along the rail turns from up to down, interpolated
/// between steps) or twice the plan's duration.
pub fn replay(
    rail: &RailHopper,
    plan: &Trajectory,
    flight_substeps: usize,
    solver: QpSolver,
) -> Result<RailReplay, MdpError> {
    let (stance, flight) = (&plan.phases[0], &plan.phases[1]);
    let h_stance = stance.duration / (stance.states.len() - 1) as f64;
    let h_flight = flight.duration / (flight.states.len() - 1) as f64 / flight_substeps as f64;
    let end = 2.0 * (stance.duration + flight.duration);
    let command = command_of(plan);
    let mut x = stance.states[0].clone();
    let mut replay = RailReplay {
        times: vec![0.0],
        states: vec![x.clone()],
        forces: vec![0.0],
        takeoff_time: None,
        apex_rise: None,
        apex_time: None,
        outside_steps: 0,
    };
    let z_r0 = x[state::Z_R];
    let mut t = 0.0;
    let mut k = 0;
    while t < end {
        let h = if k < stance.states.len() - 1 {
            h_stance
        } else {
            h_flight
        };
        // The chord's slope of the step's piece (the command is piecewise linear).
        let u = command.at(t + 0.5 * h).1;
        let before = rail.hopper.momentum(&x);
        let out = step(rail, &x, u, h, solver)?;
        replay.outside_steps += usize::from(out.outside);
        t += h;
        k += 1;
        let after = rail.hopper.momentum(&out.state);
        let left = out.state[state::Z_F] >= 0.0 && out.force == 0.0;
        if replay.takeoff_time.is_none() && left && out.state[state::V_F] > 0.0 {
            replay.takeoff_time = Some(t);
        }
        if replay.takeoff_time.is_some() && before > 0.0 && after <= 0.0 {
            let f = before / (before - after);
            let z_r = x[state::Z_R] + f * (out.state[state::Z_R] - x[state::Z_R]);
            replay.apex_rise = Some((z_r - z_r0) * rail.angle.cos());
            replay.apex_time = Some(t - h + f * h);
        }
        x = out.state;
        // The force acted over the step that starts at the previous time.
        *replay.forces.last_mut().expect("the start's entry") = out.force;
        replay.times.push(t);
        replay.states.push(x.clone());
        replay.forces.push(0.0);
        if replay.apex_rise.is_some() {
            break;
        }
    }
    Ok(replay)
}

// `RailHopper::stable_step` (model::rail) on the bed of a problem file: tested here, where a
// problem file may be read.
#[cfg(test)]
mod tests {
    use crate::model::hopper::Hopper;
    use crate::model::rail::{RailHopper, RailWrenches};
    use crate::problem;
    use crate::terrain::AddedMass;

    /// The stable step is the boundary of stability: just below it neither map grows, just
    /// above it one grows clearly (not by the round-off scatter of the unit eigenvalues).
    #[test]
    fn the_stable_step_is_where_the_step_turns_unstable() {
        let problem =
            problem::load(std::path::Path::new("problems/hopper_granular.yaml"), &[]).unwrap();
        let bed = AddedMass::from_medium(
            &problem.terrain.medium_parameters(),
            problem.robot.foot_radius,
        );
        let rail = RailHopper::new(
            Hopper::from_problem(&problem),
            0.0,
            RailWrenches::Hydrostatic(bed),
        );
        let h = rail.stable_step();
        for held in [true, false] {
            let below = rail.spectral_radius(0.99 * h, held);
            assert!(below <= 1.0 + 1e-6, "held {held}: radius {below} at 0.99 h");
        }
        let above = [true, false].map(|held| rail.spectral_radius(1.02 * h, held));
        assert!(
            above.iter().any(|&r| r > 1.01),
            "radii {above:?} at 1.02 h = {:.3} ms",
            1.02 * h * 1e3
        );
    }
}
