//! The planar robots' problem schema: a robot chosen by `robot.model`, a terrain chosen by
//! `terrain.model`, a schedule of contact sets and a task. The hopper keeps its own schema
//! ([`super::Problem`]); [`super::is_planar`] tells which one a file is written in.
//!
//! ```yaml
//! robot: {model: monopod}            # planar_foot | monopod | quadruped, with their parameters
//! terrain: {model: rigid, friction: 0.8}  # or {model: added_mass, foot_radius: 0.08},
//!                                         # or {model: spring, stiffness: 5e4, damping: 400},
//!                                         # or {model: wrench_space, data: FILE} (planner::wrench_hop)
//! schedule:                           # phases: the feet on the ground, nodes, duration bounds
//!   - {contacts: [foot], nodes: 21, duration: [0.05, 0.4]}
//!   - {contacts: [], nodes: 21}
//!   - {contacts: [foot], nodes: 21}
//! task: {distance: 0.3, end: {at_rest: true}, objective: effort}
//! ```

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::schema::{default_solver_options, InitialGuess, SolverOptions, Transcription};
use super::validate::Violation;
use super::{Medium, MediumPreset, Schema};
use crate::model::planar::description::RobotDescription;
use crate::model::planar::foot::PlanarFootParams;
use crate::model::planar::monopod::MonopodParams;
use crate::model::planar::quadruped::QuadrupedParams;
use crate::model::planar::PlanarRobot;
use crate::scalar::Scalar;
use crate::terrain::rigid::RigidGround;
use crate::terrain::{AddedMass, Bed, ContactModel, SpringGround};

/// A planning problem for a planar robot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PlanarProblem {
    /// Name of the problem, used to name its results. Default: the file's stem.
    pub name: Option<String>,
    /// Gravitational acceleration g \[m/s²\]. Default 9.81.
    pub gravity: f64,
    /// The robot: a preset named by `model` with its parameters, or a robot `file`.
    pub robot: RobotConfig,
    /// The ground under every foot.
    pub terrain: PlanarTerrainConfig,
    /// The phases in order, each the set of feet on the ground. Default: one stance on every
    /// foot of the robot, 21 nodes.
    pub schedule: Vec<PhaseSpec>,
    /// Start, end, what the motion must achieve, and the objective.
    pub task: PlanarTask,
    /// How the dynamics are discretised. Default trapezoidal.
    pub transcription: Transcription,
    /// Where the optimiser starts: `rest` (default: the start posture held at every node) or
    /// `zero`.
    pub initial_guess: InitialGuess,
    /// IPOPT options, as in the hopper's files.
    pub solver: SolverOptions,
}

impl Default for PlanarProblem {
    fn default() -> Self {
        PlanarProblem {
            name: None,
            gravity: 9.81,
            robot: RobotConfig::default(),
            terrain: PlanarTerrainConfig::default(),
            schedule: Vec::new(),
            task: PlanarTask::default(),
            transcription: Transcription::default(),
            initial_guess: InitialGuess::default(),
            solver: default_solver_options(),
        }
    }
}

/// The robot presets; each is one file under `model/planar/`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case")]
#[schemars(transform = super::json_schema::robot_file_variant)]
pub enum RobotConfig {
    /// A rigid foot (cylinder section) driven by a wrench: the wrench-space paper's test foot.
    PlanarFoot(PlanarFootParams),
    /// Body, actuated hip, prismatic spring leg with thrust, foot.
    Monopod(MonopodParams),
    /// Torso and four legs of thigh, shank and foot: 13 bodies, 12 actuated joints.
    Quadruped(QuadrupedParams),
    /// A robot described in a file: `robot: {file: robots/two_link_hopper.yaml}` (relative
    /// to the problem file's folder). Once read, the problem holds the whole description
    /// under `description` (docs/ROBOTS.md), which `--set robot.description.…` edits.
    File(RobotFileConfig),
}

