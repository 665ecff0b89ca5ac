//! Replay of a planar robot's plan: a hybrid simulation whose modes are the sets of feet on
//! the ground, found by the simulator itself (lift-off when a foot's normal force would turn
//! negative, touchdown when a sole reaches z = 0, with a plastic impact), on rigid ground.
//! It runs in the hybrid event loop the hopper's replay runs in (`sim::hybrid`: Dormand–Prince
//! 5(4) with error control, never stepping across a node of the plan, where the servo's
//! reference has a kink, events located on the dense output); this file is its
//! [`HybridSystem`]: the modes, their dynamics, guards and switches.
//!
//! What is replayed: the plan's joint references and feed-forward inputs, as a robot's servos
//! would run them: every input u_i acting on coordinate j is
//! u_i = u_plan,i(t) + K_p (q_plan,j(t) − q_j) + K_d (v_plan,j(t) − v_j), clamped to its limits,
//! with K_p = M_jj ω², K_d = 2 ζ ω M_jj (ω = 2π·8 Hz, ζ = 1) from the mass matrix at the start.
//! The unactuated coordinates (the base, for a legged robot) are not tracked: where the robot
//! goes follows from its dynamics, which are the same generic equations the planner used.
//!
//! In stance the contact is held (sticking) by M a + h = Q + Gᵀλ, G a + Ġ v = −2ω_b G v − ω_b² e
//! (Baumgarte terms on the drift e from the anchor, ω_b = 2π·30 Hz). Sliding is not modelled:
//! where holding the foot needs more friction than μ F_z, the excess is reported.
//!
//! On an added-mass bed (docs/MODEL.md section 2, the hopper's stick law per foot) a foot in
//! the grains is held sideways (and level) as on rigid ground, and vertically it is either
//! *stuck*, held where it is while its load F_z stays within [0, F_hyd(d)], or *sinking*,
//! free vertically under the bed's force F_z = F_hyd + drag − m_a z̈ (with the grains' added
//! mass m_a moving with it: M + m_a J_zᵀJ_z on the left). A stuck foot sinks when its load
//! passes F_hyd and leaves the bed when F_z would turn negative; a sinking foot sticks when
//! its sinking stops (ż reaches 0). A foot in the air lands when its sole reaches the floor
//! of the crater it left (the surface, for a foot that never was in the grains), stopping
//! dead there, stuck.

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use super::hybrid::{self, HybridSystem, LoopError, LoopSettings, Switch};
use super::integrator::Tolerances;
use crate::model::planar::PlanarRobot;
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use crate::terrain::rigid::{self, RigidGround};
use crate::terrain::AddedMass;

/// A plan as a table of nodes: times, states, inputs, contacts per node.
#[derive(Clone, Debug)]
pub struct PlanTable {
    pub t: Vec<f64>,
    /// Per node: q then v.
    pub x: Vec<Vec<f64>>,
    /// Per node: the inputs.
    pub u: Vec<Vec<f64>>,
    /// Per node: its phase.
    pub phase: Vec<usize>,
}

impl PlanTable {
    /// The plan's state and inputs at `t` (linear between nodes; at a phase boundary, the
    /// next phase's first node; the last node's after the end).
    pub fn at(&self, t: f64) -> (Vec<f64>, Vec<f64>) {
        self.at_piece(self.piece(t), t)
    }

    /// The node that starts the interval holding `t`: the last node at or before `t` (at a
    /// phase boundary, where two nodes share a time, the next phase's first node).
    pub fn piece(&self, t: f64) -> usize {
        self.t.partition_point(|&tk| tk <= t).saturating_sub(1)
    }

