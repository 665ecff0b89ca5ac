//! JSON Schemas (draft 7) of the two file formats a user writes, derived by `schemars` from
//! the serde types the files are read into, so that they accept what the reader accepts:
//!
//! - a problem file ([`problem_schema`]): [`PlanarProblem`], the one problem schema (the
//!   hopper is the robot file `robots/hopper.yaml`; a file in loam's former hopper schema,
//!   `phases:` and `task.apex_height`, is refused by the reader and by this schema);
//! - a robot file ([`robot_schema`]): [`RobotDescription`].
//!
//! Doc comments become descriptions; serde's `default`, `deny_unknown_fields`, `tag` and
//! `rename_all` become `default`, `additionalProperties: false`, the tag's `const` and the
//! names. What the derive cannot see is added here: `initial_guess: auto` (a serde alias),
//! `robot: {file: …}` without `model: file` (the reader adds it), and a section written empty
//! (YAML's null, read as an empty one). tests/suite/schema.rs holds the schemas to serde on
//! thousands of edits of the shipped files. The rules that are not about shape (a mass > 0,
//! a contact the robot has) stay with the reader's validation: a file the schema accepts may
//! still be refused, naming the field and why.
//!
//! Draft 7 rather than 2020-12: it is the draft editors' YAML and JSON language servers
//! support best. `loam schema problem|robot` prints them; [`markdown`] renders the field
//! reference in docs/SCHEMA.md.

mod markdown;

use schemars::generate::SchemaSettings;
use schemars::transform::{RecursiveTransform, RestrictFormats};
use schemars::Schema;
use serde_json::{json, Value};

use super::planar::PlanarProblem;
use crate::model::planar::description::RobotDescription;

pub use markdown::{markdown, markdown_of};

/// The two file formats with a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A problem file (`problems/*.yaml`).
    Problem,
    /// A robot file (`robots/*.yaml`).
    Robot,
}

/// The JSON Schema of a file format.
pub fn schema(kind: FileKind) -> Value {
    match kind {
        FileKind::Problem => problem_schema(),
        FileKind::Robot => robot_schema(),
    }
}

/// Draft 7, descriptions without rustdoc's escapes, only the standard formats.
fn settings() -> SchemaSettings {
    SchemaSettings::draft07()
        .with_transform(RecursiveTransform(plain_description))
        .with_transform(RestrictFormats::default())
}

/// The schema of a problem file.
pub fn problem_schema() -> Value {
    let mut schema = settings()
        .into_generator()
        .into_root_schema_for::<PlanarProblem>();
    schema.insert("title".into(), "loam problem file".into());
    schema.insert(
        "description".into(),
        "A loam problem file: a robot (a preset named by robot.model, or a robot file) on a \
         terrain, a schedule of contact phases and a task."
            .into(),
    );
    let mut schema = schema.to_value();
    empty_sections(&mut schema);
    // `ballistic` and `best` are the former hopper schema's guesses (the type is shared with
    // it until it is removed): the reader refuses them in a problem file.
    if let Some(guesses) = schema
        .pointer_mut("/definitions/InitialGuess/oneOf")
        .and_then(Value::as_array_mut)
    {
        guesses.retain(|guess| {
            !matches!(
                guess.get("const").and_then(Value::as_str),
                Some("ballistic" | "best")
            )
        });
    }
    schema
}

/// The schema of a robot file.
pub fn robot_schema() -> Value {
    let mut schema = settings()
        .into_generator()
        .into_root_schema_for::<RobotDescription>();
    schema.insert("title".into(), "loam robot file".into());
    let mut schema = schema.to_value();
    empty_sections(&mut schema);
    schema
}

