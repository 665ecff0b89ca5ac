//! Forward-simulation scenarios on wrench-space terrain (docs/WRENCH_SPACE.md section 3.5):
//! a planar robot started in a pose, its actuated coordinates tracking piecewise-linear
//! references by PID, the maximum-dissipation simulator stepping it for a while. They are the
//! wrench-space paper's experiments (accuracy test, drop tests, the quadruped) as files.
//!
//! ```yaml
//! robot: {model: planar_foot, height: 0.3, com_height: 0.15}
//! terrain: {data: problems/data/wrench_space/rft_sand_like.yaml, slope: 0.0}
//! start: {pose: {z: 0.17, pitch: 0.2}}        # coordinates by name; others: standing
//! control: {kind: none}                        # none | track (PID on key frames) | hold
//! duration: 2.0
//! time_step: 0.001
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::planar::RobotConfig;
use super::validate::Violation;
use super::Schema;
use crate::model::planar::PlanarRobot;

/// A simulation scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Name of the scenario, used to name its results. Default: the file's stem.
    pub name: Option<String>,
    /// Gravitational acceleration g \[m/s²\]. Default 9.81.
    pub gravity: f64,
    /// The robot: a preset named by `model`, with its parameters (as in planning problems).
    pub robot: RobotConfig,
    /// The wrench-space terrain under every foot.
    pub terrain: WrenchTerrainConfig,
    /// The state at t = 0.
    pub start: ScenarioStart,
    /// What drives the actuated coordinates.
    pub control: Control,
    /// Simulated time \[s\]. Default 1.
    pub duration: f64,
    /// h: the simulator's step \[s\]. Default 0.001 (the paper's).
    pub time_step: f64,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            name: None,
            gravity: 9.81,
            robot: RobotConfig::default(),
            terrain: WrenchTerrainConfig::default(),
            start: ScenarioStart::default(),
            control: Control::None,
            duration: 1.0,
            time_step: 1e-3,
        }
    }
}

/// The ground: a wrench-space data file, a slope and the grains' aggregate inertia.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WrenchTerrainConfig {
    /// A wrench-space file (`loam wrench-space build`); a relative path is taken from the
    /// scenario file's own folder (so the shipped scenarios name `../data/wrench_space/...`).
    pub data: PathBuf,
    /// Surface angle \[rad\], counter-clockwise + (the surface rises toward +x). Default 0.
    pub slope: f64,
    /// M_g per foot as a multiple of the foot body's own (m, m, I): the grains moving with
    /// the foot. Default 2 (the paper's hand-tuned value).
    pub grain_inertia: f64,
}

impl Default for WrenchTerrainConfig {
    fn default() -> Self {
        WrenchTerrainConfig {
            data: PathBuf::from("../data/wrench_space/rft_sand_like.yaml"),
            slope: 0.0,
            grain_inertia: 2.0,
        }
    }
}

/// The start: the robot's standing posture with the coordinates of `pose` replaced, and the
/// velocities of `velocity` (others 0).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScenarioStart {
    /// Coordinates by name \[m or rad\].
    pub pose: BTreeMap<String, f64>,
    /// Velocities by coordinate name \[m/s or rad/s\].
    pub velocity: BTreeMap<String, f64>,
}

/// What drives the actuated coordinates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Control {
    /// Every input is zero: the robot falls passively (joints free).
    None,
    /// Every input is a PID on the coordinate it acts on, tracking a piecewise-linear
    /// reference (held at the start posture where the reference does not name it); inputs
    /// saturate at the robot's limits.
    Track(Tracking),
    /// Every joint locked at its start posture by a stiff spring and damper integrated
    /// implicitly (`stiffness` [N m/rad], `damping` [N m s/rad]; defaults 1e5 and 1e3); the
    /// inputs are zero.
    Hold(JointHold),
}

/// Every joint (coordinates 3 and up) held at a target posture by a stiff spring and damper
/// integrated implicitly: the step solves (M + h D + h² K) v⁺ = M v + h (k − K (q − q_ref))
/// + Jᵀc, so any gains are stable and large ones lock the joints (the paper's quadruped
/// dropped "with joints locked"). The kinetic energy the QP minimises uses the same
/// M + h D + h² K, so the contact impulse still maximises dissipation of the foot's motion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JointHold {
    /// K [N m/rad or N/m]. Default 1e5 (stiff enough to hold the quadruped preset's joints
    /// within a few milliradians standing; the implicit step keeps it stable at any h).
    pub stiffness: f64,
    /// D [N m s/rad or N s/m]. Default 1e3.
    pub damping: f64,
}

