//! One robot on one scene's feet, step by step: what a replay on one bed computes between the
//! backend's steps (module docs of [`super`]). The batch of [`super::replay_planar_scenes`]
//! holds one [`Coupling`] per scene, all reading one [`Shared`].

use super::feet::{box_states, heights, Foot};
use super::{PlanarDemReplay, PlanarDemSample, PlanarDemSettings, PlanarDemSummary};
use crate::model::multibody::Frame;
use crate::model::planar::PlanarRobot;
use crate::sim::dem::backend::{BodyForce, BodyState, StepParams};
use crate::sim::dem::DemError;
use crate::sim::planar::PlanTable;

/// What every scene's replay shares: the robot, the plan, the feet and the clock.
pub(super) struct Shared<'a> {
    pub robot: &'a PlanarRobot,
    pub plan: &'a PlanTable,
    pub settings: &'a PlanarDemSettings,
    pub feet: Vec<Foot>,
    /// World x = planar x − shift (the feet's path centred in the container).
    pub shift: f64,
    pub dt: f64,
    pub grain: f64,
    /// Steps before the plan's clock starts, steps of the plan, and the last step allowed
    /// (past the plan's end for an apex task, at most `t_max`).
    pub settle_steps: i64,
    pub steps: i64,
    pub last_allowed: i64,
    /// Whether `last_allowed` is `t_max`'s, before the replay's natural end.
    pub capped: bool,
    kp: Vec<f64>,
    kd: Vec<f64>,
    /// Every coordinate but the base's height (q[1]) is held while the robot settles.
    held: Vec<usize>,
    /// The share of the robot's inertia it settles with: its feet's bodies'.
    settle_mass_share: f64,
    /// The bodies without a foot: one below the surface is a fall.
    footless: Vec<usize>,
}

impl<'a> Shared<'a> {
    pub fn new(
        robot: &'a PlanarRobot,
        plan: &'a PlanTable,
        settings: &'a PlanarDemSettings,
        feet: Vec<Foot>,
        shift: f64,
        dt: f64,
        grain: f64,
    ) -> Self {
        let n = robot.body.n_q();
        let (kp, kd): (Vec<f64>, Vec<f64>) = crate::sim::planar::servo_gains(robot, plan)
            .into_iter()
            .unzip();
        let held: Vec<usize> = (0..n).filter(|&j| j != 1).collect();
        let settle_mass_share = {
            let mut bodies: Vec<usize> = feet.iter().map(|f| f.body).collect();
            bodies.sort_unstable();
            bodies.dedup();
            let feet_mass: f64 = bodies.iter().map(|&b| robot.body.bodies[b].mass).sum();
            (feet_mass / robot.body.total_mass()).clamp(1e-3, 1.0)
        };
        let footless: Vec<usize> = (0..robot.body.bodies.len())
            .filter(|b| !feet.iter().any(|f| f.body == *b))
            .collect();
        let t_end = *plan.t.last().expect("two nodes");
        let settle_steps = (settings.settle_time / dt).round() as i64;
        let steps = (t_end / dt).ceil() as i64;
        // An apex task goes on past the plan's end while the centre of mass rises.
        let natural_end = match settings.apex {
            Some(apex) => steps + (apex.wait.max(0.0) / dt).ceil() as i64,
            None => steps,
        };
        let cap = settings.t_max.map(|t| (t / dt).ceil() as i64);
        let capped = cap.is_some_and(|c| c < natural_end);
        let last_allowed = cap.map_or(natural_end, |c| c.min(natural_end));
        Shared {
            robot,
            plan,
            settings,
            feet,
            shift,
            dt,
            grain,
            settle_steps,
            steps,
            last_allowed,
            capped,
            kp,
            kd,
            held,
            settle_mass_share,
            footless,
        }
    }

    /// An ideal source gets the plan's effort and a servo (`sim::planar::servo_command`, the
    /// replays' one servo); a drive the plan's command rate, open loop (it is a servo itself),
    /// and none while the bed settles.
    fn inputs(&self, t: f64, q: &[f64], v: &[f64]) -> Vec<f64> {
        let robot = self.robot;
        let (xr, ur) = self.plan.at(t.max(0.0));
        let mut u = crate::sim::planar::servo_command(robot, &self.kp, &self.kd, (&xr, &ur), q, v);
        if t < 0.0 {
            for (ui, input) in u.iter_mut().zip(&robot.inputs) {
                if input.drive.is_some() {
                    *ui = 0.0;
                }
            }
        }
        u
    }

