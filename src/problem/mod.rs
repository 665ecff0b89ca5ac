//! Problem files: the YAML schema, its defaults and presets, validation, `--set` overrides,
//! and errors that name the file, line, field and what would be accepted.
//!
//! Loading goes: text → YAML tree ([`load_yaml`]) → `--set` overrides applied to the tree →
//! [`planar::PlanarProblem`] (serde, unknown fields refused) → [`Schema::resolve`] → [`Schema::validate`] →
//! name from the file stem. The first error stops it; errors found in the tree are placed back
//! in the text by serde_yaml's own position or, failing that, by the locator in `locate.rs`.
//! This module never solves, simulates or prints.

mod diagnose;
mod error;
pub(crate) mod field_path;
mod fields;
pub mod json_schema;
pub(crate) mod locate;
mod models;
mod overrides;
pub mod planar;
mod presets;
mod robot_file;
pub mod scenario;
mod schema;
mod validate;
mod yaml;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use error::{ProblemError, ValueSource};
pub use presets::{Medium, MediumPreset};
pub use robot_file::{load_robot, robot_path, robot_yaml};
pub use schema::{
    default_solver_options, InitialGuess, MeshRefinement, OptionValue, Scheme, SolverOptions,
    StageOne, Strategy, Transcription,
};
pub use validate::Violation;
pub use yaml::{load_yaml, YamlError};

use diagnose::explain;
use field_path::{FieldPath, Segment};
use locate::locate;
use overrides::{apply, parse_override, Override};
use yaml::{from_tree, to_tree, Tree};

/// Reads the problem file at `path` (or the problem a run folder or its `solution.json`
/// solved), with the `--set` overrides. A file in loam's former hopper schema (`phases:`,
/// `task.apex_height`, no robot file) is refused with the way to write it now.
#[allow(clippy::result_large_err)]
pub fn load_any(path: &Path, overrides: &[String]) -> Result<planar::PlanarProblem, ProblemError> {
    let text = if path.is_dir() || path.extension().is_some_and(|e| e == "json") {
        solved_problem(path)?
    } else {
        read(path)?
    };
    parse_problem(&text, path, overrides)
}

/// Reads problem text that came from `origin` (used in errors, for the default name and as
/// the folder relative paths are read from), with the `--set` overrides: see [`load_any`].
#[allow(clippy::result_large_err)]
pub fn parse_problem(
    text: &str,
    origin: &Path,
    overrides: &[String],
) -> Result<planar::PlanarProblem, ProblemError> {
    refuse_former_hopper_schema(text, origin)?;
    parse_as(text, origin, overrides)
}

/// The hopper was once planned from a schema of its own (`phases:` of `domain: stance |
/// flight`, `task.apex_height`, the robot's parameters under `robot:`); it is now the robot
/// file `robots/hopper.yaml` and goes through the one planner. Such a file gets an error
/// that says how to write it now, rather than serde's "unknown field `phases`".
#[allow(clippy::result_large_err)]
fn refuse_former_hopper_schema(text: &str, origin: &Path) -> Result<(), ProblemError> {
    let Ok(tree) = load_yaml::<Tree>(text) else {
        return Ok(());
    };
    let Some(map) = tree.as_mapping() else {
        return Ok(());
    };
    if !map.contains_key("phases") {
        return Ok(());
    }
    let report = Report {
        origin,
        text,
        changes: Vec::new(),
    };
    Err(report.violation_error(Violation {
        field: "phases".into(),
        message: "this is loam's former hopper schema (`phases:` with `domain: stance | \
                  flight`, `task.apex_height`); the hopper is now the robot file \
                  robots/hopper.yaml, planned like every robot: write `robot: {file: \
                  ../robots/hopper.yaml}` (relative to the problem file), a `schedule:` of `{contacts: [foot], ...}` (stance) and \
                  `{contacts: [], ...}` (flight) phases and `task: {apex_rise: 0.06, apex_of: \
                  rod, objective: inputs_squared}` (the shipped problems/hopper_granular.yaml is \
                  the paper's jump written so)"
            .into(),
    }))
}

