//! Replay of a planar robot's plan: a hybrid simulation whose modes are the sets of feet on
//! the ground, found by the simulator itself from the contact model under the feet
//! (`terrain::contact`): on rigid ground, lift-off when a foot's normal force would turn
//! negative and touchdown when a sole reaches z = 0, with a plastic impact.
//! It runs in the hybrid event loop the hopper's replay runs in (`sim::hybrid`: Dormand–Prince
//! 5(4) with error control, never stepping across a node of the plan, where the servo's
//! reference has a kink, events located on the dense output); this file is its
//! [`HybridSystem`]: the modes, their dynamics, guards and switches.
//!
//! What is replayed: the plan's joint references and feed-forward inputs, as a robot's servos
//! would run them: every input u_i acting on coordinate j is
//! u_i = u_plan,i(t) + K_p (q_plan,j(t) − q_j) + K_d (v_plan,j(t) − v_j), clamped to its limits,
//! with K_p = M_jj ω², K_d = 2 ζ ω M_jj (ω = 2π·8 Hz, ζ = 1) from the mass matrix at the start.
//! The unactuated coordinates (the base, for a legged robot) are not tracked: where the robot
//! goes follows from its dynamics, which are the same generic equations the planner used.
//!
//! In stance the contact is held (sticking) by M a + h = Q + Gᵀλ, G a + Ġ v = −2ω_b G v − ω_b² e
//! (Baumgarte terms on the drift e from the anchor, ω_b = 2π·30 Hz). Sliding is not modelled:
//! where holding the foot needs more friction than μ F_z, the excess is reported.
//!
//! On an added-mass bed (docs/MODEL.md section 2, the hopper's stick law per foot) a foot in
//! the grains is held sideways (and level) as on rigid ground, and vertically it is either
//! *stuck*, held where it is while its load F_z stays within [0, F_hyd(d)], or *sinking*,
//! free vertically under the bed's force F_z = F_hyd + drag − m_a z̈ (with the grains' added
//! mass m_a moving with it: M + m_a J_zᵀJ_z on the left). A stuck foot sinks when its load
//! passes F_hyd and leaves the bed when F_z would turn negative; a sinking foot sticks when
//! its sinking stops (ż reaches 0). A foot in the air lands when its sole reaches the floor
//! of the crater it left (the surface, for a foot that never was in the grains), stopping
//! dead there, stuck.
//!
//! On a linear spring-damper ground (`terrain::spring`) a foot is under the ground's law from
//! touchdown (no impact along the normal; sideways it stops) until it rises back through the
//! surface.

mod dynamics;
mod events;
mod plan;
mod strides;
mod summary;

use serde::Serialize;

use super::hybrid::{self, HybridSystem, LoopError, LoopSettings};
use crate::problem::planar::{PlanarProblem, PlanarTerrainConfig};
use dynamics::{Mode, Sim};
use events::{Run, TOLERANCES};
pub use plan::{read_plan, servo_command, servo_gains, PlanTable};
pub use strides::{
    replay_plan, replay_plan_with, stride_reports, strides_of, StrideReport, DEFAULT_STRIDES,
};
pub use summary::{replay_columns, summarise, Ran};

#[derive(Debug, thiserror::Error)]
pub enum PlanarSimError {
    #[error("the replay diverged at t = {t:.4} s (a state is not finite)")]
    Diverged { t: f64 },
    #[error("the constrained dynamics are singular at t = {t:.4} s (mode {mode})")]
    Singular { t: f64, mode: String },
    #[error(
        "more than {count} lift-offs and touchdowns: the feet chatter (the last: foot `{foot}` \
         at t = {t:.6} s); the replay stops there"
    )]
    Chatter { count: usize, t: f64, foot: String },
    #[error("more than {0} times a foot began or stopped sinking into the bed: the replay creeps without end")]
    Creep(usize),
    #[error(
        "this replay is for rigid ground; a plan on a wrench space replays in the MDP \
         simulator (`loam solve` runs it)"
    )]
    WrenchSpace,
    #[error(transparent)]
    Loop(#[from] LoopError),
}

/// A replay's mode as `replay.csv` names it: `flight`, or `stance[a+b]` with the contacts on
/// the ground.
pub fn mode_name(robot: &crate::model::planar::PlanarRobot, contacts: &[usize]) -> String {
    if contacts.is_empty() {
        "flight".into()
    } else {
        let names: Vec<&str> = contacts
            .iter()
            .map(|&c| robot.contacts[c].name.as_str())
            .collect();
        format!("stance[{}]", names.join("+"))
    }
}

