//! Geometry of DEM bodies: analytic signed distance fields against hand-computed distances,
//! and fields built from triangle meshes against the analytic field of the same shape.

use std::f64::consts::PI;
use std::path::{Path, PathBuf};

use loam::sim::dem::mesh::{GridSdf, MeshError, TriangleMesh};
use loam::sim::dem::sdf::{norm, Sdf, Shape, Vec3};

/// A fixed-seed splitmix64 generator: reproducible random points without a crate.
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

    fn point(&mut self, lo: Vec3, hi: Vec3) -> Vec3 {
        [0, 1, 2].map(|i| self.uniform(lo[i], hi[i]))
    }
}

/// A fresh folder under the system temp dir for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loam-dem-geometry-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn assert_vec_close(a: Vec3, b: Vec3, tol: f64, what: &str) {
    assert!(
        (0..3).all(|i| close(a[i], b[i], tol)),
        "{what}: {a:?} vs {b:?} (tolerance {tol})"
    );
}

#[test]
fn analytic_distances_at_known_points() {
    let cases: Vec<(Shape, Vec3, f64)> = vec![
        (Shape::Plane, [1.0, 2.0, 3.0], 3.0),
        (Shape::Plane, [0.0, 0.0, -0.5], -0.5),
        // Box of half extents 1, 2, 3.
        (boxed(), [0.0, 0.0, 0.0], -1.0),
        (boxed(), [0.5, 0.0, 0.0], -0.5),
        (boxed(), [0.0, 0.0, 2.9], -0.1),
        (boxed(), [2.0, 0.0, 0.0], 1.0),         // face
        (boxed(), [1.0, 2.0, 0.0], 0.0),         // on an edge
        (boxed(), [2.0, 3.0, 0.0], 2f64.sqrt()), // beside an edge
        (boxed(), [2.0, 3.0, 4.0], 3f64.sqrt()), // beyond a corner
        (boxed(), [-2.0, -3.0, -4.0], 3f64.sqrt()),
        // Cylinder of radius 1, half height 2.
        (cylinder(), [0.0, 0.0, 0.0], -1.0),
        (cylinder(), [3.0, 0.0, 0.0], 2.0),
        (cylinder(), [0.0, 0.0, 5.0], 3.0),
        (cylinder(), [0.0, 0.0, -1.5], -0.5),
        (cylinder(), [0.6, 0.8, 0.0], 0.0),
        (cylinder(), [1.2, 1.6, 1.0], 1.0),
        (cylinder(), [2.0, 0.0, 3.0], 2f64.sqrt()), // beside the rim
        // The foot: radius 38 mm, 10 mm thick.
        (foot(), [0.0, 0.0, 0.0], -0.005),
        (foot(), [0.0, 0.0, 0.015], 0.010),
        (foot(), [0.05, 0.0, 0.0], 0.012),
        (foot(), [0.041, 0.0, 0.009], 0.005),
    ];
    for (shape, p, expected) in cases {
        let d = shape.distance(p);
        assert!(
            close(d, expected, 1e-12),
            "{shape:?} at {p:?}: {d} != {expected}"
        );
    }
}

fn boxed() -> Shape {
    Shape::Box {
        half_extents: [1.0, 2.0, 3.0],
    }
}

fn cylinder() -> Shape {
    Shape::Cylinder {
        radius: 1.0,
        half_height: 2.0,
    }
}

fn foot() -> Shape {
    Shape::Disc {
        radius: 0.038,
        thickness: 0.010,
    }
}

