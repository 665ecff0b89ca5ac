//! The hopper's plan: a resolved [`Problem`] becomes the hopper's optimal control problem
//! (docs/MODEL.md section 1), which the planner ([`super`]) transcribes and solves.
//!
//! The NLP (per phase p with N_p nodes and duration T_p, node k at t = k T_p / (N_p − 1)):
//!
//! ```text
//! minimise   Σ_intervals quadrature of ½ u²                     (the scheme's own weights)
//! over       x_k = (z_m, ż_m, z_r, ż_r, z_f, ż_f, e, z_d), u_k = ż_d, T_p
//! subject to collocation defects of ẋ = f_domain(x, u)         (every interval)
//!            −F_max ≤ F_m ≤ F_max, |z_m − z_r| ≤ stroke, z_r − z_f ≥ gap   (every node)
//!            stance on rigid ground: F_s + m_f g ≥ 0;  on a bed: ż_f ≤ 0
//!            rest at the start (velocities 0, foot at rest height, e holding the motor,
//!            z_d = z_m − z_r, actuator position free or fixed)
//!            takeoff: rigid F_s + m_f g = 0;  bed ż_f = 0 and −F_s − m_f g ≥ 0
//!            flight: z_f ≥ its takeoff height;  the last ends at the apex, Σ m_i ż_i = 0
//!            z_r(apex) − z_r(start) = apex height;  x and u continuous at takeoff
//!            several hops (rigid ground): every stance ends at a takeoff; a flight
//!            followed by a stance ends at touchdown, z_f = 0, and the stance starts
//!            with ż_f = 0, every other state and u continuous (plastic impact)
//! ```

use std::time::Instant;

use super::warm_start::{NamedMultipliers, PlanStart};
use super::{solve_from, starting_points, PlanError, StartOutcome, Transcribe};
use crate::model::hopper::{self, state, Domain, Hopper};
use crate::problem::{self, InitialGuess, Problem, StartPosition};
use crate::scalar::Scalar;
use crate::solver::{self, IterationInfo, SolveReport, SolveSettings};
use crate::symbolic::Sx;
use crate::terrain::Terrain;
use crate::transcription::{
    Bounded, Nlp, Node, Ocp, Phase, PhaseTrajectory, Point, PointBounds, PointConstraint,
    PointConstraints, Scheme, Trajectory,
};

/// The jump as the planner sees it: robot, terrain, schedule and task, in model types.
#[derive(Clone, Debug)]
pub struct Jump {
    pub robot: Hopper,
    pub terrain: Terrain,
    /// Per phase: domain, node count, duration bounds.
    pub phases: Vec<(Domain, usize, (f64, f64))>,
    pub task: problem::Task,
    pub scheme: Scheme,
}

impl Jump {
    pub fn from_problem(problem: &Problem) -> Result<Jump, PlanError> {
        let robot = Hopper::from_problem(problem);
        let terrain = Terrain::from_problem(&problem.terrain, problem.robot.foot_radius);
        let domains: Vec<Domain> = problem.phases.iter().map(|p| domain_of(p.domain)).collect();
        let alternate = domains.len() % 2 == 0
            && domains
                .chunks(2)
                .all(|hop| hop == [Domain::Stance, Domain::Flight]);
        let granular = problem.terrain.model != problem::TerrainModel::Rigid;
        if !alternate || (granular && domains.len() != 2) {
            let names: Vec<&str> = domains.iter().map(|d| d.name()).collect();
            return Err(PlanError::Schedule(format!("[{}]", names.join(", "))));
        }
        let phases = problem
            .phases
            .iter()
            .map(|p| {
                let [lo, hi] = p.duration_bounds();
                (domain_of(p.domain), p.nodes, (lo, hi))
            })
            .collect();
        let scheme = match problem.transcription.scheme {
            problem::Scheme::Trapezoidal => Scheme::Trapezoidal,
            problem::Scheme::HermiteSimpson => Scheme::HermiteSimpson,
        };
        Ok(Jump {
            robot,
            terrain,
            phases,
            task: problem.task.clone(),
            scheme,
        })
    }

    fn granular(&self) -> bool {
        matches!(self.terrain, Terrain::AddedMass(_))
    }