/// SHA-256 of `bytes` in hex: how a run records the data files it read.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The problem a run solved, as problem text: `solution.json`'s `problem` (a run folder's, or
/// the file itself), which is the whole resolved problem; a planar robot's description is
/// inline there, so its robot file is not read again.
#[allow(clippy::result_large_err)]
fn solved_problem(path: &Path) -> Result<String, ProblemError> {
    let file = if path.is_dir() {
        path.join("solution.json")
    } else {
        path.to_owned()
    };
    let text = read_as(&file, "solution.json")?;
    let fail = |message: String| ProblemError {
        file: file.clone(),
        line: None,
        column: None,
        field: None,
        message,
        source_of_value: ValueSource::File,
    };
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| fail(format!("not a solution.json that `loam solve` wrote: {e}")))?;
    let mut problem = json
        .get("problem")
        .cloned()
        .filter(serde_json::Value::is_object)
        .ok_or_else(|| {
            fail("has no `problem`: accepted, a solution.json that `loam solve` wrote".into())
        })?;
    if let Some(robot) = problem.get_mut("robot").and_then(|r| r.as_object_mut()) {
        if robot.contains_key("description") {
            robot.remove("file");
        }
    }
    // A data file is read where the run read it (its path is relative to the problem file,
    // which is not here), and only if it is still the same file.
    let recorded = json
        .pointer("/provenance/data_files")
        .and_then(|d| d.as_array())
        .cloned()
        .unwrap_or_default();
    for data in recorded {
        let (Some("terrain.data"), Some(at), Some(sha)) = (
            data.get("field").and_then(|v| v.as_str()),
            data.get("path").and_then(|v| v.as_str()),
            data.get("sha256").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let now = std::fs::read(at)
            .map(|bytes| sha256_hex(&bytes))
            .map_err(|e| {
                fail(format!(
                    "terrain.data: the run read {at}, which cannot be read now: {e}"
                ))
            })?;
        if now != sha {
            return Err(fail(format!(
                "terrain.data: {at} changed since the run (SHA-256 {sha} then, {now} now); \
                 solve the problem file instead"
            )));
        }
        if let Some(terrain) = problem.get_mut("terrain").and_then(|t| t.as_object_mut()) {
            terrain.insert("data".into(), serde_json::Value::String(at.into()));
        }
    }
    Ok(serde_json::to_string_pretty(&problem).expect("JSON serializes"))
}

#[allow(clippy::result_large_err)]
fn read(path: &Path) -> Result<String, ProblemError> {
    read_as(path, "problem file")
}

/// The text of the file at `path`; `what` names it in the error ("problem file").
#[allow(clippy::result_large_err)]
fn read_as(path: &Path, what: &str) -> Result<String, ProblemError> {
    std::fs::read_to_string(path).map_err(|error| ProblemError {
        file: path.to_owned(),
        line: None,
        column: None,
        field: None,
        message: format!("cannot read the {what}: {error}"),
        source_of_value: ValueSource::File,
    })
}

/// A file's schema: a problem ([`planar::PlanarProblem`]) or a robot file
/// (`RobotDescription`). Both go through the same reading, overriding, validation and error
/// placement.
pub trait Schema: serde::Serialize + serde::de::DeserializeOwned + Default {
    /// Fills every implied value.
    fn resolve(&mut self);
    fn validate(&self) -> Result<(), Vec<Violation>>;
    /// Names the problem after its file's stem when the file gives no name.
    fn set_default_name(&mut self, stem: &str);
    /// Edits the tree read from the file at `origin` before the `--set` overrides apply (a
    /// planar problem reads its robot file in here).
    #[allow(clippy::result_large_err)]
    fn prepare(
        _tree: &mut Tree,
        _origin: &Path,
        _overrides: &[String],
    ) -> Result<(), ProblemError> {
        Ok(())
    }
}

/// Reads a problem in schema `T` (a problem or a robot file) from `text` that came from
/// `origin`, with the `--set` overrides applied in order: validated and resolved, every
/// implied value filled in and `name` defaulting to `origin`'s file stem.
#[allow(clippy::result_large_err)]
pub fn parse_as<T: Schema>(
    text: &str,
    origin: &Path,
    overrides: &[String],
) -> Result<T, ProblemError> {
    let mut report = Report {
        origin,
        text,
        changes: Vec::new(),
    };
    let mut tree: Tree = load_yaml(text).map_err(|error| ProblemError {
        line: error.line,
        column: error.column,
        field: error.field,
        ..report.file_error(
            None,
            format!(
                "not valid YAML: {}{}",
                error.message,
                tab_hint(text, error.line)
            ),
        )
    })?;
    if tree.is_null() {
        // An empty file, or one of comments only, is a mistake (the wrong file, or one not yet
        // written), not a request for every default.
        return Err(report.file_error(
            None,
            "the file is empty (or holds only comments): write at least the sections that \
             differ from the defaults (the shipped problems/ and robots/ files are examples)"
                .into(),
        ));
    }
    T::prepare(&mut tree, origin, overrides)?;
    for set in overrides {
        let change = parse_override(set)
            .map_err(|(field, message)| report.override_error(set, field, message))?;
        report.changes.push(change);
    }
    if tree.is_mapping() {
        let defaults = to_tree(&T::default());
        for change in &report.changes {
            apply(&mut tree, change, &defaults)
                .map_err(|(field, message)| report.override_error(&change.text, field, message))?;
        }
    }
    let mut problem: T =
        from_tree(tree).map_err(|(field, message)| report.read_error::<T>(field, &message))?;
    problem.resolve();
    // The schema's own rules first (their messages say what is accepted), then NaN in any
    // field they do not check.
    let violations = match problem.validate() {
        Err(found) => found,
        Ok(()) => not_numbers(&to_tree(&problem)),
    };
    if !violations.is_empty() {
        let errors = violations
            .into_iter()
            .map(|violation| report.violation_error(violation));
        let first = errors.min_by_key(|error| (error.line.is_none(), error.line, error.column));
        return Err(first.expect("validate returns Err only with violations"));
    }
    let stem = origin
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or("problem");
    problem.set_default_name(stem);
    Ok(problem)
}

