//! The `dem` generator: boundary wrenches measured by the paper's protocol on loam's DEM
//! (docs/WRENCH_SPACE.md section 1 "Data" and "Implemented"). Per node θ = (d, φ) and
//! direction u_i, with twist t_i = s ∘ u_i of the torque point `p_r`: restore the bed, descend
//! straight to the start pose θ − 0.8·t_total·t_i (or place the foot there when that is clear
//! of the grains), move at t_i, average the grains' force and torque over a window centred on
//! 0.8·t_total (when θ is reached exactly) and write it in the data's frame: force in surface
//! axes (x along the surface, z up), torque about `p_r`, counter-clockwise (+x toward +z).
//!
//! The foot is a kinematic box: `width` along the sole (body x), `thickness` out of the plane
//! (body y), `height` along the axis (body z), its origin at its centre, so `p_center` is
//! `height/2` below the origin and `p_r` is `torque_point` above `p_center`. At the reading,
//! `p_center` is on the container's axis.

use std::collections::BTreeMap;

use super::backend::{Backend, BodyGeometry, ContactLaw, Container};
use super::bed::Checkpoint;
use super::drag::{drag, window_mean, DragPlan, PlanarPose};
use super::sdf::{Shape, Vec3};
use super::DemError;
use crate::terrain::wrench_space::data::{Foot, Interpolation, Node, Provenance, WrenchSpaceData};
use crate::terrain::wrench_space::rbf::Kernel;

/// The fraction of `t_total` at which the foot reaches θ and the wrench is read (the paper's).
pub const READ_FRACTION: f64 = 0.8;
/// Default `t_total` [s]: at the default velocity scale (0.02 m/s) the foot travels 1.6 mm to
/// θ, about half a grain radius of the shipped poppy beds, and a run costs about 4,500 steps
/// of 22 µs; longer runs are better and proportionally dearer.
pub const DEFAULT_DURATION: f64 = 0.1;
/// Default filter window as a fraction of `t_total`: a moving average over
/// [0.7, 0.9]·t_total, centred on the reading so a force that grows linearly is read without lag.
pub const DEFAULT_WINDOW_FRACTION: f64 = 0.2;
/// Default descent speed to the start pose [m/s]: 0.1 m/s, five times the default scale, so
/// the descent does not dominate the cost; the test that compares with `loam dem intrude`
/// descends at the drag speed instead.
pub const DEFAULT_APPROACH_SPEED: f64 = 0.1;

/// Everything a run depends on except the bed and θ.
#[derive(Clone, Debug, PartialEq)]
pub struct DemProtocol {
    pub foot: Foot,
    /// `p_r` above `p_center` along the axis [m].
    pub torque_point: f64,
    /// (s_x [m/s], s_z [m/s], s_ω [rad/s]).
    pub velocity_scale: [f64; 3],
    /// Unit directions (x, z, ω).
    pub directions: Vec<[f64; 3]>,
    /// t_total [s].
    pub duration: f64,
    /// Width of the moving average centred on 0.8·t_total [s]; at most 0.4·t_total.
    pub window: f64,
    /// Descent speed from above the surface to the start pose [m/s].
    pub approach_speed: f64,
    /// Height of the foot's lowest point above the bed's surface where a descent starts, and
    /// the clearance above which a start pose is used directly [m]. `None`: a grain diameter.
    pub start_height: Option<f64>,
}

/// One run's reading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    /// (F_x [N], F_z [N], τ [N m]) in the data's frame.
    pub wrench: [f64; 3],
    /// Steps simulated (descent and drag).
    pub steps: usize,
}

impl DemProtocol {
    /// The foot as a DEM body.
    pub fn geometry(&self) -> BodyGeometry {
        BodyGeometry::Shape(Shape::Box {
            half_extents: [
                0.5 * self.foot.width,
                0.5 * self.foot.thickness,
                0.5 * self.foot.height,
            ],
        })
    }

    /// `p_r` in the body frame.
    fn reference(&self) -> Vec3 {
        [0.0, 0.0, self.torque_point - 0.5 * self.foot.height]
    }

    /// The twist of direction `i`.
    pub fn twist(&self, direction: [f64; 3]) -> [f64; 3] {
        let s = self.velocity_scale;
        [
            direction[0] * s[0],
            direction[1] * s[1],
            direction[2] * s[2],
        ]
    }

