//! A bed's description, read from YAML: container, grains, gravity, step and settling.
//!
//! ```yaml
//! container: { shape: cylinder, radius: 0.11 }
//! grains: { radius: 0.003, size_spread: 0.1, density: 1000, friction: 0.5,
//!           fill_height: 0.08, seed: 1 }
//! ```
//! Every other field has a documented default (see the structs below). A scene may name a
//! material (`material: poppy_seeds`, [`super::material`]) for its grain and law parameters,
//! and place fill regions, walls and a rough floor ([`super::layout`]); the file is read by
//! [`super::scene_file`].

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::backend::{ContactLaw, Container, StepParams};
use super::law;
use super::layout::{Fill, RoughFloor, Wall};
use super::DemError;

/// A bed scene. `deny_unknown_fields` everywhere: a misspelt field is an error, not a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// The material the grain and law parameters came from (its name), if the file named
    /// one. Values written in the scene override the material's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub material: Option<String>,
    /// The container; its floor is z = 0.
    pub container: Container,
    pub grains: GrainSpec,
    /// g [m/s²], pointing down −z. Default 9.81.
    #[serde(default = "default_gravity")]
    pub gravity: f64,
    /// The contact law and its material: `{law: hertz_mindlin, youngs_modulus, poisson_ratio,
    /// restitution, rolling_friction}` (the default) or `{law: projected_jacobi}` (hard
    /// contacts, tuned by `solver`).
    #[serde(default)]
    pub contact: ContactLaw,
    /// Δt [s]. Default: 0.1 of the Rayleigh time of the smallest grain for hertz_mindlin
    /// (and at most 0.125 of it is accepted), 1e-3 for projected_jacobi (GranularGym's step).
    #[serde(default)]
    pub time_step: Option<f64>,
    /// Projected-Jacobi settings (law projected_jacobi only).
    #[serde(default)]
    pub solver: Option<SolverSettings>,
    #[serde(default)]
    pub settle: SettleSettings,
    /// Footprints poured with grains instead of the whole container (then `grains.count`
    /// and `grains.fill_height` are left out). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fills: Vec<Fill>,
    /// Vertical plane walls across the container, each with its friction, removed at a
    /// given time when it is a gate. Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub walls: Vec<Wall>,
    /// A layer of fixed grains on the floor. Default: none (a flat floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rough_floor: Option<RoughFloor>,
}

/// The grains: radius r, uniform size spread, density, friction, how many, where from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrainSpec {
    /// Mean radius [m].
    pub radius: f64,
    /// Radii are uniform in r (1 ± size_spread). Default 0 (monodisperse); must be in [0, 0.5).
    #[serde(default)]
    pub size_spread: f64,
    /// Grain material density [kg/m³].
    pub density: f64,
    /// Grain–grain Coulomb friction coefficient.
    pub friction: f64,
    /// Grain–wall friction coefficient. Default: the grains' friction.
    #[serde(default)]
    pub wall_friction: Option<f64>,
    /// Number of grains. Give this or `fill_height`.
    #[serde(default)]
    pub count: Option<usize>,
    /// Height [m] the settled bed should reach: count = height · area · 0.6 / grain volume.
    #[serde(default)]
    pub fill_height: Option<f64>,
    /// Seed of the pouring's random jitter and radii. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
}

/// Projected-Jacobi settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverSettings {
    /// Jacobi iterations per step. Default 20. Jacobi passes a load one contact per
    /// iteration, so a deep bed needs enough of them for the stabilisation not to feed
    /// energy in: a 9-layer bed boils (grains at 0.15 m/s for good) with 10 iterations and
    /// α = 0.2, and comes to rest with 15-20 iterations, or with 10 and α = 0.05.
    pub iterations: usize,
    /// ω, relaxation of each update. Default 1: mass splitting already makes the Jacobi
    /// sweep convergent, and ω < 1 only slows it.
    pub relaxation: f64,
    /// α: fraction of an overlap pushed out per step. Default 0.1 (larger values push grains
    /// apart faster than an unconverged Jacobi sweep holds them, and the bed boils).
    pub stabilisation: f64,
    /// Speculative contact distance as a fraction of the largest radius. Default 0.1.
    pub contact_margin: f64,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            iterations: 20,
            relaxation: 1.0,
            stabilisation: 0.1,
            contact_margin: 0.1,
        }
    }
}

