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
//!   through 0, from below 0 at the end of the previous step (or switch) to 0 or above at this
//!   one's end. It is located on the step's dense output by the Illinois method to 1e-13 s, or
//!   put at the step's start where it already reads 0 or above there (the input jumped at a
//!   breakpoint: a guard that reads the input jumps with it). The earliest fires, and the state
//!   there is re-stepped from the step's start so that it carries the method's full order;
//! - samples the state on the caller's instants, from the dense output;
//! - hands a fired guard to the system's [`HybridSystem::switch`], which changes the mode,
//!   resets the state (an impact) and says whether to go on.
//!
//! Events are found by sign at the ends of steps, so a guard must start a mode strictly below 0:
//! a switch that leaves a guard on 0 (a foot put on the ground) gives it a margin, as the
//! hopper's height and load margins do, or the next crossing may hide inside one long step.
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
        piece: Self::Piece,
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
    /// What guard `guard` watches, for messages (`foot `foot`'s contact`).
    fn guard_name(&self, guard: usize) -> String {
        format!("guard {guard}")
    }
}

/// A guard that fires this many times within [`CHATTER_WINDOW`] stops the loop: its switch
/// cannot be resolved at that instant (a real bounce takes far longer between events).
pub const CHATTER_EVENTS: usize = 8;
/// \[s\]
pub const CHATTER_WINDOW: f64 = 1e-9;

