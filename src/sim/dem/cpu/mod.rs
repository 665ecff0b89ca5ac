//! The CPU backend: the step of [`super::backend`] with rayon across grains and contacts.
//!
//! Choices (see the backend docs for the algorithm):
//! - every parallel loop writes only its own element (a grain's velocity, a contact's impulse)
//!   and every sum runs in the contact order, so a step is bit-for-bit repeatable for any
//!   thread count;
//! - contacts are kept as an array of small structs (the update reads all their fields), the
//!   grain state as structure-of-arrays;
//! - grain–body contacts evaluate the body's SDF (its gradient by central differences for
//!   shapes without an analytic one) only for grains inside the body's bounding sphere.
//!
//! Files: `step.rs` (the step; predict, broadphase, narrowphase), `solve.rs` (the Jacobi
//! solve, the position correction, the body forces), `backend.rs` (the `Backend`
//! implementations, [`CpuBackend`] among them).

use super::backend::{Body, BodyForce, Container, GrainState, StepParams, Timings};
use super::sdf::{Sdf, Vec3};

/// Grains per rayon task in the per-grain loops (big enough to amortise the task overhead).
const GRAIN_CHUNK: usize = 512;

/// Overlap left alone by the stabilisation, as a fraction of the largest radius: pushing out
/// the last fraction of a percent makes an unconverged Jacobi sweep jitter a resting pile
/// (the same reason Box2D keeps a "linear slop").
pub const OVERLAP_SLOP: f64 = 0.005;

#[derive(Clone, Copy, Debug, Default)]
struct Contact {
    /// Grain a (the impulse acts on it).
    a: u32,
    /// Partner key: a grain index < N, N + wall, or N + walls + body.
    b: u32,
    /// Unit normal pointing from b towards a.
    normal: Vec3,
    /// ψ: gap (negative when overlapping).
    gap: f64,
    friction: f64,
    /// 1 / m_c⁻¹ (mass-split effective mass).
    effective_mass: f64,
    /// b: the normal velocity bias, max(ψ, 0)/Δt (a speculative contact may close).
    bias: f64,
    /// λ: accumulated impulse on a.
    impulse: Vec3,
}

/// The projected-Jacobi step on the CPU (the law [`ContactLaw::ProjectedJacobi`](super::ContactLaw::ProjectedJacobi)).
#[derive(Default)]
pub struct JacobiCpu {
    grains: GrainState,
    container: Option<Container>,
    bodies: Vec<Body>,
    /// Bounding radius of each body's geometry around its origin (f64::INFINITY: unbounded).
    body_reach: Vec<f64>,
    params: Option<StepParams>,
    max_radius: f64,
    /// This step's speculative contact distance (grain–grain and grain–wall).
    margin: f64,

    predicted: Vec<Vec3>,
    // Spatial hash (counting sort by bucket): grains of bucket k are
    // sorted[cell_start[k]..cell_start[k + 1]].
    cell_of: Vec<u64>,
    bucket_of: Vec<u32>,
    cell_start: Vec<u32>,
    sorted: Vec<u32>,
    /// Cell key, position and radius of sorted[k], stored in bucket order so the
    /// narrowphase reads a bucket's grains from contiguous memory.
    sorted_key: Vec<u64>,
    sorted_position: Vec<Vec3>,
    sorted_radius: Vec<f64>,
    /// λ of each contact while the solver runs (copied back into `contacts` after it).
    impulse: Vec<Vec3>,

    contacts: Vec<Contact>,
    /// Contacts of grain a are contacts[contact_start[a]..contact_start[a + 1]].
    contact_start: Vec<u32>,
    previous: Vec<Contact>,
    previous_start: Vec<u32>,
    /// CSR of the contacts in which a grain is partner b.
    partner_start: Vec<u32>,
    partner_list: Vec<u32>,
    /// Contacts of each body.
    body_contacts: Vec<Vec<u32>>,
    contact_count: Vec<u32>,

