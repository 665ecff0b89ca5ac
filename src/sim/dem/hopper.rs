//! The jumping robot of MODEL.md section 1, two-way coupled to a DEM bed.
//!
//! The foot is a dynamic disc body in the bed. Each grain step of length Δt:
//! 1. the leg's force on the foot, −F_s (spring force on the rod, + = up, evaluated with the
//!    robot state at the start of the step), is set as the foot's external force;
//! 2. the backend advances grains and foot one step (gravity, −F_s and the grains' impulses
//!    move the foot: the bed's force on it is Σ impulses / Δt);
//! 3. motor, rod, the PI integrator e and the command z_d advance over the same Δt in S
//!    symplectic-Euler sub-steps (default S = 10), with the foot's height interpolated
//!    linearly between its start and end of step and its end-of-step velocity.
//!
//! The leg's dynamics are `crate::model::hopper::Hopper::leg`, the function the planner's
//! derivatives call: no equation of the robot is written here.
//!
//! Stability: the stiffest loop is the foot on the spring (ω = √(k_s/m_f) ≈ 250 rad/s, so
//! ω Δt ≈ 0.25 at Δt = 1 ms, inside symplectic Euler's bound of 2) and the drive's position
//! loop on motor and rod (≈ 165 rad/s), sub-stepped ten times finer. The check is the rest
//! state: after settling, the rod–foot gap is l_0 − (m_m + m_r) g / k_s (56 mm), e holds the
//! motor's weight, and the bed carries the robot's whole weight
//! (tests/suite/dem_coupling.rs).
//!
//! Heights are relative to the bed's free surface (z = 0), and z_f is the foot's sole, as in
//! the reduced-order models, so the foot's resting depth compares with the added-mass model's.

use serde::{Deserialize, Serialize};

use super::backend::{
    Backend, Body, BodyForce, BodyGeometry, BodyState, GrainState, Motion, StepParams,
};
use super::bed::Checkpoint;
use super::sdf::{Shape, Vec3};
use super::DemError;
use crate::model::hopper::{state, Hopper};
use crate::problem::MediumPreset;
use crate::terrain::AddedMass;

/// How to replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HopperReplaySettings {
    /// Stop at this time [s] if the apex has not come.
    pub t_max: f64,
    /// Save the grains every this many seconds (and at t = 0); `None`: no snapshots.
    pub snapshot_every: Option<f64>,
    /// Also save the grains at the first step starting at or after each of these times [s]
    /// (e.g. the times to render), whether or not `snapshot_every` is set.
    #[serde(default)]
    pub snapshot_at: Vec<f64>,
    /// How long the robot settles on the bed before t = 0 [s]. Default 0.3.
    pub settle_time: f64,
    /// Robot sub-steps per grain step. Default 10.
    pub substeps: usize,
    /// The foot disc's thickness [m]. Default 5 mm.
    pub foot_thickness: f64,
    /// Friction between foot and grains; `None`: the grains' friction.
    pub foot_friction: Option<f64>,
    /// The grain step Δt [s]; `None`: `Scene::replay_step_params` (the bed's, at most
    /// law::REPLAY_FRACTION of the Rayleigh time).
    pub time_step: Option<f64>,
    /// Jacobi iterations per step; `None`: the bed scene's. Default 100: the foot is pressed
    /// by 250 times its own weight and Jacobi hands that load to the grains slowly; on the
    /// poppy bed the settled depth moves by 16 mm between 20 and 100 iterations at Δt = 1 ms
    /// and by 3 mm from 100 iterations at 1 ms to 100 at 0.5 ms (apex rise 87.6 vs 90.9 mm for
    /// the granular 60 mm plan).
    pub iterations: Option<usize>,
    /// The replay stops at the apex of this hop (a plan of n hops ends at its n-th); a
    /// flight counts as a hop when the centre of mass rises at least 1 mm above its height at
    /// take-off, as in the reduced-order replay. Default 1.
    #[serde(default = "one")]
    pub hops: usize,
}

fn one() -> usize {
    1
}

impl Default for HopperReplaySettings {
    fn default() -> Self {
        HopperReplaySettings {
            t_max: 1.0,
            snapshot_every: None,
            snapshot_at: Vec::new(),
            settle_time: 0.3,
            substeps: 10,
            foot_thickness: 0.005,
            foot_friction: None,
            time_step: None,
            iterations: Some(100),
            hops: 1,
        }
    }
}