/// How `loam dem prepare` settles a poured bed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SettleSettings {
    /// Settled when the mean kinetic energy per grain is below this [J]. Default 1e-9
    /// (a 3 mm poppy-density grain moving at about 3 mm/s).
    pub kinetic_energy: f64,
    /// Give up settling after this much simulated time [s]. Default 10.
    pub max_time: f64,
    /// Loosen the top layer of this thickness [m] after settling: its grains are lifted by a
    /// random fraction of a diameter and the bed is settled again. Default 0 (off).
    pub loosen_depth: f64,
}

impl Default for SettleSettings {
    fn default() -> Self {
        SettleSettings {
            kinetic_energy: 1e-9,
            max_time: 10.0,
            loosen_depth: 0.0,
        }
    }
}

fn default_gravity() -> f64 {
    9.81
}
/// The projected-Jacobi law's default step [s].
pub const JACOBI_TIME_STEP: f64 = 1e-3;
fn default_seed() -> u64 {
    1
}

/// The random-loose volume fraction assumed when a fill height is turned into a count.
pub const FILL_FRACTION: f64 = 0.6;

impl Scene {
    /// Reads and validates a scene file.
    pub fn load(path: &Path) -> Result<Scene, DemError> {
        let text = std::fs::read_to_string(path).map_err(|source| DemError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Scene::parse(&text, path)
    }

    /// Parses and validates scene text; `origin` names it in errors (file, line, field)
    /// and locates a material it names by a relative path or name.
    pub fn parse(text: &str, origin: &Path) -> Result<Scene, DemError> {
        super::scene_file::parse(text, origin)
    }

    /// Checks every value's range; the error names the field and what is accepted.
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.validate_values()
            .map_err(|(field, message)| (field.to_string(), message))?;
        self.validate_layout()
    }