impl Default for JointHold {
    fn default() -> Self {
        JointHold {
            stiffness: 1e5,
            damping: 1e3,
        }
    }
}

/// PID tracking of piecewise-linear references.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tracking {
    /// Key frames `{t: 0.5, z: 0.1, hip: 0.3}`: at time `t` \[s\], the named coordinates'
    /// references \[m or rad\]; linear in between, held after the last. A coordinate named in
    /// no frame is held where it starts.
    pub reference: Vec<BTreeMap<String, f64>>,
    /// Gains by coordinate name; a coordinate not named gets K_p = M_jj ω², K_d = 2 ω M_jj,
    /// K_i = 0 with ω = 2π·8 Hz and M_jj its mass-matrix diagonal at the start (as the planar
    /// replay's servos).
    pub gains: BTreeMap<String, Gains>,
}

/// One coordinate's PID gains (SI: N/m, N/(m s), N s/m for a translation; N m/rad, ... for
/// a rotation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gains {
    pub kp: f64,
    #[serde(default)]
    pub ki: f64,
    #[serde(default)]
    pub kd: f64,
}

impl Scenario {
    /// The start state (q, v) of `robot`: its standing posture with `start` applied.
    pub fn start_state(&self, robot: &PlanarRobot) -> (Vec<f64>, Vec<f64>) {
        let mut q = robot.standing.clone();
        let mut v = vec![0.0; robot.n_q()];
        for (name, value) in &self.start.pose {
            if let Some(k) = robot.coordinate(name) {
                q[k] = *value;
            }
        }
        for (name, value) in &self.start.velocity {
            if let Some(k) = robot.coordinate(name) {
                v[k] = *value;
            }
        }
        (q, v)
    }
}

impl Schema for Scenario {
    fn resolve(&mut self) {}

