//! The wrench-space data file (docs/WRENCH_SPACE.md section 3.1 and "Implemented"): what a
//! generator writes and the model is fitted to, its validation and its YAML text.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::rbf::Kernel;

/// Torque-point height of the authors' published data [m] (the paper's text says 0.25 m).
pub const DEFAULT_TORQUE_POINT: f64 = 0.1572;

/// How far a direction may be from unit length, and a mirrored direction from its partner.
const DIRECTION_TOLERANCE: f64 = 1e-9;

/// A wrench-space data set: nodes θ_j = (d, φ) with d ≤ 0, φ ≥ 0 and, at each, one boundary
/// wrench per velocity direction. Mirrored nodes (d, −φ) are not written; the model makes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WrenchSpaceData {
    /// The granular medium, free text (`sand_like`, `poppy_seeds_loose`, …).
    pub medium: String,
    pub foot: Foot,
    /// Height of the torque point `p_r` above the sole centre along the foot axis [m].
    #[serde(default = "default_torque_point")]
    pub torque_point: f64,
    /// Per-axis scale of the unit directions: (s_x [m/s], s_z [m/s], s_ω [rad/s]).
    pub velocity_scale: [f64; 3],
    /// The m unit velocity directions (x, z, ω) before scaling; must be mirror-closed under
    /// S_v = diag(−1, 1, −1). Default: [`sphere_directions`]`(3)`, the paper's m = 26.
    #[serde(default = "default_directions")]
    pub directions: Vec<[f64; 3]>,
    #[serde(default)]
    pub interpolation: Interpolation,
    #[serde(default)]
    pub provenance: Provenance,
    #[serde(default)]
    pub nodes: Vec<Node>,
    /// The RBF weights that come with a data set (its authors' model), instead of a fit: one
    /// list per node, in the order of `nodes`, of m triples (the weights of F_x, F_z and τ of
    /// each direction at that node's centre). Only with a paper kernel (`paper_linear`,
    /// `paper_gaussian`: raw (d, φ), no affine tail); negative tilts are answered by the
    /// mirror. They must reproduce every node's wrenches (to 1e-6 of the largest). Empty: the
    /// model is fitted to the nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rbf_weights: Vec<Vec<[f64; 3]>>,
}

/// The foot's planar section: a rectangle `width` wide (along the sole) and `height` tall
/// (along the axis), `thickness` out of the plane, the sole centre `p_center` at the middle of
/// its bottom side.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Foot {
    /// [m]
    pub width: f64,
    /// [m]
    pub height: f64,
    /// Out-of-plane width [m].
    pub thickness: f64,
}

/// One configuration and its measured (or computed) boundary wrenches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// d [m], ≤ 0.
    pub depth: f64,
    /// φ [rad], ≥ 0.
    pub tilt: f64,
    /// w_ij = (F_x [N], F_z [N], τ [N m]), one per direction, in the directions' order.
    pub wrenches: Vec<[f64; 3]>,
}

/// The interpolation of each vertex over θ (docs/WRENCH_SPACE.md section 3.3).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Interpolation {
    /// Default `cubic`: r³ on spacing-scaled θ with an affine tail.
    pub kernel: Kernel,
    /// What a query outside the data's box gets. Default `extrapolate`.
    pub beyond_data: BeyondData,
    /// Whether the wrenches at tilt 0 are replaced by their mirror average ½(w_i + S w_π(i)),
    /// so that w_i(d, −φ) = S w_π(i)(d, φ) holds for the interpolant everywhere, φ → 0
    /// included. Default true: data loam generates (RFT, DEM) are symmetric up to rounding,
    /// and the average removes only that. `wrench-space import` writes false unless asked:
    /// measured data are taken as measured, the interpolant passes through every measured
    /// wrench, and the symmetry holds at the mirrored nodes (φ ≠ 0) but not at φ = 0 where
    /// the measurement is not symmetric (`wrench-space info` reports by how much, per node).
    pub mirror_average: bool,
}

impl Default for Interpolation {
    fn default() -> Self {
        Interpolation {
            kernel: Kernel::default(),
            beyond_data: BeyondData::default(),
            mirror_average: true,
        }
    }
}

