//! The reduced-order replay: the hopper of MODEL.md section 1 on a terrain model, driven by an
//! open-loop command z_d(t) alone, integrated by Dormand–Prince 5(4) with event location.
//!
//! The simulator finds the contact switches itself; it never looks at the plan's schedule.
//! The foot is in one of three modes:
//!
//! - **stick**: the foot rests on the ground and the ground holds any load
//!   0 ≤ F_s + m_f g ≤ capacity (rigid ground: any load; a bed: F_hyd at the foot's depth,
//!   MODEL.md section 2's stick law). The foot does not move.
//! - **sink** (beds only): the load exceeds F_hyd and the foot sinks under the added-mass
//!   dynamics, until ż_f returns to 0.
//! - **flight**: the load turned negative (the spring pulls the foot up); the foot moves freely
//!   above the floor it left (the ground on rigid terrain, the crater's floor in a bed).
//!   Touching the floor again: on rigid ground a plastic impact (the foot stops); in a bed the
//!   foot keeps its velocity and sinks again under the bed's dynamics.
//!
//! The replay stops at the first apex of the centre of mass in flight, where
//! Σ m_i ż_i falls through 0, the plan's own end condition (a plan of n hops: at the n-th,
//! [`Settings::apexes`]). A hop that leaves the ground with
//! the centre of mass already falling (the foot unloaded for an instant while the plan rides
//! its F_s + m_f g ≥ 0 bound) has no such apex: the foot comes back down and the replay
//! goes on.
//!
//! Every derivative comes from [`Hopper::derivatives`], the generic code the planner
//! differentiates: stick evaluates the stance domain on rigid ground (the foot held), sink the
//! stance domain on the bed, flight the flight domain.

use serde::Serialize;

use super::command::{Command, Segment};
use super::hybrid::{self, HybridSystem, LoopError, Switch};
use super::integrator::Tolerances;
use crate::model::hopper::{state, Domain, Hopper};
use crate::terrain::Terrain;

pub const N: usize = state::COUNT;

/// How the foot meets the ground.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Stick,
    Sink,
    Flight,
}

impl Mode {
    /// The model domain the mode belongs to.
    pub fn domain(self) -> Domain {
        match self {
            Mode::Stick | Mode::Sink => Domain::Stance,
            Mode::Flight => Domain::Flight,
        }
    }
}

/// What happened at an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The load exceeded the bed's static resistance: the foot starts to sink.
    Yield,
    /// A sinking foot came to rest.
    Rest,
    /// The foot left the ground.
    Takeoff,
    /// The foot came back down on the floor.
    Touchdown,
    /// The centre of mass reached its highest point in flight.
    Apex,
}

#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub t: f64,
    pub kind: EventKind,
    /// The mode after the event.
    pub mode: Mode,
}

/// One output sample.
#[derive(Clone, Debug)]
pub struct Sample {
    pub t: f64,
    pub mode: Mode,
    pub x: [f64; N],
    pub u: f64,
    pub motor_force: f64,
    pub spring_force: f64,
    pub terrain_force: f64,
}

/// Integrator and output settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub tolerances: Tolerances,
    /// Output sampling interval [s].
    pub output_interval: f64,
    /// The replay gives up (no apex) this long after the command ends [s].
    pub time_after_command: f64,
    /// Guard offsets: a switch fires when a load passes its bound by `load_margin` [N] or the
    /// foot passes the floor by `height_margin` [m]. They keep a state that starts exactly on
    /// a guard (the robot at rest in equilibrium) from switching at t = 0.
    pub load_margin: f64,
    pub height_margin: f64,
    pub max_steps: usize,
    /// The replay stops at this apex of the centre of mass (1: the first; a plan of n hops
    /// ends at its n-th). Only hops count: apexes whose centre of mass rose at least
    /// `min_hop_rise` above its height at take-off.
    pub apexes: usize,
    /// The smallest rise of the centre of mass in flight that counts as a hop [m]: a foot
    /// unloaded for an instant while the plan rides its F_s + m_f g ≥ 0 bound can leave the
    /// ground with the centre of mass still rising a little, and that is not the plan's hop.
    pub min_hop_rise: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            tolerances: Tolerances::default(),
            output_interval: 5e-4,
            time_after_command: 1.0,
            load_margin: 1e-9,
            height_margin: 1e-12,
            max_steps: 2_000_000,
            apexes: 1,
            min_hop_rise: 1e-3,
        }
    }
}

/// A finished replay.
#[derive(Clone, Debug)]
pub struct Replay {
    pub samples: Vec<Sample>,
    pub events: Vec<Event>,
    /// The state at the apex; `None` when the robot never reached one before the time limit.
    pub apex: Option<(f64, [f64; N])>,
    pub initial: [f64; N],
    pub steps: usize,
    pub rejected: usize,
}

impl Replay {
    /// z_r at the apex minus z_r at the start (the planner's definition of the jump height).
    pub fn apex_rise(&self) -> Option<f64> {
        self.apex
            .map(|(_, x)| x[state::Z_R] - self.initial[state::Z_R])
    }

