//! Finds where a field is written in a problem file's text, for errors found after the text
//! was read (validation, and fields reached through `--set`).
//!
//! This is not a YAML parser: it walks block-style YAML by indentation and reads flow
//! collections (`{nodes: 31}`, `[0.01, 0.2]`) with a small scanner, which is all a problem file
//! needs. Anchors, aliases and merge keys are not followed.

use super::field_path::{FieldPath, Segment};

/// A 1-based line and column in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// Where the field at `path` is written: the start of its key, or of its `- ` for a list
/// entry; `None` if the text does not write it (it took its default or is not a field).
pub(crate) fn locate(text: &str, path: &FieldPath) -> Option<Location> {
    let lines = content_lines(text);
    if path.is_root() {
        return lines.first().map(Line::location);
    }
    find_in_block(&lines, path.segments())
}

/// A line with content, comments stripped; `column` is where the content starts (0-based).
#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    number: usize,
    column: usize,
    content: &'a str,
}

impl Line<'_> {
    fn location(&self) -> Location {
        Location {
            line: self.number,
            column: self.column + 1,
        }
    }

    fn is_list_entry(&self) -> bool {
        self.content == "-" || self.content.starts_with("- ")
    }
}

fn content_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = without_comment(raw).trim_end();
        let content = line.trim_start_matches([' ', '\t']);
        let is_marker = ["---", "..."]
            .iter()
            .any(|marker| content == *marker || content.starts_with(&format!("{marker} ")));
        if content.is_empty() || is_marker || line.starts_with('%') {
            continue;
        }
        let column = line.chars().count() - content.chars().count();
        lines.push(Line {
            number: index + 1,
            column,
            content,
        });
    }
    lines
}

/// The line up to a `#` that starts a comment (at the start or after a space, outside quotes).
fn without_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut previous: Option<char> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((position, c)) = chars.next() {
        match quote {
            Some('"') if c == '\\' => {
                chars.next();
            }
            Some('\'') if c == '\'' && chars.peek().map(|(_, next)| *next) == Some('\'') => {
                chars.next();
            }
            Some(open) if c == open => quote = None,
            Some(_) => {}
            None => {
                let at_token_start =
                    previous.is_none_or(|p| p.is_whitespace() || "[{,:".contains(p));
                if (c == '"' || c == '\'') && at_token_start {
                    quote = Some(c);
                } else if c == '#' && previous.is_none_or(char::is_whitespace) {
                    return &line[..position];
                }
            }
        }
        previous = Some(c);
    }
    line
}

fn find_in_block(block: &[Line], path: &[Segment]) -> Option<Location> {
    let first = block.first()?;
    if first.content.starts_with(['{', '[']) {
        return find_in_flow(*first, &block[1..], path);
    }
    let indent = first.column;
    let (position, line) = match &path[0] {
        Segment::Key(key) => block.iter().enumerate().find(|(_, line)| {
            line.column == indent && split_key(line.content).is_some_and(|(name, _)| name == *key)
        })?,
        Segment::Index(index) => block
            .iter()
            .enumerate()
            .filter(|(_, line)| line.column == indent && line.is_list_entry())
            .nth(*index)?,
    };
    let rest = &path[1..];
    if rest.is_empty() {
        return Some(line.location());
    }
    let inner = match &path[0] {
        Segment::Key(_) => {
            let (_, value) = split_key(line.content)?;
            let value_text = value.trim_start();
            if !value_text.is_empty() {
                // Only a flow collection on the key's own line can hold the rest of the path.
                if !value_text.starts_with(['{', '[']) {
                    return None;
                }
                let value_line = Line {
                    number: line.number,
                    column: line.column + line.content.chars().count() - value_text.chars().count(),
                    content: value_text,
                };
                let continuation = deeper_lines(&block[position + 1..], indent, false);
                return find_in_flow(value_line, continuation, rest);
            }
            let following = &block[position + 1..];
            // A list may sit at its key's own indentation ("phases:\n- domain: stance").
            let compact = following
                .first()
                .is_some_and(|next| next.column == indent && next.is_list_entry());
            deeper_lines(following, indent, compact).to_vec()
        }
        Segment::Index(_) => {
            let after_dash = &line.content[1..];
            let entry_text = after_dash.trim_start();
            let mut entry = Vec::new();
            if !entry_text.is_empty() {
                entry.push(Line {
                    number: line.number,
                    column: line.column + 1 + after_dash.chars().count()
                        - entry_text.chars().count(),
                    content: entry_text,
                });
            }
            entry.extend_from_slice(deeper_lines(&block[position + 1..], indent, false));
            entry
        }
    };
    find_in_block(&inner, rest)
}

