//! Closed triangle meshes from OBJ and STL files, and the gridded signed distance field a
//! mesh body collides through.
//!
//! Loading welds vertices that sit at exactly the same position (STL stores a triangle soup;
//! OBJ exporters often split vertices at texture seams), then checks that the surface is
//! closed and consistently oriented: every edge shared by exactly two triangles that run it
//! in opposite directions. A closed surface wound inwards is turned outwards (its signed
//! volume tells), so that the field is negative inside whatever the exporter did.
//!
//! [`GridSdf::from_mesh`] samples the exact distance to the nearest triangle at the points of
//! a regular grid and signs it with the angle-weighted pseudonormal of the nearest feature
//! (Bærentzen and Aanæs, IEEE TVCG 11(3), 2005), which is exact for a closed, consistently
//! oriented mesh. Between grid points the field is trilinear.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::sdf::{norm, normalized, Sdf, Vec3};

/// Grids larger than this are refused rather than filling memory (8 bytes a point).
pub const MAX_GRID_POINTS: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    #[error("could not read mesh {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: unknown mesh format (accepted: .obj, .stl in ASCII or binary)", path.display())]
    UnknownFormat { path: PathBuf },
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "{}: triangle {triangle} refers to vertices {corners:?}, but there are {vertices} \
         (indices start at 0)",
        path.display()
    )]
    BadIndex {
        path: PathBuf,
        triangle: usize,
        corners: [usize; 3],
        vertices: usize,
    },
    #[error("{}: binary STL: {message}", path.display())]
    BinaryStl { path: PathBuf, message: String },
    #[error("{}: the mesh has no triangles (a body needs a closed surface)", path.display())]
    Empty { path: PathBuf },
    #[error(
        "{}: the mesh is not closed: {open_edges} open edge(s) (not shared by exactly two \
         triangles) and {misoriented_edges} edge(s) shared by two triangles wound the same way; \
         e.g. the edge from {:?} to {:?}",
        path.display(), example[0], example[1]
    )]
    NotClosed {
        path: PathBuf,
        open_edges: usize,
        misoriented_edges: usize,
        example: [Vec3; 2],
    },
    #[error("{}: the mesh encloses no volume (signed volume {volume:e} m^3)", path.display())]
    NoVolume { path: PathBuf, volume: f64 },
    #[error("grid spacing must be positive and finite, got {spacing}")]
    BadSpacing { spacing: f64 },
    #[error("grid padding must be non-negative and finite, got {padding}")]
    BadPadding { padding: f64 },
    #[error(
        "a grid of {points} points (spacing {spacing} m) exceeds the limit of {max} points; \
         use a coarser spacing"
    )]
    GridTooLarge {
        points: usize,
        spacing: f64,
        max: usize,
    },
}

/// A closed, outward-oriented triangle mesh (counter-clockwise seen from outside). Only
/// [`TriangleMesh::load`] and [`TriangleMesh::new`] make one, so every mesh is checked.
#[derive(Clone, Debug, PartialEq)]
pub struct TriangleMesh {
    vertices: Vec<Vec3>,
    triangles: Vec<[usize; 3]>,
}