    /// The jump's takeoff: the last before the apex (an unloaded foot may hop earlier).
    pub fn takeoff_time(&self) -> Option<f64> {
        self.events
            .iter()
            .rev()
            .find(|e| e.kind == EventKind::Takeoff)
            .map(|e| e.t)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Loop(#[from] LoopError),
}

/// The hopper on one terrain under one command.
pub struct Simulator<'a> {
    pub robot: &'a Hopper,
    pub terrain: &'a Terrain,
    pub command: &'a Command,
    pub settings: Settings,
}

impl Simulator<'_> {
    /// ẋ in `mode` at (t, x) with the command's piece `segment`; z_d is taken from the command,
    /// not from the state, so the replay follows the command exactly.
    fn derivatives(&self, mode: Mode, segment: Segment, t: f64, x: &[f64; N]) -> [f64; N] {
        let (z_d, u) = self.command.eval(segment, t);
        let mut x = *x;
        x[state::Z_D] = z_d;
        let dx = match mode {
            Mode::Stick => self
                .robot
                .derivatives(Domain::Stance, &Terrain::Rigid, &x, &u),
            Mode::Sink => self.robot.derivatives(Domain::Stance, self.terrain, &x, &u),
            Mode::Flight => self.robot.derivatives(Domain::Flight, self.terrain, &x, &u),
        };
        dx.try_into().expect("the hopper has N states")
    }

    fn sample(&self, mode: Mode, t: f64, x: &[f64; N]) -> Sample {
        let (z_d, u) = self.command.at(t);
        let mut x = *x;
        x[state::Z_D] = z_d;
        let forces = match mode {
            Mode::Stick => self.robot.forces(Domain::Stance, &Terrain::Rigid, &x, &u),
            _ => self.robot.forces(mode.domain(), self.terrain, &x, &u),
        };
        Sample {
            t,
            mode,
            x,
            u,
            motor_force: forces.motor,
            spring_force: forces.spring,
            terrain_force: forces.terrain,
        }
    }

    /// The most load the ground holds with the foot at rest at height `z_f`.
    fn capacity(&self, z_f: f64) -> f64 {
        match self.terrain {
            Terrain::Rigid => f64::INFINITY,
            Terrain::AddedMass(bed) => bed.static_resistance((-z_f).max(0.0)),
        }
    }

    /// The guards of `mode`: each event fires when its function rises through 0.
    fn guards(&self, mode: Mode, floor: f64, x: &[f64; N]) -> [(EventKind, f64); 2] {
        let margin = self.settings.load_margin;
        let load = self.robot.ground_load(x.as_slice());
        match mode {
            Mode::Stick => [
                (
                    EventKind::Yield,
                    load - self.capacity(x[state::Z_F]) - margin,
                ),
                (EventKind::Takeoff, -load - margin),
            ],
            Mode::Sink => [
                (EventKind::Rest, x[state::V_F]),
                (EventKind::Rest, f64::NEG_INFINITY),
            ],
            Mode::Flight => [
                (
                    EventKind::Touchdown,
                    floor - x[state::Z_F] - self.settings.height_margin,
                ),
                (EventKind::Apex, -self.robot.momentum(x.as_slice())),
            ],
        }
    }

    /// The mode of a foot on the ground at rest or moving down: the stick law.
    fn contact_mode(&self, x: &[f64; N]) -> Mode {
        let load = self.robot.ground_load(x.as_slice());
        let margin = self.settings.load_margin;
        if x[state::V_F] < 0.0 && !matches!(self.terrain, Terrain::Rigid) {
            Mode::Sink
        } else if load < -margin {
            Mode::Flight
        } else if load > self.capacity(x[state::Z_F]) + margin {
            Mode::Sink
        } else {
            Mode::Stick
        }
    }

    /// Replays the command from `initial` (the robot at rest on the ground). `sample_times`
    /// are extra instants to sample besides the regular output grid (e.g. the plan's nodes).
    pub fn run(&self, initial: [f64; N], sample_times: &[f64]) -> Result<Replay, SimError> {
        let s = &self.settings;
        let t_end = self.command.end_time() + s.time_after_command;
        let mut times: Vec<f64> = (1..)
            .map(|k| k as f64 * s.output_interval)
            .take_while(|&t| t <= t_end)
            .chain(sample_times.iter().copied().filter(|&t| t > 0.0))
            .collect();
        times.sort_by(f64::total_cmp);
        times.dedup();

        let mut x = initial;
        x[state::Z_D] = self.command.at(0.0).0;
        // The ground is the surface z = 0 or, for a foot that starts in a bed, where it rests.
        let floor = x[state::Z_F].min(0.0);
        let airborne = x[state::Z_F] > floor + s.height_margin
            || (x[state::Z_F] >= floor && x[state::V_F] > 0.0);
        let mode = if airborne {
            Mode::Flight
        } else {
            self.contact_mode(&x)
        };
        if mode == Mode::Stick {
            x[state::V_F] = 0.0;
        }
        let mut run = Run {
            sim: self,
            replay: Replay {
                samples: vec![self.sample(mode, 0.0, &x)],
                events: Vec::new(),
                apex: None,
                initial: x,
                steps: 0,
                rejected: 0,
            },
            // The centre of mass's height at the last take-off, and the hops completed.
            takeoff_height: self.robot.centre_of_mass(x.as_slice()),
            hops: 0,
        };
        let settings = hybrid::LoopSettings {
            tolerances: s.tolerances,
            first_step: 1e-5,
            max_steps: s.max_steps,
        };
        let finish = hybrid::run(
            &mut run,
            Phase { mode, floor },
            x.to_vec(),
            t_end,
            &times,
            settings,
            false,
        )?;
        run.replay.steps = finish.steps;
        run.replay.rejected = finish.rejected;
        Ok(run.replay)
    }
}

