//! The problem file's schema: one struct per section, each with the documented defaults
//! (MODEL.md sections 1 and 2), and [`Problem::resolve`] that writes every implied value out.

use std::collections::BTreeMap;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::presets::{Medium, MediumPreset};

/// A jump-planning problem: everything `loam solve` needs, as read from a problem file.
///
/// After [`super::parse`] or [`super::load`] the problem is validated and resolved: `name`,
/// every phase's `duration`, every medium field and the default solver options are filled in,
/// so serializing it records the complete problem that was solved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Problem {
    /// Name of the problem, used to name its results. Default: the problem file's stem.
    pub name: Option<String>,
    /// Gravitational acceleration g \[m/s²\]. Default 9.81.
    pub gravity: f64,
    /// The spring-legged hopper (MODEL.md section 1).
    #[schemars(with = "super::json_schema::HopperRobot")]
    pub robot: Robot,
    /// The ground the hopper stands on.
    pub terrain: Terrain,
    /// The jump's phases in order: a stance first, a flight last. Default: stance then flight,
    /// 31 nodes each.
    pub phases: Vec<Phase>,
    /// What the jump must achieve and the actuator's limits.
    pub task: Task,
    /// How the dynamics are discretised.
    pub transcription: Transcription,
    /// Where the optimiser starts. Default `rest`.
    pub initial_guess: InitialGuess,
    /// Options handed to IPOPT unchanged, option name to value. Default: `tol: 1.0e-8` and
    /// `max_iter: 3000` (IPOPT's own defaults, written out so results record them); options a
    /// file sets are added to these, not substituted for them.
    pub solver: SolverOptions,
}

impl Default for Problem {
    fn default() -> Self {
        Problem {
            name: None,
            gravity: 9.81,
            robot: Robot::default(),
            terrain: Terrain::default(),
            phases: vec![Phase::new(Domain::Stance), Phase::new(Domain::Flight)],
            task: Task::default(),
            transcription: Transcription::default(),
            initial_guess: InitialGuess::default(),
            solver: default_solver_options(),
        }
    }
}

impl Problem {
    /// Fills every value the file left implied: each phase's duration from its domain, each
    /// medium field from the preset, the default solver options. Leaves `name` alone (only
    /// the loader knows the file's stem). Resolving twice changes nothing.
    pub fn resolve(&mut self) {
        self.terrain.resolve();
        for phase in &mut self.phases {
            let bounds = phase.duration_bounds();
            phase.duration = Some(bounds);
        }
        for (option, value) in default_solver_options() {
            self.solver.entry(option).or_insert(value);
        }
    }

    /// The problem's name; empty only for a problem that was never loaded from a file.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
}

/// The hopper's parameters: declared once, in the model ([`crate::model::hopper`]).
pub use crate::model::hopper::HopperParams as Robot;

/// The ground: a terrain model and, for granular models, the medium's parameters.
///
/// Each medium field is `None` unless the file sets it; `None` takes the preset's value (see
/// [`Terrain::medium_parameters`]). The fields matter only to granular models but are always
/// validated, so a typo is caught even while planning on rigid ground.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Terrain {
    /// The terrain model. Default `added_mass`.
    pub model: TerrainModel,
    /// The named medium the fields below default to. Default `poppy_seeds`.
    pub medium: MediumPreset,
    /// μ: recruitment rate \[-\].
    pub recruitment_rate: Option<f64>,
    /// θ: shear-band angle from the horizontal \[deg\].
    pub shear_band_angle_deg: Option<f64>,
    /// c_g: surrounding-mass scaling \[-\].
    pub surrounding_mass_scaling: Option<f64>,
    /// φ: volume fraction \[-\].
    pub volume_fraction: Option<f64>,
    /// ρ: grain density \[kg/m³\].
    pub grain_density: Option<f64>,
    /// k_sh: penetration stiffness \[N/m\].
    pub penetration_stiffness: Option<f64>,
    /// σ_rft: depth-dependent resistive stress \[N/m³\].
    pub resistive_stress: Option<f64>,
    /// b: inertial drag scaling \[-\].
    pub drag_scaling: Option<f64>,
}