    /// Split-impulse position correction: the overlapping contacts, their pseudo-impulses,
    /// effective masses, and each grain's incidence (contact, sign) in CSR form.
    deep: Vec<u32>,
    deep_impulse: Vec<f64>,
    deep_mass: Vec<f64>,
    deep_start: Vec<u32>,
    deep_list: Vec<(u32, f64)>,
    deep_body: Vec<Vec<u32>>,
    pseudo: Vec<Vec3>,
    pseudo_body: Vec<Vec3>,
    velocity_body: Vec<Vec3>,
    predicted_body: Vec<Vec3>,
    forces: Vec<BodyForce>,
    timings: Timings,
}

mod backend;
mod scenes;
mod solve;
mod step;

pub use backend::CpuBackend;
pub use scenes::CpuScenes;

/// The own cell and the 13 neighbour cells that follow it in (z, y, x) order.
const HALF_SHELL: [(i64, i64, i64); 14] = [
    (0, 0, 0),
    (1, 0, 0),
    (-1, 1, 0),
    (0, 1, 0),
    (1, 1, 0),
    (-1, -1, 1),
    (0, -1, 1),
    (1, -1, 1),
    (-1, 0, 1),
    (0, 0, 1),
    (1, 0, 1),
    (-1, 1, 1),
    (0, 1, 1),
    (1, 1, 1),
];

/// Iterations of the position correction: a quarter of the velocity solve's (at least 2).
/// It only has to remove a fraction α of each overlap, not converge.
pub fn position_iterations(iterations: usize) -> usize {
    iterations.div_ceil(4).max(2)
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(super) fn cell_of(x: Vec3, h: f64) -> [i64; 3] {
    [
        (x[0] / h).floor() as i64,
        (x[1] / h).floor() as i64,
        (x[2] / h).floor() as i64,
    ]
}

/// The three cell coordinates packed into one integer (21 bits each, wrapping): equal keys
/// are equal cells for any bed smaller than 2²¹ cells across.
pub(super) fn cell_key(c: [i64; 3]) -> u64 {
    let m = (1u64 << 21) - 1;
    ((c[0] as u64) & m) | (((c[1] as u64) & m) << 21) | (((c[2] as u64) & m) << 42)
}

pub(super) fn hash(c: [i64; 3]) -> u64 {
    (c[0] as u64).wrapping_mul(73856093)
        ^ (c[1] as u64).wrapping_mul(19349663)
        ^ (c[2] as u64).wrapping_mul(83492791)
}

/// The radius of a sphere about the body's origin that holds the body: found by walking out
/// along the axes and diagonals until the SDF is positive and then adding it (an SDF bounds
/// the distance to the surface, so origin-distance + f(p) ≥ every surface point's distance
/// in that direction). Generous by design; only used to skip far grains.
pub(super) fn bounding_radius(body: &Body) -> f64 {
    let g = &body.geometry;
    let mut reach: f64 = 0.0;
    let dirs: [Vec3; 14] = [
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
        [1.0, 1.0, 1.0],
        [1.0, 1.0, -1.0],
        [1.0, -1.0, 1.0],
        [1.0, -1.0, -1.0],
        [-1.0, 1.0, 1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [-1.0, -1.0, -1.0],
    ];
    // Far away, |p| − f(p) bounds the body's extent in every direction (f is 1-Lipschitz).
    let far = 1e3;
    for d in dirs {
        let n = super::sdf::normalized(d);
        let p = [n[0] * far, n[1] * far, n[2] * far];
        let f = g.distance(p);
        reach = reach.max(far - f);
    }
    if !(reach.is_finite()) || reach > 0.9 * far {
        return f64::INFINITY;
    }
    // Corners of a box lie off those 14 rays; the Lipschitz bound above already accounts for
    // them only approximately, so pad by the gap between ray and corner.
    reach * 3f64.sqrt()
}