/// One output row (SI units, heights relative to the free surface, forces + = up).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HopperSample {
    pub t: f64,
    pub z_m: f64,
    pub v_m: f64,
    pub z_r: f64,
    pub v_r: f64,
    /// Height of the foot's sole.
    pub z_f: f64,
    pub v_f: f64,
    pub z_d: f64,
    /// Actuator force F_m.
    pub f_m: f64,
    /// Spring force on the rod F_s.
    pub f_s: f64,
    /// The grains' vertical force on the foot over the step.
    pub f_bed: f64,
    /// What the added-mass model (poppy seeds) predicts for the same foot motion:
    /// F_hyd + drag − m_a z̈_f, with z̈_f the DEM foot's finite-difference acceleration.
    pub f_added_mass: f64,
}

/// The grains at one instant, and where the foot was.
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleSnapshot {
    pub t: f64,
    pub grains: GrainState,
    /// The foot disc's centre in the bed's frame (floor z = 0).
    pub foot_centre: Vec3,
    pub foot_radius: f64,
    pub foot_thickness: f64,
    /// The bed's free-surface height in the bed's frame.
    pub surface_height: f64,
}

/// A replay's result.
#[derive(Clone, Debug, PartialEq)]
pub struct HopperReplay {
    /// One row per grain step from t = 0.
    pub samples: Vec<HopperSample>,
    /// z_r at the apex (or at t_max) minus z_r at t = 0.
    pub apex_rise: f64,
    /// Whether the apex of the centre of mass was reached before t_max.
    pub reached_apex: bool,
    /// When the foot left the bed (no grain pushing it, moving up), if it did.
    pub takeoff_time: Option<f64>,
    pub apex_time: Option<f64>,
    /// The foot's depth below the surface at t = 0 after settling under the robot's weight.
    pub rest_depth: f64,
    /// The bed's force on the foot at t = 0 (the settled robot's weight if at rest).
    pub rest_bed_force: f64,
    /// The robot state at t = 0 ([`state`] order).
    pub initial_state: [f64; state::COUNT],
    pub snapshots: Vec<ParticleSnapshot>,
    /// The step the replay ran with (law, Δt, iterations).
    pub params: StepParams,
}

/// The added-mass model of poppy seeds (loam's preset) under a foot of radius `foot_radius`.
pub fn poppy_seed_model(foot_radius: f64) -> AddedMass {
    AddedMass::from_medium(&MediumPreset::PoppySeeds.parameters(), foot_radius)
}

/// Replays `command` (t ↦ (z_d, u = ż_d)) on the robot standing on `bed`.
///
/// The robot starts at rest in its rigid-ground rest configuration with the actuator at
/// `initial_actuator_position`, its sole one grain radius above the surface, and settles for
/// `settings.settle_time`: the foot sinks under the robot's whole weight (the leg pressing
/// with (m_m + m_r) g) while motor and rod ride along at their static offsets, with z_d held
/// at the command's value at t = 0 and e at the value that holds the motor. The command then
/// plays from t = 0 until the apex of the centre of mass after takeoff, or `t_max`.
pub fn replay_hopper(
    backend: &mut dyn Backend,
    bed: &Checkpoint,
    robot: &Hopper,
    foot_radius: f64,
    command: &(dyn Fn(f64) -> (f64, f64) + Sync),
    initial_actuator_position: f64,
    settings: &HopperReplaySettings,
) -> Result<HopperReplay, DemError> {
    let mut replays = replay_hopper_scenes(
        backend,
        std::slice::from_ref(bed),
        robot,
        foot_radius,
        command,
        initial_actuator_position,
        settings,
    )?;
    replays.remove(0)
}

