//! The replay of a planar wrench-space plan (`planner::wrench_hop`) in the MDP simulator:
//! the plan's inputs alone, open loop, from its start state.
//!
//! Ground phases are replayed with the plan's own step (its duration over its intervals) and
//! input u_k held over step k, which is the step the planner transcribed, so the replay
//! reproduces the plan's ground nodes up to the QP's rounding. Flights (trapezoidal in the
//! plan) are replayed with `flight_substeps` simulator steps per plan interval and the inputs
//! interpolated linearly between nodes, as the collocation assumes; the feet may touch the
//! sand in them, as in any simulation. The replay ends at the plan's last node's time.

use std::sync::Arc;

use super::{MdpError, MdpOptions, MdpSim, StepReport};
use crate::planner::wrench_hop::WrenchHop;
use crate::terrain::wrench_set::WrenchSet;
use crate::transcription::Trajectory;

/// One replayed instant.
#[derive(Clone, Debug, PartialEq)]
pub struct HopSample {
    /// Time from the plan's start [s].
    pub time: f64,
    /// Plan phase and node when the sample falls on a node (else `None`).
    pub node: Option<(usize, usize)>,
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    /// The inputs applied over the step that ends here (the plan's first for the first
    /// sample).
    pub inputs: Vec<f64>,
    /// Each contact's wrench during the step that ends here (surface axes) and its depth and
    /// tilt at the step's start; zero wrenches for the first sample.
    pub wrenches: Vec<[f64; 3]>,
    pub depths: Vec<f64>,
    pub tilts: Vec<f64>,
    /// Set when a contact's (d, φ) lay outside the data and was clamped.
    pub clamped: bool,
}

/// Replays `plan` (a trajectory of `hop`'s NLP) in the MDP simulator.
pub fn replay(
    hop: &WrenchHop,
    plan: &Trajectory,
    flight_substeps: usize,
) -> Result<Vec<HopSample>, MdpError> {
    let l = hop.layout();
    let set: Arc<dyn WrenchSet> = hop.space.clone();
    let first = &plan.phases[0].states[0];
    let (mut q, mut v) = (first[..l.n_q].to_vec(), first[l.n_q..].to_vec());
    let mut samples = vec![HopSample {
        time: 0.0,
        node: Some((0, 0)),
        q: q.clone(),
        v: v.clone(),
        inputs: plan.phases[0].controls[0][..l.n_inputs].to_vec(),
        wrenches: vec![[0.0; 3]; l.n_contacts],
        depths: (0..l.n_contacts)
            .map(|c| hop.contact_frame(&q, c).depth)
            .collect(),
        tilts: (0..l.n_contacts)
            .map(|c| hop.contact_frame(&q, c).tilt)
            .collect(),
        clamped: false,
    }];
    let mut time = 0.0;
    let record =
        |report: &StepReport, u: &[f64], time: f64, node: Option<(usize, usize)>| HopSample {
            time,
            node,
            q: report.q.clone(),
            v: report.v.clone(),
            inputs: u.to_vec(),
            wrenches: report.contacts.iter().map(|c| c.wrench).collect(),
            depths: report.contacts.iter().map(|c| c.depth).collect(),
            tilts: report.contacts.iter().map(|c| c.tilt).collect(),
            clamped: report.contacts.iter().any(|c| c.clamped.is_some()),
        };
    for (p, (spec, phase)) in hop.phases.iter().zip(&plan.phases).enumerate() {
        let intervals = phase.states.len() - 1;
        let h = phase.duration / intervals as f64;
        let substeps = if spec.is_ground() {
            1
        } else {
            flight_substeps.max(1)
        };
        let options = MdpOptions {
            step: h / substeps as f64,
            grain_inertia: super::GrainInertia::BodyMultiple(hop.grain_inertia),
            ..MdpOptions::default()
        };
        let sim = MdpSim::uniform(&hop.robot, set.clone(), options)?;
        for k in 0..intervals {
            let (u0, u1) = (
                &phase.controls[k][..l.n_inputs],
                &phase.controls[k + 1][..l.n_inputs],
            );
            for s in 0..substeps {
                let u: Vec<f64> = if spec.is_ground() {
                    u0.to_vec()
                } else {
                    let f = (s as f64 + 0.5) / substeps as f64;
                    u0.iter().zip(u1).map(|(a, b)| a + f * (b - a)).collect()
                };
                let report = sim.step(&q, &v, &u)?;
                time += h / substeps as f64;
                let node = (s + 1 == substeps).then_some((p, k + 1));
                samples.push(record(&report, &u, time, node));
                q = report.q;
                v = report.v;
            }
        }
    }
    Ok(samples)
}
