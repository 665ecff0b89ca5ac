//! A small 3-D convex hull: the half-space form A w ≤ b of a wrench space
//! W = conv({0} ∪ {w_1, …, w_m}) (docs/WRENCH_SPACE.md sections 3.2 and 3.7), and the
//! paper's concavity metric (section 1, "Convexity", Table II).
//!
//! **Algorithm.** Incremental (Clarkson–Shor style without a conflict graph, which is not
//! worth it below ~100 points): start from a tetrahedron of four affinely independent points,
//! then add the points one by one; a point sees a triangle when it lies strictly outside the
//! triangle's plane, the seen triangles are removed and the horizon edges are joined to the
//! point. "Strictly outside" is decided by Shewchuk's exact `orient3d` predicate (the
//! `robust` crate), so the combinatorial hull is exact for the f64 inputs: no point of the
//! input lies outside any triangle's plane, whatever the rounding. A point on a triangle's
//! plane is not added, so coplanar points never make slivers.
//!
//! **Half-spaces.** Triangles whose planes agree within 1e-9·scale (scale = the largest
//! |w|; each triangle's corners within that distance of the other's plane, normals on the
//! same side) are merged into one facet, so the output is the minimal H-form: one row per
//! facet of the polytope. A facet's normal is the area-weighted mean of its triangles' normals
//! (the sum of their cross products, normalised), its offset b the largest aᵀp over the
//! facet's corners, so every input point satisfies aᵀp ≤ b up to rounding of the normal.
//!
//! **Degenerate input.** Fewer than four affinely independent points (all coincident,
//! collinear or coplanar, e.g. every wrench zero above the surface) has no 3-D hull:
//! [`HullError::Degenerate`] says which case it is.
//!
//! Cost: O(n F) orientation tests for n points and F triangles (a 27-point wrench space:
//! about 50 triangles, some 1500 tests).

use robust::{orient3d, Coord3D};
use thiserror::Error;

/// The half-space form of a convex polytope: aₖᵀ w ≤ bₖ for every facet k, |aₖ| = 1.
#[derive(Clone, Debug, PartialEq)]
pub struct HalfSpaces {
    /// Outward unit normals aₖ, one per facet.
    pub normals: Vec<[f64; 3]>,
    /// Offsets bₖ (the facet's signed distance from the origin).
    pub offsets: Vec<f64>,
    /// Indices (into the input) of the points on each facet, at least three, in no
    /// particular order.
    pub facet_points: Vec<Vec<usize>>,
    /// The largest |p| of the input: the scale the coplanarity tolerance is relative to.
    pub scale: f64,
}

/// Why a point set has no 3-D hull.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum HullError {
    #[error("point {index} of the hull's input is not finite: {point:?}")]
    NotFinite { index: usize, point: [f64; 3] },
    #[error(
        "the {points} points of the hull's input are {shape}: they span no volume, so they \
         have no 3-D hull (a wrench space needs wrenches in at least three independent \
         directions)"
    )]
    Degenerate {
        points: usize,
        /// "all coincident", "collinear" or "coplanar".
        shape: &'static str,
    },
}

/// Relative tolerance for merging coplanar triangles into one facet (spec 3.2).
pub const COPLANAR_TOLERANCE: f64 = 1e-9;

fn coord(p: &[f64; 3]) -> Coord3D<f64> {
    Coord3D {
        x: p[0],
        y: p[1],
        z: p[2],
    }
}

/// > 0 when `d` lies strictly outside (above) the triangle (a, b, c) oriented
/// counter-clockwise seen from outside; exact sign.
fn outside(points: &[[f64; 3]], t: &[usize; 3], d: usize) -> bool {
    // robust's orient3d is positive when d lies *below* the plane of a counter-clockwise
    // (seen from above) triangle, so "outside" is negative.
    orient3d(
        coord(&points[t[0]]),
        coord(&points[t[1]]),
        coord(&points[t[2]]),
        coord(&points[d]),
    ) < 0.0
}

fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: &[f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// Four affinely independent points to start from, chosen far apart for well-shaped first
/// triangles; or why there are none.
fn initial_tetrahedron(points: &[[f64; 3]]) -> Result<[usize; 4], HullError> {
    let degenerate = |shape| HullError::Degenerate {
        points: points.len(),
        shape,
    };
    let a = 0;
    let b = (0..points.len())
        .max_by(|&i, &j| {
            norm(&sub(&points[i], &points[a])).total_cmp(&norm(&sub(&points[j], &points[a])))
        })
        .filter(|&b| points[b] != points[a])
        .ok_or(degenerate("all coincident"))?;
    let ab = sub(&points[b], &points[a]);
    let c = (0..points.len())
        .max_by(|&i, &j| {
            norm(&cross(&ab, &sub(&points[i], &points[a])))
                .total_cmp(&norm(&cross(&ab, &sub(&points[j], &points[a]))))
        })
        .expect("at least two points");
    // Exact collinearity test: a, b, c are collinear iff every coordinate projection is.
    let collinear = |i: usize| {
        let (p, q, r) = (&points[a], &points[b], &points[i]);
        let orient2d = |x: usize, y: usize| {
            robust::orient2d(
                robust::Coord { x: p[x], y: p[y] },
                robust::Coord { x: q[x], y: q[y] },
                robust::Coord { x: r[x], y: r[y] },
            ) == 0.0
        };
        orient2d(0, 1) && orient2d(1, 2) && orient2d(0, 2)
    };
    let c = if collinear(c) {
        // The float cross product can miss a nearly collinear but independent point.
        (0..points.len())
            .find(|&i| !collinear(i))
            .ok_or(degenerate("collinear"))?
    } else {
        c
    };
    let normal = cross(&ab, &sub(&points[c], &points[a]));
    let volume = |i: usize| dot(&normal, &sub(&points[i], &points[a])).abs();
    let d = (0..points.len())
        .max_by(|&i, &j| volume(i).total_cmp(&volume(j)))
        .expect("at least three points");
    let flat = |i: usize| {
        orient3d(
            coord(&points[a]),
            coord(&points[b]),
            coord(&points[c]),
            coord(&points[i]),
        ) == 0.0
    };
    let d = if flat(d) {
        (0..points.len())
            .find(|&i| !flat(i))
            .ok_or(degenerate("coplanar"))?
    } else {
        d
    };
    Ok([a, b, c, d])
}

/// The triangles of the hull of `points`, each counter-clockwise seen from outside.
fn triangulated_hull(points: &[[f64; 3]]) -> Result<Vec<[usize; 3]>, HullError> {
    for (index, point) in points.iter().enumerate() {
        if !point.iter().all(|x| x.is_finite()) {
            return Err(HullError::NotFinite {
                index,
                point: *point,
            });
        }
    }
    if points.is_empty() {
        return Err(HullError::Degenerate {
            points: 0,
            shape: "all coincident",
        });
    }
    let [a, b, c, d] = initial_tetrahedron(points)?;
    // Orient the first triangle so that d is inside (not outside).
    let first = if outside(points, &[a, b, c], d) {
        [a, c, b]
    } else {
        [a, b, c]
    };
    let [a, b, c] = first;
    let mut triangles = vec![[a, b, c], [a, d, b], [b, d, c], [c, d, a]];
    let mut horizon: Vec<(usize, usize)> = Vec::new();
    for p in 0..points.len() {
        if p == a || p == b || p == c || p == d {
            continue;
        }
        let seen: Vec<bool> = triangles.iter().map(|t| outside(points, t, p)).collect();
        if !seen.iter().any(|&s| s) {
            continue;
        }
        // Horizon: the directed edges of seen triangles whose reverse is in no seen triangle.
        horizon.clear();
        let edges = |t: &[usize; 3]| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])];
        for (t, _) in triangles.iter().zip(&seen).filter(|(_, &s)| s) {
            for (u, w) in edges(t) {
                let shared = triangles
                    .iter()
                    .zip(&seen)
                    .any(|(o, &s)| s && edges(o).contains(&(w, u)));
                if !shared {
                    horizon.push((u, w));
                }
            }
        }
        let mut kept: Vec<[usize; 3]> = triangles
            .iter()
            .zip(&seen)
            .filter(|(_, &s)| !s)
            .map(|(t, _)| *t)
            .collect();
        kept.extend(horizon.iter().map(|&(u, w)| [u, w, p]));
        triangles = kept;
    }
    Ok(triangles)
}

