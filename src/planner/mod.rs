//! The planner: a robot's problem becomes an optimal control problem ([`Ocp`]: phases with
//! their dynamics, path constraints, links and objective), which `transcription` turns into a
//! sparse NLP and IPOPT solves. [`planar`] builds the OCP, its scheme and its starting points
//! ([`Transcribe`]) for any robot of `model::planar` (the hopper's robot file among them) on
//! any contact model, assembled from robot, terrain, schedule and task; on a wrench-space
//! terrain its ground phases are the MDP step (`planar::wrench_space`). What every solve
//! shares lives here: its starting points ([`starting_points`]: one guess, or `best`'s two),
//! the solve from each and the choice of the better (`solve_from`), the options' types.
//! The planner knows no robot.

pub mod planar;

use crate::problem::{self, InitialGuess};
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::symbolic::SymbolicError;
use crate::transcription::{Nlp, Ocp, Scheme};

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(
        "loam plans hops: stance and flight in turn, from stance to flight (one hop on a \
         granular bed); the problem has phases {0}"
    )]
    Schedule(String),
    /// A wrench-space problem reached a path that plans from the problem alone (its data file
    /// is read relative to the problem file: `api::solve`, `PlanarPlanner::on_wrench_space`).
    #[error(
        "a wrench-space terrain is planned from its problem file (`loam solve`, Python's \
         `loam.solve`, whose planner reads the data beside it); sweeps and benchmarks do not \
         take it yet"
    )]
    WrenchSpace,
    /// A problem this planner cannot plan, in its own words (the wrench-space planner's
    /// schedule, start and guide).
    #[error("{0}")]
    Unplannable(String),
    /// A warm start from a plan that cannot start this problem: what differs.
    #[error("the plan cannot start this problem: {0}")]
    Start(String),
    #[error(transparent)]
    Symbolic(#[from] SymbolicError),
    #[error(transparent)]
    Solve(#[from] solver::SolveError),
}

/// A robot's problem as the planner transcribes it.
pub trait Transcribe {
    /// The optimal control problem: phases, dynamics, constraints, objective.
    fn ocp(&self) -> Ocp;
    /// The collocation scheme.
    fn scheme(&self) -> Scheme;
    /// IPOPT's starting point for one guess (never `best`, which [`starting_points`] splits).
    fn initial_guess(&self, kind: InitialGuess, nlp: &Nlp) -> Vec<f64>;

    /// The sparse NLP of [`Self::ocp`] under [`Self::scheme`].
    fn nlp(&self) -> Result<Nlp, SymbolicError> {
        Nlp::build(&self.ocp(), self.scheme())
    }
}

/// The starting point of a solve from the problem's guess.
pub fn starting_points<P: Transcribe + ?Sized>(
    problem: &P,
    kind: InitialGuess,
    nlp: &Nlp,
) -> Vec<(Option<InitialGuess>, Vec<f64>)> {
    vec![(Some(kind), problem.initial_guess(kind, nlp))]
}

/// One start of an `initial_guess: best` plan: where IPOPT started and where it ended.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StartOutcome {
    pub guess: InitialGuess,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub solve_seconds: f64,
    /// Whether this start's plan is the one kept.
    pub kept: bool,
}

/// A problem file's IPOPT options in the solver's type.
pub fn options_of(options: &problem::SolverOptions) -> Vec<(String, solver::OptionValue)> {
    options
        .iter()
        .map(|(name, value)| {
            let v = match value {
                problem::OptionValue::Int(i) => solver::OptionValue::Int(*i),
                problem::OptionValue::Num(x) => solver::OptionValue::Num(*x),
                problem::OptionValue::Str(s) => solver::OptionValue::Str(s.clone()),
            };
            (name.clone(), v)
        })
        .collect()
}

/// How good a start's end is: converged before not, then the lower objective, or for two
/// unconverged ends the lower constraint violation (their objectives mean nothing).
pub(crate) fn rank(report: &SolveReport) -> (bool, f64) {
    if report.converged {
        (true, -report.objective)
    } else {
        (false, -report.max_violation)
    }
}

