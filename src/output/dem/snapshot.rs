//! Snapshots for ParaView, written by loam itself: the grains and the bodies' surfaces at one
//! simulated time, and a [`Series`] of them. Every file carries its time and is written whole
//! or not at all; values are single precision (plenty for viewing; checkpoints keep f64).
//!
//! Snapshot `i` of a series (`NNNN` = i with four digits):
//! - `grains_NNNN.vtk`: legacy VTK POLYDATA, a point and a VERTICES cell per grain, point data
//!   `radius` (m), `velocity` (m/s) and `speed` (m/s), and the time as the field-data array
//!   `TIME` (VisIt's convention for legacy files);
//! - `grains_NNNN.ply`: the same grains as binary PLY, the time in a `comment time <t>` line;
//! - `bodies_NNNN.vtk`: the bodies as triangles (POLYGONS) where they were, cell data `body`
//!   (the body's index), the same `TIME` array;
//! - `grains_NNNN.vtp`, `bodies_NNNN.vtp`: the same two data sets as VTK XML PolyData with the
//!   time as the field-data array `TimeValue`, which is what the series lists, because
//!   ParaView's `.pvd` reader reads only XML VTK files;
//! - `snapshots.pvd`: the series, each snapshot at `timestep="t"`, part 0 the grains and part 1
//!   the bodies; rewritten after each snapshot, so it never lists a file not yet written.
//!
//! In ParaView, open `snapshots.pvd`: the time slider steps through the simulated times.
//! Extract block 0 and apply a Glyph filter with "Sphere" glyphs scaled by `radius` (scale
//! factor 2, since the sphere source has unit diameter) coloured by `speed`; block 1 is the
//! bodies as surfaces.

use std::path::{Path, PathBuf};

use crate::output::{write_atomic, write_files_atomic, OutputError};
use crate::sim::dem::sdf::Vec3;
use crate::sim::dem::surface::Surface;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(
        "{}: particle arrays differ in length: {positions} positions, {radii} radii, \
         {velocities} velocities (each must have one entry per grain)",
        path.display()
    )]
    LengthMismatch {
        path: PathBuf,
        positions: usize,
        radii: usize,
        velocities: usize,
    },
    #[error(
        "{}: {count} points is more than a legacy VTK file can index (at most {})",
        path.display(), i32::MAX / 4
    )]
    TooMany { path: PathBuf, count: usize },
    #[error(
        "{}: a triangle of body {body} has corner {corner}, but the body has {vertices} vertices",
        path.display()
    )]
    BadTriangle {
        path: PathBuf,
        body: usize,
        corner: u32,
        vertices: usize,
    },
    #[error(
        "{}: snapshot time {time} s is not finite or not after the series' last, {last} s",
        path.display()
    )]
    BadTime { path: PathBuf, time: f64, last: f64 },
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// The grains of one snapshot: one entry per grain in each array.
#[derive(Clone, Copy, Debug)]
pub struct Grains<'a> {
    /// Centres [m].
    pub positions: &'a [Vec3],
    /// Radii [m].
    pub radii: &'a [f64],
    /// Velocities [m/s].
    pub velocities: &'a [Vec3],
}

impl Grains<'_> {
    fn check(&self, path: &Path) -> Result<(), SnapshotError> {
        let n = self.positions.len();
        if self.radii.len() != n || self.velocities.len() != n {
            return Err(SnapshotError::LengthMismatch {
                path: path.to_path_buf(),
                positions: n,
                radii: self.radii.len(),
                velocities: self.velocities.len(),
            });
        }
        Ok(())
    }

    fn poly_data(&self, path: &Path, time: f64) -> Result<PolyData, SnapshotError> {
        self.check(path)?;
        let speed = |v: &Vec3| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        PolyData {
            title: "loam DEM particles",
            time,
            points: f32s(self.positions.iter().flatten().copied()),
            cells: Cells::Vertices,
            point_data: vec![
                ("radius", Values::Scalars(f32s(self.radii.iter().copied()))),
                (
                    "velocity",
                    Values::Vectors(f32s(self.velocities.iter().flatten().copied())),
                ),
                (
                    "speed",
                    Values::Scalars(f32s(self.velocities.iter().map(speed))),
                ),
            ],
            cell_data: Vec::new(),
        }
        .checked(path)
    }
}

