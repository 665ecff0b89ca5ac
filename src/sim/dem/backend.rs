//! The DEM backend interface: what a CPU or a GPU implementation of the step provides.
//!
//! A backend holds one bed (grains, container walls, bodies) and advances it by whole steps.
//! Everything crosses the interface as structure-of-arrays (`Vec<[f64; 3]>` per field) so a
//! GPU port copies each array to one device buffer.
//!
//! # The projected-Jacobi step (the exact algorithm every backend implements for
//! [`ContactLaw::ProjectedJacobi`]; the Hertz-Mindlin step is stated in `super::hertz`)
//!
//! Notation: grain i has position xᵢ, velocity vᵢ, radius rᵢ, inverse mass wᵢ; Δt is the
//! time step, g the gravity vector, α the stabilisation factor, ω the relaxation, K the number
//! of Jacobi iterations. Grains are spheres that translate only (no spin: see below).
//!
//! 1. **Predict.** vᵢ* = vᵢ + Δt g for every grain. A dynamic body gets
//!    V* = V + Δt (g + F_ext / M); a kinematic body keeps its prescribed velocity.
//! 2. **Broadphase.** The speculative margin of the step is
//!    δ = min(2 r_max, max(contact_margin · r_max, 2 Δt max|vᵢ*|)), so grains that can meet
//!    within the step are in the contact list before they touch. Cell size h = 2 r_max + δ;
//!    cell c(x) = ⌊x / h⌋ (three integers, compared through a key packing each in 21 bits);
//!    bucket = hash(c) mod T with T = the table size (a power of two ≥ 2 N) and
//!    hash(c) = (73856093 cx) ⊕ (19349663 cy) ⊕ (83492791 cz) in wrapping 64-bit integer
//!    arithmetic. Grains are counting-sorted by bucket into ONE array of grain indices
//!    (`cell_start[T + 1]`, `sorted[N]`), stable in grain order, so the layout is unique.
//! 3. **Narrowphase** builds one contact list, ordered by grain a, then by partner key b:
//!    - grain–grain, each pair once: for the half shell of cells around c(x_a) (its own cell,
//!      partners b > a only, and the 13 neighbours after it in (z, y, x) order: offsets
//!      (1,0,0), (−1..1,1,0), (−1..1,−1..1,1)), each grain b of the cell's bucket whose cell is
//!      that cell, with gap ψ = |x_a − x_b| − r_a − r_b < δ; normal n = (x_a − x_b)/|x_a − x_b|;
//!      key b. (So a > b is possible; the pair is unique.)
//!    - grain–wall: the floor z = 0 (n = +z, ψ = z_a − r_a); a cylinder's side
//!      (ψ = R − |x_a,xy| − r_a, n = −x_a,xy/|x_a,xy|); a box's four sides
//!      (ψ = L/2 ∓ x − r_a, n = ∓ axis). Key N + wall index (floor 0, then sides).
//!    - grain–body k: ψ = f_k(x_a − X_k) − r_a with f_k the body's SDF in its frame (bodies
//!      translate only), n = ∇f_k; key N + walls + k. Kept when ψ < δ + Δt |V_k|. Walls keep ψ < δ.
//!
//!    Each contact stores a, b, n, ψ, μ (grain friction, wall friction or the body's friction)
//!    and its impulse λ ∈ ℝ³ (acting on a; −λ acts on b). λ is warm-started with the previous
//!    step's λ of the contact with the same (a, b) key, or −λ of a previous (b, a) contact,
//!    and is 0 for a new contact.
//! 4. **Mass splitting** (Tonge et al. 2012): nᵢ = the number of contacts grain i is in
//!    (a dynamic body: n_k = its contact count, w_k = 1/M_k; walls and kinematic bodies have
//!    zero inverse mass). A contact's effective inverse mass is m_c⁻¹ = w_a n_a + w_b n_b, which makes the Jacobi sweep below a convergent iteration
//!    rather than one that overshoots when a grain has many contacts.
//! 5. **Projected Jacobi, K iterations.** First gather: vᵢ = vᵢ* + wᵢ Σ_c ±λ_c (in the fixed
//!    contact order). Then, for every contact at once (reading only the gathered velocities):
//!      - relative velocity u = v_a − v_b, normal part u_n = n·u, tangential u_t = u − u_n n;
//!      - bias b = max(ψ, 0)/Δt (a speculative contact may close exactly this step; an
//!        overlapping one must not close further);
//!      - λ_n ← max(0, λ_n − ω (u_n + b) / m_c⁻¹);
//!      - λ_t ← λ_t − ω u_t / m_c⁻¹, then scaled back onto the disc |λ_t| ≤ μ λ_n (Coulomb);
//!      - λ = λ_n n + λ_t.
//!
//!    then gather again. The last gather gives the new velocities.
//! 6. **Position correction** (split impulse): the contacts with ψ < −s (s = 0.005 r_max,
//!    `cpu::OVERLAP_SLOP`) get a normal pseudo-impulse κ ≥ 0, solved by max(2, ⌈K/4⌉)
//!    projected-Jacobi iterations from κ = 0 with mass splitting over these contacts only
//!    (n counts a grain's overlapping contacts): κ ← max(0, κ − m_c (n·(p_a − p_b) +
//!    α (ψ + s)/Δt)), then pᵢ = wᵢ Σ ±κ_c n_c (P_k = −Σ κ_c n_c / M_k for a dynamic body).
//!    The pseudo-velocities p move positions but are not kept: overlaps are removed without
//!    adding kinetic energy.
//! 7. **Integrate** (symplectic Euler): xᵢ ← xᵢ + Δt (vᵢ + pᵢ); a body's X ← X + Δt (V + P).
//! 8. **Body forces**: F_k = −Σ_{c on body k} λ_c / Δt (the grains' force on the body over the
//!    step) and torque τ_k = Σ (p_c − X_k) × (−λ_c/Δt) about the body's origin, with contact
//!    point p_c = x_a − n (r_a + min(ψ, 0)/2).
//!
//! One impulse per contact and gathers that each write one grain make the step race-free;
//! with sums in a fixed order it is bit-for-bit repeatable whatever the thread count.
//!
//! Grains do not spin: rotational degrees of freedom would let spheres roll, which
//! real poppy seeds (kidney-shaped) hardly do; the no-spin sphere is the usual cheap stand-in
//! for rolling resistance, and it keeps a contact's effective mass isotropic.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::law::HertzMindlin;
use super::sdf::{Sdf, Shape, Vec3};
use super::DemError;

