//! The robot's feet as solids in the bed: their shapes from the settings, where the plan's
//! path puts them in the container, and their poses and twists from the robot's state.

use super::{GrainFoot, PlanarDemSettings};
use crate::model::multibody::Frame;
use crate::model::planar::PlanarRobot;
use crate::sim::dem::backend::BodyState;
use crate::sim::dem::sdf::Shape;
use crate::sim::dem::{Container, DemError};
use crate::sim::planar::PlanTable;

/// A foot on the grains: its body, its centre and sole in the body's frame, its half extents
/// (along the sole, across the plane, up) and its solid.
pub(super) struct Foot {
    pub body: usize,
    pub centre: [f64; 2],
    pub sole: [f64; 2],
    pub half: [f64; 3],
    pub shape: Shape,
}

/// Every contact's foot, in the robot's contact order (`settings.feet`, a box where empty).
pub(super) fn feet(
    robot: &PlanarRobot,
    settings: &PlanarDemSettings,
) -> Result<Vec<Foot>, DemError> {
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
    Ok(feet)
}

/// The shift along x that centres the feet's path over the plan's nodes in the container
/// (world x = planar x − shift); an error when a foot at its farthest does not fit with a
/// grain's clearance.
pub(super) fn centring_shift(
    robot: &PlanarRobot,
    plan: &PlanTable,
    feet: &[Foot],
    container: &Container,
    grain: f64,
) -> Result<f64, DemError> {
    let n = robot.body.n_q();
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
    let [half_x, half_y] = container.half_extents();
    // With a grain's clearance: a disc's rim and a box's far corner within a cylinder's
    // radius; the half extents within a box's.
    let clear = 2.0 * grain;
    let fits = feet.iter().zip(&spans).all(|(foot, &(a, b))| {
        let far = (a - shift).abs().max((b - shift).abs());
        let along = far + foot.half[0] + clear;
        let across = foot.half[1] + clear;
        match (container, &foot.shape) {
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
    Ok(shift)
}

/// The feet's body states from the robot's frames at q and its velocities v: world x =
/// planar x − `shift`, z = `surface` + planar z; a body angle φ turns the solid about −y.
pub(super) fn box_states(
    robot: &PlanarRobot,
    feet: &[Foot],
    frames: &[Frame<f64>],
    v: &[f64],
    shift: f64,
    surface: f64,
) -> Vec<BodyState> {
    let centres: Vec<(usize, [f64; 2])> = feet.iter().map(|f| (f.body, f.centre)).collect();
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
}

/// Each sole's height above the surface.
pub(super) fn heights(feet: &[Foot], frames: &[Frame<f64>]) -> Vec<f64> {
    feet.iter()
        .map(|f| frames[f.body].transform(f.sole)[1])
        .collect()
}
