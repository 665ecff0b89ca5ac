//! Terrain models: how the ground holds a foot. Each is closed-form and generic over the
//! scalar, so the planner and the simulators evaluate the same equations; the closed-form
//! grounds are [`ContactModel`]s, the wrench space is planned through its own transcription.

pub mod added_mass;
pub mod contact;
pub mod hull;
pub mod rigid;
pub mod spring;
pub mod wrench_set;
pub mod wrench_space;

pub use added_mass::{AddedMass, Bed};
pub use contact::ContactModel;
pub use spring::SpringGround;