/// The grains, structure-of-arrays: element i of each vector belongs to grain i.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GrainState {
    pub position: Vec<Vec3>,
    pub velocity: Vec<Vec3>,
    pub radius: Vec<f64>,
    /// 1 / mass; 0 pins a grain.
    pub inverse_mass: Vec<f64>,
    /// ω [rad/s] per grain, or empty for all at rest (the projected-Jacobi law does not spin
    /// grains and leaves it empty).
    #[serde(default)]
    pub angular_velocity: Vec<Vec3>,
}

impl GrainState {
    pub fn len(&self) -> usize {
        self.position.len()
    }

    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Every array has the same length, radii are positive, masses are non-negative.
    pub fn check(&self) -> Result<(), DemError> {
        let n = self.position.len();
        if self.velocity.len() != n
            || self.radius.len() != n
            || self.inverse_mass.len() != n
            || !(self.angular_velocity.is_empty() || self.angular_velocity.len() == n)
        {
            return Err(DemError::Invalid(format!(
                "grain arrays differ in length: {n} positions, {} velocities, {} radii, {} inverse masses, {} angular velocities",
                self.velocity.len(),
                self.radius.len(),
                self.inverse_mass.len(),
                self.angular_velocity.len()
            )));
        }
        if let Some(i) = self
            .radius
            .iter()
            .position(|r| !(*r > 0.0 && r.is_finite()))
        {
            return Err(DemError::Invalid(format!(
                "grain {i} has radius {}; a radius must be positive",
                self.radius[i]
            )));
        }
        Ok(())
    }