/// [`replay_hopper`] on several realisations of one bed at once: `beds[s]` in scene s of a
/// backend that steps `beds.len()` scenes together (the CUDA backend: one launch per kernel
/// for all of them), one robot per scene, each coupled to its own foot exactly as a single
/// replay is (the same arithmetic in the same order: scene s of the batch is the single
/// replay of `beds[s]`). Each scene's replay ends at its own apex (or `t_max`); a scene that
/// has ended, or whose foot fell through its bed, rests under gravity alone while the others
/// go on. Snapshots are taken only from a single scene.
///
/// The outer error is the batch's (bad settings, a backend that cannot hold the scenes, a bed
/// that exploded); the inner ones are each scene's.
pub fn replay_hopper_scenes(
    backend: &mut dyn Backend,
    beds: &[Checkpoint],
    robot: &Hopper,
    foot_radius: f64,
    command: &(dyn Fn(f64) -> (f64, f64) + Sync),
    initial_actuator_position: f64,
    settings: &HopperReplaySettings,
) -> Result<Vec<Result<HopperReplay, DemError>>, DemError> {
    let Some(bed) = beds.first() else {
        return Err(DemError::Invalid("no bed to replay on".into()));
    };
    let scene = &bed.scene;
    if let Some(s) = beds.iter().position(|b| b.scene != *scene) {
        return Err(DemError::Invalid(format!(
            "the realisations are not of one bed: bed {s}'s scene differs from bed 0's"
        )));
    }
    let snapshots_wanted = settings.snapshot_every.is_some() || !settings.snapshot_at.is_empty();
    if beds.len() > 1 && snapshots_wanted {
        return Err(DemError::Invalid(
            "snapshots are taken from a single replay; replay the realisations without them".into(),
        ));
    }
    let mut params = scene.replay_step_params(settings.time_step)?;
    if let Some(iterations) = settings.iterations {
        params.iterations = iterations;
    }
    params.check()?;
    for (name, v) in [
        ("foot radius", foot_radius),
        ("foot thickness", settings.foot_thickness),
        ("t_max", settings.t_max),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(DemError::Invalid(format!(
                "{name} is {v}; it must be positive"
            )));
        }
    }
    if settings.substeps == 0 {
        return Err(DemError::Invalid(
            "substeps is 0; at least 1 is needed".into(),
        ));
    }
    let container_half_width = match scene.container {
        super::Container::Cylinder { radius } => radius,
        super::Container::Box { half_x, half_y } => half_x.min(half_y),
    };
    if foot_radius + 2.0 * scene.grains.radius > container_half_width {
        return Err(DemError::Invalid(format!(
            "the foot (radius {foot_radius} m) does not fit in the bed's container \
             (half width {container_half_width} m, grains {} m)",
            scene.grains.radius
        )));
    }
    if backend.scenes() != beds.len() {
        return Err(DemError::Invalid(format!(
            "{} realisations on a {} backend of {} scenes: one scene per realisation",
            beds.len(),
            backend.name(),
            backend.scenes()
        )));
    }
    let frame = Frame {
        dt: params.time_step,
        surface: bed.info.surface_height,
        half_thickness: 0.5 * settings.foot_thickness,
        grain_radius: scene.grains.radius,
    };
    let mut robots: Vec<Coupling> = beds
        .iter()
        .map(|_| {
            Coupling::new(
                robot,
                foot_radius,
                command,
                initial_actuator_position,
                settings,
                frame,
            )
        })
        .collect();
    let foot = Body {
        geometry: BodyGeometry::Shape(Shape::Disc {
            radius: foot_radius,
            thickness: settings.foot_thickness,
        }),
        motion: Motion::Dynamic,
        mass: robot.params.foot_mass,
        friction: settings.foot_friction.unwrap_or(scene.grains.friction),
        state: BodyState {
            position: [0.0, 0.0, frame.centre_of(robots[0].x[state::Z_F])],
            velocity: [0.0; 3],
            external_force: [0.0; 3],
            ..BodyState::default()
        },
    };
    let grains: Vec<&GrainState> = beds.iter().map(|b| &b.grains).collect();
    backend.upload_scenes(&grains, &scene.container, &[foot], &params)?;

    let dt = frame.dt;
    let settle_steps = (settings.settle_time.max(0.0) / dt).round() as usize;
    let max_steps = (settings.t_max / dt).ceil() as usize;
    let mut snapshots = Vec::new();
    let mut next_snapshot = 0.0;
    let mut forces = vec![[0.0; 3]; beds.len()];

    // Steps −settle_steps .. max_steps; step k ends at t = (k + 1) dt.
    let first = -(settle_steps as i64);
    for k in first..max_steps as i64 {
        let t_start = k as f64 * dt;
        for r in robots.iter_mut().filter(|r| r.running()) {
            r.start(k);
        }
        if k >= 0 && snapshots_wanted {
            let mut take = false;
            if let Some(every) = settings.snapshot_every {
                if t_start >= next_snapshot - 1e-12 {
                    take = true;
                    next_snapshot += every;
                }
            }
            // A requested instant falls in this step when it is not before its start and
            // before the next step's.
            take |= settings
                .snapshot_at
                .iter()
                .any(|&at| t_start >= at - 1e-12 && t_start - dt < at - 1e-12);
            if take {
                let foot = backend.bodies()?[0];
                snapshots.push(ParticleSnapshot {
                    t: t_start,
                    grains: backend.grains()?,
                    foot_centre: foot.position,
                    foot_radius,
                    foot_thickness: settings.foot_thickness,
                    surface_height: frame.surface,
                });
            }
        }
        // 1-2. The feet and the grains: the leg's force on each running foot; a foot whose
        // replay has ended rests under gravity alone.
        for (f, r) in forces.iter_mut().zip(&robots) {
            *f = [0.0, 0.0, if r.running() { r.foot_force(k) } else { 0.0 }];
        }
        backend.set_external_forces(&forces)?;
        backend.step(1)?;
        let feet = backend.bodies()?;
        let bed_forces = backend.body_forces()?;
        for (s, r) in robots.iter_mut().enumerate() {
            if r.running() {
                r.after_step(k, &feet[s], &bed_forces[s]);
            }
        }
        if !robots.iter().any(Coupling::running) {
            break;
        }
    }
    let mut snapshots = Some(snapshots);
    Ok(robots
        .into_iter()
        .map(|r| r.finish(snapshots.take().unwrap_or_default(), params))
        .collect())
}