/// One event the simulator found.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub t: f64,
    pub kind: &'static str,
    pub contact: String,
}

/// What a replay measured, against the plan.
#[derive(Clone, Debug, Serialize)]
pub struct PlanarReplaySummary {
    pub planned_distance_m: f64,
    pub achieved_distance_m: f64,
    pub distance_error_rel: f64,
    pub planned_com_rise_m: f64,
    pub achieved_com_rise_m: f64,
    /// Highest centre of mass rise over the replay, and the plan's.
    pub planned_com_peak_m: f64,
    pub achieved_com_peak_m: f64,
    pub com_peak_error_rel: f64,
    /// A task with `apex_rise`: the rise of `apex_of`'s centre of mass (or the robot's) at
    /// the highest centre of mass, planned (at the plan's highest node) and replayed, and
    /// their relative difference: the task's own figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned_apex_rise_m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub achieved_apex_rise_m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apex_rise_error_rel: Option<f64>,
    /// Per coordinate: the largest |q − q_plan| at the plan's nodes.
    pub max_coordinate_error: Vec<(String, f64)>,
    /// Largest excess of a held foot's wrench over the friction cone (0: never slips), over
    /// the samples where the ground carries the foot.
    pub max_friction_excess: f64,
    /// Largest sideways force \[N\] a foot under its ground's law was held with while the
    /// ground carried none of it (F_z = 0: a spring that has let go of a rising foot still
    /// below the surface). The replay holds such a foot sideways; a real one would slide.
    pub max_unloaded_side_force_n: f64,
    /// Per coordinate with a position or velocity limit (the robot file's joint limits):
    /// the samples outside a limit (by more than 1e-9) and the largest excess \[unit or
    /// unit/s\]. The replay does not stop the joint there; it counts.
    pub joint_limits: Vec<LimitCount>,
    pub events: Vec<Event>,
    /// A periodic plan (a gait) replayed stride after stride (`strides_of`): each
    /// stride's length and apex against the plan's. Empty for a plan that is not periodic.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub strides: Vec<StrideReport>,
    pub planned_contacts: Vec<Vec<String>>,
    /// The ground replayed on: the plan's own, or another contact model (`--terrain`).
    pub terrain: PlanarTerrainConfig,
    pub integration: Integration,
    /// Whether the replay reached the plan's end. A replay the event loop cannot carry on
    /// (the feet chatter, a step too small, singular dynamics) keeps what it sampled up to
    /// there, marked incomplete, with the reason in `stopped`.
    pub complete: bool,
    pub stopped: Option<String>,
}

/// How often a replay left one coordinate's limits.
#[derive(Clone, Debug, Serialize)]
pub struct LimitCount {
    /// `hip` for a position limit, `d_hip` for a velocity limit.
    pub coordinate: String,
    pub samples_outside: usize,
    pub max_excess: f64,
}

/// How the replay was integrated (`replay.json`'s `integration`).
#[derive(Clone, Debug, Serialize)]
pub struct Integration {
    pub method: &'static str,
    /// The error control's tolerances (null for a fixed-step simulator).
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    /// A fixed-step simulator's largest step \[s\] (absent for the event loop's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_step_s: Option<f64>,
    /// Accepted and rejected steps (null for a replay that stopped before its end).
    pub steps: Option<usize>,
    pub rejected: Option<usize>,
}

/// How a replay runs: how often it samples, and how many integrator steps it may take before
/// it stops (marked incomplete).
#[derive(Clone, Copy, Debug)]
pub struct ReplaySettings {
    /// Seconds between samples (besides the plan's nodes and the events).
    pub sample_every: f64,
    pub max_steps: usize,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings {
            sample_every: 1e-3,
            max_steps: 2_000_000,
        }
    }
}

/// The result: samples every `sample_every` seconds and at events, and the summary.
pub struct PlanarReplay {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub modes: Vec<String>,
    pub summary: PlanarReplaySummary,
}