impl TriangleMesh {
    /// Vertex positions, each distinct.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// Corner indices into [`TriangleMesh::vertices`], counter-clockwise seen from outside.
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// Reads an OBJ or STL file (by extension; STL in ASCII or binary, detected), welds it
    /// and checks that it is closed.
    pub fn load(path: &Path) -> Result<TriangleMesh, MeshError> {
        let bytes = std::fs::read(path).map_err(|source| MeshError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        let soup = match extension.as_deref() {
            Some("obj") => {
                let text = std::str::from_utf8(&bytes).map_err(|e| MeshError::Parse {
                    path: path.to_path_buf(),
                    line: line_of_offset(&bytes, e.valid_up_to()),
                    message: "not UTF-8 text".into(),
                })?;
                parse_obj(text, path)?
            }
            Some("stl") => parse_stl(&bytes, path)?,
            _ => {
                return Err(MeshError::UnknownFormat {
                    path: path.to_path_buf(),
                })
            }
        };
        TriangleMesh::closed(soup.0, soup.1, path)
    }

    /// Builds a mesh from vertices and counter-clockwise triangles, welding coincident
    /// vertices and checking closure; `source` names the mesh in errors.
    pub fn new(
        vertices: Vec<Vec3>,
        triangles: Vec<[usize; 3]>,
        source: &Path,
    ) -> Result<TriangleMesh, MeshError> {
        if let Some((k, t)) = triangles
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&i| i >= vertices.len()))
        {
            return Err(MeshError::BadIndex {
                path: source.to_path_buf(),
                triangle: k,
                corners: *t,
                vertices: vertices.len(),
            });
        }
        TriangleMesh::closed(vertices, triangles, source)
    }

    fn closed(
        vertices: Vec<Vec3>,
        triangles: Vec<[usize; 3]>,
        path: &Path,
    ) -> Result<TriangleMesh, MeshError> {
        let mut mesh = weld(vertices, triangles);
        if mesh.triangles.is_empty() {
            return Err(MeshError::Empty {
                path: path.to_path_buf(),
            });
        }
        mesh.check_closed(path)?;
        let volume = mesh.signed_volume();
        let (lo, hi) = mesh.bounds();
        let size = norm(sub(hi, lo));
        if volume.abs() <= 1e-12 * size.powi(3) {
            return Err(MeshError::NoVolume {
                path: path.to_path_buf(),
                volume,
            });
        }
        if volume < 0.0 {
            for t in &mut mesh.triangles {
                t.swap(1, 2);
            }
        }
        Ok(mesh)
    }

    /// Every undirected edge must be used once in each direction.
    fn check_closed(&self, path: &Path) -> Result<(), MeshError> {
        // (forward uses, backward uses) of each edge, keyed by (low, high) vertex index.
        let mut uses: HashMap<(usize, usize), (u32, u32)> = HashMap::new();
        for t in &self.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let entry = uses.entry((a.min(b), a.max(b))).or_default();
                if a < b {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                }
            }
        }
        let mut open = Vec::new();
        let mut misoriented = Vec::new();
        for (&edge, &(forward, backward)) in &uses {
            if forward + backward != 2 {
                open.push(edge);
            } else if forward != 1 {
                misoriented.push(edge);
            }
        }
        if open.is_empty() && misoriented.is_empty() {
            return Ok(());
        }
        open.sort_unstable();
        misoriented.sort_unstable();
        let (a, b) = open.first().or(misoriented.first()).copied().unwrap();
        Err(MeshError::NotClosed {
            path: path.to_path_buf(),
            open_edges: open.len(),
            misoriented_edges: misoriented.len(),
            example: [self.vertices[a], self.vertices[b]],
        })
    }

    /// The enclosed volume, positive when the triangles wind counter-clockwise seen from
    /// outside.
    pub fn signed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i]);
                dot(a, cross(b, c)) / 6.0
            })
            .sum()
    }

    /// The axis-aligned bounding box (low corner, high corner).
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for v in &self.vertices {
            for i in 0..3 {
                lo[i] = lo[i].min(v[i]);
                hi[i] = hi[i].max(v[i]);
            }
        }
        (lo, hi)
    }

    /// The triangles as corner positions.
    pub fn triangle_positions(&self) -> impl Iterator<Item = [Vec3; 3]> + '_ {
        self.triangles.iter().map(|t| t.map(|i| self.vertices[i]))
    }
}