    /// The state at rest before the jump with the actuator at `position`.
    pub fn rest_state(&self, position: f64) -> [f64; state::COUNT] {
        self.robot.rest_state(&self.terrain, position)
    }
}

/// The hopper's problem as the planner transcribes it.
impl Transcribe for Jump {
    /// The hopper's optimal control problem.
    fn ocp(&self) -> Ocp {
        use state::*;
        let inf = f64::INFINITY;
        let task = self.task.clone();
        let path = {
            let (robot, terrain) = (self.robot.clone(), self.terrain.clone());
            move |domain: Domain| -> Box<dyn Fn(&[Sx], &[Sx]) -> Vec<Bounded>> {
                let (robot, terrain, task) = (robot.clone(), terrain.clone(), task.clone());
                Box::new(move |x: &[Sx], u: &[Sx]| {
                    let mut c = leg_limits(&robot, &task, x, &u[0]);
                    if domain == Domain::Stance && terrain == Terrain::Rigid {
                        c.push(
                            Bounded::at_least("ground reaction", robot.ground_load(x), 0.0)
                                .nominal(10.0),
                        );
                    }
                    c
                })
            }
        };

        // Landing on rigid ground: the foot meets the ground (the guard) and stops there (a
        // plastic impact on the foot alone: the spring carries no impulse, so motor and rod
        // keep their velocities); the command and its rate carry on.
        let touchdown = || -> PointConstraints {
            Box::new(|p: &[Vec<Sx>]| {
                let (before, after) = (&p[0], &p[1]);
                let mut rows = vec![
                    Bounded::equal("foot on the ground", before[Z_F].clone(), 0.0).nominal(0.01),
                ];
                for (i, name) in hopper::STATE_NAMES.iter().enumerate() {
                    let (row, value) = if i == V_F {
                        (format!("{name} after impact"), after[i].clone())
                    } else {
                        (
                            format!("{name} continuous"),
                            after[i].clone() - before[i].clone(),
                        )
                    };
                    rows.push(Bounded::equal(row, value, 0.0));
                }
                rows.push(Bounded::equal(
                    "u continuous",
                    after[COUNT].clone() - before[COUNT].clone(),
                    0.0,
                ));
                rows
            })
        };
        let mut phases = Vec::new();
        for (p, &(domain, nodes, duration)) in self.phases.iter().enumerate() {
            let mut state_bounds = vec![(-inf, inf); COUNT];
            match (domain, self.granular()) {
                (Domain::Stance, true) => state_bounds[V_F] = (-inf, 0.0),
                (Domain::Flight, false) => state_bounds[Z_F] = (0.0, inf),
                _ => {}
            }
            let (robot, terrain) = (self.robot.clone(), self.terrain.clone());
            phases.push(Phase {
                name: domain.name().into(),
                nodes,
                duration,
                dynamics: Box::new(move |x: &[Sx], u: &[Sx]| {
                    robot.derivatives(domain, &terrain, x, &u[0])
                }),
                running_cost: Some(Box::new(|_x: &[Sx], u: &[Sx]| u[0].square() * 0.5)),
                path: Some(path(domain)),
                state_bounds,
                control_bounds: vec![(-inf, inf)],
                entry: (p > 0 && domain == Domain::Stance).then(touchdown),
                step: None,
            });
        }

        let takeoff = Point {
            phase: 0,
            node: Node::Last,
        };
        // Every hop's take-off: the last node of each stance.
        let takeoffs: Vec<Vec<Point>> = (0..self.phases.len())
            .step_by(2)
            .map(|phase| {
                vec![Point {
                    phase,
                    node: Node::Last,
                }]
            })
            .collect();
        let apex = Point {
            phase: self.phases.len() - 1,
            node: Node::Last,
        };
        let fixed = |v: f64| Some((v, v));
        let mut point_bounds = vec![start_at_rest(&self.task, &self.rest_state(0.0))];
        let mut point_constraints = vec![command_at_rest()];
        let robot = self.robot.clone();
        if self.granular() {
            let mut takeoff_bounds = vec![None; COUNT];
            takeoff_bounds[V_F] = fixed(0.0);
            point_bounds.push(PointBounds {
                point: takeoff,
                state_bounds: takeoff_bounds,
            });
            point_constraints.push(PointConstraint {
                name: "takeoff".into(),
                f: Box::new(move |p: &[Vec<Sx>]| {
                    vec![Bounded::at_most(
                        "spring pulls the foot up",
                        robot.ground_load(&p[0]),
                        0.0,
                    )
                    .nominal(10.0)]
                }),
                instances: vec![vec![takeoff]],
            });
            let flight_nodes = self.phases[1].1;
            point_constraints.push(PointConstraint {
                name: "flight clearance".into(),
                f: Box::new(|p: &[Vec<Sx>]| {
                    vec![Bounded::at_least(
                        "foot above its takeoff height",
                        p[1][Z_F].clone() - p[0][Z_F].clone(),
                        0.0,
                    )
                    .nominal(0.01)]
                }),
                instances: (1..flight_nodes)
                    .map(|k| {
                        vec![
                            takeoff,
                            Point {
                                phase: 1,
                                node: Node::Index(k),
                            },
                        ]
                    })
                    .collect(),
            });
        } else {
            point_constraints.push(PointConstraint {
                name: "takeoff".into(),
                f: Box::new(move |p: &[Vec<Sx>]| {
                    vec![
                        Bounded::equal("ground reaction", robot.ground_load(&p[0]), 0.0)
                            .nominal(10.0),
                    ]
                }),
                instances: takeoffs,
            });
        }
        point_constraints.extend(apex_rise(&self.robot, self.task.apex_height, apex));

        Ocp {
            total_duration: None,
            state_names: hopper::STATE_NAMES.iter().map(|s| s.to_string()).collect(),
            control_names: hopper::CONTROL_NAMES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            state_nominal: vec![0.1, 1.0, 0.1, 1.0, 0.01, 0.1, 0.05, 0.01],
            control_nominal: vec![1.0],
            phases,
            control_continuity: true,
            point_constraints,
            point_bounds,
        }
    }

