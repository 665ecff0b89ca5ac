//! The `import` generator: measured wrenches from a CSV, as a physical rig produces them, with
//! the rest of the data (medium, foot, directions, …) from a YAML header.
//!
//! CSV: a header row `depth,tilt,direction,force_x,force_z,torque`, then one row per node and
//! direction: d [m] (≤ 0), φ [rad] (≥ 0), the 0-based index of the direction in the header's
//! `directions`, F_x [N], F_z [N], τ [N m] (surface axes, torque about `p_r`). Rows may come in
//! any order; every node needs every direction exactly once. Blank lines and lines starting
//! with `#` are skipped.
//!
//! Checks beyond the data file's own ([`ImportOptions`]): the nodes must fill the grid of
//! their distinct depths × tilts (a hole is named, and taken only when allowed), and the force
//! x-components must follow loam's x convention, checked against RFT for the same foot (a
//! drag toward +x is resisted by −x force): data whose x axis points the other way are refused
//! with the evidence, and taken with `flip_x`, which negates F_x and τ (the wrench S·w).

use std::path::Path;

use super::data::{mirror, Node, WrenchSpaceData, WrenchSpaceError};
use super::rft::{Medium, RftModel};

/// Which of the import's checks to relax.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Take nodes that leave holes in the grid of their depths × tilts (the interpolation
    /// then bridges the hole, a guess).
    pub allow_missing_nodes: bool,
    /// The data's x axis points the other way from loam's: negate every F_x and τ.
    pub flip_x: bool,
}

/// A force x-component counts in the convention check when it exceeds this share of the
/// largest force at its node, in the data and in RFT alike.
const SIGNIFICANT_X: f64 = 0.05;

/// The CSV's header row.
pub const COLUMNS: [&str; 6] = ["depth", "tilt", "direction", "force_x", "force_z", "torque"];

/// The data set of `header` (a data file whose `nodes` are left out) with the nodes of the CSV
/// text `csv` read from `csv_path`; validated, with every check of [`import_with`].
pub fn import(
    header: WrenchSpaceData,
    csv: &str,
    csv_path: &Path,
) -> Result<WrenchSpaceData, WrenchSpaceError> {
    import_with(header, csv, csv_path, ImportOptions::default())
}

/// [`import`] with some checks relaxed or the x axis flipped, as `options` say.
pub fn import_with(
    header: WrenchSpaceData,
    csv: &str,
    csv_path: &Path,
    options: ImportOptions,
) -> Result<WrenchSpaceData, WrenchSpaceError> {
    let m = header.directions.len();
    let mut nodes = read_rows(csv, csv_path, m, COLUMNS)?;
    let missing = grid_holes(nodes.iter().map(|(n, _)| n));
    if let (Some(&(depth, tilt)), false) = (missing.first(), options.allow_missing_nodes) {
        let line = nodes
            .iter()
            .filter(|(n, _)| n.depth == depth)
            .flat_map(|(_, seen)| seen.iter().flatten())
            .min()
            .copied();
        return Err(WrenchSpaceError::Invalid {
            file: Some(csv_path.to_path_buf()),
            line,
            column: None,
            field: Some("nodes".to_owned()),
            message: format!(
                "the nodes do not fill the grid of their depths x tilts: no rows for the node \
                 (d = {depth}, tilt = {tilt}){}{}; the interpolation would bridge the hole \
                 with a guess. Give its {m} rows, or pass --allow-missing-nodes to take the \
                 data with the hole",
                match missing.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                },
                line.map_or(String::new(), |l| format!(
                    " (the rows at d = {depth} start on line {l})"
                )),
            ),
        });
    }
    if options.flip_x {
        for (node, _) in &mut nodes {
            for w in &mut node.wrenches {
                *w = mirror(w);
            }
        }
    }
    let mut data = header;
    data.nodes = nodes.iter().map(|(node, _)| node.clone()).collect();
    data.provenance.generator = "import".to_owned();
    let parameters = &mut data.provenance.parameters;
    parameters.insert("csv".to_owned(), csv_path.display().to_string());
    if options.flip_x {
        parameters.insert(
            "flip_x".to_owned(),
            "F_x and torque negated on import (--flip-x)".to_owned(),
        );
    }
    if !missing.is_empty() {
        let list: Vec<String> = missing
            .iter()
            .map(|(d, t)| format!("(d = {d}, tilt = {t})"))
            .collect();
        parameters.insert("missing_nodes".to_owned(), list.join(", "));
    }
    data.validate().map_err(|e| e.in_file(csv_path))?;
    // The x convention, on the data as they will be written (flipped when asked).
    let check = XConvention::of(&unit_rft(&data), &nodes);
    if check.disagree > check.agree {
        let (line, depth, tilt, i, data_x, rft_x) = check.example.unwrap_or_default();
        let sign = |x: f64| if x > 0.0 { "+x" } else { "-x" };
        let (flipped, remedy) = if options.flip_x {
            (
                " after --flip-x",
                "Leave --flip-x out: the data as given follow loam's convention",
            )
        } else {
            (
                "",
                "If the data's x axis points the other way, pass --flip-x (F_x and torque \
                 negated)",
            )
        };
        return Err(WrenchSpaceError::Invalid {
            file: Some(csv_path.to_path_buf()),
            line: Some(line),
            column: None,
            field: Some("force_x".to_owned()),
            message: format!(
                "the x axis points the other way from loam's{flipped}: {} of {} force_x values \
                 disagree in sign with resistive force theory for the same foot and {} agree \
                 (on this line, direction {i} at (d = {depth}, tilt = {tilt}): F_x = {data_x} N \
                 toward {}, where RFT resists toward {}); loam's convention: a drag toward +x \
                 is resisted by a -x force. {remedy}",
                check.disagree,
                check.agree + check.disagree,
                check.agree,
                sign(data_x),
                sign(rft_x),
            ),
        });
    }
    Ok(data)
}

