//! The replay as the hybrid event loop sees it ([`HybridSystem`]): samples, guards, and the
//! switches between modes (lift-off, touchdown, a foot that sinks or sticks), with the
//! chatter checks.

use super::dynamics::{Mode, Sim};
use super::{Event, PlanarSimError};
use crate::sim::hybrid::{HybridSystem, Switch};
use crate::sim::integrator::Tolerances;
use crate::terrain::contact::LawEnd;

/// The replay's error control: tight enough that the replay's error is far below the plan's
/// collocation error and the servo's tracking error it measures.
pub(super) const TOLERANCES: Tolerances = Tolerances {
    rtol: 1e-9,
    atol: 1e-11,
};

/// One replay in progress: the simulator and what it has recorded.
pub(super) struct Run<'s, 'a> {
    pub(super) sim: &'s Sim<'a>,
    /// The plan's node times, each once: the servo's reference has a kink at every node.
    pub(super) breakpoints: Vec<f64>,
    pub(super) rows: Vec<Vec<f64>>,
    pub(super) modes: Vec<String>,
    pub(super) events: Vec<Event>,
    /// Lift-offs and touchdowns among `events` (the rest are a bed's sink/stick events).
    pub(super) contact_events: usize,
    pub(super) max_excess: f64,
    pub(super) max_unloaded_side_force: f64,
    pub(super) com0: f64,
    pub(super) peak: f64,
    /// `task.apex_of`'s body and its centre of mass's height at the start, with its rise at
    /// the highest centre of mass so far (the apex as the planner defines it).
    pub(super) apex_body: Option<(usize, f64)>,
    pub(super) apex_rise: f64,
}

impl Run<'_, '_> {
    /// The highest rise of the centre of mass, over every step's end and every sample.
    pub(super) fn track_peak(&mut self, x: &[f64]) {
        // One pass of the kinematics for the centre of mass and the apex body's height.
        let model = &self.sim.robot.body;
        let frames = model.frames(&x[..self.sim.n]);
        let com = model.centre_of_mass_in(&frames)[1];
        if com - self.com0 > self.peak {
            self.peak = com - self.com0;
            if let Some((body, z0)) = self.apex_body {
                self.apex_rise = frames[body].transform(model.bodies[body].com)[1] - z0;
            }
        }
    }
}

/// The height of `body`'s centre of mass at q.
pub(super) fn body_height(
    model: &crate::model::multibody::Multibody,
    q: &[f64],
    body: usize,
) -> f64 {
    model.frames(q)[body].transform(model.bodies[body].com)[1]
}

impl HybridSystem for Run<'_, '_> {
    type Mode = Mode;
    type Piece = usize;
    type Error = PlanarSimError;

    fn breakpoints(&self) -> &[f64] {
        &self.breakpoints
    }

    fn piece(&self, t: f64) -> usize {
        self.sim.plan.piece(t)
    }

    fn derivative(
        &self,
        mode: &Mode,
        piece: usize,
        t: f64,
        x: &[f64],
    ) -> Result<Vec<f64>, PlanarSimError> {
        Ok(self.sim.evaluate(piece, t, x, mode)?.dx)
    }

    /// The loop's guards fire on reaching 0 from below; the simulator's fire on falling
    /// strictly below 0 (a foot at rest, ż = 0 exactly, has not stopped sinking: it never
    /// started). So each is negated, and an exact 0 reads as just below 0.
    fn guards(
        &self,
        mode: &Mode,
        piece: usize,
        t: f64,
        x: &[f64],
    ) -> Result<Vec<f64>, PlanarSimError> {
        let at = self.sim.evaluate(piece, t, x, mode)?;
        let guards = self.sim.guards(x, mode, &at);
        Ok(guards
            .into_iter()
            .map(|g| if g == 0.0 { -f64::MIN_POSITIVE } else { -g })
            .collect())
    }