    /// The plan's state and inputs at `t` on the interval that node `k` starts (linear
    /// between node k and node k + 1, clamped to the interval; node k's after the end).
    pub fn at_piece(&self, k: usize, t: f64) -> (Vec<f64>, Vec<f64>) {
        let ts = &self.t;
        if k + 1 >= ts.len() || ts[k + 1] <= ts[k] {
            return (self.x[k].clone(), self.u[k].clone());
        }
        let s = ((t - ts[k]) / (ts[k + 1] - ts[k])).clamp(0.0, 1.0);
        let lerp = |a: &[f64], b: &[f64]| -> Vec<f64> {
            a.iter().zip(b).map(|(a, b)| a + s * (b - a)).collect()
        };
        (
            lerp(&self.x[k], &self.x[k + 1]),
            lerp(&self.u[k], &self.u[k + 1]),
        )
    }
}

/// The servo the replays add to a plan's inputs: per input, the position and velocity gains
/// of an 8 Hz, critically damped loop on its coordinate, from M at the plan's first state.
pub fn servo_gains(robot: &PlanarRobot, plan: &PlanTable) -> Vec<(f64, f64)> {
    let n = robot.body.n_q();
    let m0 = robot.body.mass_matrix(&plan.x[0][..n]);
    robot
        .inputs
        .iter()
        .map(|i| {
            let m = m0[i.coordinate][i.coordinate];
            (m * SERVO * SERVO, 2.0 * m * SERVO)
        })
        .collect()
}

#[derive(Debug, thiserror::Error)]
pub enum PlanarSimError {
    #[error("the replay diverged at t = {t:.4} s (a state is not finite)")]
    Diverged { t: f64 },
    #[error("the constrained dynamics are singular at t = {t:.4} s (mode {mode})")]
    Singular { t: f64, mode: String },
    #[error("more than {0} contact events: the feet chatter")]
    Chatter(usize),
    #[error(
        "foot `{foot}` chatters at t = {t:.6} s: {count} lift-offs and touchdowns within {window:e} s; \
         held, its normal force turns negative; freed, it falls straight back onto its floor \
         (on rigid ground: a tangential hold released at F_z = 0, which only a sliding foot \
         resolves, and the replay does not model sliding). The replay stops here"
    )]
    ChatterAt {
        t: f64,
        foot: String,
        count: usize,
        window: f64,
    },
    #[error("more than {0} times a foot began or stopped sinking into the bed: the replay creeps without end")]
    Creep(usize),
    #[error(
        "this replay is for rigid ground; a plan on a wrench space replays in the MDP \
         simulator (sim::mdp::hop)"
    )]
    WrenchSpace,
    #[error(transparent)]
    Loop(#[from] LoopError),
}

/// Lift-offs and touchdowns of one foot within [`CHATTER_WINDOW`] seconds that stop a
/// replay as chatter at one instant (a real bounce takes far longer between contacts).
const CHATTER_EVENTS: usize = 8;
/// \[s\]
const CHATTER_WINDOW: f64 = 1e-9;

/// One event the simulator found.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub t: f64,
    pub kind: &'static str,
    pub contact: String,
}

/// What a replay measured, against the plan.
#[derive(Clone, Debug, Serialize)]
pub struct PlanarReplaySummary {
    pub planned_distance_m: f64,
    pub achieved_distance_m: f64,
    pub distance_error_rel: f64,
    pub planned_com_rise_m: f64,
    pub achieved_com_rise_m: f64,
    /// Highest centre of mass rise over the replay, and the plan's.
    pub planned_com_peak_m: f64,
    pub achieved_com_peak_m: f64,
    pub com_peak_error_rel: f64,
    /// Per coordinate: the largest |q − q_plan| at the plan's nodes.
    pub max_coordinate_error: Vec<(String, f64)>,
    /// Largest excess of a held foot's wrench over the friction cone (0: never slips).
    pub max_friction_excess: f64,
    /// Per coordinate with a position or velocity limit (the robot file's joint limits):
    /// the samples outside a limit (by more than 1e-9) and the largest excess \[unit or
    /// unit/s\]. The replay does not stop the joint there; it counts.
    pub joint_limits: Vec<LimitCount>,
    pub events: Vec<Event>,
    pub planned_contacts: Vec<Vec<String>>,
    pub integration: Integration,
}

