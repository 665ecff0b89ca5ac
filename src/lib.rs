//! loam: plan robot motions on soft and granular ground, and check the plans in simulation.
//!
//! The `planner` feature (on by default) brings CasADi and IPOPT: the symbolic bridge, the
//! transcription, the solver and the planner. Without it loam replays and simulates saved
//! plans and needs neither library.

pub mod model;
pub mod output;
#[cfg(feature = "planner")]
pub mod planner;
pub mod plot;
pub mod problem;
pub mod scalar;
pub mod sim;
#[cfg(feature = "planner")]
pub mod solver;
#[cfg(feature = "planner")]
pub mod symbolic;
pub mod terrain;
#[cfg(feature = "planner")]
pub mod transcription;
