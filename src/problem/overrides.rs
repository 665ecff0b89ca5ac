//! `--set path.to.field=value` overrides, applied to the parsed tree before it is read into
//! the schema, so an override meets exactly the checks a value in the file meets.

use super::field_path::{FieldPath, Segment};
use super::yaml::{load_yaml, Tree};

/// One parsed `--set`.
#[derive(Clone, Debug)]
pub(crate) struct Override {
    /// What the user wrote, for error messages.
    pub(crate) text: String,
    pub(crate) path: FieldPath,
    pub(crate) value: Tree,
}

/// Why an override could not be applied: the field it concerns (if known) and what is wrong.
pub(crate) type OverrideError = (Option<FieldPath>, String);

/// Reads `path.to.field=value`; the value is YAML, so `0.07`, `rigid`, `free` and
/// `[0.01, 0.3]` all mean what they would in the file.
pub(crate) fn parse_override(text: &str) -> Result<Override, OverrideError> {
    const SHAPE: &str =
        "expected PATH=VALUE, e.g. task.apex_height=0.08, phases.1.nodes=41 or phases[1].duration=[0.01, 0.3]";
    let Some((path_text, value_text)) = text.split_once('=') else {
        return Err((
            None,
            format!("malformed override `{text}` (no `=`): {SHAPE}"),
        ));
    };
    let Some(path) = FieldPath::parse(path_text.trim()) else {
        return Err((
            None,
            format!("malformed field path `{}`: {SHAPE}", path_text.trim()),
        ));
    };
    let value = load_yaml::<Tree>(value_text).map_err(|error| {
        (
            Some(path.clone()),
            format!("the value `{value_text}` is not YAML: {}", error.message),
        )
    })?;
    Ok(Override {
        text: text.to_owned(),
        path,
        value,
    })
}

/// Sets the override's value in `tree`, creating missing sections. A list the file leaves out
/// is first filled from `defaults`, so `phases.1.nodes=41` edits the default second phase.
pub(crate) fn apply(
    tree: &mut Tree,
    change: &Override,
    defaults: &Tree,
) -> Result<(), OverrideError> {
    let segments = change.path.segments();
    let mut node = tree;
    let mut default = Some(defaults);
    for (depth, segment) in segments.iter().enumerate() {
        let here = change.path.prefix(depth);
        let is_last = depth + 1 == segments.len();
        if node.is_null() {
            // What the file leaves out is its default: a list to index into, a section to
            // add to, or a plain value that has nothing inside it.
            *node = match default {
                Some(default) if !default.is_null() => default.clone(),
                _ => Tree::Mapping(Default::default()),
            };
        }
        default = default.and_then(|default| match segment {
            Segment::Key(key) => default.get(key.as_str()),
            Segment::Index(index) => default.get(*index),
        });
        node = match (node, segment) {
            (Tree::Mapping(map), segment) => {
                let key = match segment {
                    Segment::Key(key) => key.clone(),
                    Segment::Index(index) => index.to_string(),
                };
                let slot = Tree::String(key);
                if !map.contains_key(&slot) {
                    map.insert(slot.clone(), Tree::Null);
                }
                map.get_mut(&slot).expect("the key was just inserted")
            }
            (Tree::Sequence(list), Segment::Index(index)) => {
                if *index == list.len() {
                    list.push(Tree::Null);
                } else if *index > list.len() {
                    let message = format!(
                        "index {index} is out of range: `{here}` has {} entries; use 0 to {} to change one, or {} to add one",
                        list.len(),
                        list.len().saturating_sub(1),
                        list.len()
                    );
                    return Err((Some(here), message));
                }
                &mut list[*index]
            }
            (Tree::Sequence(_), Segment::Key(key)) => {
                let message = format!(
                    "`{here}` is a list, not a section with `{key}`; pick an entry by its index, \
                     e.g. {here}.0.FIELD or {}.FIELD",
                    here.index(0)
                );
                return Err((Some(here), message));
            }
            (scalar, segment) => {
                let inside = match segment {
                    Segment::Key(key) => key.clone(),
                    Segment::Index(index) => index.to_string(),
                };
                let message = format!(
                    "`{here}` holds the value {}, not a section; there is no `{inside}` inside it",
                    describe(scalar)
                );
                return Err((Some(here), message));
            }
        };
        if is_last {
            *node = change.value.clone();
        }
    }
    Ok(())
}