/// A robot from a robot file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RobotFileConfig {
    /// The robot file, as the problem names it (relative to the problem file's folder).
    pub file: Option<String>,
    /// The robot: read from `file`; keys written here override the file's.
    pub description: RobotDescription,
}

impl Default for RobotFileConfig {
    fn default() -> Self {
        RobotFileConfig {
            file: None,
            description: RobotDescription::default(),
        }
    }
}

impl Default for RobotConfig {
    fn default() -> Self {
        RobotConfig::Monopod(MonopodParams::default())
    }
}

impl RobotConfig {
    pub fn build(&self, gravity: f64) -> PlanarRobot {
        match self {
            RobotConfig::PlanarFoot(p) => p.build(gravity),
            RobotConfig::Monopod(p) => p.build(gravity),
            RobotConfig::Quadruped(p) => p.build(gravity),
            RobotConfig::File(f) => f.description.build(gravity),
        }
    }

    /// What names the robot in messages: the preset, or the robot file's robot.
    pub fn model_name(&self) -> String {
        match self {
            RobotConfig::PlanarFoot(_) => "planar_foot".into(),
            RobotConfig::Monopod(_) => "monopod".into(),
            RobotConfig::Quadruped(_) => "quadruped".into(),
            RobotConfig::File(f) => format!("robot `{}`", f.description.name),
        }
    }

    /// The robot's contact names, without building it (its description may be invalid).
    pub fn contact_names(&self, gravity: f64) -> Vec<String> {
        match self {
            RobotConfig::File(f) => f
                .description
                .contacts
                .iter()
                .map(|c| c.name.clone())
                .collect(),
            preset => preset
                .build(gravity)
                .contacts
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        }
    }
}

/// The terrain under a planar robot's feet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum PlanarTerrainConfig {
    /// Rigid ground at z = 0 with Coulomb friction.
    Rigid(RigidGroundConfig),
    /// A granular bed whose surface is z = 0, under every foot the added-mass model of the
    /// hopper's poppy seeds (docs/MODEL.md sections 2 and 5): planned by `planner::planar`,
    /// replayed by `sim::planar`.
    AddedMass(AddedMassGroundConfig),
    /// A data-driven wrench space under every foot (docs/WRENCH_SPACE.md): planned by
    /// `planner::wrench_hop`, replayed by the MDP simulator.
    WrenchSpace(WrenchSpaceGroundConfig),
    /// A linear spring-damper ground under every foot (`terrain::spring`).
    Spring(SpringGround),
}

impl PlanarTerrainConfig {
    /// The name a problem file uses.
    pub fn model_name(&self) -> &'static str {
        match self {
            PlanarTerrainConfig::Rigid(_) => "rigid",
            PlanarTerrainConfig::AddedMass(_) => "added_mass",
            PlanarTerrainConfig::WrenchSpace(_) => "wrench_space",
            PlanarTerrainConfig::Spring(_) => "spring",
        }
    }

    /// The contact model under every foot: the registry of contact models for the planar
    /// planner and replay. None for a wrench space (planned by `planner::wrench_hop`).
    pub fn contact_model<S: Scalar + 'static>(&self) -> Option<Box<dyn ContactModel<S>>> {
        Some(match self {
            PlanarTerrainConfig::Rigid(ground) => Box::new(RigidGround {
                friction: ground.friction,
            }),
            PlanarTerrainConfig::AddedMass(ground) => Box::new(Bed {
                friction: ground.friction,
                law: ground.bed(),
            }),
            PlanarTerrainConfig::Spring(ground) => Box::new(ground.clone()),
            PlanarTerrainConfig::WrenchSpace(_) => return None,
        })
    }
}

/// A wrench-space terrain under a planar robot's feet: flat ground at z = 0, the same data
/// under every foot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WrenchSpaceGroundConfig {
    /// The wrench-space data file (docs/WRENCH_SPACE.md section 3.1), relative to the problem
    /// file's folder. Required.
    pub data: Option<String>,
    /// M_g: the grains' inertia moving with each sole, as a multiple of diag(m, m, I) of the
    /// foot's body \[-\]. Default 2 (the wrench-space paper's value, as in `loam mdp run`).
    pub grain_inertia: f64,
}