    /// Σ ½ m v² over the grains with finite mass.
    pub fn kinetic_energy(&self) -> f64 {
        self.velocity
            .iter()
            .zip(&self.inverse_mass)
            .filter(|(_, w)| **w > 0.0)
            .map(|(v, w)| 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) / w)
            .sum()
    }
}

/// The static container the grains sit in. The floor is z = 0 and the top is open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shape", deny_unknown_fields)]
pub enum Container {
    /// A vertical cylinder about the z axis.
    Cylinder { radius: f64 },
    /// A box centred on the z axis, from −half_x to half_x and −half_y to half_y.
    Box { half_x: f64, half_y: f64 },
}

impl std::fmt::Display for Container {
    /// `a cylinder of radius 0.11 m`, `a box of 0.2 m by 0.1 m`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Container::Cylinder { radius } => write!(f, "a cylinder of radius {radius} m"),
            Container::Box { half_x, half_y } => {
                write!(f, "a box of {} m by {} m", 2.0 * half_x, 2.0 * half_y)
            }
        }
    }
}

impl Container {
    /// Number of walls, floor included: the contact key of wall j is N + j.
    pub fn wall_count(&self) -> usize {
        match self {
            Container::Cylinder { .. } => 2,
            Container::Box { .. } => 5,
        }
    }

    /// Half widths along x and y (a cylinder's radius in both).
    pub fn half_extents(&self) -> [f64; 2] {
        match *self {
            Container::Cylinder { radius } => [radius, radius],
            Container::Box { half_x, half_y } => [half_x, half_y],
        }
    }

    /// Floor area.
    pub fn area(&self) -> f64 {
        match *self {
            Container::Cylinder { radius } => std::f64::consts::PI * radius * radius,
            Container::Box { half_x, half_y } => 4.0 * half_x * half_y,
        }
    }

    /// Whether a sphere of radius `r` at `x` can overlap wall `wall`: a cheap test (no square
    /// root) that lets the step skip [`Container::wall_contact`] for the bulk of the grains.
    pub fn may_touch(&self, wall: usize, x: Vec3, r: f64) -> bool {
        if wall == 0 {
            return x[2] < r;
        }
        match *self {
            Container::Cylinder { radius } => {
                let inner = radius - r;
                inner <= 0.0 || x[0] * x[0] + x[1] * x[1] > inner * inner
            }
            Container::Box { half_x, half_y } => match wall {
                1 | 2 => x[0].abs() > half_x - r,
                _ => x[1].abs() > half_y - r,
            },
        }
    }

    /// Gap ψ (centre distance minus r) and unit normal into the container of wall `wall` for
    /// a sphere of radius `r` at `x`; `None` when the wall does not apply (a cylinder's side
    /// seen from its axis).
    pub fn wall_contact(&self, wall: usize, x: Vec3, r: f64) -> Option<(f64, Vec3)> {
        if wall == 0 {
            return Some((x[2] - r, [0.0, 0.0, 1.0]));
        }
        match *self {
            Container::Cylinder { radius } => {
                let rho = (x[0] * x[0] + x[1] * x[1]).sqrt();
                if rho <= 0.0 {
                    return None;
                }
                Some((radius - rho - r, [-x[0] / rho, -x[1] / rho, 0.0]))
            }
            Container::Box { half_x, half_y } => Some(match wall {
                1 => (half_x - x[0] - r, [-1.0, 0.0, 0.0]),
                2 => (half_x + x[0] - r, [1.0, 0.0, 0.0]),
                3 => (half_y - x[1] - r, [0.0, -1.0, 0.0]),
                _ => (half_y + x[1] - r, [0.0, 1.0, 0.0]),
            }),
        }
    }
}