/// The leading lines indented deeper than `indent` (and, for a compact list, its `- ` lines
/// at `indent`).
fn deeper_lines<'b, 'a>(lines: &'b [Line<'a>], indent: usize, compact: bool) -> &'b [Line<'a>] {
    let end = lines
        .iter()
        .position(|line| {
            !(line.column > indent || (compact && line.column == indent && line.is_list_entry()))
        })
        .unwrap_or(lines.len());
    &lines[..end]
}

/// `key: value` → (key, value); `None` for a list entry or a line that is not a key.
fn split_key(content: &str) -> Option<(&str, &str)> {
    if content.starts_with("- ") || content == "-" {
        return None;
    }
    if let Some(quote) = content.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let close = content[1..].find(quote)? + 1;
        let value = content[close + 1..].trim_start().strip_prefix(':')?;
        return Some((&content[1..close], value));
    }
    let colon = content
        .match_indices(':')
        .map(|(position, _)| position)
        .find(|position| {
            content[position + 1..].is_empty() || content[position + 1..].starts_with([' ', '\t'])
        })?;
    Some((content[..colon].trim_end(), &content[colon + 1..]))
}

/// A character of a flow collection with its 0-based position.
#[derive(Clone, Copy)]
struct Placed {
    c: char,
    line: usize,
    column: usize,
}

/// A parsed flow collection, keeping where each key and entry starts.
enum FlowNode {
    Map(Vec<(String, Location, FlowNode)>),
    List(Vec<(Location, FlowNode)>),
    Scalar,
}

/// Finds `path` inside the flow collection that starts `first`. If the collection cannot be
/// read, its own start is the best answer there is.
fn find_in_flow(first: Line, continuation: &[Line], path: &[Segment]) -> Option<Location> {
    let mut chars = Vec::new();
    for line in std::iter::once(&first).chain(continuation) {
        for (offset, c) in line.content.chars().enumerate() {
            chars.push(Placed {
                c,
                line: line.number,
                column: line.column + offset,
            });
        }
        chars.push(Placed {
            c: ' ',
            line: line.number,
            column: line.column + line.content.chars().count(),
        });
    }
    let mut scanner = FlowScanner {
        chars: &chars,
        position: 0,
        complete: true,
    };
    let root = scanner.value();
    let mut node = &root;
    let mut found = None;
    for segment in path {
        let (location, child) = match (node, segment) {
            (FlowNode::Map(entries), Segment::Key(key)) => entries
                .iter()
                .find(|(name, _, _)| name == key)
                .map(|(_, location, child)| (*location, child)),
            (FlowNode::List(entries), Segment::Index(index)) => entries
                .get(*index)
                .map(|(location, child)| (*location, child)),
            _ => None,
        }
        .or_else(|| (!scanner.complete).then(|| (first.location(), &root)))?;
        found = Some(location);
        node = child;
    }
    found
}

struct FlowScanner<'a> {
    chars: &'a [Placed],
    position: usize,
    /// False once the text stopped making sense as a flow collection.
    complete: bool,
}

