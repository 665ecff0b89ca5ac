//! A planar robot of `model::planar` two-way coupled to a DEM bed: its plan replayed on
//! simulated grains (`loam simulate RUN_DIR --backend dem-cpu --bed CHECKPOINT` for a planar
//! robot's run).
//!
//! **Feet.** Every contact of the robot is a kinematic solid in the bed, fixed to its body,
//! whose bottom face is the sole ([`GrainFoot`]): the foot the plan's ground model says it is
//! where it says one (the added-mass model's disc of radius r; a wrench space's measured
//! block), so that the grains meet the foot the plan was made for; else a box
//! `sole_thickness` thick on the contact's flat sole of half width w (a point foot drawn as a
//! sole of half width [`PlanarDemSettings::point_foot_half_width`]) reaching `depth / 2`
//! either side of the robot's plane. Planar conventions
//! are those of [`super::drag`]: the motion is in the world's x–z plane, a body angle φ turns
//! the box about −y, a planar angular velocity ω is (0, −ω, 0) and a planar torque is −τ_y.
//!
//! **Each grain step Δt**, from the robot's state (q, v):
//! 1. every foot box is set at its body's pose and twist (J(q) v);
//! 2. the backend advances the grains one step against the moving boxes and returns each
//!    box's force and torque (about its centre);
//! 3. the robot advances by semi-implicit Euler, v⁺ = v + Δt M(q)⁻¹ (B u + springs −
//!    h(q, v) + Σ Jᵢᵀ wᵢ), q⁺ = q + Δt v⁺, with wᵢ the grains' wrench on foot i, through the robot's
//!    own multibody equations (`model::multibody`): no equation of the robot is written here.
//!
//! **Inputs** are the rigid-ground replay's (`sim::planar`): the plan's inputs, linear between
//! nodes, plus the same joint servo tracking the plan's state (8 Hz, gains from M at the start),
//! clamped at the robot's limits. A robot with actuated base coordinates (the planar foot)
//! therefore tracks the plan's absolute pose, as the wrench-space paper's PID-driven foot does;
//! a legged robot's servo holds its joints and its base goes where the grains let it.
//!
//! **Falling.** Only the feet meet the grains: when a body without a foot goes below the
//! surface (its frame's origin), the robot has fallen, and the replay stops there and says so
//! (`fell_at_s`), rather than let the body pass through the bed.
//!
//! **Settling.** The robot starts at the plan's first state lifted so that its lowest sole is
//! a grain radius above the surface, and comes down for `settle_time` before the plan's clock
//! starts with every coordinate but its base's height held at the plan's first state
//! (accelerations 0, drives' states frozen): it sinks straight down as one rigid body until
//! the grains carry its weight (less what its inputs on the height carry), with its feet's
//! bodies' share of its inertia, so that it stops within tens of ms rather than ringing on
//! the grains (a light body on the bed's stiffness rings fast and the grains damp it). At t = 0 everything is
//! released at rest, so a robot whose plan starts in equilibrium (as every plan starting at
//! rest does) starts at rest on the grains; a lightly damped leg spring (the hopper's) would
//! otherwise still ring, and a robot balanced on one foot does not topple while it settles.
//! The plan's path is centred in the container along x.
//!
//! **Realisations side by side.** [`replay_planar_scenes`] replays one plan on several
//! realisations of one bed (copies with a grain nudged by an ulp) as the scenes of one
//! backend: the CUDA backend steps them in one launch per kernel, [`super::CpuScenes`] side
//! by side on the cores. Scene s holds robot s's feet (bodies s × feet + i) and is, bit for
//! bit, the single replay of its bed: every scene's robot is stepped by the same code in the
//! same order, and a scene whose replay has ended keeps its feet still while the others go on.
//! [`replay_planar`] is the batch of one.
//!
//! Choices: kinematic boxes driven by the robot's state (not dynamic bodies) keep one
//! integrator for the whole robot; the explicit coupling is stable while the robot's bodies are
//! far heavier than a grain (the step is the grains' own). Feet are boxes because the robot
//! descriptions give soles, not solid shapes.

mod coupling;
mod feet;

use serde::Serialize;

use super::backend::{Backend, Body, BodyGeometry, BodyState, GrainState, Motion, StepParams};
use super::bed::Checkpoint;
use super::sdf::Shape;
use super::DemError;
use crate::model::planar::PlanarRobot;
use crate::sim::planar::PlanTable;
use coupling::{Coupling, Shared};

