//! `loam material calibrate`: the DEM parameters a material's targets do not fix, fitted by
//! running the targets' experiments in the DEM for each candidate set of values.
//!
//! A candidate is the material with some parameters set (`--vary contact.rolling_friction=
//! 0,0.1,0.2`; the grid of every combination). For each candidate:
//! - **packing fraction**: the bed scene is poured and settled with the candidate's grains
//!   (`bed::prepare`); its volume fraction below the free surface is the value;
//! - **intrusion force**: the target's intruder (a disc or cylinder, axis vertical) is pushed
//!   down the axis of that bed at the target's speed to 2 mm past its deepest depth
//!   (`intrude`); the force at each target depth is interpolated linearly between the
//!   recorded rows (depth of the intruder's lowest point below the surface);
//! - **collapse runout**: for each aspect ratio, a variant of the column scene (its fill's
//!   length L0 the scene's, doubled for a < 0.75 so that a low column is 20 grains long; fill
//!   height 0.78 a L0, which settles to about a L0 in the shipped channel; the channel long
//!   enough for 1.5 times the target's runout) is settled, its gate removed, and run for
//!   `collapse_time`; ΔL/L0 from the run's `collapse` measurement. The settled column's own
//!   aspect ratio a* is not exactly the nominal one, so the target is read off the target's
//!   curve at a* (log-log interpolation between its points, the end segments' power law
//!   beyond them): a column that settled 8 % short of a = 3 is held to the runout of the
//!   column it is.
//! - **angle of repose**: not measured (loam has no heap experiment yet): reported, not fitted.
//!
//! Each experiment's scene is read from its file with the candidate standing for the scene's
//! `material` (values the scene file writes itself still win, as in any scene), and then the
//! varied parameters are set on it, so that a varied parameter is the candidate's in every
//! experiment (the shipped column scene writes `rolling_friction: 0.2`; calibrating rolling
//! friction overrides it).
//!
//! Residuals: (value − target) / target. A target's tolerance is its own `tolerance` (in its
//! units) where it states one, else 15 % of the target (the acceptance band for
//! forces and runouts). A candidate's score is its largest |value − target| / tolerance; the
//! best candidate has the lowest score, and the calibration meets its targets when that score
//! is at most 1.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::backend::{BodyGeometry, ContactLaw};
use super::layout::Axis;
use super::material::{Intruder, Material, Quantity, Target};
use super::sdf::Shape;
use super::{bed, intrude, run, scene_file, CpuBackend, DemError, Scene};

/// The parameters `--vary` accepts, with what each is.
pub const PARAMETERS: [(&str, &str); 6] = [
    (
        "contact.rolling_friction",
        "rolling resistance μ_r (Hertz-Mindlin)",
    ),
    (
        "contact.restitution",
        "coefficient of restitution (Hertz-Mindlin)",
    ),
    (
        "contact.youngs_modulus",
        "Young's modulus [Pa] (Hertz-Mindlin)",
    ),
    ("contact.poisson_ratio", "Poisson's ratio (Hertz-Mindlin)"),
    ("grains.friction", "grain-grain Coulomb friction"),
    ("grains.wall_friction", "grain-wall Coulomb friction"),
];

/// The relative tolerance of a target that states none.
pub const DEFAULT_RELATIVE_TOLERANCE: f64 = 0.15;

/// Sets `path` (one of [`PARAMETERS`]) to `value` in a material.
pub fn set_in_material(material: &mut Material, path: &str, value: f64) -> Result<(), String> {
    match path {
        "grains.friction" => material.grains.friction = value,
        "grains.wall_friction" => material.grains.wall_friction = Some(value),
        _ => set_in_law(&mut material.contact, path, value)?,
    }
    Ok(())
}

/// Sets `path` to `value` in a resolved scene.
pub fn set_in_scene(scene: &mut Scene, path: &str, value: f64) -> Result<(), String> {
    match path {
        "grains.friction" => scene.grains.friction = value,
        "grains.wall_friction" => scene.grains.wall_friction = Some(value),
        _ => set_in_law(&mut scene.contact, path, value)?,
    }
    Ok(())
}

