//! Reading a scene file: the text as written (a `material` may stand for the grain and law
//! parameters) resolved into a [`Scene`] with every value filled in.
//!
//! The resolution rule, one for every field the material holds: a value written in the
//! scene wins, else the material's, else the field's documented default. So
//! `material: poppy_seeds` with `contact: {rolling_friction: 0.2}` is poppy seeds with
//! rolling resistance 0.2, and a scene with no material reads exactly as before materials
//! existed. The resolved scene keeps the material's name (`Scene::material`).

use std::path::Path;

use serde::Deserialize;

use super::backend::{ContactLaw, Container};
use super::law::HertzMindlin;
use super::layout::{Fill, RoughFloor, Wall};
use super::material::{self, Material};
use super::scene::{GrainSpec, Scene, SettleSettings, SolverSettings};
use super::DemError;
use crate::problem::{line_of, load_yaml};

/// A scene file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneText {
    #[serde(default)]
    material: Option<String>,
    container: Container,
    #[serde(default)]
    grains: GrainText,
    #[serde(default)]
    gravity: Option<f64>,
    #[serde(default)]
    contact: Option<ContactText>,
    #[serde(default)]
    time_step: Option<f64>,
    #[serde(default)]
    solver: Option<SolverSettings>,
    #[serde(default)]
    settle: SettleSettings,
    #[serde(default)]
    fills: Vec<Fill>,
    #[serde(default)]
    walls: Vec<Wall>,
    #[serde(default)]
    rough_floor: Option<RoughFloor>,
}

/// `grains` as written: what a material holds may be left out.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrainText {
    radius: Option<f64>,
    size_spread: Option<f64>,
    density: Option<f64>,
    friction: Option<f64>,
    wall_friction: Option<f64>,
    count: Option<usize>,
    fill_height: Option<f64>,
    seed: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum LawName {
    HertzMindlin,
    ProjectedJacobi,
}

/// `contact` as written: the law's name and any of its parameters.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContactText {
    law: Option<LawName>,
    youngs_modulus: Option<f64>,
    poisson_ratio: Option<f64>,
    restitution: Option<f64>,
    rolling_friction: Option<f64>,
}

/// Reads scene `text` (from `origin`), resolves its material and checks it; every error
/// names the file, and the line and field where the text writes them.
pub fn parse(text: &str, origin: &Path) -> Result<Scene, DemError> {
    parse_with(text, origin, None)
}

/// As [`parse`], with `material` standing for the scene's own `material` reference (which is
/// not read): the scene's written values still win over the material's. `loam material
/// calibrate` runs its experiments' scenes on each candidate material this way.
pub fn parse_with_material(
    text: &str,
    origin: &Path,
    material: &Material,
) -> Result<Scene, DemError> {
    parse_with(text, origin, Some(material))
}

fn parse_with(text: &str, origin: &Path, given: Option<&Material>) -> Result<Scene, DemError> {
    let at = |field: &str, message: String| DemError::Scene {
        file: origin.to_path_buf(),
        line: line_of(text, field).or_else(|| {
            // A field inside a list entry, or one the text leaves out: its parent's line.
            let parent = field.rsplit_once('.').map(|(head, _)| head)?;
            line_of(text, parent)
        }),
        field: Some(field.to_string()),
        message,
    };
    let raw: SceneText = load_yaml(text).map_err(|e| DemError::Scene {
        file: origin.to_path_buf(),
        line: e.line,
        field: e.field,
        message: e.message,
    })?;
    let material: Option<Material> = match (&raw.material, given) {
        (_, Some(given)) => Some(given.clone()),
        (None, None) => None,
        (Some(reference), None) => Some(
            material::resolve(reference, origin)
                .map_err(|message| at("material", message))?
                .0,
        ),
    };
    let from = material.as_ref().map(|m| &m.grains);
    let need = |field: &str, written: Option<f64>, held: Option<f64>| {
        written.or(held).ok_or_else(|| {
            at(
                &format!("grains.{field}"),
                "is missing; give it, or name a `material` that holds it".into(),
            )
        })
    };
    let g = &raw.grains;
    let grains = GrainSpec {
        radius: need("radius", g.radius, from.map(|m| m.radius))?,
        size_spread: g.size_spread.or(from.map(|m| m.size_spread)).unwrap_or(0.0),
        density: need("density", g.density, from.map(|m| m.density))?,
        friction: need("friction", g.friction, from.map(|m| m.friction))?,
        wall_friction: g.wall_friction.or(from.and_then(|m| m.wall_friction)),
        count: g.count,
        fill_height: g.fill_height,
        seed: g.seed.unwrap_or(1),
    };
    let contact = resolve_contact(raw.contact.unwrap_or_default(), material.as_ref())
        .map_err(|(field, message)| at(&field, message))?;
    let scene = Scene {
        material: (raw.material.is_some() || given.is_some()).then(|| {
            material
                .as_ref()
                .and_then(|m| m.name.clone())
                .unwrap_or_default()
        }),
        container: raw.container,
        grains,
        gravity: raw.gravity.unwrap_or(9.81),
        contact,
        time_step: raw.time_step,
        solver: raw.solver,
        settle: raw.settle,
        fills: raw.fills,
        walls: raw.walls,
        rough_floor: raw.rough_floor,
    };
    scene
        .validate()
        .map_err(|(field, message)| at(&field, message))?;
    Ok(scene)
}

/// The law: the scene's parameters over the material's over the defaults.
fn resolve_contact(
    written: ContactText,
    material: Option<&Material>,
) -> Result<ContactLaw, (String, String)> {
    let held = material.map(|m| m.contact);
    let law = written.law.unwrap_or(match held {
        Some(ContactLaw::ProjectedJacobi) => LawName::ProjectedJacobi,
        _ => LawName::HertzMindlin,
    });
    let parameters = [
        ("youngs_modulus", written.youngs_modulus),
        ("poisson_ratio", written.poisson_ratio),
        ("restitution", written.restitution),
        ("rolling_friction", written.rolling_friction),
    ];
    if law == LawName::ProjectedJacobi {
        if let Some((name, _)) = parameters.iter().find(|(_, v)| v.is_some()) {
            return Err((
                format!("contact.{name}"),
                "applies to `law: hertz_mindlin` only; this scene's law is projected_jacobi \
                 (hard contacts have no material parameters)"
                    .into(),
            ));
        }
        return Ok(ContactLaw::ProjectedJacobi);
    }
    let mut m = match held {
        Some(ContactLaw::HertzMindlin(m)) => m,
        _ => HertzMindlin::default(),
    };
    if let Some(v) = written.youngs_modulus {
        m.youngs_modulus = v;
    }
    if let Some(v) = written.poisson_ratio {
        m.poisson_ratio = v;
    }
    if let Some(v) = written.restitution {
        m.restitution = v;
    }
    if let Some(v) = written.rolling_friction {
        m.rolling_friction = v;
    }
    Ok(ContactLaw::HertzMindlin(m))
}