    /// The apex task's body's centre of mass height (the robot's centre of mass: none).
    fn apex_height(&self, frames: &[Frame<f64>]) -> f64 {
        let body = &self.robot.body;
        match self.settings.apex.and_then(|a| a.body) {
            Some(b) => frames[b].transform(body.bodies[b].com)[1],
            None => body.centre_of_mass_in(frames)[1],
        }
    }

    fn plan_com(&self, x: &[f64]) -> [f64; 2] {
        self.robot.body.centre_of_mass(&x[..self.robot.body.n_q()])
    }

    fn box_states(&self, frames: &[Frame<f64>], v: &[f64], surface: f64) -> Vec<BodyState> {
        box_states(self.robot, &self.feet, frames, v, self.shift, surface)
    }
}

/// One scene's robot between grain steps: its state, its samples and what its summary
/// gathers so far.
pub(super) struct Coupling<'s, 'a> {
    shared: &'s Shared<'a>,
    /// The scene's bed's free surface in the bed's frame.
    surface: f64,
    q: Vec<f64>,
    v: Vec<f64>,
    /// The drives' states (integrators and commands), from the plan's start.
    drives: Vec<f64>,
    frames: Vec<Frame<f64>>,
    /// The inputs over the coming step, and the soles' heights at its start.
    u: Vec<f64>,
    here: Vec<f64>,
    /// The feet's states over the coming step; once the replay has ended, parked (at rest
    /// where they were).
    pub boxes: Vec<BodyState>,
    samples: Vec<PlanarDemSample>,
    next_sample: f64,
    wrenches: Vec<[f64; 3]>,
    plan_start: [f64; 2],
    start_com: [f64; 2],
    start_speed: f64,
    peak: f64,
    apex_start: f64,
    apex_rise: f64,
    reached_apex: bool,
    end_com: Option<[f64; 2]>,
    deepest: f64,
    bed_force: (f64, usize),
    fell: Option<(f64, String)>,
    last_step: i64,
    ended: bool,
    error: Option<DemError>,
}

impl<'s, 'a> Coupling<'s, 'a> {
    /// The robot at rest a grain radius above the plan's first pose (the lowest sole just
    /// clears the bed of surface `surface`): q[1] is the floating base's height
    /// (model::multibody).
    pub fn new(shared: &'s Shared<'a>, surface: f64) -> Self {
        let (robot, plan) = (shared.robot, shared.plan);
        let n = robot.body.n_q();
        let mut q = plan.x[0][..n].to_vec();
        let v = vec![0.0; n];
        let lowest = (0..robot.contacts.len())
            .map(|c| robot.contact_point(&q, c)[1])
            .fold(f64::INFINITY, f64::min);
        q[1] += shared.grain - lowest.min(0.0);
        let frames = robot.body.frames(&q);
        let boxes = shared.box_states(&frames, &v, surface);
        let plan_start = shared.plan_com(&plan.x[0]);
        Coupling {
            shared,
            surface,
            drives: plan.x[0][2 * n..].to_vec(),
            q,
            v,
            frames,
            u: Vec::new(),
            here: Vec::new(),
            boxes,
            samples: Vec::new(),
            next_sample: -(shared.settle_steps as f64) * shared.dt,
            wrenches: vec![[0.0; 3]; shared.feet.len()],
            plan_start,
            start_com: plan_start,
            start_speed: f64::NAN,
            peak: 0.0,
            apex_start: 0.0,
            apex_rise: 0.0,
            reached_apex: shared.settings.apex.is_none(),
            end_com: None,
            deepest: 0.0,
            bed_force: (0.0, 0),
            fell: None,
            last_step: -shared.settle_steps,
            ended: false,
            error: None,
        }
    }

    pub fn running(&self) -> bool {
        !self.ended
    }

    /// Before step k (starting at t = k Δt): the replay ends here once the plan is over and
    /// the centre of mass no longer rises; else the inputs, a sample when one is due and the
    /// feet's states for the step.
    pub fn begin(&mut self, k: i64) {
        let shared = self.shared;
        let robot = shared.robot;
        let t = k as f64 * shared.dt;
        if k == shared.steps {
            self.end_com = Some(robot.body.centre_of_mass_in(&self.frames));
        }
        if k >= shared.steps && com_velocity(robot, &self.frames, &self.v)[1] <= 0.0 {
            self.reached_apex = true;
            self.last_step = k;
            self.park();
            return;
        }
        self.last_step = k + 1;
        if k == 0 {
            self.start_com = robot.body.centre_of_mass_in(&self.frames);
            self.apex_start = shared.apex_height(&self.frames);
            self.start_speed = com_speed(robot, &self.frames, &self.v);
        }
        self.u = shared.inputs(t, &self.q, &self.v);
        self.here = heights(&shared.feet, &self.frames);
        if t >= self.next_sample - 1e-12 {
            self.samples.push(PlanarDemSample {
                t,
                q: self.q.clone(),
                v: self.v.clone(),
                u: self.u.clone(),
                wrenches: self.wrenches.clone(),
                heights: self.here.clone(),
            });
            self.next_sample += shared.settings.sample_every;
        }
        self.boxes = shared.box_states(&self.frames, &self.v, self.surface);
    }

