//! Particle output: VTK and PLY snapshots with their time, the bodies' surfaces where the
//! bodies are, and the ParaView series that lists them, all parsed back; and the side-view PNG
//! render checked pixel by pixel where the scene says what must be there.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::pvd::{attribute, read_pvd};
use loam::output::dem::render::{
    render_png, render_side_view, speed_colour, viridis, RenderError, RenderInput, SideView,
    BACKGROUND, OUTLINE, PANEL_PX,
};
use loam::output::dem::snapshot::{
    write_bodies_vtk, write_ply, write_vtk, Grains, Series, SnapshotError,
};
use loam::sim::dem::mesh::{GridSdf, TriangleMesh};
use loam::sim::dem::sdf::{Sdf, Shape, Vec3};
use loam::sim::dem::surface::{Rotation, Surface, IDENTITY, ROUND_SEGMENTS};
use loam::sim::dem::{BodyGeometry, Container};

struct Rng(u64);

impl Rng {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        lo + (hi - lo) * (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loam-dem-output-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A handful of grains with distinct values in every field.
fn grains(n: usize) -> (Vec<Vec3>, Vec<f64>, Vec<Vec3>) {
    let mut rng = Rng(3);
    let positions = (0..n)
        .map(|_| [0, 1, 2].map(|_| rng.uniform(-0.1, 0.1)))
        .collect();
    let radii = (0..n).map(|_| rng.uniform(0.001, 0.002)).collect();
    let velocities = (0..n)
        .map(|_| [0, 1, 2].map(|_| rng.uniform(-1.0, 1.0)))
        .collect();
    (positions, radii, velocities)
}

/// Reads lines and big- or little-endian arrays from a byte buffer.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn line(&mut self) -> String {
        let end = self.at
            + self.bytes[self.at..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap();
        let line = String::from_utf8(self.bytes[self.at..end].to_vec()).unwrap();
        self.at = end + 1;
        line
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let slice = &self.bytes[self.at..self.at + n];
        self.at += n;
        slice
    }

    /// `n` 4-byte words and the newline that ends a binary block.
    fn words(&mut self, n: usize) -> Vec<[u8; 4]> {
        let words = self
            .take(4 * n)
            .chunks_exact(4)
            .map(|c| c.try_into().unwrap())
            .collect();
        assert_eq!(self.take(1), b"\n", "binary block ends with a newline");
        words
    }

    fn f32s_be(&mut self, n: usize) -> Vec<f32> {
        self.words(n).into_iter().map(f32::from_be_bytes).collect()
    }

    fn i32s_be(&mut self, n: usize) -> Vec<i32> {
        self.words(n).into_iter().map(i32::from_be_bytes).collect()
    }

    /// The legacy header up to the dataset, and its `TIME` field-data value.
    fn legacy_header(&mut self, title: &str) -> f64 {
        assert_eq!(self.line(), "# vtk DataFile Version 3.0");
        assert_eq!(self.line(), title);
        assert_eq!(self.line(), "BINARY");
        assert_eq!(self.line(), "DATASET POLYDATA");
        assert_eq!(self.line(), "FIELD FieldData 1");
        assert_eq!(self.line(), "TIME 1 1 double");
        let time = f64::from_be_bytes(self.take(8).try_into().unwrap());
        assert_eq!(self.take(1), b"\n");
        time
    }
}

fn close_f32(stored: f32, exact: f64) -> bool {
    (stored as f64 - exact).abs() <= 1e-7 * exact.abs().max(1e-3)
}

#[test]
fn vtk_snapshot_reads_back() {
    let n = 37;
    let (positions, radii, velocities) = grains(n);
    let dir = scratch("vtk");
    let path = dir.join("frame_0001.vtk");
    let time = 0.0725;
    let grains = Grains {
        positions: &positions,
        radii: &radii,
        velocities: &velocities,
    };
    write_vtk(&path, time, &grains).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut c = Cursor {
        bytes: &bytes,
        at: 0,
    };
    assert_eq!(c.legacy_header("loam DEM particles"), time);
    assert_eq!(c.line(), format!("POINTS {n} float"));
    let points = c.f32s_be(3 * n);
    assert_eq!(c.line(), format!("VERTICES {n} {}", 2 * n));
    let cells: Vec<i32> = c
        .take(8 * n)
        .chunks_exact(4)
        .map(|b| i32::from_be_bytes(b.try_into().unwrap()))
        .collect();
    c.take(1);
    assert_eq!(c.line(), format!("POINT_DATA {n}"));
    assert_eq!(c.line(), "SCALARS radius float 1");
    assert_eq!(c.line(), "LOOKUP_TABLE default");
    let radius = c.f32s_be(n);
    assert_eq!(c.line(), "VECTORS velocity float");
    let velocity = c.f32s_be(3 * n);
    assert_eq!(c.line(), "SCALARS speed float 1");
    assert_eq!(c.line(), "LOOKUP_TABLE default");
    let speed = c.f32s_be(n);
    assert_eq!(c.at, bytes.len(), "nothing after the last array");

    for i in [0, 1, 17, n - 1] {
        for k in 0..3 {
            assert!(close_f32(points[3 * i + k], positions[i][k]));
            assert!(close_f32(velocity[3 * i + k], velocities[i][k]));
        }
        assert!(close_f32(radius[i], radii[i]));
        let v = velocities[i];
        assert!(close_f32(
            speed[i],
            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
        ));
        assert_eq!(&cells[2 * i..2 * i + 2], &[1, i as i32]);
    }
    // Written atomically: no temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("frame_0001.vtk")]);
}

#[test]
fn ply_snapshot_reads_back() {
    let n = 25;
    let (positions, radii, velocities) = grains(n);
    let path = scratch("ply").join("frame.ply");
    let time = 1.0 / 3.0;
    let grains = Grains {
        positions: &positions,
        radii: &radii,
        velocities: &velocities,
    };
    write_ply(&path, time, &grains).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut c = Cursor {
        bytes: &bytes,
        at: 0,
    };
    assert_eq!(c.line(), "ply");
    assert_eq!(c.line(), "format binary_little_endian 1.0");
    let mut properties = Vec::new();
    let mut count = None;
    let mut times = Vec::new();
    loop {
        let line = c.line();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["end_header"] => break,
            ["element", "vertex", k] => count = Some(k.parse::<usize>().unwrap()),
            ["property", "float", name] => properties.push(name.to_string()),
            ["comment", "time", t] => times.push(t.parse::<f64>().unwrap()),
            ["comment", ..] => {}
            _ => panic!("unexpected header line {line:?}"),
        }
    }
    assert_eq!(times, [time], "one `comment time` line, exact");
    assert_eq!(count, Some(n));
    assert_eq!(properties, ["x", "y", "z", "radius", "vx", "vy", "vz"]);
    let values: Vec<f32> = c
        .take(28 * n)
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(c.at, bytes.len());
    for i in [0, 9, n - 1] {
        let row = &values[7 * i..7 * i + 7];
        let p = positions[i];
        let v = velocities[i];
        let expected = [p[0], p[1], p[2], radii[i], v[0], v[1], v[2]];
        for k in 0..7 {
            assert!(close_f32(row[k], expected[k]), "grain {i} field {k}");
        }
    }
}