fn f32s(values: impl Iterator<Item = f64>) -> Vec<f32> {
    values.map(|x| x as f32).collect()
}

/// The bodies' surfaces (already placed) as one data set: their triangles in order, each
/// with cell data `body`, the index of its body.
fn bodies_poly_data(path: &Path, time: f64, bodies: &[Surface]) -> Result<PolyData, SnapshotError> {
    let mut points = Vec::new();
    let mut triangles = Vec::new();
    let mut body_of = Vec::new();
    for (body, surface) in bodies.iter().enumerate() {
        let first = (points.len() / 3) as u32;
        let vertices = surface.vertices.len();
        for t in &surface.triangles {
            if let Some(&corner) = t.iter().find(|&&c| c as usize >= vertices) {
                return Err(SnapshotError::BadTriangle {
                    path: path.to_path_buf(),
                    body,
                    corner,
                    vertices,
                });
            }
            triangles.push(t.map(|c| first + c));
            body_of.push(body as i32);
        }
        points.extend(f32s(surface.vertices.iter().flatten().copied()));
    }
    PolyData {
        title: "loam DEM bodies",
        time,
        points,
        cells: Cells::Triangles(triangles),
        point_data: Vec::new(),
        cell_data: vec![("body", Values::Integers(body_of))],
    }
    .checked(path)
}

/// Writes the grains as a legacy VTK file (version 3.0, BINARY, big-endian as the format
/// requires) with their time `time` [s]; see the module docs for its contents.
pub fn write_vtk(path: &Path, time: f64, grains: &Grains) -> Result<(), SnapshotError> {
    write_atomic(path, &grains.poly_data(path, time)?.legacy())?;
    Ok(())
}

/// Writes the grains as binary little-endian PLY: one `vertex` element per grain with float
/// properties x, y, z (m), radius (m), vx, vy, vz (m/s), the time in a `comment time <t>`
/// header line (`t` in seconds, as Rust prints an f64: it reads back exactly).
pub fn write_ply(path: &Path, time: f64, grains: &Grains) -> Result<(), SnapshotError> {
    grains.check(path)?;
    write_atomic(path, &ply(time, grains))?;
    Ok(())
}

fn ply(time: f64, grains: &Grains) -> Vec<u8> {
    let n = grains.positions.len();
    let mut out = Vec::with_capacity(28 * n + 256);
    out.extend(
        format!(
            "ply\nformat binary_little_endian 1.0\ncomment loam DEM particles\n\
             comment time {time}\nelement vertex {n}\nproperty float x\nproperty float y\n\
             property float z\nproperty float radius\nproperty float vx\nproperty float vy\n\
             property float vz\nend_header\n"
        )
        .as_bytes(),
    );
    let rows = grains
        .positions
        .iter()
        .zip(grains.radii)
        .zip(grains.velocities);
    for ((p, &r), v) in rows {
        for x in [p[0], p[1], p[2], r, v[0], v[1], v[2]] {
            out.extend((x as f32).to_le_bytes());
        }
    }
    out
}

/// Writes the bodies' surfaces, each already placed ([`Surface::placed`]), as one legacy VTK
/// POLYDATA file of triangles with its time; see the module docs.
pub fn write_bodies_vtk(path: &Path, time: f64, bodies: &[Surface]) -> Result<(), SnapshotError> {
    write_atomic(path, &bodies_poly_data(path, time, bodies)?.legacy())?;
    Ok(())
}

/// A time series of snapshots in one folder, listed in `snapshots.pvd` (see the module docs).
pub struct Series {
    dir: PathBuf,
    /// (time, grains file, bodies file) of each snapshot written.
    written: Vec<(f64, String, Option<String>)>,
}

impl Series {
    /// The series' index file.
    pub const INDEX: &'static str = "snapshots.pvd";