/// The loop's own failures.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("the replay took more than {0} integrator steps at t = {1} s; the dynamics are too stiff or chattering")]
    TooManySteps(usize, f64),
    #[error(
        "the integrator's step fell below {h:e} s at t = {t} s (state not finite or too stiff)"
    )]
    StepTooSmall { t: f64, h: f64 },
    #[error(
        "{guard} switched {count} times within {window:e} s at t = {t:.6} s: the switch cannot \
         be resolved there (chatter), so the replay stops"
    )]
    Chatter {
        t: f64,
        guard: String,
        count: usize,
        window: f64,
    },
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
    /// The state where the loop stopped.
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
    // The switches at the current instant, by guard: (instant, guard, count).
    let mut at_once: Vec<(f64, usize, usize)> = Vec::new();
    // The guards at the end of the last accepted step (or switch), in that step's piece.
    let mut guards = system.guards(&mode, system.piece(0.0), 0.0, &x)?;
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

        // The earliest guard to rise through 0 within the step: from below 0 at the end of the
        // previous step (or armed) to 0 or above at this one's end. A guard already at or above 0
        // at the step's start in this piece of the input (the input jumped at a breakpoint, or
        // an armed guard) fires there.
        let after = sys.guards(&mode, piece, step.t1(), &step.x1)?;
        let mut start: Option<Vec<f64>> = None;
        let mut event: Option<(f64, usize)> = None;
        for (i, (&g0, &g1)) in guards.iter().zip(&after).enumerate() {
            if !((g0 < 0.0 || armed) && g1 >= 0.0) {
                continue;
            }
            if start.is_none() {
                start = Some(sys.guards(&mode, piece, step.t0, &step.x0)?);
            }
            let te = if start.as_ref().is_some_and(|g| g[i] >= 0.0) {
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
            guards = after;
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
            at_once.retain(|&(t0, _, _)| t - t0 <= CHATTER_WINDOW);
            let count = match at_once.iter_mut().find(|(_, g, _)| *g == guard) {
                Some((_, _, count)) => {
                    *count += 1;
                    *count
                }
                None => {
                    at_once.push((t, guard, 1));
                    1
                }
            };
            if count >= CHATTER_EVENTS {
                return Err(LoopError::Chatter {
                    t,
                    guard: system.guard_name(guard),
                    count,
                    window: CHATTER_WINDOW,
                }
                .into());
            }
            match system.switch(&mut mode, guard, piece, t, &mut x_new)? {
                Switch::Stop => {
                    return Ok(Finish {
                        x: x_new,
                        stopped: true,
                        steps,
                        rejected,
                    })
                }
                Switch::Continue { arm } => armed = arm,
            }
            guards = system.guards(&mode, piece, t, &x_new)?;
        }
        x = x_new;
    }
    Ok(Finish {
        x,
        stopped: false,
        steps,
        rejected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 9.81;

    /// A ball dropped on rigid ground, bouncing back with restitution `e`: events at analytic
    /// instants, the parabola sampled in between.
    struct Ball {
        e: f64,
        bounces: Vec<f64>,
        samples: Vec<(f64, f64)>,
        stop_after: usize,
    }

    impl HybridSystem for Ball {
        type Mode = ();
        type Piece = ();
        type Error = LoopError;
        fn breakpoints(&self) -> &[f64] {
            &[]
        }
        fn piece(&self, _: f64) {}
        fn derivative(&self, _: &(), _: (), _: f64, x: &[f64]) -> Result<Vec<f64>, LoopError> {
            Ok(vec![x[1], -G])
        }
        /// The ball reaches the ground, with a margin, so that a ball leaving the ground
        /// starts below its guard.
        fn guards(&self, _: &(), _: (), _: f64, x: &[f64]) -> Result<Vec<f64>, LoopError> {
            Ok(vec![-x[0] - 1e-12])
        }
        fn switch(
            &mut self,
            _: &mut (),
            _: usize,
            _: (),
            t: f64,
            x: &mut Vec<f64>,
        ) -> Result<Switch, LoopError> {
            self.bounces.push(t);
            // On the ground (the event lies within 1e-13 s past it), bouncing back.
            x[0] = 0.0;
            x[1] = -self.e * x[1];
            Ok(if self.bounces.len() == self.stop_after {
                Switch::Stop
            } else {
                Switch::Continue { arm: false }
            })
        }
        fn sample(&mut self, _: &(), _: (), t: f64, x: &[f64]) -> Result<(), LoopError> {
            self.samples.push((t, x[0]));
            Ok(())
        }
    }

    /// A switch that can never resolve: every switch re-arms a guard that stays above 0.
    struct Stuck {
        switches: usize,
    }

    impl HybridSystem for Stuck {
        type Mode = ();
        type Piece = ();
        type Error = LoopError;
        fn breakpoints(&self) -> &[f64] {
            &[]
        }
        fn piece(&self, _: f64) {}
        fn derivative(&self, _: &(), _: (), _: f64, _: &[f64]) -> Result<Vec<f64>, LoopError> {
            Ok(vec![1.0])
        }
        /// Rises through 0 at t = 0.5; every switch re-arms it, and it is above 0 after.
        fn guards(&self, _: &(), _: (), _: f64, x: &[f64]) -> Result<Vec<f64>, LoopError> {
            Ok(vec![x[0] - 0.5])
        }
        fn switch(
            &mut self,
            _: &mut (),
            _: usize,
            _: (),
            _: f64,
            _: &mut Vec<f64>,
        ) -> Result<Switch, LoopError> {
            self.switches += 1;
            Ok(Switch::Continue { arm: true })
        }
        fn sample(&mut self, _: &(), _: (), _: f64, _: &[f64]) -> Result<(), LoopError> {
            Ok(())
        }
        fn guard_name(&self, _: usize) -> String {
            "the stuck guard".into()
        }
    }

    #[test]
    fn a_switch_that_fires_again_and_again_at_one_instant_stops_the_loop_naming_it() {
        let mut stuck = Stuck { switches: 0 };
        let error = run(&mut stuck, (), vec![0.0], 2.0, &[], settings(), false).unwrap_err();
        match error {
            LoopError::Chatter {
                t, guard, count, ..
            } => {
                assert!((t - 0.5).abs() < 1e-9, "at the instant it first fired: {t}");
                assert_eq!(guard, "the stuck guard");
                assert_eq!(count, CHATTER_EVENTS);
                assert_eq!(
                    stuck.switches,
                    CHATTER_EVENTS - 1,
                    "the last switch is refused"
                );
            }
            other => panic!("not chatter: {other}"),
        }
    }

    fn settings() -> LoopSettings {
        LoopSettings {
            tolerances: Tolerances::default(),
            first_step: 1e-5,
            max_steps: 100_000,
        }
    }

    #[test]
    fn a_bouncing_ball_bounces_at_the_analytic_instants() {
        let (h, e) = (1.0, 0.5);
        let mut ball = Ball {
            e,
            bounces: Vec::new(),
            samples: Vec::new(),
            stop_after: 3,
        };
        let times: Vec<f64> = (1..40).map(|k| k as f64 * 0.025).collect();
        let finish = run(&mut ball, (), vec![h, 0.0], 10.0, &times, settings(), false).unwrap();
        assert!(finish.stopped, "{:?} {:?}", ball.bounces, finish);
        assert_eq!(ball.bounces.len(), 3);
        // First fall sqrt(2h/g); each flight after lasts 2 v / g with v scaled by e.
        let mut expected = Vec::new();
        let mut t = (2.0 * h / G).sqrt();
        let mut v = (2.0 * G * h).sqrt();
        for _ in 0..3 {
            expected.push(t);
            v *= e;
            t += 2.0 * v / G;
        }
        for (got, want) in ball.bounces.iter().zip(&expected) {
            assert!(
                (got - want).abs() < 1e-10,
                "bounce at {got}, analytic {want}"
            );
        }
        assert!(finish.x[0].abs() < 1e-10 && (finish.x[1] - v).abs() < 1e-9);
        // Samples before the first bounce lie on the parabola.
        for &(t, z) in ball.samples.iter().filter(|s| s.0 < expected[0]) {
            assert!((z - (h - 0.5 * G * t * t)).abs() < 1e-10, "z({t}) = {z}");
        }
        assert_eq!(ball.samples.len(), times.len());
    }

    /// ẋ = u, with u = 1 before t = 0.5 and −1 after, and a guard that reads the input:
    /// −u rises through 0 exactly at the breakpoint, where the input jumps.
    struct Jump {
        fired: Option<f64>,
    }

    impl HybridSystem for Jump {
        type Mode = ();
        type Piece = bool;
        type Error = LoopError;
        fn breakpoints(&self) -> &[f64] {
            &[0.5]
        }
        fn piece(&self, t: f64) -> bool {
            t >= 0.5
        }
        fn derivative(&self, _: &(), late: bool, _: f64, _: &[f64]) -> Result<Vec<f64>, LoopError> {
            Ok(vec![if late { -1.0 } else { 1.0 }])
        }
        fn guards(&self, _: &(), late: bool, _: f64, _: &[f64]) -> Result<Vec<f64>, LoopError> {
            Ok(vec![if late { 1.0 } else { -1.0 }])
        }
        fn switch(
            &mut self,
            _: &mut (),
            _: usize,
            _: bool,
            t: f64,
            _: &mut Vec<f64>,
        ) -> Result<Switch, LoopError> {
            self.fired = Some(t);
            Ok(Switch::Stop)
        }
        fn sample(&mut self, _: &(), _: bool, _: f64, _: &[f64]) -> Result<(), LoopError> {
            Ok(())
        }
    }

    #[test]
    fn a_guard_that_jumps_with_the_input_fires_at_the_breakpoint() {
        let mut jump = Jump { fired: None };
        let finish = run(&mut jump, (), vec![0.0], 1.0, &[], settings(), false).unwrap();
        assert_eq!(jump.fired, Some(0.5));
        assert!((finish.x[0] - 0.5).abs() < 1e-14, "x = {}", finish.x[0]);
    }
}