    fn start_height(&self, bed: &Checkpoint) -> f64 {
        self.start_height.unwrap_or(2.0 * bed.scene.grains.radius)
    }

    /// The pose of `p_r` when `p_center` is at depth `depth` on the container's axis, tilted.
    fn pose_at(&self, bed: &Checkpoint, depth: f64, tilt: f64) -> PlanarPose {
        let (s, c) = tilt.sin_cos();
        PlanarPose {
            x: -self.torque_point * s,
            z: bed.info.surface_height + depth + self.torque_point * c,
            tilt,
        }
    }

    /// The four corners of the foot's section at `pose`, (x, z) in the world.
    fn corners(&self, pose: &PlanarPose) -> [[f64; 2]; 4] {
        let origin = pose.body_origin(self.reference());
        let (hw, hh) = (0.5 * self.foot.width, 0.5 * self.foot.height);
        [[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]].map(|[a, c]| {
            let p = pose.to_world([a, 0.0, c]);
            [origin[0] + p[0], origin[2] + p[2]]
        })
    }

    fn lowest(&self, pose: &PlanarPose) -> f64 {
        self.corners(pose)
            .iter()
            .map(|c| c[1])
            .fold(f64::INFINITY, f64::min)
    }

    /// The run at θ = (depth, tilt) with `twist`: descent (if needed), then the twist until the
    /// end of the filter window (nothing later enters the reading).
    pub fn plan(&self, bed: &Checkpoint, depth: f64, tilt: f64, twist: [f64; 3]) -> DragPlan {
        let read = self.pose_at(bed, depth, tilt);
        let start = read.moved(twist, -READ_FRACTION * self.duration);
        let clear = bed.info.surface_height + self.start_height(bed);
        let low = self.lowest(&start);
        let approach_from = (low < clear).then(|| PlanarPose {
            z: start.z + (clear - low),
            ..start
        });
        DragPlan {
            reference: self.reference(),
            approach_from,
            approach_speed: self.approach_speed,
            start,
            twist,
            duration: READ_FRACTION * self.duration + 0.5 * self.window,
            friction: bed.scene.grains.friction,
            time_step: bed.scene.time_step(),
        }
    }

    /// Steps of one run (for the cost estimate).
    pub fn steps(&self, plan: &DragPlan) -> usize {
        let dt = plan.time_step;
        let descent = plan
            .approach_from
            .map(|from| ((from.z - plan.start.z) / (plan.approach_speed * dt)).ceil() as usize)
            .unwrap_or(0);
        descent + (plan.duration / dt).round() as usize
    }

