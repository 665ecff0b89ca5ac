//! A granular material as a file (`materials/*.yaml`): the grains, the contact law that
//! makes them, and the bulk behaviour measured on the real material, as targets with their
//! sources. A scene names a material (`material: poppy_seeds`) instead of repeating the grain
//! and law parameters, so one name means one ground in every bed and scene.
//!
//! ```yaml
//! name: poppy_seeds
//! grains: { radius: 0.003, size_spread: 0.1, density: 1000, friction: 0.5, wall_friction: 0.3 }
//! contact: { law: hertz_mindlin, youngs_modulus: 1.0e7, poisson_ratio: 0.3,
//!            restitution: 0.5, rolling_friction: 0.0 }
//! targets:
//!   - { quantity: packing_fraction, value: 0.57, tolerance: 0.02, units: "1",
//!       source: "docs/MODEL.md section 2" }
//! ```
//!
//! Targets are documented data, read and checked here (units, an intruder for an intrusion
//! force); `loam material calibrate` (`super::calibrate`) measures them in the DEM for
//! candidate parameter values and writes the best candidate as a material file.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::backend::ContactLaw;
use super::DemError;
use crate::problem::{line_of, load_yaml};

/// A material file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// The material's name (default: the file's stem).
    #[serde(default)]
    pub name: Option<String>,
    /// What the material is and where its numbers come from, for people.
    #[serde(default)]
    pub description: Option<String>,
    pub grains: MaterialGrains,
    /// The contact law and its parameters, as in a scene's `contact` (default hertz_mindlin
    /// with its documented defaults).
    #[serde(default)]
    pub contact: ContactLaw,
    /// Measured bulk behaviour of the real material (documented data; see the module docs).
    #[serde(default)]
    pub targets: Vec<Target>,
}

/// The grains of a material: what a scene's `grains` takes from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialGrains {
    /// Mean radius [m].
    pub radius: f64,
    /// Radii uniform in r (1 ± size_spread). Default 0; in [0, 0.5).
    #[serde(default)]
    pub size_spread: f64,
    /// Grain material density [kg/m³].
    pub density: f64,
    /// Grain–grain Coulomb friction coefficient.
    pub friction: f64,
    /// Grain–wall friction coefficient. Default: the grains' friction.
    #[serde(default)]
    pub wall_friction: Option<f64>,
}

/// What a target measures. Each quantity has the units it must be given in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// Solid volume fraction of a loosely poured bed (units "1").
    PackingFraction,
    /// Force on an intruder pushed down at `speed`, at each of `depths` (units "N").
    IntrusionForce,
    /// Angle of repose of a poured pile (units "deg").
    AngleOfRepose,
    /// Runout ΔL/L0 of a quasi-2-D column collapse at each aspect ratio of `aspect_ratios`
    /// (units "1").
    CollapseRunout,
}

impl Quantity {
    /// The units a target of this quantity states.
    pub fn units(self) -> &'static str {
        match self {
            Quantity::PackingFraction | Quantity::CollapseRunout => "1",
            Quantity::IntrusionForce => "N",
            Quantity::AngleOfRepose => "deg",
        }
    }
}

/// One measured value (or curve) of the real material, with where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub quantity: Quantity,
    /// The measured value (scalar quantities).
    #[serde(default)]
    pub value: Option<f64>,
    /// The measured values, one per depth or aspect ratio (curves).
    #[serde(default)]
    pub values: Vec<f64>,
    /// Accepted deviation, in the target's units. Default: none stated.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Units of `value`/`values`; required, and must be the quantity's (see [`Quantity`]).
    #[serde(default)]
    pub units: Option<String>,
    /// Where the number comes from (paper, measurement, model); required.
    #[serde(default)]
    pub source: Option<String>,
    /// The intruder of an intrusion force: required for `intrusion_force`.
    #[serde(default)]
    pub intruder: Option<Intruder>,
    /// Intruder speed [m/s] (intrusion_force).
    #[serde(default)]
    pub speed: Option<f64>,
    /// Depths of the sole below the surface [m] (intrusion_force).
    #[serde(default)]
    pub depths: Vec<f64>,
    /// Aspect ratios H0/L0 (collapse_runout).
    #[serde(default)]
    pub aspect_ratios: Vec<f64>,
}