/// How to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarDemSettings {
    /// Time the robot rests on the bed, tracking the plan's first state, before the plan's
    /// clock starts [s].
    pub settle_time: f64,
    /// Δt [s]; None: `Scene::replay_step_params` (the bed's, at most law::REPLAY_FRACTION of
    /// the Rayleigh time).
    pub time_step: Option<f64>,
    /// The feet's extent across the robot's plane [m].
    pub depth: f64,
    /// A box foot's thickness above the sole [m].
    pub sole_thickness: f64,
    /// Half width of the sole drawn for a point foot [m].
    pub point_foot_half_width: f64,
    /// Friction between feet and grains; None: the grains' own.
    pub foot_friction: Option<f64>,
    /// Interval between samples [s].
    pub sample_every: f64,
    /// Each contact's solid on the grains, in the robot's contact order; empty: every contact
    /// a box ([`GrainFoot::Box`]).
    pub feet: Vec<GrainFoot>,
    /// The task asks for an apex (`task.apex_rise`): the replay runs past the plan's end
    /// while the centre of mass still rises (a higher hop peaks later), at most
    /// [`ApexTask::wait`] longer, with the inputs and servo references of the plan's last
    /// node held, and reports the rise of the apex body's centre of mass at the highest centre
    /// of mass, as the reduced-order replay measures it.
    pub apex: Option<ApexTask>,
    /// The latest time on the plan's clock the replay runs to [s] (`loam simulate --t-max`);
    /// `None`: the plan's end (and an apex task's wait past it). A replay it stops short says
    /// so (`PlanarDemSummary::stopped_at_s`).
    pub t_max: Option<f64>,
    /// Projected-Jacobi iterations per step; `None`: the bed scene's (the Hertz-Mindlin law
    /// has none).
    pub iterations: Option<usize>,
    /// Save the grains and the feet every this many seconds from t = 0; `None`: no
    /// snapshots. A single replay's only.
    pub snapshot_every: Option<f64>,
    /// Also save them at the first step starting at or after each of these times [s] (the
    /// times to render), whether or not `snapshot_every` is set.
    pub snapshot_at: Vec<f64>,
}

/// The thickness of a disc foot, the added-mass model's (`GrainFoot::Disc`) [m]: 5 mm, the
/// hopper's foot disc.
pub const DISC_FOOT_THICKNESS: f64 = 0.005;

/// What an apex task measures (`PlanarDemSettings::apex`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ApexTask {
    /// The body whose rise the task asks for (`task.apex_of`); `None`: the centre of mass.
    pub body: Option<usize>,
    /// The longest the replay goes on past the plan's end waiting for the apex [s].
    pub wait: f64,
}

/// How one contact meets the grains: the solid whose bottom face is its sole.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum GrainFoot {
    /// A box on the contact's sole (its half width, or the settings' point-foot half width),
    /// the settings' `depth` across the plane.
    Box,
    /// A disc of this radius and thickness [m] lying on the sole, its axis the body's
    /// vertical (the added-mass model's foot).
    Disc { radius: f64, thickness: f64 },
    /// A block of these sizes [m] on the sole: `width` along it, `height` up the body,
    /// `thickness` across the plane (a wrench space's measured foot).
    Block {
        width: f64,
        height: f64,
        thickness: f64,
    },
}

impl Default for PlanarDemSettings {
    fn default() -> Self {
        PlanarDemSettings {
            settle_time: 0.2,
            time_step: None,
            depth: 0.05,
            sole_thickness: 0.02,
            point_foot_half_width: 0.01,
            foot_friction: None,
            sample_every: 1e-3,
            feet: Vec::new(),
            apex: None,
            t_max: None,
            iterations: None,
            snapshot_every: None,
            snapshot_at: Vec::new(),
        }
    }
}

/// One sample of the replay (t < 0 while settling).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanarDemSample {
    pub t: f64,
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    /// The inputs applied over the step that starts here.
    pub u: Vec<f64>,
    /// Per contact: the grains' wrench (F_x [N], F_z [N], τ [N m] about the sole's centre,
    /// counter-clockwise) over the step that ended here, and the sole centre's height above
    /// the bed's surface [m] (negative: in the bed).
    pub wrenches: Vec<[f64; 3]>,
    pub heights: Vec<f64>,
}