#[test]
fn snapshots_reject_arrays_of_different_lengths() {
    let (positions, radii, velocities) = grains(5);
    let path = scratch("mismatch").join("x.vtk");
    let short = Grains {
        positions: &positions,
        radii: &radii[..4],
        velocities: &velocities,
    };
    let err = write_vtk(&path, 0.0, &short).unwrap_err();
    assert!(
        matches!(err, SnapshotError::LengthMismatch { radii: 4, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("5 positions, 4 radii, 5 velocities"),
        "{err}"
    );
    let short = Grains {
        positions: &positions,
        radii: &radii,
        velocities: &velocities[..2],
    };
    assert!(write_ply(&path, 0.0, &short).is_err());
    assert!(!path.exists());
}

// ---------------------------------------------------------------------------------------------
// The bodies' surfaces and the series
// ---------------------------------------------------------------------------------------------

fn foot_mesh() -> TriangleMesh {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/meshes/foot_disc.obj");
    TriangleMesh::load(&path).unwrap()
}

/// A quarter turn about z.
const QUARTER_TURN: Rotation = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]];

/// The volume a closed, outward-wound triangle surface encloses (divergence theorem), with
/// vertices taken relative to `centre` to keep single precision's rounding small.
fn enclosed_volume(vertices: &[Vec3], triangles: &[[usize; 3]], centre: Vec3) -> f64 {
    let rel = |i: usize| [0, 1, 2].map(|k| vertices[i][k] - centre[k]);
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(rel);
            let cross = [
                b[1] * c[2] - b[2] * c[1],
                b[2] * c[0] - b[0] * c[2],
                b[0] * c[1] - b[1] * c[0],
            ];
            (a[0] * cross[0] + a[1] * cross[1] + a[2] * cross[2]) / 6.0
        })
        .sum()
}