/// How often a replay left one coordinate's limits.
#[derive(Clone, Debug, Serialize)]
pub struct LimitCount {
    /// `hip` for a position limit, `d_hip` for a velocity limit.
    pub coordinate: String,
    pub samples_outside: usize,
    pub max_excess: f64,
}

/// How the replay was integrated (`replay.json`'s `integration`).
#[derive(Clone, Debug, Serialize)]
pub struct Integration {
    pub method: &'static str,
    pub rtol: f64,
    pub atol: f64,
    pub steps: usize,
    pub rejected: usize,
}

/// The result: samples every `sample_every` seconds and at events, and the summary.
pub struct PlanarReplay {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub modes: Vec<String>,
    pub summary: PlanarReplaySummary,
}

/// The contacts held in the current mode and where each landed (x, z and, for a flat sole,
/// its angle); on a bed, which of them sink, and where each foot's crater floor is.
struct Mode {
    contacts: Vec<usize>,
    anchors: Vec<[f64; 3]>,
    /// Per held contact: free vertically under the bed's law (never on rigid ground).
    sinking: Vec<bool>,
    /// Per robot contact: the height a foot in the air lands at (0 on rigid ground).
    floors: Vec<f64>,
}

/// The state's derivative and the held contacts' wrenches at one point.
struct Evaluation {
    dx: Vec<f64>,
    wrenches: Vec<[f64; 3]>,
}

struct Sim<'a> {
    robot: &'a PlanarRobot,
    ground: RigidGround,
    bed: Option<AddedMass>,
    plan: &'a PlanTable,
    kp: Vec<f64>,
    kd: Vec<f64>,
    n: usize,
}

/// Baumgarte stabilisation of the contacts' drift.
const BAUMGARTE: f64 = 2.0 * std::f64::consts::PI * 30.0;
/// Servo bandwidth and damping ratio.
const SERVO: f64 = 2.0 * std::f64::consts::PI * 8.0;