#[test]
fn analytic_gradients_are_the_face_normals() {
    let s = 1.0 / 3f64.sqrt();
    let cases: Vec<(Shape, Vec3, Vec3)> = vec![
        (Shape::Plane, [4.0, -1.0, 0.3], [0.0, 0.0, 1.0]),
        (boxed(), [2.0, 0.5, 0.3], [1.0, 0.0, 0.0]),
        (boxed(), [0.9, 0.5, 0.3], [1.0, 0.0, 0.0]), // inside, nearest the +x face
        (boxed(), [0.1, -1.95, 0.3], [0.0, -1.0, 0.0]),
        (boxed(), [0.2, 0.1, -3.5], [0.0, 0.0, -1.0]),
        (boxed(), [2.0, 3.0, 4.0], [s, s, s]),
        (cylinder(), [0.0, 2.0, 0.5], [0.0, 1.0, 0.0]),
        (cylinder(), [0.3, 0.2, 5.0], [0.0, 0.0, 1.0]),
        (cylinder(), [0.3, 0.2, -1.9], [0.0, 0.0, -1.0]),
        (foot(), [0.0, -0.036, 0.0], [0.0, -1.0, 0.0]),
        (foot(), [0.01, 0.01, 0.0049], [0.0, 0.0, 1.0]),
    ];
    for (shape, p, normal) in cases {
        assert_vec_close(
            shape.gradient(p),
            normal,
            1e-12,
            &format!("{shape:?} at {p:?}"),
        );
    }
    // Off the symmetry planes the field is smooth: the gradient has unit length and matches
    // central differences of the distance (the gradient of a distance field is its normal).
    let mut rng = Rng(7);
    for shape in [boxed(), cylinder(), foot()] {
        let scale = match shape {
            Shape::Disc { radius, .. } => radius,
            _ => 3.0,
        };
        let mut checked = 0;
        while checked < 500 {
            let p = rng.point([-2.0 * scale; 3], [2.0 * scale; 3]);
            let h = 1e-6 * scale;
            let fd = [0, 1, 2].map(|i| {
                let (mut a, mut b) = (p, p);
                a[i] += h;
                b[i] -= h;
                (shape.distance(a) - shape.distance(b)) / (2.0 * h)
            });
            // Skip points next to a kink of the field (inside near the medial surface), where
            // the two-sided difference straddles two faces.
            if (norm(fd) - 1.0).abs() > 1e-6 {
                continue;
            }
            let g = shape.gradient(p);
            assert!(
                close(norm(g), 1.0, 1e-12),
                "{shape:?} at {p:?}: |g| = {}",
                norm(g)
            );
            assert_vec_close(g, fd, 1e-6, &format!("{shape:?} gradient at {p:?}"));
            checked += 1;
        }
    }
}

/// The unit cube centred on the origin, written with quads, every corner form OBJ allows,
/// and negative indices.
const CUBE_OBJ: &str = "\
# unit cube
o cube
v -0.5 -0.5 -0.5
v  0.5 -0.5 -0.5
v  0.5  0.5 -0.5
v -0.5  0.5 -0.5
v -0.5 -0.5  0.5
v  0.5 -0.5  0.5
v  0.5  0.5  0.5
v -0.5  0.5  0.5
vt 0 0
vn 0 0 1
f 1 4 3 2
f 5/1 6/1 7/1 8/1
f 1//1 2//1 6//1 5//1
f 2/1/1 3/1/1 7/1/1 6/1/1
f -5 -1 -2 -6
f 4 1 5 8
";

fn unit_cube() -> Shape {
    Shape::Box {
        half_extents: [0.5; 3],
    }
}

/// A closed cylinder tessellated as a prism over a regular n-gon inscribed in the circle,
/// each cap one n-sided face (fan-triangulated by the loader).
fn cylinder_obj(radius: f64, half_height: f64, segments: usize) -> String {
    let mut obj = String::new();
    for z in [-half_height, half_height] {
        for k in 0..segments {
            let a = 2.0 * PI * k as f64 / segments as f64;
            obj += &format!("v {} {} {}\n", radius * a.cos(), radius * a.sin(), z);
        }
    }
    for k in 0..segments {
        let (b0, b1) = (1 + k, 1 + (k + 1) % segments);
        obj += &format!("f {b0} {b1} {} {}\n", b1 + segments, b0 + segments);
    }
    let bottom: Vec<String> = (1..=segments).rev().map(|i| i.to_string()).collect();
    let top: Vec<String> = (1..=segments).map(|i| (i + segments).to_string()).collect();
    obj += &format!("f {}\nf {}\n", bottom.join(" "), top.join(" "));
    obj
}

/// The largest |grid − analytic| over random points within `band` of the analytic surface
/// and inside the grid.
fn max_error_near_surface(grid: &GridSdf, shape: &Shape, band: f64, samples: usize) -> f64 {
    let mut rng = Rng(42);
    let (lo, hi) = (grid.origin(), grid.upper_corner());
    let mut worst: f64 = 0.0;
    let mut taken = 0;
    while taken < samples {
        let p = rng.point(lo, hi);
        let exact = shape.distance(p);
        if exact.abs() > band {
            continue;
        }
        worst = worst.max((grid.distance(p) - exact).abs());
        taken += 1;
    }
    worst
}

