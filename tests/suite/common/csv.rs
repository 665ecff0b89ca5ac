//! CSV files as the tests read them: a header and rows of text fields.

use std::path::Path;

/// A CSV as (header, rows of fields).
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).expect("read csv");
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

/// The column `name` as numbers.
#[allow(dead_code)]
pub fn column(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<f64> {
    let i = header.iter().position(|h| h == name).expect(name);
    rows.iter().map(|r| r[i].parse().expect("number")).collect()
}

/// A CSV whose fields may be quoted (a sweep's varied section, `"{model: rigid}"`), as
/// (header, rows of fields).
pub fn read_quoted(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().map(loam::plot::table::fields_of);
    let header = lines.next().expect("a header");
    (header, lines.collect())
}
