//! The planar robots' problem schema: a robot chosen by `robot.model`, a terrain chosen by
//! `terrain.model`, a schedule of contact sets and a task. The hopper keeps its own schema
//! ([`super::Problem`]); [`super::is_planar`] tells which one a file is written in.
//!
//! ```yaml
//! robot: {model: monopod}            # planar_foot | monopod | quadruped, with their parameters
//! terrain: {model: rigid, friction: 0.8}  # or {model: added_mass, foot_radius: 0.08},
//!                                         # or {model: spring, stiffness: 5e4, damping: 400},
//!                                         # or {model: wrench_space, data: FILE} (planner::planar::wrench_space)
//! schedule:                           # phases: the feet on the ground, nodes, duration bounds
//!   - {contacts: [foot], nodes: 21, duration: [0.05, 0.4]}
//!   - {contacts: [], nodes: 21}
//!   - {contacts: [foot], nodes: 21}
//! task: {distance: 0.3, end: {at_rest: true}, objective: effort}
//! ```

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::schema::{
    default_solver_options, InitialGuess, MeshRefinement, SolverOptions, StageOne, Strategy,
    Transcription,
};
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

mod checks;

fn is_one(n: &usize) -> bool {
    *n == 1
}

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
    /// `one_stage` (default) or `two_stage`: first the phase durations held, then released
    /// (see `stage_one`).
    pub strategy: Strategy,
    /// The first stage of `strategy: two_stage`: the durations held and its iterations.
    /// Default: the contact model's rule (MODEL.md 5.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_one: Option<StageOne>,
    /// Multi-start: solve from this many starting points and keep the best plan (converged,
    /// then the lowest objective), every start listed in `solution.json`'s `starts`. The
    /// first is the file's own set-up; start k ≥ 1 is a two-stage solve from the same guess
    /// with every phase's duration held first at the k-th point of a Halton sequence through
    /// its bounds. ≥ 1; default 1. A warm start (`--warm-start`) is one start.
    #[serde(skip_serializing_if = "is_one")]
    pub starts: usize,
    /// Refine the mesh until the plan replays within a tolerance on its own model (planar
    /// problems on rigid ground, a bed or a spring). Default there: `{tolerance: 0.005,
    /// max_rounds: 3}` (`loam solve --refine TOL` overrides it); none on a wrench space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshRefinement>,
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
            strategy: Strategy::default(),
            stage_one: None,
            starts: 1,
            mesh: None,
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

    /// The robot's contacts, each with its footprint's radius where it gives one, without
    /// building a robot file's robot (its description may be invalid).
    fn contacts(&self, gravity: f64) -> Vec<(String, Option<f64>)> {
        match self {
            RobotConfig::File(f) => f
                .description
                .contacts
                .iter()
                .map(|c| (c.name.clone(), c.radius))
                .collect(),
            preset => preset
                .build(gravity)
                .contacts
                .iter()
                .map(|c| (c.name.clone(), c.radius))
                .collect(),
        }
    }

    /// The one footprint radius of the robot's contacts that give one (`radius` in a robot
    /// file): `Ok(None)` where none does, `Err` with every contact's where they differ.
    pub fn footprint_radius(&self, gravity: f64) -> Result<Option<f64>, Vec<(String, f64)>> {
        let given: Vec<(String, f64)> = self
            .contacts(gravity)
            .into_iter()
            .filter_map(|(name, r)| r.map(|r| (name, r)))
            .collect();
        match given.first() {
            None => Ok(None),
            Some((_, r)) if given.iter().all(|(_, s)| s == r) => Ok(Some(*r)),
            Some(_) => Err(given),
        }
    }

    /// The robot's contact names, without building a robot file's robot.
    pub fn contact_names(&self, gravity: f64) -> Vec<String> {
        self.contacts(gravity)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
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
    /// `planner::planar::wrench_space`, replayed by the MDP simulator.
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

    /// The values of the ground's own fields that no model accepts, each with its field
    /// (`terrain.…`) and why: friction in [0, 10] where the model has one, and what the
    /// model's own checks refuse.
    pub fn field_violations(&self) -> Vec<Violation> {
        let mut bad = Vec::new();
        let friction = match self {
            PlanarTerrainConfig::Rigid(ground) => Some(ground.friction),
            PlanarTerrainConfig::AddedMass(ground) => Some(ground.friction),
            PlanarTerrainConfig::Spring(ground) => Some(ground.friction),
            PlanarTerrainConfig::WrenchSpace(_) => None,
        };
        if let Some(friction) = friction {
            if !(friction.is_finite() && (0.0..=10.0).contains(&friction)) {
                bad.push(Violation {
                    field: "terrain.friction".into(),
                    message: format!("must be in [0, 10], got {friction}"),
                });
            }
        }
        match self {
            PlanarTerrainConfig::Spring(ground) => {
                bad.extend(
                    ground
                        .violations()
                        .into_iter()
                        .map(|(field, message)| Violation {
                            field: format!("terrain.{field}"),
                            message,
                        }),
                );
            }
            PlanarTerrainConfig::AddedMass(ground) => {
                if let Some(r) = ground.foot_radius.filter(|r| !(r.is_finite() && *r > 0.0)) {
                    bad.push(Violation {
                        field: "terrain.foot_radius".into(),
                        message: format!("must be a finite number > 0 m, got {r}"),
                    });
                }
                bad.extend(crate::problem::validate::medium_violations(
                    &ground.medium_parameters(),
                ));
            }
            // A wrench space's fields are checked with its data (`wrench_space_violations`).
            PlanarTerrainConfig::Rigid(_) | PlanarTerrainConfig::WrenchSpace(_) => {}
        }
        bad
    }

    /// The contact model under every foot: the registry of contact models for the planar
    /// planner and replay. None for a wrench space (planned by `planner::planar::wrench_space`).
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
    /// The SHA-256 of the data file's bytes (64 hex digits). Filled in when the problem is solved, so
    /// `solution.json` records it and the plan's `plan_id` covers the data; a problem that
    /// states it is refused when the file's bytes hash otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_sha256: Option<String>,
    /// M_g: the grains' inertia moving with each sole, as a multiple of diag(m, m, I) of the
    /// foot's body \[-\]. Default 2 (the wrench-space paper's value, as in `loam mdp run`).
    pub grain_inertia: f64,
}