impl Terrain {
    /// The medium's parameters: the preset's, replaced by each field the problem sets.
    pub fn medium_parameters(&self) -> Medium {
        let preset = self.medium.parameters();
        Medium {
            recruitment_rate: self.recruitment_rate.unwrap_or(preset.recruitment_rate),
            shear_band_angle_deg: self
                .shear_band_angle_deg
                .unwrap_or(preset.shear_band_angle_deg),
            surrounding_mass_scaling: self
                .surrounding_mass_scaling
                .unwrap_or(preset.surrounding_mass_scaling),
            volume_fraction: self.volume_fraction.unwrap_or(preset.volume_fraction),
            grain_density: self.grain_density.unwrap_or(preset.grain_density),
            penetration_stiffness: self
                .penetration_stiffness
                .unwrap_or(preset.penetration_stiffness),
            resistive_stress: self.resistive_stress.unwrap_or(preset.resistive_stress),
            drag_scaling: self.drag_scaling.unwrap_or(preset.drag_scaling),
        }
    }

    fn resolve(&mut self) {
        let medium = self.medium_parameters();
        self.recruitment_rate = Some(medium.recruitment_rate);
        self.shear_band_angle_deg = Some(medium.shear_band_angle_deg);
        self.surrounding_mass_scaling = Some(medium.surrounding_mass_scaling);
        self.volume_fraction = Some(medium.volume_fraction);
        self.grain_density = Some(medium.grain_density);
        self.penetration_stiffness = Some(medium.penetration_stiffness);
        self.resistive_stress = Some(medium.resistive_stress);
        self.drag_scaling = Some(medium.drag_scaling);
    }
}

/// How the ground responds to the foot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TerrainModel {
    /// Rigid ground: the foot stays at z = 0 during stance.
    Rigid,
    /// The added-mass granular model of MODEL.md section 2.
    #[default]
    AddedMass,
}

impl TerrainModel {
    /// The name a problem file uses.
    pub fn name(self) -> &'static str {
        match self {
            TerrainModel::Rigid => "rigid",
            TerrainModel::AddedMass => "added_mass",
        }
    }
}

/// One phase of the jump: a domain of the hybrid dynamics with its own collocation grid.
///
/// `domain` is required: a phase whose kind is guessed would plan a different jump.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Which dynamics hold during the phase.
    pub domain: Domain,
    /// Collocation nodes in the phase, at least 3. Default 31 (the paper's N).
    #[serde(default = "Phase::default_nodes")]
    pub nodes: usize,
    /// [min, max] bounds on the phase's duration \[s\]. Default: stance [0.01, 0.2],
    /// flight [0.01, 0.6]; filled in by [`Problem::resolve`].
    #[serde(default)]
    pub duration: Option<[f64; 2]>,
}

impl Phase {
    /// A phase of `domain` with the default nodes and duration bounds.
    pub fn new(domain: Domain) -> Self {
        Phase {
            domain,
            nodes: Phase::default_nodes(),
            duration: None,
        }
    }

    fn default_nodes() -> usize {
        31
    }

    /// The duration bounds [min, max] in seconds: the file's, or the domain's default.
    pub fn duration_bounds(&self) -> [f64; 2] {
        self.duration
            .unwrap_or_else(|| self.domain.default_duration())
    }
}

/// The hybrid domains a hopper phase can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Domain {
    /// The foot is on (or in) the ground.
    Stance,
    /// The hopper is in the air.
    Flight,
}

impl Domain {
    /// Default duration bounds [min, max] in seconds (MODEL.md section 1).
    pub fn default_duration(self) -> [f64; 2] {
        match self {
            Domain::Stance => [0.01, 0.2],
            Domain::Flight => [0.01, 0.6],
        }
    }

    /// The name a problem file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Stance => "stance",
            Domain::Flight => "flight",
        }
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The jump's target and the actuator's limits (MODEL.md section 1, task constraints).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Task {
    /// Target rise of the rod from the start of the jump to the apex \[m\]. Default 0.06.
    pub apex_height: f64,
    /// Bound on the actuator force |F_m| \[N\]. Default 46.
    pub max_motor_force: f64,
    /// Bound on the actuator position |z_m − z_r| \[m\]. Default 0.0275.
    pub stroke: f64,
    /// Lower bound on the rod–foot gap z_r − z_f \[m\]. Default 0.0325.
    pub min_rod_foot_gap: f64,
    /// The actuator's initial position z_m − z_r. Default `free`.
    pub start_position: StartPosition,
}

impl Default for Task {
    fn default() -> Self {
        Task {
            apex_height: 0.06,
            max_motor_force: 46.0,
            stroke: 0.0275,
            min_rod_foot_gap: 0.0325,
            start_position: StartPosition::Free,
        }
    }
}

