//! What each field accepts, in words, for error messages: units of the numeric fields and a
//! description of the rest. Field and variant lists are read from the schema's own serde
//! derives, so they cannot drift from it.

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use std::fmt;

use super::field_path::FieldPath;
use super::presets::MediumPreset;
use super::schema::{
    Domain, InitialGuess, Problem, Robot, Scheme, Task, Terrain, TerrainModel, Transcription,
};

/// Units of the numeric fields, keyed by path pattern (list indices written `[]`);
/// `""` marks a dimensionless number.
const UNITS: &[(&str, &str)] = &[
    ("gravity", "m/s²"),
    ("robot.motor_mass", "kg"),
    ("robot.rod_mass", "kg"),
    ("robot.foot_mass", "kg"),
    ("robot.foot_radius", "m"),
    ("robot.spring_stiffness", "N/m"),
    ("robot.spring_damping", "N s/m"),
    ("robot.spring_rest_length", "m"),
    ("robot.force_constant", "N/A"),
    ("robot.position_gain", "1/s"),
    ("robot.velocity_feedforward", ""),
    ("robot.velocity_gain", "A/(m/s)"),
    ("robot.integral_gain", "A/m"),
    ("terrain.recruitment_rate", ""),
    ("terrain.shear_band_angle_deg", "deg"),
    ("terrain.surrounding_mass_scaling", ""),
    ("terrain.volume_fraction", ""),
    ("terrain.grain_density", "kg/m³"),
    ("terrain.penetration_stiffness", "N/m"),
    ("terrain.resistive_stress", "N/m³"),
    ("terrain.drag_scaling", ""),
    ("phases[].duration", "s"),
    ("task.apex_height", "m"),
    ("task.max_motor_force", "N"),
    ("task.stroke", "m"),
    ("task.min_rod_foot_gap", "m"),
    ("task.start_position", "m"),
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
        "" => format!("a map of the sections {}", list(fields_of::<Problem>())),
        "name" => "text, used to name the results".to_owned(),
        "robot" => section(fields_of::<Robot>()),
        "terrain" => section(fields_of::<Terrain>()),
        "task" => section(fields_of::<Task>()),
        "transcription" => section(fields_of::<Transcription>()),
        "terrain.model" => one_of(variants_of::<TerrainModel>()),
        "terrain.medium" => one_of(variants_of::<MediumPreset>()),
        "transcription.scheme" => one_of(variants_of::<Scheme>()),
        "initial_guess" => one_of(variants_of::<InitialGuess>()),
        "phases" => {
            "a list of phases, e.g. [{domain: stance, nodes: 31}, {domain: flight, nodes: 31}]"
                .to_owned()
        }
        "phases[]" => {
            "a phase: a map with `domain` (stance or flight), `nodes` and `duration`".to_owned()
        }
        "phases[].domain" => one_of(variants_of::<Domain>()),
        "phases[].nodes" => "a whole number of nodes, at least 3".to_owned(),
        "phases[].duration" => {
            "[min, max] in s, two numbers with 0 < min <= max, e.g. [0.01, 0.2]".to_owned()
        }
        "task.start_position" => return None,
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
        "" => Some(fields_of::<Problem>()),
        "robot" => Some(fields_of::<Robot>()),
        "terrain" => Some(fields_of::<Terrain>()),
        "task" => Some(fields_of::<Task>()),
        "transcription" => Some(fields_of::<Transcription>()),
        "phases[]" => Some(fields_of::<super::schema::Phase>()),
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
        assert_eq!(variants_of::<TerrainModel>(), &["rigid", "added_mass"]);
        assert_eq!(fields_of::<Robot>().len(), 13);
        assert_eq!(
            fields_of::<super::super::schema::Phase>(),
            &["domain", "nodes", "duration"]
        );
    }

    #[test]
    fn every_unit_names_a_field() {
        for (pattern, _) in UNITS {
            let path = FieldPath::parse(&pattern.replace("[]", ".0")).unwrap();
            let field = path.pattern().rsplit('.').next().unwrap().to_owned();
            let fields = section_fields(&path.parent()).unwrap();
            assert!(fields.contains(&field.as_str()), "{pattern}");
        }
    }
}