impl Default for WrenchSpaceGroundConfig {
    fn default() -> Self {
        WrenchSpaceGroundConfig {
            data: None,
            data_sha256: None,
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

/// The added-mass bed's foot radius where neither the problem nor the robot gives one [m]: a
/// 16 cm disc, since the 7.6 cm disc of the hopper's paper would sink an 11 kg monopod about
/// 10 cm, past the cone depth, into the regime the model's fit never saw.
pub const DEFAULT_FOOT_RADIUS: f64 = 0.08;

/// The added-mass bed under a planar robot's feet. Each foot meets the grains as the
/// hopper's foot does: a flat disc of `foot_radius` pressed down (the model is vertical);
/// sideways the bed holds a foot in stance like rigid ground, within the friction cone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AddedMassGroundConfig {
    /// μ: Coulomb friction coefficient between a foot and the grains \[-\]. Default 0.8.
    pub friction: f64,
    /// R: radius of the disc every foot presses into the bed \[m\]. Default: the robot's
    /// feet's `radius` (robot files: `contacts[].radius`, the hopper's 0.038), else 0.08.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub foot_radius: Option<f64>,
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
            // The robot's feet's radius, filled in when the problem is read (`resolve`).
            foot_radius: None,
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

    /// One robot, one foot: a missing `foot_radius` becomes the robot's feet's `radius`, else
    /// [`DEFAULT_FOOT_RADIUS`]; it stays missing where the feet's radii differ (which the
    /// problem's validation refuses). How a problem file is read (`resolve`) and how a replay
    /// on a medium preset picks its disc.
    pub fn fill_foot_radius(&mut self, robot: &RobotConfig, gravity: f64) {
        if self.foot_radius.is_none() {
            if let Ok(r) = robot.footprint_radius(gravity) {
                self.foot_radius = Some(r.unwrap_or(DEFAULT_FOOT_RADIUS));
            }
        }
    }

    /// R \[m\]: `foot_radius`, else [`DEFAULT_FOOT_RADIUS`].
    pub fn radius(&self) -> f64 {
        self.foot_radius.unwrap_or(DEFAULT_FOOT_RADIUS)
    }

    /// The bed's model under one foot.
    pub fn bed(&self) -> AddedMass {
        AddedMass::from_medium(&self.medium_parameters(), self.radius())
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
    /// The final state equals the start (but for the base's x): one cycle of a gait, whose
    /// stride length is `distance`. A periodic schedule that begins and ends with a flight
    /// runs apex to apex: the centre of mass's vertical velocity is 0 at the start (and so,
    /// by periodicity, at the end).
    pub periodic: bool,
    /// Mean forward speed \[m/s\], > 0: the phases' durations sum to `distance / speed`
    /// (needs `distance`). Default: the durations are free within their bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// A periodic task: how many strides its schedule holds (`distance` is their sum), so
    /// that a replay repeats the plan until it has run at least three strides (one plan of
    /// three strides once, a one-stride plan three times). Default 1.
    #[serde(skip_serializing_if = "is_one")]
    pub strides: usize,
    /// What is minimised. Default `effort`.
    pub objective: Objective,
    /// The least height \[m\], > 0, of a swinging foot above the ground at the middle of
    /// each phase it is off the ground in: at node k of N the foot keeps above the surface by
    /// `swing_height · (1 − |2k/(N−1) − 1|)`, a tent that is 0 at the phase's ends. Without
    /// it a swing may skim the ground (the effort-optimal swing often does), which any replay
    /// turns into an early touchdown. Default: none (the foot only stays above the surface).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swing_height: Option<f64>,
    /// The safety margin of every contact that the planner holds \[-\], >= 0: each held foot
    /// keeps this share of the robot's weight (split over the feet down) at every stance node
    /// but its lift-off node, and a foot leaving a bed accelerates upward with at least this
    /// share of g. A plan whose feet graze zero force mid-stance lifts them in any replay.
    /// Default 0.05; 0 plans to the bare complementarity (the optimum of the model itself).
    pub contact_margin: f64,
}

impl PlanarTask {
    /// The index of the body whose centre of mass the apex task lifts (`apex_of`), if the
    /// task names one.
    pub fn apex_body(&self, robot: &crate::model::planar::PlanarRobot) -> Option<usize> {
        self.apex_of
            .as_ref()
            .and_then(|name| robot.body_index(name))
    }

    /// A gait's stride time, `distance / speed`, where the task sets both.
    pub fn stride_time(&self) -> Option<f64> {
        Some(self.distance?.abs() / self.speed?)
    }

    /// How many times a replay runs the plan to cover at least `strides` strides (1 for a
    /// task that is not periodic).
    pub fn replay_periods(&self, strides: usize) -> usize {
        if self.periodic {
            strides.div_ceil(self.strides.max(1)).max(1)
        } else {
            1
        }
    }
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
            speed: None,
            strides: 1,
            objective: Objective::default(),
            swing_height: None,
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
    /// The motion's duration, Σ over phases, with `effort` weighted by 1e-4 added: a
    /// minimum-time plan drives its inputs to their limits, and where an input does not bind
    /// the duration does not fix it; the small effort term picks the least-effort input
    /// there (it moves the duration by about that weight relative).
    Time,
}