fn set_in_law(law: &mut ContactLaw, path: &str, value: f64) -> Result<(), String> {
    let ContactLaw::HertzMindlin(m) = law else {
        return Err(format!(
            "{path} is a Hertz-Mindlin parameter; this material's law is projected_jacobi"
        ));
    };
    match path {
        "contact.rolling_friction" => m.rolling_friction = value,
        "contact.restitution" => m.restitution = value,
        "contact.youngs_modulus" => m.youngs_modulus = value,
        "contact.poisson_ratio" => m.poisson_ratio = value,
        _ => {
            let accepted: Vec<&str> = PARAMETERS.iter().map(|p| p.0).collect();
            return Err(format!(
                "{path} cannot be calibrated; accepted: {}",
                accepted.join(", ")
            ));
        }
    }
    Ok(())
}

/// The experiments' scenes and how long a collapse runs.
pub struct Experiments<'a> {
    /// The bed scene (packing fraction, intrusions): its text and its file.
    pub bed: (&'a str, &'a Path),
    /// The column-collapse scene (one fill, one removed x gate).
    pub column: (&'a str, &'a Path),
    /// Simulated time after the gate is removed [s].
    pub collapse_time: f64,
}

/// One measured value against one target value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub quantity: Quantity,
    /// The depth [m] (intrusion force) or the nominal aspect ratio (collapse runout).
    pub at: Option<f64>,
    /// The target value this measurement is held to (for a collapse: at the run's own a*).
    pub target: f64,
    /// In the target's units.
    pub tolerance: f64,
    pub value: Option<f64>,
    /// (value − target) / target.
    pub residual: Option<f64>,
    /// |value − target| / tolerance.
    pub score: Option<f64>,
    /// The settled column's aspect ratio a* (collapse runout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aspect_ratio: Option<f64>,
    /// Why there is no value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Measurement {
    fn new(quantity: Quantity, at: Option<f64>, target: f64, tolerance: f64) -> Self {
        Measurement {
            quantity,
            at,
            target,
            tolerance,
            value: None,
            residual: None,
            score: None,
            aspect_ratio: None,
            note: None,
        }
    }

    fn with_value(mut self, value: f64) -> Self {
        self.value = Some(value);
        self.residual = Some((value - self.target) / self.target);
        self.score = Some((value - self.target).abs() / self.tolerance);
        self
    }
}

fn tolerance(target: &Target, value: f64) -> f64 {
    target
        .tolerance
        .unwrap_or(DEFAULT_RELATIVE_TOLERANCE * value.abs())
}

/// The candidate's largest score (∞ when nothing was measured).
pub fn score(measurements: &[Measurement]) -> f64 {
    let scores: Vec<f64> = measurements.iter().filter_map(|m| m.score).collect();
    if scores.is_empty() {
        f64::INFINITY
    } else {
        scores.into_iter().fold(0.0, f64::max)
    }
}

/// Runs every target's experiment for the candidate `material` (`varied` already set in it,
/// and set again on each scene); `say` hears what runs.
pub fn measure(
    material: &Material,
    varied: &[(String, f64)],
    experiments: &Experiments,
    say: &dyn Fn(String),
) -> Result<Vec<Measurement>, DemError> {
    let scene_of = |(text, file): (&str, &Path)| -> Result<Scene, DemError> {
        let mut scene = scene_file::parse_with_material(text, file, material)?;
        for (path, value) in varied {
            set_in_scene(&mut scene, path, *value).map_err(DemError::Invalid)?;
        }
        scene
            .validate()
            .map_err(|(field, message)| DemError::Invalid(format!("{field}: {message}")))?;
        Ok(scene)
    };
    let needs_bed = material.targets.iter().any(|t| {
        matches!(
            t.quantity,
            Quantity::PackingFraction | Quantity::IntrusionForce
        )
    });
    let bed = if needs_bed {
        say("pouring the bed".into());
        Some(bed::prepare(
            &mut CpuBackend::new(),
            &scene_of(experiments.bed)?,
        )?)
    } else {
        None
    };
    let mut out = Vec::new();
    for target in &material.targets {
        match target.quantity {
            Quantity::PackingFraction => {
                let value = target.value.unwrap_or(f64::NAN);
                let bed = bed.as_ref().expect("poured above");
                out.push(
                    Measurement::new(target.quantity, None, value, tolerance(target, value))
                        .with_value(bed.info.volume_fraction),
                );
            }
            Quantity::IntrusionForce => {
                let bed = bed.as_ref().expect("poured above");
                out.extend(intrusion(bed, target, say)?);
            }
            Quantity::CollapseRunout => {
                for (k, &a) in target.aspect_ratios.iter().enumerate() {
                    say(format!("column collapse at a = {a}"));
                    let value = target.values.get(k).copied().unwrap_or(f64::NAN);
                    let scene = column(scene_of(experiments.column)?, a, value)?;
                    out.push(collapse(&scene, target, a, experiments.collapse_time)?);
                }
            }
            Quantity::AngleOfRepose => {
                let value = target.value.unwrap_or(f64::NAN);
                let mut m =
                    Measurement::new(target.quantity, None, value, tolerance(target, value));
                m.note = Some("not measured: loam has no heap experiment yet".into());
                out.push(m);
            }
        }
    }
    Ok(out)
}