/// A legacy bodies file read back: its time, and per body (by the `body` cell data) its
/// vertices and triangles with corners renumbered from 0.
struct BodiesFile {
    time: f64,
    bodies: Vec<(Vec<Vec3>, Vec<[usize; 3]>)>,
}

fn read_bodies_vtk(path: &Path) -> BodiesFile {
    let bytes = std::fs::read(path).unwrap();
    let mut c = Cursor {
        bytes: &bytes,
        at: 0,
    };
    let time = c.legacy_header("loam DEM bodies");
    let n: usize = c
        .line()
        .strip_prefix("POINTS ")
        .unwrap()
        .strip_suffix(" float")
        .unwrap()
        .parse()
        .unwrap();
    let points: Vec<Vec3> = c
        .f32s_be(3 * n)
        .chunks_exact(3)
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    let header = c.line();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(words[0], "POLYGONS", "{header}");
    let m: usize = words[1].parse().unwrap();
    assert_eq!(words[2], (4 * m).to_string(), "{header}");
    let cells = c.i32s_be(4 * m);
    assert_eq!(c.line(), format!("CELL_DATA {m}"));
    assert_eq!(c.line(), "SCALARS body int 1");
    assert_eq!(c.line(), "LOOKUP_TABLE default");
    let body_of = c.i32s_be(m);
    assert_eq!(c.at, bytes.len(), "nothing after the last array");

    // Each body's triangles, with corners as numbered in the file.
    let mut triangles_of: Vec<Vec<[usize; 3]>> = Vec::new();
    for (k, cell) in cells.chunks_exact(4).enumerate() {
        assert_eq!(cell[0], 3, "triangle {k} is a triangle");
        let body = body_of[k] as usize;
        if body == triangles_of.len() {
            triangles_of.push(Vec::new());
        }
        assert_eq!(body, triangles_of.len() - 1, "bodies in order");
        triangles_of[body].push([1, 2, 3].map(|j| cell[j] as usize));
    }
    // Each body's vertices follow the last body's.
    let mut bodies = Vec::new();
    let mut at = 0;
    for triangles in triangles_of {
        let corners = triangles.iter().flatten();
        assert_eq!(
            *corners.clone().min().unwrap(),
            at,
            "vertices in body order"
        );
        let end = corners.max().unwrap() + 1;
        let local = triangles.iter().map(|t| t.map(|c| c - at)).collect();
        bodies.push((points[at..end].to_vec(), local));
        at = end;
    }
    assert_eq!(at, n, "every point belongs to a body");
    BodiesFile { time, bodies }
}

fn assert_near(a: Vec3, b: Vec3, tolerance: f64, what: &str) {
    let gap = (0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f64::max);
    assert!(gap <= tolerance, "{what}: {a:?} vs {b:?} (off by {gap:e})");
}

