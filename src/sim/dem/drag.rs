//! Driving a kinematic body along a planar path through a prepared bed (the wrench-space `dem`
//! generator's driver, docs/WRENCH_SPACE.md section 1 "Data"): straight down from above the
//! surface to a start pose, then at a constant twist, recording the grains' force and torque
//! about a reference point fixed in the body. [`super::intrude`] is the same machinery for a
//! body that only goes down.
//!
//! Planar conventions: the motion is in the world's x–z plane (z up); a tilt φ turns the body
//! counter-clockwise, +x toward +z, which is a rotation about −y; a planar angular velocity ω is
//! the world vector (0, −ω, 0) and a planar torque τ is −τ_y.

use super::backend::{Backend, Body, BodyGeometry, BodyState, Motion};
use super::bed::Checkpoint;
use super::sdf::Vec3;
use super::DemError;

/// The pose of the reference point: position (x, z) in the world [m] and tilt φ [rad].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanarPose {
    pub x: f64,
    pub z: f64,
    pub tilt: f64,
}

/// One run: where the reference point starts, the twist it then keeps, for how long.
#[derive(Clone, Debug)]
pub struct DragPlan {
    /// The reference point in the body frame [m].
    pub reference: Vec3,
    /// Where the straight descent to `start` begins (same x and tilt as `start`, higher);
    /// `None` places the body at `start` directly (it must then be clear of the grains).
    pub approach_from: Option<PlanarPose>,
    /// Descent speed of the approach [m/s].
    pub approach_speed: f64,
    /// The pose at which the twist starts (time 0).
    pub start: PlanarPose,
    /// (v_x [m/s], v_z [m/s], ω [rad/s]) of the reference point.
    pub twist: [f64; 3],
    /// How long the twist is kept [s].
    pub duration: f64,
    /// Coulomb friction between body and grains.
    pub friction: f64,
    /// Δt [s].
    pub time_step: f64,
}

/// The grains' force on the body and torque about the reference point over one step of the
/// twist phase, planar parts in the x–z plane (τ counter-clockwise), with what leaves the
/// plane for checking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DragSample {
    /// Time since the twist started, at the end of the step [s].
    pub time: f64,
    /// (F_x, F_z, τ) [N, N, N m].
    pub wrench: [f64; 3],
    /// (F_y, τ_x, τ_z): zero for a body symmetric about the plane, up to the grains' scatter.
    pub out_of_plane: [f64; 3],
}

impl PlanarPose {
    /// The body's rotation about −y by the tilt, as a unit quaternion (w, x, y, z).
    pub fn orientation(&self) -> [f64; 4] {
        let (s, c) = (0.5 * self.tilt).sin_cos();
        [c, 0.0, -s, 0.0]
    }

    /// A body-frame point (a, ·, c) in the world: R (a, b, c) with R the tilt.
    pub fn to_world(&self, p: Vec3) -> Vec3 {
        let (s, c) = self.tilt.sin_cos();
        [p[0] * c - p[2] * s, p[1], p[0] * s + p[2] * c]
    }

    /// Where the body's origin is when its reference point `reference` (body frame) is here.
    pub fn body_origin(&self, reference: Vec3) -> Vec3 {
        let r = self.to_world(reference);
        [self.x - r[0], -r[1], self.z - r[2]]
    }

    /// This pose moved by `twist` for `time`.
    pub fn moved(&self, twist: [f64; 3], time: f64) -> PlanarPose {
        PlanarPose {
            x: self.x + twist[0] * time,
            z: self.z + twist[1] * time,
            tilt: self.tilt + twist[2] * time,
        }
    }
}