/// Merges vertices at bit-identical positions and drops unreferenced ones, keeping the
/// first-seen order. Triangles left with a repeated corner have no area and cancel their
/// own edges, so they are dropped.
fn weld(vertices: Vec<Vec3>, triangles: Vec<[usize; 3]>) -> TriangleMesh {
    let key = |v: Vec3| v.map(|x| if x == 0.0 { 0u64 } else { x.to_bits() });
    let mut index: HashMap<[u64; 3], usize> = HashMap::new();
    let mut welded = Vec::new();
    let mut remap = vec![usize::MAX; vertices.len()];
    let triangles = triangles
        .into_iter()
        .map(|t| {
            t.map(|i| {
                if remap[i] == usize::MAX {
                    remap[i] = *index.entry(key(vertices[i])).or_insert_with(|| {
                        welded.push(vertices[i]);
                        welded.len() - 1
                    });
                }
                remap[i]
            })
        })
        .filter(|t: &[usize; 3]| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
        .collect();
    TriangleMesh {
        vertices: welded,
        triangles,
    }
}

fn line_of_offset(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count()
}

type Soup = (Vec<Vec3>, Vec<[usize; 3]>);

/// Wavefront OBJ: `v x y z [w]` and `f` lines (3 or more corners, fan-triangulated; corners
/// written `i`, `i/t`, `i//n` or `i/t/n`; negative indices count back from the last vertex
/// read). Every other statement (normals, texture coordinates, groups, materials) is
/// ignored: a body needs only its surface.
pub fn parse_obj(text: &str, path: &Path) -> Result<Soup, MeshError> {
    let error = |line: usize, message: String| MeshError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut vertices: Vec<Vec3> = Vec::new();
    // Faces with their line, resolved once every vertex is known (OBJ lets a positive index
    // refer forward).
    let mut faces: Vec<(usize, Vec<i64>)> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let content = raw.split('#').next().unwrap_or("");
        let mut tokens = content.split_whitespace();
        match tokens.next() {
            Some("v") => {
                let fields: Vec<&str> = tokens.collect();
                if !(3..=4).contains(&fields.len()) {
                    return Err(error(
                        line,
                        format!(
                            "a vertex needs 3 coordinates (`v x y z`, optionally w), got {}",
                            fields.len()
                        ),
                    ));
                }
                let mut v = [0.0; 3];
                for (i, field) in fields[..3].iter().enumerate() {
                    v[i] = field
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| {
                            error(
                                line,
                                format!("vertex coordinate `{field}` is not a finite number"),
                            )
                        })?;
                }
                vertices.push(v);
            }
            Some("f") => {
                let mut corners = Vec::new();
                for field in tokens {
                    let index = field.split('/').next().unwrap_or("");
                    let i: i64 = index.parse().map_err(|_| {
                        error(
                            line,
                            format!(
                                "face corner `{field}` is not a vertex index \
                                 (accepted: i, i/t, i//n, i/t/n with i a non-zero integer)"
                            ),
                        )
                    })?;
                    let resolved = match i {
                        0 => {
                            return Err(error(
                                line,
                                "face corner index 0 (OBJ indices start at 1; negative ones \
                                 count back from the last vertex)"
                                    .into(),
                            ))
                        }
                        i if i < 0 => {
                            let back = vertices.len() as i64 + i;
                            if back < 0 {
                                return Err(error(
                                    line,
                                    format!(
                                        "face corner {i} reaches back past the first vertex \
                                         ({} vertices read so far)",
                                        vertices.len()
                                    ),
                                ));
                            }
                            back
                        }
                        i => i - 1,
                    };
                    corners.push(resolved);
                }
                if corners.len() < 3 {
                    return Err(error(
                        line,
                        format!("a face needs at least 3 corners, got {}", corners.len()),
                    ));
                }
                faces.push((line, corners));
            }
            _ => {}
        }
    }
    let mut triangles = Vec::new();
    for (line, corners) in faces {
        if let Some(&bad) = corners.iter().find(|&&i| i as usize >= vertices.len()) {
            return Err(error(
                line,
                format!(
                    "face refers to vertex {} but the file has {} vertices",
                    bad + 1,
                    vertices.len()
                ),
            ));
        }
        let c: Vec<usize> = corners.into_iter().map(|i| i as usize).collect();
        for k in 1..c.len() - 1 {
            let t = [c[0], c[k], c[k + 1]];
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                return Err(error(
                    line,
                    format!(
                        "face repeats a vertex ({} {} {})",
                        t[0] + 1,
                        t[1] + 1,
                        t[2] + 1
                    ),
                ));
            }
            triangles.push(t);
        }
    }
    Ok((vertices, triangles))
}

