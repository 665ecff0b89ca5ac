//! loam: plan robot motions on soft and granular ground, and check the plans in simulation.

pub mod scalar;
pub mod solver;
pub mod symbolic;
pub mod transcription;
