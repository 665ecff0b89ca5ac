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
//!
//! Files: `parse.rs` (OBJ and STL), `grid.rs` ([`GridSdf`]), `distance.rs` (the exact distance
//! the grid samples).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::sdf::{norm, Vec3};

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

mod distance;
mod grid;
mod parse;

pub use grid::GridSdf;
pub use parse::{parse_obj, parse_stl};

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
