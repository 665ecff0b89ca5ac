//! `starts: N`: a planar plan solved from several starting points, the best kept.
//!
//! Choices: the starts differ in the phase durations they begin from, because that is where
//! the measured local optima of the shipped problems part (the rigid hopper's stance of
//! 0.2 s pumps the spring, one of 0.1 s does not: MODEL.md 5.2). Start 0 is the problem's own
//! set-up, so `starts: N` never does worse than the file alone. Start k ≥ 1 is the two-stage
//! solve (MODEL.md 5.2) from the same guess with each phase's duration held first at the
//! k-th point of a Halton sequence (base 2 for the first phase, 3 for the second, ...)
//! through its bounds, flights too: on rigid ground the hopper file's cheaper 80 mm plan
//! (0.01116 against 0.01755) is reached from a held stance and flight, not from a held
//! stance with the flight free.
//! The starts run one after another on the one transcription (CasADi's graph and MUMPS are
//! not safe to share between threads; `loam sweep` is where solves run in parallel, in
//! processes). The kept plan is the best by [`crate::planner::rank`], the first on a tie.

use super::PlanarPlanner;
use crate::planner::{rank, solve_two_stage, PlanError, StageOneRule, StageOutcome};
use crate::problem::InitialGuess;
use crate::solver::{IterationInfo, SolveReport, SolveSettings};
use crate::transcription::Nlp;

/// One start of a multi-start plan, as `solution.json` lists it (`starts`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct PlanarStart {
    /// 0 for the file's own set-up.
    pub start: usize,
    /// Per phase, the duration held in the first stage \[s\] (null: free); empty for start
    /// 0, which is solved as the file says.
    pub held_durations: Vec<Option<f64>>,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub solve_seconds: f64,
    /// Whether this start's plan is the one kept.
    pub kept: bool,
}

/// The radical inverse of `k` in `base`: the k-th point of the van der Corput sequence.
fn radical_inverse(mut k: usize, base: usize) -> f64 {
    let (mut x, mut scale) = (0.0, 1.0 / base as f64);
    while k > 0 {
        x += (k % base) as f64 * scale;
        k /= base;
        scale /= base as f64;
    }
    x
}

const PRIMES: [usize; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];

/// Start k's held durations: each phase's at the k-th Halton point through its bounds.
pub fn held_durations(planner: &PlanarPlanner, k: usize) -> Vec<Option<f64>> {
    let mut phase = 0;
    planner
        .phases
        .iter()
        .zip(&planner.problem.schedule)
        .map(|(_, spec)| {
            let base = PRIMES[phase % PRIMES.len()];
            phase += 1;
            let [lo, hi] = spec.duration;
            Some(lo + (hi - lo) * radical_inverse(k, base))
        })
        .collect()
}

/// Solves from `planner.problem.starts` starting points and keeps the best. Returns the kept
/// report (its time is that of every start), its stages and every start's outcome.
pub fn solve(
    planner: &PlanarPlanner,
    nlp: &mut Nlp,
    points: Vec<(Option<InitialGuess>, Vec<f64>)>,
    settings: &SolveSettings,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(SolveReport, Vec<StageOutcome>, Vec<PlanarStart>), PlanError> {
    let x0 = points
        .first()
        .map(|(_, x)| x.clone())
        .expect("one starting point");
    let mut starts = Vec::new();
    let mut best: Option<(usize, SolveReport, Vec<StageOutcome>)> = None;
    let mut total = 0.0;
    for k in 0..planner.problem.starts {
        let progress = on_iteration
            .as_mut()
            .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
        // Every start after the first appends to the one log.
        let mut settings = settings.clone();
        if k > 0 && settings.log_file.is_some() {
            settings.options.push((
                "file_append".into(),
                crate::solver::OptionValue::Str("yes".into()),
            ));
        }
        let (report, stages, held) = if k == 0 {
            let (report, stages) =
                super::solve_one(planner, nlp, points.clone(), true, &settings, progress)?;
            (report, stages, Vec::new())
        } else {
            let held = planner.fit_stride_time(held_durations(planner, k));
            let rule = StageOneRule {
                held: held
                    .iter()
                    .enumerate()
                    .filter_map(|(p, d)| d.map(|d| (nlp.duration_index(p), d)))
                    .collect(),
                iterations: planner.stage_one_iterations(),
                fallback: false,
                if_infeasible: None,
            };
            let (report, stages) = solve_two_stage(nlp, &x0, &rule, &settings, progress)?;
            (report, stages, held)
        };
        total += report.solve_seconds;
        let stopped = report.status == crate::solver::IpoptStatus::UserRequestedStop;
        starts.push(PlanarStart {
            start: k,
            held_durations: held,
            status: report.status.name().to_string(),
            converged: report.converged,
            iterations: report.iterations,
            objective: report.objective,
            solve_seconds: report.solve_seconds,
            kept: false,
        });
        if best
            .as_ref()
            .is_none_or(|(_, b, _)| rank(&report) > rank(b))
        {
            best = Some((k, report, stages));
        }
        if stopped {
            break; // interrupted: the user wants out, not the next start
        }
    }
    let (kept, mut report, stages) = best.expect("at least one start");
    starts[kept].kept = true;
    report.solve_seconds = total;
    Ok((report, stages, starts))
}

#[cfg(test)]
mod tests {
    use super::radical_inverse;

    #[test]
    fn the_halton_points_fill_the_interval_in_order() {
        let base2: Vec<f64> = (1..8).map(|k| radical_inverse(k, 2)).collect();
        assert_eq!(base2, [0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]);
        let base3: Vec<f64> = (1..4).map(|k| radical_inverse(k, 3)).collect();
        assert!((base3[0] - 1.0 / 3.0).abs() < 1e-15 && (base3[2] - 1.0 / 9.0).abs() < 1e-15);
    }
}