/// Solves `nlp` from each starting point in turn (several only for `initial_guess: best`),
/// keeping the better report ([`rank`]; the first on a tie). With several, each start's outcome
/// is listed, the kept one marked, and the kept report's `solve_seconds` is the time of them
/// all, what the plan cost.
pub(crate) fn solve_from(
    nlp: &mut Nlp,
    points: Vec<(Option<InitialGuess>, Vec<f64>)>,
    settings: &SolveSettings,
    warm: Option<&solver::Multipliers>,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(SolveReport, Vec<StartOutcome>), PlanError> {
    let several = points.len() > 1;
    let mut best: Option<(usize, SolveReport)> = None;
    let mut starts = Vec::new();
    let mut total = 0.0;
    for (k, (guess, x0)) in points.into_iter().enumerate() {
        // A reborrow, with the trait object's lifetime shortened to it.
        let progress = on_iteration
            .as_mut()
            .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool);
        let report = solver::solve(nlp, &x0, settings, warm, progress)?;
        total += report.solve_seconds;
        let stopped = report.status == solver::IpoptStatus::UserRequestedStop;
        if let (true, Some(guess)) = (several, guess) {
            starts.push(StartOutcome {
                guess,
                status: report.status.name().to_string(),
                converged: report.converged,
                iterations: report.iterations,
                objective: report.objective,
                solve_seconds: report.solve_seconds,
                kept: false,
            });
        }
        if best.as_ref().is_none_or(|(_, b)| rank(&report) > rank(b)) {
            best = Some((k, report));
        }
        if stopped {
            break; // interrupted: the user wants out, not the next start
        }
    }
    let (kept, mut report) = best.expect("at least one starting point");
    if let Some(start) = starts.get_mut(kept) {
        start.kept = true;
    }
    report.solve_seconds = total;
    Ok((report, starts))
}

/// The first stage of a two-stage solve: the duration variables held (index, value) and its
/// iteration cap.
#[derive(Clone, Debug)]
pub struct StageOneRule {
    pub held: Vec<(usize, f64)>,
    pub iterations: usize,
    /// Whether a release that does not converge is followed by the one-stage solve from the
    /// same point (not for a multi-start's later starts: start 0 is that solve already).
    pub fallback: bool,
    /// The durations held instead when IPOPT finds the first stage infeasible (a held
    /// duration the task cannot meet: a flight too short for the apex asked), run once from
    /// the same start; `None`: released from the infeasible stage's point.
    pub if_infeasible: Option<Vec<(usize, f64)>>,
}

/// One stage of a two-stage solve, as `solution.json` lists it (`stages`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct StageOutcome {
    /// `hold durations`, `release`, or `fallback` (the one-stage solve from the guess, run
    /// only when the release did not converge).
    pub stage: &'static str,
    pub status: String,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    pub solve_seconds: f64,
}

impl StageOutcome {
    pub(crate) fn of(stage: &'static str, report: &SolveReport) -> StageOutcome {
        StageOutcome {
            stage,
            status: report.status.name().to_string(),
            converged: report.converged,
            iterations: report.iterations,
            objective: report.objective,
            solve_seconds: report.solve_seconds,
        }
    }
}