/// STL, binary or ASCII. A file whose length is exactly 84 + 50 n bytes, n being the count
/// stored at byte 80, is binary (binary files may also begin with `solid`); otherwise it
/// must be ASCII. Coordinates are single precision in both forms (ASCII values are read as
/// f32), so the two encodings of one mesh give identical triangles.
pub fn parse_stl(bytes: &[u8], path: &Path) -> Result<Soup, MeshError> {
    if bytes.len() >= 84 {
        let count = u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as usize;
        if bytes.len() == 84 + 50 * count {
            return Ok(parse_binary_stl(&bytes[84..], count));
        }
    }
    let starts_solid = bytes
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take(5)
        .eq(b"solid".iter());
    if !starts_solid {
        let message = if bytes.len() >= 84 {
            let count = u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as u64;
            format!(
                "the header says {count} triangles, so the file should be {} bytes, but it is \
                 {} bytes (and it is not ASCII STL, which starts with `solid`)",
                84 + 50 * count,
                bytes.len()
            )
        } else {
            format!(
                "{} bytes is shorter than a binary STL header (84 bytes), and the file does not \
                 start with `solid` as ASCII STL does",
                bytes.len()
            )
        };
        return Err(MeshError::BinaryStl {
            path: path.to_path_buf(),
            message,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| MeshError::Parse {
        path: path.to_path_buf(),
        line: line_of_offset(bytes, e.valid_up_to()),
        message: "ASCII STL is not UTF-8 text".into(),
    })?;
    parse_ascii_stl(text, path)
}

fn parse_binary_stl(records: &[u8], count: usize) -> Soup {
    let mut vertices = Vec::with_capacity(3 * count);
    let mut triangles = Vec::with_capacity(count);
    for record in records.chunks_exact(50) {
        // 12 bytes of normal (ignored: the winding decides), 3 × 12 bytes of corners,
        // 2 bytes of attributes.
        for corner in 0..3 {
            let at = 12 + 12 * corner;
            let f = |k: usize| {
                let start = at + 4 * k;
                f32::from_le_bytes(record[start..start + 4].try_into().unwrap()) as f64
            };
            vertices.push([f(0), f(1), f(2)]);
        }
        let n = vertices.len();
        triangles.push([n - 3, n - 2, n - 1]);
    }
    (vertices, triangles)
}

fn parse_ascii_stl(text: &str, path: &Path) -> Result<Soup, MeshError> {
    let error = |line: usize, message: String| MeshError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    let mut in_loop: Option<usize> = None; // the line `outer loop` was on
    let mut corners = 0;
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let mut tokens = raw.split_whitespace();
        match tokens.next() {
            Some("vertex") => {
                if in_loop.is_none() {
                    return Err(error(line, "`vertex` outside `outer loop`".into()));
                }
                let fields: Vec<&str> = tokens.collect();
                if fields.len() != 3 {
                    return Err(error(
                        line,
                        format!(
                            "`vertex` needs 3 coordinates, got {} (accepted: `vertex x y z`)",
                            fields.len()
                        ),
                    ));
                }
                let mut v = [0.0; 3];
                for (i, field) in fields.iter().enumerate() {
                    v[i] = field
                        .parse::<f32>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .ok_or_else(|| {
                            error(
                                line,
                                format!("vertex coordinate `{field}` is not a finite number"),
                            )
                        })? as f64;
                }
                vertices.push(v);
                corners += 1;
            }
            Some("outer") => {
                in_loop = Some(line);
                corners = 0;
            }
            Some("endloop") => {
                let start = in_loop
                    .take()
                    .ok_or_else(|| error(line, "`endloop` without `outer loop`".into()))?;
                if corners != 3 {
                    return Err(error(
                        start,
                        format!("a facet needs exactly 3 vertices, this loop has {corners}"),
                    ));
                }
                let n = vertices.len();
                triangles.push([n - 3, n - 2, n - 1]);
            }
            Some("solid") | Some("facet") | Some("endfacet") | Some("endsolid") | None => {}
            Some(other) => {
                return Err(error(
                    line,
                    format!(
                        "unexpected `{other}` (accepted: solid, facet normal, outer loop, \
                         vertex, endloop, endfacet, endsolid)"
                    ),
                ))
            }
        }
    }
    if let Some(start) = in_loop {
        return Err(error(
            start,
            "`outer loop` never closed by `endloop`".into(),
        ));
    }
    Ok((vertices, triangles))
}

/// A signed distance field sampled on a regular grid and interpolated trilinearly.
#[derive(Clone, Debug, PartialEq)]
pub struct GridSdf {
    origin: Vec3,
    spacing: f64,
    dims: [usize; 3],
    values: Vec<f64>,
}

impl GridSdf {
    /// Position of grid point (0, 0, 0).
    pub fn origin(&self) -> Vec3 {
        self.origin
    }

    /// Distance between neighbouring grid points (m).
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// Points along x, y and z (each at least 2).
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// Signed distances at the grid points, x fastest: point (i, j, k) is at
    /// i + nx (j + ny k).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Samples the signed distance to `mesh` on a grid of the given spacing covering the
    /// mesh's bounding box grown by `padding` on every side. The field is exact at grid
    /// points; between them the trilinear interpolant of a 1-Lipschitz field is within
    /// √3·spacing of the true distance.
    pub fn from_mesh(
        mesh: &TriangleMesh,
        spacing: f64,
        padding: f64,
    ) -> Result<GridSdf, MeshError> {
        if !(spacing > 0.0 && spacing.is_finite()) {
            return Err(MeshError::BadSpacing { spacing });
        }
        if !(padding >= 0.0 && padding.is_finite()) {
            return Err(MeshError::BadPadding { padding });
        }
        let (lo, hi) = mesh.bounds();
        let origin = lo.map(|x| x - padding);
        let mut dims = [0usize; 3];
        let mut points: usize = 1;
        for i in 0..3 {
            let cells = ((hi[i] + padding - origin[i]) / spacing).ceil().max(1.0);
            if cells > MAX_GRID_POINTS as f64 {
                return Err(MeshError::GridTooLarge {
                    points: usize::MAX,
                    spacing,
                    max: MAX_GRID_POINTS,
                });
            }
            dims[i] = cells as usize + 1;
            points = points.saturating_mul(dims[i]);
        }
        if points > MAX_GRID_POINTS {
            return Err(MeshError::GridTooLarge {
                points,
                spacing,
                max: MAX_GRID_POINTS,
            });
        }
        let field = MeshDistance::new(mesh);
        let [nx, ny, _] = dims;
        let mut values = vec![0.0; points];
        // Rows along x in parallel; along a row, the neighbour's distance plus the spacing
        // bounds the next one (the field is 1-Lipschitz), which prunes the search to a few
        // triangles.
        values
            .par_chunks_mut(nx)
            .enumerate()
            .for_each(|(row, out)| {
                let (j, k) = (row % ny, row / ny);
                let y = origin[1] + j as f64 * spacing;
                let z = origin[2] + k as f64 * spacing;
                let mut bound = f64::INFINITY;
                for (i, value) in out.iter_mut().enumerate() {
                    let p = [origin[0] + i as f64 * spacing, y, z];
                    *value = field.signed_distance(p, bound);
                    bound = value.abs() + spacing;
                }
            });
        Ok(GridSdf {
            origin,
            spacing,
            dims,
            values,
        })
    }

    /// The far corner of the grid.
    pub fn upper_corner(&self) -> Vec3 {
        [0, 1, 2].map(|i| self.origin[i] + (self.dims[i] - 1) as f64 * self.spacing)
    }

    fn value(&self, i: usize, j: usize, k: usize) -> f64 {
        self.values[i + self.dims[0] * (j + self.dims[1] * k)]
    }

    /// The cell holding `p` (already inside the grid box) and the fractions within it.
    fn cell(&self, p: Vec3) -> ([usize; 3], Vec3) {
        let mut cell = [0; 3];
        let mut t = [0.0; 3];
        for a in 0..3 {
            let x = (p[a] - self.origin[a]) / self.spacing;
            let c = (x.floor().max(0.0) as usize).min(self.dims[a] - 2);
            cell[a] = c;
            t[a] = (x - c as f64).clamp(0.0, 1.0);
        }
        (cell, t)
    }

    /// Trilinear value and gradient at a point inside the grid box.
    fn interpolate(&self, p: Vec3) -> (f64, Vec3) {
        let ([i, j, k], [tx, ty, tz]) = self.cell(p);
        let c = |a, b, d| self.value(i + a, j + b, k + d);
        let (c000, c100, c010, c110) = (c(0, 0, 0), c(1, 0, 0), c(0, 1, 0), c(1, 1, 0));
        let (c001, c101, c011, c111) = (c(0, 0, 1), c(1, 0, 1), c(0, 1, 1), c(1, 1, 1));
        let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
        let x00 = lerp(c000, c100, tx);
        let x10 = lerp(c010, c110, tx);
        let x01 = lerp(c001, c101, tx);
        let x11 = lerp(c011, c111, tx);
        let y0 = lerp(x00, x10, ty);
        let y1 = lerp(x01, x11, ty);
        let value = lerp(y0, y1, tz);
        let dx = lerp(
            lerp(c100 - c000, c110 - c010, ty),
            lerp(c101 - c001, c111 - c011, ty),
            tz,
        );
        let dy = lerp(x10 - x00, x11 - x01, tz);
        let dz = y1 - y0;
        let h = self.spacing;
        (value, [dx / h, dy / h, dz / h])
    }

    fn clamp_to_grid(&self, p: Vec3) -> Vec3 {
        let hi = self.upper_corner();
        [0, 1, 2].map(|i| p[i].clamp(self.origin[i], hi[i]))
    }
}

impl Sdf for GridSdf {
    fn grid(&self) -> Option<&GridSdf> {
        Some(self)
    }

    /// Trilinear inside the grid; outside, the distance to the grid box plus the value at
    /// the nearest point of the box (an upper bound that keeps the field continuous).
    fn distance(&self, p: Vec3) -> f64 {
        let q = self.clamp_to_grid(p);
        norm(sub(p, q)) + self.interpolate(q).0
    }

    fn gradient(&self, p: Vec3) -> Vec3 {
        let q = self.clamp_to_grid(p);
        let (_, mut g) = self.interpolate(q);
        let away = sub(p, q);
        let d = norm(away);
        if d > 0.0 {
            for i in 0..3 {
                if away[i] != 0.0 {
                    g[i] = away[i] / d;
                }
            }
        }
        normalized(g)
    }

    /// The grid points inside the body (value ≤ 0), grown by one spacing and kept within
    /// the grid: the surface lies within a spacing of an inside point, so this holds the body.
    fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let [nx, ny, _] = self.dims;
        let mut lo = [usize::MAX; 3];
        let mut hi = [0; 3];
        for (index, _) in self.values.iter().enumerate().filter(|(_, &v)| v <= 0.0) {
            let ijk = [index % nx, index / nx % ny, index / (nx * ny)];
            for a in 0..3 {
                lo[a] = lo[a].min(ijk[a]);
                hi[a] = hi[a].max(ijk[a]);
            }
        }
        if lo[0] == usize::MAX {
            return None;
        }
        let at = |a: usize, i: usize| self.origin[a] + i as f64 * self.spacing;
        Some((
            [0, 1, 2].map(|a| at(a, lo[a].saturating_sub(1))),
            [0, 1, 2].map(|a| at(a, (hi[a] + 1).min(self.dims[a] - 1))),
        ))
    }
}