impl Sim<'_> {
    fn inputs(&self, piece: usize, t: f64, x: &[f64]) -> Vec<f64> {
        let (xr, ur) = self.plan.at_piece(piece, t);
        let n = self.n;
        self.robot
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let j = input.coordinate;
                let u = ur[i] + self.kp[i] * (xr[j] - x[j]) + self.kd[i] * (xr[n + j] - x[n + j]);
                u.clamp(input.limit.0, input.limit.1)
            })
            .collect()
    }

    /// The state's derivative and the held contacts' wrenches (F_x, F_z, τ each) in `mode`:
    /// M a + h = Q + Gᵀλ with every held direction's acceleration Baumgarte-stabilised.
    fn evaluate(
        &self,
        piece: usize,
        t: f64,
        x: &[f64],
        mode: &Mode,
    ) -> Result<Evaluation, PlanarSimError> {
        let n = self.n;
        let (q, v) = x.split_at(n);
        let body = &self.robot.body;
        let h = body.bias_forces(q, v);
        let u = self.inputs(piece, t, x);
        let f = self.robot.generalized_forces(q, v, &u);
        let mut force: Vec<f64> = f.iter().zip(&h).map(|(f, h)| f - h).collect();
        let mut mass = body.mass_matrix(q);
        let mut jacobian = Vec::new();
        let mut rhs = Vec::new();
        // Per sinking contact: the bed's force before its added-mass term, F_hyd + drag, its
        // added mass, and the vertical J̇ v and Jacobian row, to recover F_z afterwards.
        let mut sinking = Vec::new();
        for ((&c, anchor), &sinks) in mode.contacts.iter().zip(&mode.anchors).zip(&mode.sinking) {
            let bias = rigid::bias_acceleration(self.robot, c, q, v);
            let vel = rigid::velocity(self.robot, c, q, v);
            let error = self.hold_error(c, q, anchor);
            let rows = rigid::jacobian(self.robot, c, q);
            for (d, row) in rows.into_iter().enumerate() {
                if sinks && d == 1 {
                    let bed = self.bed.as_ref().expect("only a bed sinks");
                    let z = self.robot.contact_point(q, c)[1];
                    let r = bed.resistance(&z, &vel[1]);
                    for i in 0..n {
                        force[i] += row[i] * (r.force - r.added_mass * bias[1]);
                        for j in 0..n {
                            mass[i][j] += r.added_mass * row[i] * row[j];
                        }
                    }
                    sinking.push((r, bias[1], row));
                    continue;
                }
                rhs.push(-bias[d] - 2.0 * BAUMGARTE * vel[d] - BAUMGARTE * BAUMGARTE * error[d]);
                jacobian.push(row);
            }
        }
        let solution = saddle_point(&mass, &jacobian, &force, &rhs).ok_or_else(|| {
            PlanarSimError::Singular {
                t,
                mode: self.mode_name(&mode.contacts),
            }
        })?;
        let mut dx = v.to_vec();
        dx.extend_from_slice(&solution[..n]);
        if !dx.iter().all(|d| d.is_finite()) {
            return Err(PlanarSimError::Diverged { t });
        }
        let mut wrenches = Vec::new();
        let mut r = n;
        let mut sinking = sinking.into_iter();
        for (&c, &sinks) in mode.contacts.iter().zip(&mode.sinking) {
            let mut w = [0.0; 3];
            for (d, wd) in w
                .iter_mut()
                .enumerate()
                .take(rigid::held_directions(self.robot, c))
            {
                if sinks && d == 1 {
                    let (bed, bias, row) = sinking.next().expect("one per sinking contact");
                    let az: f64 = bias + row.iter().zip(&dx[n..]).map(|(j, a)| j * a).sum::<f64>();
                    *wd = bed.on_foot(&az);
                } else {
                    *wd = solution[r];
                    r += 1;
                }
            }
            wrenches.push(w);
        }
        Ok(Evaluation { dx, wrenches })
    }

    /// Drift of a held contact from where it landed: x, z of the sole centre (and angle).
    fn hold_error(&self, c: usize, q: &[f64], anchor: &[f64; 3]) -> Vec<f64> {
        let p = self.robot.contact_point(q, c);
        let mut e = vec![p[0] - anchor[0], p[1] - anchor[1]];
        if rigid::held_directions(self.robot, c) == 3 {
            e.push(self.robot.body.frames(q)[self.robot.contacts[c].body].angle - anchor[2]);
        }
        e
    }

    /// Guards, one per contact, crossing below 0 when the contact switches: a held foot's
    /// normal force (on a bed also its margin to F_hyd, past which it sinks), a sinking
    /// foot's descent rate −ż, a free foot's lowest sole height above its floor.
    fn guards(&self, x: &[f64], mode: &Mode, at: &Evaluation) -> Vec<f64> {
        let (q, v) = x.split_at(self.n);
        (0..self.robot.contacts.len())
            .map(|c| match mode.contacts.iter().position(|&m| m == c) {
                Some(k) if mode.sinking[k] => -rigid::velocity(self.robot, c, q, v)[1],
                Some(k) => {
                    let fz = at.wrenches[k][1];
                    match &self.bed {
                        None => fz,
                        Some(bed) => fz.min(self.bed_strength(bed, c, q) - fz),
                    }
                }
                None => {
                    rigid::clearance(self.robot, c, q)
                        .into_iter()
                        .fold(f64::INFINITY, f64::min)
                        - mode.floors[c]
                }
            })
            .collect()
    }

    /// Held contact `k` of `mode` leaves the ground; on a bed its crater's floor is where it
    /// left from.
    fn lift_off(&self, mode: &mut Mode, k: usize, q: &[f64]) {
        let c = mode.contacts.remove(k);
        mode.anchors.remove(k);
        mode.sinking.remove(k);
        if self.bed.is_some() {
            mode.floors[c] = self.robot.contact_point(q, c)[1].min(0.0);
        }
    }

    /// F_hyd(d): the most a stuck foot's bed carries at the foot's depth.
    fn bed_strength(&self, bed: &AddedMass, c: usize, q: &[f64]) -> f64 {
        bed.static_resistance((-self.robot.contact_point(q, c)[1]).max(0.0))
    }

    /// Plastic impact: v⁺ with every held contact stopped, M (v⁺ − v⁻) = Gᵀ Λ.
    fn impact(&self, t: f64, x: &mut [f64], mode: &Mode) -> Result<(), PlanarSimError> {
        let n = self.n;
        let (q, v) = x.split_at_mut(n);
        let m = self.robot.body.mass_matrix(&*q);
        // Every held direction stops; a sinking foot's vertical is free.
        let jacobian: Vec<Vec<f64>> = mode
            .contacts
            .iter()
            .zip(&mode.sinking)
            .flat_map(|(&c, &sinks)| {
                let mut rows = rigid::jacobian(self.robot, c, &*q);
                if sinks {
                    rows.remove(1);
                }
                rows
            })
            .collect();
        let momentum: Vec<f64> = m
            .iter()
            .map(|row| row.iter().zip(v.iter()).map(|(m, v)| m * v).sum())
            .collect();
        let stopped = vec![0.0; jacobian.len()];
        let solution = saddle_point(&m, &jacobian, &momentum, &stopped).ok_or_else(|| {
            PlanarSimError::Singular {
                t,
                mode: self.mode_name(&mode.contacts),
            }
        })?;
        v.copy_from_slice(&solution[..n]);
        Ok(())
    }

    fn anchor(&self, c: usize, q: &[f64]) -> [f64; 3] {
        let p = self.robot.contact_point(q, c);
        if self.bed.is_some() {
            // In the grains a foot is held where it is, as it is.
            let angle = self.robot.body.frames(q)[self.robot.contacts[c].body].angle;
            return [p[0], p[1], angle];
        }
        // A flat sole lands level on the ground; a point foot where it touches.
        let angle = if rigid::held_directions(self.robot, c) == 3 {
            0.0
        } else {
            self.robot.body.frames(q)[self.robot.contacts[c].body].angle
        };
        [p[0], 0.0, angle]
    }

    fn mode_name(&self, contacts: &[usize]) -> String {
        if contacts.is_empty() {
            "flight".into()
        } else {
            let names: Vec<&str> = contacts
                .iter()
                .map(|&c| self.robot.contacts[c].name.as_str())
                .collect();
            format!("stance[{}]", names.join("+"))
        }
    }

    /// A row of `replay.csv` (t, state, inputs, every contact's wrench) and how far the held
    /// feet's wrenches are outside the friction cone.
    fn sample(
        &self,
        piece: usize,
        t: f64,
        x: &[f64],
        mode: &Mode,
        at: &Evaluation,
    ) -> (Vec<f64>, f64) {
        let mut row = vec![t];
        row.extend_from_slice(x);
        row.extend(self.inputs(piece, t, x));
        let mut excess: f64 = 0.0;
        for (c, contact) in self.robot.contacts.iter().enumerate() {
            match mode.contacts.iter().position(|&m| m == c) {
                Some(k) => {
                    row.extend_from_slice(&at.wrenches[k]);
                    excess =
                        excess.max(self.ground.cone_excess(&at.wrenches[k], contact.half_width));
                }
                None => row.extend_from_slice(&[0.0; 3]),
            }
        }
        (row, excess)
    }
}