/// The hopper's discrete state in the hybrid loop: the foot's mode and the floor it lands on.
#[derive(Clone, Copy, Debug)]
struct Phase {
    mode: Mode,
    floor: f64,
}

/// One replay in progress: the simulator, what it has recorded, and the hop count.
struct Run<'s, 'a> {
    sim: &'s Simulator<'a>,
    replay: Replay,
    takeoff_height: f64,
    hops: usize,
}

fn as_state(x: &[f64]) -> [f64; N] {
    x.try_into().expect("the hopper has N states")
}

impl HybridSystem for Run<'_, '_> {
    type Mode = Phase;
    type Piece = Segment;
    type Error = SimError;

    fn breakpoints(&self) -> &[f64] {
        self.sim.command.breakpoints()
    }

    fn piece(&self, t: f64) -> Segment {
        self.sim.command.segment(t)
    }

    fn derivative(
        &self,
        p: &Phase,
        piece: Segment,
        t: f64,
        x: &[f64],
    ) -> Result<Vec<f64>, SimError> {
        Ok(self
            .sim
            .derivatives(p.mode, piece, t, &as_state(x))
            .to_vec())
    }

    fn guards(&self, p: &Phase, _: Segment, _: f64, x: &[f64]) -> Result<Vec<f64>, SimError> {
        let guards = self.sim.guards(p.mode, p.floor, &as_state(x));
        Ok(guards.iter().map(|&(_, g)| g).collect())
    }

    fn sample(&mut self, p: &Phase, _: Segment, t: f64, x: &[f64]) -> Result<(), SimError> {
        let sample = self.sim.sample(p.mode, t, &as_state(x));
        self.replay.samples.push(sample);
        Ok(())
    }

    fn switch(
        &mut self,
        p: &mut Phase,
        guard: usize,
        _: Segment,
        t: f64,
        x: &mut Vec<f64>,
    ) -> Result<Switch, SimError> {
        let sim = self.sim;
        let s = &sim.settings;
        let mut x_new = as_state(x);
        let mut kind = sim.guards(p.mode, p.floor, &x_new)[guard].0;
        let mut mode = p.mode;
        match kind {
            EventKind::Apex => {
                self.replay.events.push(Event { t, kind, mode });
                self.replay.samples.push(sim.sample(mode, t, &x_new));
                let rise = sim.robot.centre_of_mass(x_new.as_slice()) - self.takeoff_height;
                self.hops += usize::from(rise >= s.min_hop_rise);
                if self.hops >= s.apexes {
                    self.replay.apex = Some((t, x_new));
                    return Ok(Switch::Stop);
                }
                return Ok(Switch::Continue { arm: false });
            }
            EventKind::Takeoff => {
                mode = Mode::Flight;
                p.floor = x_new[state::Z_F];
                self.takeoff_height = sim.robot.centre_of_mass(x_new.as_slice());
            }
            EventKind::Yield => mode = Mode::Sink,
            EventKind::Rest | EventKind::Touchdown => {
                if kind == EventKind::Touchdown && matches!(sim.terrain, Terrain::Rigid) {
                    // A plastic impact: the rigid ground stops the foot.
                    x_new[state::V_F] = 0.0;
                    x_new[state::Z_F] = p.floor;
                }
                if kind == EventKind::Rest {
                    x_new[state::V_F] = 0.0;
                }
                mode = sim.contact_mode(&x_new);
                if mode == Mode::Flight {
                    // The foot came to rest with the spring already pulling it up.
                    kind = EventKind::Takeoff;
                    p.floor = x_new[state::Z_F];
                    self.takeoff_height = sim.robot.centre_of_mass(x_new.as_slice());
                }
            }
        }
        if mode == Mode::Stick {
            x_new[state::V_F] = 0.0;
        }
        p.mode = mode;
        self.replay.events.push(Event { t, kind, mode });
        self.replay.samples.push(sim.sample(mode, t, &x_new));
        x.copy_from_slice(&x_new);
        Ok(Switch::Continue { arm: false })
    }
}
