//! Mesh refinement of a planar plan: a converged plan is measured (by the caller: `loam
//! solve --refine` replays it on its own contact model) and, while its error is above the
//! tolerance, solved again on a mesh with every interval halved, started from the coarser
//! plan resampled onto the finer mesh.
//!
//! Choices: the error is what a user checks a plan by, the replay's departure from it (the
//! centre of mass's peak rise and the distance, relative), not a local truncation estimate,
//! because the collocation's own residuals are zero at a converged plan whatever its mesh.
//! Every phase is refined together (N → 2N − 1 nodes keeps every old node a node), at most
//! `rounds` times; a round that does not converge ends the refinement with that plan,
//! reported as not converged.

use super::{plan_refined, PlanarPlan};
use crate::planner::PlanError;
use crate::problem::planar::PlanarProblem;
use crate::solver::{IterationInfo, SolveSettings};
use crate::transcription::{PhaseTrajectory, Trajectory};

/// One solve of the refinement.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RefineRound {
    /// Collocation nodes per phase.
    pub nodes: Vec<usize>,
    pub converged: bool,
    pub iterations: usize,
    /// This round's set-up and solve \[s\] (the replay that measures it aside).
    pub seconds: f64,
    pub objective: f64,
    /// The measured error of this round's plan (relative); NaN where not measured.
    pub error: f64,
    /// Whether this round's plan is the one kept (written).
    pub kept: bool,
}

/// The trajectory on a mesh of `nodes[p]` nodes per phase, durations kept: states and
/// controls linear in time between the plan's nodes (Hermite-Simpson midpoints likewise).
pub fn resample(trajectory: &Trajectory, nodes: &[usize], mid_points: bool) -> Trajectory {
    let at = |values: &[Vec<f64>], s: f64| -> Vec<f64> {
        let last = values.len() - 1;
        let x = s * last as f64;
        let k = (x.floor() as usize).min(last.saturating_sub(1));
        let w = x - k as f64;
        values[k]
            .iter()
            .zip(&values[(k + 1).min(last)])
            .map(|(a, b)| a + w * (b - a))
            .collect()
    };
    let phases = trajectory
        .phases
        .iter()
        .zip(nodes)
        .map(|(phase, &n)| {
            let s = |k: f64| k / (n - 1) as f64;
            let mut new = PhaseTrajectory {
                name: phase.name.clone(),
                duration: phase.duration,
                states: (0..n).map(|k| at(&phase.states, s(k as f64))).collect(),
                controls: (0..n).map(|k| at(&phase.controls, s(k as f64))).collect(),
                ..Default::default()
            };
            if mid_points {
                new.mid_states = (0..n - 1)
                    .map(|k| at(&phase.states, s(k as f64 + 0.5)))
                    .collect();
                new.mid_controls = (0..n - 1)
                    .map(|k| at(&phase.controls, s(k as f64 + 0.5)))
                    .collect();
            }
            new
        })
        .collect();
    Trajectory { phases }
}