/// Replays `plan` of `problem` on its own ground (its contact model). A replay the event loop
/// cannot finish is returned as far as it went, marked incomplete (`summary.complete`);
/// errors are for what cannot start.
pub fn replay(
    problem: &PlanarProblem,
    plan: &PlanTable,
    settings: &ReplaySettings,
) -> Result<PlanarReplay, PlanarSimError> {
    let sample_every = settings.sample_every;
    let robot = problem.robot.build(problem.gravity);
    let contact = problem
        .terrain
        .contact_model::<f64>()
        .ok_or(PlanarSimError::WrenchSpace)?;
    let n = robot.body.n_q();
    let (kp, kd) = servo_gains(&robot, plan).into_iter().unzip();
    let sim = Sim {
        robot: &robot,
        ground: contact.ground(),
        contact,
        plan,
        kp,
        kd,
        n,
    };
    let contacts_of = |p: usize| -> Vec<usize> {
        problem.schedule[p]
            .contacts
            .iter()
            .filter_map(|name| robot.contact(name))
            .collect()
    };
    let t_end = *plan.t.last().unwrap();
    let x0 = plan.x[0].clone();
    let mut mode = Mode {
        contacts: Vec::new(),
        anchors: Vec::new(),
        sinking: Vec::new(),
        floors: vec![0.0; robot.contacts.len()],
    };
    for c in contacts_of(0) {
        sim.hold(&mut mode, c, &x0[..n]);
    }
    // Samples on the regular grid and at the plan's nodes (where the errors are measured).
    let mut times: Vec<f64> = (1..)
        .map(|k| k as f64 * sample_every)
        .take_while(|&t| t < t_end - 1e-12)
        .chain(plan.t.iter().copied().filter(|&t| t > 0.0))
        .chain([t_end])
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut breakpoints = plan.t.clone();
    breakpoints.dedup();
    let com0 = robot.body.centre_of_mass(&x0[..n])[1];
    // The body whose rise the task asks for (the robot's centre of mass: none).
    let apex_body = problem.task.apex_body(&robot);
    let mut run = Run {
        sim: &sim,
        breakpoints,
        rows: Vec::new(),
        modes: Vec::new(),
        events: Vec::new(),
        contact_events: 0,
        max_excess: 0.0,
        max_unloaded_side_force: 0.0,
        com0,
        peak: 0.0,
        apex_body: apex_body.map(|b| (b, events::body_height(&robot.body, &x0[..n], b))),
        apex_rise: 0.0,
    };
    run.sample(&mode, 0, 0.0, &x0)?;
    let settings = LoopSettings {
        tolerances: TOLERANCES,
        first_step: 1e-5,
        max_steps: settings.max_steps,
    };
    // A plan on a bed starts each foot on the verge of sinking (F_z = F_hyd): that guard starts
    // at 0 up to round-off, armed.
    let arm = sim.contact.yields();
    let method = "Dormand-Prince 5(4) with dense output and event location (sim::hybrid)";
    let (x, integration, stopped) =
        match hybrid::run(&mut run, mode, x0, t_end, &times, settings, arm) {
            Ok(finish) => (
                finish.x,
                Integration {
                    method,
                    rtol: Some(TOLERANCES.rtol),
                    atol: Some(TOLERANCES.atol),
                    max_step_s: None,
                    steps: Some(finish.steps),
                    rejected: Some(finish.rejected),
                },
                None,
            ),
            // The loop could not go on: what was sampled up to there is kept, marked incomplete.
            Err(error) => {
                let last = run.rows.last().expect("the start is sampled");
                (
                    last[1..1 + robot.n_x()].to_vec(),
                    Integration {
                        method,
                        rtol: Some(TOLERANCES.rtol),
                        atol: Some(TOLERANCES.atol),
                        max_step_s: None,
                        steps: None,
                        rejected: None,
                    },
                    Some(error.to_string()),
                )
            }
        };
    let Run {
        rows,
        modes,
        events,
        max_excess,
        max_unloaded_side_force,
        peak,
        apex_rise,
        ..
    } = run;
    let columns = replay_columns(&robot);
    let summary = summarise(
        problem,
        &robot,
        plan,
        sample_every,
        Ran {
            rows: &rows,
            x_end: &x,
            peak,
            apex_rise,
            max_friction_excess: max_excess,
            max_unloaded_side_force,
            events,
            integration,
            stopped,
        },
    );
    Ok(PlanarReplay {
        columns,
        rows,
        modes,
        summary,
    })
}