    fn validate_values(&self) -> Result<(), (&'static str, String)> {
        fn positive(field: &'static str, v: f64) -> Result<(), (&'static str, String)> {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err((field, format!("is {v}; it must be a positive number")))
            }
        }
        fn non_negative(field: &'static str, v: f64) -> Result<(), (&'static str, String)> {
            if v >= 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err((field, format!("is {v}; it must be ≥ 0")))
            }
        }
        fn friction(field: &'static str, v: f64) -> Result<(), (&'static str, String)> {
            if (0.0..=10.0).contains(&v) {
                Ok(())
            } else {
                Err((
                    field,
                    format!("is {v}; a Coulomb friction coefficient must be in [0, 10]"),
                ))
            }
        }
        match self.container {
            Container::Cylinder { radius } => positive("container.radius", radius)?,
            Container::Box { half_x, half_y } => {
                positive("container.half_x", half_x)?;
                positive("container.half_y", half_y)?;
            }
        }
        let g = &self.grains;
        positive("grains.radius", g.radius)?;
        positive("grains.density", g.density)?;
        friction("grains.friction", g.friction)?;
        if let Some(w) = g.wall_friction {
            friction("grains.wall_friction", w)?;
        }
        if !(0.0..0.5).contains(&g.size_spread) {
            return Err((
                "grains.size_spread",
                format!("is {}; it must be in [0, 0.5)", g.size_spread),
            ));
        }
        match (g.count, g.fill_height) {
            (None, None) if !self.fills.is_empty() => {}
            (_, _) if !self.fills.is_empty() => {
                return Err((
                    "grains",
                    "this scene pours `fills`: leave `count` and `fill_height` out of `grains` \
                     (each fill says how many)"
                        .into(),
                ))
            }
            (Some(0), _) => return Err(("grains.count", "is 0; it must be ≥ 1".into())),
            (Some(_), None) => {}
            (None, Some(h)) => positive("grains.fill_height", h)?,
            _ => {
                return Err((
                    "grains",
                    "give exactly one of `count` and `fill_height`".into(),
                ))
            }
        }
        let min_width = match self.container {
            Container::Cylinder { radius } => 2.0 * radius,
            Container::Box { half_x, half_y } => 2.0 * half_x.min(half_y),
        };
        if min_width < 4.0 * g.radius * (1.0 + g.size_spread) {
            return Err((
                "container",
                format!("is {min_width} m wide; it must be at least two grain diameters wide"),
            ));
        }
        positive("gravity", self.gravity)?;
        if let Some(dt) = self.time_step {
            positive("time_step", dt)?;
        }
        let smallest = g.radius * (1.0 - g.size_spread);
        if let ContactLaw::HertzMindlin(material) = &self.contact {
            material.check().map_err(|(field, message)| {
                (
                    match field {
                        "youngs_modulus" => "contact.youngs_modulus",
                        "poisson_ratio" => "contact.poisson_ratio",
                        "restitution" => "contact.restitution",
                        _ => "contact.rolling_friction",
                    },
                    message,
                )
            })?;
            if self.solver.is_some() {
                return Err((
                    "solver",
                    "applies to `contact: {law: projected_jacobi}` only; this scene's law is \
                     hertz_mindlin (remove `solver`, or choose projected_jacobi)"
                        .into(),
                ));
            }
            let rayleigh = material.rayleigh_time(smallest, g.density);
            let limit = law::MAX_FRACTION * rayleigh;
            if self.time_step() > limit {
                return Err((
                    "time_step",
                    format!(
                        "is {} s; it must be below {limit:.3e} s, {} of the Rayleigh time \
                         {rayleigh:.3e} s of these grains' Hertz-Mindlin contacts (E = {} Pa, \
                         ν = {}, ρ = {} kg/m³, smallest radius {smallest:.3e} m), or the bed \
                         explodes; leave time_step out to step at {:.3e} s",
                        self.time_step(),
                        law::MAX_FRACTION,
                        material.youngs_modulus,
                        material.poisson_ratio,
                        g.density,
                        law::DEFAULT_FRACTION * rayleigh
                    ),
                ));
            }
        }
        // From rest, gravity alone moves a grain g Δt² in one step; beyond the smallest grain's
        // radius grains pass through each other before a contact can hold them, and the bed
        // explodes (Δt = 0.5 s was saved as "settled" at a volume fraction of 1.9e303).
        let dt = self.time_step();
        let fall = self.gravity * dt * dt;
        if fall >= smallest {
            return Err((
                "time_step",
                format!(
                    "is {} s; under gravity {} m/s² a grain falls g·Δt² = {fall:.3e} m in one \
                     step, not less than the smallest grain radius ({smallest:.3e} m), so grains \
                     pass through each other; it must be below √(r_min/g) = {:.3e} s \
                     (the default is 0.001 s)",
                    dt,
                    self.gravity,
                    (smallest / self.gravity).sqrt()
                ),
            ));
        }
        let s = &self.solver_settings();
        if s.iterations == 0 {
            return Err(("solver.iterations", "is 0; it must be ≥ 1".into()));
        }
        positive("solver.relaxation", s.relaxation)?;
        if s.relaxation > 2.0 {
            return Err((
                "solver.relaxation",
                format!("is {}; it must be in (0, 2]", s.relaxation),
            ));
        }
        if !(0.0..=1.0).contains(&s.stabilisation) {
            return Err((
                "solver.stabilisation",
                format!("is {}; it must be in [0, 1]", s.stabilisation),
            ));
        }
        non_negative("solver.contact_margin", s.contact_margin)?;
        positive("settle.kinetic_energy", self.settle.kinetic_energy)?;
        positive("settle.max_time", self.settle.max_time)?;
        non_negative("settle.loosen_depth", self.settle.loosen_depth)?;
        Ok(())
    }

    /// The number of grains: `count`, or what fills `fill_height`.
    pub fn grain_count(&self) -> usize {
        if !self.fills.is_empty() {
            return self.fills.iter().map(|f| self.fill_count(f)).sum();
        }
        let g = &self.grains;
        match (g.count, g.fill_height) {
            (Some(n), _) => n,
            (None, Some(h)) => {
                // Mean volume of radii uniform in r(1 ± s): E[r³] = r³ (1 + s²).
                let volume = 4.0 / 3.0
                    * std::f64::consts::PI
                    * g.radius.powi(3)
                    * (1.0 + g.size_spread * g.size_spread);
                ((h * self.container.area() * FILL_FRACTION / volume).round() as usize).max(1)
            }
            (None, None) => 1,
        }
    }

    /// The projected-Jacobi settings (defaults when not given).
    pub fn solver_settings(&self) -> SolverSettings {
        self.solver.clone().unwrap_or_default()
    }

    /// Δt: the one given, or the law's default (see `time_step`).
    pub fn time_step(&self) -> f64 {
        if let Some(dt) = self.time_step {
            return dt;
        }
        match self.rayleigh_time() {
            Some(rayleigh) => law::DEFAULT_FRACTION * rayleigh,
            None => JACOBI_TIME_STEP,
        }
    }

    /// The Rayleigh time of the smallest grain under the Hertz-Mindlin law (`None` for
    /// projected Jacobi, which has no material step).
    pub fn rayleigh_time(&self) -> Option<f64> {
        match &self.contact {
            ContactLaw::HertzMindlin(material) => {
                let g = &self.grains;
                Some(material.rayleigh_time(g.radius * (1.0 - g.size_spread), g.density))
            }
            ContactLaw::ProjectedJacobi => None,
        }
    }

    /// The step of a robot's replay on this bed: `time_step` if given (checked as a scene's
    /// step), else the scene's step but at most [`law::REPLAY_FRACTION`] of the Rayleigh time
    /// under the Hertz-Mindlin law (a robot loads the bed far harder and faster than a slow
    /// intrusion; see there).
    pub fn replay_step_params(&self, time_step: Option<f64>) -> Result<StepParams, DemError> {
        let dt = time_step.unwrap_or_else(|| match self.rayleigh_time() {
            Some(rayleigh) => self.time_step().min(law::REPLAY_FRACTION * rayleigh),
            None => self.time_step(),
        });
        self.step_params_at(Some(dt))
    }

    /// The step parameters the scene asks for.
    /// The step's parameters with the step `time_step` instead of the scene's, checked as a
    /// scene's own step is (above the contact law's stable step is an error naming the limit).
    pub fn step_params_at(&self, time_step: Option<f64>) -> Result<StepParams, DemError> {
        let Some(dt) = time_step else {
            return Ok(self.step_params());
        };
        let mut probe = self.clone();
        probe.time_step = Some(dt);
        probe
            .validate()
            .map_err(|(field, message)| DemError::Invalid(format!("--{field} {message}")))?;
        Ok(probe.step_params())
    }

    pub fn step_params(&self) -> StepParams {
        let solver = self.solver_settings();
        StepParams {
            law: self.contact,
            time_step: self.time_step(),
            gravity: [0.0, 0.0, -self.gravity],
            iterations: solver.iterations,
            relaxation: solver.relaxation,
            stabilisation: solver.stabilisation,
            friction: self.grains.friction,
            wall_friction: self.grains.wall_friction.unwrap_or(self.grains.friction),
            contact_margin: solver.contact_margin,
        }
    }
}
