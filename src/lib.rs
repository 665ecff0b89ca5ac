//! loam: plan robot motions on soft and granular ground, and check the plans in simulation.
//!
//! The `planner` feature (on by default) brings CasADi and IPOPT: the symbolic bridge, the
//! transcription, the solver and the planner. Without it loam replays and simulates saved
//! plans and needs neither library.
//!
//! # The NLPs loam builds
//!
//! A problem file becomes an optimal control problem ([`transcription::Ocp`]): phases, each
//! a domain of the hybrid dynamics with its own grid of N_p nodes and a free duration T_p
//! within bounds; per node a state x and a control u; dynamics, running cost and path
//! constraints per phase; how each phase is entered (continuity, or an impact reset);
//! constraints on chosen points (start, take-off, apex, task). The transcription turns it
//! into one sparse NLP by direct collocation (trapezoidal, or Hermite-Simpson with
//! midpoints), with exact Jacobians and Hessians of every element from CasADi, and IPOPT
//! solves it ([`solver`]):
//!
//! ```text
//! minimise   Σ_p Σ_intervals quadrature of the running cost          (the scheme's weights)
//! over       x_{p,k}, u_{p,k} at every node, T_p per phase
//! subject to x_{p,k+1} − x_{p,k} = collocation of ẋ = f_p(x, u)      (every interval)
//!            g_p(x, u) within bounds                                  (every node)
//!            entry_p(x_{p−1,last}, x_{p,first}) = 0  or  continuity   (every switch)
//!            task(points) within bounds,  T_p ∈ [T_min, T_max]
//! ```
//!
//! A phase may instead be a simulator's own discrete step ([`transcription::Phase::step`]:
//! x_{k+1} = step(x_k, u_k, h), cost h·l(x_k, u_k)), so that a simulator replays it exactly.
//!
//! Four planners fill it in:
//! - the hopper's (`planner::hopper`, docs/MODEL.md section 1): x = (z_m, ż_m, z_r, ż_r, z_f, ż_f,
//!   e, z_d), u = ż_d, cost ½u²; stance and flight in turn (one hop on a granular bed,
//!   any number on rigid ground, a plastic impact on the foot at each landing); the last
//!   flight ends at the apex, where the rod's rise is the task;
//! - the planar robots' (`planner::planar`): x = (q, v), u = (inputs, accelerations,
//!   contact wrenches and impulses); the equations of motion M(q) a + h(q, v) = B u +
//!   Σ Jᵀ w as constraints (implicit form), rigid sticking contact with a friction cone,
//!   plastic impacts at touchdown, F_z = 0 at lift-off; tasks of start and end poses,
//!   distance, apex rise and periodicity; costs effort, torque² or cost of transport;
//! - a planar robot with a wrench space under every foot (`planner::planar::wrench_space`, a planar
//!   problem file on `terrain: {model: wrench_space}`; the hopper on an inclined rail is its
//!   robot file on a tilted guide, docs/WRENCH_SPACE.md section 4): u = (inputs, a, λ per foot, y); ground phases are the MDP step of the whole
//!   multibody with maximum dissipation over each foot's vertices, flights trapezoidal with
//!   the implicit equations of motion, start at rest in the sand, end at a distance.
//!
//! Each planner's module docs write its NLP out in full; the hopper's and the planar robots'
//! implement [`planner::Transcribe`], through which one pipeline gives them their starting
//! points and solves them.

pub mod api;
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
pub mod sweep;
#[cfg(feature = "planner")]
pub mod symbolic;
pub mod terrain;
#[cfg(feature = "planner")]
pub mod transcription;
