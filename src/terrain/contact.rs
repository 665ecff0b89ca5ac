//! A contact model: how the ground under one foot holds it, as a part (after crocoddyl's
//! contact models). The planar planner and the planar replay loop over a robot's feet and ask
//! the foot's model; neither names a model. A model has two faces:
//!
//! - the planner's: the rows of a foot held in a stance node ([`ContactModel::stance_rows`]),
//!   the rows of the node it leaves from ([`ContactModel::lift_off_rows`]), whether a landing
//!   foot is stopped along the normal by a plastic impact, and where a foot rests;
//! - the replay's: how a landing foot is held ([`Normal`]), the guard that ends a hold and
//!   what follows it, the guard that ends motion under the law and what follows that.
//!
//! Every model holds a foot sideways (and a flat sole level) as rigid ground does, within its
//! friction cone ([`RigidGround::cone`]); models differ along the normal. Three behaviours
//! cover the shipped models, and a new law of any of them is one file implementing this trait
//! plus its registration in the problem schema (`problem::planar::PlanarTerrainConfig`):
//!
//! | model | a held foot along the normal | a hold ends | the law ends |
//! |---|---|---|---|
//! | rigid ([`super::rigid`]) | held, z̈ = 0 | F_z crosses 0: lift-off | — |
//! | added-mass bed ([`super::added_mass`]) | held (stuck) or sinking under the law | F_z crosses 0: lift-off; F_z passes F_hyd(d): sinks | ż crosses 0: sticks |
//! | linear spring-damper ([`super::spring`]) | always under the law | — | z crosses 0 upward: lift-off |
//!
//! The equations are generic over the scalar ([`ContactModel`] is implemented for every
//! [`Scalar`]): the planner traces the same law the replay evaluates.

use std::fmt::Debug;

use super::added_mass::Resistance;
use super::rigid::{RigidGround, Row};
use crate::scalar::Scalar;

/// How the ground holds a foot along the normal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normal {
    /// The foot cannot move into the ground: z̈ = 0 at its anchor (rigid ground; a foot stuck
    /// in a bed).
    Held,
    /// The foot moves along the normal under the ground's law F_z = force − m_a z̈
    /// ([`ContactModel::law`]).
    Law,
}

/// What follows when a foot's motion under the law ends (its [`ContactModel::law_guard`]
/// crosses 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LawEnd {
    /// The foot stops where it is and is held there ([`Normal::Held`]), with a plastic impact.
    Sticks,
    /// The foot leaves the ground.
    LiftsOff,
}

/// One foot's state along the normal, as the planner's rows see it (z = 0 is the surface,
/// + = up).
pub struct FootNormal<'a, S> {
    /// The foot's name, for the rows' names.
    pub name: &'a str,
    /// Height z, velocity ż and acceleration z̈ of the sole centre.
    pub z: &'a S,
    pub vz: &'a S,
    pub az: &'a S,
    /// F_z: the ground's normal force on the foot (the NLP's variable).
    pub fz: &'a S,
}

/// A contact model under one foot. See the module documentation for the two faces.
pub trait ContactModel<S: Scalar>: Debug {
    /// The name a problem file uses (`terrain.model`).
    fn name(&self) -> &'static str;

    /// The friction cone (and centre of pressure) every model holds a foot within sideways.
    fn ground(&self) -> RigidGround;

    /// Whether a foot may be below the surface (z < 0): a ground that yields. A yielding
    /// ground starts a foot at its rest depth and anchors a landing foot where it is.
    fn yields(&self) -> bool;

    /// Whether the ground keeps the footprint of a foot that left it: the foot stays above
    /// the height it left from at every later node (as above a crater; the crater's walls
    /// are not modelled) instead of above the surface.
    fn remembers_footprint(&self) -> bool {
        false
    }

    /// The depth below the surface at which the ground carries a foot at rest under `load`
    /// \[N\] (0 on rigid ground).
    fn rest_depth(&self, load: f64) -> f64;

    /// The normal law of a foot at height `z` moving at `vz`: the force before the added-mass
    /// term, and the added mass. Rigid ground has none (zero).
    fn law(&self, z: &S, vz: &S) -> Resistance<S>;

    // The planner's face.

    /// The rows of a held foot's normal at one stance node.
    fn stance_rows(&self, foot: &FootNormal<S>, weight: f64) -> Vec<Row<S>>;

    /// Whether a foot's normal force is 0 at the last node of the stance it leaves (the
    /// lift-off guard on rigid ground and on a spring: the force has fallen to 0).
    fn lifts_at_zero_force(&self) -> bool;

    /// Further rows where a foot leaves: `foot`'s z, ż and F_z at the stance's last node and
    /// its z̈ at the next phase's first node (the same state), with `least_lift` the upward
    /// acceleration margin.
    fn lift_off_rows(&self, foot: &FootNormal<S>, least_lift: f64) -> Vec<Row<S>>;

    /// Whether a landing foot is stopped along the normal by a plastic impact (else only
    /// sideways: its normal velocity carries on into the law, and the plan lands it with no
    /// sideways velocity, since an impulse with no normal part has no friction to act by).
    fn normal_impact(&self) -> bool;

    /// Whether a schedule may land a foot on this ground (the added-mass model has no
    /// landing: no crater, no impact into the bed).
    fn allows_landing(&self) -> bool {
        true
    }

    /// The first stage of `strategy: two_stage` (MODEL.md 5.2): the duration a phase is held
    /// at (`stance`: some foot on this ground; else a flight), `None` for one left free.
    /// This default is rigid ground's, measured on the hopper: stance held at 0.2 s (its cap)
    /// and flight at 0.1 s. A value outside the phase's bounds is clamped into them.
    fn stage_one_duration(&self, stance: bool) -> Option<f64> {
        Some(if stance { 0.2 } else { 0.1 })
    }

    /// The most iterations of the first stage.
    fn stage_one_iterations(&self) -> usize {
        10
    }

    // The replay's face.

    /// How a landing foot (and a foot on the ground at the start) is held along the normal.
    fn touchdown(&self) -> Normal;

    /// A held foot's guard, crossing below 0 when the hold ends: F_z (lift-off), and on a
    /// ground that yields also the margin to the most it carries at `depth`.
    fn held_guard(&self, fz: f64, _depth: f64) -> f64 {
        fz
    }

    /// Whether a hold whose guard crossed 0 ends by the foot yielding into the ground
    /// (then it moves under the law), rather than lifting off.
    fn held_yields(&self, _fz: f64, _depth: f64) -> bool {
        false
    }

    /// A foot moving under the law: the guard, crossing below 0 when that motion ends.
    fn law_guard(&self, z: f64, vz: f64) -> f64;

    /// What follows when the law's guard crosses 0.
    fn law_end(&self) -> LawEnd;
}
