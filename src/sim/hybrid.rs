//! The one hybrid event loop of the reduced-order replays: any robot on any terrain whose
//! replay is an ODE per mode (a set of feet on the ground, and how each is held), guards that
//! say when the mode changes, and a switch that resets mode and state there. The hopper
//! (`sim::reduced`) and the planar robots (`sim::planar`) are two implementations of
//! [`HybridSystem`]; the loop knows neither.
//!
//! What the loop does, and nothing else:
//! - integrates the mode's ODE by Dormand–Prince 5(4) with error control
//!   (`sim::integrator`), never across a breakpoint of the open-loop input (where its
//!   derivatives jump: the plan's nodes), reusing a step's last stage as the next one's first
//!   (first same as last) within one piece of the input;
//! - after each accepted step, checks every guard of the mode: guard i fires when it rises
//!   through 0 (from below 0 at the step's start to 0 or above at its end), located on the
//!   step's dense output by the Illinois method to 1e-13 s; the earliest fires, and the state
//!   there is re-stepped from the step's start so that it carries the method's full order;
//! - samples the state on the caller's instants, from the dense output;
//! - hands a fired guard to the system's [`HybridSystem::switch`], which changes the mode,
//!   resets the state (an impact) and says whether to go on.
//!
//! A switch may *arm* the new mode's guards ([`Switch::Continue`]'s `arm`): a guard already at
//! or above 0 right after the switch then fires at the end of the next step, at the switch's
//! instant, instead of waiting to fall below 0 first. A planar foot whose normal force turns
//! negative the instant another foot lands must leave the ground, not pull on it.

use super::integrator::{self, Attempt, Tolerances};

/// What a system tells the loop after a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// Go on in the (changed) mode. `arm`: every guard of the new mode counts as below 0.
    Continue { arm: bool },
    /// The replay is complete.
    Stop,
}

/// A replay as the loop sees it: modes, their ODEs and guards, and the switches between them.
pub trait HybridSystem {
    /// The discrete state: which feet are held and how, and whatever the guards need.
    type Mode;
    /// A piece of the open-loop input between two breakpoints.
    type Piece: Copy + PartialEq;
    type Error: From<LoopError>;

    /// Instants the integrator never steps across, in increasing order.
    fn breakpoints(&self) -> &[f64];
    /// The piece of the input that a step whose midpoint is `t` uses.
    fn piece(&self, t: f64) -> Self::Piece;
    /// ẋ in `mode` at (t, x), with the input's piece `piece`.
    fn derivative(
        &self,
        mode: &Self::Mode,
        piece: Self::Piece,
        t: f64,
        x: &[f64],
    ) -> Result<Vec<f64>, Self::Error>;
    /// The guards of `mode` at (t, x); guard i fires when it rises through 0.
    fn guards(
        &self,
        mode: &Self::Mode,
        piece: Self::Piece,
        t: f64,
        x: &[f64],
    ) -> Result<Vec<f64>, Self::Error>;
    /// Guard `guard` fired at (t, x) (the state in the mode before the event): change the mode,
    /// reset the state, record the event.
    fn switch(
        &mut self,
        mode: &mut Self::Mode,
        guard: usize,
        t: f64,
        x: &mut Vec<f64>,
    ) -> Result<Switch, Self::Error>;
    /// Records an output sample at one of the loop's sampling instants.
    fn sample(
        &mut self,
        mode: &Self::Mode,
        piece: Self::Piece,
        t: f64,
        x: &[f64],
    ) -> Result<(), Self::Error>;
    /// Called after every accepted step, at its end (before any event in it is handled).
    fn stepped(&mut self, _mode: &Self::Mode, _t: f64, _x: &[f64]) {}
}

/// The loop's own failures.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("the replay took more than {0} integrator steps at t = {1} s; the dynamics are too stiff or chattering")]
    TooManySteps(usize, f64),
    #[error(
        "the integrator's step fell below {h:e} s at t = {t} s (state not finite or too stiff)"
    )]
    StepTooSmall { t: f64, h: f64 },
}

/// Integrator settings.
#[derive(Clone, Copy, Debug)]
pub struct LoopSettings {
    pub tolerances: Tolerances,
    /// The first step tried [s].
    pub first_step: f64,
    pub max_steps: usize,
}

/// Where the loop stopped, and its work.
#[derive(Clone, Debug)]
pub struct Finish {
    pub t: f64,
    pub x: Vec<f64>,
    /// A switch said [`Switch::Stop`] (else the loop reached `t_end`).
    pub stopped: bool,
    pub steps: usize,
    pub rejected: usize,
}

