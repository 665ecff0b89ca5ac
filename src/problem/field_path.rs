//! Dotted field paths such as `robot.motor_mass` or `phases[1].duration`: how errors name a
//! field, how `--set` addresses one, and how the locator finds one in the text.

use std::fmt;

/// One step of a [`FieldPath`]: a map key or a list index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// A path from the top of the problem file to one field; empty for the file itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldPath(pub(crate) Vec<Segment>);

impl FieldPath {
    /// Reads the path of a `--set` override: keys separated by dots, list indices either as a
    /// dotted number (`phases.1.nodes`) or in brackets (`phases[1].nodes`). `None` if malformed.
    pub(crate) fn parse(text: &str) -> Option<FieldPath> {
        let mut segments = Vec::new();
        for part in text.split('.') {
            let (key, mut brackets) = match part.find('[') {
                Some(open) => (&part[..open], &part[open..]),
                None => (part, ""),
            };
            if key.is_empty() || key.contains(']') {
                return None;
            }
            if key.bytes().all(|byte| byte.is_ascii_digit()) {
                segments.push(Segment::Index(key.parse().ok()?));
            } else {
                segments.push(Segment::Key(key.to_owned()));
            }
            while !brackets.is_empty() {
                let close = brackets.find(']')?;
                let index = brackets.get(1..close)?.parse().ok()?;
                segments.push(Segment::Index(index));
                brackets = &brackets[close + 1..];
                if !brackets.is_empty() && !brackets.starts_with('[') {
                    return None;
                }
            }
        }
        Some(FieldPath(segments))
    }

    /// The path serde_path_to_error recorded for a deserialization error.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path) -> FieldPath {
        use serde_path_to_error::Segment as Serde;
        // A segment serde could not name (a non-text key, a parse that broke off) ends what
        // can be said about the path.
        let segments = path
            .iter()
            .map_while(|segment| match segment {
                Serde::Seq { index } => Some(Segment::Index(*index)),
                Serde::Map { key } => Some(Segment::Key(key.clone())),
                Serde::Enum { variant } => Some(Segment::Key(variant.clone())),
                Serde::Unknown => None,
            })
            .collect();
        FieldPath(segments)
    }

    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }

    pub(crate) fn child(&self, key: &str) -> FieldPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        FieldPath(segments)
    }

    pub(crate) fn index(&self, index: usize) -> FieldPath {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        FieldPath(segments)
    }

    /// The path without its last segment (the root stays the root).
    pub(crate) fn parent(&self) -> FieldPath {
        let mut segments = self.0.clone();
        segments.pop();
        FieldPath(segments)
    }

    /// The first `length` segments.
    pub(crate) fn prefix(&self, length: usize) -> FieldPath {
        FieldPath(self.0[..length.min(self.0.len())].to_vec())
    }

    /// Whether one path lies inside the other (or they are equal): a value set at one of them
    /// is then part of the value at the other.
    pub(crate) fn overlaps(&self, other: &FieldPath) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }

    /// The path with every list index written `[]`, e.g. `phases[].duration`: what the field
    /// catalogue is keyed by.
    pub(crate) fn pattern(&self) -> String {
        let mut text = String::new();
        for segment in &self.0 {
            match segment {
                Segment::Key(key) => {
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(key);
                }
                Segment::Index(_) => text.push_str("[]"),
            }
        }
        text
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        for (position, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if position == 0 => write!(formatter, "{key}")?,
                Segment::Key(key) => write!(formatter, ".{key}")?,
                Segment::Index(index) => write!(formatter, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_index_spellings_read_the_same() {
        let dotted = FieldPath::parse("phases.1.nodes").unwrap();
        let bracketed = FieldPath::parse("phases[1].nodes").unwrap();
        assert_eq!(dotted, bracketed);
        assert_eq!(dotted.to_string(), "phases[1].nodes");
        assert_eq!(dotted.pattern(), "phases[].nodes");
    }

    #[test]
    fn malformed_paths_are_refused() {
        for text in [
            "",
            "robot..motor_mass",
            ".gravity",
            "robot.",
            "phases[x]",
            "phases[1",
            "a]b",
            "phases[1]x",
        ] {
            assert_eq!(FieldPath::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn overlap_is_a_prefix_either_way() {
        let phase = FieldPath::parse("phases[1]").unwrap();
        let nodes = FieldPath::parse("phases.1.nodes").unwrap();
        let other = FieldPath::parse("phases.0.nodes").unwrap();
        assert!(phase.overlaps(&nodes) && nodes.overlaps(&phase));
        assert!(!other.overlaps(&nodes));
    }
}
