//! The one file that names the YAML library. serde_yaml 0.9 is unmaintained; a maintained
//! fork with the same API (serde_norway, serde_yml, …) replaces it by changing the `use`
//! below and the dependency, nothing else.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_yaml as backend;

use super::field_path::FieldPath;

/// A parsed YAML document, before it is read into the schema. `--set` overrides edit it.
pub(crate) type Tree = backend::Value;

/// Why YAML text could not be read into a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// The dotted path of the field being read when it failed (`robot.motor_mass`,
    /// `phases[1].duration`); `None` when the text is not YAML at all or the failure is at the top.
    pub field: Option<String>,
    /// 1-based line of the failure, when the YAML library knows it.
    pub line: Option<usize>,
    /// 1-based column of the failure, when the YAML library knows it.
    pub column: Option<usize>,
    /// The library's message, without the path and location it may repeat.
    pub message: String,
}

/// Reads YAML text into `T`, recording which field was being read when it fails.
///
/// Every YAML text loam reads goes through here: problem files and `--set` values.
pub fn load_yaml<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let deserializer = backend::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let field = FieldPath::from_serde(error.path());
        let inner = error.into_inner();
        let location = inner
            .location()
            .map(|location| (location.line(), location.column()));
        YamlError {
            field: (!field.is_root()).then(|| field.to_string()),
            line: location.map(|(line, _)| line),
            column: location.map(|(_, column)| column),
            message: bare_message(&inner.to_string(), location),
        }
    })
}

/// Reads an already parsed (and possibly overridden) tree into `T`. The tree carries no
/// positions, so the error is the field path and serde's message only.
pub(crate) fn from_tree<T: DeserializeOwned>(tree: Tree) -> Result<T, (FieldPath, String)> {
    serde_path_to_error::deserialize(tree).map_err(|error| {
        let field = FieldPath::from_serde(error.path());
        let message = bare_message(&error.into_inner().to_string(), None);
        (field, message)
    })
}

/// Writes `value` as a tree, for filling in defaults under a `--set` path.
pub(crate) fn to_tree<T: Serialize>(value: &T) -> Tree {
    // Only loam's own schema types pass through here and all of them serialize.
    backend::to_value(value).unwrap_or(Tree::Null)
}

/// serde_yaml's Display prefixes its own path (`robot: …`) and appends `at line L column C`;
/// the error report prints both itself.
fn bare_message(message: &str, location: Option<(usize, usize)>) -> String {
    let mut message = message.to_owned();
    if let Some((line, column)) = location {
        let suffix = format!(" at line {line} column {column}");
        if let Some(start) = message.find(&suffix) {
            message.replace_range(start..start + suffix.len(), "");
        }
    }
    let path_prefix = message.split_once(": ").filter(|(head, _)| {
        !head.is_empty()
            && head
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '-'))
    });
    match path_prefix {
        Some((_, rest)) => rest.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_keep_the_location_and_lose_the_repetition() {
        let error = load_yaml::<Tree>("robot:\n  motor_mass: [1\n").unwrap_err();
        assert_eq!(error.line, Some(3));
        assert!(
            !error.message.contains("at line 3 column"),
            "{}",
            error.message
        );
        assert!(error.message.contains("flow sequence"), "{}", error.message);
    }

    #[test]
    fn duplicate_keys_are_refused() {
        let error = load_yaml::<Tree>("robot:\n  rod_mass: 1\n  rod_mass: 2\n").unwrap_err();
        assert!(
            error.message.starts_with("duplicate entry"),
            "{}",
            error.message
        );
        assert_eq!(error.line, Some(2));
    }
}

/// `value` as YAML text.
pub(crate) fn to_text<T: Serialize>(value: &T) -> String {
    backend::to_string(value).unwrap_or_default()
}
