//! Multi-phase direct collocation: an [`ocp::Ocp`] becomes a sparse [`nlp::Nlp`] with exact
//! derivatives.
//!
//! Variables: per phase, the state x and control u at each of its N nodes (and at each
//! interval's midpoint for Hermite-Simpson), then the phase duration T. Node k of a phase is
//! at time k T / (N - 1) from the phase start. Constraints: the scheme's defects on every
//! interval, path constraints at every node, continuity of the state (and control) between
//! phases, and constraints on chosen points (initial state, guards, task). Objective: the
//! running cost integrated with the scheme's own quadrature weights.

pub mod nlp;
pub mod ocp;
pub mod scheme;

pub use nlp::{Nlp, PhaseTrajectory, Trajectory, Violation};
pub use ocp::{Bounded, Node, Ocp, Phase, Point, PointBounds, PointConstraint, PointConstraints};
pub use scheme::Scheme;