/// Every kind of body, placed and written, reads back where it was put: the disc, box and
/// mesh with the triangles they are made of and the volume they enclose (so closed and wound
/// outward), the box turned by the rotation given, the plane as a square the container's size,
/// and a distance field without its mesh as a box that holds the body.
#[test]
fn bodies_read_back_where_they_are() {
    let container = Container::Box {
        half_x: 0.1,
        half_y: 0.06,
    };
    let (radius, thickness) = (0.038, 0.005);
    let disc = Shape::Disc { radius, thickness };
    let half = [0.02, 0.01, 0.005];
    let mesh = foot_mesh();
    let field = BodyGeometry::Field(Arc::new(GridSdf::from_mesh(&mesh, 0.001, 0.003).unwrap()));
    let at: [Vec3; 5] = [
        [0.013, -0.004, 0.0712],
        [-0.05, 0.02, 0.03],
        [0.04, 0.0, 0.09],
        [0.0, 0.0, 0.001],
        [-0.02, 0.01, 0.12],
    ];
    let surfaces = [
        Surface::of_geometry(&BodyGeometry::Shape(disc), None, &container).unwrap(),
        Surface::of_shape(&Shape::Box { half_extents: half }, &container),
        Surface::of_geometry(&field, Some(&mesh), &container).unwrap(),
        Surface::of_shape(&Shape::Plane, &container),
        Surface::of_geometry(&field, None, &container).unwrap(),
    ];
    let rotations = [IDENTITY, QUARTER_TURN, IDENTITY, IDENTITY, IDENTITY];
    let placed: Vec<Surface> = (0..5)
        .map(|i| surfaces[i].placed(at[i], &rotations[i]))
        .collect();
    let path = scratch("bodies").join("bodies_0007.vtk");
    let time = 0.123;
    write_bodies_vtk(&path, time, &placed).unwrap();
    let file = read_bodies_vtk(&path);
    assert_eq!(file.time, time);
    assert_eq!(file.bodies.len(), 5);
    let counts: Vec<usize> = file.bodies.iter().map(|b| b.1.len()).collect();
    assert_eq!(
        counts,
        [4 * ROUND_SEGMENTS, 12, mesh.triangles().len(), 2, 12]
    );
    let tol = 1e-6;

    // The disc: rings at ±thickness/2 about its centre, on its radius, and the two cap centres.
    let (vertices, triangles) = &file.bodies[0];
    for v in vertices {
        let rel = [0, 1, 2].map(|k| v[k] - at[0][k]);
        assert!((rel[2].abs() - 0.5 * thickness).abs() <= tol, "{v:?}");
        let rho = rel[0].hypot(rel[1]);
        assert!((rho - radius).abs() <= tol || rho <= tol, "{v:?}");
    }
    let n = ROUND_SEGMENTS as f64;
    let prism = 0.5 * n * (std::f64::consts::TAU / n).sin() * radius * radius * thickness;
    let volume = enclosed_volume(vertices, triangles, at[0]);
    assert!((volume / prism - 1.0).abs() < 1e-4, "{volume} vs {prism}");

    // The box, a quarter turn about z: its x and y half widths swap.
    let (vertices, triangles) = &file.bodies[1];
    for v in vertices {
        let rel = [0, 1, 2].map(|k| (v[k] - at[1][k]).abs());
        assert_near(rel, [half[1], half[0], half[2]], tol, "box corner");
    }
    let volume = enclosed_volume(vertices, triangles, at[1]);
    let exact = 8.0 * half[0] * half[1] * half[2];
    assert!((volume / exact - 1.0).abs() < 1e-4, "{volume} vs {exact}");

    // The mesh: its own vertices and triangles, moved.
    let (vertices, triangles) = &file.bodies[2];
    for (v, m) in vertices.iter().zip(mesh.vertices()) {
        assert_near(*v, [0, 1, 2].map(|k| m[k] + at[2][k]), tol, "mesh vertex");
    }
    assert_eq!(triangles.as_slice(), mesh.triangles());
    let volume = enclosed_volume(vertices, triangles, at[2]);
    assert!((volume / mesh.signed_volume() - 1.0).abs() < 1e-4);

    // The plane: the container's rectangle at the body's height.
    let (vertices, _) = &file.bodies[3];
    for v in vertices {
        let rel = [0, 1, 2].map(|k| (v[k] - at[3][k]).abs());
        assert_near(rel, [0.1, 0.06, 0.0], tol, "plane corner");
    }

    // The field alone: a box holding the mesh, within two grid spacings of its bounds.
    let (vertices, _) = &file.bodies[4];
    let (lo, hi) = mesh.bounds();
    for v in vertices {
        for k in 0..3 {
            let rel = v[k] - at[4][k];
            let (near_lo, near_hi) = (lo[k] - rel, rel - hi[k]);
            assert!(
                (-5e-5..=0.002 + tol).contains(&near_lo)
                    || (-5e-5..=0.002 + tol).contains(&near_hi),
                "axis {k}: {rel} vs the mesh's {} .. {}",
                lo[k],
                hi[k]
            );
        }
    }
}