/// A body's geometry: an analytic shape (which a GPU backend evaluates in a kernel) or any
/// other signed distance field (a gridded mesh SDF, which a GPU backend samples as a grid).
#[derive(Clone)]
pub enum BodyGeometry {
    Shape(Shape),
    Field(Arc<dyn Sdf>),
}

impl std::fmt::Debug for BodyGeometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyGeometry::Shape(shape) => write!(f, "{shape:?}"),
            BodyGeometry::Field(_) => write!(f, "Field(..)"),
        }
    }
}

impl Sdf for BodyGeometry {
    fn distance(&self, p: Vec3) -> f64 {
        match self {
            BodyGeometry::Shape(shape) => shape.distance(p),
            BodyGeometry::Field(field) => field.distance(p),
        }
    }

    fn gradient(&self, p: Vec3) -> Vec3 {
        match self {
            BodyGeometry::Shape(shape) => shape.gradient(p),
            BodyGeometry::Field(field) => field.gradient(p),
        }
    }

    fn bounds(&self) -> Option<(Vec3, Vec3)> {
        match self {
            BodyGeometry::Shape(shape) => shape.bounds(),
            BodyGeometry::Field(field) => field.bounds(),
        }
    }
}

/// How a body moves.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Motion {
    /// Moves with the velocity it is given (`Backend::set_body`), whatever the grains do.
    Kinematic,
    /// Moves under gravity, its external force and the grains' impulses (two-way coupling),
    /// keeping its orientation: a guided body, like the hopper's foot on its rod.
    Dynamic,
    /// Dynamic and free to rotate under the grains' torques and its external torque, with
    /// the given principal moments of inertia [kg m²] about its origin in its own frame.
    /// Only the Hertz-Mindlin law turns bodies.
    Rotating { inertia: Vec3 },
}

impl Motion {
    /// Whether the grains' forces move the body.
    pub fn is_dynamic(&self) -> bool {
        !matches!(self, Motion::Kinematic)
    }
}

/// A rigid body the grains collide with. Its frame has its origin at `state.position` and is
/// turned by `state.orientation` (the projected-Jacobi law keeps every body unturned).
#[derive(Clone, Debug)]
pub struct Body {
    pub geometry: BodyGeometry,
    pub motion: Motion,
    /// Mass [kg] (used when dynamic).
    pub mass: f64,
    /// Coulomb friction coefficient between the body and a grain.
    pub friction: f64,
    pub state: BodyState,
}

/// A body's pose and twist, and the external force and torque applied to it (besides
/// gravity, which every dynamic body feels).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BodyState {
    pub position: Vec3,
    pub velocity: Vec3,
    pub external_force: Vec3,
    /// Unit quaternion (w, x, y, z) from the body frame to the world. Default: identity.
    #[serde(default = "identity")]
    pub orientation: [f64; 4],
    /// Ω [rad/s] in the world frame.
    #[serde(default)]
    pub angular_velocity: Vec3,
    /// External torque about the body's origin, world frame [N m].
    #[serde(default)]
    pub external_torque: Vec3,
}

fn identity() -> [f64; 4] {
    [1.0, 0.0, 0.0, 0.0]
}

impl Default for BodyState {
    fn default() -> Self {
        BodyState {
            position: [0.0; 3],
            velocity: [0.0; 3],
            external_force: [0.0; 3],
            orientation: identity(),
            angular_velocity: [0.0; 3],
            external_torque: [0.0; 3],
        }
    }
}

