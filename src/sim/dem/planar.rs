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
//! 3. the robot advances by semi-implicit Euler, v⁺ = v + Δt M(q)⁻¹ (B u + springs − h(q, v)
//!    + Σ Jᵢᵀ wᵢ), q⁺ = q + Δt v⁺, with wᵢ the grains' wrench on foot i, through the robot's
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
//! bodies' share of its inertia, as the hopper's own DEM replay settles its foot under the
//! leg's load, so that it stops within tens of ms rather than ringing on the grains (a light
//! body on the bed's stiffness rings fast and the grains damp it). At t = 0 everything is
//! released at rest, so a robot whose plan starts in equilibrium (as every plan starting at
//! rest does) starts at rest on the grains; a lightly damped leg spring (the hopper's) would
//! otherwise still ring, and a robot balanced on one foot does not topple while it settles.
//! The plan's path is centred in the container along x.
//!
//! Choices: kinematic boxes driven by the robot's state (not dynamic bodies) keep one
//! integrator for the whole robot; the explicit coupling is stable while the robot's bodies are
//! far heavier than a grain (the step is the grains' own). Feet are boxes because the robot
//! descriptions give soles, not solid shapes.

use serde::Serialize;

use super::backend::{Backend, Body, BodyGeometry, BodyState, Motion};
use super::bed::Checkpoint;
use super::sdf::Shape;
use super::{Container, DemError};
use crate::model::multibody::Frame;
use crate::model::planar::PlanarRobot;
use crate::sim::planar::PlanTable;

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
}

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
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlanarDemReplay {
    pub samples: Vec<PlanarDemSample>,
    pub summary: PlanarDemSummary,
}

/// A foot on the grains: its body, its centre and sole in the body's frame, its half extents
/// (along the sole, across the plane, up) and its solid.
struct Foot {
    body: usize,
    centre: [f64; 2],
    sole: [f64; 2],
    half: [f64; 3],
    shape: Shape,
}