    /// The starting point of the optimiser.
    ///
    /// `Zero` is the paper's all-zero guess, `Rest` the static equilibrium at every node (the
    /// default), `Ballistic` a crouch-and-extend take-off into a ballistic flight (see
    /// [`InitialGuess`]).
    fn initial_guess(&self, kind: InitialGuess, nlp: &Nlp) -> Vec<f64> {
        match kind {
            InitialGuess::Zero => vec![0.0; nlp.n_variables()],
            InitialGuess::Rest => nlp.pack(&self.rest_guess()),
            InitialGuess::Ballistic => nlp.pack(&self.ballistic_guess()),
            InitialGuess::Best => unreachable!("plan_with solves `best` as rest and ballistic"),
            InitialGuess::Footholds => unreachable!("refused by the hopper's schema"),
        }
    }

    fn scheme(&self) -> Scheme {
        self.scheme
    }
}

impl Jump {
    fn rest_guess(&self) -> Trajectory {
        let a = match self.task.start_position {
            StartPosition::Free => 0.0,
            StartPosition::Fixed(a) => a,
        };
        let x = self.rest_state(a).to_vec();
        Trajectory {
            phases: self
                .phases
                .iter()
                .map(|&(domain, nodes, bounds)| PhaseTrajectory {
                    name: domain.name().into(),
                    duration: 0.1_f64.clamp(bounds.0, bounds.1),
                    states: vec![x.clone(); nodes],
                    controls: vec![vec![0.0]; nodes],
                    ..Default::default()
                })
                .collect(),
        }
    }

