//! What each field accepts, in words, for error messages: units of the numeric fields and a
//! description of the rest. Field and variant lists are read from the schema's own serde
//! derives, so they cannot drift from it.

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use std::fmt;

use super::field_path::FieldPath;
use super::planar::{Objective, PhaseSpec, PlanarProblem, PlanarTask};
use super::presets::MediumPreset;
use super::schema::{InitialGuess, Scheme, Strategy, Transcription};

/// Units of the numeric fields, keyed by path pattern (list indices written `[]`);
/// `""` marks a dimensionless number.
const UNITS: &[(&str, &str)] = &[
    ("gravity", "m/s²"),
    ("terrain.friction", ""),
    ("terrain.foot_radius", "m"),
    ("terrain.stiffness", "N/m"),
    ("terrain.damping", "N s/m"),
    ("terrain.recruitment_rate", ""),
    ("terrain.shear_band_angle_deg", "deg"),
    ("terrain.surrounding_mass_scaling", ""),
    ("terrain.volume_fraction", ""),
    ("terrain.grain_density", "kg/m³"),
    ("terrain.penetration_stiffness", "N/m"),
    ("terrain.resistive_stress", "N/m³"),
    ("terrain.drag_scaling", ""),
    ("schedule[].duration", "s"),
    ("task.apex_rise", "m"),
    ("task.distance", "m"),
    ("task.speed", "m/s"),
    ("task.swing_height", "m"),
    ("task.contact_margin", ""),
];

/// The unit of a numeric field (`Some("")` if dimensionless), `None` if the field is not a number.
pub(crate) fn unit_of(path: &FieldPath) -> Option<&'static str> {
    let pattern = path.pattern();
    UNITS
        .iter()
        .find(|(field, _)| *field == pattern)
        .map(|(_, unit)| *unit)
}

/// What the field at `path` accepts, in words; `None` where serde's own message says it.
pub(crate) fn accepted(path: &FieldPath) -> Option<String> {
    let pattern = path.pattern();
    let described = match pattern.as_str() {
        "" => format!(
            "a map of the sections {}",
            list(fields_of::<PlanarProblem>())
        ),
        "name" => "text, used to name the results".to_owned(),
        "robot" => "a robot: `{file: ROBOT.yaml}` (relative to the problem file) or a preset \
                    `{model: monopod | quadruped | planar_foot, ...}`"
            .to_owned(),
        "terrain" => "a ground: `{model: rigid | added_mass | spring | wrench_space, ...}` with \
                      that model's fields"
            .to_owned(),
        "task" => section(fields_of::<PlanarTask>()),
        "task.objective" => one_of(variants_of::<Objective>()),
        "terrain.medium" => one_of(variants_of::<MediumPreset>()),
        "transcription" => section(fields_of::<Transcription>()),
        "transcription.scheme" => one_of(variants_of::<Scheme>()),
        "initial_guess" => one_of(variants_of::<InitialGuess>()),
        "strategy" => one_of(variants_of::<Strategy>()),
        "schedule" => "a list of phases, e.g. [{contacts: [foot], nodes: 31}, {contacts: [], \
                       nodes: 31}]"
            .to_owned(),
        "schedule[]" => format!("a phase: a map with {}", list(fields_of::<PhaseSpec>())),
        "schedule[].nodes" => "a whole number of nodes, at least 3".to_owned(),
        "schedule[].duration" => {
            "[min, max] in s, two numbers with 0 < min <= max, e.g. [0.01, 0.2]".to_owned()
        }
        "schedule[].contacts" => "a list of the robot's contact names, e.g. [foot]".to_owned(),
        "solver" => {
            "a map of IPOPT option names to values, e.g. {tol: 1.0e-8, max_iter: 3000}".to_owned()
        }
        _ if pattern.starts_with("solver.") => "an integer, a number or text".to_owned(),
        _ => match unit_of(path)? {
            "" => "a number".to_owned(),
            unit => format!("a number in {unit}"),
        },
    };
    Some(described)
}

/// Field names of a section (for checking the unit table).
#[cfg(test)]
fn section_fields(path: &FieldPath) -> Option<&'static [&'static str]> {
    match path.pattern().as_str() {
        "" => Some(fields_of::<PlanarProblem>()),
        "task" => Some(fields_of::<PlanarTask>()),
        "transcription" => Some(fields_of::<Transcription>()),
        "schedule[]" => Some(fields_of::<PhaseSpec>()),
        _ => None,
    }
}

fn section(fields: &[&str]) -> String {
    format!("a section with the fields {}", list(fields))
}

fn one_of(variants: &[&str]) -> String {
    format!("one of {}", list(variants))
}

pub(crate) fn list(names: &[&str]) -> String {
    names.join(", ")
}

/// The field names serde derived for struct `T`.
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(NameProbe { names: &mut names });
    names
}

/// The variant names serde derived for enum `T`.
fn variants_of<T: DeserializeOwned>() -> &'static [&'static str] {
    fields_of::<T>()
}

/// A deserializer that records the field or variant names a derived `Deserialize` announces,
/// then stops.
struct NameProbe<'a> {
    names: &'a mut &'static [&'static str],
}

#[derive(Debug)]
struct ProbeStopped;

impl fmt::Display for ProbeStopped {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("probe stopped")
    }
}

impl std::error::Error for ProbeStopped {}

impl de::Error for ProbeStopped {
    fn custom<T: fmt::Display>(_message: T) -> Self {
        ProbeStopped
    }
}

impl<'de> Deserializer<'de> for NameProbe<'_> {
    type Error = ProbeStopped;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, ProbeStopped> {
        Err(ProbeStopped)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ProbeStopped> {
        *self.names = fields;
        Err(ProbeStopped)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, ProbeStopped> {
        *self.names = variants;
        Err(ProbeStopped)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_reads_the_derived_names() {
        assert_eq!(fields_of::<Transcription>(), &["scheme"]);
        assert_eq!(variants_of::<Scheme>(), &["trapezoidal", "hermite_simpson"]);
        assert_eq!(fields_of::<PhaseSpec>(), &["contacts", "nodes", "duration"]);
    }

    #[test]
    fn every_unit_names_a_field() {
        use crate::problem::planar::{AddedMassGroundConfig, RigidGroundConfig};
        let mut terrain: Vec<&str> = fields_of::<AddedMassGroundConfig>().to_vec();
        terrain.extend(fields_of::<RigidGroundConfig>());
        terrain.extend(fields_of::<crate::terrain::spring::SpringGround>());
        for (pattern, _) in UNITS {
            let path = FieldPath::parse(&pattern.replace("[]", ".0")).unwrap();
            let field = path.pattern().rsplit('.').next().unwrap().to_owned();
            let parent = path.parent();
            let fields = match parent.pattern().as_str() {
                "terrain" => &terrain[..],
                _ => section_fields(&parent).unwrap(),
            };
            assert!(fields.contains(&field.as_str()), "{pattern}");
        }
    }
}