/// The (depth, tilt) of the grid of the nodes' distinct depths × tilts that no node fills,
/// depth by depth from the surface down.
pub fn grid_holes<'a>(nodes: impl Iterator<Item = &'a Node> + Clone) -> Vec<(f64, f64)> {
    let distinct = |values: Vec<f64>| {
        let mut values = values;
        values.sort_by(f64::total_cmp);
        values.dedup();
        values
    };
    let depths = distinct(nodes.clone().map(|n| n.depth).collect());
    let tilts = distinct(nodes.clone().map(|n| n.tilt).collect());
    depths
        .iter()
        .rev()
        .flat_map(|&d| tilts.iter().map(move |&t| (d, t)))
        .filter(|&(d, t)| !nodes.clone().any(|n| n.depth == d && n.tilt == t))
        .collect()
}

/// RFT (the generic medium; only signs are compared) for the data's foot and directions.
fn unit_rft(data: &WrenchSpaceData) -> RftModel {
    RftModel {
        medium: Medium::Generic { zeta: 1.0 },
        foot: data.foot,
        torque_point: data.torque_point,
        velocity_scale: data.velocity_scale,
        directions: data.directions.clone(),
        segments: 20,
    }
}

/// The signs of the data's force x-components against RFT's for the same foot, over the
/// components that are significant in both ([`SIGNIFICANT_X`] of the node's largest force).
struct XConvention {
    agree: usize,
    disagree: usize,
    /// The first disagreeing row: line, d, φ, direction, data's F_x, RFT's F_x (ζ = 1).
    example: Option<(usize, f64, f64, usize, f64, f64)>,
}