    /// Per hop: a crouch-and-extend stance from rest, then a ballistic flight that peaks
    /// at the task's apex height; a flight followed by another stance comes back down to
    /// the ground, and the next stance starts from rest again.
    fn ballistic_guess(&self) -> Trajectory {
        use state::*;
        let g = self.robot.gravity;
        let v0 = (2.0 * g * self.task.apex_height).sqrt();
        let (a0, a1) = match self.task.start_position {
            StartPosition::Free => (-0.8 * self.task.stroke, 0.8 * self.task.stroke),
            StartPosition::Fixed(a) => (a, 0.8 * self.task.stroke),
        };
        let mut phases = Vec::new();
        for hop in self.phases.chunks(2) {
            let [(_, n_stance, stance_bounds), (_, n_flight, flight_bounds)] = hop else {
                unreachable!("a hop is a stance and a flight (checked by from_problem)");
            };
            let (n_stance, n_flight) = (*n_stance, *n_flight);
            let lands = phases.len() + 2 < self.phases.len();
            let t_up = v0 / g;
            let t_flight = if lands { 2.0 * t_up } else { t_up };
            let t_flight = t_flight.clamp(flight_bounds.0, flight_bounds.1);
            let t_stance = 0.1_f64.clamp(stance_bounds.0, stance_bounds.1);
            let mut stance = PhaseTrajectory {
                name: "stance".into(),
                duration: t_stance,
                ..Default::default()
            };
            for k in 0..n_stance {
                let s = k as f64 / (n_stance - 1) as f64;
                // Smooth extension a(s) from a0 to a1; the whole body rises with the rod.
                let shape = s * s * (3.0 - 2.0 * s);
                let rate = 6.0 * s * (1.0 - s) / t_stance;
                let a = a0 + (a1 - a0) * shape;
                let mut x = self.rest_state(a);
                x[V_M] = (a1 - a0) * rate;
                x[V_R] = v0 * s;
                x[V_M] += v0 * s;
                x[Z_R] += 0.5 * v0 * s * s * t_stance;
                x[Z_M] += 0.5 * v0 * s * s * t_stance;
                stance.states.push(x.to_vec());
                stance.controls.push(vec![(a1 - a0) * rate]);
            }
            let last = stance.states.last().unwrap().clone();
            let mut flight = PhaseTrajectory {
                name: "flight".into(),
                duration: t_flight,
                ..Default::default()
            };
            for k in 0..n_flight {
                let t = t_flight * k as f64 / (n_flight - 1) as f64;
                let mut x = last.clone();
                for (z, v) in [(Z_M, V_M), (Z_R, V_R), (Z_F, V_F)] {
                    x[z] += v0 * t - 0.5 * g * t * t;
                    x[v] = v0 - g * t;
                }
                flight.states.push(x);
                flight.controls.push(vec![0.0]);
            }
            phases.push(stance);
            phases.push(flight);
        }
        Trajectory { phases }
    }
}

/// The actuator's and the leg's limits at a node: drive force, stroke, rod–foot stop.
fn leg_limits(robot: &Hopper, task: &problem::Task, x: &[Sx], u: &Sx) -> Vec<Bounded> {
    use state::*;
    vec![
        Bounded::between(
            "motor force",
            robot.motor_force(x, u),
            -task.max_motor_force,
            task.max_motor_force,
        )
        .nominal(10.0),
        Bounded::between(
            "stroke",
            x[Z_M].clone() - x[Z_R].clone(),
            -task.stroke,
            task.stroke,
        )
        .nominal(0.01),
        Bounded::at_least(
            "rod-foot gap",
            x[Z_R].clone() - x[Z_F].clone(),
            task.min_rod_foot_gap,
        )
        .nominal(0.01),
    ]
}

/// The first node at rest: velocities 0, rod and foot at `rest`, the drive's integrator
/// holding the motor, the actuator position free within the stroke or fixed by the task.
fn start_at_rest(task: &problem::Task, rest: &[f64; state::COUNT]) -> PointBounds {
    use state::*;
    let fixed = |v: f64| Some((v, v));
    let position = match task.start_position {
        StartPosition::Free => (rest[Z_R] - task.stroke, rest[Z_R] + task.stroke),
        StartPosition::Fixed(a) => (rest[Z_R] + a, rest[Z_R] + a),
    };
    let mut state_bounds = vec![
        Some(position),
        fixed(0.0),
        fixed(rest[Z_R]),
        fixed(0.0),
        fixed(rest[Z_F]),
        fixed(0.0),
        fixed(rest[E]),
        None,
    ];
    if let StartPosition::Fixed(a) = task.start_position {
        state_bounds[Z_D] = fixed(a);
    }
    PointBounds {
        point: Point {
            phase: 0,
            node: Node::First,
        },
        state_bounds,
    }
}