#[test]
fn cube_mesh_field_agrees_with_the_box() {
    let dir = scratch("cube");
    let mesh = TriangleMesh::load(&write(&dir, "cube.obj", CUBE_OBJ.as_bytes())).unwrap();
    assert_eq!(mesh.vertices().len(), 8);
    assert_eq!(mesh.triangles().len(), 12);
    assert!(close(mesh.signed_volume(), 1.0, 1e-12));

    let spacing = 0.05;
    let grid = GridSdf::from_mesh(&mesh, spacing, 0.2).unwrap();
    let cube = unit_cube();
    // Grid points carry the exact distance.
    for (n, &value) in grid.values().iter().enumerate() {
        let [nx, ny, _] = grid.dims();
        let (i, j, k) = (n % nx, (n / nx) % ny, n / (nx * ny));
        let p = [i, j, k].map(|c| c as f64 * spacing);
        let p = [0, 1, 2].map(|a| grid.origin()[a] + p[a]);
        assert!(
            close(value, cube.distance(p), 1e-12),
            "grid point {p:?}: {value} vs {}",
            cube.distance(p)
        );
    }
    // Between them, a trilinear interpolant of a 1-Lipschitz field is within √3 h.
    let tolerance = 3f64.sqrt() * spacing;
    let worst = max_error_near_surface(&grid, &cube, 3.0 * spacing, 20_000);
    println!("cube: spacing {spacing}, max |grid - box| near the surface {worst:.2e} (bound {tolerance:.2e})");
    assert!(worst <= tolerance, "worst {worst} > {tolerance}");

    // On a face the gradient is the face normal: the field is linear there.
    assert_vec_close(
        grid.gradient([0.6, 0.1, -0.2]),
        [1.0, 0.0, 0.0],
        1e-9,
        "+x face",
    );
    assert_vec_close(
        grid.gradient([0.1, 0.2, -0.45]),
        [0.0, 0.0, -1.0],
        1e-9,
        "-z face",
    );

    // Outside the grid: distance to the grid box plus the value at the clamped point, an
    // upper bound on the true distance, exact straight out from a face.
    let far = [3.0, 0.0, 0.0];
    assert!(
        close(grid.distance(far), 2.5, 1e-9),
        "{}",
        grid.distance(far)
    );
    assert_vec_close(
        grid.gradient(far),
        [1.0, 0.0, 0.0],
        1e-9,
        "outside the grid",
    );
    let diagonal = [2.0, 2.0, 2.0];
    assert!(grid.distance(diagonal) >= cube.distance(diagonal) - 1e-12);
}

