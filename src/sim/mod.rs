//! Forward simulators that replay a plan's open-loop command: the reduced-order hybrid model
//! with event location, and the discrete-element bed.

pub mod dem;
pub mod hybrid;
pub mod integrator;
pub mod mdp;
pub mod planar;
pub mod scenario;