/// The replay's error control: tight enough that the replay's error is far below the plan's
/// collocation error and the servo's tracking error it measures.
const TOLERANCES: Tolerances = Tolerances {
    rtol: 1e-9,
    atol: 1e-11,
};

/// One replay in progress: the simulator and what it has recorded.
struct Run<'s, 'a> {
    sim: &'s Sim<'a>,
    /// The plan's node times, each once: the servo's reference has a kink at every node.
    breakpoints: Vec<f64>,
    rows: Vec<Vec<f64>>,
    modes: Vec<String>,
    events: Vec<Event>,
    /// Lift-offs and touchdowns among `events` (the rest are a bed's sink/stick events).
    contact_events: usize,
    max_excess: f64,
    com0: f64,
    peak: f64,
}

impl Run<'_, '_> {
    /// The highest rise of the centre of mass, over every step's end and every sample.
    fn track_peak(&mut self, x: &[f64]) {
        let com = self.sim.robot.body.centre_of_mass(&x[..self.sim.n])[1];
        self.peak = self.peak.max(com - self.com0);
    }
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
        let (row, excess) = self.sim.sample(piece, t, x, mode, &at);
        self.rows.push(row);
        self.modes.push(self.sim.mode_name(&mode.contacts));
        self.max_excess = self.max_excess.max(excess);
        self.track_peak(x);
        Ok(())
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
            Some(k) if mode.sinking[k] => {
                // Sinking stops: the foot is stuck where it is.
                mode.sinking[k] = false;
                mode.anchors[k][1] = robot.contact_point(&x[..n], which)[1];
                sim.impact(t, x, mode)?;
                "sticks"
            }
            Some(k) => {
                // The state at the crossing, in the mode before it.
                let fz = sim.evaluate(piece, t, x, mode)?.wrenches[k][1];
                let yields = match &sim.bed {
                    Some(bed) => sim.bed_strength(bed, which, &x[..n]) - fz < fz,
                    None => false,
                };
                if yields {
                    mode.sinking[k] = true;
                    "sinks"
                } else {
                    sim.lift_off(mode, k, &x[..n]);
                    "lift-off"
                }
            }
            None => {
                mode.contacts.push(which);
                mode.anchors.push(sim.anchor(which, &x[..n]));
                mode.sinking.push(false);
                sim.impact(t, x, mode)?;
                "touchdown"
            }
        };
        let mut kinds = vec![kind];
        // A foot that has just come to rest in the bed (stuck) may already be pulled up:
        // it leaves at once, rather than being held by a guard that starts below 0.
        if sim.bed.is_some() && matches!(kind, "sticks" | "touchdown") {
            let k = mode
                .contacts
                .iter()
                .position(|&m| m == which)
                .expect("held");
            if sim.evaluate(piece, t, x, mode)?.wrenches[k][1] < 0.0 {
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
        // The same foot lifting off and landing again and again at one instant cannot be
        // resolved by the stick law: stop there, naming the time and the foot.
        let at_once = self
            .events
            .iter()
            .rev()
            .take_while(|e| (t - e.t).abs() <= CHATTER_WINDOW)
            .filter(|e| e.contact == name && matches!(e.kind, "lift-off" | "touchdown"))
            .count();
        if at_once >= CHATTER_EVENTS {
            return Err(PlanarSimError::ChatterAt {
                t,
                foot: name,
                count: at_once,
                window: CHATTER_WINDOW,
            });
        }
        if self.contact_events > 200 {
            return Err(PlanarSimError::Chatter(200));
        }
        if self.events.len() - self.contact_events > 20_000 {
            return Err(PlanarSimError::Creep(20_000));
        }
        // A switch is effective from here: the new mode's guards start armed.
        Ok(Switch::Continue { arm: true })
    }
}