impl XConvention {
    fn of(rft: &RftModel, nodes: &[(Node, Vec<Option<usize>>)]) -> XConvention {
        let mut check = XConvention {
            agree: 0,
            disagree: 0,
            example: None,
        };
        let largest = |ws: &[[f64; 3]]| ws.iter().map(|w| w[0].hypot(w[1])).fold(0.0_f64, f64::max);
        for (node, lines) in nodes.iter().filter(|(n, _)| n.depth < 0.0) {
            let model = rft.wrenches(node.depth, node.tilt);
            let (scale_data, scale_rft) = (largest(&node.wrenches), largest(&model));
            for (i, (w, r)) in node.wrenches.iter().zip(&model).enumerate() {
                if w[0].abs() <= SIGNIFICANT_X * scale_data
                    || r[0].abs() <= SIGNIFICANT_X * scale_rft
                {
                    continue;
                }
                if (w[0] > 0.0) == (r[0] > 0.0) {
                    check.agree += 1;
                } else {
                    check.disagree += 1;
                    let line = lines[i].unwrap_or_default();
                    let row = (line, node.depth, node.tilt, i, w[0], r[0]);
                    match check.example {
                        Some(first) if first.0 <= line => {}
                        _ => check.example = Some(row),
                    }
                }
            }
        }
        check
    }
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

/// The header row of a weights CSV: the RBF weights that come with a data set, one row per
/// node and direction, as the wrenches' CSV.
pub const WEIGHT_COLUMNS: [&str; 6] = [
    "depth",
    "tilt",
    "direction",
    "weight_x",
    "weight_z",
    "weight_tau",
];

/// Sets `data.rbf_weights` from the CSV text `csv` (columns [`WEIGHT_COLUMNS`]) read from
/// `csv_path`: one weight triple for every node of `data` and direction; a node the data do
/// not have, or one without weights, is refused. Whether the weights reproduce the data is
/// checked when the data are fitted (`WrenchSpace::from_data`).
pub fn attach_weights(
    data: &mut WrenchSpaceData,
    csv: &str,
    csv_path: &Path,
) -> Result<(), WrenchSpaceError> {
    let rows = read_rows(csv, csv_path, data.directions.len(), WEIGHT_COLUMNS)?;
    let mut weights = vec![None; data.nodes.len()];
    for (node, seen) in rows {
        let line = seen.iter().flatten().min().copied();
        let at = data
            .nodes
            .iter()
            .position(|n| n.depth == node.depth && n.tilt == node.tilt)
            .ok_or_else(|| WrenchSpaceError::Invalid {
                file: Some(csv_path.to_path_buf()),
                line,
                column: None,
                field: Some("depth".to_owned()),
                message: format!(
                    "weights for (d = {}, tilt = {}), which is not a node of the data",
                    node.depth, node.tilt
                ),
            })?;
        weights[at] = Some(node.wrenches);
    }
    if let Some(j) = weights.iter().position(Option::is_none) {
        return Err(WrenchSpaceError::Invalid {
            file: Some(csv_path.to_path_buf()),
            line: None,
            column: None,
            field: Some("depth".to_owned()),
            message: format!(
                "no weights for the node (d = {}, tilt = {}): every node needs its weights",
                data.nodes[j].depth, data.nodes[j].tilt
            ),
        });
    }
    data.rbf_weights = weights.into_iter().flatten().collect();
    Ok(())
}

/// Rows `depth,tilt,direction,X,Z,TAU` (the names in `columns`) of the CSV text `csv` read
/// from `csv_path`, grouped into nodes of `m` triples (every node needs every direction once),
/// each with the line of each direction's row.
#[allow(clippy::type_complexity)]
fn read_rows(
    csv: &str,
    csv_path: &Path,
    m: usize,
    columns: [&str; 6],
) -> Result<Vec<(Node, Vec<Option<usize>>)>, WrenchSpaceError> {
    let at = |line: usize, field: &str, message: String| WrenchSpaceError::Invalid {
        file: Some(csv_path.to_path_buf()),
        line: Some(line),
        column: None,
        field: Some(field.to_owned()),
        message,
    };
    let mut rows = csv
        .lines()
        .enumerate()
        .map(|(i, text)| (i + 1, text.trim()))
        .filter(|(_, text)| !text.is_empty() && !text.starts_with('#'));
    let (line, first) = rows.next().ok_or_else(|| {
        at(
            1,
            "header",
            format!("is empty; expected the header row {}", columns.join(",")),
        )
    })?;
    let names: Vec<&str> = first.split(',').map(str::trim).collect();
    if names != columns {
        return Err(at(
            line,
            "header",
            format!("must be `{}`, got `{first}`", columns.join(",")),
        ));
    }
    let mut nodes: Vec<(Node, Vec<Option<usize>>)> = Vec::new();
    for (line, text) in rows {
        let cells: Vec<&str> = text.split(',').map(str::trim).collect();
        if cells.len() != columns.len() {
            return Err(at(
                line,
                "row",
                format!(
                    "needs {} comma-separated values, got {}",
                    columns.len(),
                    cells.len()
                ),
            ));
        }
        let mut numbers = [0.0_f64; 6];
        for (k, cell) in cells.iter().enumerate() {
            numbers[k] = cell
                .parse()
                .map_err(|_| at(line, columns[k], format!("must be a number, got `{cell}`")))?;
        }
        if let Some(k) = numbers.iter().position(|x| !x.is_finite()) {
            return Err(at(
                line,
                columns[k],
                format!("must be a finite number, got `{}`", cells[k]),
            ));
        }
        let [depth, tilt, direction, x, z, tau] = numbers;
        if depth > 0.0 {
            return Err(at(
                line,
                "depth",
                format!(
                    "must be <= 0 m (at or below the surface; depths are negative below it), \
                     got {depth}"
                ),
            ));
        }
        if tilt < 0.0 {
            return Err(at(
                line,
                "tilt",
                format!(
                    "must be >= 0 rad (negative tilts are the mirror images, made by the \
                     model), got {tilt}"
                ),
            ));
        }
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
        node.wrenches[i] = [x, z, tau];
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
    Ok(nodes)
}