    /// Starts a series in `dir`, first removing the files of an earlier series there (its
    /// index first, so that it never lists a missing file); other files are left alone.
    pub fn create(dir: &Path) -> Result<Series, SnapshotError> {
        remove_if_present(&dir.join(Series::INDEX))?;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
                if is_series_file(&path) {
                    remove_if_present(&path)?;
                }
            }
        }
        Ok(Series {
            dir: dir.to_path_buf(),
            written: Vec::new(),
        })
    }

    /// The folder the series is written to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Snapshots written so far.
    pub fn len(&self) -> usize {
        self.written.len()
    }

    pub fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// Writes the next snapshot, the grains and the bodies' surfaces (already placed) at
    /// `time` [s], after every earlier one; then rewrites the index to list it. With no
    /// bodies, the snapshot has no bodies files and no part 1.
    pub fn add(
        &mut self,
        time: f64,
        grains: &Grains,
        bodies: &[Surface],
    ) -> Result<(), SnapshotError> {
        let index = self.dir.join(Series::INDEX);
        let last = self.written.last().map_or(f64::NEG_INFINITY, |w| w.0);
        if !(time.is_finite() && time > last) {
            return Err(SnapshotError::BadTime {
                path: index,
                time,
                last,
            });
        }
        let i = self.written.len();
        let name = |what: &str, ext: &str| format!("{what}_{i:04}.{ext}");
        let path = |name: &str| self.dir.join(name);
        let grains_vtp = name("grains", "vtp");
        let grains_data = grains.poly_data(&path(&grains_vtp), time)?;
        let mut files = vec![
            (path(&name("grains", "vtk")), grains_data.legacy()),
            (path(&name("grains", "ply")), ply(time, grains)),
            (path(&grains_vtp), grains_data.xml()),
        ];
        let bodies_vtp = (!bodies.is_empty()).then(|| name("bodies", "vtp"));
        if let Some(vtp) = &bodies_vtp {
            let data = bodies_poly_data(&path(vtp), time, bodies)?;
            files.push((path(&name("bodies", "vtk")), data.legacy()));
            files.push((path(vtp), data.xml()));
        }
        let files: Vec<(&Path, &[u8])> = files
            .iter()
            .map(|(p, b)| (p.as_path(), b.as_slice()))
            .collect();
        write_files_atomic(&files)?;
        self.written.push((time, grains_vtp, bodies_vtp));
        write_atomic(&index, self.index().as_bytes())?;
        Ok(())
    }

    /// The `.pvd` collection: every snapshot written, part 0 the grains, part 1 the bodies.
    fn index(&self) -> String {
        let mut out = String::from(
            "<?xml version=\"1.0\"?>\n\
             <VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  \
             <Collection>\n",
        );
        for (time, grains, bodies) in &self.written {
            let parts = std::iter::once((0, "grains", grains))
                .chain(bodies.as_ref().map(|b| (1, "bodies", b)));
            for (part, name, file) in parts {
                out += &format!(
                    "    <DataSet timestep=\"{time}\" part=\"{part}\" name=\"{name}\" \
                     file=\"{file}\"/>\n"
                );
            }
        }
        out += "  </Collection>\n</VTKFile>\n";
        out
    }
}

fn remove_if_present(path: &Path) -> Result<(), SnapshotError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(OutputError {
            path: path.to_path_buf(),
            source: e,
        }
        .into()),
        _ => Ok(()),
    }
}

/// `grains_NNNN.{vtk,ply,vtp}` or `bodies_NNNN.{vtk,vtp}`: a file a [`Series`] writes.
fn is_series_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let Some((what, number)) = stem.split_once('_') else {
        return false;
    };
    let known = match what {
        "grains" => matches!(ext, "vtk" | "ply" | "vtp"),
        "bodies" => matches!(ext, "vtk" | "vtp"),
        _ => false,
    };
    known && number.len() >= 4 && number.bytes().all(|b| b.is_ascii_digit())
}