/// Refines `plan` of `problem` until `measure` says its error is at most `tolerance`, at most
/// `rounds` times. Returns the problem with the kept plan's mesh (its node counts), the kept
/// plan and every round, the first included. The kept plan is the last round's when it is
/// within the tolerance; otherwise the converged round with the smallest error (a finer round
/// that did not converge, or came out worse, does not replace a good coarse plan), or the
/// last round when none converged.
pub fn refine(
    problem: &PlanarProblem,
    plan: PlanarPlan,
    settings: &SolveSettings,
    tolerance: f64,
    rounds: usize,
    measure: &mut dyn FnMut(&PlanarProblem, &PlanarPlan) -> f64,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(PlanarProblem, PlanarPlan, Vec<RefineRound>), PlanError> {
    let mut problem = problem.clone();
    let mut plan = plan;
    // The first round's starts, whichever round's plan is kept: the later rounds start from
    // the plan before them.
    let starts = plan.starts.clone();
    let mut history: Vec<RefineRound> = Vec::new();
    // The converged round with the smallest error so far: (round, problem, plan).
    let mut best: Option<(usize, PlanarProblem, PlanarPlan)> = None;
    loop {
        let error = if plan.report.converged {
            measure(&problem, &plan)
        } else {
            f64::NAN
        };
        history.push(RefineRound {
            nodes: problem.schedule.iter().map(|p| p.nodes).collect(),
            converged: plan.report.converged,
            iterations: plan.report.iterations,
            seconds: plan.setup_seconds + plan.report.solve_seconds,
            objective: plan.report.objective,
            error,
            kept: false,
        });
        let round = history.len() - 1;
        // Done: accurate enough, out of rounds, or a round that failed (NaN error).
        if !(error > tolerance) || history.len() > rounds {
            let within = error <= tolerance;
            let better = |b: &(usize, PlanarProblem, PlanarPlan)| history[b.0].error <= error;
            let (kept, problem, mut plan) = match best {
                Some(b) if !within && (error.is_nan() || better(&b)) => b,
                _ => (round, problem, plan),
            };
            history[kept].kept = true;
            plan.refinement = history.clone();
            plan.starts = starts;
            return Ok((problem, plan, history));
        }
        let coarse = problem.clone();
        for phase in &mut problem.schedule {
            phase.nodes = 2 * phase.nodes - 1;
        }
        let nodes: Vec<usize> = problem.schedule.iter().map(|p| p.nodes).collect();
        let hermite = !plan.trajectory.phases[0].mid_states.is_empty();
        let start = resample(&plan.trajectory, &nodes, hermite);
        if best.as_ref().is_none_or(|b| error < history[b.0].error) {
            best = Some((round, coarse, plan));
        }
        let progress = on_iteration
            .as_mut()
            .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
        plan = plan_refined(&problem, settings, &start, progress)?;
    }
}

/// A plan's `trajectory.csv` (t, phase, node, then `columns`: the `n_x` state columns, then
/// the controls) read back as a trajectory for a start: each phase's nodes in order, its
/// duration from its first and last node's times (written to 1e-9 s).
/// Refuses a file whose columns are not `columns` (another robot) or whose phases are not
/// `phases` in number.
pub fn read_trajectory(
    csv: &str,
    columns: &[String],
    n_x: usize,
    phases: usize,
) -> Result<Trajectory, String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let expected: Vec<&str> = ["t", "phase", "node"]
        .into_iter()
        .chain(columns.iter().map(String::as_str))
        .collect();
    if header != expected {
        let first = (0..header.len().max(expected.len()))
            .find(|&j| header.get(j) != expected.get(j))
            .unwrap_or(0);
        let name = |c: Option<&&str>| c.map_or("nothing".to_string(), |c| format!("`{c}`"));
        return Err(format!(
            "its columns are not this problem's robot's: it has {} columns, the robot's plan {}; \
             column {} is {} where this robot's is {} (a plan of another robot or schedule)",
            header.len(),
            expected.len(),
            first + 1,
            name(header.get(first)),
            name(expected.get(first)),
        ));
    }
    let mut out: Vec<(Vec<f64>, PhaseTrajectory)> = Vec::new();
    for (row, line) in lines.enumerate() {
        let values: Result<Vec<f64>, _> = line.split(',').map(str::parse::<f64>).collect();
        let values = values.map_err(|e| format!("row {}: {e}", row + 2))?;
        if values.len() != expected.len() {
            return Err(format!("row {}: {} values", row + 2, values.len()));
        }
        let p = values[1] as usize;
        if p >= phases || p > out.len() {
            return Err(format!("row {}: phase {p} out of order", row + 2));
        }
        if p == out.len() {
            out.push((Vec::new(), PhaseTrajectory::default()));
        }
        let (times, phase) = &mut out[p];
        times.push(values[0]);
        phase.states.push(values[3..3 + n_x].to_vec());
        phase.controls.push(values[3 + n_x..].to_vec());
    }
    if out.len() != phases {
        return Err(format!("{} phases, the problem has {phases}", out.len()));
    }
    Ok(Trajectory {
        phases: out
            .into_iter()
            .map(|(times, mut phase)| {
                phase.duration = times.last().unwrap_or(&0.0) - times.first().unwrap_or(&0.0);
                phase
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// States and controls linear in time are resampled exactly, midpoints included, and
    /// every old node stays a node of the 2N − 1 mesh.
    #[test]
    fn resampling_keeps_a_linear_trajectory_and_the_old_nodes() {
        let phase = PhaseTrajectory {
            name: "p0".into(),
            duration: 0.3,
            states: (0..4).map(|k| vec![k as f64, 2.0 * k as f64]).collect(),
            controls: (0..4).map(|k| vec![1.0 - k as f64]).collect(),
            ..Default::default()
        };
        let coarse = Trajectory {
            phases: vec![phase],
        };
        let fine = resample(&coarse, &[7], true);
        let p = &fine.phases[0];
        assert_eq!(p.states.len(), 7);
        assert_eq!(p.mid_states.len(), 6);
        for (k, x) in p.states.iter().enumerate() {
            let s = 0.5 * k as f64;
            assert!((x[0] - s).abs() < 1e-12 && (x[1] - 2.0 * s).abs() < 1e-12);
            assert!((p.controls[k][0] - (1.0 - s)).abs() < 1e-12);
        }
        for (k, x) in p.mid_states.iter().enumerate() {
            assert!((x[0] - 0.5 * (k as f64 + 0.5)).abs() < 1e-12);
        }
        for k in 0..4 {
            assert_eq!(p.states[2 * k], coarse.phases[0].states[k]);
        }
    }
}