impl BodyState {
    /// The body's rotation matrix (body frame to world), rows first.
    pub fn rotation(&self) -> [[f64; 3]; 3] {
        let [w, x, y, z] = self.orientation;
        [
            [
                1.0 - 2.0 * (y * y + z * z),
                2.0 * (x * y - w * z),
                2.0 * (x * z + w * y),
            ],
            [
                2.0 * (x * y + w * z),
                1.0 - 2.0 * (x * x + z * z),
                2.0 * (y * z - w * x),
            ],
            [
                2.0 * (x * z - w * y),
                2.0 * (y * z + w * x),
                1.0 - 2.0 * (x * x + y * y),
            ],
        ]
    }

    /// Whether the orientation is the identity.
    pub fn is_unturned(&self) -> bool {
        self.orientation == identity()
    }
}

/// The grains' force and torque (about the body's origin) on a body, averaged over the last
/// step: Σ impulses / Δt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BodyForce {
    pub force: Vec3,
    pub torque: Vec3,
    /// Number of grains touching the body (contacts with a positive normal impulse).
    pub contacts: usize,
}

/// The contact law a step applies.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "law", deny_unknown_fields)]
pub enum ContactLaw {
    /// Soft spheres that spin: Hertz-Mindlin with tangential history ([`super::law`]). Forces
    /// are a property of the material and converge as Δt shrinks. The default.
    HertzMindlin(HertzMindlin),
    /// Hard, non-spinning spheres solved by projected Jacobi (GranularGym, the step in these
    /// docs): fast at a 1 ms step, but the bed's resistance grows with the iteration count,
    /// so its forces are approximate.
    ProjectedJacobi,
}

impl Default for ContactLaw {
    fn default() -> Self {
        ContactLaw::HertzMindlin(HertzMindlin::default())
    }
}

impl ContactLaw {
    /// The name used in scene files and reports.
    pub fn name(&self) -> &'static str {
        match self {
            ContactLaw::HertzMindlin(_) => "hertz_mindlin",
            ContactLaw::ProjectedJacobi => "projected_jacobi",
        }
    }
}

/// Numerical parameters of the step (see the module docs for where each enters).
/// `iterations`, `relaxation`, `stabilisation` and `contact_margin` apply to the
/// projected-Jacobi law only.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepParams {
    /// The contact law.
    #[serde(default)]
    pub law: ContactLaw,
    /// Δt [s].
    pub time_step: f64,
    /// g [m/s²], a vector (normally [0, 0, −9.81]).
    pub gravity: Vec3,
    /// K: projected-Jacobi iterations per step.
    pub iterations: usize,
    /// ω: relaxation of each Jacobi update.
    pub relaxation: f64,
    /// α: fraction of an overlap pushed out per step.
    pub stabilisation: f64,
    /// Grain–grain Coulomb friction coefficient.
    pub friction: f64,
    /// Grain–wall (floor and sides) friction coefficient.
    pub wall_friction: f64,
    /// Speculative contact distance as a fraction of the largest grain radius: pairs closer
    /// than this enter the contact list before they touch.
    pub contact_margin: f64,
}

impl StepParams {
    pub fn check(&self) -> Result<(), DemError> {
        let positive = |name: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(DemError::Invalid(format!(
                    "{name} is {v}; it must be positive"
                )))
            }
        };
        positive("time_step", self.time_step)?;
        if let ContactLaw::HertzMindlin(law) = &self.law {
            law.check()
                .map_err(|(field, message)| DemError::Invalid(format!("{field} {message}")))?;
        }
        positive("relaxation", self.relaxation)?;
        if self.iterations == 0 {
            return Err(DemError::Invalid(
                "iterations is 0; at least 1 is needed".into(),
            ));
        }
        for (name, v) in [
            ("stabilisation", self.stabilisation),
            ("friction", self.friction),
            ("wall_friction", self.wall_friction),
            ("contact_margin", self.contact_margin),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(DemError::Invalid(format!("{name} is {v}; it must be ≥ 0")));
            }
        }
        Ok(())
    }
}