/// Every NaN in a read problem, by field: whatever the field, NaN is never a value (and
/// `f64::max` and comparisons would let it through the rules below silently).
fn not_numbers(tree: &Tree) -> Vec<Violation> {
    fn walk(tree: &Tree, path: String, found: &mut Vec<Violation>) {
        match tree {
            Tree::Number(n) if n.as_f64().is_some_and(f64::is_nan) => found.push(Violation {
                field: path,
                message: "must be a number, got NaN (.nan)".into(),
            }),
            Tree::Mapping(map) => {
                for (key, value) in map {
                    let key = match key {
                        Tree::String(s) => s.clone(),
                        other => other.as_i64().map(|n| n.to_string()).unwrap_or_default(),
                    };
                    let next = if path.is_empty() {
                        key
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(value, next, found);
                }
            }
            Tree::Sequence(items) => {
                for (i, value) in items.iter().enumerate() {
                    walk(value, format!("{path}[{i}]"), found);
                }
            }
            Tree::Tagged(tagged) => walk(&tagged.value, path, found),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(tree, String::new(), &mut found);
    found
}

/// libyaml says "found character that cannot start any token" for a tab in the indentation.
fn tab_hint(text: &str, line: Option<usize>) -> &'static str {
    let indented_with_tab = |number: usize| {
        let line = text.lines().nth(number.saturating_sub(1)).unwrap_or("");
        line[..line.len() - line.trim_start().len()].contains('\t')
    };
    if line.is_some_and(indented_with_tab) {
        " (YAML indents with spaces; this line is indented with a tab)"
    } else {
        ""
    }
}

/// What an error report needs to place a complaint: the file, its text and the overrides.
struct Report<'a> {
    origin: &'a Path,
    text: &'a str,
    changes: Vec<Override>,
}

impl Report<'_> {
    fn file_error(&self, field: Option<&FieldPath>, message: String) -> ProblemError {
        ProblemError {
            file: self.origin.to_owned(),
            line: None,
            column: None,
            field: field
                .filter(|field| !field.is_root())
                .map(FieldPath::to_string),
            message,
            source_of_value: ValueSource::File,
        }
    }

    fn override_error(
        &self,
        text: &str,
        field: Option<FieldPath>,
        message: String,
    ) -> ProblemError {
        ProblemError {
            source_of_value: ValueSource::Override(text.to_owned()),
            ..self.file_error(field.as_ref(), message)
        }
    }

    /// The last override that set `field` or something inside or around it.
    fn override_of(&self, field: &FieldPath) -> Option<&Override> {
        if field.is_root() {
            return None;
        }
        self.changes
            .iter()
            .rev()
            .find(|change| change.path.overlaps(field))
    }

    /// An error from reading the tree into the schema.
    fn read_error<T: Schema>(&self, field: FieldPath, message: &str) -> ProblemError {
        let mut message = explain(&field, message);
        if let Some(change) = self.override_of(&field) {
            let sets_a_model = matches!(
                change.path.segments().last(),
                Some(Segment::Key(last)) if last == "model"
            );
            if sets_a_model && message.starts_with("unknown field") {
                let section = change.path.parent();
                message.push_str(&format!(
                    " (the fields `{section}` accepts depend on its `model`: to change the \
                     model, replace the section whole, e.g. --set '{section}={{model: {}}}')",
                    change
                        .text
                        .split_once('=')
                        .map_or("", |(_, value)| value.trim())
                ));
            }
            return self.override_error(&change.text, Some(field), message);
        }
        // serde_yaml reading the text itself knows the exact position of the same complaint;
        // the locator is the fallback when overrides make the two readings differ.
        let position = match load_yaml::<T>(self.text) {
            Err(error)
                if error.field.as_deref().unwrap_or("") == field.to_string()
                    && error.line.is_some() =>
            {
                Some((error.line, error.column))
            }
            _ => locate(self.text, &field)
                .map(|location| (Some(location.line), Some(location.column))),
        };
        let (line, column) = position.unwrap_or((None, None));
        ProblemError {
            line,
            column,
            ..self.file_error(Some(&field), message)
        }
    }

    /// An error from [`Schema::validate`].
    fn violation_error(&self, violation: Violation) -> ProblemError {
        let field = FieldPath::parse(&violation.field).unwrap_or_default();
        if let Some(change) = self.override_of(&field) {
            return self.override_error(&change.text, Some(field), violation.message);
        }
        match locate(self.text, &field) {
            Some(location) => ProblemError {
                line: Some(location.line),
                column: Some(location.column),
                ..self.file_error(Some(&field), violation.message)
            },
            None => {
                let message = format!(
                    "{} (the file does not set it, so this is the default)",
                    violation.message
                );
                ProblemError {
                    field: Some(violation.field),
                    ..self.file_error(None, message)
                }
            }
        }
    }
}

/// The 1-based line where `field` (dotted, e.g. `terrain.data`) is written in a problem
/// file's `text`, for errors found after reading it; `None` where the field took its default.
pub fn line_of(text: &str, field: &str) -> Option<usize> {
    locate(text, &FieldPath::parse(field)?).map(|l| l.line)
}