/// What the replay did, against the plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanarDemSummary {
    pub steps: usize,
    pub time_step_s: f64,
    /// How far below the plan's first state the centre of mass is when the plan's clock
    /// starts, after settling (negative: above it; the robot is placed a grain radius high)
    /// [m].
    pub settle_sink_m: f64,
    /// The centre of mass's horizontal travel over the plan's duration [m], planned and on
    /// the grains (from the settled start).
    pub planned_distance_m: f64,
    pub achieved_distance_m: f64,
    /// The centre of mass's highest rise above its start [m], planned and on the grains.
    pub planned_com_peak_m: f64,
    pub achieved_com_peak_m: f64,
    /// An apex task's rise (`PlanarDemSettings::apex`) [m], planned and on the grains, and
    /// whether the grains' apex came before the replay's end; absent for other tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned_apex_rise_m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub achieved_apex_rise_m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached_apex: Option<bool>,
    /// The centre of mass's speed when the plan's clock starts [m/s]: above a few mm/s the
    /// robot was still sinking or rocking, and a longer settle is the fairer start.
    pub start_speed_mps: f64,
    /// The grains' vertical force on all feet and the robot's weight at the end of settling
    /// (mean over its last 20 ms) [N].
    pub settled_bed_force_n: f64,
    pub robot_weight_n: f64,
    /// The deepest any sole went below the surface [m].
    pub deepest_sole_m: f64,
    /// When a body without a foot went below the surface (the robot fell; only its feet meet
    /// the grains, so the replay stops there) [s], and which body.
    pub fell_at_s: Option<f64>,
    pub fell_body: Option<String>,
    /// When the replay stopped at `t_max`, before the plan's end (or an apex task's apex)
    /// [s]; absent when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at_s: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlanarDemReplay {
    pub samples: Vec<PlanarDemSample>,
    pub summary: PlanarDemSummary,
    /// The grains and the feet at the times `snapshot_every` and `snapshot_at` ask for (a
    /// single replay's only).
    pub snapshots: Vec<PlanarSnapshot>,
    /// The step the replay ran with (law, Δt, iterations).
    pub params: StepParams,
}

/// The grains at one instant (the start of a step), and where the feet were over that step.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanarSnapshot {
    pub t: f64,
    pub grains: GrainState,
    /// Each foot's solid, in the robot's contact order, and its pose (position and
    /// orientation in the bed's frame, floor z = 0) and twist.
    pub feet: Vec<(Shape, BodyState)>,
    /// The bed's free-surface height in the bed's frame.
    pub surface_height: f64,
}

/// Replays `plan` of `robot` on the grains of `bed`: the one-scene case of
/// [`replay_planar_scenes`].
pub fn replay_planar(
    backend: &mut dyn Backend,
    bed: &Checkpoint,
    robot: &PlanarRobot,
    plan: &PlanTable,
    settings: &PlanarDemSettings,
) -> Result<PlanarDemReplay, DemError> {
    let mut replays =
        replay_planar_scenes(backend, std::slice::from_ref(bed), robot, plan, settings)?;
    replays.remove(0)
}

