//! The CPU step of the Hertz-Mindlin law ([`super::law`]): soft spheres that spin, bodies
//! that turn, velocity Verlet, a Verlet neighbour list.
//!
//! # The step
//!
//! Grain i: position xᵢ, velocity vᵢ, spin ωᵢ, radius rᵢ, mass mᵢ, moment of inertia
//! Iᵢ = (2/5) mᵢ rᵢ²; Fᵢ, Tᵢ the force and torque of the previous step.
//!
//! 1. **Kick and drift.** vᵢ ← vᵢ + (Δt/2) Fᵢ/mᵢ, ωᵢ ← ωᵢ + (Δt/2) Tᵢ/Iᵢ, xᵢ ← xᵢ + Δt vᵢ.
//!    Bodies likewise (a kinematic body moves with its given V and Ω; a `Dynamic` one keeps
//!    its orientation; a `Rotating` one turns: Ω ← Ω + (Δt/2) I_w⁻¹ T with the world-frame
//!    inertia I_w = R I Rᵀ, gyroscopic term left out, q ← normalise(q + (Δt/2) (0, Ω) ⊗ q)).
//! 2. **Neighbour list.** Rebuilt when a grain has moved more than half the skin s = 0.4 r_max
//!    since the last build (so no pair closer than r_a + r_b can be missing): every pair a < b
//!    with |x_a − x_b| < r_a + r_b + s, found through a spatial hash of cells of size
//!    2 r_max + s (the PJ backend's hash, 27 cells searched). Each grain's pairs are sorted by
//!    b; a pair keeps its tangential spring from the previous list.
//! 3. **Pair forces**, for every listed pair at once: the law's force when the spheres
//!    overlap, nothing (and the spring cleared) when they do not.
//! 4. **Gather** per grain, in a fixed order (its pairs as a, summed by the pair loop, then
//!    as b, then walls, then bodies): Fᵢ = mᵢ g + Σ contact forces, Tᵢ = Σ contact torques
//!    (the CUDA twin adds the pairs as a one by one onto mᵢ g: the sums differ by round-off). Walls (floor, sides) and
//!    bodies are evaluated here, each with a spring per grain. A body's surface is its SDF in
//!    its own frame: ψ = f(Rᵀ(x − X)) − r, normal R ∇f.
//! 5. **Kick** (a grain's right after its gather). vᵢ ← vᵢ + (Δt/2) Fᵢ/mᵢ,
//!    ωᵢ ← ωᵢ + (Δt/2) Tᵢ/Iᵢ; a dynamic body's kick with
//!    F = −Σ (grain forces from it) + M g + F_ext and the torque about its origin.
//!
//! Every loop writes only its own element and sums run in a fixed order: a step is
//! bit-for-bit repeatable for any thread count.
//!
//! # Speed
//!
//! At upload the grains are put in the order of a Morton curve through their cells (and put
//! back in the caller's order on the way out), so that a grain's partners are mostly a few
//! cache lines from it: 6 % faster on the shipped 14k-grain bed, 14-30 % on a 66k one. Grains
//! of a bed at rest or a replay move little, so the order is not refreshed. The pair loop
//! sums grain a's share of its pairs on the spot and leaves only b's share in `pair_out`; the
//! closing kick rides on the gather, and the displacement test on the opening kick, so a step
//! is three parallel passes.
//!
//! # Files
//!
//! `upload.rs`: the upload (the Morton order), parameters and read-back; `step.rs`: the step
//! and the half-kicks; `neighbours.rs`: the neighbour list (2); `forces.rs`: forces, gather
//! and kick (3-5).

use super::backend::{Body, BodyForce, Container, GrainState, Motion, StepParams, Timings};
use super::law::LawConstants;
use super::sdf::Vec3;
use super::DemError;

const GRAIN_CHUNK: usize = 512;
/// The neighbour list's skin as a fraction of the largest radius.
pub const SKIN: f64 = 0.4;

/// The error of a step whose displacement test found a position that is not finite.
pub const EXPLODED: &str = "a grain's position is no longer finite: the bed exploded (is the \
                            time step above the contact law's stable step?)";

