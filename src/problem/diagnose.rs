//! Turns serde's messages into ones that say what to fix: the unknown name with the closest
//! accepted one, the accepted values, the accepted type.

use super::field_path::FieldPath;
use super::fields::{accepted, list};

/// The message for a deserialization error at `path`, from serde's `message`.
pub(crate) fn explain(path: &FieldPath, message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (name, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let names = backticked(tail);
        // serde names the unknown field itself in the path of a struct's field, but stops at
        // the section for an enum chosen by its `model` (the section is read whole first).
        let names_the_field = matches!(
            path.segments().last(),
            Some(super::field_path::Segment::Key(last)) if last == name
        );
        let section = if names_the_field {
            path.parent()
        } else {
            path.clone()
        };
        let place = if section.is_root() {
            "at the top level".to_owned()
        } else {
            format!("in `{section}`")
        };
        return format!("unknown field `{name}` {place}{}", offer(name, &names));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (name, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let names = backticked(tail);
        // The hopper's own schema had a wrench space (the rail); it moved to robot files.
        let moved = if name == "wrench_space" && names.iter().any(|n| *n == "added_mass") {
            " (the hopper on a wrench space is its robot file now: `robot: {file: \
             robots/hopper.yaml}` with a `schedule`, as problems/hopper_rail.yaml)"
        } else {
            ""
        };
        return format!("unknown value `{name}`{}{moved}", offer(name, &names));
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        return match accepted(&path.child(name)) {
            Some(accepted) => {
                format!("missing field `{name}`, which is required here; accepted: {accepted}")
            }
            None => format!("missing field `{name}`, which is required here"),
        };
    }
    let serde_complaint = ["invalid type", "invalid value", "invalid length"]
        .iter()
        .any(|start| message.starts_with(start));
    // serde_yaml's name for an enum given as a map or list means nothing to a user.
    let message = message.replace("expected a Value::Tagged enum", "expected a name");
    match accepted(path) {
        Some(accepted) if serde_complaint => format!("{message}; accepted: {accepted}"),
        _ => message,
    }
}

/// `; did you mean `x`? accepted: a, b` (the question only when a name is close enough).
fn offer(name: &str, names: &[&str]) -> String {
    let question = match suggest(name, names) {
        Some(close) => format!("; did you mean `{close}`?"),
        None => ";".to_owned(),
    };
    if names.is_empty() {
        format!("{question} nothing is accepted here")
    } else {
        format!("{question} accepted: {}", list(names))
    }
}

/// The accepted name closest to `name`, if it is within an edit distance of max(2, len/3).
pub(crate) fn suggest<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    let lower = name.to_lowercase();
    names
        .iter()
        .map(|candidate| (levenshtein(&lower, &candidate.to_lowercase()), *candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Edit distance: insertions, deletions and substitutions of characters.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, a_char) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, b_char) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(a_char != *b_char);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// The names serde lists after "expected": "`a` or `b`", "one of `a`, `b`, `c`".
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("motr_mass", "motor_mass"), 1);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }

    #[test]
    fn suggestions_stay_close() {
        let names = ["rigid", "added_mass"];
        assert_eq!(suggest("rigd", &names), Some("rigid"));
        assert_eq!(suggest("Rigid", &names), Some("rigid"));
        assert_eq!(suggest("sand", &names), None);
        assert_eq!(suggest("addedmass", &names), Some("added_mass"));
    }

    #[test]
    fn unknown_field_message() {
        let path = FieldPath::parse("robot.motr_mass").unwrap();
        let message = explain(
            &path,
            "unknown field `motr_mass`, expected `motor_mass` or `rod_mass`",
        );
        assert_eq!(
            message,
            "unknown field `motr_mass` in `robot`; did you mean `motor_mass`? accepted: motor_mass, rod_mass"
        );
    }
}
