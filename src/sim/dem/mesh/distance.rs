//! The exact signed distance to a closed mesh: a bounding volume hierarchy, pseudonormal sign.

use std::collections::HashMap;

use super::{add, cross, dot, norm_squared, scale, sub, TriangleMesh};
use crate::sim::dem::sdf::{norm, normalized, Vec3};

/// Exact signed distance to a closed mesh: nearest triangle through a bounding volume
/// hierarchy, sign from the angle-weighted pseudonormal of the nearest feature.
pub(super) struct MeshDistance<'a> {
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
    pub(super) fn new(mesh: &'a TriangleMesh) -> Self {
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
    pub(super) fn signed_distance(&self, p: Vec3, bound: f64) -> f64 {
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