    /// Refuses settings and beds the protocol cannot run, naming the command-line flag: a
    /// law that does not turn bodies, a foot that would touch the container's wall or floor
    /// on any run of the grid.
    pub fn check(&self, bed: &Checkpoint, depths: &[f64], tilts: &[f64]) -> Result<(), DemError> {
        let invalid = |m: String| Err(DemError::Invalid(m));
        let f = self.foot;
        if ![
            f.width,
            f.height,
            f.thickness,
            self.duration,
            self.approach_speed,
        ]
        .iter()
        .all(|v| *v > 0.0 && v.is_finite())
        {
            return invalid(format!(
                "--foot-width {}, --foot-height {}, --foot-thickness {}, --t-total {} and \
                 --approach-speed {} must all be positive",
                f.width, f.height, f.thickness, self.duration, self.approach_speed
            ));
        }
        if !(self.window > 0.0
            && self.window <= 2.0 * (1.0 - READ_FRACTION) * self.duration * (1.0 + 1e-9))
        {
            return invalid(format!(
                "--filter-window {} s: the moving average is centred on 0.8 t_total and must \
                 end by t_total, so it must be in (0, {}] s (0.4 --t-total)",
                self.window,
                2.0 * (1.0 - READ_FRACTION) * self.duration
            ));
        }
        if let Some(h) = self.start_height {
            if !(h > 0.0 && h.is_finite()) {
                return invalid(format!("--start-height {h} must be positive"));
            }
        }
        if !matches!(bed.scene.contact, ContactLaw::HertzMindlin(_)) {
            return invalid(format!(
                "--bed: the bed uses the {} contact law, which keeps bodies unturned; the dem \
                 generator tilts and turns the foot and needs a hertz_mindlin bed",
                bed.scene.contact.name()
            ));
        }
        let diameter = 2.0 * bed.scene.grains.radius;
        let [half_x, half_y] = bed.scene.container.half_extents();
        let cylinder = matches!(bed.scene.container, Container::Cylinder { .. });
        for &depth in depths.iter().filter(|d| **d < 0.0) {
            for &tilt in tilts {
                for u in &self.directions {
                    let plan = self.plan(bed, depth, tilt, self.twist(*u));
                    let end = plan.start.moved(plan.twist, plan.duration);
                    let poses = [Some(plan.start), plan.approach_from, Some(end)];
                    for pose in poses.iter().flatten() {
                        let corners = self.corners(pose);
                        let reach = corners
                            .iter()
                            .map(|c| {
                                if cylinder {
                                    (c[0] * c[0] + 0.25 * f.thickness * f.thickness).sqrt() - half_x
                                } else {
                                    (c[0].abs() - half_x).max(0.5 * f.thickness - half_y)
                                }
                            })
                            .fold(f64::NEG_INFINITY, f64::max);
                        if reach + diameter > 0.0 {
                            return invalid(format!(
                                "--foot-width {} / --foot-thickness {}: at d = {depth}, tilt \
                                 {tilt}, direction {u:?} the foot comes within {:.4} m of the \
                                 bed's wall ({:?}); it must stay a grain diameter ({diameter:.4} \
                                 m) clear: use a smaller foot, a shorter drag (--t-total, \
                                 --velocity-scale) or a wider bed (--bed)",
                                f.width, f.thickness, -reach, bed.scene.container
                            ));
                        }
                        if self.lowest(pose) < diameter {
                            return invalid(format!(
                                "--depth-max: at d = {depth}, tilt {tilt}, direction {u:?} the \
                                 foot comes within {:.4} m of the bed's floor (the bed is \
                                 {:.4} m deep); it must stay a grain diameter clear: use a \
                                 shallower grid or a deeper bed",
                                self.lowest(pose).max(0.0),
                                bed.info.surface_height
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One run: the wrench at θ = (depth, tilt) for `twist`.
    pub fn read(
        &self,
        backend: &mut dyn Backend,
        bed: &Checkpoint,
        depth: f64,
        tilt: f64,
        twist: [f64; 3],
    ) -> Result<Reading, DemError> {
        let plan = self.plan(bed, depth, tilt, twist);
        let samples = drag(backend, bed, self.geometry(), &plan)?;
        let centre = READ_FRACTION * self.duration;
        let wrench = window_mean(
            &samples,
            centre - 0.5 * self.window,
            centre + 0.5 * self.window,
        )
        .ok_or_else(|| {
            DemError::Invalid(format!(
                "--filter-window {} s holds no time step of {} s",
                self.window, plan.time_step
            ))
        })?;
        Ok(Reading {
            wrench,
            steps: self.steps(&plan),
        })
    }

    /// Total steps of the grid (for the cost estimate printed before a build).
    pub fn grid_steps(&self, bed: &Checkpoint, depths: &[f64], tilts: &[f64]) -> (usize, usize) {
        let mut runs = 0;
        let mut steps = 0;
        for &depth in depths.iter().filter(|d| **d < 0.0) {
            for &tilt in tilts {
                for u in &self.directions {
                    runs += 1;
                    steps += self.steps(&self.plan(bed, depth, tilt, self.twist(*u)));
                }
            }
        }
        (runs, steps)
    }

    /// Seconds per step of the bed with the foot where the grid's first run starts (its first
    /// 5 steps, which build the neighbour list, left out), for the estimate before a build.
    pub fn time_per_step(
        &self,
        backend: &mut dyn Backend,
        bed: &Checkpoint,
        depths: &[f64],
        tilts: &[f64],
    ) -> Result<f64, DemError> {
        let depth = depths.iter().cloned().find(|d| *d < 0.0).unwrap_or(-0.01);
        let tilt = tilts.first().copied().unwrap_or(0.0);
        let direction = self.directions.first().copied().unwrap_or([0.0, -1.0, 0.0]);
        let mut plan = self.plan(bed, depth, tilt, self.twist(direction));
        plan.approach_from = None;
        plan.start = plan.start.moved([0.0, 1.0, 0.0], 1.0);
        plan.duration = 55.0 * plan.time_step;
        let start = std::time::Instant::now();
        drag(backend, bed, self.geometry(), &plan)?;
        let warm = start.elapsed().as_secs_f64();
        plan.duration = 5.0 * plan.time_step;
        let start = std::time::Instant::now();
        drag(backend, bed, self.geometry(), &plan)?;
        Ok((warm - start.elapsed().as_secs_f64()).max(0.0) / 50.0)
    }

    /// The data set on the grid `depths` × `tilts`; nodes at d = 0 are zero. `progress` is
    /// told about each run as it finishes. `bed_name` is recorded in the provenance.
    #[allow(clippy::too_many_arguments)]
    pub fn generate(
        &self,
        backend: &mut dyn Backend,
        bed: &Checkpoint,
        bed_name: &str,
        medium: String,
        depths: &[f64],
        tilts: &[f64],
        kernel: Kernel,
        progress: &mut dyn FnMut(&RunReport),
    ) -> Result<WrenchSpaceData, DemError> {
        self.check(bed, depths, tilts)?;
        let (runs, _) = self.grid_steps(bed, depths, tilts);
        let mut done = 0;
        let mut nodes = Vec::new();
        for &depth in depths {
            for &tilt in tilts {
                let mut wrenches = Vec::with_capacity(self.directions.len());
                for (i, u) in self.directions.iter().enumerate() {
                    if depth >= 0.0 {
                        wrenches.push([0.0; 3]);
                        continue;
                    }
                    let reading = self.read(backend, bed, depth, tilt, self.twist(*u))?;
                    done += 1;
                    progress(&RunReport {
                        done,
                        runs,
                        depth,
                        tilt,
                        direction: i,
                        reading,
                    });
                    wrenches.push(reading.wrench);
                }
                nodes.push(Node {
                    depth,
                    tilt,
                    wrenches,
                });
            }
        }
        Ok(WrenchSpaceData {
            medium,
            foot: self.foot,
            torque_point: self.torque_point,
            velocity_scale: self.velocity_scale,
            directions: self.directions.clone(),
            interpolation: Interpolation {
                kernel,
                ..Interpolation::default()
            },
            provenance: Provenance {
                generator: "dem".to_owned(),
                parameters: self.provenance(bed, bed_name),
            },
            nodes,
            rbf_weights: Vec::new(),
        })
    }

    fn provenance(&self, bed: &Checkpoint, bed_name: &str) -> BTreeMap<String, String> {
        let text = |s: &str| s.to_owned();
        BTreeMap::from([
            (text("bed"), bed_name.to_owned()),
            (
                text("bed_scene"),
                serde_json::to_string(&bed.scene).unwrap_or_default(),
            ),
            (
                text("bed_grains"),
                format!(
                    "{} grains, surface at {:.5} m, volume fraction {:.3}",
                    bed.grains.len(),
                    bed.info.surface_height,
                    bed.info.volume_fraction
                ),
            ),
            (text("backend"), text("cpu")),
            (text("time_step_s"), bed.scene.time_step().to_string()),
            (text("t_total_s"), self.duration.to_string()),
            (
                text("filter"),
                format!(
                    "moving average over {} s centred on 0.8 t_total (the reading); the run \
                     stops at the end of the window",
                    self.window
                ),
            ),
            (
                text("approach"),
                format!(
                    "straight down at {} m/s from {} m above the surface (foot's lowest \
                     point) to the start pose; a start pose at least that high is used \
                     directly",
                    self.approach_speed,
                    self.start_height(bed)
                ),
            ),
            (
                text("foot_body"),
                text(
                    "kinematic box, friction = the grains' friction; p_center on the \
                      container's axis at the reading",
                ),
            ),
        ])
    }
}

/// What the progress callback is told after each run.
#[derive(Clone, Copy, Debug)]
pub struct RunReport {
    pub done: usize,
    pub runs: usize,
    pub depth: f64,
    pub tilt: f64,
    pub direction: usize,
    pub reading: Reading,
}
