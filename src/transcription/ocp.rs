//! A multi-phase optimal control problem, stated with closures over SX symbols so that the
//! transcription knows nothing of any particular robot.

use crate::symbolic::Sx;

/// A constraint expression with its bounds: `lower <= expr <= upper`.
pub struct Bounded {
    pub name: String,
    pub expr: Sx,
    pub lower: f64,
    pub upper: f64,
    /// Typical magnitude of the expression, used to scale its row.
    pub nominal: f64,
}

impl Bounded {
    pub fn equal(name: impl Into<String>, expr: Sx, value: f64) -> Self {
        Bounded {
            name: name.into(),
            expr,
            lower: value,
            upper: value,
            nominal: 1.0,
        }
    }
    pub fn between(name: impl Into<String>, expr: Sx, lower: f64, upper: f64) -> Self {
        Bounded {
            name: name.into(),
            expr,
            lower,
            upper,
            nominal: 1.0,
        }
    }
    pub fn at_least(name: impl Into<String>, expr: Sx, lower: f64) -> Self {
        Bounded {
            name: name.into(),
            expr,
            lower,
            upper: f64::INFINITY,
            nominal: 1.0,
        }
    }
    pub fn nominal(mut self, nominal: f64) -> Self {
        self.nominal = nominal;
        self
    }
    pub fn at_most(name: impl Into<String>, expr: Sx, upper: f64) -> Self {
        Bounded {
            name: name.into(),
            expr,
            lower: f64::NEG_INFINITY,
            upper,
            nominal: 1.0,
        }
    }
}

pub type Dynamics = Box<dyn Fn(&[Sx], &[Sx]) -> Vec<Sx>>;
/// A discrete step x_{k+1} = step(x_k, u_k, h), in place of collocation (see [`Phase::step`]).
pub type Step = Box<dyn Fn(&[Sx], &[Sx], &Sx) -> Vec<Sx>>;
pub type RunningCost = Box<dyn Fn(&[Sx], &[Sx]) -> Sx>;
pub type PathConstraints = Box<dyn Fn(&[Sx], &[Sx]) -> Vec<Bounded>>;
/// Constraints on several points of the trajectory; the argument holds, per point, the
/// state followed by the control.
pub type PointConstraints = Box<dyn Fn(&[Vec<Sx>]) -> Vec<Bounded>>;

/// One phase: a domain of the hybrid system with its own dynamics and a free duration.
pub struct Phase {
    pub name: String,
    pub nodes: usize,
    pub duration: (f64, f64),
    pub dynamics: Dynamics,
    pub running_cost: Option<RunningCost>,
    /// Constraints at every node (and every Hermite-Simpson midpoint).
    pub path: Option<PathConstraints>,
    /// Simple bounds on the state and control at every node of the phase.
    pub state_bounds: Vec<(f64, f64)>,
    pub control_bounds: Vec<(f64, f64)>,
    /// How the phase is entered from the previous one, in place of equal states (and
    /// controls): constraints on [previous phase's last point, this phase's first point],
    /// e.g. an impact reset. `None`: continuity.
    pub entry: Option<PointConstraints>,
    /// A phase transcribed as a simulator's own discrete step instead of by collocation: the
    /// defect of interval k is x_{k+1} − step(x_k, u_k, h) and its running cost h l(x_k, u_k)
    /// (`dynamics` is then unused). Only with a scheme without midpoints. `None`: the NLP's
    /// collocation scheme.
    pub step: Option<Step>,
}

/// A point of the trajectory: a node of a phase. `Last` is the phase's final node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    First,
    Last,
    Index(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    pub phase: usize,
    pub node: Node,
}

/// Constraints over a fixed set of points, instantiated at each entry of `instances`
/// (one compiled function, many index maps).
pub struct PointConstraint {
    pub name: String,
    pub f: PointConstraints,
    pub instances: Vec<Vec<Point>>,
}

/// Fixes (or bounds) state components at one point with simple variable bounds.
pub struct PointBounds {
    pub point: Point,
    pub state_bounds: Vec<Option<(f64, f64)>>,
}

pub struct Ocp {
    pub state_names: Vec<String>,
    pub control_names: Vec<String>,
    /// Typical magnitude of each state and control, used to scale the NLP.
    pub state_nominal: Vec<f64>,
    pub control_nominal: Vec<f64>,
    pub phases: Vec<Phase>,
    /// Link consecutive phases by equal states; `control_continuity` also equates controls.
    pub control_continuity: bool,
    pub point_constraints: Vec<PointConstraint>,
    pub point_bounds: Vec<PointBounds>,
    /// Bounds on the sum of the phases' durations (a gait's stride time, from its speed);
    /// `None`: the durations are bounded only phase by phase.
    pub total_duration: Option<(f64, f64)>,
}

impl Ocp {
    pub fn n_states(&self) -> usize {
        self.state_names.len()
    }
    pub fn n_controls(&self) -> usize {
        self.control_names.len()
    }
}