/// The minimal half-space form of conv(`points`).
pub fn half_spaces(points: &[[f64; 3]]) -> Result<HalfSpaces, HullError> {
    let triangles = triangulated_hull(points)?;
    let scale = points.iter().map(norm).fold(0.0, f64::max);
    let tolerance = COPLANAR_TOLERANCE * scale;
    // Unnormalised normals (twice the area) and unit normals with offsets.
    let areas: Vec<[f64; 3]> = triangles
        .iter()
        .map(|t| {
            cross(
                &sub(&points[t[1]], &points[t[0]]),
                &sub(&points[t[2]], &points[t[0]]),
            )
        })
        .collect();
    let planes: Vec<([f64; 3], f64)> = areas
        .iter()
        .zip(&triangles)
        .map(|(n, t)| {
            let l = norm(n);
            let unit = [n[0] / l, n[1] / l, n[2] / l];
            (unit, dot(&unit, &points[t[0]]))
        })
        .collect();
    // Union-find over coplanar triangles.
    let mut parent: Vec<usize> = (0..triangles.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..triangles.len() {
        for j in 0..i {
            let (n, b) = planes[i];
            let coplanar = dot(&n, &planes[j].0) > 0.0
                && triangles[j]
                    .iter()
                    .all(|&k| (dot(&n, &points[k]) - b).abs() <= tolerance)
                && triangles[i]
                    .iter()
                    .all(|&k| (dot(&planes[j].0, &points[k]) - planes[j].1).abs() <= tolerance);
            if coplanar {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                parent[ri] = rj;
            }
        }
    }
    let mut facet_of_root = vec![usize::MAX; triangles.len()];
    let mut sums: Vec<[f64; 3]> = Vec::new();
    let mut facet_points: Vec<Vec<usize>> = Vec::new();
    for i in 0..triangles.len() {
        let r = root(&mut parent, i);
        if facet_of_root[r] == usize::MAX {
            facet_of_root[r] = sums.len();
            sums.push([0.0; 3]);
            facet_points.push(Vec::new());
        }
        let k = facet_of_root[r];
        for c in 0..3 {
            sums[k][c] += areas[i][c];
        }
        for &p in &triangles[i] {
            if !facet_points[k].contains(&p) {
                facet_points[k].push(p);
            }
        }
    }
    let normals: Vec<[f64; 3]> = sums
        .iter()
        .map(|s| {
            let l = norm(s);
            [s[0] / l, s[1] / l, s[2] / l]
        })
        .collect();
    let offsets = normals
        .iter()
        .zip(&facet_points)
        .map(|(n, on)| {
            on.iter()
                .map(|&p| dot(n, &points[p]))
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    Ok(HalfSpaces {
        normals,
        offsets,
        facet_points,
        scale,
    })
}

impl HalfSpaces {
    /// The H-form of a wrench space W = conv({0} ∪ `vertices`): the origin is appended as
    /// the last point (index `vertices.len()` in `facet_points`).
    pub fn of_wrench_space(vertices: &[[f64; 3]]) -> Result<HalfSpaces, HullError> {
        let mut points = vertices.to_vec();
        points.push([0.0; 3]);
        half_spaces(&points)
    }

    pub fn len(&self) -> usize {
        self.normals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.normals.is_empty()
    }

    /// min over facets of bₖ − aₖᵀ w: ≥ 0 inside, the distance to the nearest facet's plane
    /// for a point inside.
    pub fn slack(&self, w: &[f64; 3]) -> f64 {
        self.normals
            .iter()
            .zip(&self.offsets)
            .map(|(a, b)| b - dot(a, w))
            .fold(f64::INFINITY, f64::min)
    }
}

/// Table II's threshold: points with |w| below 1 (N or N m) are left out of the concavity.
pub const TABLE_II_MIN_NORM: f64 = 1.0;

/// The concavity of one measured wrench space (the paper's Table II): max over the points
/// with |w| ≥ `min_norm` of (slack to the nearest facet of conv({0} ∪ points)) / |w|.
/// 0 when every such point is a vertex or on a facet, and 0 when no point is left (the
/// wrench space at the surface, all zeros). The paper's metric uses
/// [`TABLE_II_MIN_NORM`]; the metric itself is scale-free, so `min_norm` = 0 gives the
/// slack ratio of every nonzero point (a unit cube with the interior point (0.9, 0, 0):
/// 0.1/0.9, the spec's W2 check, whose point Table II's threshold would leave out).
pub fn concavity(points: &[[f64; 3]], min_norm: f64) -> Result<f64, HullError> {
    let counted = |p: &&[f64; 3]| norm(p) >= min_norm && norm(p) > 0.0;
    if !points.iter().any(|p| counted(&p)) {
        return Ok(0.0);
    }
    let hull = HalfSpaces::of_wrench_space(points)?;
    Ok(points
        .iter()
        .filter(counted)
        .map(|p| hull.slack(p).max(0.0) / norm(p))
        .fold(0.0, f64::max))
}