impl Default for WrenchSpaceGroundConfig {
    fn default() -> Self {
        WrenchSpaceGroundConfig {
            data: None,
            grain_inertia: 2.0,
        }
    }
}

impl Default for PlanarTerrainConfig {
    fn default() -> Self {
        PlanarTerrainConfig::Rigid(RigidGroundConfig::default())
    }
}

/// Rigid ground at z = 0 under every foot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RigidGroundConfig {
    /// μ: Coulomb friction coefficient between foot and ground \[-\]. Default 0.8.
    pub friction: f64,
}

impl Default for RigidGroundConfig {
    fn default() -> Self {
        RigidGroundConfig { friction: 0.8 }
    }
}

/// The added-mass bed under a planar robot's feet. Each foot meets the grains as the
/// hopper's foot does: a flat disc of `foot_radius` pressed down (the model is vertical);
/// sideways the bed holds a foot in stance like rigid ground, within the friction cone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AddedMassGroundConfig {
    /// μ: Coulomb friction coefficient between a foot and the grains \[-\]. Default 0.8.
    pub friction: f64,
    /// R: radius of the disc every foot presses into the bed \[m\]. Default 0.08.
    pub foot_radius: f64,
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

impl Default for AddedMassGroundConfig {
    fn default() -> Self {
        AddedMassGroundConfig {
            friction: 0.8,
            // A 16 cm disc: the 7.6 cm disc of the hopper's paper would sink a 11 kg monopod
            // about 10 cm, past the cone depth, into the regime the model's fit never saw.
            foot_radius: 0.08,
            medium: MediumPreset::default(),
            recruitment_rate: None,
            shear_band_angle_deg: None,
            surrounding_mass_scaling: None,
            volume_fraction: None,
            grain_density: None,
            penetration_stiffness: None,
            resistive_stress: None,
            drag_scaling: None,
        }
    }
}

impl AddedMassGroundConfig {
    /// The medium's parameters: the preset's, replaced by each field the problem sets.
    pub fn medium_parameters(&self) -> Medium {
        super::Terrain {
            model: super::TerrainModel::AddedMass,
            medium: self.medium,
            recruitment_rate: self.recruitment_rate,
            shear_band_angle_deg: self.shear_band_angle_deg,
            surrounding_mass_scaling: self.surrounding_mass_scaling,
            volume_fraction: self.volume_fraction,
            grain_density: self.grain_density,
            penetration_stiffness: self.penetration_stiffness,
            resistive_stress: self.resistive_stress,
            drag_scaling: self.drag_scaling,
            data: None,
            rail_angle: None,
        }
        .medium_parameters()
    }

    /// The bed's model under one foot.
    pub fn bed(&self) -> AddedMass {
        AddedMass::from_medium(&self.medium_parameters(), self.foot_radius)
    }
}

/// One phase: the feet on the ground, the node count, the duration's bounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PhaseSpec {
    /// Names of the robot's contacts on the ground during the phase (empty: flight).
    pub contacts: Vec<String>,
    /// Collocation nodes. Default 21.
    pub nodes: usize,
    /// \[min, max\] duration \[s\]. Default \[0.02, 1.0\].
    pub duration: [f64; 2],
}

impl Default for PhaseSpec {
    fn default() -> Self {
        PhaseSpec {
            contacts: Vec::new(),
            nodes: 21,
            duration: [0.02, 1.0],
        }
    }
}

