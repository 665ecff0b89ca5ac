//! loam: plan robot motions on soft and granular ground, and check the plans in simulation.

pub mod model;
pub mod output;
pub mod planner;
pub mod plot;
pub mod problem;
pub mod scalar;
pub mod sim;
pub mod solver;
pub mod symbolic;
pub mod terrain;
pub mod transcription;