// ---------------------------------------------------------------------------------------------
// Poly data, in the two VTK encodings
// ---------------------------------------------------------------------------------------------

enum Cells {
    /// One VERTICES cell per point.
    Vertices,
    Triangles(Vec<[u32; 3]>),
}

enum Values {
    Scalars(Vec<f32>),
    /// Three per tuple.
    Vectors(Vec<f32>),
    Integers(Vec<i32>),
}

impl Values {
    fn components(&self) -> usize {
        match self {
            Values::Vectors(_) => 3,
            _ => 1,
        }
    }

    /// Big-endian (legacy) or little-endian (XML) bytes.
    fn bytes(&self, big_endian: bool) -> Vec<u8> {
        match self {
            Values::Scalars(v) | Values::Vectors(v) => f32_bytes(v, big_endian),
            Values::Integers(v) => i32_bytes(v.iter().copied(), big_endian),
        }
    }
}

fn f32_bytes(values: &[f32], big_endian: bool) -> Vec<u8> {
    words(values.iter().map(|x| x.to_bits()), big_endian)
}

fn i32_bytes(values: impl Iterator<Item = i32>, big_endian: bool) -> Vec<u8> {
    words(values.map(|x| x as u32), big_endian)
}

/// 32-bit words in the byte order asked for.
fn words(values: impl Iterator<Item = u32>, big_endian: bool) -> Vec<u8> {
    values
        .flat_map(|x| {
            if big_endian {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            }
        })
        .collect()
}