    /// After step k, with the grains' force and torque on each of this scene's feet over it.
    pub fn after(&mut self, k: i64, forces: &[BodyForce]) {
        if let Err(e) = self.advance(k, forces) {
            self.error = Some(e);
            self.park();
        }
    }

    /// The feet stop where they are and stay there: an ended replay's scene goes on stepping
    /// beside the others', its grains at rest under still feet.
    fn park(&mut self) {
        self.ended = true;
        for b in &mut self.boxes {
            b.velocity = [0.0; 3];
            b.angular_velocity = [0.0; 3];
        }
    }

    /// The robot's semi-implicit Euler step under its inputs and the grains' wrenches.
    fn advance(&mut self, k: i64, forces: &[BodyForce]) -> Result<(), DemError> {
        let shared = self.shared;
        let robot = shared.robot;
        let (dt, t) = (shared.dt, k as f64 * shared.dt);
        let x: Vec<f64> = self
            .q
            .iter()
            .chain(&self.v)
            .chain(&self.drives)
            .copied()
            .collect();
        let efforts = robot.efforts(&x, &self.u);
        if k >= 0 {
            for (d, rate) in self.drives.iter_mut().zip(robot.drive_rates(&x, &self.u)) {
                *d += dt * rate;
            }
        }
        let (q, v, frames) = (&mut self.q, &mut self.v, &self.frames);
        let mut generalized = robot.generalized_forces(&q[..], &v[..], &efforts);
        for (i, (f, force)) in shared.feet.iter().zip(forces).enumerate() {
            // The torque about the box's centre, planar (counter-clockwise = −τ_y); applied at
            // the centre, which is the point the backend measures it about.
            let w = [force.force[0], force.force[2], -force.torque[1]];
            for (g, add) in generalized.iter_mut().zip(
                robot
                    .body
                    .wrench_to_generalized_in(frames, f.body, f.centre, &w),
            ) {
                *g += add;
            }
            // Reported about the sole's centre: τ_sole = τ_centre + (r_centre − r_sole) × F.
            let arm = frames[f.body].rotate([0.0, f.centre[1] - f.sole[1]]);
            self.wrenches[i] = [w[0], w[1], w[2] + arm[0] * w[1] - arm[1] * w[0]];
        }
        let a = if k < 0 {
            let a = robot.forward_dynamics_holding(&q[..], &v[..], &generalized, &shared.held);
            a.into_iter()
                .map(|a| a / shared.settle_mass_share)
                .collect()
        } else {
            robot.forward_dynamics(&q[..], &v[..], &generalized)
        };
        for (vi, ai) in v.iter_mut().zip(a.iter()) {
            *vi += dt * ai;
        }
        for (qi, vi) in q.iter_mut().zip(v.iter()) {
            *qi += dt * vi;
        }
        if q.iter().chain(v.iter()).any(|x| !x.is_finite()) {
            return Err(DemError::Unphysical(format!(
                "the robot's state is not finite at t = {t:.4} s"
            )));
        }
        self.frames = robot.body.frames(&q[..]);
        for (c, h) in heights(&shared.feet, &self.frames).into_iter().enumerate() {
            let sole = h + self.surface;
            if sole < -shared.grain {
                return Err(DemError::Unphysical(format!(
                    "at t = {t:.4} s contact `{}`'s sole is at z = {sole:.4e} m, below the \
                     container's floor: the grains did not hold it (a deeper bed, or a \
                     smaller time step, may)",
                    robot.contacts[c].name
                )));
            }
        }
        if let Some(&b) = shared
            .footless
            .iter()
            .find(|&&b| self.frames[b].position[1] < 0.0)
        {
            self.fell = Some((t + dt, robot.body.bodies[b].name.clone()));
            self.park();
            return Ok(());
        }
        if k < 0 && t >= -0.02 - 1e-12 {
            self.bed_force.0 += forces.iter().map(|f| f.force[2]).sum::<f64>();
            self.bed_force.1 += 1;
        }
        if k >= 0 {
            let c = robot.body.centre_of_mass_in(&self.frames);
            if c[1] - self.start_com[1] > self.peak {
                self.peak = c[1] - self.start_com[1];
                self.apex_rise = shared.apex_height(&self.frames) - self.apex_start;
            }
            let lowest = self.here.iter().fold(f64::INFINITY, |m: f64, &h| m.min(h));
            self.deepest = self.deepest.min(lowest);
        }
        if k + 1 == shared.last_allowed {
            self.ended = true;
        }
        Ok(())
    }