#[test]
fn inward_wound_mesh_is_turned_outwards() {
    let dir = scratch("inward");
    let reversed: String = CUBE_OBJ
        .lines()
        .map(|line| {
            if let Some(rest) = line.strip_prefix("f ") {
                let mut corners: Vec<&str> = rest.split_whitespace().collect();
                corners.reverse();
                format!("f {}\n", corners.join(" "))
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let mesh = TriangleMesh::load(&write(&dir, "inward.obj", reversed.as_bytes())).unwrap();
    assert!(close(mesh.signed_volume(), 1.0, 1e-12));
    let grid = GridSdf::from_mesh(&mesh, 0.1, 0.1).unwrap();
    assert!(close(grid.distance([0.0; 3]), -0.5, 1e-12));
}

#[test]
fn tessellated_cylinder_field_agrees_with_the_cylinder() {
    let (radius, half_height, segments) = (0.5, 0.4, 48);
    let dir = scratch("cylinder");
    let obj = cylinder_obj(radius, half_height, segments);
    let mesh = TriangleMesh::load(&write(&dir, "cylinder.obj", obj.as_bytes())).unwrap();
    assert_eq!(mesh.triangles().len(), 2 * segments + 2 * (segments - 2));

    let spacing = 0.02;
    let grid = GridSdf::from_mesh(&mesh, spacing, 0.1).unwrap();
    let shape = Shape::Cylinder {
        radius,
        half_height,
    };
    // The inscribed prism lies within the chord's sagitta of the cylinder, so the two exact
    // fields differ by at most the sagitta; interpolation adds at most √3 h.
    let sagitta = radius * (1.0 - (PI / segments as f64).cos());
    let tolerance = 3f64.sqrt() * spacing + sagitta;
    let worst = max_error_near_surface(&grid, &shape, 3.0 * spacing, 20_000);
    println!(
        "cylinder: spacing {spacing}, sagitta {sagitta:.2e}, max |grid - cylinder| {worst:.2e} (bound {tolerance:.2e})"
    );
    assert!(worst <= tolerance, "worst {worst} > {tolerance}");
    // Deep inside and far above, away from the rim, the fields agree to the sagitta.
    assert!(close(grid.distance([0.0, 0.0, 0.0]), -0.4, 1e-12));
    assert!(close(grid.distance([0.1, 0.0, 0.48]), 0.08, 1e-9));
}

#[test]
fn shipped_foot_disc_agrees_with_the_analytic_disc() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/meshes/foot_disc.obj");
    let mesh = TriangleMesh::load(&path).unwrap();
    let (lo, hi) = mesh.bounds();
    assert_vec_close(lo, [-0.038, -0.038, -0.005], 1e-9, "low corner");
    assert_vec_close(hi, [0.038, 0.038, 0.005], 1e-9, "high corner");

    let spacing = 0.001;
    let grid = GridSdf::from_mesh(&mesh, spacing, 0.004).unwrap();
    let disc = foot();
    let segments = 64.0;
    let sagitta = 0.038 * (1.0 - (PI / segments).cos());
    let tolerance = 3f64.sqrt() * spacing + sagitta;
    let worst = max_error_near_surface(&grid, &disc, 3.0 * spacing, 20_000);
    println!(
        "foot disc: spacing {spacing}, sagitta {sagitta:.2e}, max |grid - disc| {worst:.2e} (bound {tolerance:.2e})"
    );
    assert!(worst <= tolerance, "worst {worst} > {tolerance}");
    // Under the middle of the sole the field is the analytic one (linear, grid-aligned).
    assert!(close(grid.distance([0.003, -0.002, -0.0075]), 0.0025, 1e-9));
    assert_vec_close(
        grid.gradient([0.003, -0.002, -0.0075]),
        [0.0, 0.0, -1.0],
        1e-9,
        "sole",
    );
}

/// A torus about z (ring radius `ring`, tube radius `tube`) as quads with their corners on
/// the surface: a non-convex mesh, saddle-shaped on its inner side.
fn torus_obj(ring: f64, tube: f64, around: usize, across: usize) -> String {
    let mut obj = String::new();
    for i in 0..around {
        let theta = 2.0 * PI * i as f64 / around as f64;
        for j in 0..across {
            let phi = 2.0 * PI * j as f64 / across as f64;
            let rho = ring + tube * phi.cos();
            obj += &format!(
                "v {} {} {}\n",
                rho * theta.cos(),
                rho * theta.sin(),
                tube * phi.sin()
            );
        }
    }
    let index = |i: usize, j: usize| 1 + (i % around) * across + (j % across);
    for i in 0..around {
        for j in 0..across {
            obj += &format!(
                "f {} {} {} {}\n",
                index(i, j),
                index(i + 1, j),
                index(i + 1, j + 1),
                index(i, j + 1)
            );
        }
    }
    obj
}

fn torus_distance(p: Vec3, ring: f64, tube: f64) -> f64 {
    let rho = (p[0] * p[0] + p[1] * p[1]).sqrt();
    ((rho - ring).powi(2) + p[2] * p[2]).sqrt() - tube
}

#[test]
fn non_convex_torus_mesh_is_signed_right_everywhere() {
    let (ring, tube, around, across) = (0.3, 0.1, 64, 32);
    let dir = scratch("torus");
    let obj = torus_obj(ring, tube, around, across);
    let mesh = TriangleMesh::load(&write(&dir, "torus.obj", obj.as_bytes())).unwrap();
    let volume = 2.0 * PI * PI * ring * tube * tube;
    assert!(close(mesh.signed_volume(), volume, 0.01 * volume));

    let spacing = 0.01;
    let grid = GridSdf::from_mesh(&mesh, spacing, 0.05).unwrap();
    // Corners lie on the torus, so every facet is within the two chords' sagittas of it.
    let deviation = (ring + tube) * (1.0 - (PI / around as f64).cos())
        + tube * (1.0 - (PI / across as f64).cos());
    let [nx, ny, _] = grid.dims();
    let mut worst_at_points: f64 = 0.0;
    for (n, &value) in grid.values().iter().enumerate() {
        let ijk = [n % nx, (n / nx) % ny, n / (nx * ny)];
        let p = [0, 1, 2].map(|a| grid.origin()[a] + ijk[a] as f64 * spacing);
        let exact = torus_distance(p, ring, tube);
        // The sign is right at every grid point farther from the surface than the facets
        // stray, the hole and the saddle included.
        if exact.abs() > 2.0 * deviation {
            assert_eq!(
                value < 0.0,
                exact < 0.0,
                "sign at {p:?}: {value} vs {exact}"
            );
        }
        worst_at_points = worst_at_points.max((value - exact).abs());
    }
    assert!(
        worst_at_points <= 2.0 * deviation,
        "{worst_at_points} > {}",
        2.0 * deviation
    );
    let mut rng = Rng(5);
    let mut worst: f64 = 0.0;
    let mut taken = 0;
    while taken < 20_000 {
        let p = rng.point(grid.origin(), grid.upper_corner());
        let exact = torus_distance(p, ring, tube);
        if exact.abs() > 3.0 * spacing {
            continue;
        }
        worst = worst.max((grid.distance(p) - exact).abs());
        taken += 1;
    }
    let tolerance = 3f64.sqrt() * spacing + 2.0 * deviation;
    println!(
        "torus: facet deviation {deviation:.2e}, max error at grid points {worst_at_points:.2e}, \
         between them {worst:.2e} (bound {tolerance:.2e})"
    );
    assert!(worst <= tolerance, "worst {worst} > {tolerance}");
}

/// Triangles of the cylinder, rounded to single precision, for the STL round trip.
fn stl_triangles() -> Vec<[[f32; 3]; 3]> {
    let dir = scratch("stl-source");
    let obj = cylinder_obj(0.3, 0.1, 24);
    let mesh = TriangleMesh::load(&write(&dir, "c.obj", obj.as_bytes())).unwrap();
    mesh.triangle_positions()
        .map(|t| t.map(|v| v.map(|x| x as f32)))
        .collect()
}

fn ascii_stl(triangles: &[[[f32; 3]; 3]]) -> String {
    let mut text = String::from("solid cylinder\n");
    for t in triangles {
        text += "  facet normal 0 0 0\n    outer loop\n";
        for v in t {
            text += &format!("      vertex {} {} {}\n", v[0], v[1], v[2]);
        }
        text += "    endloop\n  endfacet\n";
    }
    text += "endsolid cylinder\n";
    text
}

fn binary_stl(triangles: &[[[f32; 3]; 3]]) -> Vec<u8> {
    // A header that starts with "solid", as some exporters write: detection goes by size.
    let mut bytes = b"solid but binary".to_vec();
    bytes.resize(80, b' ');
    bytes.extend((triangles.len() as u32).to_le_bytes());
    for t in triangles {
        bytes.extend([0u8; 12]);
        for v in t {
            for x in v {
                bytes.extend(x.to_le_bytes());
            }
        }
        bytes.extend([0u8; 2]);
    }
    bytes
}

#[test]
fn ascii_and_binary_stl_give_the_same_mesh() {
    let triangles = stl_triangles();
    let dir = scratch("stl");
    let ascii =
        TriangleMesh::load(&write(&dir, "a.stl", ascii_stl(&triangles).as_bytes())).unwrap();
    let binary = TriangleMesh::load(&write(&dir, "b.STL", &binary_stl(&triangles))).unwrap();
    assert_eq!(ascii, binary);
    assert_eq!(ascii.triangles().len(), triangles.len());
    // The triangle soup is welded back into a closed surface: one vertex per position.
    assert_eq!(ascii.vertices().len(), 2 * 24);
    let expected_volume = 0.5 * 24.0 * 0.3f64.powi(2) * (2.0 * PI / 24.0).sin() * 0.2;
    assert!(close(
        ascii.signed_volume(),
        expected_volume,
        1e-6 * expected_volume
    ));
}

#[test]
fn truncated_binary_stl_is_rejected_with_sizes() {
    let triangles = stl_triangles();
    let dir = scratch("stl-truncated");
    let mut bytes = binary_stl(&triangles);
    bytes[0..5].copy_from_slice(b"xxxxx");
    bytes.truncate(bytes.len() - 10);
    let err = TriangleMesh::load(&write(&dir, "t.stl", &bytes)).unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, MeshError::BinaryStl { .. }), "{message}");
    assert!(message.contains("t.stl"), "{message}");
    assert!(
        message.contains(&format!("{} triangles", triangles.len())),
        "{message}"
    );
}