fn describe(value: &Tree) -> String {
    match value {
        Tree::Bool(flag) => flag.to_string(),
        Tree::Number(number) => number.to_string(),
        Tree::String(text) => format!("`{text}`"),
        _ => "that is not a section".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> Tree {
        load_yaml(text).unwrap()
    }

    fn set(base: &str, text: &str, defaults: &str) -> Result<Tree, OverrideError> {
        let mut value = tree(base);
        apply(&mut value, &parse_override(text)?, &tree(defaults))?;
        Ok(value)
    }

    #[test]
    fn values_are_yaml() {
        let change = parse_override("phases[1].duration=[0.01, 0.3]").unwrap();
        assert_eq!(change.value, tree("[0.01, 0.3]"));
        assert_eq!(change.path.to_string(), "phases[1].duration");
        assert_eq!(
            parse_override("terrain.model=rigid").unwrap().value,
            tree("rigid")
        );
    }

    #[test]
    fn malformed_overrides_name_themselves() {
        let (field, message) = parse_override("robot.motor_mass").unwrap_err();
        assert_eq!(field, None);
        assert!(
            message.contains("`robot.motor_mass`") && message.contains("PATH=VALUE"),
            "{message}"
        );
        let (_, message) = parse_override("robot..motor_mass=1").unwrap_err();
        assert!(message.contains("malformed field path"), "{message}");
        let (_, message) = parse_override("robot.motor_mass=[1").unwrap_err();
        assert!(message.contains("not YAML"), "{message}");
    }

    #[test]
    fn missing_sections_are_created() {
        let value = set("{}", "robot.motor_mass=1.5", "{}").unwrap();
        assert_eq!(value, tree("robot: {motor_mass: 1.5}"));
        let value = set("{}", "robot.motor_mass=1.5", "robot: {rod_mass: 0.1}").unwrap();
        assert_eq!(value, tree("robot: {rod_mass: 0.1, motor_mass: 1.5}"));
    }

    #[test]
    fn defaults_left_out_of_the_file_keep_their_shape() {
        let defaults = "{gravity: 9.81, phases: [{domain: stance}]}";
        let (field, message) = set("{}", "phases.stance.nodes=3", defaults).unwrap_err();
        assert_eq!(field.unwrap().to_string(), "phases");
        assert!(message.contains("is a list"), "{message}");
        let (_, message) = set("{}", "gravity.x=3", defaults).unwrap_err();
        assert!(
            message.contains("`gravity` holds the value 9.81, not a section"),
            "{message}"
        );
    }

    #[test]
    fn missing_lists_start_from_the_default() {
        let defaults = "phases: [{domain: stance}, {domain: flight}]";
        let value = set("gravity: 9", "phases.1.nodes=41", defaults).unwrap();
        assert_eq!(
            value,
            tree("{gravity: 9, phases: [{domain: stance}, {domain: flight, nodes: 41}]}")
        );
    }

    #[test]
    fn list_indices_are_checked() {
        let base = "phases: [{domain: stance}, {domain: flight}]";
        let value = set(base, "phases.2.domain=flight", "{}").unwrap();
        assert_eq!(value["phases"][2], tree("{domain: flight}"));
        let (field, message) = set(base, "phases.5.nodes=3", "{}").unwrap_err();
        assert_eq!(field.unwrap().to_string(), "phases");
        assert!(
            message.contains("out of range") && message.contains("has 2 entries"),
            "{message}"
        );
        let (_, message) = set(base, "phases.nodes=3", "{}").unwrap_err();
        assert!(
            message.contains("e.g. phases.0.FIELD or phases[0].FIELD"),
            "{message}"
        );
        let (field, message) =
            set("robot: {motor_mass: 1}", "robot.motor_mass.x=3", "{}").unwrap_err();
        assert_eq!(field.unwrap().to_string(), "robot.motor_mass");
        assert!(message.contains("not a section"), "{message}");
    }
}