    /// The replay, or why it failed.
    pub fn finish(self, params: StepParams) -> Result<PlanarDemReplay, DemError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let shared = self.shared;
        let (robot, plan) = (shared.robot, shared.plan);
        let n = robot.body.n_q();
        let mut samples = self.samples;
        let t_last = self.last_step as f64 * shared.dt;
        samples.push(PlanarDemSample {
            t: t_last,
            q: self.q.clone(),
            v: self.v.clone(),
            u: shared.inputs(t_last, &self.q, &self.v),
            wrenches: self.wrenches,
            heights: heights(&shared.feet, &self.frames),
        });
        let planned_peak = plan
            .x
            .iter()
            .map(|x| shared.plan_com(x)[1] - self.plan_start[1])
            .fold(0.0, f64::max);
        let planned_distance =
            shared.plan_com(plan.x.last().expect("nodes"))[0] - self.plan_start[0];
        // Stopped by t_max: it ran to the cap without ending on its own (an apex or a fall).
        let stopped = shared.capped
            && self.fell.is_none()
            && self.last_step == shared.last_allowed
            && !(shared.settings.apex.is_some() && self.reached_apex);
        let summary = PlanarDemSummary {
            steps: (shared.settle_steps + self.last_step) as usize,
            time_step_s: shared.dt,
            settle_sink_m: self.plan_start[1] - self.start_com[1],
            start_speed_mps: self.start_speed,
            planned_distance_m: planned_distance,
            achieved_distance_m: self
                .end_com
                .unwrap_or_else(|| robot.body.centre_of_mass_in(&self.frames))[0]
                - self.start_com[0],
            planned_com_peak_m: planned_peak,
            achieved_com_peak_m: self.peak,
            planned_apex_rise_m: shared.settings.apex.map(|_| {
                // At the plan's highest centre of mass, as the reduced-order replay measures
                // it.
                let top = plan
                    .x
                    .iter()
                    .max_by(|a, b| shared.plan_com(a)[1].total_cmp(&shared.plan_com(b)[1]))
                    .expect("nodes");
                shared.apex_height(&robot.body.frames(&top[..n]))
                    - shared.apex_height(&robot.body.frames(&plan.x[0][..n]))
            }),
            achieved_apex_rise_m: shared.settings.apex.map(|_| self.apex_rise),
            reached_apex: shared
                .settings
                .apex
                .map(|_| self.reached_apex && self.fell.is_none()),
            settled_bed_force_n: if self.bed_force.1 > 0 {
                self.bed_force.0 / self.bed_force.1 as f64
            } else {
                f64::NAN
            },
            robot_weight_n: robot.body.total_mass() * robot.body.gravity,
            deepest_sole_m: self.deepest,
            fell_at_s: self.fell.as_ref().map(|f| f.0),
            fell_body: self.fell.map(|f| f.1),
            stopped_at_s: stopped.then_some(t_last),
        };
        Ok(PlanarDemReplay {
            samples,
            summary,
            snapshots: Vec::new(),
            params,
        })
    }
}

/// The speed of the centre of mass [m/s].
fn com_speed(robot: &PlanarRobot, frames: &[Frame<f64>], v: &[f64]) -> f64 {
    let [vx, vz] = com_velocity(robot, frames, v);
    vx.hypot(vz)
}

/// The velocity of the centre of mass [m/s]: Σ m_b v(c_b) / M over the bodies' centres of
/// mass.
fn com_velocity(robot: &PlanarRobot, frames: &[Frame<f64>], v: &[f64]) -> [f64; 2] {
    let bodies = &robot.body.bodies;
    let centres: Vec<(usize, [f64; 2])> = bodies
        .iter()
        .enumerate()
        .map(|(b, body)| (b, body.com))
        .collect();
    let mut momentum = [0.0; 2];
    for ((velocity, _), body) in robot
        .body
        .point_twists_in(frames, v, &centres)
        .iter()
        .zip(bodies)
    {
        momentum[0] += body.mass * velocity[0];
        momentum[1] += body.mass * velocity[1];
    }
    let m = robot.body.total_mass();
    [momentum[0] / m, momentum[1] / m]
}