/// The time a `.vtp` file carries (`TimeValue`), and its points (appended raw data).
fn read_vtp(path: &Path) -> (f64, Vec<Vec3>) {
    let bytes = std::fs::read(path).unwrap();
    let marker = b"<AppendedData encoding=\"raw\">\n   _";
    let start = bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .expect("appended data")
        + marker.len();
    let header = std::str::from_utf8(&bytes[..start]).unwrap();
    let time_tag = header
        .lines()
        .find(|l| l.contains("Name=\"TimeValue\""))
        .expect("a TimeValue array");
    let time: f64 = time_tag
        .split_once('>')
        .unwrap()
        .1
        .split_once('<')
        .unwrap()
        .0
        .trim()
        .parse()
        .unwrap();
    let points_tag = header
        .lines()
        .find(|l| l.contains("Name=\"Points\""))
        .expect("a Points array");
    let n: usize = attribute(
        header.lines().find(|l| l.contains("<Piece")).unwrap(),
        "NumberOfPoints",
    )
    .parse()
    .unwrap();
    let at = start + attribute(points_tag, "offset").parse::<usize>().unwrap();
    let length = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    assert_eq!(length, 12 * n);
    let points = bytes[at + 8..at + 8 + length]
        .chunks_exact(12)
        .map(|p| {
            [0, 1, 2].map(|k| f32::from_le_bytes(p[4 * k..4 * k + 4].try_into().unwrap()) as f64)
        })
        .collect();
    assert!(bytes.ends_with(b"\n  </AppendedData>\n</VTKFile>\n"));
    (time, points)
}