/// What the Hertz-Mindlin step needs of the bodies, on any backend: a dynamic body has a
/// positive mass, a rotating one positive moments of inertia.
pub fn check_bodies(bodies: &[Body]) -> Result<(), DemError> {
    for (k, body) in bodies.iter().enumerate() {
        if body.motion.is_dynamic() && !(body.mass > 0.0 && body.mass.is_finite()) {
            return Err(DemError::Invalid(format!(
                "body {k} is dynamic with mass {}; its mass must be positive",
                body.mass
            )));
        }
        if let Motion::Rotating { inertia } = body.motion {
            if !inertia.iter().all(|i| *i > 0.0 && i.is_finite()) {
                return Err(DemError::Invalid(format!(
                    "body {k} rotates with moments of inertia {inertia:?}; each must \
                     be positive"
                )));
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, Default)]
struct Packed {
    x: Vec3,
    r: f64,
    v: Vec3,
    m: f64,
    w: Vec3,
}

/// What a pair leaves for its grain b (a's share is summed in the pair loop itself): the
/// force on a, which b feels negated, and the torque on b.
#[derive(Clone, Copy, Debug, Default)]
struct PairOut {
    force: Vec3,
    torque_b: Vec3,
}

/// A grain's contact with a body this step: force on the body, torque about its origin.
#[derive(Clone, Copy, Debug, Default)]
struct BodyContact {
    force: Vec3,
    torque: Vec3,
    touching: bool,
}

#[derive(Default)]
pub struct HertzCpu {
    /// The grains in the step's own order: sorted along a Morton curve of their cells at
    /// upload, so that a grain's neighbours lie near it in memory. `order[k]` is the caller's
    /// index of grain k; every array below is in the step's order, and what leaves the step
    /// (grains, grain forces) is put back in the caller's.
    order: Vec<u32>,
    grains: GrainState,
    mass: Vec<f64>,
    inverse_inertia: Vec<f64>,
    force: Vec<Vec3>,
    torque: Vec<Vec3>,
    /// What the contacts read of each grain, packed into one record so that a partner's
    /// data is one or two cache lines: position, radius, mass and the velocities the
    /// damping sees, v̂ = v(n+½) + (Δt/2) F(n)/m and likewise ω̂ (the end of the step
    /// predicted with the last force).
    pack: Vec<Packed>,
    /// A body's predicted velocity and spin.
    predicted_body: Vec<(Vec3, Vec3)>,
    container: Option<Container>,
    walls: usize,
    bodies: Vec<Body>,
    body_reach: Vec<f64>,
    body_force: Vec<Vec3>,
    body_torque: Vec<Vec3>,
    params: Option<StepParams>,
    law: Option<LawConstants>,
    max_radius: f64,
    skin: f64,

    /// Positions at the last neighbour-list build.
    reference: Vec<Vec3>,
    pair_start: Vec<u32>,
    pair_b: Vec<u32>,
    pair_spring: Vec<Vec3>,
    pair_out: Vec<PairOut>,
    /// Each grain's sum over its pairs as a (force, torque), written by the pair loop.
    pair_sum: Vec<(Vec3, Vec3)>,
    /// Pairs in which grain i is b: partner_list[partner_start[i]..partner_start[i + 1]].
    partner_start: Vec<u32>,
    partner_list: Vec<u32>,
    /// Springs of grain–wall (grain-major, `walls` per grain) and grain–body contacts
    /// (body-major, one per grain).
    wall_spring: Vec<Vec3>,
    body_spring: Vec<Vec3>,
    body_contact: Vec<BodyContact>,
    forces: Vec<BodyForce>,
    /// Grain–grain pairs in contact this step.
    touching: usize,
    builds: usize,
    timings: Timings,
}

fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn scale(a: Vec3, s: f64) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn mat_vec(m: &[[f64; 3]; 3], v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[0][1] * v[1] + m[0][2] * v[2],
        m[1][0] * v[0] + m[1][1] * v[1] + m[1][2] * v[2],
        m[2][0] * v[0] + m[2][1] * v[1] + m[2][2] * v[2],
    ]
}

fn mat_t_vec(m: &[[f64; 3]; 3], v: Vec3) -> Vec3 {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

/// q ← normalise(q + dt/2 (0, Ω) ⊗ q): the orientation turned by Ω over dt.
pub fn turn(q: [f64; 4], omega: Vec3, dt: f64) -> [f64; 4] {
    let [w, x, y, z] = q;
    let [a, b, c] = omega;
    let h = 0.5 * dt;
    let r = [
        w - h * (a * x + b * y + c * z),
        x + h * (a * w + b * z - c * y),
        y + h * (b * w + c * x - a * z),
        z + h * (c * w + a * y - b * x),
    ];
    let n = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]).sqrt();
    [r[0] / n, r[1] / n, r[2] / n, r[3] / n]
}

mod forces;
mod neighbours;
mod step;
mod upload;