/// Exact signed distance to a closed mesh: nearest triangle through a bounding volume
/// hierarchy, sign from the angle-weighted pseudonormal of the nearest feature.
struct MeshDistance<'a> {
    mesh: &'a TriangleMesh,
    face_normals: Vec<Vec3>,
    vertex_normals: Vec<Vec3>,
    edge_normals: HashMap<(usize, usize), Vec3>,
    nodes: Vec<Node>,
    order: Vec<usize>,
}

struct Node {
    lo: Vec3,
    hi: Vec3,
    /// Leaf: triangles order[start..end]; inner: children at `start` and `end`.
    start: usize,
    end: usize,
    leaf: bool,
}

/// Where on a triangle the nearest point lies.
#[derive(Clone, Copy)]
enum Feature {
    Face,
    Vertex(usize),
    /// The edge from corner k to corner k+1.
    Edge(usize),
}

const LEAF_SIZE: usize = 4;

impl<'a> MeshDistance<'a> {
    fn new(mesh: &'a TriangleMesh) -> Self {
        let mut face_normals = Vec::with_capacity(mesh.triangles.len());
        let mut vertex_normals = vec![[0.0; 3]; mesh.vertices.len()];
        let mut edge_normals: HashMap<(usize, usize), Vec3> = HashMap::new();
        for t in &mesh.triangles {
            let [a, b, c] = t.map(|i| mesh.vertices[i]);
            let n = normalized(cross(sub(b, a), sub(c, a)));
            face_normals.push(n);
            for k in 0..3 {
                let (i, j, l) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
                let (v, v1, v2) = (mesh.vertices[i], mesh.vertices[j], mesh.vertices[l]);
                let angle = angle_between(sub(v1, v), sub(v2, v));
                vertex_normals[i] = add(vertex_normals[i], scale(n, angle));
                let e = edge_normals.entry((i.min(j), i.max(j))).or_default();
                *e = add(*e, n);
            }
        }
        let mut tree = MeshDistance {
            mesh,
            face_normals,
            vertex_normals,
            edge_normals,
            nodes: Vec::new(),
            order: (0..mesh.triangles.len()).collect(),
        };
        let centroids: Vec<Vec3> = mesh
            .triangle_positions()
            .map(|[a, b, c]| scale(add(add(a, b), c), 1.0 / 3.0))
            .collect();
        tree.build(0, mesh.triangles.len(), &centroids);
        tree
    }

