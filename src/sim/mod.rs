//! Forward simulators that replay a plan's open-loop command: the reduced-order hybrid model
//! with event location, and the discrete-element bed.

pub mod dem;
