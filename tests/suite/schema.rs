//! The JSON Schemas of problem and robot files (`loam schema problem|robot`) against the
//! reader: every shipped file validates; a file with an unknown field or a value of the wrong
//! type does not, nor does a file in loam's former hopper schema; on thousands of small edits
//! of the shipped files the schema and serde agree on what is readable; the schema names the
//! terrain models and the problem's fields; docs/SCHEMA.md is what `loam schema --markdown`
//! writes.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::run::loam;
use jsonschema::Validator;
use loam::model::planar::description::RobotDescription;
use loam::problem::json_schema::{self, FileKind};
use loam::problem::planar::PlanarProblem;
use serde_json::{json, Value};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped `DIR/*.yaml`, sorted.
fn shipped(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("read {dir}/: {e}"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {dir}/*.yaml");
    files
}

/// A YAML file as the JSON value an editor validates.
fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator(schema: &Value) -> Validator {
    jsonschema::validator_for(schema).expect("the schema is a valid JSON Schema")
}

/// What the validator says is wrong, one line per error.
fn errors(validator: &Validator, value: &Value) -> String {
    validator
        .iter_errors(value)
        .map(|e| format!("  at {}: {e}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_shipped_problem_validates() {
    let problem = validator(&json_schema::problem_schema());
    for path in shipped("problems") {
        let value = read(&path);
        assert!(
            problem.is_valid(&value),
            "{} does not validate against `loam schema problem`:\n{}",
            path.display(),
            errors(&problem, &value)
        );
    }
}

#[test]
fn every_shipped_robot_validates() {
    let robot = validator(&json_schema::robot_schema());
    for path in shipped("robots") {
        let value = read(&path);
        assert!(
            robot.is_valid(&value),
            "{} does not validate against `loam schema robot`:\n{}",
            path.display(),
            errors(&robot, &value)
        );
    }
}

fn yaml(text: &str) -> Value {
    serde_yaml::from_str(text).expect("test YAML")
}

#[test]
fn unknown_fields_and_wrong_types_fail() {
    let problem = validator(&json_schema::problem_schema());
    let robot = validator(&json_schema::robot_schema());
    let good_problems = [
        "{}",
        "task: {apex_rise: 0.08, apex_of: rod}",
        "robot: {model: monopod}\nterrain: {model: spring, stiffness: 2.0e4}",
        "robot: {file: ../robots/two_link_hopper.yaml}\ninitial_guess: auto",
        "schedule: [{contacts: [foot], nodes: 31, duration: [0.01, 0.2]}, {contacts: []}]",
        "task: {start: {set: {z: 0.6}}}\nsolver: {mu_strategy: adaptive, print_level: 5, warm_start_init_point: true}",
    ];
    for text in good_problems {
        assert!(
            problem.is_valid(&yaml(text)),
            "{text}: {}",
            errors(&problem, &yaml(text))
        );
    }
    let bad_problems = [
        // Unknown fields, at the top, in a section, in a terrain variant, in a robot preset.
        "gravty: 9.81",
        "task: {apex_rize: 0.08}",
        "robot: {model: monopod}\nterrain: {model: spring, stifness: 2.0e4}",
        "robot: {model: monopod, leg_mas: 1.0}",
        // The former hopper schema's fields.
        "phases: [{domain: stance}, {domain: flight}]",
        "task: {apex_height: 0.08}",
        "robot: {motor_mass: 1.0}",
        "task: {start_position: free}",
        // Wrong types.
        "gravity: high",
        "task: {apex_rise: [0.08]}",
        "schedule: [{contacts: [foot], nodes: 2.5}]",
        "task: {start: {set: {z: free}}}",
        "schedule: [{contacts: foot}]",
        // Unknown names.
        "terrain: {model: mud}",
        "robot: {model: biped}",
        "task: {objective: speed}",
        "initial_guess: random",
        // The former hopper schema's guesses.
        "initial_guess: ballistic",
        "initial_guess: best",
    ];
    for text in bad_problems {
        assert!(
            !problem.is_valid(&yaml(text)),
            "the schema accepts {text:?}"
        );
        let read =
            loam::problem::parse_problem(text, Path::new("problems/test.yaml"), &[]).map(|_| ());
        assert!(read.is_err(), "the reader accepts {text:?}");
    }
    let bad_robots = [
        "colour: red",
        "bodies: [{name: base, mass: 1.0, inertia: 0.1, colur: red}]",
        "bodies: [{name: base, mass: heavy, inertia: 0.1}]",
        "bodies: [{name: base, inertia: 0.1}]",
        "actuators: [{name: a, joint: x, kind: thrust, limit: [-1, 1]}]",
        "contacts: [{name: foot, body: base, point: [0.0]}]",
        "standing: {hip: upright}",
    ];
    for text in bad_robots {
        assert!(!robot.is_valid(&yaml(text)), "the schema accepts {text:?}");
        let read =
            loam::problem::parse_as::<RobotDescription>(text, Path::new("robots/test.yaml"), &[]);
        assert!(read.is_err(), "the reader accepts {text:?}");
    }
}

/// Whether serde reads `value` into `T` as the reader does: from the parsed YAML tree (where
/// a null section reads as an empty one).
fn serde_reads<T: serde::de::DeserializeOwned>(value: &Value) -> bool {
    let tree = serde_yaml::to_value(value).expect("a JSON value is a YAML tree");
    serde_yaml::from_value::<T>(tree).is_ok()
}

/// Whether the reader reads `value` as a problem, with a named robot file spliced in as the
/// reader does (`model: file`; the file's own fields are not read here, so only the
/// problem's shape is judged).
fn serde_reads_problem(value: &Value) -> bool {
    let mut value = value.clone();
    if let Some(robot) = value.get_mut("robot").and_then(Value::as_object_mut) {
        if robot.get("file").is_some_and(Value::is_string) {
            robot.insert("model".into(), "file".into());
        }
    }
    serde_reads::<PlanarProblem>(&value)
}

fn serde_reads_robot(value: &Value) -> bool {
    serde_reads::<RobotDescription>(value)
}

/// Small edits of `value`: at every mapping an unknown key added and each key removed; at
/// every list an item added and one removed; every scalar replaced by text, a number and a
/// list.
fn edits(value: &Value) -> Vec<(String, Value)> {
    fn walk(root: &Value, node: &Value, pointer: String, out: &mut Vec<(String, Value)>) {
        let mut edit = |what: String, change: &dyn Fn(&mut Value)| {
            let mut edited = root.clone();
            change(
                edited
                    .pointer_mut(&pointer)
                    .expect("the pointer is in the value"),
            );
            out.push((what, edited));
        };
        match node {
            Value::Object(map) => {
                edit(format!("{pointer}: add not_a_field"), &|v| {
                    v["not_a_field"] = json!(1.0);
                });
                for key in map.keys() {
                    edit(format!("{pointer}: remove {key}"), &|v| {
                        v.as_object_mut().unwrap().remove(key);
                    });
                }
                for (key, child) in map {
                    walk(root, child, format!("{pointer}/{key}"), out);
                }
            }
            Value::Array(items) => {
                edit(format!("{pointer}: push"), &|v| {
                    let items = v.as_array_mut().unwrap();
                    let copy = items.last().cloned().unwrap_or(json!(1.0));
                    items.push(copy);
                });
                if !items.is_empty() {
                    edit(format!("{pointer}: pop"), &|v| {
                        v.as_array_mut().unwrap().pop();
                    });
                }
                for (i, child) in items.iter().enumerate() {
                    walk(root, child, format!("{pointer}/{i}"), out);
                }
            }
            _ => {
                for replacement in [json!("oops"), json!(2), json!([1.0])] {
                    if &replacement != node {
                        edit(format!("{pointer} = {replacement}"), &|v| {
                            *v = replacement.clone();
                        });
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(value, value, String::new(), &mut out);
    out
}

#[test]
fn schema_and_serde_agree_on_edits_of_every_shipped_file() {
    let cases = [
        (
            "problems",
            validator(&json_schema::problem_schema()),
            serde_reads_problem as fn(&Value) -> bool,
        ),
        (
            "robots",
            validator(&json_schema::robot_schema()),
            serde_reads_robot as fn(&Value) -> bool,
        ),
    ];
    let mut disagreements = Vec::new();
    let mut checked = 0;
    let mut refused = 0;
    for (dir, schema, serde_reads) in &cases {
        for path in shipped(dir) {
            let original = read(&path);
            assert!(
                serde_reads(&original),
                "{}: serde refuses it",
                path.display()
            );
            for (what, edited) in edits(&original) {
                checked += 1;
                let by_schema = schema.is_valid(&edited);
                let by_serde = serde_reads(&edited);
                refused += usize::from(!by_serde);
                if by_schema != by_serde {
                    disagreements.push(format!(
                        "{} {what}: schema {}, serde {}",
                        path.display(),
                        if by_schema { "accepts" } else { "refuses" },
                        if by_serde { "reads it" } else { "refuses" }
                    ));
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {checked} edits disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    // The edits do test something: most of them are refused.
    assert!(refused * 2 > checked, "{refused} of {checked} refused");
}

/// The `const` tags of a `oneOf` of variants, or the values of a string enum.
fn names(schema: &Value) -> BTreeSet<String> {
    schema["oneOf"]
        .as_array()
        .expect("a oneOf")
        .iter()
        .filter_map(|v| {
            v.pointer("/properties/model/const")
                .or_else(|| v.get("const"))
                // The robot file's variant: `model: file`, or a `file` and no `model`.
                .or_else(|| v.pointer("/anyOf/1/properties/model/const"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect()
}

#[test]
fn the_schema_names_the_terrain_models() {
    let schema = json_schema::problem_schema();
    let definitions = &schema["definitions"];
    let planar = names(&definitions["PlanarTerrainConfig"]);
    let expected: BTreeSet<String> = ["rigid", "added_mass", "wrench_space", "spring"]
        .map(String::from)
        .into();
    assert_eq!(planar, expected);
    // With their doc comments as descriptions.
    for variant in definitions["PlanarTerrainConfig"]["oneOf"]
        .as_array()
        .unwrap()
    {
        assert!(
            variant["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{variant}"
        );
    }
    let robots = names(&definitions["RobotConfig"]);
    let expected: BTreeSet<String> = ["planar_foot", "monopod", "quadruped", "file"]
        .map(String::from)
        .into();
    assert_eq!(robots, expected);
}

/// The problem schema is the one the reader reads: its top-level fields are
/// `PlanarProblem`'s, no others are allowed, and nothing of the former hopper schema is left
/// in it.
#[test]
fn the_problem_schema_is_the_planar_problem_s_only() {
    let schema = json_schema::problem_schema();
    for key in ["anyOf", "oneOf", "allOf"] {
        assert!(
            schema.get(key).is_none(),
            "the schema has a top-level {key}"
        );
    }
    assert_eq!(schema["additionalProperties"], json!(false));
    let described: BTreeSet<String> = schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect();
    // Every field the reader writes of a resolved problem (the optional ones included).
    let problem = loam::problem::parse_problem(
        "stage_one: {iterations: 5}\nstarts: 2\n",
        Path::new("problems/test.yaml"),
        &[],
    )
    .expect("a problem");
    let Value::Object(fields) = serde_json::to_value(&problem).unwrap() else {
        panic!("a problem serializes to a map");
    };
    let declared: BTreeSet<String> = fields.keys().cloned().collect();
    assert_eq!(described, declared);
    for former in [
        "phases",
        "domain",
        "apex_height",
        "start_position",
        "motor_mass",
    ] {
        let text = schema.to_string();
        assert!(
            !text.contains(&format!("\"{former}\"")),
            "the problem schema still names the former hopper schema's `{former}`"
        );
    }
    for definition in ["Problem", "Phase", "Domain", "TerrainModel", "HopperParams"] {
        assert!(
            schema["definitions"].get(definition).is_none(),
            "the problem schema still defines the former hopper schema's {definition}"
        );
    }
}

#[test]
fn docs_schema_md_is_up_to_date() {
    let path = root().join("docs/SCHEMA.md");
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = json_schema::markdown();
    if written != generated {
        let line = written
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(written.lines().count().min(generated.lines().count()));
        panic!(
            "docs/SCHEMA.md is stale (first difference at line {}): regenerate it with\n    \
             cargo run --release -- schema --markdown > docs/SCHEMA.md",
            line + 1
        );
    }
}

#[test]
fn loam_schema_prints_the_schemas_and_refuses_other_kinds() {
    let dir = root();
    for (kind, file_kind) in [("problem", FileKind::Problem), ("robot", FileKind::Robot)] {
        let out = loam(dir, &["schema", kind]);
        assert_eq!(out.code(), 0, "{}", out.dump());
        let printed: Value = serde_json::from_str(&out.stdout).expect("JSON on stdout");
        assert_eq!(printed, json_schema::schema(file_kind));
        assert_eq!(
            printed["$schema"], "http://json-schema.org/draft-07/schema#",
            "draft 7"
        );
    }
    let out = loam(dir, &["schema", "--markdown"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    assert_eq!(out.stdout, json_schema::markdown());
    let out = loam(dir, &["schema", "--markdown", "robot"]);
    assert_eq!(out.code(), 0, "{}", out.dump());
    assert_eq!(out.stdout, json_schema::markdown_of(FileKind::Robot));
    // A bad argument is exit 2, as every bad input is.
    for args in [&["schema", "scenario"][..], &["schema"][..]] {
        let out = loam(dir, args);
        assert_eq!(out.code(), 2, "{}", out.dump());
    }
}
