//! What a planar run folder holds beyond the law's when its plan is on a wrench space
//! (`planner::planar::wrench_space`): `trajectory.csv`'s vertex weights and per-foot wrench
//! columns, and the plan's open-loop replay in the MDP simulator ([`replay`]), `replay.csv`
//! with its record `replay.json`, so that `loam plot` draws it (the replay dashed). The
//! run's `solution.json` is the planar writer's (`super::write_planar_run`).
//!
//! `trajectory.csv`: t, phase, node, the NLP's whole node (the coordinates, their rates
//! `d_<name>`, the drives' states; the inputs, the accelerations `dd_<name>`, each foot's
//! vertex weights `<foot>_lambda_<i>` and the auxiliary `y_<name>`, so that the plan can
//! start another: `loam solve --warm-start`), then per foot `<foot>_fx`, `<foot>_fz` \[N\]
//! and `<foot>_tau` \[N m\] (the wrench B(θ)λ in the surface axes, torque about the torque
//! point), `<foot>_depth` \[m\] (< 0 in the sand) and `<foot>_tilt` \[rad\].
//! `replay.csv`: t, the same state and input columns, and per foot the wrench, depth and
//! tilt; the inputs and wrench are those of the step that starts at t (as a plan's node
//! holds the controls of the interval it starts).

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use crate::output::OutputError;
use crate::planner::planar::wrench_space::WrenchSpacePlanner;
use crate::sim::mdp::sample::MdpSample;
use crate::sim::mdp::{GrainInertia, MdpError, MdpOptions, MdpSim, StepReport};
use crate::sim::planar::{stride_reports, StrideReport, DEFAULT_STRIDES};
use crate::terrain::wrench_set::WrenchSet;
use crate::transcription::Trajectory;

/// The replay against the plan.
#[derive(Clone, Debug, Serialize)]
pub struct MdpReplayRecord {
    pub simulator: &'static str,
    /// Simulator steps per plan interval in flights (ground phases: one, the plan's own).
    pub flight_substeps: usize,
    /// Base x at the end minus at the start \[m\] (the plan's: `key_figures.distance_m`).
    pub distance_m: f64,
    /// Centre of mass height at the end minus at the start \[m\].
    pub com_rise_m: f64,
    /// The largest difference of any coordinate from the plan at the ground phases' nodes
    /// \[m or rad\].
    pub ground_difference: f64,
    /// Each foot's depth at the end \[m\] (the plan ends with them at the surface, 0).
    pub end_depths_m: Vec<f64>,
    /// Steps whose (d, φ) lay outside the data and were clamped.
    pub clamped_steps: usize,
    /// Under an apex task: the highest rise of the apex body's centre of mass (or the
    /// robot's) in the replay \[m\] (the plan's: `task.apex_rise`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apex_rise_m: Option<f64>,
    /// A gait (`task.periodic`): the plan replayed stride after stride, nothing reset
    /// between strides, each stride's length and apex against the plan's (as `loam
    /// simulate` measures a gait in the event loop).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub strides: Vec<StrideReport>,
}

/// The foot columns after a node's variables: wrench, depth and tilt per foot.
fn foot_columns(hop: &WrenchSpacePlanner) -> Vec<String> {
    let mut names = Vec::new();
    for c in &hop.robot.contacts {
        for part in ["fx", "fz", "tau", "depth", "tilt"] {
            names.push(format!("{}_{part}", c.name));
        }
    }
    names
}

/// `trajectory.csv`'s columns after t, phase and node.
pub fn trajectory_columns(hop: &WrenchSpacePlanner) -> Vec<String> {
    let (mut names, controls) = hop.names();
    names.extend(controls);
    names.extend(foot_columns(hop));
    names
}

fn state_and_input_names(hop: &WrenchSpacePlanner) -> Vec<String> {
    let mut names = hop.robot.state_names();
    names.extend(hop.robot.inputs.iter().map(|i| i.name.clone()));
    names.extend(foot_columns(hop));
    names
}