/// At the start the command equals the actuator position (the drive is at rest).
fn command_at_rest() -> PointConstraint {
    use state::*;
    PointConstraint {
        name: "start at rest".into(),
        f: Box::new(|p: &[Vec<Sx>]| {
            let x = &p[0];
            vec![Bounded::equal(
                "command equals actuator position",
                x[Z_D].clone() - (x[Z_M].clone() - x[Z_R].clone()),
                0.0,
            )
            .nominal(0.01)]
        }),
        instances: vec![vec![Point {
            phase: 0,
            node: Node::First,
        }]],
    }
}

/// The apex at point `apex` (momentum 0) and the task: the rod's rise from the start to it
/// equals `rise` (in the robot's own coordinate).
fn apex_rise(robot: &Hopper, rise: f64, apex: Point) -> [PointConstraint; 2] {
    let robot = robot.clone();
    let start = Point {
        phase: 0,
        node: Node::First,
    };
    [
        PointConstraint {
            name: "apex".into(),
            f: Box::new(move |p: &[Vec<Sx>]| {
                vec![Bounded::equal("momentum", robot.momentum(&p[0]), 0.0)]
            }),
            instances: vec![vec![apex]],
        },
        PointConstraint {
            name: "task".into(),
            f: Box::new(move |p: &[Vec<Sx>]| {
                use state::Z_R;
                vec![
                    Bounded::equal("apex rise", p[1][Z_R].clone() - p[0][Z_R].clone(), rise)
                        .nominal(0.01),
                ]
            }),
            instances: vec![vec![start, apex]],
        },
    ]
}

fn domain_of(domain: problem::Domain) -> Domain {
    match domain {
        problem::Domain::Stance => Domain::Stance,
        problem::Domain::Flight => Domain::Flight,
    }
}

/// A solved (or attempted) plan.
pub struct Plan {
    pub jump: Jump,
    pub report: SolveReport,
    pub trajectory: Trajectory,
    /// z_r at the apex minus z_r at the start.
    pub apex_rise: f64,
    pub setup_seconds: f64,
    pub n_variables: usize,
    pub n_constraints: usize,
    /// IPOPT's multipliers at the end, by row and variable name (for later warm starts).
    pub multipliers: NamedMultipliers,
    /// `initial_guess: best`: every start, the kept one marked (empty for one start).
    pub starts: Vec<StartOutcome>,
}

/// Transcribes the problem, ready to solve: set-up is timed by the caller.
pub fn transcribe(problem: &Problem) -> Result<(Jump, Nlp), PlanError> {
    let jump = Jump::from_problem(problem)?;
    let nlp = jump.nlp()?;
    Ok((jump, nlp))
}

/// The name of the NLP rows that hold the task's apex rise, z_r(apex) − z_r(start) (one per
/// hop that states it): the only place the apex height enters the NLP ([`apex_rise`]).
const APEX_RISE_ROW: &str = "task: apex rise";

/// A transcription kept between the solves of a height sweep.
///
/// Problems that differ only in `task.apex_height` have the same NLP but for the bounds of the
/// apex-rise rows: the same variables, rows, sparsity and CasADi functions (the height is a
/// bound, never a term; the ballistic guess reads it from the [`Jump`], not from the NLP).
/// Building the NLP is the whole of a solve's set-up (4.5 ms for the rigid jump, 6.4 ms on the
/// bed), so a sweep over heights builds it once and moves those bounds for each height. Any
/// other difference (terrain, nodes, scheme, robot) builds a new one.
#[derive(Default)]
pub struct Transcriptions {
    /// The problem last transcribed, its apex height zeroed: what the kept NLP fits.
    key: Option<Problem>,
    /// Its NLP, between a solve's [`Self::keep`] and the next [`Self::take`].
    nlp: Option<Nlp>,
    /// Its apex-rise rows, looked up at the first reuse.
    rows: Option<Vec<usize>>,
}