/// Points, their cells and the data on them, at one time: what both encodings write.
struct PolyData {
    title: &'static str,
    time: f64,
    /// x, y, z of each point.
    points: Vec<f32>,
    cells: Cells,
    point_data: Vec<(&'static str, Values)>,
    cell_data: Vec<(&'static str, Values)>,
}

impl PolyData {
    /// The data set, if a legacy file can index it (`path` names it in the error).
    fn checked(self, path: &Path) -> Result<PolyData, SnapshotError> {
        // Cell lists hold up to four integers per cell.
        let count = self.point_count().max(self.cell_count());
        if count > (i32::MAX / 4) as usize {
            return Err(SnapshotError::TooMany {
                path: path.to_path_buf(),
                count,
            });
        }
        Ok(self)
    }

    fn point_count(&self) -> usize {
        self.points.len() / 3
    }

    fn cell_count(&self) -> usize {
        match &self.cells {
            Cells::Vertices => self.point_count(),
            Cells::Triangles(t) => t.len(),
        }
    }

    /// The corners of each cell, the first `count` of the array.
    fn cell_corners(&self) -> Box<dyn Iterator<Item = ([i32; 3], usize)> + '_> {
        match &self.cells {
            Cells::Vertices => Box::new((0..self.point_count() as i32).map(|i| ([i, 0, 0], 1))),
            Cells::Triangles(t) => Box::new(t.iter().map(|t| (t.map(|c| c as i32), 3))),
        }
    }

    /// Legacy VTK, version 3.0, BINARY (big-endian), each binary block ending in a newline.
    fn legacy(&self) -> Vec<u8> {
        let (n, m) = (self.point_count(), self.cell_count());
        let mut out = Vec::with_capacity(64 * n + 512);
        out.extend(
            format!(
                "# vtk DataFile Version 3.0\n{}\nBINARY\nDATASET POLYDATA\n\
                 FIELD FieldData 1\nTIME 1 1 double\n",
                self.title
            )
            .as_bytes(),
        );
        out.extend(self.time.to_be_bytes());
        out.extend(format!("\nPOINTS {n} float\n").as_bytes());
        out.extend(f32_bytes(&self.points, true));
        let (keyword, per_cell) = match self.cells {
            Cells::Vertices => ("VERTICES", 2),
            Cells::Triangles(_) => ("POLYGONS", 4),
        };
        out.extend(format!("\n{keyword} {m} {}\n", per_cell * m).as_bytes());
        let cells = self
            .cell_corners()
            .flat_map(|(c, count)| std::iter::once(count as i32).chain(c.into_iter().take(count)));
        out.extend(i32_bytes(cells, true));
        out.push(b'\n');
        for (section, count, arrays) in [
            ("POINT_DATA", n, &self.point_data),
            ("CELL_DATA", m, &self.cell_data),
        ] {
            if arrays.is_empty() {
                continue;
            }
            out.extend(format!("{section} {count}\n").as_bytes());
            for (name, values) in arrays {
                let header = match values {
                    Values::Scalars(_) => format!("SCALARS {name} float 1\nLOOKUP_TABLE default\n"),
                    Values::Vectors(_) => format!("VECTORS {name} float\n"),
                    Values::Integers(_) => format!("SCALARS {name} int 1\nLOOKUP_TABLE default\n"),
                };
                out.extend(header.as_bytes());
                out.extend(values.bytes(true));
                out.push(b'\n');
            }
        }
        out
    }

    /// VTK XML PolyData (version 1.0), the arrays appended raw and little-endian, each after
    /// its UInt64 byte count; the time as the field-data array `TimeValue`.
    fn xml(&self) -> Vec<u8> {
        let (n, m) = (self.point_count(), self.cell_count());
        let mut appended: Vec<u8> = Vec::new();
        let mut append = |bytes: Vec<u8>| {
            let offset = appended.len();
            appended.extend((bytes.len() as u64).to_le_bytes());
            appended.extend(bytes);
            offset
        };
        let array = |kind: &str, name: &str, components: usize, offset: usize| {
            format!(
                "        <DataArray type=\"{kind}\" Name=\"{name}\" \
                 NumberOfComponents=\"{components}\" format=\"appended\" offset=\"{offset}\"/>\n"
            )
        };
        let mut xml = format!(
            "<?xml version=\"1.0\"?>\n\
             <VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" \
             header_type=\"UInt64\">\n  <PolyData>\n    <FieldData>\n      \
             <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" \
             format=\"ascii\">{}</DataArray>\n    </FieldData>\n",
            self.time
        );
        let (verts, polys) = match self.cells {
            Cells::Vertices => (m, 0),
            Cells::Triangles(_) => (0, m),
        };
        xml += &format!(
            "    <Piece NumberOfPoints=\"{n}\" NumberOfVerts=\"{verts}\" NumberOfLines=\"0\" \
             NumberOfStrips=\"0\" NumberOfPolys=\"{polys}\">\n"
        );
        for (section, arrays) in [
            ("PointData", &self.point_data),
            ("CellData", &self.cell_data),
        ] {
            if arrays.is_empty() {
                continue;
            }
            xml += &format!("      <{section}>\n");
            for (name, values) in arrays {
                let kind = match values {
                    Values::Integers(_) => "Int32",
                    _ => "Float32",
                };
                let offset = append(values.bytes(false));
                xml += &array(kind, name, values.components(), offset);
            }
            xml += &format!("      </{section}>\n");
        }
        let offset = append(f32_bytes(&self.points, false));
        xml += "      <Points>\n";
        xml += &array("Float32", "Points", 3, offset);
        xml += "      </Points>\n";
        let section = match self.cells {
            Cells::Vertices => "Verts",
            Cells::Triangles(_) => "Polys",
        };
        let mut ends = Vec::with_capacity(m);
        let mut connectivity = Vec::new();
        for (corners, count) in self.cell_corners() {
            connectivity.extend(&corners[..count]);
            ends.push(connectivity.len() as i32);
        }
        xml += &format!("      <{section}>\n");
        let offset = append(i32_bytes(connectivity.into_iter(), false));
        xml += &array("Int32", "connectivity", 1, offset);
        let offset = append(i32_bytes(ends.into_iter(), false));
        xml += &array("Int32", "offsets", 1, offset);
        xml += &format!("      </{section}>\n");
        xml += "    </Piece>\n  </PolyData>\n  <AppendedData encoding=\"raw\">\n   _";
        let mut out = xml.into_bytes();
        out.extend(appended);
        out.extend(b"\n  </AppendedData>\n</VTKFile>\n");
        out
    }
}
