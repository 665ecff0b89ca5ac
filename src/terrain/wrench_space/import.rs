//! The `import` generator: measured wrenches from a CSV, as a physical rig produces them, with
//! the rest of the data (medium, foot, directions, …) from a YAML header.
//!
//! CSV: a header row `depth,tilt,direction,force_x,force_z,torque`, then one row per node and
//! direction: d [m] (≤ 0), φ [rad] (≥ 0), the 0-based index of the direction in the header's
//! `directions`, F_x [N], F_z [N], τ [N m] (surface axes, torque about `p_r`). Rows may come in
//! any order; every node needs every direction exactly once. Blank lines and lines starting
//! with `#` are skipped.

use std::path::Path;

use super::data::{Node, WrenchSpaceData, WrenchSpaceError};

/// The CSV's header row.
pub const COLUMNS: [&str; 6] = ["depth", "tilt", "direction", "force_x", "force_z", "torque"];

/// The data set of `header` (a data file whose `nodes` are left out) with the nodes of the CSV
/// text `csv` read from `csv_path`; validated.
pub fn import(
    header: WrenchSpaceData,
    csv: &str,
    csv_path: &Path,
) -> Result<WrenchSpaceData, WrenchSpaceError> {
    let at = |line: usize, field: &str, message: String| WrenchSpaceError::Invalid {
        file: Some(csv_path.to_path_buf()),
        line: Some(line),
        column: None,
        field: Some(field.to_owned()),
        message,
    };
    let m = header.directions.len();
    let mut rows = csv
        .lines()
        .enumerate()
        .map(|(i, text)| (i + 1, text.trim()))
        .filter(|(_, text)| !text.is_empty() && !text.starts_with('#'));
    let (line, first) = rows.next().ok_or_else(|| {
        at(
            1,
            "header",
            format!("is empty; expected the header row {}", COLUMNS.join(",")),
        )
    })?;
    let names: Vec<&str> = first.split(',').map(str::trim).collect();
    if names != COLUMNS {
        return Err(at(
            line,
            "header",
            format!("must be `{}`, got `{first}`", COLUMNS.join(",")),
        ));
    }
    let mut nodes: Vec<(Node, Vec<Option<usize>>)> = Vec::new();
    for (line, text) in rows {
        let cells: Vec<&str> = text.split(',').map(str::trim).collect();
        if cells.len() != COLUMNS.len() {
            return Err(at(
                line,
                "row",
                format!(
                    "needs {} comma-separated values, got {}",
                    COLUMNS.len(),
                    cells.len()
                ),
            ));
        }
        let mut numbers = [0.0_f64; 6];
        for (k, cell) in cells.iter().enumerate() {
            numbers[k] = cell
                .parse()
                .map_err(|_| at(line, COLUMNS[k], format!("must be a number, got `{cell}`")))?;
        }
        let [depth, tilt, direction, force_x, force_z, torque] = numbers;
        if direction.fract() != 0.0 || !(0.0..m as f64).contains(&direction) {
            return Err(at(
                line,
                "direction",
                format!(
                    "must be a direction index 0..{} of the header, got {direction}",
                    m - 1
                ),
            ));
        }
        let i = direction as usize;
        let index = match nodes
            .iter()
            .position(|(n, _)| n.depth == depth && n.tilt == tilt)
        {
            Some(index) => index,
            None => {
                let node = Node {
                    depth,
                    tilt,
                    wrenches: vec![[0.0; 3]; m],
                };
                nodes.push((node, vec![None; m]));
                nodes.len() - 1
            }
        };
        let (node, seen) = &mut nodes[index];
        if let Some(earlier) = seen[i] {
            return Err(at(
                line,
                "direction",
                format!(
                    "direction {i} at (d = {depth}, tilt = {tilt}) was given on line {earlier}"
                ),
            ));
        }
        seen[i] = Some(line);
        node.wrenches[i] = [force_x, force_z, torque];
    }
    for (node, seen) in &nodes {
        if let Some(i) = seen.iter().position(Option::is_none) {
            return Err(WrenchSpaceError::Invalid {
                file: Some(csv_path.to_path_buf()),
                line: None,
                column: None,
                field: Some("direction".to_owned()),
                message: format!(
                    "the node (d = {}, tilt = {}) has no row for direction {i} (every node \
                     needs all {m})",
                    node.depth, node.tilt
                ),
            });
        }
    }
    let mut data = header;
    data.nodes = nodes.into_iter().map(|(node, _)| node).collect();
    data.provenance.generator = "import".to_owned();
    data.provenance
        .parameters
        .insert("csv".to_owned(), csv_path.display().to_string());
    data.validate().map_err(|e| e.in_file(csv_path))?;
    Ok(data)
}

/// The CSV text of a data set's nodes (the inverse of [`import`]).
pub fn to_csv(data: &WrenchSpaceData) -> String {
    let mut text = COLUMNS.join(",") + "\n";
    for node in &data.nodes {
        for (i, w) in node.wrenches.iter().enumerate() {
            text += &format!(
                "{:?},{:?},{i},{:?},{:?},{:?}\n",
                node.depth, node.tilt, w[0], w[1], w[2]
            );
        }
    }
    text
}