    fn validate(&self) -> Result<(), Vec<Violation>> {
        let mut bad = Vec::new();
        let mut fail = |field: String, message: String| bad.push(Violation { field, message });
        if !(self.gravity.is_finite() && self.gravity >= 0.0) {
            fail(
                "gravity".into(),
                format!("must be a finite number >= 0 m/s², got {}", self.gravity),
            );
        }
        if !(self.duration.is_finite() && self.duration > 0.0) {
            fail(
                "duration".into(),
                format!("must be a finite number > 0 s, got {}", self.duration),
            );
        }
        if !(self.time_step.is_finite() && self.time_step > 0.0 && self.time_step <= 0.01) {
            fail(
                "time_step".into(),
                format!("must be in (0, 0.01] s, got {}", self.time_step),
            );
        }
        if !(self.terrain.slope.is_finite() && self.terrain.slope.abs() < 1.0) {
            fail(
                "terrain.slope".into(),
                format!(
                    "must be a finite angle with |slope| < 1 rad, got {}",
                    self.terrain.slope
                ),
            );
        }
        if !(self.terrain.grain_inertia.is_finite() && self.terrain.grain_inertia >= 0.0) {
            fail(
                "terrain.grain_inertia".into(),
                format!(
                    "must be a finite number >= 0, got {}",
                    self.terrain.grain_inertia
                ),
            );
        }
        let robot = self.robot.build(self.gravity);
        if let Err(e) = robot.validate() {
            fail("robot".into(), e.to_string());
        }
        let names: Vec<&str> = robot.coordinates.iter().map(|c| c.name.as_str()).collect();
        let known = |name: &str| names.contains(&name);
        let accepted = || format!("one of the robot's coordinates: {}", names.join(", "));
        for (section, map) in [
            ("start.pose", &self.start.pose),
            ("start.velocity", &self.start.velocity),
        ] {
            for (name, value) in map {
                if !known(name) {
                    fail(
                        format!("{section}.{name}"),
                        format!("unknown coordinate; use {}", accepted()),
                    );
                } else if !value.is_finite() {
                    fail(
                        format!("{section}.{name}"),
                        format!("must be a finite number, got {value}"),
                    );
                }
            }
        }
        if let Control::Hold(hold) = &self.control {
            if ![hold.stiffness, hold.damping]
                .iter()
                .all(|g| g.is_finite() && *g >= 0.0)
            {
                fail(
                    "control".into(),
                    "stiffness and damping must be finite numbers >= 0".into(),
                );
            }
        }
        if let Control::Track(tracking) = &self.control {
            let actuated: Vec<&str> = robot.inputs.iter().map(|i| names[i.coordinate]).collect();
            let mut last = f64::NEG_INFINITY;
            for (k, frame) in tracking.reference.iter().enumerate() {
                let field = format!("control.reference[{k}]");
                match frame.get("t") {
                    Some(t) if t.is_finite() && *t >= 0.0 && *t > last => last = *t,
                    Some(t) => fail(
                        format!("{field}.t"),
                        format!("must be a finite time >= 0 s after the previous frame's, got {t}"),
                    ),
                    None => fail(field.clone(), "needs a time `t` [s]".into()),
                }
                for (name, value) in frame.iter().filter(|(n, _)| *n != "t") {
                    if !actuated.contains(&name.as_str()) {
                        fail(
                            format!("{field}.{name}"),
                            format!(
                                "not an actuated coordinate; the robot's inputs act on {}",
                                actuated.join(", ")
                            ),
                        );
                    } else if !value.is_finite() {
                        fail(
                            format!("{field}.{name}"),
                            format!("must be a finite number, got {value}"),
                        );
                    }
                }
            }
            for (name, gains) in &tracking.gains {
                let field = format!("control.gains.{name}");
                if !actuated.contains(&name.as_str()) {
                    fail(
                        field,
                        format!(
                            "not an actuated coordinate; the robot's inputs act on {}",
                            actuated.join(", ")
                        ),
                    );
                } else if ![gains.kp, gains.ki, gains.kd]
                    .iter()
                    .all(|g| g.is_finite() && *g >= 0.0)
                {
                    fail(field, "kp, ki and kd must be finite numbers >= 0".into());
                }
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
    }

    fn set_default_name(&mut self, stem: &str) {
        self.name.get_or_insert_with(|| stem.to_owned());
    }
}

/// The key frames of a [`Tracking`] control for one coordinate: (t, value), the start first.
#[derive(Clone, Debug)]
pub struct Reference {
    frames: Vec<(f64, f64)>,
}

impl Reference {
    /// Coordinate `name`'s reference in `tracking`, starting from `start`.
    pub fn new(tracking: &Tracking, name: &str, start: f64) -> Reference {
        let mut frames = vec![(0.0, start)];
        for frame in &tracking.reference {
            if let (Some(t), Some(value)) = (frame.get("t"), frame.get(name)) {
                if *t == 0.0 {
                    frames[0].1 = *value;
                } else {
                    frames.push((*t, *value));
                }
            }
        }
        Reference { frames }
    }

    /// The value and rate at `t`: linear between frames, held before the first and after
    /// the last.
    pub fn at(&self, t: f64) -> (f64, f64) {
        for w in self.frames.windows(2) {
            let ((t0, a), (t1, b)) = (w[0], w[1]);
            if t < t1 {
                if t < t0 {
                    return (a, 0.0);
                }
                let rate = (b - a) / (t1 - t0);
                return (a + rate * (t - t0), rate);
            }
        }
        (self.frames.last().map_or(0.0, |p| p.1), 0.0)
    }
}

/// ω of the default gains: 8 Hz.
const DEFAULT_BANDWIDTH: f64 = 2.0 * std::f64::consts::PI * 8.0;

impl Tracking {
    /// Per input of `robot` (in order): its gains, those named in `gains` or the defaults
    /// from the mass matrix at `q0`.
    pub fn gains_for(&self, robot: &PlanarRobot, q0: &[f64]) -> Vec<Gains> {
        let mass = robot.body.mass_matrix_f64(q0);
        robot
            .inputs
            .iter()
            .map(|input| {
                let j = input.coordinate;
                self.gains
                    .get(&robot.coordinates[j].name)
                    .copied()
                    .unwrap_or_else(|| {
                        let m = mass[(j, j)];
                        Gains {
                            kp: m * DEFAULT_BANDWIDTH * DEFAULT_BANDWIDTH,
                            ki: 0.0,
                            kd: 2.0 * DEFAULT_BANDWIDTH * m,
                        }
                    })
            })
            .collect()
    }
}
