//! What the replay of a planar wrench-space plan (`planner::planar::wrench_space`) in the MDP
//! simulator returns: one [`MdpSample`] per step. The replay itself, which reads the plan, is
//! `output::planar::wrench_space::replay` (above both the planner and the simulator).

/// One replayed instant.
#[derive(Clone, Debug, PartialEq)]
pub struct MdpSample {
    /// Time from the plan's start [s].
    pub time: f64,
    /// Plan phase and node when the sample falls on a node (else `None`).
    pub node: Option<(usize, usize)>,
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    /// The drives' states (each integrator and command; empty without drives).
    pub drives: Vec<f64>,
    /// The inputs applied over the step that ends here (the plan's first for the first
    /// sample).
    pub inputs: Vec<f64>,
    /// Each contact's wrench during the step that ends here (surface axes) and its depth and
    /// tilt at the step's start; zero wrenches for the first sample.
    pub wrenches: Vec<[f64; 3]>,
    pub depths: Vec<f64>,
    pub tilts: Vec<f64>,
    /// Set when a contact's (d, φ) lay outside the data and was clamped.
    pub clamped: bool,
}