/// Replays `plan` of `robot` on the grains of `bed`.
pub fn replay_planar(
    backend: &mut dyn Backend,
    bed: &Checkpoint,
    robot: &PlanarRobot,
    plan: &PlanTable,
    settings: &PlanarDemSettings,
) -> Result<PlanarDemReplay, DemError> {
    let n = robot.body.n_q();
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
    let scene = &bed.scene;
    let params = scene.replay_step_params(settings.time_step)?;
    params.check()?;
    let dt = params.time_step;
    let surface = bed.info.surface_height;
    let grain = scene.grains.radius;

    if !(settings.feet.is_empty() || settings.feet.len() == robot.contacts.len()) {
        return Err(DemError::Invalid(format!(
            "{} foot shapes for the robot's {} contacts",
            settings.feet.len(),
            robot.contacts.len()
        )));
    }
    let mut feet = Vec::new();
    for (i, c) in robot.contacts.iter().enumerate() {
        let (half, shape) = match settings.feet.get(i).copied().unwrap_or(GrainFoot::Box) {
            GrainFoot::Box => {
                let w = if c.half_width > 0.0 {
                    c.half_width
                } else {
                    settings.point_foot_half_width
                };
                let half = [w, 0.5 * settings.depth, 0.5 * settings.sole_thickness];
                (half, Shape::Box { half_extents: half })
            }
            GrainFoot::Disc { radius, thickness } => {
                if !(radius > 0.0 && radius.is_finite() && thickness > 0.0 && thickness.is_finite())
                {
                    return Err(DemError::Invalid(format!(
                        "contact `{}`: a disc foot of radius {radius} m and thickness \
                         {thickness} m; both must be positive",
                        c.name
                    )));
                }
                (
                    [radius, radius, 0.5 * thickness],
                    Shape::Disc { radius, thickness },
                )
            }
            GrainFoot::Block {
                width,
                height,
                thickness,
            } => {
                let half = [0.5 * width, 0.5 * thickness, 0.5 * height];
                if !half.iter().all(|h| *h > 0.0 && h.is_finite()) {
                    return Err(DemError::Invalid(format!(
                        "contact `{}`: a block foot of {width} x {height} x {thickness} m; \
                         every size must be positive",
                        c.name
                    )));
                }
                (half, Shape::Box { half_extents: half })
            }
        };
        let h = half[2];
        feet.push(Foot {
            body: c.body,
            centre: [c.point[0], c.point[1] + h],
            sole: c.point,
            half,
            shape,
        });
    }

    // Each foot's x over the plan's nodes (lowest, highest), once: the feet's path is centred
    // in the container along x, and each foot must fit at its farthest.
    let spans: Vec<(f64, f64)> = (0..feet.len())
        .map(|c| {
            plan.x
                .iter()
                .map(|x| robot.contact_point(&x[..n], c)[0])
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p), b.max(p))
                })
        })
        .collect();
    let low = feet
        .iter()
        .zip(&spans)
        .map(|(f, s)| s.0 - f.half[0])
        .fold(f64::INFINITY, f64::min);
    let high = feet
        .iter()
        .zip(&spans)
        .map(|(f, s)| s.1 + f.half[0])
        .fold(f64::NEG_INFINITY, f64::max);
    let shift = 0.5 * (low + high);
    let (half_x, half_y) = match scene.container {
        Container::Cylinder { radius } => (radius, radius),
        Container::Box { half_x, half_y } => (half_x, half_y),
    };
    // With a grain's clearance: a disc's rim and a box's far corner within a cylinder's
    // radius; the half extents within a box's.
    let clear = 2.0 * grain;
    let fits = feet.iter().zip(&spans).all(|(foot, &(a, b))| {
        let far = (a - shift).abs().max((b - shift).abs());
        let along = far + foot.half[0] + clear;
        let across = foot.half[1] + clear;
        match (&scene.container, &foot.shape) {
            (Container::Cylinder { radius }, Shape::Disc { .. }) => {
                far + foot.half[0].max(foot.half[1]) + clear <= *radius
            }
            (Container::Cylinder { radius }, _) => along.hypot(across) <= *radius,
            (Container::Box { .. }, _) => along <= half_x && across <= half_y,
        }
    });
    if !fits {
        return Err(DemError::Invalid(format!(
            "the plan's feet sweep {:.3} m along x and reach {:.3} m across the plane; the \
             bed's container (half widths {half_x} m, {half_y} m) cannot hold them with a \
             grain's clearance: use a larger bed or a shorter plan",
            high - low,
            2.0 * feet.iter().map(|f| f.half[1]).fold(0.0, f64::max)
        )));
    }

    // The feet's centres, whose twists the boxes move with.
    let centres: Vec<(usize, [f64; 2])> = feet.iter().map(|f| (f.body, f.centre)).collect();
    // Box states from the robot's frames at q and its velocities v: world x = planar x −
    // shift, z = surface + planar z.
    let box_states = |frames: &[Frame<f64>], v: &[f64]| -> Vec<BodyState> {
        let twists = robot.body.point_twists_in(frames, v, &centres);
        feet.iter()
            .zip(twists)
            .map(|(f, (pv, omega))| {
                let frame = &frames[f.body];
                let p = frame.transform(f.centre);
                let (s, c) = (0.5 * frame.angle).sin_cos();
                BodyState {
                    position: [p[0] - shift, 0.0, surface + p[1]],
                    velocity: [pv[0], 0.0, pv[1]],
                    orientation: [c, 0.0, -s, 0.0],
                    angular_velocity: [0.0, -omega, 0.0],
                    ..BodyState::default()
                }
            })
            .collect()
    };
    // Each sole's height above the surface.
    let heights = |frames: &[Frame<f64>]| -> Vec<f64> {
        feet.iter()
            .map(|f| frames[f.body].transform(f.sole)[1])
            .collect()
    };

    // Start at rest a grain radius above the plan's first pose (the lowest sole just clears
    // the bed): q[1] is the floating base's height (model::multibody).
    let mut q = plan.x[0][..n].to_vec();
    let mut v = vec![0.0; n];
    let lowest = (0..robot.contacts.len())
        .map(|c| robot.contact_point(&q, c)[1])
        .fold(f64::INFINITY, f64::min);
    q[1] += grain - lowest.min(0.0);
    let mut frames = robot.body.frames(&q);

    let friction = settings.foot_friction.unwrap_or(scene.grains.friction);
    let bodies: Vec<Body> = box_states(&frames, &v)
        .into_iter()
        .zip(&feet)
        .map(|(state, f)| Body {
            geometry: BodyGeometry::Shape(f.shape.clone()),
            motion: Motion::Kinematic,
            mass: 1.0,
            friction,
            state,
        })
        .collect();
    backend.upload(&bed.grains, &scene.container, &bodies, &params)?;

    let (kp, kd): (Vec<f64>, Vec<f64>) = crate::sim::planar::servo_gains(robot, plan)
        .into_iter()
        .unzip();
    // An ideal source gets the plan's effort and a servo (`sim::planar::servo_command`, the
    // replays' one servo); a drive the plan's command rate, open loop (it is a servo itself),
    // and none while the bed settles.
    let inputs = |t: f64, q: &[f64], v: &[f64]| -> Vec<f64> {
        let (xr, ur) = plan.at(t.max(0.0));
        let mut u = crate::sim::planar::servo_command(robot, &kp, &kd, (&xr, &ur), q, v);
        if t < 0.0 {
            for (ui, input) in u.iter_mut().zip(&robot.inputs) {
                if input.drive.is_some() {
                    *ui = 0.0;
                }
            }
        }
        u
    };
    // Every coordinate but the base's height (q[1]) is held while the robot settles, and the
    // share of its inertia it settles with is its feet's bodies' (see the module docs).
    let held: Vec<usize> = (0..n).filter(|&j| j != 1).collect();
    let settle_mass_share = {
        let mut bodies: Vec<usize> = feet.iter().map(|f| f.body).collect();
        bodies.sort_unstable();
        bodies.dedup();
        let feet_mass: f64 = bodies.iter().map(|&b| robot.body.bodies[b].mass).sum();
        (feet_mass / robot.body.total_mass()).clamp(1e-3, 1.0)
    };
    // The drives' states (integrators and commands), from the plan's start.
    let mut drives = plan.x[0][2 * n..].to_vec();

    let t_end = *plan.t.last().expect("two nodes");
    let settle_steps = (settings.settle_time / dt).round() as i64;
    let steps = (t_end / dt).ceil() as i64;
    let plan_com = |x: &[f64]| robot.body.centre_of_mass(&x[..n]);
    let plan_start = plan_com(&plan.x[0]);
    let mut samples = Vec::new();
    let mut next_sample = -(settle_steps as f64) * dt;
    let mut wrenches = vec![[0.0; 3]; feet.len()];
    let mut start_com = plan_start;
    let mut start_speed = f64::NAN;
    let mut peak: f64 = 0.0;
    // The apex task's body's centre of mass height (the robot's centre of mass: none).
    let apex_height = |frames: &[Frame<f64>]| match settings.apex.and_then(|a| a.body) {
        Some(b) => frames[b].transform(robot.body.bodies[b].com)[1],
        None => robot.body.centre_of_mass_in(frames)[1],
    };
    let (mut apex_start, mut apex_rise) = (0.0, 0.0);
    // An apex task goes on past the plan's end while the centre of mass rises.
    let last_allowed = match settings.apex {
        Some(apex) => steps + (apex.wait.max(0.0) / dt).ceil() as i64,
        None => steps,
    };
    let mut reached_apex = settings.apex.is_none();
    let mut end_com = None;
    let mut deepest: f64 = 0.0;
    let mut bed_force = (0.0, 0usize);
    let footless: Vec<usize> = (0..robot.body.bodies.len())
        .filter(|b| !feet.iter().any(|f| f.body == *b))
        .collect();
    let mut fell: Option<(f64, String)> = None;
    let mut last_step = -settle_steps;
    for k in -settle_steps..last_allowed {
        let t = k as f64 * dt;
        if k == steps {
            end_com = Some(robot.body.centre_of_mass_in(&frames));
        }
        if k >= steps && com_velocity(robot, &frames, &v)[1] <= 0.0 {
            reached_apex = true;
            last_step = k;
            break;
        }
        last_step = k + 1;
        if k == 0 {
            start_com = robot.body.centre_of_mass_in(&frames);
            apex_start = apex_height(&frames);
            start_speed = com_speed(robot, &frames, &v);
        }
        let u = inputs(t, &q, &v);
        let here = heights(&frames);
        if t >= next_sample - 1e-12 {
            samples.push(PlanarDemSample {
                t,
                q: q.clone(),
                v: v.clone(),
                u: u.clone(),
                wrenches: wrenches.clone(),
                heights: here.clone(),
            });
            next_sample += settings.sample_every;
        }
        for (i, state) in box_states(&frames, &v).into_iter().enumerate() {
            backend.set_body(i, state)?;
        }
        backend.step(1)?;
        let forces = backend.body_forces()?;
        let x: Vec<f64> = q.iter().chain(&v).chain(&drives).copied().collect();
        let efforts = robot.efforts(&x, &u);
        if k >= 0 {
            for (d, rate) in drives.iter_mut().zip(robot.drive_rates(&x, &u)) {
                *d += dt * rate;
            }
        }
        let mut generalized = robot.generalized_forces(&q, &v, &efforts);
        for (i, (f, force)) in feet.iter().zip(&forces).enumerate() {
            // The torque about the box's centre, planar (counter-clockwise = −τ_y); applied at
            // the centre, which is the point the backend measures it about.
            let w = [force.force[0], force.force[2], -force.torque[1]];
            for (g, add) in generalized.iter_mut().zip(
                robot
                    .body
                    .wrench_to_generalized_in(&frames, f.body, f.centre, &w),
            ) {
                *g += add;
            }
            // Reported about the sole's centre: τ_sole = τ_centre + (r_centre − r_sole) × F.
            let arm = frames[f.body].rotate([0.0, f.centre[1] - f.sole[1]]);
            wrenches[i] = [w[0], w[1], w[2] + arm[0] * w[1] - arm[1] * w[0]];
        }
        let a = if k < 0 {
            let a = robot.forward_dynamics_holding(&q, &v, &generalized, &held);
            a.into_iter().map(|a| a / settle_mass_share).collect()
        } else {
            robot.forward_dynamics(&q, &v, &generalized)
        };
        for (vi, ai) in v.iter_mut().zip(a.iter()) {
            *vi += dt * ai;
        }
        for (qi, vi) in q.iter_mut().zip(&v) {
            *qi += dt * vi;
        }
        if q.iter().chain(&v).any(|x| !x.is_finite()) {
            return Err(DemError::Unphysical(format!(
                "the robot's state is not finite at t = {t:.4} s"
            )));
        }
        frames = robot.body.frames(&q);
        for (c, h) in heights(&frames).into_iter().enumerate() {
            let sole = h + surface;
            if sole < -grain {
                return Err(DemError::Unphysical(format!(
                    "at t = {t:.4} s contact `{}`'s sole is at z = {sole:.4e} m, below the \
                     container's floor: the grains did not hold it (a deeper bed, or a \
                     smaller time step, may)",
                    robot.contacts[c].name
                )));
            }
        }
        if let Some(&b) = footless.iter().find(|&&b| frames[b].position[1] < 0.0) {
            fell = Some((t + dt, robot.body.bodies[b].name.clone()));
            break;
        }
        if k < 0 && t >= -0.02 - 1e-12 {
            bed_force.0 += forces.iter().map(|f| f.force[2]).sum::<f64>();
            bed_force.1 += 1;
        }
        if k >= 0 {
            let c = robot.body.centre_of_mass_in(&frames);
            if c[1] - start_com[1] > peak {
                peak = c[1] - start_com[1];
                apex_rise = apex_height(&frames) - apex_start;
            }
            deepest = deepest.min(here.iter().fold(f64::INFINITY, |m: f64, &h| m.min(h)));
        }
    }
    let t_last = last_step as f64 * dt;
    samples.push(PlanarDemSample {
        t: t_last,
        q: q.clone(),
        v: v.clone(),
        u: inputs(t_last, &q, &v),
        wrenches,
        heights: heights(&frames),
    });
    let planned_peak = plan
        .x
        .iter()
        .map(|x| plan_com(x)[1] - plan_start[1])
        .fold(0.0, f64::max);
    let planned_distance = plan_com(plan.x.last().expect("nodes"))[0] - plan_start[0];
    let summary = PlanarDemSummary {
        steps: (settle_steps + last_step) as usize,
        time_step_s: dt,
        settle_sink_m: plan_start[1] - start_com[1],
        start_speed_mps: start_speed,
        planned_distance_m: planned_distance,
        achieved_distance_m: end_com.unwrap_or_else(|| robot.body.centre_of_mass_in(&frames))[0]
            - start_com[0],
        planned_com_peak_m: planned_peak,
        achieved_com_peak_m: peak,
        planned_apex_rise_m: settings.apex.map(|_| {
            // At the plan's highest centre of mass, as the reduced-order replay measures it.
            let top = plan
                .x
                .iter()
                .max_by(|a, b| plan_com(a)[1].total_cmp(&plan_com(b)[1]))
                .expect("nodes");
            apex_height(&robot.body.frames(&top[..n]))
                - apex_height(&robot.body.frames(&plan.x[0][..n]))
        }),
        achieved_apex_rise_m: settings.apex.map(|_| apex_rise),
        reached_apex: settings.apex.map(|_| reached_apex && fell.is_none()),
        settled_bed_force_n: if bed_force.1 > 0 {
            bed_force.0 / bed_force.1 as f64
        } else {
            f64::NAN
        },
        robot_weight_n: robot.body.total_mass() * robot.body.gravity,
        deepest_sole_m: deepest,
        fell_at_s: fell.as_ref().map(|f| f.0),
        fell_body: fell.map(|f| f.1),
    };
    Ok(PlanarDemReplay { samples, summary })
}

/// The speed of the centre of mass [m/s].
fn com_speed(robot: &PlanarRobot, frames: &[Frame<f64>], v: &[f64]) -> f64 {
    let [vx, vz] = com_velocity(robot, frames, v);
    vx.hypot(vz)
}

/// The velocity of the centre of mass [m/s]: Σ m_b v(c_b) / M over the bodies' centres of
/// mass.
fn com_velocity(robot: &PlanarRobot, frames: &[Frame<f64>], v: &[f64]) -> [f64; 2] {
    let bodies = &robot.body.bodies;
    let centres: Vec<(usize, [f64; 2])> = bodies
        .iter()
        .enumerate()
        .map(|(b, body)| (b, body.com))
        .collect();
    let mut momentum = [0.0; 2];
    for ((velocity, _), body) in robot
        .body
        .point_twists_in(frames, v, &centres)
        .iter()
        .zip(bodies)
    {
        momentum[0] += body.mass * velocity[0];
        momentum[1] += body.mass * velocity[1];
    }
    let m = robot.body.total_mass();
    [momentum[0] / m, momentum[1] / m]
}
