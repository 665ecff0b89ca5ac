//! The bodies as triangle surfaces, for the snapshots: analytic shapes triangulated, a mesh
//! body's own triangles, and a box where only a distance field is known. Each is built in the
//! body's frame and then placed by a position and a rotation.

use std::f64::consts::TAU;

use super::backend::{BodyGeometry, Container};
use super::mesh::TriangleMesh;
use super::sdf::{Shape, Vec3};

/// A rotation matrix, rows first: a body-frame point v is at `rotation · v + position`.
pub type Rotation = [[f64; 3]; 3];

/// No rotation (the bodies' frames are the bed's until bodies carry an orientation).
pub const IDENTITY: Rotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Segments around a disc or cylinder.
pub const ROUND_SEGMENTS: usize = 48;

/// Triangles with corners counter-clockwise seen from outside (outward normals).
#[derive(Clone, Debug, PartialEq)]
pub struct Surface {
    pub vertices: Vec<Vec3>,
    pub triangles: Vec<[u32; 3]>,
}

impl Surface {
    /// An analytic shape in its own frame. Discs and cylinders are prisms of
    /// [`ROUND_SEGMENTS`] sides with both ends capped (192 triangles), a box has 12 triangles,
    /// and the half-space `Plane` is drawn as its top face clipped to the size of `container`
    /// (a rectangle of its half widths, two triangles), so that it spans the bed.
    pub fn of_shape(shape: &Shape, container: &Container) -> Surface {
        match *shape {
            Shape::Plane => {
                let [a, b] = container.half_extents();
                Surface {
                    vertices: vec![[-a, -b, 0.0], [a, -b, 0.0], [a, b, 0.0], [-a, b, 0.0]],
                    triangles: vec![[0, 1, 2], [0, 2, 3]],
                }
            }
            Shape::Box { half_extents } => Surface::cuboid(half_extents.map(|h| -h), half_extents),
            Shape::Cylinder {
                radius,
                half_height,
            } => Surface::prism(radius, half_height),
            Shape::Disc { radius, thickness } => Surface::prism(radius, 0.5 * thickness),
        }
    }

    /// A mesh body's triangles as they are.
    pub fn of_mesh(mesh: &TriangleMesh) -> Surface {
        Surface {
            vertices: mesh.vertices().to_vec(),
            triangles: mesh
                .triangles()
                .iter()
                .map(|t| t.map(|i| i as u32))
                .collect(),
        }
    }

    /// A body's geometry in its own frame: a shape triangulated ([`Surface::of_shape`], a
    /// plane spanning `container`), a distance field by the triangle `mesh` it was sampled
    /// from when given, and otherwise by the box that its
    /// [`bounds`](super::sdf::Sdf::bounds) give (no iso-surface is extracted). `None`: a
    /// field with neither a mesh nor bounds.
    pub fn of_geometry(
        geometry: &BodyGeometry,
        mesh: Option<&TriangleMesh>,
        container: &Container,
    ) -> Option<Surface> {
        match (geometry, mesh) {
            (BodyGeometry::Shape(shape), _) => Some(Surface::of_shape(shape, container)),
            (BodyGeometry::Field(_), Some(mesh)) => Some(Surface::of_mesh(mesh)),
            (BodyGeometry::Field(field), None) => {
                field.bounds().map(|(lo, hi)| Surface::cuboid(lo, hi))
            }
        }
    }

    /// The box from corner `lo` to corner `hi`: 8 vertices, 12 triangles.
    pub fn cuboid(lo: Vec3, hi: Vec3) -> Surface {
        // Corner k has x from bit 0, y from bit 1, z from bit 2 (0: lo, 1: hi).
        let vertices = (0..8)
            .map(|k| [0, 1, 2].map(|a| if k >> a & 1 == 0 { lo[a] } else { hi[a] }))
            .collect();
        // Each face counter-clockwise seen from outside: −x, +x, −y, +y, −z, +z.
        let faces: [[u32; 4]; 6] = [
            [0, 4, 6, 2],
            [1, 3, 7, 5],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 2, 3, 1],
            [4, 5, 7, 6],
        ];
        Surface {
            vertices,
            triangles: faces
                .iter()
                .flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]])
                .collect(),
        }
    }

    /// A closed prism about z: rings at z = ±half_height, each end capped by a fan from its
    /// centre.
    fn prism(radius: f64, half_height: f64) -> Surface {
        let n = ROUND_SEGMENTS as u32;
        let mut vertices = Vec::with_capacity(2 * ROUND_SEGMENTS + 2);
        for z in [-half_height, half_height] {
            vertices.extend((0..ROUND_SEGMENTS).map(|i| {
                let angle = TAU * i as f64 / ROUND_SEGMENTS as f64;
                [radius * angle.cos(), radius * angle.sin(), z]
            }));
        }
        let (bottom_centre, top_centre) = (2 * n, 2 * n + 1);
        vertices.push([0.0, 0.0, -half_height]);
        vertices.push([0.0, 0.0, half_height]);
        let mut triangles = Vec::with_capacity(4 * ROUND_SEGMENTS);
        for i in 0..n {
            let j = (i + 1) % n;
            let (bottom_i, bottom_j, top_i, top_j) = (i, j, n + i, n + j);
            triangles.push([bottom_i, bottom_j, top_j]);
            triangles.push([bottom_i, top_j, top_i]);
            triangles.push([top_centre, top_i, top_j]);
            triangles.push([bottom_centre, bottom_j, bottom_i]);
        }
        Surface {
            vertices,
            triangles,
        }
    }

    /// The surface moved to where a body is: each vertex v to `rotation · v + position`.
    pub fn placed(&self, position: Vec3, rotation: &Rotation) -> Surface {
        let vertices = self
            .vertices
            .iter()
            .map(|v| {
                [0, 1, 2].map(|r| {
                    let row = rotation[r];
                    row[0] * v[0] + row[1] * v[1] + row[2] * v[2] + position[r]
                })
            })
            .collect();
        Surface {
            vertices,
            triangles: self.triangles.clone(),
        }
    }
}
