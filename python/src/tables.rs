//! The CSV files of a run folder as NumPy columns: what `trajectory.csv` and a replay's CSV
//! hold, value for value (each number parsed from the text the file has).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The header of `csv` and a dict of its columns, in the file's order: integers as `int64`
/// arrays (`node`), numbers as `float64`, anything else as strings (`phase`, `mode`).
pub fn columns<'py>(py: Python<'py>, csv: &str) -> PyResult<(Vec<String>, Bound<'py, PyDict>)> {
    let mut lines = csv.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or("")
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows: Vec<Vec<&str>> = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').collect())
        .collect();
    let asarray = py.import("numpy")?.getattr("asarray")?;
    let table = PyDict::new(py);
    for (j, name) in header.iter().enumerate() {
        let cells: Vec<&str> = rows
            .iter()
            .map(|r| r.get(j).copied().unwrap_or(""))
            .collect();
        let list = if let Some(ints) = parse_all::<i64>(&cells) {
            PyList::new(py, ints)?
        } else if let Some(numbers) = parse_all::<f64>(&cells) {
            PyList::new(py, numbers)?
        } else {
            PyList::new(py, cells)?
        };
        table.set_item(name, asarray.call1((list,))?)?;
    }
    Ok((header, table))
}

fn parse_all<T: std::str::FromStr>(cells: &[&str]) -> Option<Vec<T>> {
    cells.iter().map(|c| c.trim().parse().ok()).collect()
}