/// The actuator's position z_m − z_r at the start of the jump.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum StartPosition {
    /// A decision variable anywhere within the stroke (`free` in a file).
    #[default]
    Free,
    /// Fixed at this position \[m\], within [−stroke, stroke] (a number in a file).
    Fixed(f64),
}

impl Serialize for StartPosition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            StartPosition::Free => serializer.serialize_str("free"),
            StartPosition::Fixed(position) => serializer.serialize_f64(*position),
        }
    }
}

impl<'de> Deserialize<'de> for StartPosition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StartPositionVisitor;

        impl Visitor<'_> for StartPositionVisitor {
            type Value = StartPosition;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("`free` or a number in metres")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<StartPosition, E> {
                if text == "free" {
                    Ok(StartPosition::Free)
                } else {
                    Err(E::custom(format_args!(
                        "expected `free` or a number in metres, got `{text}`"
                    )))
                }
            }

            fn visit_f64<E: de::Error>(self, position: f64) -> Result<StartPosition, E> {
                Ok(StartPosition::Fixed(position))
            }

            fn visit_i64<E: de::Error>(self, position: i64) -> Result<StartPosition, E> {
                Ok(StartPosition::Fixed(position as f64))
            }

            fn visit_u64<E: de::Error>(self, position: u64) -> Result<StartPosition, E> {
                Ok(StartPosition::Fixed(position as f64))
            }
        }

        deserializer.deserialize_any(StartPositionVisitor)
    }
}

// By hand, as its `Deserialize` is: `free` or a number.
impl JsonSchema for StartPosition {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StartPosition".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The actuator's position z_m − z_r at the start of the jump.",
            "anyOf": [
                {
                    "description": "A decision variable anywhere within the stroke.",
                    "type": "string",
                    "const": "free"
                },
                {
                    "description": "Fixed at this position [m], within [−stroke, stroke].",
                    "type": "number"
                }
            ]
        })
    }
}

/// How the dynamics are discretised into NLP constraints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Transcription {
    /// The collocation scheme. Default `trapezoidal` (the paper's).
    pub scheme: Scheme,
}

/// Collocation schemes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// Trapezoidal defects between neighbouring nodes.
    #[default]
    Trapezoidal,
    /// Hermite–Simpson defects with a midpoint per interval.
    HermiteSimpson,
}

/// Where the optimiser starts.
///
/// The default was measured, not assumed: on the hopper's 30-100 mm height sweep on both
/// terrains (`results/README.md`, "Initial guess"), `rest` took fewer iterations than
/// `ballistic` on 11 of the 16 heights (44 against 119 on the shipped 60 mm poppy-seed jump,
/// 26 against 33 on rigid ground) and reached an equal or lower optimum on 11 of the 14
/// reachable ones. The problem is
/// not convex: on poppy seeds at 30, 70 and 80 mm `ballistic` finds a lower optimum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InitialGuess {
    /// Every variable zero, as in the paper.
    Zero,
    /// The start at rest at every node: the hopper in static equilibrium on its terrain with
    /// the actuator centred (or at the fixed start position), every phase 0.1 s; a planar
    /// robot in its start posture with its weight shared by the feet on the ground and its
    /// base moved evenly over the task's distance. `auto` is read as `rest`.
    #[default]
    #[serde(alias = "auto")]
    #[schemars(transform = super::json_schema::also_auto)]
    Rest,
    /// The hopper only (loam's default before the rest guess): crouched at the bottom of the
    /// stroke, extending through a 0.1 s stance to the take-off velocity a ballistic flight to
    /// the target needs, then that flight.
    Ballistic,
    /// The hopper only: solve from `rest` and from `ballistic`, keep the better plan (a
    /// converged one first, then the lower objective) and record both in `solution.json`
    /// (`starts`). The jump's NLP has several local optima and neither guess finds the best
    /// everywhere: on poppy seeds `rest` lands 7-12 % above `ballistic`'s optimum at 30, 70
    /// and 80 mm and below it at 50 mm (`results/README.md`, "Initial guess"). It takes as long
    /// as both.
    Best,
    /// A planar robot only, for gaits: the schedule's footholds. The base moves evenly over
    /// the distance; each stance's feet stand still where the start posture puts them at the
    /// stance's middle, the swing feet move between footholds in a low arc, the joints reach
    /// them (damped least squares), the weight is shared by the feet on the ground
    /// (`planner/planar/footholds.rs`).
    Footholds,
}

