//! A ParaView collection (`.pvd`) read back, as the DEM snapshots' series writes it.
#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};

/// One `<DataSet>` of a collection.
#[derive(Debug)]
pub struct DataSet {
    pub timestep: f64,
    pub part: usize,
    /// The file, resolved against the collection's folder.
    pub file: PathBuf,
}

/// The data sets a `.pvd` lists, in order; panics on anything but a collection.
pub fn read_pvd(path: &Path) -> Vec<DataSet> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(text.starts_with("<?xml"), "{text}");
    assert!(text.contains("<VTKFile type=\"Collection\""), "{text}");
    assert!(text.trim_end().ends_with("</VTKFile>"), "{text}");
    let dir = path.parent().expect("a folder");
    text.lines()
        .filter(|l| l.trim_start().starts_with("<DataSet"))
        .map(|line| DataSet {
            timestep: attribute(line, "timestep").parse().expect("a number"),
            part: attribute(line, "part").parse().expect("an index"),
            file: dir.join(attribute(line, "file")),
        })
        .collect()
}

/// The value of `name="..."` in an XML tag on one line.
pub fn attribute<'a>(tag: &'a str, name: &str) -> &'a str {
    let start = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + name.len()
        + 3;
    let end = tag[start..].find('"').expect("a closing quote") + start;
    &tag[start..end]
}
