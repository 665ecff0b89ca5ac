//! The loader's one error type: which file, where in it, which field, and what to write instead.

use std::fmt;
use std::path::PathBuf;

/// Where the offending value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueSource {
    /// The problem file (or its defaults, when the file leaves the field out).
    File,
    /// A `--set` override; holds the override as the user wrote it, e.g. `robot.motor_mass=-1`.
    Override(String),
}

/// A problem file that cannot be used, and why.
///
/// Displays as `FILE:LINE:COLUMN: FIELD: MESSAGE` (parts that are not known are left out),
/// or `FILE: --set PATH=VALUE: FIELD: MESSAGE` when the value came from an override.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ProblemError {
    /// The problem file.
    pub file: PathBuf,
    /// 1-based line of the offending text, when the file holds it.
    pub line: Option<usize>,
    /// 1-based column of the offending text, when known.
    pub column: Option<usize>,
    /// Dotted path of the offending field, e.g. `robot.motor_mass` or `phases[1].duration`.
    pub field: Option<String>,
    /// What is wrong and what is accepted.
    pub message: String,
    /// Whether the value came from the file or from a `--set`.
    pub source_of_value: ValueSource,
}

impl fmt::Display for ProblemError {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "{}", self.file.display())?;
        match &self.source_of_value {
            ValueSource::Override(text) => write!(formatter, ": --set {text}")?,
            ValueSource::File => {
                if let Some(line) = self.line {
                    write!(formatter, ":{line}")?;
                    if let Some(column) = self.column {
                        write!(formatter, ":{column}")?;
                    }
                }
            }
        }
        if let Some(field) = &self.field {
            write!(formatter, ": {field}")?;
        }
        write!(formatter, ": {}", self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(
        line: Option<usize>,
        column: Option<usize>,
        field: Option<&str>,
        source: ValueSource,
    ) -> ProblemError {
        ProblemError {
            file: PathBuf::from("problems/hop.yaml"),
            line,
            column,
            field: field.map(str::to_owned),
            message: "must be > 0 kg, got -1".to_owned(),
            source_of_value: source,
        }
    }

    #[test]
    fn display_leaves_out_what_is_unknown() {
        let full = error(
            Some(4),
            Some(3),
            Some("robot.motor_mass"),
            ValueSource::File,
        );
        assert_eq!(
            full.to_string(),
            "problems/hop.yaml:4:3: robot.motor_mass: must be > 0 kg, got -1"
        );
        let bare = error(None, None, None, ValueSource::File);
        assert_eq!(
            bare.to_string(),
            "problems/hop.yaml: must be > 0 kg, got -1"
        );
        let line_only = error(Some(4), None, Some("robot.motor_mass"), ValueSource::File);
        assert_eq!(
            line_only.to_string(),
            "problems/hop.yaml:4: robot.motor_mass: must be > 0 kg, got -1"
        );
    }

    #[test]
    fn display_names_the_override() {
        let from_set = error(
            None,
            None,
            Some("robot.motor_mass"),
            ValueSource::Override("robot.motor_mass=-1".into()),
        );
        assert_eq!(
            from_set.to_string(),
            "problems/hop.yaml: --set robot.motor_mass=-1: robot.motor_mass: must be > 0 kg, got -1"
        );
    }
}