#[test]
fn open_mesh_is_rejected_naming_the_open_edges() {
    let dir = scratch("open");
    // Drop the top face (the quad 5 6 7 8): its four edges are left open.
    let open: String = CUBE_OBJ
        .lines()
        .filter(|l| !l.starts_with("f 5/1"))
        .map(|l| format!("{l}\n"))
        .collect();
    let path = write(&dir, "open.obj", open.as_bytes());
    let err = TriangleMesh::load(&path).unwrap_err();
    let message = err.to_string();
    match err {
        MeshError::NotClosed {
            open_edges,
            misoriented_edges,
            example,
            ..
        } => {
            assert_eq!(open_edges, 4);
            assert_eq!(misoriented_edges, 0);
            // The example is an edge of the missing face, which lies in z = 0.5.
            assert!(example.iter().all(|v| v[2] == 0.5), "{example:?}");
        }
        other => panic!("expected NotClosed, got {other:?}"),
    }
    assert!(message.contains("open.obj"), "{message}");
    assert!(message.contains("4 open edge"), "{message}");
    assert!(message.contains("0.5"), "{message}");

    // One quad turned over: its four edges are each run twice the same way.
    let flipped = CUBE_OBJ.replace("f 1 4 3 2", "f 1 2 3 4");
    let err = TriangleMesh::load(&write(&dir, "flipped.obj", flipped.as_bytes())).unwrap_err();
    assert!(
        matches!(
            err,
            MeshError::NotClosed {
                open_edges: 0,
                misoriented_edges: 4,
                ..
            }
        ),
        "{err}"
    );

    let err = TriangleMesh::load(&write(&dir, "empty.obj", b"v 0 0 0\n")).unwrap_err();
    assert!(matches!(err, MeshError::Empty { .. }), "{err}");
}