/// Solves [[M, −Gᵀ], [G, 0]] (y, λ) = (top, bottom): constrained dynamics (y = a, λ the held
/// wrenches) and impacts (y = v⁺, λ the impulses) alike. None when singular.
fn saddle_point(m: &[Vec<f64>], g: &[Vec<f64>], top: &[f64], bottom: &[f64]) -> Option<Vec<f64>> {
    let (n, k) = (m.len(), g.len());
    let mut a = DMatrix::zeros(n + k, n + k);
    let mut b = DVector::zeros(n + k);
    for i in 0..n {
        for j in 0..n {
            a[(i, j)] = m[i][j];
        }
        b[i] = top[i];
    }
    for (r, row) in g.iter().enumerate() {
        for j in 0..n {
            a[(n + r, j)] = row[j];
            a[(j, n + r)] = -row[j];
        }
        b[n + r] = bottom[r];
    }
    a.lu().solve(&b).map(|s| s.as_slice().to_vec())
}

/// Replays `plan` of `problem` on its own rigid ground.
pub fn replay(
    problem: &PlanarProblem,
    plan: &PlanTable,
    sample_every: f64,
) -> Result<PlanarReplay, PlanarSimError> {
    let robot = problem.robot.build(problem.gravity);
    let (friction, bed) = match &problem.terrain {
        PlanarTerrainConfig::Rigid(ground) => (ground.friction, None),
        PlanarTerrainConfig::AddedMass(ground) => (ground.friction, Some(ground.bed())),
        PlanarTerrainConfig::WrenchSpace(_) => return Err(PlanarSimError::WrenchSpace),
    };
    let n = robot.body.n_q();
    let (kp, kd) = servo_gains(&robot, plan).into_iter().unzip();
    let sim = Sim {
        robot: &robot,
        ground: RigidGround { friction },
        bed,
        plan,
        kp,
        kd,
        n,
    };
    let contacts_of = |p: usize| -> Vec<usize> {
        problem.schedule[p]
            .contacts
            .iter()
            .filter_map(|name| robot.contact(name))
            .collect()
    };
    let t_end = *plan.t.last().unwrap();
    let x0 = plan.x[0].clone();
    let contacts = contacts_of(0);
    let mode = Mode {
        anchors: contacts.iter().map(|&c| sim.anchor(c, &x0[..n])).collect(),
        sinking: vec![false; contacts.len()],
        contacts,
        floors: vec![0.0; robot.contacts.len()],
    };
    // Samples on the regular grid and at the plan's nodes (where the errors are measured).
    let mut times: Vec<f64> = (1..)
        .map(|k| k as f64 * sample_every)
        .take_while(|&t| t < t_end - 1e-12)
        .chain(plan.t.iter().copied().filter(|&t| t > 0.0))
        .chain([t_end])
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut breakpoints = plan.t.clone();
    breakpoints.dedup();
    let com_z = |x: &[f64]| robot.body.centre_of_mass(&x[..n])[1];
    let com0 = com_z(&x0);
    let mut run = Run {
        sim: &sim,
        breakpoints,
        rows: Vec::new(),
        modes: Vec::new(),
        events: Vec::new(),
        contact_events: 0,
        max_excess: 0.0,
        com0,
        peak: 0.0,
    };
    run.sample(&mode, 0, 0.0, &x0)?;
    let settings = LoopSettings {
        tolerances: TOLERANCES,
        first_step: 1e-5,
        max_steps: 2_000_000,
    };
    // A plan on a bed starts each foot on the verge of sinking (F_z = F_hyd): that guard starts
    // at 0 up to round-off, armed.
    let arm = sim.bed.is_some();
    let finish = hybrid::run(&mut run, mode, x0, t_end, &times, settings, arm)?;
    let x = finish.x;
    let integration = Integration {
        method: "Dormand-Prince 5(4) with dense output and event location (sim::hybrid)",
        rtol: TOLERANCES.rtol,
        atol: TOLERANCES.atol,
        steps: finish.steps,
        rejected: finish.rejected,
    };
    let Run {
        rows,
        modes,
        events,
        max_excess,
        peak,
        ..
    } = run;

    let mut columns = vec!["t".to_string()];
    columns.extend(robot.coordinates.iter().map(|c| c.name.clone()));
    columns.extend(robot.coordinates.iter().map(|c| format!("d_{}", c.name)));
    columns.extend(robot.inputs.iter().map(|i| i.name.clone()));
    for c in &robot.contacts {
        for part in ["fx", "fz", "tau"] {
            columns.push(format!("{}_{part}", c.name));
        }
    }
    let names = robot.state_names();
    let limited: Vec<usize> = robot
        .state_bounds()
        .iter()
        .enumerate()
        .filter(|(_, (lo, hi))| lo.is_finite() || hi.is_finite())
        .map(|(i, _)| i)
        .collect();
    let joint_limits: Vec<LimitCount> = limited
        .iter()
        .map(|&i| {
            let (lo, hi) = robot.state_bounds()[i];
            let excess: Vec<f64> = rows
                .iter()
                .map(|row| (lo - row[1 + i]).max(row[1 + i] - hi))
                .filter(|e| *e > 1e-9)
                .collect();
            LimitCount {
                coordinate: names[i].clone(),
                samples_outside: excess.len(),
                max_excess: excess.iter().copied().fold(0.0, f64::max),
            }
        })
        .collect();
    // Errors at the plan's nodes, from the samples nearest in time.
    let mut max_error = vec![0.0_f64; n];
    for (k, &tk) in plan.t.iter().enumerate() {
        let row = rows
            .iter()
            .min_by(|a, b| (a[0] - tk).abs().total_cmp(&(b[0] - tk).abs()))
            .unwrap();
        if (row[0] - tk).abs() <= sample_every {
            for j in 0..n {
                max_error[j] = max_error[j].max((row[1 + j] - plan.x[k][j]).abs());
            }
        }
    }
    let planned_distance = plan.x.last().unwrap()[0] - plan.x[0][0];
    let achieved_distance = x[0] - plan.x[0][0];
    let planned_peak = plan
        .x
        .iter()
        .map(|xk| com_z(xk) - com0)
        .fold(f64::NEG_INFINITY, f64::max);
    let relative = |a: f64, b: f64| {
        if b.abs() > 1e-9 {
            (a - b).abs() / b.abs()
        } else {
            (a - b).abs()
        }
    };
    let summary = PlanarReplaySummary {
        planned_distance_m: planned_distance,
        achieved_distance_m: achieved_distance,
        distance_error_rel: relative(achieved_distance, planned_distance),
        planned_com_rise_m: com_z(plan.x.last().unwrap()) - com0,
        achieved_com_rise_m: com_z(&x) - com0,
        planned_com_peak_m: planned_peak,
        achieved_com_peak_m: peak,
        com_peak_error_rel: relative(peak, planned_peak),
        max_coordinate_error: robot
            .coordinates
            .iter()
            .zip(max_error)
            .map(|(c, e)| (c.name.clone(), e))
            .collect(),
        max_friction_excess: max_excess,
        joint_limits,
        events,
        planned_contacts: problem
            .schedule
            .iter()
            .map(|p| p.contacts.clone())
            .collect(),
        integration,
    };
    Ok(PlanarReplay {
        columns,
        rows,
        modes,
        summary,
    })
}