fn intrusion(
    bed: &bed::Checkpoint,
    target: &Target,
    say: &dyn Fn(String),
) -> Result<Vec<Measurement>, DemError> {
    let shape = match target.intruder {
        Some(Intruder::Disc { radius, thickness }) => Shape::Disc { radius, thickness },
        Some(Intruder::Cylinder { radius, height }) => Shape::Cylinder {
            radius,
            half_height: 0.5 * height,
        },
        None => {
            return Err(DemError::Invalid(
                "an intrusion target needs an intruder".into(),
            ))
        }
    };
    let deepest = target.depths.iter().copied().fold(0.0, f64::max);
    let speed = target.speed.unwrap_or(0.05);
    say(format!(
        "intrusion to {:.0} mm at {speed} m/s",
        1e3 * (deepest + 0.002)
    ));
    let samples = intrude::intrude(
        &mut CpuBackend::new(),
        bed,
        BodyGeometry::Shape(shape),
        &intrude::IntrudeSettings {
            speed,
            depth: deepest + 0.002,
            start_height: None,
            sample_travel: None,
            friction: None,
            iterations: None,
            time_step: None,
        },
    )?;
    let points: Vec<(f64, f64)> = samples.iter().map(|s| (s.depth, s.force[2])).collect();
    Ok(target
        .depths
        .iter()
        .zip(&target.values)
        .map(|(&depth, &value)| {
            let m = Measurement::new(
                target.quantity,
                Some(depth),
                value,
                tolerance(target, value),
            );
            match interpolate(&points, depth) {
                Some(force) => m.with_value(force),
                None => Measurement {
                    note: Some(format!("the intrusion did not reach {depth} m")),
                    ..m
                },
            }
        })
        .collect())
}

/// y at x on a polyline sorted or not by x (the first segment that brackets x).
fn interpolate(points: &[(f64, f64)], x: f64) -> Option<f64> {
    points.windows(2).find_map(|w| {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        ((x0 <= x && x <= x1) && x1 > x0).then(|| y0 + (y1 - y0) * (x - x0) / (x1 - x0))
    })
}

/// The column scene turned into a column of nominal aspect ratio `a` (module docs).
fn column(mut scene: Scene, a: f64, runout: f64) -> Result<Scene, DemError> {
    let bad = |why: &str| DemError::Invalid(format!("the column scene {why}"));
    if scene.fills.len() != 1 {
        return Err(bad("must have one fill (the column)"));
    }
    let Some(gate) = scene
        .walls
        .iter()
        .position(|w| w.axis == Axis::X && w.remove_at.is_some())
    else {
        return Err(bad("must have an x wall that is removed (the gate)"));
    };
    let super::Container::Box { half_x, .. } = scene.container else {
        return Err(bad("must be a box (a channel along x)"));
    };
    let length = scene.fills[0].x[1] - scene.fills[0].x[0];
    let l0 = if a < 0.75 { 2.0 * length } else { length };
    let total = l0 * (1.0 + (1.5 * runout).max(1.5));
    let half = 0.5 * total.max(2.0 * half_x);
    let below = matches!(scene.walls[gate].grains, super::layout::Side::Below);
    let (back, front) = if below {
        (-half, -half + l0)
    } else {
        (half - l0, half)
    };
    if let super::Container::Box { half_x, .. } = &mut scene.container {
        *half_x = half;
    }
    scene.fills[0].x = [back, front];
    scene.fills[0].fill_height = Some(0.78 * a * l0);
    scene.fills[0].count = None;
    scene.walls[gate].at = if below { front } else { back };
    scene.validate().map_err(|(field, message)| {
        DemError::Invalid(format!("column a = {a}: {field}: {message}"))
    })?;
    Ok(scene)
}