/// Where the bed is and how long a step lasts: what turns a foot body into the robot's z_f.
#[derive(Clone, Copy, Debug)]
struct Frame {
    dt: f64,
    /// The bed's free surface in the bed's frame.
    surface: f64,
    half_thickness: f64,
    grain_radius: f64,
}

impl Frame {
    /// World height of the foot's centre for a sole height z_f (relative to the surface).
    fn centre_of(&self, z_f: f64) -> f64 {
        self.surface + z_f + self.half_thickness
    }

    /// The sole's height relative to the surface for a foot body.
    fn sole_of(&self, foot: &BodyState) -> f64 {
        foot.position[2] - self.surface - self.half_thickness
    }
}

/// One robot on one scene's foot between grain steps: its state, its samples and the events
/// of its replay so far.
struct Coupling<'a> {
    robot: &'a Hopper,
    command: &'a (dyn Fn(f64) -> (f64, f64) + Sync),
    settings: &'a HopperReplaySettings,
    frame: Frame,
    model: AddedMass,
    x: [f64; state::COUNT],
    /// The leg's load on the foot while settling, and motor and rod's offsets above it.
    static_load: f64,
    rod_offset: f64,
    motor_offset: f64,
    samples: Vec<HopperSample>,
    takeoff_time: Option<f64>,
    apex_time: Option<f64>,
    z_r0: f64,
    initial_state: [f64; state::COUNT],
    rest_depth: f64,
    rest_bed_force: f64,
    last_bed_force: f64,
    touched: bool,
    previous_momentum: f64,
    hops: usize,
    takeoff_height: f64,
    /// The replay has reached its apex, or failed.
    ended: bool,
    error: Option<DemError>,
}

impl<'a> Coupling<'a> {
    fn new(
        robot: &'a Hopper,
        foot_radius: f64,
        command: &'a (dyn Fn(f64) -> (f64, f64) + Sync),
        initial_actuator_position: f64,
        settings: &'a HopperReplaySettings,
        frame: Frame,
    ) -> Self {
        use state::*;
        let mut x = robot.rest_state(&crate::terrain::Terrain::Rigid, initial_actuator_position);
        for k in [Z_M, Z_R, Z_F] {
            x[k] += frame.grain_radius;
        }
        x[Z_D] = command(0.0).0;
        let max_steps = (settings.t_max / frame.dt).ceil() as usize;
        Coupling {
            robot,
            command,
            settings,
            frame,
            model: poppy_seed_model(foot_radius),
            static_load: (robot.params.motor_mass + robot.params.rod_mass) * robot.gravity,
            rod_offset: x[Z_R] - x[Z_F],
            motor_offset: x[Z_M] - x[Z_F],
            x,
            samples: Vec::with_capacity(max_steps + 1),
            takeoff_time: None,
            apex_time: None,
            z_r0: 0.0,
            initial_state: x,
            rest_depth: 0.0,
            rest_bed_force: 0.0,
            last_bed_force: 0.0,
            touched: false,
            previous_momentum: 0.0,
            hops: 0,
            takeoff_height: 0.0,
            ended: false,
            error: None,
        }
    }