/// What the motion starts from and must achieve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PlanarTask {
    /// The state at the start.
    pub start: StartSpec,
    /// Conditions on the final state.
    pub end: EndSpec,
    /// Horizontal distance the base travels from start to end \[m\].
    pub distance: Option<f64>,
    /// Rise of the centre of mass from the start to the apex that ends the last phase
    /// (a flight) \[m\].
    pub apex_rise: Option<f64>,
    /// The body whose centre of mass rises by `apex_rise` (the hopper's thrust rod). Default:
    /// the robot's centre of mass. The apex itself is always where the robot's centre of mass
    /// stops rising.
    pub apex_of: Option<String>,
    /// The final state equals the start (but for the base's x): one cycle of a gait.
    pub periodic: bool,
    /// What is minimised. Default `effort`.
    pub objective: Objective,
    /// The safety margin of every contact that the planner holds \[-\], >= 0: each held foot
    /// keeps this share of the robot's weight (split over the feet down) at every stance node
    /// but its lift-off node, and a foot leaving a bed accelerates upward with at least this
    /// share of g. A plan whose feet graze zero force mid-stance lifts them in any replay.
    /// Default 0.05; 0 plans to the bare complementarity (the optimum of the model itself).
    pub contact_margin: f64,
}

/// The default of `task.contact_margin` (the planner's `NORMAL_FORCE_MARGIN`).
pub const DEFAULT_CONTACT_MARGIN: f64 = 0.05;

fn default_contact_margin() -> f64 {
    DEFAULT_CONTACT_MARGIN
}

impl Default for PlanarTask {
    fn default() -> Self {
        PlanarTask {
            start: StartSpec::default(),
            end: EndSpec::default(),
            distance: None,
            apex_rise: None,
            apex_of: None,
            periodic: false,
            objective: Objective::default(),
            contact_margin: default_contact_margin(),
        }
    }
}

/// The start: at rest (by default) in the robot's standing posture, with the coordinates
/// `set` names fixed to other values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StartSpec {
    /// Zero velocity at the first node. Default true.
    pub at_rest: bool,
    /// Coordinates fixed at the start, by name \[m or rad\]; the others are free but for the
    /// base's x (0) and the feet of the first phase, which stand on the ground.
    pub set: BTreeMap<String, f64>,
}

impl Default for StartSpec {
    fn default() -> Self {
        StartSpec {
            at_rest: true,
            set: BTreeMap::new(),
        }
    }
}

/// The end: optionally at rest, with coordinates fixed (`set`) or moved by a given amount
/// from the start (`change`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EndSpec {
    /// Zero velocity at the last node. Default false.
    pub at_rest: bool,
    /// Coordinates fixed at the end, by name \[m or rad\].
    pub set: BTreeMap<String, f64>,
    /// Coordinates' change from start to end, by name \[m or rad\].
    pub change: BTreeMap<String, f64>,
}

/// The objective, integrated with the scheme's quadrature.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// ½∫ Σ (u_i / u_max,i)² dt: every input relative to its limit.
    #[default]
    Effort,
    /// ½∫ Σ u_i² dt in the inputs' own units (a drive's input is its command rate).
    /// `torque_squared` is accepted as its old name.
    #[serde(alias = "torque_squared")]
    InputsSquared,
    /// ∫ Σ |u_i v_i| dt / (m g distance): mechanical cost of transport (needs `distance`).
    CostOfTransport,
}

impl Schema for PlanarProblem {
    fn resolve(&mut self) {
        if self.schedule.is_empty() {
            self.schedule = vec![PhaseSpec {
                contacts: self.robot.contact_names(self.gravity),
                ..PhaseSpec::default()
            }];
        }
        for (option, value) in default_solver_options() {
            self.solver.entry(option).or_insert(value);
        }
    }