/// [`replay_planar`] on several realisations of one bed at once: `beds[s]` in scene s of a
/// backend that steps `beds.len()` scenes together ([`Backend::scenes`]: the CUDA backend in
/// one launch per kernel for all of them, [`crate::sim::dem::CpuScenes`] side by side), one
/// robot per scene on its own feet (bodies s × feet + i), each coupled exactly as a single
/// replay is (the same arithmetic in the same order: scene s of the batch is the single replay
/// of `beds[s]`). Each scene's replay ends at its own end (the plan's, its apex, a fall or
/// `t_max`); a scene that has ended, or failed, keeps its feet still where they were while
/// the others go on. Snapshots are taken only from a single scene.
///
/// The outer error is the batch's (bad settings, a plan the bed cannot hold, a backend that
/// cannot hold the scenes or failed a step); the inner ones are each scene's.
pub fn replay_planar_scenes(
    backend: &mut dyn Backend,
    beds: &[Checkpoint],
    robot: &PlanarRobot,
    plan: &PlanTable,
    settings: &PlanarDemSettings,
) -> Result<Vec<Result<PlanarDemReplay, DemError>>, DemError> {
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
    check(robot, plan, settings)?;
    let mut params = scene.replay_step_params(settings.time_step)?;
    if let Some(iterations) = settings.iterations {
        params.iterations = iterations;
    }
    params.check()?;
    if backend.scenes() != beds.len() {
        return Err(DemError::Invalid(format!(
            "{} realisations on a {} backend of {} scenes: one scene per realisation",
            beds.len(),
            backend.name(),
            backend.scenes()
        )));
    }
    let grain = scene.grains.radius;
    let feet = feet::feet(robot, settings)?;
    let shift = feet::centring_shift(robot, plan, &feet, &scene.container, grain)?;
    let shared = Shared::new(robot, plan, settings, feet, shift, params.time_step, grain);
    let mut scenes: Vec<Coupling> = beds
        .iter()
        .map(|b| Coupling::new(&shared, b.info.surface_height))
        .collect();

    // Every scene starts with the feet of its first state; each step sets them again.
    let friction = settings.foot_friction.unwrap_or(scene.grains.friction);
    let bodies: Vec<Body> = scenes[0]
        .boxes
        .iter()
        .zip(&shared.feet)
        .map(|(state, f)| Body {
            geometry: BodyGeometry::Shape(f.shape.clone()),
            motion: Motion::Kinematic,
            mass: 1.0,
            friction,
            state: *state,
        })
        .collect();
    let grains: Vec<&GrainState> = beds.iter().map(|b| &b.grains).collect();
    backend.upload_scenes(&grains, &scene.container, &bodies, &params)?;

    let (dt, feet_count) = (shared.dt, shared.feet.len());
    let mut snapshots = Vec::new();
    let mut next_snapshot = 0.0;
    let mut states = Vec::with_capacity(feet_count * beds.len());
    for k in -shared.settle_steps..shared.last_allowed {
        for s in scenes.iter_mut().filter(|s| s.running()) {
            s.begin(k);
        }
        if !scenes.iter().any(Coupling::running) {
            break;
        }
        let t_start = k as f64 * dt;
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
                snapshots.push(PlanarSnapshot {
                    t: t_start,
                    grains: backend.grains()?,
                    feet: shared
                        .feet
                        .iter()
                        .map(|f| f.shape.clone())
                        .zip(scenes[0].boxes.iter().copied())
                        .collect(),
                    surface_height: bed.info.surface_height,
                });
            }
        }
        states.clear();
        for s in &scenes {
            states.extend_from_slice(&s.boxes);
        }
        backend.set_bodies(&states)?;
        backend.step(1)?;
        let forces = backend.body_forces()?;
        for (s, scene) in scenes.iter_mut().enumerate() {
            if scene.running() {
                scene.after(k, &forces[s * feet_count..(s + 1) * feet_count]);
            }
        }
        if !scenes.iter().any(Coupling::running) {
            break;
        }
    }
    let mut snapshots = Some(snapshots);
    Ok(scenes
        .into_iter()
        .map(|s| {
            let mut replay = s.finish(params)?;
            replay.snapshots = snapshots.take().unwrap_or_default();
            Ok(replay)
        })
        .collect())
}

/// The settings and the plan, before any grain moves.
fn check(
    robot: &PlanarRobot,
    plan: &PlanTable,
    settings: &PlanarDemSettings,
) -> Result<(), DemError> {
    if plan.t.len() < 2 || plan.x.iter().any(|x| x.len() != robot.n_x()) {
        return Err(DemError::Invalid(
            "the plan needs at least two nodes of the robot's state".into(),
        ));
    }
    for (name, v) in [
        ("depth", settings.depth),
        ("sole thickness", settings.sole_thickness),
        ("point foot half width", settings.point_foot_half_width),
        ("sample interval", settings.sample_every),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(DemError::Invalid(format!(
                "the {name} is {v}; it must be positive"
            )));
        }
    }
    if !(settings.settle_time >= 0.0 && settings.settle_time.is_finite()) {
        return Err(DemError::Invalid(format!(
            "the settle time is {}; it must be finite and not negative",
            settings.settle_time
        )));
    }
    for (name, v) in [
        ("t_max", settings.t_max),
        ("snapshot interval", settings.snapshot_every),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v.is_finite()) {
                return Err(DemError::Invalid(format!(
                    "the {name} is {v}; it must be positive"
                )));
            }
        }
    }
    if settings.iterations == Some(0) {
        return Err(DemError::Invalid(
            "iterations is 0; at least 1 is needed".into(),
        ));
    }
    Ok(())
}