/// The two-stage solve (MODEL.md 5.2): from `x0` with the rule's durations held and at most
/// its iterations, then with every duration free from that point and its multipliers (IPOPT
/// warm-started). Should the release not converge (and the rule ask for it: `fallback`), the
/// one-stage solve from `x0` follows and the better of the two is kept ([`rank`]). The report's iterations and time are those of
/// every stage; its history runs on through the stages.
pub(crate) fn solve_two_stage(
    nlp: &mut Nlp,
    x0: &[f64],
    rule: &StageOneRule,
    settings: &SolveSettings,
    mut on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<(SolveReport, Vec<StageOutcome>), PlanError> {
    use solver::OptionValue::{Int, Str};
    let mut first = settings.clone();
    first
        .options
        .push(("max_iter".into(), Int(rule.iterations as i64)));
    // A reborrow per stage, with the trait object's lifetime shortened to it.
    macro_rules! progress {
        () => {
            on_iteration
                .as_mut()
                .map(|f| &mut **f as &mut dyn FnMut(&IterationInfo) -> bool)
        };
    }
    let mut stages = Vec::new();
    let mut held_set = &rule.held;
    let held = loop {
        let bounds: Vec<(usize, f64, f64)> = held_set
            .iter()
            .map(|&(i, _)| (i, nlp.x_lower[i], nlp.x_upper[i]))
            .collect();
        let mut start = x0.to_vec();
        for &(i, d) in held_set {
            nlp.x_lower[i] = d;
            nlp.x_upper[i] = d;
            start[i] = d;
        }
        let held = solver::solve(nlp, &start, &first, None, progress!());
        for &(i, lower, upper) in &bounds {
            nlp.x_lower[i] = lower;
            nlp.x_upper[i] = upper;
        }
        let held = held?;
        stages.push(StageOutcome::of("hold durations", &held));
        match &rule.if_infeasible {
            Some(other)
                if held.status == solver::IpoptStatus::InfeasibleProblemDetected
                    && stages.len() == 1 =>
            {
                held_set = other
            }
            _ => break held,
        }
    };
    if held.status == solver::IpoptStatus::UserRequestedStop {
        return Ok((held, stages));
    }
    // The released durations sit inside their bounds: their bound multipliers start at 0
    // (IPOPT pushes them to warm_start_mult_bound_push).
    let mut multipliers = held.multipliers.clone();
    for &(i, _) in &rule.held {
        multipliers.x_lower[i] = 0.0;
        multipliers.x_upper[i] = 0.0;
    }
    let mut second = settings.clone();
    second.options.extend(warm_start_options());
    if settings.log_file.is_some() {
        second
            .options
            .push(("file_append".into(), Str("yes".into())));
    }
    let released = solver::solve(nlp, &held.x, &second, Some(&multipliers), progress!())?;
    stages.push(StageOutcome::of("release", &released));
    let mut report = released;
    let mut release_kept = true;
    if rule.fallback && !report.converged && report.status != solver::IpoptStatus::UserRequestedStop
    {
        let mut again = settings.clone();
        if settings.log_file.is_some() {
            again
                .options
                .push(("file_append".into(), Str("yes".into())));
        }
        let fallback = solver::solve(nlp, x0, &again, None, progress!())?;
        stages.push(StageOutcome::of("fallback", &fallback));
        if rank(&fallback) > rank(&report) {
            report = fallback;
            release_kept = false;
        }
    }
    if release_kept {
        let offset = held.iterations + 1;
        report.history = held
            .history
            .iter()
            .cloned()
            .chain(report.history.iter().cloned().map(|mut info| {
                info.iteration += offset;
                info
            }))
            .collect();
    }
    report.iterations = stages.iter().map(|s| s.iterations).sum();
    report.solve_seconds = stages.iter().map(|s| s.solve_seconds).sum();
    Ok((report, stages))
}

/// IPOPT's options for a warm start: take the given point and multipliers, start the barrier
/// small since the neighbour's solution is nearly optimal, and give up early.
///
/// Measured on the granular sweep 30..80 mm (iterations per point after the first): bound push
/// 1e-6 / μ₀ 1e-4: 45, 8, 13, 36; 1e-4 / 1e-3: 13, 10, 8, 38; 1e-3 / 1e-2: 11, 8, 20, 46;
/// 1e-2 / 1e-1: 16, 10, 11, 43. Every setting failed 80 mm from the 70 mm plan (a different
/// local solution; the cold solve converges) after 220-290 iterations, hence the cap: warm
/// solves that converge take under 50.
pub fn warm_start_options() -> Vec<(String, solver::OptionValue)> {
    use solver::OptionValue::{Int, Num, Str};
    vec![
        ("warm_start_init_point".into(), Str("yes".into())),
        ("warm_start_bound_push".into(), Num(1e-4)),
        ("warm_start_mult_bound_push".into(), Num(1e-4)),
        ("mu_init".into(), Num(1e-3)),
        ("max_iter".into(), Int(WARM_MAX_ITERATIONS)),
    ]
}

/// Iterations a warm start gets before the cold solve takes over.
pub const WARM_MAX_ITERATIONS: i64 = 100;