    /// Builds the subtree over order[start..end] and returns its node index.
    fn build(&mut self, start: usize, end: usize, centroids: &[Vec3]) -> usize {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for &t in &self.order[start..end] {
            for &v in &self.mesh.triangles[t] {
                let p = self.mesh.vertices[v];
                for i in 0..3 {
                    lo[i] = lo[i].min(p[i]);
                    hi[i] = hi[i].max(p[i]);
                }
            }
        }
        let index = self.nodes.len();
        self.nodes.push(Node {
            lo,
            hi,
            start,
            end,
            leaf: true,
        });
        if end - start > LEAF_SIZE {
            let extent = sub(hi, lo);
            let axis = if extent[0] >= extent[1] && extent[0] >= extent[2] {
                0
            } else if extent[1] >= extent[2] {
                1
            } else {
                2
            };
            let mid = (start + end) / 2;
            self.order[start..end].select_nth_unstable_by(mid - start, |&a, &b| {
                centroids[a][axis].total_cmp(&centroids[b][axis])
            });
            let left = self.build(start, mid, centroids);
            let right = self.build(mid, end, centroids);
            self.nodes[index] = Node {
                lo,
                hi,
                start: left,
                end: right,
                leaf: false,
            };
        }
        index
    }

    /// The signed distance at `p`, given that the unsigned one is at most `bound`.
    fn signed_distance(&self, p: Vec3, bound: f64) -> f64 {
        // A little slack so that round-off in the bound never hides the nearest triangle.
        let slack = 1e-9 * (1.0 + bound);
        let first = (bound + slack).powi(2);
        self.search(p, first)
            .or_else(|| self.search(p, f64::INFINITY))
            .expect("a mesh with triangles has a nearest one")
    }