    fn running(&self) -> bool {
        !self.ended
    }

    /// The command, held at its t = 0 value while settling.
    fn command_at(&self, t: f64) -> (f64, f64) {
        if t < 0.0 {
            ((self.command)(0.0).0, 0.0)
        } else {
            (self.command)(t)
        }
    }

    /// Before step k: at k = 0 the settled state becomes the replay's start.
    fn start(&mut self, k: i64) {
        if k != 0 {
            return;
        }
        use state::*;
        self.z_r0 = self.x[Z_R];
        self.initial_state = self.x;
        self.rest_depth = -self.x[Z_F];
        self.rest_bed_force = self.last_bed_force;
        self.samples.push(sample(
            self.robot,
            &self.model,
            &self.x,
            0.0,
            (self.command)(0.0),
            self.last_bed_force,
            0.0,
        ));
    }

    /// The leg's vertical force on the foot over step k (+ = up). Settling (k < 0): the leg
    /// holds its static load on the foot and motor and rod ride with the foot at their rest
    /// offsets, so at t = 0 the robot is at rest in equilibrium on the bed, whatever the bed's
    /// stiffness (the lightly damped spring would otherwise ring for seconds). Then the spring
    /// force on the rod, evaluated with the state at the start of the step.
    fn foot_force(&self, k: i64) -> f64 {
        if k < 0 {
            -self.static_load
        } else {
            -self.robot.spring_force(&self.x)
        }
    }

    /// After step k, with the scene's foot and the grains' force on it over the step.
    fn after_step(&mut self, k: i64, foot: &BodyState, bed_force: &BodyForce) {
        let t_start = k as f64 * self.frame.dt;
        if let Err(e) = above_floor(
            foot,
            self.frame.half_thickness,
            t_start + self.frame.dt,
            self.frame.grain_radius,
        ) {
            self.error = Some(e);
            self.ended = true;
            return;
        }
        use state::*;
        let x = &mut self.x;
        if k < 0 {
            self.last_bed_force = bed_force.force[2];
            x[Z_F] = self.frame.sole_of(foot);
            x[Z_R] = x[Z_F] + self.rod_offset;
            x[Z_M] = x[Z_F] + self.motor_offset;
            return;
        }
        let dt = self.frame.dt;
        let substeps = self.settings.substeps;
        let h = dt / substeps as f64;
        let z_f0 = x[Z_F];
        let v_f0 = x[V_F];
        let z_f1 = self.frame.sole_of(foot);
        let v_f1 = foot.velocity[2];
        // 3. Motor, rod, integrator and command, sub-stepped.
        for s in 0..substeps {
            let tau = t_start + (s + 1) as f64 * h;
            let (z_d, u) = if tau < 0.0 {
                ((self.command)(0.0).0, 0.0)
            } else {
                (self.command)(tau)
            };
            x[Z_F] = z_f0 + (s + 1) as f64 / substeps as f64 * (z_f1 - z_f0);
            x[V_F] = v_f1;
            x[Z_D] = z_d;
            let leg = self.robot.leg(x, &u);
            x[V_M] += h * leg.motor_acceleration;
            x[V_R] += h * leg.rod_acceleration;
            x[Z_M] += h * x[V_M];
            x[Z_R] += h * x[V_R];
            x[E] += h * leg.velocity_error;
        }
        x[Z_F] = z_f1;
        x[V_F] = v_f1;
        self.last_bed_force = bed_force.force[2];
        let t = t_start + dt;
        let accel = (v_f1 - v_f0) / dt;
        let x = self.x;
        self.samples.push(sample(
            self.robot,
            &self.model,
            &x,
            t,
            self.command_at(t),
            bed_force.force[2],
            accel,
        ));
        // Takeoff: the foot, having been pushed by the bed since t = 0, is free and rising.
        if bed_force.contacts > 0 {
            self.touched = true;
        }
        if self.takeoff_time.is_none() && self.touched && bed_force.contacts == 0 && v_f1 > 0.0 {
            self.takeoff_time = Some(t);
            self.previous_momentum = self.robot.momentum(&x);
            self.takeoff_height = self.robot.centre_of_mass(&x);
        }
        if self.takeoff_time.is_some() {
            let momentum = self.robot.momentum(&x);
            if self.previous_momentum > 0.0 && momentum <= 0.0 {
                let rise = self.robot.centre_of_mass(&x) - self.takeoff_height;
                self.hops += usize::from(rise >= 1e-3);
                if self.hops >= self.settings.hops {
                    self.apex_time = Some(t);
                    self.ended = true;
                    return;
                }
                // Not the last hop: wait for the foot to land and take off again.
                (self.takeoff_time, self.touched) = (None, false);
            }
            self.previous_momentum = momentum;
        }
    }