/// What the wrench set answers at a configuration θ = (d, φ) below the surface but outside
/// the box of its data, [d_min, d_max] × [−φ_max, φ_max] (docs/WRENCH_SPACE.md, "Beyond the
/// data").
///
/// `extrapolate` (the default) keeps the terrain physical where a body can go but the data
/// do not: a foot loaded beyond the capacity of the deepest node must meet more resistance
/// deeper down, as a granular bed does (RFT: stress ∝ depth), or it sinks without limit; and
/// a foot that tips over must be able to lie down (|φ| up to π/2), which the paper allows by
/// clamping φ only to ±π/2 and letting its RBF extrapolate. Each vertex is extrapolated
/// *linearly* from the two outermost layers of the data, not by the RBF: the cubic RBF's
/// far field is a fit artefact, while a straight line from the last two layers continues
/// the rate the data show there. In detail, with b = w_i at the outermost layer and p = w_i
/// at the one before it (both interpolated at the query's other coordinate),
/// w_i = b + s (b − p)′, s ≥ 0 the distance beyond the outermost layer in layer spacings,
/// and (b − p)′ the step with any component that points against b removed (the step less
/// its projection on b when that projection is negative), so that |w_i| never drops below
/// |b|: the set keeps growing with depth and tilt, never shrinks below the boundary's.
/// Tilt first (|φ| > φ_max, up to π/2, from the layers φ_max and the next tilt), then depth
/// (d < d_min, from the layers d_min and the next depth). Between the surface and a
/// shallowest node below it (data without a d = 0 row) every vertex goes linearly to 0 at
/// the surface, where W = {0}. |φ| > π/2 is clamped to ±π/2 in either mode.
///
/// `clamp` moves θ into the box (the behaviour before extrapolation existed): the set stops
/// growing at the deepest node, so a load above its capacity sinks without limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BeyondData {
    #[default]
    Extrapolate,
    Clamp,
}

impl BeyondData {
    pub fn name(self) -> &'static str {
        match self {
            BeyondData::Extrapolate => "extrapolate",
            BeyondData::Clamp => "clamp",
        }
    }
}

/// Where the wrenches came from: the generator and its parameters, as text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Provenance {
    pub generator: String,
    pub parameters: BTreeMap<String, String>,
}

fn default_torque_point() -> f64 {
    DEFAULT_TORQUE_POINT
}

fn default_directions() -> Vec<[f64; 3]> {
    sphere_directions(3)
}

/// The paper's uniform spherical grid: the poles (0, ±1, 0) (straight down and up) and `rings`
/// rings of 8 directions, 45° apart in azimuth about the z axis, at elevations spread evenly
/// between the poles. `rings = 3` gives m = 26, `rings = 7` gives m = 58. Mirror-closed:
/// S_v maps azimuth a to a + 180°.
pub fn sphere_directions(rings: usize) -> Vec<[f64; 3]> {
    // Components that are zero in exact arithmetic are written as 0, and each direction's
    // mirror as its exact negation in x and ω: RFT's leading-element test (n·v > 0) is
    // discontinuous where a face slides along itself, so a 1e-17 rounding residue would
    // change a wrench by tens of newtons and break the data's mirror symmetry.
    let snap = |c: f64| if c.abs() < 1e-12 { 0.0 } else { c };
    let mut directions = vec![[0.0, -1.0, 0.0], [0.0, 1.0, 0.0]];
    for ring in 1..=rings {
        let elevation =
            -std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * ring as f64 / (rings + 1) as f64;
        let half: Vec<[f64; 3]> = (0..4)
            .map(|k| {
                let azimuth = std::f64::consts::FRAC_PI_4 * k as f64;
                [
                    snap(elevation.cos() * azimuth.cos()),
                    snap(elevation.sin()),
                    snap(elevation.cos() * azimuth.sin()),
                ]
            })
            .collect();
        directions.extend(&half);
        directions.extend(half.iter().map(mirror));
    }
    directions
}

/// A data file (or data set) that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum WrenchSpaceError {
    #[error("could not read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Displays as `FILE[:LINE[:COLUMN]][: FIELD]: MESSAGE`.
    #[error("{}{}{}: {message}", source_name(.file), location(*.line, *.column), field_prefix(.field))]
    Invalid {
        /// The data file; `None` for data built in memory.
        file: Option<PathBuf>,
        line: Option<usize>,
        column: Option<usize>,
        /// Dotted path of the offending field, e.g. `nodes[3].wrenches[7]`.
        field: Option<String>,
        /// What is wrong and what is accepted.
        message: String,
    },
}

fn source_name(file: &Option<PathBuf>) -> String {
    match file {
        Some(path) => path.display().to_string(),
        None => "wrench-space data".to_owned(),
    }
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        _ => String::new(),
    }
}