    /// Nearest triangle closer than √`limit_squared`, signed by the pseudonormal there.
    fn search(&self, p: Vec3, limit_squared: f64) -> Option<f64> {
        let mut best = (limit_squared, usize::MAX, [0.0; 3], Feature::Face);
        // Depth is about log2(triangles / LEAF_SIZE); 64 levels cannot overflow.
        let mut stack = [0usize; 64];
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let n = stack[depth];
            let node = &self.nodes[n];
            if box_distance_squared(p, node.lo, node.hi) >= best.0 {
                continue;
            }
            if node.leaf {
                for &t in &self.order[node.start..node.end] {
                    let corners = self.mesh.triangles[t].map(|i| self.mesh.vertices[i]);
                    let (q, feature) = closest_point_on_triangle(p, corners);
                    let d2 = norm_squared(sub(p, q));
                    if d2 < best.0 {
                        best = (d2, t, q, feature);
                    }
                }
            } else {
                // Visit the nearer child first so that the bound tightens early.
                let (a, b) = (node.start, node.end);
                let da = box_distance_squared(p, self.nodes[a].lo, self.nodes[a].hi);
                let db = box_distance_squared(p, self.nodes[b].lo, self.nodes[b].hi);
                let (near, far) = if da < db { (a, b) } else { (b, a) };
                stack[depth] = far;
                stack[depth + 1] = near;
                depth += 2;
            }
        }
        let (d2, t, q, feature) = best;
        if t == usize::MAX {
            return None;
        }
        let tri = self.mesh.triangles[t];
        let pseudonormal = match feature {
            Feature::Face => self.face_normals[t],
            Feature::Vertex(k) => self.vertex_normals[tri[k]],
            Feature::Edge(k) => {
                let (i, j) = (tri[k], tri[(k + 1) % 3]);
                self.edge_normals[&(i.min(j), i.max(j))]
            }
        };
        let d = d2.sqrt();
        Some(if dot(sub(p, q), pseudonormal) < 0.0 {
            -d
        } else {
            d
        })
    }
}