/// Integrates `system` from (0, `x`) in `mode` until `t_end` or a switch says stop, sampling at
/// `sample_times` (increasing, in (0, t_end]). `arm`: the guards start armed (see the module
/// docs), for a start that lies on a guard.
pub fn run<S: HybridSystem>(
    system: &mut S,
    mut mode: S::Mode,
    mut x: Vec<f64>,
    t_end: f64,
    sample_times: &[f64],
    settings: LoopSettings,
    arm: bool,
) -> Result<Finish, S::Error> {
    let mut t = 0.0;
    let mut h = settings.first_step;
    let mut next_sample = 0;
    let (mut steps, mut rejected) = (0, 0);
    let mut armed = arm;
    let mut derivative: Option<(S::Piece, Vec<f64>)> = None;
    while t < t_end {
        if steps + rejected >= settings.max_steps {
            return Err(LoopError::TooManySteps(settings.max_steps, t).into());
        }
        let breakpoints = system.breakpoints();
        // Never step across a breakpoint of the input: its derivatives jump there.
        let next_break = breakpoints
            .get(breakpoints.partition_point(|&b| b <= t * (1.0 + 1e-15) + 1e-15))
            .copied()
            .unwrap_or(t_end);
        let h_try = h.min(next_break - t).min(t_end - t);
        if h_try < 1e-14 * (1.0 + t) {
            // Within rounding of a breakpoint: step over it.
            if next_break - t < 1e-12 {
                t = next_break;
                continue;
            }
            return Err(LoopError::StepTooSmall { t, h: h_try }.into());
        }
        let piece = system.piece(t + 0.5 * h_try);
        let sys = &*system;
        let mut f = |tt: f64, xx: &[f64]| sys.derivative(&mode, piece, tt, xx);
        // First same as last: the previous step's ẋ at its end, unless a retry, an event or
        // a breakpoint (where the input's derivatives jump) makes it stale.
        let dx0 = match derivative.take() {
            Some((p, dx)) if p == piece => dx,
            _ => f(t, &x)?,
        };
        let (attempt, h_next) =
            integrator::attempt(&mut f, t, &x, &dx0, h_try, settings.tolerances)?;
        let step = match attempt {
            Attempt::Rejected { .. } => {
                rejected += 1;
                h = h_next;
                derivative = Some((piece, dx0));
                continue;
            }
            Attempt::Accepted(step) => step,
        };
        steps += 1;
        if h_try == h {
            h = h_next;
        } else {
            // A step cut short by a breakpoint says little about the step size that works.
            h = h.max(h_next);
        }

        // The earliest guard to rise through 0 within the step (an armed guard: at its start).
        let before = sys.guards(&mode, piece, step.t0, &step.x0)?;
        let after = sys.guards(&mode, piece, step.t1(), &step.x1)?;
        let mut event: Option<(f64, usize)> = None;
        for (i, (&g0, &g1)) in before.iter().zip(&after).enumerate() {
            if !((g0 < 0.0 || armed) && g1 >= 0.0) {
                continue;
            }
            let te = if g0 >= 0.0 {
                step.t0
            } else {
                let mut failure = None;
                let mut g = |tt: f64| match sys.guards(&mode, piece, tt, &step.interpolate(tt)) {
                    Ok(g) => g[i],
                    Err(e) => {
                        failure.get_or_insert(e);
                        f64::NAN
                    }
                };
                let te = integrator::locate_root(&mut g, step.t0, step.t1(), 1e-13);
                if let Some(e) = failure {
                    return Err(e);
                }
                te
            };
            if event.is_none_or(|(t_best, _)| te < t_best) {
                event = Some((te, i));
            }
        }
        armed = false;

        let (t_new, mut x_new) = match event {
            None => (step.t1(), step.x1.clone()),
            Some((te, _)) if te >= step.t1() => (step.t1(), step.x1.clone()),
            Some((te, _)) if te <= step.t0 => (step.t0, step.x0.clone()),
            // Re-step exactly to the event so its state carries the full order.
            Some((te, _)) => {
                let (exact, _) = integrator::step(
                    &mut f,
                    step.t0,
                    &step.x0,
                    &dx0,
                    te - step.t0,
                    settings.tolerances,
                )?;
                (te, exact.x1)
            }
        };
        if event.is_none() {
            derivative = Some((piece, step.dx1.clone()));
        }
        while next_sample < sample_times.len() && sample_times[next_sample] <= t_new {
            let ts = sample_times[next_sample];
            let xs = if ts >= t_new {
                x_new.clone()
            } else {
                step.interpolate(ts)
            };
            system.sample(&mode, piece, ts, &xs)?;
            next_sample += 1;
        }
        system.stepped(&mode, t_new, &x_new);
        t = t_new;

        if let Some((_, guard)) = event {
            match system.switch(&mut mode, guard, t, &mut x_new)? {
                Switch::Stop => {
                    return Ok(Finish {
                        t,
                        x: x_new,
                        stopped: true,
                        steps,
                        rejected,
                    })
                }
                Switch::Continue { arm } => armed = arm,
            }
        }
        x = x_new;
    }
    Ok(Finish {
        t,
        x,
        stopped: false,
        steps,
        rejected,
    })
}