/// A series of snapshots: the `.pvd` lists every snapshot written and only those, at its time
/// (increasing), grains as part 0 and bodies as part 1; each file carries the same time and
/// the foot where it was; an earlier series in the folder is cleared first, other files kept;
/// a time not after the last is refused and leaves the series as it was.
#[test]
fn series_lists_every_snapshot_with_its_time() {
    let dir = scratch("series");
    std::fs::write(dir.join("grains_0009.vtk"), "an earlier series").unwrap();
    std::fs::write(dir.join("snapshots.pvd"), "an earlier index").unwrap();
    std::fs::write(dir.join("notes.txt"), "the user's").unwrap();
    let container = Container::Cylinder { radius: 0.05 };
    let foot = Surface::of_shape(
        &Shape::Disc {
            radius: 0.038,
            thickness: 0.005,
        },
        &container,
    );
    let (positions, radii, velocities) = grains(11);
    let grains = Grains {
        positions: &positions,
        radii: &radii,
        velocities: &velocities,
    };
    let mut series = Series::create(&dir).unwrap();
    assert!(!dir.join("grains_0009.vtk").exists());
    assert!(!dir.join("snapshots.pvd").exists());
    assert!(dir.join("notes.txt").exists());

    let times = [0.0, 0.02, 0.03, 0.06];
    let foot_at = |t: f64| [0.001, 0.0, 0.03 + 0.5 * t];
    for &t in &times {
        series
            .add(t, &grains, &[foot.placed(foot_at(t), &IDENTITY)])
            .unwrap();
    }
    let err = series
        .add(0.06, &grains, &[foot.placed(foot_at(0.06), &IDENTITY)])
        .unwrap_err();
    assert!(matches!(err, SnapshotError::BadTime { .. }), "{err}");
    assert_eq!(series.len(), times.len());

    let listed = read_pvd(&dir.join(Series::INDEX));
    assert_eq!(listed.len(), 2 * times.len(), "{listed:?}");
    for (i, &t) in times.iter().enumerate() {
        let (grains_set, bodies_set) = (&listed[2 * i], &listed[2 * i + 1]);
        assert_eq!((grains_set.timestep, grains_set.part), (t, 0));
        assert_eq!((bodies_set.timestep, bodies_set.part), (t, 1));
        for set in [grains_set, bodies_set] {
            assert!(set.file.is_file(), "{} not written", set.file.display());
            assert_eq!(read_vtp(&set.file).0, t, "{}", set.file.display());
        }
        // The bodies' XML and legacy files hold the foot where it was at t.
        let (_, points) = read_vtp(&bodies_set.file);
        let legacy = read_bodies_vtk(&dir.join(format!("bodies_{i:04}.vtk")));
        assert_eq!(legacy.time, t);
        assert_eq!(legacy.bodies.len(), 1);
        assert_eq!(points, legacy.bodies[0].0);
        for (p, v) in points.iter().zip(&foot.vertices) {
            let expected = [0, 1, 2].map(|k| v[k] + foot_at(t)[k]);
            assert_near(*p, expected, 1e-6, "foot vertex");
        }
        for (name, title) in [("grains", "loam DEM particles")] {
            let bytes = std::fs::read(dir.join(format!("{name}_{i:04}.vtk"))).unwrap();
            let mut c = Cursor {
                bytes: &bytes,
                at: 0,
            };
            assert_eq!(c.legacy_header(title), t);
        }
        let ply = std::fs::read(dir.join(format!("grains_{i:04}.ply"))).unwrap();
        let ply = String::from_utf8_lossy(&ply[..200]).into_owned();
        assert!(ply.contains(&format!("\ncomment time {t}\n")), "{ply}");
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 5 * times.len() + 2, "{names:?}");
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

#[test]
fn viridis_ends_and_middle_are_matplotlibs() {
    assert_eq!(viridis(0.0), [68, 1, 84]); // #440154
    assert_eq!(viridis(128.0 / 255.0), [33, 145, 140]); // #21918c
    assert_eq!(viridis(1.0), [253, 231, 37]); // #fde725
    assert_eq!(viridis(-3.0), viridis(0.0));
    assert_eq!(viridis(7.0), viridis(1.0));
    // Perceptually ordered: lightness (here the green channel) rises monotonically.
    let greens: Vec<u8> = (0..=100).map(|k| viridis(k as f64 / 100.0)[1]).collect();
    assert!(greens.windows(2).all(|w| w[1] >= w[0]));
}

/// A heap of grains in a ridge |x| < 6 cm, 5 cm high, spread over |y| < 3 cm, moving faster
/// the higher they sit, a foot disc hovering above, and a few grains placed to test
/// visibility rules.
struct Scene {
    positions: Vec<Vec3>,
    radii: Vec<f64>,
    velocities: Vec<Vec3>,
}

fn heap(count: usize) -> Scene {
    let mut rng = Rng(11);
    let mut scene = Scene {
        positions: Vec::new(),
        radii: Vec::new(),
        velocities: Vec::new(),
    };
    while scene.positions.len() < count {
        let x = rng.uniform(-0.06, 0.06);
        let z = rng.uniform(0.0, 0.05);
        if z > 0.05 * (1.0 - x.abs() / 0.06) {
            continue;
        }
        let y = rng.uniform(-0.03, 0.03);
        let speed = 0.4 * z / 0.05 + rng.uniform(0.0, 0.05);
        let heading = rng.uniform(0.0, std::f64::consts::TAU);
        scene.positions.push([x, y, z]);
        scene.radii.push(rng.uniform(0.001, 0.0015));
        scene
            .velocities
            .push([speed * heading.cos(), 0.0, speed * heading.sin()]);
    }
    scene
}

#[test]
fn side_view_render_draws_what_the_scene_holds() {
    let mut scene = heap(3000);
    // Two grains on one line of sight, the near one (y < 0) listed first but drawn last:
    // it is the fastest grain, the far one is at rest.
    let fastest = 0.6;
    scene
        .positions
        .extend([[-0.08, -0.01, 0.06], [-0.08, 0.01, 0.06]]);
    scene.radii.extend([0.003, 0.003]);
    scene.velocities.extend([[0.0, 0.0, -fastest], [0.0; 3]]);
    // A large grain outside the slab, alone: not drawn.
    scene.positions.push([0.085, 0.025, 0.06]);
    scene.radii.push(0.003);
    scene.velocities.push([0.0, 0.0, 5.0]);

    let foot = Shape::Disc {
        radius: 0.038,
        thickness: 0.01,
    };
    let foot_at = [-0.04, 0.0, 0.07];
    // The same foot from its shipped mesh, beside it.
    let mesh_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/meshes/foot_disc.obj");
    let mesh_foot =
        GridSdf::from_mesh(&TriangleMesh::load(&mesh_path).unwrap(), 0.001, 0.003).unwrap();
    let mesh_foot_at = [0.045, 0.0, 0.072];
    let bodies: [(&dyn Sdf, Vec3); 2] = [(&foot, foot_at), (&mesh_foot, mesh_foot_at)];
    let slab = 0.02;
    let view = SideView {
        slab: Some(slab),
        ..SideView::new([-0.1, 0.1], [-0.01, 0.09], 800)
    };
    let input = RenderInput {
        positions: &scene.positions,
        radii: &scene.radii,
        velocities: &scene.velocities,
        bodies: &bodies,
        time: 0.125,
        view: view.clone(),
    };
    let path = std::env::temp_dir()
        .join("loam-dem-render")
        .join("heap_side_view.png");
    render_side_view(&path, &input).unwrap();
    println!("side view written to {}", path.display());

    let file = std::fs::File::open(&path).unwrap();
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    // 800 px wide; the plot is 690 px for 0.2 m, so 0.1 m of height is 345 px.
    let (width, height) = (info.width, info.height);
    assert_eq!((width, height), (800, 345));
    assert_eq!(view.image_size().unwrap(), (800, 345));
    let pixel = |x: u32, y: u32| -> [u8; 3] {
        let at = 3 * (y * width + x) as usize;
        [pixels[at], pixels[at + 1], pixels[at + 2]]
    };

    let scale = 690.0 / 0.2;
    let to_pixel = |p: Vec3| ((p[0] + 0.1) * scale, (0.09 - p[2]) * scale);
    let shown: Vec<usize> = (0..scene.positions.len())
        .filter(|&i| scene.positions[i][1].abs() < slab)
        .collect();
    let speed = |i: usize| {
        let v: Vec3 = scene.velocities[i];
        (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
    };
    let range = [0.0, shown.iter().map(|&i| speed(i)).fold(0.0, f64::max)];
    assert_eq!(
        range[1], fastest,
        "the grain outside the slab does not set the scale"
    );

    // Every grain whose centre pixel no nearer grain covers shows its speed's colour there.
    let mut checked = 0;
    for &i in &shown {
        let (cx, cy) = to_pixel(scene.positions[i]);
        let (px, py) = (cx.floor(), cy.floor());
        let covered = shown.iter().any(|&j| {
            let (jx, jy) = to_pixel(scene.positions[j]);
            let r = scene.radii[j] * scale;
            scene.positions[j][1] < scene.positions[i][1]
                && (px + 0.5 - jx).powi(2) + (py + 0.5 - jy).powi(2) <= r * r
        });
        if covered {
            continue;
        }
        assert_eq!(
            pixel(px as u32, py as u32),
            speed_colour(speed(i), range),
            "grain {i} at pixel ({px}, {py}), speed {}",
            speed(i)
        );
        checked += 1;
    }
    println!(
        "{checked} of {} grains in the slab checked at their centres",
        shown.len()
    );
    assert!(checked > 300, "only {checked} grains visible to check");

    // The nearer of the two grains on one line of sight is on top.
    let (cx, cy) = to_pixel([-0.08, 0.0, 0.06]);
    assert_eq!(pixel(cx as u32, cy as u32), viridis(1.0));
    // The grain outside the slab is not drawn.
    let (cx, cy) = to_pixel([0.085, 0.0, 0.06]);
    assert_eq!(pixel(cx as u32, cy as u32), BACKGROUND);
    // The feet's outlines: each sole is a line, each inside is empty.
    for (at, sole) in [(foot_at, 0.065), (mesh_foot_at, 0.067)] {
        let (sx, sy) = to_pixel([at[0], 0.0, sole]);
        assert_eq!(
            pixel(sx as u32, sy as u32),
            OUTLINE,
            "sole of the foot at {at:?}"
        );
        let (mx, my) = to_pixel(at);
        assert_eq!(
            pixel(mx as u32, my as u32),
            BACKGROUND,
            "inside the foot at {at:?}"
        );
    }
    // The colour bar runs from viridis(0) at its foot to viridis(1) at its head.
    let bar_x = 690 + 14 + 9;
    assert_eq!(pixel(bar_x, height - 15), viridis(0.0));
    assert_eq!(pixel(bar_x, 34), viridis(1.0));
    // Its label is drawn, and no text runs off the right edge.
    let dark = |p: [u8; 3]| p.iter().all(|&c| c < 100);
    assert!((5..24).any(|y| (690..800).any(|x| dark(pixel(x, y)))));
    assert!((0..height).all(|y| pixel(width - 1, y) == BACKGROUND));
    // The time is written in the top-left corner.
    assert!((6..24).any(|y| (8..60).any(|x| dark(pixel(x, y)))));
}

#[test]
fn side_view_rejects_bad_views() {
    let scene = heap(10);
    let bodies: [(&dyn Sdf, Vec3); 0] = [];
    let mut input = RenderInput {
        positions: &scene.positions,
        radii: &scene.radii,
        velocities: &scene.velocities,
        bodies: &bodies,
        time: 0.0,
        view: SideView::new([0.1, -0.1], [0.0, 0.1], 800),
    };
    let err = render_png(&input).unwrap_err();
    assert!(
        matches!(
            err,
            RenderError::BadView {
                field: "x_range",
                ..
            }
        ),
        "{err}"
    );
    input.view = SideView::new([-0.1, 0.1], [0.0, 0.1], PANEL_PX + 10);
    let err = render_png(&input).unwrap_err();
    assert!(err.to_string().contains("width_px"), "{err}");
    input.view = SideView {
        slab: Some(0.0),
        ..SideView::new([-0.1, 0.1], [0.0, 0.1], 800)
    };
    assert!(render_png(&input).is_err());
    input.view = SideView::new([-0.1, 0.1], [0.0, 0.1], 800);
    input.radii = &scene.radii[..3];
    let err = render_png(&input).unwrap_err();
    assert!(
        matches!(err, RenderError::LengthMismatch { radii: 3, .. }),
        "{err}"
    );
    // A flat view is padded to the least height so the colour bar fits.
    input.radii = &scene.radii;
    input.view = SideView::new([-0.1, 0.1], [0.0, 0.01], 800);
    assert_eq!(input.view.image_size().unwrap(), (800, 220));
    assert!(!render_png(&input).unwrap().is_empty());
}