/// Nearest point of triangle abc to p, and which feature it lies on (Ericson, Real-Time
/// Collision Detection, 5.1.5, by Voronoi regions).
fn closest_point_on_triangle(p: Vec3, [a, b, c]: [Vec3; 3]) -> (Vec3, Feature) {
    let ab = sub(b, a);
    let ac = sub(c, a);
    let ap = sub(p, a);
    let d1 = dot(ab, ap);
    let d2 = dot(ac, ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Feature::Vertex(0));
    }
    let bp = sub(p, b);
    let d3 = dot(ab, bp);
    let d4 = dot(ac, bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Feature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (add(a, scale(ab, v)), Feature::Edge(0));
    }
    let cp = sub(p, c);
    let d5 = dot(ab, cp);
    let d6 = dot(ac, cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Feature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (add(a, scale(ac, w)), Feature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (add(b, scale(sub(c, b), w)), Feature::Edge(1));
    }
    let denom = 1.0 / (va + vb + vc);
    let v = vb * denom;
    let w = vc * denom;
    (add(a, add(scale(ab, v), scale(ac, w))), Feature::Face)
}

fn box_distance_squared(p: Vec3, lo: Vec3, hi: Vec3) -> f64 {
    (0..3)
        .map(|i| {
            let d = (lo[i] - p[i]).max(p[i] - hi[i]).max(0.0);
            d * d
        })
        .sum()
}

fn angle_between(u: Vec3, v: Vec3) -> f64 {
    norm(cross(u, v)).atan2(dot(u, v))
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn scale(a: Vec3, s: f64) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm_squared(a: Vec3) -> f64 {
    dot(a, a)
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
