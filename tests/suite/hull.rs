//! The 3-D hull of a wrench space (src/terrain/hull.rs) against known polytopes, a
//! brute-force facet enumeration and the concavity metric's analytic value
//! (docs/WRENCH_SPACE.md 3.6, W2).

use loam::terrain::hull::{concavity, half_spaces, HalfSpaces, HullError, TABLE_II_MIN_NORM};

/// A seeded generator (SplitMix64), so the random point sets are the same on every machine.
struct Random(u64);

impl Random {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn point(&mut self, scale: [f64; 3]) -> [f64; 3] {
        [0, 1, 2].map(|i| scale[i] * (2.0 * self.uniform() - 1.0))
    }
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cube() -> Vec<[f64; 3]> {
    let mut points = Vec::new();
    for x in [-1.0, 1.0] {
        for y in [-1.0, 1.0] {
            for z in [-1.0, 1.0] {
                points.push([x, y, z]);
            }
        }
    }
    points
}

/// Every facet (normal, offset) of the hull appears once in `expected` (up to 1e-12) and vice
/// versa.
fn assert_facets(hull: &HalfSpaces, expected: &[([f64; 3], f64)], tolerance: f64) {
    assert_eq!(
        hull.len(),
        expected.len(),
        "facet count: got {:?}",
        hull.normals
    );
    for (n, b) in expected {
        let found = hull.normals.iter().zip(&hull.offsets).any(|(a, c)| {
            (0..3).all(|i| (a[i] - n[i]).abs() <= tolerance) && (c - b).abs() <= tolerance
        });
        assert!(
            found,
            "facet {n:?} ≤ {b} missing from {:?} {:?}",
            hull.normals, hull.offsets
        );
    }
}

/// Every supporting plane through three of the points that has all points on one side: the
/// facets, by definition, in O(n⁴).
fn brute_force_facets(points: &[[f64; 3]], tolerance: f64) -> Vec<([f64; 3], f64)> {
    let mut facets: Vec<([f64; 3], f64)> = Vec::new();
    let n = points.len();
    for i in 0..n {
        for j in i + 1..n {
            for k in j + 1..n {
                let u = [0, 1, 2].map(|c| points[j][c] - points[i][c]);
                let v = [0, 1, 2].map(|c| points[k][c] - points[i][c]);
                let mut normal = [
                    u[1] * v[2] - u[2] * v[1],
                    u[2] * v[0] - u[0] * v[2],
                    u[0] * v[1] - u[1] * v[0],
                ];
                let length = dot(&normal, &normal).sqrt();
                if length < 1e-6 {
                    continue;
                }
                normal = normal.map(|c| c / length);
                let b = dot(&normal, &points[i]);
                let above = points.iter().filter(|p| dot(&normal, p) > b + tolerance);
                let below = points.iter().filter(|p| dot(&normal, p) < b - tolerance);
                let (above, below) = (above.count(), below.count());
                let plane = if above == 0 {
                    (normal, b)
                } else if below == 0 {
                    (normal.map(|c| -c), -b)
                } else {
                    continue;
                };
                let known = facets.iter().any(|(m, c)| {
                    (0..3).all(|d| (m[d] - plane.0[d]).abs() < 1e-7) && (c - plane.1).abs() < 1e-7
                });
                if !known {
                    facets.push(plane);
                }
            }
        }
    }
    facets
}

/// Every point inside, every facet touched by ≥ 3 points, unit normals.
fn assert_valid(points: &[[f64; 3]], hull: &HalfSpaces) {
    let tolerance = 1e-12 * hull.scale;
    for (a, b) in hull.normals.iter().zip(&hull.offsets) {
        assert!((dot(a, a) - 1.0).abs() < 1e-14, "normal {a:?} not unit");
        let on = points
            .iter()
            .filter(|p| (dot(a, p) - b).abs() <= 1e-9 * hull.scale)
            .count();
        assert!(on >= 3, "facet {a:?} ≤ {b} touched by {on} points");
        for p in points {
            assert!(
                dot(a, p) <= b + tolerance,
                "{p:?} outside facet {a:?} ≤ {b} by {}",
                dot(a, p) - b
            );
        }
    }
}

#[test]
fn cube_has_six_facets_even_with_points_on_its_faces_and_edges() {
    let mut points = cube();
    // Face centres, edge midpoints and an interior point: none may add a facet.
    points.extend([
        [1.0, 0.0, 0.0],
        [0.0, -1.0, 0.3],
        [1.0, 1.0, 0.0],
        [0.2, 0.1, -0.3],
    ]);
    let hull = half_spaces(&points).unwrap();
    assert_valid(&points, &hull);
    let mut expected = Vec::new();
    for i in 0..3 {
        for s in [-1.0, 1.0] {
            let mut n = [0.0; 3];
            n[i] = s;
            expected.push((n, 1.0));
        }
    }
    assert_facets(&hull, &expected, 1e-14);
}

#[test]
fn octahedron_has_eight_triangular_facets() {
    let mut points = Vec::new();
    for i in 0..3 {
        for s in [-2.0, 2.0] {
            let mut p = [0.0; 3];
            p[i] = s;
            points.push(p);
        }
    }
    let hull = half_spaces(&points).unwrap();
    assert_valid(&points, &hull);
    let r = 1.0 / 3f64.sqrt();
    let mut expected = Vec::new();
    for x in [-r, r] {
        for y in [-r, r] {
            for z in [-r, r] {
                expected.push(([x, y, z], 2.0 * r));
            }
        }
    }
    assert_facets(&hull, &expected, 1e-14);
    assert!(hull.facet_points.iter().all(|f| f.len() == 3));
}

#[test]
fn random_points_match_a_brute_force_facet_enumeration() {
    let mut random = Random(7);
    for trial in 0..20 {
        let n = 8 + 3 * trial;
        // Wrench-like scales: forces of hundreds of newtons, torques of tens of newton metres.
        let points: Vec<[f64; 3]> = (0..n).map(|_| random.point([150.0, 400.0, 12.0])).collect();
        let hull = half_spaces(&points).unwrap();
        assert_valid(&points, &hull);
        let expected = brute_force_facets(&points, 1e-9 * hull.scale);
        assert_facets(&hull, &expected, 1e-9);
    }
}

#[test]
fn a_box_with_random_points_on_its_faces_keeps_its_six_facets() {
    let mut random = Random(11);
    let half = [120.0, 300.0, 8.0];
    let mut points = Vec::new();
    for x in [-1.0, 1.0] {
        for y in [-1.0, 1.0] {
            for z in [-1.0, 1.0] {
                points.push([x * half[0], y * half[1], z * half[2]]);
            }
        }
    }
    for _ in 0..60 {
        let mut p = random.point(half);
        let axis = (random.uniform() * 3.0) as usize;
        p[axis] = if random.uniform() < 0.5 { -1.0 } else { 1.0 } * half[axis];
        points.push(p);
    }
    let hull = half_spaces(&points).unwrap();
    assert_valid(&points, &hull);
    assert_eq!(hull.len(), 6, "normals {:?}", hull.normals);
}

#[test]
fn wrench_space_hull_contains_the_origin_as_a_point() {
    // A wrench space whose wrenches all push up: the origin is a vertex of W.
    let vertices = [
        [0.0, 400.0, 0.0],
        [150.0, 250.0, -6.0],
        [-150.0, 250.0, 6.0],
        [60.0, 120.0, 10.0],
        [-60.0, 120.0, -10.0],
    ];
    let hull = HalfSpaces::of_wrench_space(&vertices).unwrap();
    assert!(hull.slack(&[0.0; 3]).abs() <= 1e-12);
    assert!(hull
        .facet_points
        .iter()
        .any(|f| f.contains(&vertices.len())));
    assert!(hull.slack(&[0.0, 200.0, 0.0]) > 0.0);
    assert!(hull.slack(&[0.0, -1.0, 0.0]) < 0.0);
}

#[test]
fn concavity_of_a_cube_with_an_interior_point_is_its_slack_over_its_norm() {
    // W2: the nearest facet of (0.9, 0, 0) is x ≤ 1, slack 0.1, |w| = 0.9.
    let mut points = cube();
    points.push([0.9, 0.0, 0.0]);
    let c = concavity(&points, 0.0).unwrap();
    assert!((c - 0.1 / 0.9).abs() <= 1e-15, "concavity {c}");
    // Table II's threshold leaves out points with |w| < 1: this one, but not the same
    // cube scaled by 10, whose concavity is the same ratio.
    assert_eq!(concavity(&points, TABLE_II_MIN_NORM).unwrap(), 0.0);
    let scaled: Vec<[f64; 3]> = points.iter().map(|p| p.map(|c| 10.0 * c)).collect();
    let c = concavity(&scaled, TABLE_II_MIN_NORM).unwrap();
    assert!((c - 1.0 / 9.0).abs() <= 1e-15, "concavity {c}");
    // The cube's own corners have no slack.
    assert_eq!(concavity(&cube(), TABLE_II_MIN_NORM).unwrap(), 0.0);
    // Nothing left: the wrench space at the surface.
    assert_eq!(concavity(&[[0.0; 3]; 26], TABLE_II_MIN_NORM).unwrap(), 0.0);
}

#[test]
fn degenerate_inputs_are_typed_errors() {
    let shape = |points: &[[f64; 3]]| match half_spaces(points) {
        Err(HullError::Degenerate { shape, .. }) => shape,
        other => panic!("expected a degenerate hull, got {other:?}"),
    };
    assert_eq!(shape(&[[1.0, 2.0, 3.0]; 5]), "all coincident");
    assert_eq!(
        shape(&[
            [0.0; 3],
            [1.0, 1.0, 1.0],
            [2.0, 2.0, 2.0],
            [-3.0, -3.0, -3.0]
        ]),
        "collinear"
    );
    let flat: Vec<[f64; 3]> = (0..10)
        .map(|i| {
            [
                i as f64,
                (i * i) as f64,
                0.5 * i as f64 + 2.0 * (i * i) as f64,
            ]
        })
        .collect();
    assert_eq!(shape(&flat), "coplanar");
    // A wrench space with only forces (no torque): coplanar with the origin.
    let forces = [[0.0, 400.0, 0.0], [100.0, 200.0, 0.0], [-100.0, 200.0, 0.0]];
    let error = HalfSpaces::of_wrench_space(&forces).unwrap_err();
    assert!(error.to_string().contains("coplanar"), "{error}");
    assert!(matches!(
        half_spaces(&[
            [0.0; 3],
            [1.0, 0.0, 0.0],
            [0.0, f64::NAN, 0.0],
            [0.0, 0.0, 1.0]
        ]),
        Err(HullError::NotFinite { index: 2, .. })
    ));
}