impl FlowScanner<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.position).map(|placed| placed.c)
    }

    fn here(&self) -> Location {
        let placed = self.chars.get(self.position).or(self.chars.last());
        placed.map_or(Location { line: 0, column: 0 }, |placed| Location {
            line: placed.line,
            column: placed.column + 1,
        })
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.position += 1;
        }
    }

    fn value(&mut self) -> FlowNode {
        self.skip_space();
        match self.peek() {
            Some('{') => self.map(),
            Some('[') => self.list(),
            _ => {
                self.scalar(false);
                FlowNode::Scalar
            }
        }
    }

    fn map(&mut self) -> FlowNode {
        self.position += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some('}') {
                self.position += 1;
                break;
            }
            let location = self.here();
            let key = self.scalar(true);
            self.skip_space();
            let value = if self.peek() == Some(':') {
                self.position += 1;
                self.value()
            } else {
                FlowNode::Scalar
            };
            entries.push((key, location, value));
            if !self.separator('}') {
                break;
            }
        }
        FlowNode::Map(entries)
    }

    fn list(&mut self) -> FlowNode {
        self.position += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_space();
            if self.peek() == Some(']') {
                self.position += 1;
                break;
            }
            let location = self.here();
            entries.push((location, self.value()));
            if !self.separator(']') {
                break;
            }
        }
        FlowNode::List(entries)
    }

    /// After an entry: true after a `,`, false after the closing bracket or at a dead end.
    fn separator(&mut self, close: char) -> bool {
        self.skip_space();
        match self.peek() {
            Some(',') => {
                self.position += 1;
                true
            }
            Some(c) if c == close => {
                self.position += 1;
                false
            }
            _ => {
                self.complete = false;
                false
            }
        }
    }

    /// A quoted or plain scalar; a key's plain scalar also ends at `: `.
    fn scalar(&mut self, is_key: bool) -> String {
        let mut text = String::new();
        if let Some(quote) = self.peek().filter(|c| *c == '"' || *c == '\'') {
            self.position += 1;
            while let Some(c) = self.peek() {
                self.position += 1;
                if c == quote {
                    if quote == '\'' && self.peek() == Some('\'') {
                        self.position += 1;
                    } else {
                        return text;
                    }
                } else if c == '\\' && quote == '"' {
                    if let Some(escaped) = self.peek() {
                        self.position += 1;
                        text.push(escaped);
                        continue;
                    }
                }
                text.push(c);
            }
            self.complete = false;
            return text;
        }
        while let Some(c) = self.peek() {
            let ends_key = is_key
                && c == ':'
                && self
                    .chars
                    .get(self.position + 1)
                    .is_none_or(|next| next.c.is_whitespace() || ",[]{}".contains(next.c));
            if ",[]{}".contains(c) || ends_key {
                break;
            }
            text.push(c);
            self.position += 1;
        }
        text.trim_end().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# a comment line
name: test   # trailing comment
robot:
  motor_mass: 0.9
  'rod_mass': 0.2
terrain: {model: rigid,
  drag_scaling: 15}
phases:
  - domain: stance
    nodes: 31
  -   domain: flight
      duration: [0.01, 0.3]
task:
  apex_height: 0.06 # m
solver:
- not a list really
";

    fn at(text: &str, path: &str) -> Option<(usize, usize)> {
        locate(text, &FieldPath::parse(path).unwrap())
            .map(|location| (location.line, location.column))
    }

    #[test]
    fn block_fields() {
        assert_eq!(at(TEXT, "name"), Some((2, 1)));
        assert_eq!(at(TEXT, "robot"), Some((3, 1)));
        assert_eq!(at(TEXT, "robot.motor_mass"), Some((4, 3)));
        assert_eq!(at(TEXT, "robot.rod_mass"), Some((5, 3)));
        assert_eq!(at(TEXT, "task.apex_height"), Some((14, 3)));
        assert_eq!(at(TEXT, "robot.foot_mass"), None);
        assert_eq!(at(TEXT, "gravity"), None);
    }

    #[test]
    fn list_entries() {
        assert_eq!(at(TEXT, "phases[0]"), Some((9, 3)));
        assert_eq!(at(TEXT, "phases[1]"), Some((11, 3)));
        assert_eq!(at(TEXT, "phases[0].nodes"), Some((10, 5)));
        assert_eq!(at(TEXT, "phases[1].domain"), Some((11, 7)));
        assert_eq!(at(TEXT, "phases[1].duration"), Some((12, 7)));
        assert_eq!(at(TEXT, "phases[1].nodes"), None);
        assert_eq!(at(TEXT, "phases[2]"), None);
    }

    #[test]
    fn flow_collections() {
        assert_eq!(at(TEXT, "terrain.model"), Some((6, 11)));
        assert_eq!(at(TEXT, "terrain.drag_scaling"), Some((7, 3)));
        assert_eq!(at(TEXT, "terrain.medium"), None);
        assert_eq!(at(TEXT, "phases[1].duration[1]"), Some((12, 24)));
        let flow = "{gravity: 9.8, phases: [{domain: stance}, {domain: flight, nodes: 2}]}";
        assert_eq!(at(flow, "gravity"), Some((1, 2)));
        assert_eq!(at(flow, "phases[1].nodes"), Some((1, 60)));
        assert_eq!(at(flow, "phases[1]"), Some((1, 43)));
        let quoted = "robot: {\"motor_mass\": 1, 'rod_mass': 2}";
        assert_eq!(at(quoted, "robot.rod_mass"), Some((1, 26)));
    }

    #[test]
    fn compact_lists_and_unreadable_flow() {
        let compact = "phases:\n- domain: stance\n- domain: flight\n  nodes: 5\ntask: {}\n";
        assert_eq!(at(compact, "phases[1].nodes"), Some((4, 3)));
        assert_eq!(at(compact, "task"), Some((5, 1)));
        let broken = "robot: {motor_mass: 1 rod_mass 2\n";
        assert_eq!(at(broken, "robot.rod_mass"), Some((1, 8)));
    }

    #[test]
    fn comments_inside_quotes_are_text() {
        assert_eq!(without_comment("name: 'a # b' # c"), "name: 'a # b' ");
        assert_eq!(without_comment("name: a#b"), "name: a#b");
        assert_eq!(without_comment("name: don't # c"), "name: don't ");
    }
}