/// Reads a planar `trajectory.csv` (as `loam solve` writes it) into a plan table.
pub fn read_plan(csv: &str, robot: &PlanarRobot) -> Result<PlanTable, String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or("empty trajectory.csv")?
        .split(',')
        .collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("trajectory.csv has no column `{name}`"))
    };
    let t_col = col("t")?;
    let phase_col = col("phase")?;
    let mut x_cols = Vec::new();
    for c in &robot.coordinates {
        x_cols.push(col(&c.name)?);
    }
    for c in &robot.coordinates {
        x_cols.push(col(&format!("d_{}", c.name))?);
    }
    let mut u_cols = Vec::new();
    for i in &robot.inputs {
        u_cols.push(col(&i.name)?);
    }
    let mut table = PlanTable {
        t: Vec::new(),
        x: Vec::new(),
        u: Vec::new(),
        phase: Vec::new(),
    };
    for (i, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != header.len() {
            return Err(format!(
                "trajectory.csv line {}: {} cells, the header has {}",
                i + 2,
                cells.len(),
                header.len()
            ));
        }
        let num = |j: usize| -> Result<f64, String> {
            cells[j].parse::<f64>().map_err(|_| {
                format!(
                    "trajectory.csv line {}: `{}` is not a number",
                    i + 2,
                    cells[j]
                )
            })
        };
        table.t.push(num(t_col)?);
        table.phase.push(num(phase_col)? as usize);
        table
            .x
            .push(x_cols.iter().map(|&j| num(j)).collect::<Result<_, _>>()?);
        table
            .u
            .push(u_cols.iter().map(|&j| num(j)).collect::<Result<_, _>>()?);
    }
    if table.t.len() < 2 {
        return Err("trajectory.csv has fewer than two nodes".into());
    }
    Ok(table)
}