fn field_prefix(field: &Option<String>) -> String {
    field.as_ref().map(|f| format!(": {f}")).unwrap_or_default()
}

impl WrenchSpaceError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        WrenchSpaceError::Invalid {
            file: None,
            line: None,
            column: None,
            field: Some(field.into()),
            message: message.into(),
        }
    }

    /// The same error, naming `path` as the file it came from.
    pub fn in_file(self, path: &Path) -> Self {
        match self {
            WrenchSpaceError::Invalid {
                line,
                column,
                field,
                message,
                ..
            } => WrenchSpaceError::Invalid {
                file: Some(path.to_path_buf()),
                line,
                column,
                field,
                message,
            },
            read => read,
        }
    }
}

impl WrenchSpaceData {
    /// Checks everything the model relies on; returns the mirror permutation π of the
    /// directions (S_v u_i = u_π(i)).
    pub fn validate(&self) -> Result<Vec<usize>, WrenchSpaceError> {
        let positive = |field: &str, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(WrenchSpaceError::invalid(
                    field,
                    format!("must be a number > 0, got {value}"),
                ))
            }
        };
        positive("foot.width", self.foot.width)?;
        positive("foot.height", self.foot.height)?;
        positive("foot.thickness", self.foot.thickness)?;
        if !self.torque_point.is_finite() {
            return Err(WrenchSpaceError::invalid(
                "torque_point",
                "must be a finite number [m]",
            ));
        }
        for (axis, scale) in ["x", "z", "omega"].iter().zip(self.velocity_scale) {
            positive(&format!("velocity_scale ({axis})"), scale)?;
        }
        let mirror = self.validate_directions()?;
        self.validate_nodes()?;
        self.validate_weights()?;
        Ok(mirror)
    }

    fn validate_directions(&self) -> Result<Vec<usize>, WrenchSpaceError> {
        check_directions(&self.directions)
    }

    /// Weights that come with the data: a paper kernel, one list of m finite triples per node.
    fn validate_weights(&self) -> Result<(), WrenchSpaceError> {
        if self.rbf_weights.is_empty() {
            return Ok(());
        }
        if self.interpolation.kernel == super::Kernel::Cubic {
            return Err(WrenchSpaceError::invalid(
                "rbf_weights",
                "given weights need a kernel without an affine tail: interpolation.kernel \
                 paper_linear or paper_gaussian (cubic is always fitted)",
            ));
        }
        if self.rbf_weights.len() != self.nodes.len() {
            return Err(WrenchSpaceError::invalid(
                "rbf_weights",
                format!(
                    "one list per node: {} lists for {} nodes",
                    self.rbf_weights.len(),
                    self.nodes.len()
                ),
            ));
        }
        let m = self.directions.len();
        for (j, weights) in self.rbf_weights.iter().enumerate() {
            if weights.len() != m {
                return Err(WrenchSpaceError::invalid(
                    format!("rbf_weights[{j}]"),
                    format!(
                        "needs one weight triple per direction ({m}), got {}",
                        weights.len()
                    ),
                ));
            }
            if let Some(i) = weights
                .iter()
                .position(|w| w.iter().any(|c| !c.is_finite()))
            {
                return Err(WrenchSpaceError::invalid(
                    format!("rbf_weights[{j}][{i}]"),
                    "must be finite numbers",
                ));
            }
        }
        Ok(())
    }

    fn validate_nodes(&self) -> Result<(), WrenchSpaceError> {
        let m = self.directions.len();
        for (j, node) in self.nodes.iter().enumerate() {
            let at = |what: &str| format!("nodes[{j}].{what}");
            if !(node.depth.is_finite() && node.depth <= 0.0) {
                return Err(WrenchSpaceError::invalid(
                    at("depth"),
                    format!(
                        "must be <= 0 m (at or below the surface; above it the wrench space \
                         is {{0}}), got {}",
                        node.depth
                    ),
                ));
            }
            if !(node.tilt.is_finite() && node.tilt >= 0.0) {
                return Err(WrenchSpaceError::invalid(
                    at("tilt"),
                    format!(
                        "must be >= 0 rad (negative tilts are the mirror images, made by the \
                         model), got {}",
                        node.tilt
                    ),
                ));
            }
            if node.wrenches.len() != m {
                return Err(WrenchSpaceError::invalid(
                    at("wrenches"),
                    format!(
                        "needs one wrench per direction ({m}), got {}",
                        node.wrenches.len()
                    ),
                ));
            }
            for (i, w) in node.wrenches.iter().enumerate() {
                if w.iter().any(|c| !c.is_finite()) {
                    return Err(WrenchSpaceError::invalid(
                        format!("nodes[{j}].wrenches[{i}]"),
                        format!(
                            "the wrench at node (d = {}, tilt = {}) for direction {i} is not \
                             finite: ({}, {}, {})",
                            node.depth, node.tilt, w[0], w[1], w[2]
                        ),
                    ));
                }
            }
            if let Some(k) = (0..j)
                .find(|&k| self.nodes[k].depth == node.depth && self.nodes[k].tilt == node.tilt)
            {
                return Err(WrenchSpaceError::invalid(
                    at("depth"),
                    format!("repeats the node nodes[{k}]"),
                ));
            }
            if node.depth == 0.0 {
                if node.wrenches.iter().flatten().any(|&c| c != 0.0) {
                    return Err(WrenchSpaceError::invalid(
                        at("wrenches"),
                        "at the surface (depth 0) the wrench space is {0}: write zero wrenches",
                    ));
                }
            } else if let Some(ratio) = flatness(&node.wrenches) {
                return Err(WrenchSpaceError::invalid(
                    at("wrenches"),
                    format!(
                        "degenerate: below the surface the wrenches and the origin must span a \
                         volume, but they lie in one plane through the origin (smallest to \
                         largest spread {ratio:.1e}) at node (d = {}, tilt = {})",
                        node.depth, node.tilt
                    ),
                ));
            }
        }
        let distinct = |values: Vec<f64>| {
            let mut values = values;
            values.sort_by(f64::total_cmp);
            values.dedup();
            values.len()
        };
        let depths = distinct(self.nodes.iter().map(|n| n.depth).collect());
        let tilts = distinct(self.nodes.iter().map(|n| n.tilt).collect());
        if depths < 2 || !self.nodes.iter().any(|n| n.tilt > 0.0) {
            return Err(WrenchSpaceError::invalid(
                "nodes",
                format!(
                    "the interpolation needs nodes at 2 or more depths and at least one tilt \
                     > 0; got {} nodes at {depths} depths and {tilts} tilts",
                    self.nodes.len()
                ),
            ));
        }
        if !self.nodes.iter().any(|n| n.depth < 0.0) {
            return Err(WrenchSpaceError::invalid(
                "nodes",
                "needs at least one node below the surface",
            ));
        }
        Ok(())
    }

    /// The YAML text of the data: header fields as serde writes them, then one line per
    /// direction and per wrench (serde_yaml writes one line per number).
    pub fn to_yaml(&self) -> String {
        let mut text = String::new();
        let list = |v: &[f64; 3]| format!("[{}, {}, {}]", number(v[0]), number(v[1]), number(v[2]));
        let _ = writeln!(
            text,
            "# Wrench-space data (docs/WRENCH_SPACE.md, \"Implemented\")."
        );
        let _ = writeln!(text, "medium: {}", quoted(&self.medium));
        let _ = writeln!(
            text,
            "foot: {{width: {}, height: {}, thickness: {}}}",
            number(self.foot.width),
            number(self.foot.height),
            number(self.foot.thickness)
        );
        let _ = writeln!(text, "torque_point: {}", number(self.torque_point));
        let _ = writeln!(text, "velocity_scale: {}", list(&self.velocity_scale));
        // `beyond_data` only when it is not the default, so files written before it existed
        // are written the same.
        let mut beyond = match self.interpolation.beyond_data {
            BeyondData::Extrapolate => String::new(),
            other => format!(", beyond_data: {}", other.name()),
        };
        if !self.interpolation.mirror_average {
            beyond.push_str(", mirror_average: false");
        }
        let _ = writeln!(
            text,
            "interpolation: {{kernel: {}{beyond}}}",
            self.interpolation.kernel.name()
        );
        let _ = writeln!(text, "provenance:");
        let _ = writeln!(text, "  generator: {}", quoted(&self.provenance.generator));
        let _ = writeln!(text, "  parameters:");
        for (key, value) in &self.provenance.parameters {
            let _ = writeln!(text, "    {}: {}", quoted(key), quoted(value));
        }
        let _ = writeln!(text, "directions:");
        for u in &self.directions {
            let _ = writeln!(text, "  - {}", list(u));
        }
        let _ = writeln!(text, "nodes:");
        for node in &self.nodes {
            let _ = writeln!(text, "  - depth: {}", number(node.depth));
            let _ = writeln!(text, "    tilt: {}", number(node.tilt));
            let _ = writeln!(text, "    wrenches:");
            for w in &node.wrenches {
                let _ = writeln!(text, "      - {}", list(w));
            }
        }
        if !self.rbf_weights.is_empty() {
            let _ = writeln!(text, "rbf_weights:");
            for node in &self.rbf_weights {
                let _ = writeln!(text, "  -");
                for w in node {
                    let _ = writeln!(text, "    - {}", list(w));
                }
            }
        }
        text
    }
}