/// Where a step's time went, in seconds, summed since the last `reset_timings`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub broadphase: f64,
    pub narrowphase: f64,
    pub solver: f64,
    /// Position correction (split impulse), integration and body forces.
    pub integrate: f64,
    pub steps: usize,
    /// Contacts summed over the steps (divide by `steps` for the mean).
    pub contacts: usize,
}

/// One DEM implementation. `upload` first, then any sequence of the others.
pub trait Backend {
    /// Replaces the whole bed: grains, container, bodies and step parameters.
    fn upload(
        &mut self,
        grains: &GrainState,
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError>;

    /// How many scenes (independent copies of a bed, each with its own bodies) the backend
    /// steps together. Body index s × (bodies per scene) + k is body k of scene s.
    fn scenes(&self) -> usize {
        1
    }

    /// Uploads one bed per scene (`beds.len()` = [`Backend::scenes`]), or one bed into every
    /// scene: realisations of one bed (copies nudged by an ulp) that step together. Container,
    /// bodies and parameters are the same in every scene. A one-scene backend takes one bed.
    fn upload_scenes(
        &mut self,
        beds: &[&GrainState],
        container: &Container,
        bodies: &[Body],
        params: &StepParams,
    ) -> Result<(), DemError> {
        match beds {
            [one] => self.upload(one, container, bodies, params),
            _ => Err(DemError::Invalid(format!(
                "the {} backend steps one scene; {} beds were given",
                self.name(),
                beds.len()
            ))),
        }
    }

    /// Sets every body's external force (one per body, in body index order), leaving the rest
    /// of its state: what a robot coupling writes each step.
    fn set_external_forces(&mut self, forces: &[Vec3]) -> Result<(), DemError> {
        set_external_forces_by_body(self, forces)
    }

    /// Changes the step parameters (e.g. Δt) of the bed in place.
    fn set_params(&mut self, params: &StepParams) -> Result<(), DemError>;

    /// Sets body `index`'s position, velocity and external force (a kinematic body's drive,
    /// or the leg's force on a dynamic foot).
    fn set_body(&mut self, index: usize, state: BodyState) -> Result<(), DemError>;

    /// Sets bodies 0, 1, … to `states` (one per body, in body index order, as `set_body`
    /// does each): what a coupling of kinematic feet writes each step. The default is
    /// `set_body` body by body; a GPU backend writes each field of all bodies in one transfer.
    fn set_bodies(&mut self, states: &[BodyState]) -> Result<(), DemError> {
        for (index, state) in states.iter().enumerate() {
            self.set_body(index, *state)?;
        }
        Ok(())
    }

    /// Advances `steps` steps.
    fn step(&mut self, steps: usize) -> Result<(), DemError>;

    /// Copies the grains back.
    fn grains(&self) -> Result<GrainState, DemError>;

    /// The bodies' states.
    fn bodies(&self) -> Result<Vec<BodyState>, DemError>;

    /// The grains' force on each body over the last step.
    fn body_forces(&self) -> Result<Vec<BodyForce>, DemError>;

    /// Time spent per phase since the last reset.
    fn timings(&self) -> Timings;

    fn reset_timings(&mut self);

    /// A short name for reports ("cpu", "cuda").
    fn name(&self) -> &'static str;
}

/// [`Backend::set_external_forces`] through `bodies` and `set_body`, one body at a time: the
/// default, and what a backend without a bulk write falls back on.
pub fn set_external_forces_by_body<B: Backend + ?Sized>(
    backend: &mut B,
    forces: &[Vec3],
) -> Result<(), DemError> {
    let bodies = backend.bodies()?;
    if bodies.len() != forces.len() {
        return Err(DemError::Invalid(format!(
            "{} external forces for {} bodies",
            forces.len(),
            bodies.len()
        )));
    }
    for (index, (mut body, force)) in bodies.into_iter().zip(forces).enumerate() {
        body.external_force = *force;
        backend.set_body(index, body)?;
    }
    Ok(())
}
