//! The sections every problem shares (`problem::planar::PlanarProblem` holds them): the
//! granular medium's fields, the transcription, the initial guess, the two-stage strategy,
//! mesh refinement and IPOPT's options, each with its documented defaults.

use std::collections::BTreeMap;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

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

/// Where IPOPT starts (`initial_guess`). The jump's and a gait's NLPs are not convex: where
/// IPOPT ends depends on where it starts (README, "Initial guesses and local optima").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InitialGuess {
    /// Every variable zero, as in the paper.
    Zero,
    /// The start at rest at every node: the robot in its start posture with its weight shared
    /// by the feet on the ground (a drive at its command, holding its load) and its base moved
    /// evenly over the task's distance. `auto` is read as `rest`.
    #[default]
    #[serde(alias = "auto")]
    #[schemars(transform = super::json_schema::also_auto)]
    Rest,
    /// For gaits: the schedule's footholds. The base moves evenly over the distance; each
    /// stance's feet stand still where the start posture puts them at the stance's middle,
    /// the swing feet move between footholds in a low arc, the joints reach them (damped least
    /// squares), the weight is shared by the feet on the ground
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
