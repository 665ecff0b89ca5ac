//! Driving a kinematic body down through a prepared bed at constant velocity, recording the
//! grains' force and torque on it against depth (`loam dem intrude`). This is what the
//! terrain models are compared with.

use serde::{Deserialize, Serialize};

use super::backend::{Backend, Body, BodyGeometry, BodyState, Motion};
use super::bed::Checkpoint;
use super::sdf::{Sdf, Vec3};
use super::DemError;

/// How to drive the body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntrudeSettings {
    /// Downward speed [m/s] (> 0).
    pub speed: f64,
    /// Depth of the body's lowest point below the bed's surface at which to stop [m] (> 0).
    pub depth: f64,
    /// Height of the body's lowest point above the surface at the start [m]. Default: one
    /// grain diameter.
    pub start_height: Option<f64>,
    /// Each output row averages the force over this much travel [m]. Default: a fifth of
    /// a grain radius.
    pub sample_travel: Option<f64>,
    /// Coulomb friction between body and grains. Default: the grains' friction.
    pub friction: Option<f64>,
    /// Jacobi iterations per step (projected_jacobi law). Default: the bed scene's.
    pub iterations: Option<usize>,
    /// Δt [s]. Default: the bed scene's. Checked against the contact law's stable step.
    #[serde(default)]
    pub time_step: Option<f64>,
}

/// One output row: the body's depth and the grains' mean force and torque (about the body's
/// origin) over the row's travel. Depth > 0 below the surface; force + z = up.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntrusionSample {
    pub time: f64,
    pub depth: f64,
    pub force: Vec3,
    pub torque: Vec3,
}

/// How far below its origin a body reaches along −z (a convex body's support along −z).
pub fn bottom_extent(geometry: &dyn Sdf) -> f64 {
    let far = 10.0;
    far - geometry.distance([0.0, 0.0, -far])
}

/// How far from its origin a body reaches sideways (the largest support along ±x, ±y).
pub fn side_extent(geometry: &dyn Sdf) -> f64 {
    let far = 10.0;
    [
        [far, 0.0, 0.0],
        [-far, 0.0, 0.0],
        [0.0, far, 0.0],
        [0.0, -far, 0.0],
    ]
    .iter()
    .map(|p| far - geometry.distance(*p))
    .fold(0.0, f64::max)
}

/// A body centred on the container's axis must fit inside it with room for a grain.
pub fn check_fits(
    geometry: &dyn Sdf,
    container: &super::backend::Container,
    grain_diameter: f64,
) -> Result<(), DemError> {
    let reach = side_extent(geometry);
    let room = match *container {
        super::backend::Container::Cylinder { radius } => radius,
        super::backend::Container::Box { half_x, half_y } => half_x.min(half_y),
    };
    if reach + grain_diameter > room {
        return Err(DemError::Invalid(format!(
            "the body reaches {reach:.4} m from the container's axis, but the container's wall \
             is {room:.4} m from it: the body must fit inside with at least a grain diameter \
             ({grain_diameter:.4} m) to spare"
        )));
    }
    Ok(())
}

/// Drives `geometry` (kinematic, translating along −z on the container's axis) into `bed`.
pub fn intrude(
    backend: &mut dyn Backend,
    bed: &Checkpoint,
    geometry: BodyGeometry,
    settings: &IntrudeSettings,
) -> Result<Vec<IntrusionSample>, DemError> {
    let positive = |name: &str, v: f64| {
        if v > 0.0 && v.is_finite() {
            Ok(())
        } else {
            Err(DemError::Invalid(format!(
                "intrusion {name} is {v}; it must be positive"
            )))
        }
    };
    positive("speed", settings.speed)?;
    positive("depth", settings.depth)?;
    let scene = &bed.scene;
    let mut params = scene.step_params_at(settings.time_step)?;
    if let Some(iterations) = settings.iterations {
        params.iterations = iterations;
    }
    check_fits(&geometry, &scene.container, 2.0 * scene.grains.radius)?;
    let dt = params.time_step;
    let r = scene.grains.radius;
    let start = settings.start_height.unwrap_or(2.0 * r);
    let sample_travel = settings.sample_travel.unwrap_or(0.2 * r);
    positive("sample travel", sample_travel)?;
    let surface = bed.info.surface_height;
    if settings.depth >= surface {
        return Err(DemError::Invalid(format!(
            "intrusion depth {} m reaches the container floor: the bed is {surface:.4} m deep \
             (surface to floor); the depth must be less than that",
            settings.depth
        )));
    }
    let bottom = bottom_extent(&geometry);
    let velocity = [0.0, 0.0, -settings.speed];
    let mut state = BodyState {
        position: [0.0, 0.0, surface + start + bottom],
        velocity,
        external_force: [0.0; 3],
        ..BodyState::default()
    };
    let body = Body {
        geometry,
        motion: Motion::Kinematic,
        mass: 1.0,
        friction: settings.friction.unwrap_or(scene.grains.friction),
        state,
    };
    backend.upload(&bed.grains, &scene.container, &[body], &params)?;
    let steps_per_sample = ((sample_travel / (settings.speed * dt)).round() as usize).max(1);
    let total_steps = ((start + settings.depth) / (settings.speed * dt)).ceil() as usize;
    let mut samples = Vec::new();
    let mut step = 0;
    while step < total_steps {
        let mut sum = ([0.0; 3], [0.0; 3]);
        let mut depth_sum = 0.0;
        let count = steps_per_sample.min(total_steps - step);
        for _ in 0..count {
            backend.step(1)?;
            step += 1;
            let f = backend.body_forces()?[0];
            state = backend.bodies()?[0];
            for k in 0..3 {
                sum.0[k] += f.force[k];
                sum.1[k] += f.torque[k];
            }
            depth_sum += surface - (state.position[2] - bottom);
        }
        let c = count as f64;
        samples.push(IntrusionSample {
            time: step as f64 * dt,
            depth: depth_sum / c,
            force: sum.0.map(|x| x / c),
            torque: sum.1.map(|x| x / c),
        });
    }
    Ok(samples)
}

/// CSV with the header `t,depth,F_x,F_y,F_z,tau_x,tau_y,tau_z` (SI units).
pub fn intrusion_csv(samples: &[IntrusionSample]) -> String {
    let mut out = String::from("t,depth,F_x,F_y,F_z,tau_x,tau_y,tau_z\n");
    for s in samples {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{}\n",
            s.time,
            s.depth,
            s.force[0],
            s.force[1],
            s.force[2],
            s.torque[0],
            s.torque[1],
            s.torque[2]
        ));
    }
    out
}