/// A section, list or map written empty (`robot:` with every line under it commented out)
/// is YAML's null, which the reader takes for an empty one (serde_yaml reads a tree's null as
/// an empty mapping or sequence) — except under a choice tagged by `model` (`terrain`, a
/// planar `robot`), which serde reads through its own buffer, where null is refused. So
/// null is added to the sections, lists and maps of every object reached without passing
/// through a tagged choice.
fn empty_sections(schema: &mut Value) {
    let definitions = schema
        .get("definitions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut reached = std::collections::BTreeSet::new();
    untagged_definitions(schema, &definitions, &mut reached);
    /// Through `$ref` and a lone `allOf`.
    fn resolve<'a>(
        definitions: &'a serde_json::Map<String, Value>,
        schema: &'a Value,
    ) -> &'a Value {
        if let Some(target) = reference(schema).and_then(|name| definitions.get(name)) {
            return resolve(definitions, target);
        }
        match schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([only]) => resolve(definitions, only),
            _ => schema,
        }
    }
    let nullable = |object: &mut Value| {
        let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) else {
            return;
        };
        for property in properties.values_mut() {
            let target = resolve(&definitions, property).clone();
            let kind = target.get("type").and_then(Value::as_str);
            let empty_reads = match kind {
                // A struct whose every field has a default (a null reads as `{}`).
                Some("object") if target.get("properties").is_some() => {
                    target.get("required").is_none() && target.get("oneOf").is_none()
                }
                // A map.
                Some("object") => target
                    .get("additionalProperties")
                    .is_some_and(Value::is_object),
                // A list, not a pair (`[f64; 2]` refuses an empty sequence).
                Some("array") => target.get("maxItems").is_none(),
                _ => false,
            };
            if !empty_reads {
                continue;
            }
            let Some(fields) = property.as_object_mut() else {
                continue;
            };
            if let Some(Value::String(kind)) = fields.get("type").cloned() {
                fields.insert("type".into(), json!([kind, "null"]));
            } else if let Some(all) = fields.remove("allOf") {
                let mut any = all.as_array().cloned().unwrap_or_default();
                any.push(json!({"type": "null"}));
                fields.insert("anyOf".into(), Value::Array(any));
            } else if let Some(reference) = fields.remove("$ref") {
                fields.insert(
                    "anyOf".into(),
                    json!([{"$ref": reference}, {"type": "null"}]),
                );
            }
        }
    };
    if let Some(all) = schema.get_mut("definitions").and_then(Value::as_object_mut) {
        for (name, definition) in all.iter_mut() {
            if reached.contains(name) {
                nullable(definition);
            }
        }
    }
    nullable(schema);
}

/// The definitions `schema` reaches without passing through a choice tagged by `model` (a
/// `oneOf` of objects).
fn untagged_definitions(
    schema: &Value,
    definitions: &serde_json::Map<String, Value>,
    reached: &mut std::collections::BTreeSet<String>,
) {
    match schema {
        Value::Object(object) => {
            if let Some(name) = reference(schema) {
                if reached.insert(name.to_owned()) {
                    if let Some(target) = definitions.get(name) {
                        untagged_definitions(target, definitions, reached);
                    }
                }
                return;
            }
            let tagged = object
                .get("oneOf")
                .and_then(Value::as_array)
                .is_some_and(|variants| variants.iter().any(|v| v.get("properties").is_some()));
            for (key, value) in object {
                if key == "definitions" || (tagged && key == "oneOf") {
                    continue;
                }
                untagged_definitions(value, definitions, reached);
            }
        }
        Value::Array(items) => {
            for item in items {
                untagged_definitions(item, definitions, reached);
            }
        }
        _ => {}
    }
}

fn reference(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/definitions/"))
}

/// Doc comments as a schema's reader sees them: rustdoc's escapes of `[` and `]` (`\[`, a
/// link otherwise) dropped, and the lines of a paragraph joined (list items keep their line).
fn plain_description(schema: &mut Schema) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = plain(text);
    }
}

fn plain(text: &str) -> String {
    let text = text.replace("\\[", "[").replace("\\]", "]");
    // Intra-doc links ([`Problem::resolve`]) as code.
    let text = text.replace("[`", "`").replace("`]", "`");
    let paragraphs = text.split("\n\n").map(|paragraph| {
        let mut joined = String::new();
        for line in paragraph.lines() {
            let line = line.trim();
            if !joined.is_empty() {
                joined.push(if line.starts_with("- ") { '\n' } else { ' ' });
            }
            joined.push_str(line);
        }
        joined
    });
    paragraphs.collect::<Vec<_>>().join("\n\n")
}

/// `initial_guess: auto` is read as `rest` (a serde alias, which schemars does not see).
pub(crate) fn also_auto(schema: &mut Schema) {
    if let Some(name) = schema.remove("const") {
        schema.insert("enum".into(), json!([name, "auto"]));
    }
}

/// The robot-file variant of a planar problem's `robot`: `robot: {file: PATH}` needs no
/// `model` (the reader sets `model: file` when it reads the file in; it sets it whatever
/// `model` said), and `model: file` without a file is read too (and refused by validation
/// for its missing name).
pub(crate) fn robot_file_variant(schema: &mut Schema) {
    let Some(variants) = schema.get_mut("oneOf").and_then(Value::as_array_mut) else {
        return;
    };
    let Some(file) = variants
        .iter_mut()
        .find(|v| v.pointer("/properties/model/const") == Some(&json!("file")))
    else {
        return;
    };
    let Some(object) = file.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| name != "model");
        if required.is_empty() {
            object.remove("required");
        }
    }
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "model".into(),
            json!({
                "description": "`file`; may be left out when `file` names the robot file.",
                "type": "string"
            }),
        );
        if let Some(path) = properties.get_mut("file").and_then(Value::as_object_mut) {
            path.insert("type".into(), "string".into());
            path.remove("default");
        }
    }
    object.insert(
        "anyOf".into(),
        json!([
            {"required": ["file"]},
            {"required": ["model"], "properties": {"model": {"const": "file"}}}
        ]),
    );
}