#[test]
fn malformed_obj_lines_are_named() {
    let dir = scratch("malformed");
    let cases = [
        ("v 0 0 0\nv 1 0 0\nv 0 abc 1\n", 3, "abc"),
        ("v 0 0 0\n\nv 1 0\n", 3, "3 coordinates"),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x/1\n", 4, "x/1"),
        (
            "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n",
            4,
            "at least 3 corners",
        ),
        ("v 0 0 0\nv 1 0 0\nv 0 1 0\n# c\nf 1 2 9\n", 5, "vertex 9"),
        ("v 0 0 0\nf 1 -2 -1\n", 2, "reaches back"),
        ("v 0 0 0\nv 1 0 0\nf 0 1 2\n", 3, "index 0"),
    ];
    for (k, (text, line, needle)) in cases.into_iter().enumerate() {
        let path = write(&dir, &format!("bad{k}.obj"), text.as_bytes());
        let err = TriangleMesh::load(&path).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(err, MeshError::Parse { line: l, .. } if l == line),
            "case {k}: {message}"
        );
        assert!(
            message.contains(&format!("bad{k}.obj:{line}:")),
            "{message}"
        );
        assert!(message.contains(needle), "case {k}: {message}");
    }
    let stl = "solid x\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0\n";
    let err = TriangleMesh::load(&write(&dir, "bad.stl", stl.as_bytes())).unwrap_err();
    assert!(err.to_string().contains("bad.stl:5:"), "{err}");
    let err = TriangleMesh::load(&write(&dir, "cube.ply", CUBE_OBJ.as_bytes())).unwrap_err();
    assert!(matches!(err, MeshError::UnknownFormat { .. }), "{err}");
}

#[test]
fn grid_spacing_and_padding_are_checked() {
    let dir = scratch("spacing");
    let mesh = TriangleMesh::load(&write(&dir, "cube.obj", CUBE_OBJ.as_bytes())).unwrap();
    for spacing in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        let err = GridSdf::from_mesh(&mesh, spacing, 0.1).unwrap_err();
        assert!(matches!(err, MeshError::BadSpacing { .. }), "{err}");
        assert!(err.to_string().contains("positive"), "{err}");
    }
    let err = GridSdf::from_mesh(&mesh, 0.1, -1.0).unwrap_err();
    assert!(matches!(err, MeshError::BadPadding { .. }), "{err}");
    let err = GridSdf::from_mesh(&mesh, 1e-5, 0.0).unwrap_err();
    assert!(matches!(err, MeshError::GridTooLarge { .. }), "{err}");
}

#[test]
fn every_shipped_mesh_loads_closed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/meshes");
    let mut loaded = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["obj", "stl"].contains(&extension.to_ascii_lowercase().as_str()) {
            continue;
        }
        let mesh = TriangleMesh::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(mesh.signed_volume() > 0.0, "{}", path.display());
        loaded += 1;
    }
    assert!(loaded >= 1, "no meshes found in {}", dir.display());
}
