//! Robot files (`robots/*.yaml`, [`RobotDescription`]) read with the problem files' machinery:
//! errors name the robot file, its line and the field; and a problem's
//! `robot: {file: robots/NAME.yaml}` is read in before the problem's own `--set` overrides, so
//! that `--set robot.description.bodies.1.mass=2` edits the robot.
//!
//! A problem that names a robot file holds, once read, `robot: {model: file, file: PATH,
//! description: {...}}`: the whole description, so that the resolved problem in
//! `solution.json` describes the robot without the file. `description` keys written in the
//! problem itself override the file's, field by field.

use std::path::{Path, PathBuf};

use super::validate::Violation;
use super::yaml::Tree;
use super::{parse_as, read_as, ProblemError, Schema, ValueSource};
use crate::model::planar::description::RobotDescription;

impl Schema for RobotDescription {
    fn resolve(&mut self) {}

    fn validate(&self) -> Result<(), Vec<Violation>> {
        let bad: Vec<Violation> = self
            .violations()
            .into_iter()
            .map(|(field, message)| Violation { field, message })
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
    }

    fn set_default_name(&mut self, stem: &str) {
        if self.name.trim().is_empty() {
            self.name = stem.to_owned();
        }
    }
}

/// Reads and checks the robot file at `path`, with `--set` overrides of its own fields
/// (`bodies.1.mass=2`, as `loam robot info --set` takes them).
#[allow(clippy::result_large_err)]
pub fn load_robot(path: &Path, overrides: &[String]) -> Result<RobotDescription, ProblemError> {
    let text = read_as(path, "robot file")?;
    parse_as::<RobotDescription>(&text, path, overrides)
}

/// The robot file a problem's tree names (`robot.file`, or a `--set robot.file=` override),
/// as written.
fn named_file(tree: &Tree, overrides: &[String]) -> Option<String> {
    let from_override = overrides
        .iter()
        .rev()
        .find_map(|o| o.strip_prefix("robot.file=").map(|v| v.trim().to_owned()));
    from_override.or_else(|| {
        tree.as_mapping()?
            .get("robot")?
            .as_mapping()?
            .get("file")?
            .as_str()
            .map(str::to_owned)
    })
}

/// Where a robot file named in the problem at `origin` lies: relative to the problem's folder.
pub fn robot_path(origin: &Path, file: &str) -> PathBuf {
    let file = Path::new(file);
    if file.is_absolute() {
        file.to_owned()
    } else {
        origin.parent().unwrap_or(Path::new("")).join(file)
    }
}

/// Reads the robot file a problem names into its tree (see the module's doc). Errors in the
/// robot file name the robot file.
#[allow(clippy::result_large_err)]
pub(crate) fn splice(
    tree: &mut Tree,
    origin: &Path,
    overrides: &[String],
) -> Result<(), ProblemError> {
    let Some(file) = named_file(tree, overrides) else {
        return Ok(());
    };
    let path = robot_path(origin, &file);
    let description = load_robot(&path, &[]).map_err(|mut error| {
        if error.line.is_none() && error.field.is_none() {
            // Not readable at all: say which problem field named it.
            error.message = format!(
                "{} (named by robot.file in {})",
                error.message,
                origin.display()
            );
            error.source_of_value = ValueSource::File;
        }
        error
    })?;
    let mut robot_tree = super::yaml::to_tree(&description);
    let Some(root) = tree.as_mapping_mut() else {
        return Ok(());
    };
    let robot = root
        .entry(Tree::from("robot"))
        .or_insert_with(|| Tree::Mapping(Default::default()));
    if let Some(robot) = robot.as_mapping_mut() {
        if let Some(written) = robot.remove("description") {
            merge(&mut robot_tree, written);
        }
        robot.insert(Tree::from("model"), Tree::from("file"));
        robot.insert(Tree::from("file"), Tree::from(file));
        robot.insert(Tree::from("description"), robot_tree);
    }
    Ok(())
}

/// `over`'s values written over `base`'s, mapping by mapping.
fn merge(base: &mut Tree, over: Tree) {
    match (base, over) {
        (Tree::Mapping(base), Tree::Mapping(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, over) => *base = over,
    }
}

/// A robot description as the text of a robot file, pairs such as `com` and `limit` written
/// on one line (`com: [0.0, -0.15]`).
pub fn robot_yaml(description: &RobotDescription) -> String {
    let text = super::yaml::to_text(description);
    let lines: Vec<&str> = text.lines().collect();
    /// `- value` at exactly `indent` columns: an item of a sequence of plain values.
    fn item(line: &str, indent: usize) -> Option<&str> {
        let (lead, rest) = line.split_at_checked(indent)?;
        let value = rest.strip_prefix("- ")?;
        (lead.trim().is_empty() && !value.contains(':') && !value.starts_with("- "))
            .then_some(value)
    }
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let indent = line.len() - line.trim_start().len();
        if line.ends_with(':') {
            let items: Vec<&str> = lines[i + 1..]
                .iter()
                .map_while(|l| item(l, indent))
                .collect();
            if let [a, b] = items[..] {
                out.push_str(&format!("{line} [{a}, {b}]\n"));
                i += 3;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
        i += 1;
    }
    out
}