/// The body of an intrusion target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shape", deny_unknown_fields)]
pub enum Intruder {
    /// A flat disc, axis vertical.
    Disc { radius: f64, thickness: f64 },
    /// A vertical cylinder.
    Cylinder { radius: f64, height: f64 },
}

impl Material {
    /// Reads and checks a material file; errors name the file, line and field.
    pub fn load(path: &Path) -> Result<Material, DemError> {
        let text = std::fs::read_to_string(path).map_err(|source| DemError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Material::parse(&text, path)
    }

    /// Parses and checks material text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<Material, DemError> {
        let mut material: Material = load_yaml(text).map_err(|e| DemError::Scene {
            file: origin.to_path_buf(),
            line: e.line,
            field: e.field,
            message: e.message,
        })?;
        material
            .validate()
            .map_err(|(field, message)| DemError::Scene {
                file: origin.to_path_buf(),
                line: line_of(text, &field).or_else(|| {
                    // A field inside a list entry is found through its entry.
                    field
                        .split_once('.')
                        .and_then(|(head, _)| line_of(text, head))
                }),
                field: Some(field),
                message,
            })?;
        if material.name.is_none() {
            material.name = origin.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        Ok(material)
    }

    /// Checks every value; the error is (dotted field, what is wrong and what is accepted).
    pub fn validate(&self) -> Result<(), (String, String)> {
        let g = &self.grains;
        let positive = |field: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err((
                    field.to_string(),
                    format!("is {v}; it must be a positive number"),
                ))
            }
        };
        let friction = |field: &str, v: f64| {
            if (0.0..=10.0).contains(&v) {
                Ok(())
            } else {
                Err((
                    field.to_string(),
                    format!("is {v}; a Coulomb friction coefficient must be in [0, 10]"),
                ))
            }
        };
        positive("grains.radius", g.radius)?;
        positive("grains.density", g.density)?;
        friction("grains.friction", g.friction)?;
        if let Some(w) = g.wall_friction {
            friction("grains.wall_friction", w)?;
        }
        if !(0.0..0.5).contains(&g.size_spread) {
            return Err((
                "grains.size_spread".into(),
                format!("is {}; it must be in [0, 0.5)", g.size_spread),
            ));
        }
        if let ContactLaw::HertzMindlin(law) = &self.contact {
            law.check()
                .map_err(|(field, message)| (format!("contact.{field}"), message))?;
        }
        for (i, t) in self.targets.iter().enumerate() {
            t.validate()
                .map_err(|(field, message)| (format!("targets[{i}].{field}"), message))?;
        }
        Ok(())
    }
}