    fn finish(
        self,
        snapshots: Vec<ParticleSnapshot>,
        params: StepParams,
    ) -> Result<HopperReplay, DemError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let apex_rise = match self.apex_time {
            Some(_) => self.x[state::Z_R] - self.z_r0,
            None => {
                self.samples
                    .iter()
                    .map(|s| s.z_r)
                    .fold(f64::NEG_INFINITY, f64::max)
                    - self.z_r0
            }
        };
        Ok(HopperReplay {
            samples: self.samples,
            apex_rise,
            reached_apex: self.apex_time.is_some(),
            takeoff_time: self.takeoff_time,
            apex_time: self.apex_time,
            rest_depth: self.rest_depth,
            rest_bed_force: self.rest_bed_force,
            initial_state: self.initial_state,
            snapshots,
            params,
        })
    }
}

/// The foot must stay in the container: its sole below the floor (z = 0, by more than a
/// grain radius of overlap) means the bed no longer holds it, and the run is meaningless from
/// there (with 5 Jacobi iterations the foot fell 7.9 m and was reported only as "no apex").
fn above_floor(
    foot: &BodyState,
    half_thickness: f64,
    t: f64,
    tolerance: f64,
) -> Result<(), DemError> {
    let sole = foot.position[2] - half_thickness;
    if sole.is_finite() && sole >= -tolerance {
        return Ok(());
    }
    Err(DemError::Unphysical(format!(
        "at t = {t:.4} s the foot's sole is at z = {sole:.4e} m, below the container floor \
         (z = 0): the grains did not hold it (more solver iterations or a smaller time step, \
         or a deeper bed, may)"
    )))
}

fn sample(
    robot: &Hopper,
    model: &AddedMass,
    x: &[f64; state::COUNT],
    t: f64,
    (z_d, u): (f64, f64),
    f_bed: f64,
    foot_acceleration: f64,
) -> HopperSample {
    use state::*;
    let mut x = *x;
    x[Z_D] = z_d;
    let resistance = model.resistance(&x[Z_F], &x[V_F]);
    HopperSample {
        t,
        z_m: x[Z_M],
        v_m: x[V_M],
        z_r: x[Z_R],
        v_r: x[V_R],
        z_f: x[Z_F],
        v_f: x[V_F],
        z_d,
        f_m: robot.motor_force(&x, &u),
        f_s: robot.spring_force(&x),
        f_bed,
        // The model describes a foot that sinks or rests (MODEL.md section 2); a foot moving
        // up through the bed is leaving it, and the model's bed holds nothing then. Applying
        // its ż_f² drag to a rising foot would invent a force of hundreds of newtons.
        f_added_mass: if x[V_F] > 0.0 {
            0.0
        } else {
            resistance.force - resistance.added_mass * foot_acceleration
        },
    }
}

/// The replay's bodies as CSV, columns exactly
/// `t,z_m,v_m,z_r,v_r,z_f,v_f,z_d,F_m,F_s,F_bed,F_added_mass`.
pub fn bodies_csv(replay: &HopperReplay) -> String {
    let mut out = String::from("t,z_m,v_m,z_r,v_r,z_f,v_f,z_d,F_m,F_s,F_bed,F_added_mass\n");
    for s in &replay.samples {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            s.t,
            s.z_m,
            s.v_m,
            s.z_r,
            s.v_r,
            s.z_f,
            s.v_f,
            s.z_d,
            s.f_m,
            s.f_s,
            s.f_bed,
            s.f_added_mass
        ));
    }
    out
}
