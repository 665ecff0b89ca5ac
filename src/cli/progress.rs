//! Progress on a terminal: a bar (or, without a known total, a spinner) on stderr when stderr
//! is a terminal and the command is not `--quiet`; nothing at all when piped or redirected, so
//! logs and scripts see only the results.
//!
//! Helpers for the long loops: [`ipopt`] for IPOPT's iterations (also the point where a solve
//! stops on Ctrl-C) and [`Stepped`], a DEM backend that counts steps.

// A replay-only build (no planner) has no sweep, the user of some of these.
#![cfg_attr(not(feature = "planner"), allow(dead_code))]

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::interrupt;

/// Whether progress is drawn: stderr is a terminal and the command is not quiet.
pub fn shown(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A bar of `len` units, `what` on its left and the current item in its message.
pub fn bar(len: u64, quiet: bool, what: &str) -> ProgressBar {
    if !shown(quiet) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len).with_prefix(what.to_string());
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:20}] {pos}/{len} {elapsed} (eta {eta}) {wide_msg}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A spinner for work without a known total; the message says how far it got.
pub fn spinner(quiet: bool, what: &str) -> ProgressBar {
    if !shown(quiet) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_prefix(what.to_string());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {prefix} {elapsed_precise} {wide_msg}")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// IPOPT's intermediate callback: shows the iteration on `bar` after `label`, and returns
/// false (IPOPT stops with `User_Requested_Stop`) once Ctrl-C came.
#[cfg(feature = "planner")]
pub fn ipopt<'a>(
    bar: &'a ProgressBar,
    label: &'a str,
) -> impl FnMut(&loam::solver::IterationInfo) -> bool + 'a {
    move |info| {
        if !bar.is_hidden() {
            bar.set_message(format!(
                "{label}: it {} obj {:.4e} inf {:.0e}{}",
                info.iteration,
                info.objective,
                info.inf_pr,
                if info.restoration {
                    " (restoration)"
                } else {
                    ""
                }
            ));
        }
        !interrupt::requested()
    }
}

/// A DEM backend that shows simulated time on a bar (one unit per step when it has a length)
/// and stops at the next step once Ctrl-C came: every loop that steps a bed gets progress and
/// interruption without knowing about either.
pub struct Stepped<'a> {
    inner: &'a mut dyn loam::sim::dem::Backend,
    bar: ProgressBar,
    time_step: f64,
    steps: u64,
}

impl<'a> Stepped<'a> {
    /// `time_step`: the bed's Δt, to show simulated time.
    pub fn new(
        inner: &'a mut dyn loam::sim::dem::Backend,
        bar: ProgressBar,
        time_step: f64,
    ) -> Self {
        Stepped {
            inner,
            bar,
            time_step,
            steps: 0,
        }
    }
}

impl Drop for Stepped<'_> {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

use loam::sim::dem::{
    Body, BodyForce, BodyState, Container, DemError, GrainState, StepParams, Timings,
};

impl loam::sim::dem::Backend for Stepped<'_> {
    fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        self.time_step = params.time_step;
        self.inner.upload(grains, container, bodies, params)
    }

    fn scenes(&self) -> usize {
        self.inner.scenes()
    }

    fn upload_scenes(
        &mut self,
        beds: &[&GrainState],
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        self.time_step = params.time_step;
        self.inner.upload_scenes(beds, container, bodies, params)
    }

    fn set_external_forces(
        &mut self,
        forces: &[loam::sim::dem::sdf::Vec3],
    ) -> Result<(), DemError> {
        self.inner.set_external_forces(forces)
    }

    fn set_bodies(&mut self, states: &[BodyState]) -> Result<(), DemError> {
        self.inner.set_bodies(states)
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError> {
        self.time_step = params.time_step;
        self.inner.set_params(params)
    }

    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError> {
        self.inner.set_body(index, state)
    }

    fn step(&mut self, steps: usize) -> Result<(), DemError> {
        if interrupt::requested() {
            return Err(DemError::Invalid(format!(
                "interrupted after {} steps; nothing was written",
                self.steps
            )));
        }
        self.inner.step(steps)?;
        self.steps += steps as u64;
        if !self.bar.is_hidden() {
            self.bar.set_position(self.steps);
            self.bar.set_message(format!(
                "{} steps, {:.4} s simulated",
                self.steps,
                self.steps as f64 * self.time_step
            ));
        }
        Ok(())
    }

    fn grains(&self) -> Result<GrainState, DemError> {
        self.inner.grains()
    }

    fn bodies(&self) -> Result<Vec<BodyState>, DemError> {
        self.inner.bodies()
    }

    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError> {
        self.inner.body_forces()
    }

    fn timings(&self) -> Timings {
        self.inner.timings()
    }

    fn reset_timings(&mut self) {
        self.inner.reset_timings()
    }

    fn name(&self) -> &'static str {
        self.inner.name()
    }
}