impl Target {
    fn validate(&self) -> Result<(), (String, String)> {
        let err = |field: &str, message: String| Err((field.to_string(), message));
        let expected = self.quantity.units();
        match &self.units {
            None => {
                return err(
                    "units",
                    format!(
                        "is missing; a {:?} target is stated in \"{expected}\"",
                        self.quantity
                    ),
                )
            }
            Some(u) if u != expected => {
                return err(
                    "units",
                    format!(
                        "is \"{u}\"; a {:?} target is stated in \"{expected}\"",
                        self.quantity
                    ),
                )
            }
            _ => {}
        }
        if self.source.as_deref().map_or(true, |s| s.trim().is_empty()) {
            return err(
                "source",
                "is missing; say where the number comes from (paper, measurement, model)".into(),
            );
        }
        let finite = |field: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err((
                    field.to_string(),
                    format!("is {v}; it must be a number ≥ 0"),
                ))
            }
        };
        if let Some(v) = self.value {
            finite("value", v)?;
        }
        for &v in &self.values {
            finite("values", v)?;
        }
        if let Some(v) = self.tolerance {
            finite("tolerance", v)?;
        }
        let curve = |along: &[f64], name: &str| {
            if along.is_empty() || along.len() != self.values.len() {
                Err((
                    "values".to_string(),
                    format!(
                        "has {} entries for {} {name}; give one value per {name} entry",
                        self.values.len(),
                        along.len()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        match self.quantity {
            Quantity::IntrusionForce => {
                let Some(intruder) = &self.intruder else {
                    return err(
                        "intruder",
                        "is missing; an intrusion force is a property of the body pushed \
                         (e.g. `intruder: {shape: disc, radius: 0.038, thickness: 0.005}`)"
                            .into(),
                    );
                };
                let (a, b) = match *intruder {
                    Intruder::Disc { radius, thickness } => (radius, thickness),
                    Intruder::Cylinder { radius, height } => (radius, height),
                };
                for v in [a, b] {
                    if !(v > 0.0 && v.is_finite()) {
                        return err("intruder", format!("has size {v}; sizes must be positive"));
                    }
                }
                match self.speed {
                    Some(v) if v > 0.0 && v.is_finite() => {}
                    other => {
                        return err(
                            "speed",
                            format!("is {other:?}; an intrusion force needs its speed [m/s] > 0"),
                        )
                    }
                }
                for &d in &self.depths {
                    finite("depths", d)?;
                }
                curve(&self.depths, "depths")?;
            }
            Quantity::CollapseRunout => {
                for &a in &self.aspect_ratios {
                    if !(a > 0.0 && a.is_finite()) {
                        return err("aspect_ratios", format!("has {a}; ratios must be > 0"));
                    }
                }
                curve(&self.aspect_ratios, "aspect_ratios")?;
            }
            Quantity::PackingFraction | Quantity::AngleOfRepose => {
                if self.value.is_none() {
                    return err("value", "is missing".into());
                }
            }
        }
        Ok(())
    }
}

/// The materials shipped with loam, by name: a scene naming one finds it even where no
/// `materials/` folder is near (a scene in a temporary folder, an installed binary).
const SHIPPED: &[(&str, &str)] = &[
    (
        "poppy_seeds",
        include_str!("../../../materials/poppy_seeds.yaml"),
    ),
    (
        "poppy_seeds_rolling",
        include_str!("../../../materials/poppy_seeds_rolling.yaml"),
    ),
];

/// Finds and reads the material a scene names. `reference` is a path (it contains `/` or
/// ends in `.yaml`: relative to the scene's folder, else to the current folder) or a name
/// (`poppy_seeds`: `materials/<name>.yaml` in the scene's folder or the nearest folder above
/// it that has one, else in the current folder, else the copy shipped inside loam).
/// Returns the material and the file it came from (`None` for a shipped copy).
pub fn resolve(reference: &str, scene_file: &Path) -> Result<(Material, Option<PathBuf>), String> {
    let base = scene_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let is_path = reference.contains('/') || reference.ends_with(".yaml");
    let candidates: Vec<PathBuf> = if is_path {
        vec![base.join(reference), PathBuf::from(reference)]
    } else {
        let file = format!("{reference}.yaml");
        base.ancestors()
            .map(|dir| dir.join("materials").join(&file))
            .chain([Path::new("materials").join(&file)])
            .collect()
    };
    for candidate in &candidates {
        if candidate.is_file() {
            let material = Material::load(candidate).map_err(|e| e.to_string())?;
            return Ok((material, Some(candidate.clone())));
        }
    }
    if !is_path {
        if let Some((_, text)) = SHIPPED.iter().find(|(name, _)| *name == reference) {
            let origin = PathBuf::from(format!("<shipped materials/{reference}.yaml>"));
            let material = Material::parse(text, &origin).map_err(|e| e.to_string())?;
            return Ok((material, None));
        }
    }
    Err(format!(
        "material `{reference}` not found (looked for {}{})",
        candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if is_path {
            String::new()
        } else {
            format!(
                "; shipped: {}",
                SHIPPED
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    ))
}