/// A number as YAML reads it back bit for bit (`.nan` and `.inf` for the non-finite).
fn number(x: f64) -> String {
    match x {
        x if x.is_nan() => ".nan".to_owned(),
        f64::INFINITY => ".inf".to_owned(),
        f64::NEG_INFINITY => "-.inf".to_owned(),
        x => format!("{x:?}"),
    }
}

/// A YAML double-quoted string (JSON's escaping is valid YAML).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// Checks a data set's directions alone (unit, distinct, mirror-closed, at least 4); returns
/// the mirror permutation π.
pub fn check_directions(directions: &[[f64; 3]]) -> Result<Vec<usize>, WrenchSpaceError> {
    let m = directions.len();
    if m < 4 {
        return Err(WrenchSpaceError::invalid(
            "directions",
            format!("needs at least 4 directions to span a volume, got {m}"),
        ));
    }
    for (i, u) in directions.iter().enumerate() {
        let norm = norm(u);
        if !norm.is_finite() || (norm - 1.0).abs() > DIRECTION_TOLERANCE {
            return Err(WrenchSpaceError::invalid(
                format!("directions[{i}]"),
                format!("must be a unit vector (x, z, omega), got length {norm}"),
            ));
        }
        if let Some(j) = (0..i).find(|&j| distance(u, &directions[j]) < DIRECTION_TOLERANCE) {
            return Err(WrenchSpaceError::invalid(
                format!("directions[{i}]"),
                format!("repeats directions[{j}]"),
            ));
        }
    }
    mirror_permutation(&directions).map_err(|i| {
        let u = directions[i];
        WrenchSpaceError::invalid(
            format!("directions[{i}]"),
            format!(
                "the directions must be mirror-closed: the mirror S_v = diag(-1, 1, -1) of \
                 ({}, {}, {}) is ({}, {}, {}), which is not in the list",
                u[0], u[1], u[2], -u[0], u[1], -u[2]
            ),
        )
    })
}