impl Transcriptions {
    /// The problem's jump and NLP: the kept NLP with its apex rows moved to this height when
    /// only the height differs, else a new transcription.
    pub fn take(&mut self, problem: &Problem) -> Result<(Jump, Nlp), PlanError> {
        let jump = Jump::from_problem(problem)?;
        let key = height_free(problem);
        match self.nlp.take() {
            Some(mut nlp) if self.key.as_ref() == Some(&key) => {
                let rows = self.rows.get_or_insert_with(|| {
                    (0..nlp.n_constraints())
                        .filter(|&row| nlp.constraint_name(row) == APEX_RISE_ROW)
                        .collect()
                });
                let rise = jump.task.apex_height;
                for &row in rows.iter() {
                    nlp.g_lower[row] = rise;
                    nlp.g_upper[row] = rise;
                }
                Ok((jump, nlp))
            }
            _ => {
                let nlp = jump.nlp()?;
                (self.key, self.rows) = (Some(key), None);
                Ok((jump, nlp))
            }
        }
    }

    /// Keeps `nlp`, the NLP [`Self::take`] gave for `problem`, for the next take.
    pub fn keep(&mut self, problem: &Problem, nlp: Nlp) {
        let key = height_free(problem);
        if self.key.as_ref() != Some(&key) {
            (self.key, self.rows) = (Some(key), None);
        }
        self.nlp = Some(nlp);
    }
}

/// The problem with its apex height zeroed: what two problems must share to share an NLP.
fn height_free(problem: &Problem) -> Problem {
    let mut key = problem.clone();
    key.task.apex_height = 0.0;
    key
}

/// IPOPT options of a problem file, in the solver's type.
pub fn solver_options(problem: &Problem) -> Vec<(String, solver::OptionValue)> {
    super::options_of(&problem.solver)
}

/// Plans the jump: transcribe, guess (or take `start`, another plan's solution; see
/// [`super::warm_start`]), solve.
pub fn plan(
    problem: &Problem,
    settings: &SolveSettings,
    start: Option<&PlanStart>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<Plan, PlanError> {
    plan_with(
        problem,
        settings,
        start,
        on_iteration,
        &mut Transcriptions::default(),
    )
}

/// [`plan`], with the NLP taken from (and given back to) `kept`: a sweep over heights
/// transcribes once ([`Transcriptions`]).
pub fn plan_with(
    problem: &Problem,
    settings: &SolveSettings,
    start: Option<&PlanStart>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
    kept: &mut Transcriptions,
) -> Result<Plan, PlanError> {
    let started = Instant::now();
    let (jump, mut nlp) = kept.take(problem)?;
    // The starting points are set-up: another plan's (with its multipliers), or one per guess
    // (`best` is `rest` and `ballistic`).
    let (points, warm) = match start {
        Some(start) => {
            if let Some(why) = start.mismatch_with(&jump) {
                return Err(PlanError::Start(why));
            }
            let (x0, multipliers) = start.point(&jump, &nlp);
            (vec![(None, x0)], Some(multipliers))
        }
        None => (starting_points(&jump, problem.initial_guess, &nlp), None),
    };
    let setup_seconds = started.elapsed().as_secs_f64();
    let (report, starts) = solve_from(&mut nlp, points, settings, warm.as_ref(), on_iteration)?;
    let trajectory = nlp.unpack(&report.x);
    let first = &trajectory.phases[0].states[0];
    let last = trajectory.phases.last().unwrap().states.last().unwrap();
    let apex_rise = last[state::Z_R] - first[state::Z_R];
    let plan = Plan {
        jump,
        apex_rise,
        trajectory,
        setup_seconds,
        n_variables: nlp.n_variables(),
        n_constraints: nlp.n_constraints(),
        multipliers: NamedMultipliers::of(&nlp, &report.multipliers),
        report,
        starts,
    };
    kept.keep(problem, nlp);
    Ok(plan)
}

impl Plan {
    /// Per node: motor force, spring force and terrain force, from the f64 model.
    pub fn node_forces(&self, phase: usize, k: usize) -> (f64, f64, f64) {
        let p = &self.trajectory.phases[phase];
        let domain = self.jump.phases[phase].0;
        let f = self
            .jump
            .robot
            .forces(domain, &self.jump.terrain, &p.states[k], &p.controls[k][0]);
        (f.motor, f.spring, f.terrain)
    }
}