/// How the planner climbs from its starting point to a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// One IPOPT solve with every phase's duration free.
    #[default]
    OneStage,
    /// First a few iterations with phase durations held (`stage_one`, or the contact model's
    /// rule: MODEL.md 5.2), then the full problem from there with its multipliers. Holding
    /// the durations removes the duration × dynamics products, whose negative curvature costs
    /// IPOPT inertia corrections in its first iterations.
    TwoStage,
}

/// The first stage of `strategy: two_stage` (and of the later starts of `starts`), where a
/// problem sets it instead of its contact model's rule (either part may be left to the rule).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageOne {
    /// Per phase of the schedule, the duration held in the first stage \[s\], or `null` for
    /// a duration left free. Each must lie within its phase's bounds. Default: the contact
    /// model's rule (MODEL.md 5.2), whose held flights are freed should they make the first
    /// stage infeasible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durations: Option<Vec<Option<f64>>>,
    /// The most IPOPT iterations of the first stage (≥ 1). Default: 20 where `durations` are
    /// given, else the contact model's rule (10 on rigid and spring ground, 20 on the bed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
}

/// Mesh refinement of a planar plan (`mesh:`; README "Mesh refinement"): while the plan's
/// replay on its own model departs from it by more than `tolerance`, solve again with every
/// interval halved, from the coarser plan. A top-level field, not under `solver:`, because
/// `solver:` holds IPOPT's own options verbatim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeshRefinement {
    /// The largest relative departure of the replay from the plan accepted (the centre of
    /// mass's peak rise and the distance where it travels), > 0, e.g. 0.005 for 0.5 %.
    pub tolerance: f64,
    /// The most refinements (≥ 1). Default 3.
    #[serde(default = "default_mesh_rounds")]
    pub max_rounds: usize,
}

fn default_mesh_rounds() -> usize {
    3
}

impl Default for MeshRefinement {
    /// What a planar problem on rigid ground, a bed or a spring gets without `mesh:`: its plan
    /// replays within 0.5 % of itself on its own model, in at most three refinements. Chosen
    /// so that every shipped problem meets it (README, "Mesh refinement").
    fn default() -> Self {
        MeshRefinement {
            tolerance: 0.005,
            max_rounds: default_mesh_rounds(),
        }
    }
}

impl InitialGuess {
    /// The name a problem file gives it.
    pub fn name(self) -> &'static str {
        match self {
            InitialGuess::Zero => "zero",
            InitialGuess::Rest => "rest",
            InitialGuess::Ballistic => "ballistic",
            InitialGuess::Best => "best",
            InitialGuess::Footholds => "footholds",
        }
    }
}

/// IPOPT options, option name to value, in name order.
pub type SolverOptions = BTreeMap<String, OptionValue>;

/// The value of one IPOPT option. In a file: an integer, a number or text; `true`/`false`
/// are read as IPOPT's `yes`/`no`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OptionValue {
    Int(i64),
    Num(f64),
    Str(String),
}

impl<'de> Deserialize<'de> for OptionValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OptionValueVisitor;

        impl Visitor<'_> for OptionValueVisitor {
            type Value = OptionValue;

            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("an integer, a number or text (an IPOPT option value)")
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<OptionValue, E> {
                Ok(OptionValue::Str(
                    if value { "yes" } else { "no" }.to_owned(),
                ))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<OptionValue, E> {
                Ok(OptionValue::Int(value))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<OptionValue, E> {
                Ok(i64::try_from(value).map_or(OptionValue::Num(value as f64), OptionValue::Int))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<OptionValue, E> {
                Ok(OptionValue::Num(value))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<OptionValue, E> {
                Ok(OptionValue::Str(value.to_owned()))
            }
        }

        deserializer.deserialize_any(OptionValueVisitor)
    }
}

// By hand, as its `Deserialize` is: `true`/`false` are read as `yes`/`no`.
impl JsonSchema for OptionValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OptionValue".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The value of one IPOPT option: an integer, a number or text; \
                            `true`/`false` are read as IPOPT's `yes`/`no`.",
            "type": ["number", "string", "boolean"]
        })
    }
}

impl fmt::Display for OptionValue {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match self {
            OptionValue::Int(value) => write!(formatter, "{value}"),
            OptionValue::Num(value) => write!(formatter, "{value:?}"),
            OptionValue::Str(value) => formatter.write_str(value),
        }
    }
}

/// The solver options every problem starts from.
pub fn default_solver_options() -> SolverOptions {
    SolverOptions::from([
        ("tol".to_owned(), OptionValue::Num(1.0e-8)),
        ("max_iter".to_owned(), OptionValue::Int(3000)),
    ])
}
