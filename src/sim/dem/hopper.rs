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

use super::backend::{Backend, Body, BodyGeometry, BodyState, GrainState, Motion, StepParams};
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
    use state::*;
    let scene = &bed.scene;
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
    let dt = params.time_step;
    let g = robot.gravity;
    let surface = bed.info.surface_height;
    let half_thickness = 0.5 * settings.foot_thickness;
    // World height of the foot's centre for a sole height z_f (relative to the surface).
    let centre_of = |z_f: f64| surface + z_f + half_thickness;

    let mut x = robot.rest_state(&crate::terrain::Terrain::Rigid, initial_actuator_position);
    let lift = scene.grains.radius;
    for k in [Z_M, Z_R, Z_F] {
        x[k] += lift;
    }
    x[Z_D] = command(0.0).0;

    let foot = Body {
        geometry: BodyGeometry::Shape(Shape::Disc {
            radius: foot_radius,
            thickness: settings.foot_thickness,
        }),
        motion: Motion::Dynamic,
        mass: robot.params.foot_mass,
        friction: settings.foot_friction.unwrap_or(scene.grains.friction),
        state: BodyState {
            position: [0.0, 0.0, centre_of(x[Z_F])],
            velocity: [0.0; 3],
            external_force: [0.0; 3],
            ..BodyState::default()
        },
    };
    backend.upload(&bed.grains, &scene.container, &[foot], &params)?;

    let model = poppy_seed_model(foot_radius);
    let static_load = (robot.params.motor_mass + robot.params.rod_mass) * g;
    let rod_offset = x[Z_R] - x[Z_F];
    let motor_offset = x[Z_M] - x[Z_F];
    let settle_steps = (settings.settle_time.max(0.0) / dt).round() as usize;
    let max_steps = (settings.t_max / dt).ceil() as usize;
    let substeps = settings.substeps;
    let h = dt / substeps as f64;

    let mut samples = Vec::with_capacity(max_steps + 1);
    let mut snapshots = Vec::new();
    let mut next_snapshot = 0.0;
    let mut takeoff_time = None;
    let mut apex_time = None;
    let mut z_r0 = 0.0;
    let mut initial_state = x;
    let (mut rest_depth, mut rest_bed_force) = (0.0, 0.0);
    let mut last_bed_force = 0.0;
    let mut touched = false;
    let mut previous_momentum = 0.0;
    let (mut hops, mut takeoff_height) = (0, 0.0);

    // Steps −settle_steps .. max_steps; step k ends at t = (k + 1) dt.
    let first = -(settle_steps as i64);
    for k in first..max_steps as i64 {
        let t_start = k as f64 * dt;
        if k == 0 {
            z_r0 = x[Z_R];
            initial_state = x;
            rest_depth = -x[Z_F];
            rest_bed_force = last_bed_force;
            samples.push(sample(
                robot,
                &model,
                &x,
                0.0,
                command(0.0),
                last_bed_force,
                0.0,
            ));
        }
        if k >= 0 {
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
                    surface_height: surface,
                });
            }
        }
        let command_at = |t: f64| {
            if t < 0.0 {
                (command(0.0).0, 0.0)
            } else {
                command(t)
            }
        };
        // Settling (k < 0): the leg holds its static load on the foot and motor and rod ride
        // with the foot at their rest offsets, so at t = 0 the robot is at rest in
        // equilibrium on the bed, whatever the bed's stiffness (the lightly damped
        // spring would otherwise ring for seconds).
        if k < 0 {
            let mut foot = backend.bodies()?[0];
            foot.external_force = [0.0, 0.0, -static_load];
            backend.set_body(0, foot)?;
            backend.step(1)?;
            let foot = backend.bodies()?[0];
            above_floor(&foot, half_thickness, t_start + dt, scene.grains.radius)?;
            last_bed_force = backend.body_forces()?[0].force[2];
            x[Z_F] = foot.position[2] - surface - half_thickness;
            x[Z_R] = x[Z_F] + rod_offset;
            x[Z_M] = x[Z_F] + motor_offset;
            continue;
        }
        // 1-2. The foot and the grains.
        let spring = robot.spring_force(&x);
        let mut foot = backend.bodies()?[0];
        foot.external_force = [0.0, 0.0, -spring];
        backend.set_body(0, foot)?;
        backend.step(1)?;
        let foot = backend.bodies()?[0];
        above_floor(&foot, half_thickness, t_start + dt, scene.grains.radius)?;
        let bed_force = backend.body_forces()?[0];
        let z_f0 = x[Z_F];
        let v_f0 = x[V_F];
        let z_f1 = foot.position[2] - surface - half_thickness;
        let v_f1 = foot.velocity[2];
        // 3. Motor, rod, integrator and command, sub-stepped.
        for s in 0..substeps {
            let tau = t_start + (s + 1) as f64 * h;
            let (z_d, u) = command_at(tau);
            x[Z_F] = z_f0 + (s + 1) as f64 / substeps as f64 * (z_f1 - z_f0);
            x[V_F] = v_f1;
            x[Z_D] = z_d;
            let leg = robot.leg(&x, &u);
            x[V_M] += h * leg.motor_acceleration;
            x[V_R] += h * leg.rod_acceleration;
            x[Z_M] += h * x[V_M];
            x[Z_R] += h * x[V_R];
            x[E] += h * leg.velocity_error;
        }
        x[Z_F] = z_f1;
        x[V_F] = v_f1;
        last_bed_force = bed_force.force[2];
        if k < 0 {
            continue;
        }
        let t = t_start + dt;
        let accel = (v_f1 - v_f0) / dt;
        samples.push(sample(
            robot,
            &model,
            &x,
            t,
            command_at(t),
            bed_force.force[2],
            accel,
        ));
        // Takeoff: the foot, having been pushed by the bed since t = 0, is free and rising.
        if bed_force.contacts > 0 {
            touched = true;
        }
        if takeoff_time.is_none() && touched && bed_force.contacts == 0 && v_f1 > 0.0 {
            takeoff_time = Some(t);
            previous_momentum = robot.momentum(&x);
            takeoff_height = robot.centre_of_mass(&x);
        }
        if takeoff_time.is_some() {
            let momentum = robot.momentum(&x);
            if previous_momentum > 0.0 && momentum <= 0.0 {
                hops += usize::from(robot.centre_of_mass(&x) - takeoff_height >= 1e-3);
                if hops >= settings.hops {
                    apex_time = Some(t);
                    break;
                }
                // Not the last hop: wait for the foot to land and take off again.
                (takeoff_time, touched) = (None, false);
            }
            previous_momentum = momentum;
        }
    }
    let apex_rise = match apex_time {
        Some(_) => x[Z_R] - z_r0,
        None => {
            samples
                .iter()
                .map(|s| s.z_r)
                .fold(f64::NEG_INFINITY, f64::max)
                - z_r0
        }
    };
    Ok(HopperReplay {
        samples,
        apex_rise,
        reached_apex: apex_time.is_some(),
        takeoff_time,
        apex_time,
        rest_depth,
        rest_bed_force,
        initial_state,
        snapshots,
        params,
    })
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