/// Replays `plan` (a trajectory of `hop`'s NLP) in the MDP simulator (`sim::mdp`): the plan's
/// inputs alone, open loop, from its start state.
///
/// Ground phases are replayed with the plan's own step (its duration over its intervals) and
/// input u_k held over step k, which is the step the planner transcribed, so the replay
/// reproduces the plan's ground nodes up to the QP's rounding. Flights (trapezoidal in the
/// plan) are replayed with `flight_substeps` simulator steps per plan interval and the inputs
/// interpolated linearly between nodes, as the collocation assumes; the feet may touch the
/// sand in them, as in any simulation. The replay ends at the plan's last node's time, or a
/// gait's (`task.periodic`) after `periods` repetitions of its plan: the inputs repeat, the
/// state carries on (a sample's `node` is then numbered on: phase p of period k is
/// k · phases + p).
pub fn replay(
    hop: &WrenchSpacePlanner,
    plan: &Trajectory,
    flight_substeps: usize,
    periods: usize,
) -> Result<Vec<MdpSample>, MdpError> {
    let l = hop.layout();
    let set: Arc<dyn WrenchSet> = hop.space.clone();
    let first = &plan.phases[0].states[0];
    let (mut q, mut v) = (first[..l.n_q].to_vec(), first[l.n_q..2 * l.n_q].to_vec());
    let mut drives = first[2 * l.n_q..].to_vec();
    let mut samples = vec![MdpSample {
        time: 0.0,
        node: Some((0, 0)),
        q: q.clone(),
        v: v.clone(),
        drives: drives.clone(),
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
    let record = |report: &StepReport,
                  drives: &[f64],
                  u: &[f64],
                  time: f64,
                  node: Option<(usize, usize)>| MdpSample {
        time,
        node,
        q: report.q.clone(),
        v: report.v.clone(),
        drives: drives.to_vec(),
        inputs: u.to_vec(),
        wrenches: report.contacts.iter().map(|c| c.wrench).collect(),
        depths: report.contacts.iter().map(|c| c.depth).collect(),
        tilts: report.contacts.iter().map(|c| c.tilt).collect(),
        clamped: report.contacts.iter().any(|c| c.clamped.is_some()),
    };
    let n_phases = hop.phases.len();
    let repeated = (0..periods.max(1)).flat_map(|k| {
        hop.phases
            .iter()
            .zip(&plan.phases)
            .enumerate()
            .map(move |(p, pair)| (k * n_phases + p, pair))
    });
    for (p, (spec, phase)) in repeated {
        let intervals = phase.states.len() - 1;
        let h = phase.duration / intervals as f64;
        let substeps = if spec.is_ground() {
            1
        } else {
            flight_substeps.max(1)
        };
        let options = MdpOptions {
            step: h / substeps as f64,
            grain_inertia: GrainInertia::BodyMultiple(hop.grain_inertia),
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
                // A drive's input is its command rate: the step takes the efforts its state
                // gives, and its integrator and command advance by explicit Euler, as the
                // planner's ground step does.
                let x: Vec<f64> = q.iter().chain(&v).chain(&drives).copied().collect();
                let efforts = hop.robot.efforts(&x, &u);
                let report = sim.step(&q, &v, &efforts)?;
                let step = h / substeps as f64;
                for (d, rate) in drives.iter_mut().zip(hop.robot.drive_rates(&x, &u)) {
                    *d += step * rate;
                }
                time += step;
                let node = (s + 1 == substeps).then_some((p, k + 1));
                samples.push(record(&report, &drives, &u, time, node));
                q = report.q;
                v = report.v;
            }
        }
    }
    Ok(samples)
}

/// The plan's nodes with each foot's wrench, depth and tilt (see the module docs).
pub fn trajectory_csv(hop: &WrenchSpacePlanner, trajectory: &Trajectory) -> String {
    let l = hop.layout();
    let mut out = format!("t,phase,node,{}\n", trajectory_columns(hop).join(","));
    let mut t0 = 0.0;
    for (p, phase) in trajectory.phases.iter().enumerate() {
        for (k, (x, u)) in phase.states.iter().zip(&phase.controls).enumerate() {
            out.push_str(&format!("{:.9},{p},{k}", t0 + phase.node_time(k)));
            let mut row: Vec<f64> = x.clone();
            row.extend(u);
            for c in 0..l.n_contacts {
                let frame = hop.contact_frame(&x[..l.n_q], c);
                let w = hop.full_wrench(&frame, &u[l.lambda(c)..l.lambda(c) + l.m]);
                row.extend(w);
                row.extend([frame.depth, frame.tilt]);
            }
            for v in row {
                out.push_str(&format!(",{v:.9e}"));
            }
            out.push('\n');
        }
        t0 += phase.duration;
    }
    out
}

/// The replay's steps (see the module docs).
fn replay_csv(hop: &WrenchSpacePlanner, plan: &Trajectory, samples: &[MdpSample]) -> String {
    let l = hop.layout();
    let mut out = format!("t,{}\n", state_and_input_names(hop).join(","));
    for (i, s) in samples.iter().enumerate() {
        let mut row: Vec<f64> = s.q.iter().chain(&s.v).chain(&s.drives).copied().collect();
        // What acts over the step that starts here (the last row: the plan's last inputs
        // and no step).
        match samples.get(i + 1) {
            Some(next) => {
                row.extend(&next.inputs);
                for c in 0..l.n_contacts {
                    row.extend(next.wrenches[c]);
                    row.extend([next.depths[c], next.tilts[c]]);
                }
            }
            None => {
                let last = plan.phases.last().unwrap().controls.last().unwrap();
                row.extend(&last[..l.n_inputs]);
                for c in 0..l.n_contacts {
                    let frame = hop.contact_frame(&s.q, c);
                    row.extend([0.0, 0.0, 0.0, frame.depth, frame.tilt]);
                }
            }
        }
        out.push_str(&format!("{:.9}", s.time));
        for v in row {
            out.push_str(&format!(",{v:.9e}"));
        }
        out.push('\n');
    }
    out
}

impl MdpReplayRecord {
    pub fn of(
        hop: &WrenchSpacePlanner,
        plan: &Trajectory,
        samples: &[MdpSample],
        flight_substeps: usize,
    ) -> Self {
        let n_q = hop.robot.n_q();
        let n_phases = hop.phases.len();
        let mut difference: f64 = 0.0;
        for s in samples {
            if let Some((p, k)) = s.node {
                if p < n_phases && hop.phases[p].is_ground() {
                    let x = &plan.phases[p].states[k];
                    for i in 0..n_q {
                        difference = difference.max((s.q[i] - x[i]).abs());
                    }
                }
            }
        }
        // The plan's figures over its own period (a gait's later strides: `strides`).
        let period = samples
            .iter()
            .rposition(|s| s.node.is_some_and(|(p, _)| p < n_phases))
            .unwrap_or(samples.len() - 1);
        let (first, last) = (&samples[0], &samples[period]);
        let com = |q: &[f64]| hop.robot.body.centre_of_mass(q)[1];
        let strides = if hop.task.periodic {
            let rows: Vec<Vec<f64>> = samples
                .iter()
                .map(|s| std::iter::once(s.time).chain(s.q.iter().copied()).collect())
                .collect();
            let nodes = plan.phases.iter().flat_map(|p| &p.states);
            let planned_apex = nodes
                .map(|x| com(&x[..n_q]))
                .fold(f64::NEG_INFINITY, f64::max);
            let duration: f64 = plan.phases.iter().map(|p| p.duration).sum();
            let length = hop.task.distance.unwrap_or(0.0);
            let periods = samples.last().unwrap().time / duration;
            stride_reports(
                &rows,
                com,
                duration / hop.task.strides.max(1) as f64,
                (length / hop.task.strides.max(1) as f64, planned_apex),
                (periods.round() as usize) * hop.task.strides.max(1),
            )
        } else {
            Vec::new()
        };
        let end_depths_m = (0..hop.robot.contacts.len())
            .map(|c| hop.contact_frame(&last.q, c).depth)
            .collect();
        let apex_of = hop.task.apex_body(&hop.robot);
        let height = |q: &[f64]| match apex_of {
            Some(b) => {
                let body = &hop.robot.body;
                body.point(q, b, body.bodies[b].com)[1]
            }
            None => com(q),
        };
        let apex_rise_m = hop.task.apex_rise.map(|_| {
            samples
                .iter()
                .map(|s| height(&s.q) - height(&first.q))
                .fold(f64::NEG_INFINITY, f64::max)
        });
        MdpReplayRecord {
            apex_rise_m,
            simulator: "mdp, vertex form, active set, open loop",
            flight_substeps,
            distance_m: last.q[0] - first.q[0],
            com_rise_m: com(&last.q) - com(&first.q),
            ground_difference: difference,
            end_depths_m,
            clamped_steps: samples.iter().filter(|s| s.clamped).count(),
            strides,
        }
    }
}

/// A wrench-space plan's replay in the MDP simulator: its steps and its record.
pub struct MdpReplay {
    pub samples: Vec<MdpSample>,
    pub record: MdpReplayRecord,
}

impl MdpReplay {
    /// Replays `plan` ([`replay`]) with `flight_substeps` simulator steps per flight
    /// interval; a gait over [`DEFAULT_STRIDES`] strides.
    pub fn of(
        hop: &WrenchSpacePlanner,
        plan: &Trajectory,
        flight_substeps: usize,
    ) -> Result<MdpReplay, MdpError> {
        let periods = if hop.task.periodic {
            hop.task.replay_periods(DEFAULT_STRIDES)
        } else {
            1
        };
        let samples = replay(hop, plan, flight_substeps, periods)?;
        let record = MdpReplayRecord::of(hop, plan, &samples, flight_substeps);
        Ok(MdpReplay { samples, record })
    }

    /// Writes `replay.csv` and `replay.json` beside the plan `plan_id` in `dir`: the record
    /// names the plan it replays and the CSV's hash, as `loam simulate`'s replays do.
    pub fn write(
        &self,
        dir: &Path,
        plan_id: &str,
        hop: &WrenchSpacePlanner,
        plan: &Trajectory,
    ) -> Result<(), OutputError> {
        let csv = replay_csv(hop, plan, &self.samples);
        crate::output::identity::write_derived(
            plan_id,
            Some((&dir.join("replay.csv"), csv.as_bytes())),
            &dir.join("replay.json"),
            &self.record,
        )?;
        Ok(())
    }
}