fn collapse(
    scene: &Scene,
    target: &Target,
    a: f64,
    duration: f64,
) -> Result<Measurement, DemError> {
    let mut backend = CpuBackend::new();
    let prepared = run::prepare(&mut backend, scene)?;
    let summary = run::run(
        &mut backend,
        scene,
        &prepared,
        run::RunSettings {
            duration,
            snapshot_every: duration,
        },
        &mut |_, _| Ok(()),
    )?;
    let nominal = target
        .aspect_ratios
        .iter()
        .position(|x| *x == a)
        .and_then(|k| target.values.get(k).copied())
        .unwrap_or(f64::NAN);
    let Some(c) = summary.collapse else {
        let mut m = Measurement::new(
            target.quantity,
            Some(a),
            nominal,
            tolerance(target, nominal),
        );
        m.note = Some("the run measured no collapse".into());
        return Ok(m);
    };
    let at = curve_at(&target.aspect_ratios, &target.values, c.aspect_ratio);
    let mut m = Measurement::new(target.quantity, Some(a), at, tolerance(target, at))
        .with_value(c.runout_ratio);
    m.aspect_ratio = Some(c.aspect_ratio);
    if !prepared.settled {
        m.note = Some("the column had not settled when its gate went".into());
    }
    Ok(m)
}

/// The target curve (x, y > 0) at `x`: log-log interpolation between neighbouring points, the
/// end segments' power laws beyond them; a single point scales as y ∝ x.
pub fn curve_at(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let mut points: Vec<(f64, f64)> = xs.iter().copied().zip(ys.iter().copied()).collect();
    points.sort_by(|p, q| p.0.total_cmp(&q.0));
    match points.len() {
        0 => f64::NAN,
        1 => points[0].1 * x / points[0].0,
        n => {
            let k = points.windows(2).position(|w| x <= w[1].0).unwrap_or(n - 2);
            let ((x0, y0), (x1, y1)) = (points[k], points[k + 1]);
            let slope = (y1 / y0).ln() / (x1 / x0).ln();
            y0 * (x / x0).powf(slope)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_curve_is_read_between_and_beyond_its_points() {
        let (xs, ys) = ([0.5, 1.0, 3.0], [0.6, 1.2, 3.95]);
        for (x, y) in xs.iter().zip(ys) {
            assert!((curve_at(&xs, &ys, *x) - y).abs() < 1e-12);
        }
        // Lube et al.'s 1.2 a between 0.5 and 1 is linear: log-log keeps it.
        assert!((curve_at(&xs, &ys, 0.75) - 0.9).abs() < 1e-12);
        assert!((curve_at(&xs, &ys, 0.25) - 0.3).abs() < 1e-12);
        let slope = (3.95f64 / 1.2).ln() / 3f64.ln();
        assert!((curve_at(&xs, &ys, 2.0) - 1.2 * 2f64.powf(slope)).abs() < 1e-12);
    }

    #[test]
    fn a_polyline_is_interpolated_where_it_brackets() {
        let p = [(0.0, 0.0), (0.01, 2.0), (0.02, 6.0)];
        let near = |got: Option<f64>, want: f64| got.is_some_and(|g| (g - want).abs() < 1e-12);
        assert!(near(interpolate(&p, 0.005), 1.0));
        assert!(near(interpolate(&p, 0.015), 4.0));
        assert_eq!(interpolate(&p, 0.03), None);
    }
}