/// Drives `geometry` through `bed` along `plan`; returns one sample per step of the twist
/// phase. The body's pose is set exactly at the start of every step (no drift), with the
/// velocity that takes its origin to the next step's pose.
pub fn drag(
    backend: &mut dyn Backend,
    bed: &Checkpoint,
    geometry: BodyGeometry,
    plan: &DragPlan,
) -> Result<Vec<DragSample>, DemError> {
    if !(plan.duration > 0.0 && plan.time_step > 0.0 && plan.approach_speed > 0.0) {
        return Err(DemError::Invalid(format!(
            "a drag needs a positive duration ({} s), time step ({} s) and approach speed \
             ({} m/s)",
            plan.duration, plan.time_step, plan.approach_speed
        )));
    }
    let mut params = bed.scene.step_params();
    params.time_step = plan.time_step;
    let dt = plan.time_step;
    let first = plan.approach_from.unwrap_or(plan.start);
    let body = Body {
        geometry,
        motion: Motion::Kinematic,
        mass: 1.0,
        friction: plan.friction,
        state: state_at(first, first, plan.reference, [0.0; 3], dt),
    };
    backend.upload(&bed.grains, &bed.scene.container, &[body], &params)?;
    if let Some(from) = plan.approach_from {
        let drop = from.z - plan.start.z;
        let steps = (drop / (plan.approach_speed * dt)).ceil().max(1.0) as usize;
        let speed = drop / (steps as f64 * dt);
        let down = [0.0, -speed, 0.0];
        for k in 0..steps {
            let pose = from.moved(down, k as f64 * dt);
            let next = from.moved(down, (k + 1) as f64 * dt);
            backend.set_body(0, state_at(pose, next, plan.reference, down, dt))?;
            backend.step(1)?;
        }
    }
    let steps = (plan.duration / dt).round().max(1.0) as usize;
    let mut samples = Vec::with_capacity(steps);
    for k in 0..steps {
        let pose = plan.start.moved(plan.twist, k as f64 * dt);
        let next = plan.start.moved(plan.twist, (k + 1) as f64 * dt);
        backend.set_body(0, state_at(pose, next, plan.reference, plan.twist, dt))?;
        backend.step(1)?;
        let origin = next.body_origin(plan.reference);
        let reference = [next.x, 0.0, next.z];
        let f = backend.body_forces()?[0];
        // The backend's torque is about the body's origin: move it to the reference point.
        let arm = [
            origin[0] - reference[0],
            origin[1] - reference[1],
            origin[2] - reference[2],
        ];
        let torque = [
            f.torque[0] + arm[1] * f.force[2] - arm[2] * f.force[1],
            f.torque[1] + arm[2] * f.force[0] - arm[0] * f.force[2],
            f.torque[2] + arm[0] * f.force[1] - arm[1] * f.force[0],
        ];
        samples.push(DragSample {
            time: (k + 1) as f64 * dt,
            wrench: [f.force[0], f.force[2], -torque[1]],
            out_of_plane: [f.force[1], torque[0], torque[2]],
        });
    }
    Ok(samples)
}

/// The body's state at `pose`, moving so that its origin reaches `next`'s in one step and
/// turning at the twist's ω (about −y).
fn state_at(
    pose: PlanarPose,
    next: PlanarPose,
    reference: Vec3,
    twist: [f64; 3],
    dt: f64,
) -> BodyState {
    let (from, to) = (pose.body_origin(reference), next.body_origin(reference));
    BodyState {
        position: from,
        velocity: [
            (to[0] - from[0]) / dt,
            (to[1] - from[1]) / dt,
            (to[2] - from[2]) / dt,
        ],
        orientation: pose.orientation(),
        angular_velocity: [0.0, -twist[2], 0.0],
        ..BodyState::default()
    }
}

/// The mean of the samples' wrenches with time in [from, to] (a moving average read at the
/// window's centre).
pub fn window_mean(samples: &[DragSample], from: f64, to: f64) -> Option<[f64; 3]> {
    let inside: Vec<&DragSample> = samples
        .iter()
        .filter(|s| s.time >= from && s.time <= to)
        .collect();
    if inside.is_empty() {
        return None;
    }
    let n = inside.len() as f64;
    let mut mean = [0.0; 3];
    for s in inside {
        for c in 0..3 {
            mean[c] += s.wrench[c] / n;
        }
    }
    Some(mean)
}