/// π with S_v u_i = u_π(i), or the first direction without a mirror partner.
pub(crate) fn mirror_permutation(directions: &[[f64; 3]]) -> Result<Vec<usize>, usize> {
    directions
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let mirrored = mirror(u);
            directions
                .iter()
                .position(|v| distance(&mirrored, v) < DIRECTION_TOLERANCE)
                .ok_or(i)
        })
        .collect()
}

/// S = diag(−1, 1, −1): the mirror of a wrench (and S_v of a direction).
pub fn mirror(w: &[f64; 3]) -> [f64; 3] {
    [-w[0], w[1], -w[2]]
}

/// The largest |w_i − S w_π(i)| component.
pub fn asymmetry(wrenches: &[[f64; 3]], mirror_of: &[usize]) -> f64 {
    wrenches
        .iter()
        .zip(mirror_of)
        .flat_map(|(w, &p)| {
            let image = mirror(&wrenches[p]);
            (0..3).map(move |c| (w[c] - image[c]).abs())
        })
        .fold(0.0, f64::max)
}

/// `Some(λ_min / λ_max)` of the wrenches' second-moment matrix Σ w wᵀ when it is (nearly)
/// rank-deficient: the points and the origin lie in one plane and their hull has no volume.
fn flatness(wrenches: &[[f64; 3]]) -> Option<f64> {
    let moment = wrenches.iter().fold(nalgebra::Matrix3::zeros(), |sum, w| {
        let v = nalgebra::Vector3::from(*w);
        sum + v * v.transpose()
    });
    let eigen = nalgebra::SymmetricEigen::new(moment).eigenvalues;
    let (low, high) = (eigen.min(), eigen.max());
    let ratio = if high > 0.0 { low.max(0.0) / high } else { 0.0 };
    (ratio < 1e-12).then_some(ratio)
}

fn norm(u: &[f64; 3]) -> f64 {
    (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt()
}

fn distance(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    norm(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]])
}