    fn sample(
        &mut self,
        mode: &Mode,
        piece: usize,
        t: f64,
        x: &[f64],
    ) -> Result<(), PlanarSimError> {
        let at = self.sim.evaluate(piece, t, x, mode)?;
        let (row, excess, unloaded) = self.sim.sample(piece, t, x, mode, &at);
        self.max_unloaded_side_force = self.max_unloaded_side_force.max(unloaded);
        self.rows.push(row);
        self.modes.push(self.sim.mode_name(&mode.contacts));
        self.max_excess = self.max_excess.max(excess);
        self.track_peak(x);
        Ok(())
    }

    /// Guard c is contact c's: lift-off, touchdown, sinking and sticking.
    fn guard_name(&self, guard: usize) -> String {
        format!(
            "foot `{}` (lift-off, touchdown, sinking or sticking)",
            self.sim.robot.contacts[guard].name
        )
    }

    fn stepped(&mut self, _: &Mode, _: f64, x: &[f64]) {
        self.track_peak(x);
    }

    fn switch(
        &mut self,
        mode: &mut Mode,
        which: usize,
        piece: usize,
        t: f64,
        x: &mut Vec<f64>,
    ) -> Result<Switch, PlanarSimError> {
        let sim = self.sim;
        let robot = sim.robot;
        let n = sim.n;
        let name = robot.contacts[which].name.clone();
        let kind = match mode.contacts.iter().position(|&m| m == which) {
            Some(k) if mode.sinking[k] => match sim.contact.law_end() {
                LawEnd::Sticks => {
                    // Sinking stops: the foot is stuck where it is.
                    mode.sinking[k] = false;
                    mode.anchors[k][1] = robot.contact_point(&x[..n], which)[1];
                    sim.impact(t, x, mode)?;
                    "sticks"
                }
                LawEnd::LiftsOff => {
                    sim.lift_off(mode, k, &x[..n]);
                    "lift-off"
                }
            },
            Some(k) => {
                // The state at the crossing, in the mode before it.
                let fz = sim.evaluate(piece, t, x, mode)?.wrenches[k][1];
                if sim.contact.held_yields(fz, sim.depth(which, &x[..n])) {
                    mode.sinking[k] = true;
                    "sinks"
                } else {
                    sim.lift_off(mode, k, &x[..n]);
                    "lift-off"
                }
            }
            None => {
                sim.hold(mode, which, &x[..n]);
                sim.impact(t, x, mode)?;
                "touchdown"
            }
        };
        let mut kinds = vec![kind];
        // A foot that has just come to rest in a yielding ground (stuck) may already be
        // pulled up: it leaves at once, rather than being held by a guard that starts below 0.
        if sim.contact.yields() && matches!(kind, "sticks" | "touchdown") {
            let k = mode
                .contacts
                .iter()
                .position(|&m| m == which)
                .expect("held");
            if !mode.sinking[k] && sim.evaluate(piece, t, x, mode)?.wrenches[k][1] < 0.0 {
                sim.lift_off(mode, k, &x[..n]);
                kinds.push("lift-off");
            }
        }
        for kind in kinds {
            self.contact_events += usize::from(matches!(kind, "lift-off" | "touchdown"));
            self.events.push(Event {
                t,
                kind,
                contact: name.clone(),
            });
        }
        // Feet that switch contact hundreds of times chatter. On a bed a foot held on the
        // verge of sinking (a plan's rest, F_z = F_hyd) creeps: it sinks and sticks in turn
        // by tiny amounts, which is the stick law at work, so those events count apart.
        if self.contact_events > 200 {
            return Err(PlanarSimError::Chatter {
                count: 200,
                t,
                foot: name,
            });
        }
        if self.events.len() - self.contact_events > 20_000 {
            return Err(PlanarSimError::Creep(20_000));
        }
        // A switch is effective from here: the new mode's guards start armed.
        Ok(Switch::Continue { arm: true })
    }
}
