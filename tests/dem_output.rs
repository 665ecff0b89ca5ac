//! Particle output: VTK and PLY snapshots parsed back, and the side-view PNG render checked
//! pixel by pixel where the scene says what must be there.

use std::path::{Path, PathBuf};

use loam::sim::dem::mesh::{GridSdf, TriangleMesh};
use loam::sim::dem::render::{
    render_png, render_side_view, speed_colour, viridis, RenderError, RenderInput, SideView,
    BACKGROUND, OUTLINE, PANEL_PX,
};
use loam::sim::dem::sdf::{Sdf, Shape, Vec3};
use loam::sim::dem::snapshot::{write_ply, write_vtk, SnapshotError};

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

    fn f32s_be(&mut self, n: usize) -> Vec<f32> {
        let values = self
            .take(4 * n)
            .chunks_exact(4)
            .map(|c| f32::from_be_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(self.take(1), b"\n", "binary block ends with a newline");
        values
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
    write_vtk(&path, &positions, &radii, &velocities).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut c = Cursor {
        bytes: &bytes,
        at: 0,
    };
    assert_eq!(c.line(), "# vtk DataFile Version 3.0");
    c.line();
    assert_eq!(c.line(), "BINARY");
    assert_eq!(c.line(), "DATASET POLYDATA");
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
    write_ply(&path, &positions, &radii, &velocities).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut c = Cursor {
        bytes: &bytes,
        at: 0,
    };
    assert_eq!(c.line(), "ply");
    assert_eq!(c.line(), "format binary_little_endian 1.0");
    let mut properties = Vec::new();
    let mut count = None;
    loop {
        let line = c.line();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["end_header"] => break,
            ["element", "vertex", k] => count = Some(k.parse::<usize>().unwrap()),
            ["property", "float", name] => properties.push(name.to_string()),
            ["comment", ..] => {}
            _ => panic!("unexpected header line {line:?}"),
        }
    }
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
    let err = write_vtk(&path, &positions, &radii[..4], &velocities).unwrap_err();
    assert!(
        matches!(err, SnapshotError::LengthMismatch { radii: 4, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("5 positions, 4 radii, 5 velocities"),
        "{err}"
    );
    assert!(write_ply(&path, &positions, &radii, &velocities[..2]).is_err());
    assert!(!path.exists());
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