    fn validate(&self) -> Result<(), Vec<Violation>> {
        let mut bad = Vec::new();
        macro_rules! fail {
            ($field:expr, $message:expr $(,)?) => {
                bad.push(Violation {
                    field: $field,
                    message: $message,
                })
            };
        }
        if !(self.gravity.is_finite() && self.gravity > 0.0) {
            fail!(
                "gravity".into(),
                format!("must be a finite number > 0 m/s², got {}", self.gravity),
            );
        }
        // Every mass, inertia and length of the robot's parameters must be positive.
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&self.robot) {
            for (name, value) in &fields {
                let Some(v) = value.as_f64() else { continue };
                let (kind, unit) = if name.ends_with("mass") {
                    ("mass", "kg")
                } else if name.ends_with("inertia") {
                    ("inertia", "kg m²")
                } else if name.ends_with("length") || name.ends_with("width") {
                    ("length", "m")
                } else {
                    continue;
                };
                if !(v.is_finite() && v > 0.0) {
                    fail!(
                        format!("robot.{name}"),
                        format!(
                            "a {kind} must be a finite number > 0 {unit} (every link needs mass and inertia for M(q) to be positive definite), got {v}"
                        ),
                    );
                }
            }
        }
        if matches!(
            self.initial_guess,
            InitialGuess::Ballistic | InitialGuess::Best
        ) {
            fail!(
                "initial_guess".into(),
                "`ballistic` and `best` are the hopper's guesses; a planar robot starts from \
                 `rest` or `zero`"
                    .into(),
            );
        }
        let friction = match &self.terrain {
            PlanarTerrainConfig::Rigid(ground) => Some(ground.friction),
            PlanarTerrainConfig::AddedMass(ground) => Some(ground.friction),
            PlanarTerrainConfig::Spring(ground) => Some(ground.friction),
            PlanarTerrainConfig::WrenchSpace(_) => None,
        };
        if let Some(friction) = friction {
            if !(friction.is_finite() && (0.0..=10.0).contains(&friction)) {
                fail!(
                    "terrain.friction".into(),
                    format!("must be in [0, 10], got {friction}"),
                );
            }
        }
        match &self.terrain {
            PlanarTerrainConfig::Rigid(_) => {}
            PlanarTerrainConfig::Spring(ground) => {
                for (field, message) in ground.violations() {
                    fail!(format!("terrain.{field}"), message);
                }
            }
            PlanarTerrainConfig::AddedMass(ground) => {
                if !(ground.foot_radius.is_finite() && ground.foot_radius > 0.0) {
                    fail!(
                        "terrain.foot_radius".into(),
                        format!("must be a finite number > 0 m, got {}", ground.foot_radius),
                    );
                }
                bad.extend(super::validate::medium_violations(
                    &ground.medium_parameters(),
                ));
                // Feet only leave the bed: landing in it (the crater, the impact of a foot
                // that arrives moving) is not in the model, as for the hopper.
                for p in 1..self.schedule.len() {
                    let before = &self.schedule[p - 1].contacts;
                    for (i, name) in self.schedule[p].contacts.iter().enumerate() {
                        if !before.contains(name) {
                            fail!(
                                format!("schedule[{p}].contacts[{i}]"),
                                format!(
                                    "`{name}` lands in the bed: on `model: added_mass` feet may only leave the grains (the model has no landing: no crater, no impact into the bed); plan landings on `model: rigid`"
                                ),
                            );
                        }
                    }
                }
            }
            PlanarTerrainConfig::WrenchSpace(ground) => {
                for (field, message) in self.wrench_space_violations(ground) {
                    fail!(field, message);
                }
            }
        }
        if let RobotConfig::File(f) = &self.robot {
            if f.description.name.trim().is_empty() {
                fail!(
                    "robot.description.name".into(),
                    "is required: the robot's name (a robot file takes its file's stem)".into(),
                );
            }
            for (field, message) in f.description.violations() {
                fail!(format!("robot.description.{field}"), message);
            }
        }
        if !bad.is_empty() {
            return Err(bad);
        }
        let robot = self.robot.build(self.gravity);
        // The robot's own consistency checks (the multibody, limits, indices): what the field
        // rules above cannot name a field for is reported on the robot section.
        if let Err(error) = robot.validate() {
            return Err(vec![Violation {
                field: "robot".into(),
                message: error.to_string(),
            }]);
        }
        let contact_names: Vec<&str> = robot.contacts.iter().map(|c| c.name.as_str()).collect();
        let coordinate_names: Vec<&str> =
            robot.coordinates.iter().map(|c| c.name.as_str()).collect();
        let accepted = |names: &[&str]| {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (p, phase) in self.schedule.iter().enumerate() {
            for (i, name) in phase.contacts.iter().enumerate() {
                if !contact_names.contains(&name.as_str()) {
                    fail!(
                        format!("schedule[{p}].contacts[{i}]"),
                        format!(
                            "the {} has no contact `{name}`; accepted: {}",
                            self.robot.model_name(),
                            accepted(&contact_names)
                        ),
                    );
                } else if phase.contacts[..i].contains(name) {
                    fail!(
                        format!("schedule[{p}].contacts[{i}]"),
                        format!("`{name}` is listed twice"),
                    );
                }
            }
            let same_feet = |a: &[String], b: &[String]| {
                a.len() == b.len() && a.iter().all(|name| b.contains(name))
            };
            if p > 0 && same_feet(&phase.contacts, &self.schedule[p - 1].contacts) {
                fail!(
                    format!("schedule[{p}].contacts"),
                    format!(
                        "the same feet as schedule[{}] ([{}]): a new phase must lift a foot \
                         that is on the ground or land one that is not",
                        p - 1,
                        phase.contacts.join(", ")
                    ),
                );
            }
            if phase.nodes < 3 {
                fail!(
                    format!("schedule[{p}].nodes"),
                    format!("must be at least 3, got {}", phase.nodes),
                );
            }
            let [lo, hi] = phase.duration;
            if !(lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= hi) {
                fail!(
                    format!("schedule[{p}].duration"),
                    format!("must be [min, max] with 0 < min <= max s, got [{lo}, {hi}]"),
                );
            }
        }
        // At rest in flight is a drop: it needs the height it is dropped from.
        if self.task.start.at_rest
            && self.schedule.first().is_some_and(|p| p.contacts.is_empty())
            && !self.task.start.set.contains_key("z")
        {
            fail!(
                "schedule[0].contacts".into(),
                "the robot starts at rest (task.start.at_rest), so the first phase must have a foot on the ground; a robot at rest cannot be in flight unless it is dropped from a height (task.start.set: {z: HEIGHT})".into(),
            );
        }
        let coordinates = [
            ("task.start.set", &self.task.start.set),
            ("task.end.set", &self.task.end.set),
            ("task.end.change", &self.task.end.change),
        ];
        for (field, map) in coordinates {
            for (name, value) in map {
                if !coordinate_names.contains(&name.as_str()) {
                    fail!(
                        format!("{field}.{name}"),
                        format!(
                            "the {} has no coordinate `{name}`; accepted: {}",
                            self.robot.model_name(),
                            accepted(&coordinate_names)
                        ),
                    );
                } else if !value.is_finite() {
                    fail!(
                        format!("{field}.{name}"),
                        format!("must be finite, got {value}")
                    );
                }
            }
        }
        if self.task.apex_rise.is_some()
            && self.schedule.last().is_some_and(|p| !p.contacts.is_empty())
        {
            fail!(
                "task.apex_rise".into(),
                "an apex rise ends the last phase at the apex, so the last phase must be a flight (contacts: [])".into(),
            );
        }
        if !(self.task.contact_margin.is_finite() && self.task.contact_margin >= 0.0) {
            fail!(
                "task.contact_margin".into(),
                format!(
                    "must be a finite number >= 0 (a share of the weight), got {}",
                    self.task.contact_margin
                ),
            );
        }
        if let Some(name) = &self.task.apex_of {
            let robot = self.robot.build(self.gravity);
            let bodies: Vec<&str> = robot.body.bodies.iter().map(|b| b.name.as_str()).collect();
            if self.task.apex_rise.is_none() {
                fail!(
                    "task.apex_of".into(),
                    "names the body whose rise `task.apex_rise` sets: set task.apex_rise too"
                        .into(),
                );
            } else if !bodies.contains(&name.as_str()) {
                fail!(
                    "task.apex_of".into(),
                    format!(
                        "the {} has no body `{name}`; accepted: {}",
                        self.robot.model_name(),
                        accepted(&bodies)
                    ),
                );
            }
        }
        if self.task.objective == Objective::CostOfTransport
            && !self.task.distance.is_some_and(|d| d.abs() > 1e-6)
        {
            fail!(
                "task.objective".into(),
                "cost_of_transport divides by the distance travelled: set task.distance (non-zero)"
                    .into(),
            );
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
    }

    fn set_default_name(&mut self, stem: &str) {
        self.name.get_or_insert_with(|| stem.to_owned());
    }

    fn prepare(
        tree: &mut super::yaml::Tree,
        origin: &std::path::Path,
        overrides: &[String],
    ) -> Result<(), super::ProblemError> {
        super::robot_file::splice(tree, origin, overrides)
    }
}

impl PlanarProblem {
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// What a wrench-space problem asks that its planner (`planner::wrench_hop`) does not
    /// do, by field.
    fn wrench_space_violations(&self, ground: &WrenchSpaceGroundConfig) -> Vec<(String, String)> {
        let mut bad: Vec<(String, String)> = Vec::new();
        let mut fail = |field: &str, message: &str| bad.push((field.into(), message.into()));
        if ground.data.as_deref().is_none_or(str::is_empty) {
            fail(
                "terrain.data",
                "`model: wrench_space` needs its data file, e.g. \
                 `data: data/wrench_space/rft_sand_monopod.yaml` (relative to this file)",
            );
        }
        if !(ground.grain_inertia.is_finite() && ground.grain_inertia >= 0.0) {
            fail(
                "terrain.grain_inertia",
                &format!("must be a finite number >= 0, got {}", ground.grain_inertia),
            );
        }
        let why = "on a wrench space loam plans ground phases (the MDP step) and flights in \
                   turn from rest in the sand to a distance";
        if let Some(first) = self.schedule.first() {
            if first.contacts.is_empty() {
                fail("schedule[0].contacts", &format!("must list a foot: {why}"));
            }
        }
        for p in 1..self.schedule.len() {
            let ground_now = !self.schedule[p].contacts.is_empty();
            let ground_before = !self.schedule[p - 1].contacts.is_empty();
            if ground_now == ground_before {
                fail(
                    &format!("schedule[{p}].contacts"),
                    &format!(
                        "a {} after a {}: {why}, and the feet a ground phase lists may \
                         touch the sand at any of its steps",
                        if ground_now { "ground phase" } else { "flight" },
                        if ground_now { "ground phase" } else { "flight" }
                    ),
                );
            }
        }
        if self.task.apex_rise.is_some() {
            fail(
                "task.apex_rise",
                &format!("not planned on a wrench space yet ({why})"),
            );
        }
        if self.task.periodic {
            fail(
                "task.periodic",
                &format!("not planned on a wrench space yet ({why})"),
            );
        }
        let robot = self.robot.build(self.gravity);
        if robot.drives().next().is_some() || !robot.locked.is_empty() {
            fail(
                "robot",
                "a robot with drives or a locked base is not planned on a wrench space yet: \
                 accepted, robots of ideal torque and force sources on a free base",
            );
        }
        if !self.task.start.at_rest {
            fail("task.start.at_rest", &format!("must be true: {why}"));
        }
        if self.task.objective != Objective::Effort {
            fail("task.objective", "on a wrench space: accepted `effort`");
        }
        if self.transcription.scheme != super::Scheme::Trapezoidal {
            fail(
                "transcription.scheme",
                "on a wrench space the ground phases are the MDP step and the flights \
                 trapezoidal: accepted `trapezoidal`",
            );
        }
        if self.initial_guess != InitialGuess::Rest {
            fail(
                "initial_guess",
                "on a wrench space: accepted `rest` (the robot at rest in the sand, then the \
                 plan of the relaxation without maximum dissipation)",
            );
        }
        bad
    }
}
