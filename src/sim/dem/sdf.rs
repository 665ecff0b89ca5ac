//! Signed distance fields of the bodies grains collide with. A grain of radius r at x touches
//! a body when ψ = f(x) − r < 0, with f evaluated in the body's frame.

use serde::{Deserialize, Serialize};

pub type Vec3 = [f64; 3];

/// A signed distance field in a body's own frame: negative inside, positive outside.
pub trait Sdf: Send + Sync {
    /// Signed distance from `p` to the surface.
    fn distance(&self, p: Vec3) -> f64;

    /// The field's gradient at `p`: the outward unit normal on and near the surface.
    /// The default is a central difference; analytic shapes override it.
    fn gradient(&self, p: Vec3) -> Vec3 {
        let h = 1e-7;
        let mut g = [0.0; 3];
        for i in 0..3 {
            let (mut a, mut b) = (p, p);
            a[i] += h;
            b[i] -= h;
            g[i] = (self.distance(a) - self.distance(b)) / (2.0 * h);
        }
        normalized(g)
    }

    /// A box (low corner, high corner) that holds the body, where the field knows one; used
    /// to draw a body known only by its field. The default: none.
    fn bounds(&self) -> Option<(Vec3, Vec3)> {
        None
    }

    /// The field as samples on a grid, where it is one: a GPU backend uploads the samples
    /// and interpolates them as the field does. The default: none.
    fn grid(&self) -> Option<&super::mesh::GridSdf> {
        None
    }
}

/// Analytic shapes, centred on the body's origin with z as their axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "shape", deny_unknown_fields)]
pub enum Shape {
    /// The half-space z ≤ 0.
    Plane,
    /// A box with the given half extents.
    Box { half_extents: Vec3 },
    /// A solid cylinder about z, from −half_height to +half_height.
    Cylinder { radius: f64, half_height: f64 },
    /// A flat disc about z: a cylinder of the given thickness (a foot).
    Disc { radius: f64, thickness: f64 },
}

impl Sdf for Shape {
    fn distance(&self, p: Vec3) -> f64 {
        match *self {
            Shape::Plane => p[2],
            Shape::Box { half_extents: h } => {
                let q = [p[0].abs() - h[0], p[1].abs() - h[1], p[2].abs() - h[2]];
                let outside = norm([q[0].max(0.0), q[1].max(0.0), q[2].max(0.0)]);
                outside + q[0].max(q[1]).max(q[2]).min(0.0)
            }
            Shape::Cylinder {
                radius,
                half_height,
            } => cylinder_distance(p, radius, half_height),
            Shape::Disc { radius, thickness } => cylinder_distance(p, radius, 0.5 * thickness),
        }
    }

    fn gradient(&self, p: Vec3) -> Vec3 {
        match *self {
            Shape::Plane => [0.0, 0.0, 1.0],
            Shape::Box { half_extents: h } => box_gradient(p, h),
            Shape::Cylinder {
                radius,
                half_height,
            } => cylinder_gradient(p, radius, half_height),
            Shape::Disc { radius, thickness } => cylinder_gradient(p, radius, 0.5 * thickness),
        }
    }
}

/// +1 for non-negative x, −1 otherwise: a point on a symmetry plane takes the + side, so
/// the gradient is defined everywhere (the field has a kink there inside the shape).
fn side(x: f64) -> f64 {
    if x >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// Gradient of the box distance: outside, the unit vector from the nearest surface point;
/// inside, the normal of the nearest face.
fn box_gradient(p: Vec3, h: Vec3) -> Vec3 {
    let q = [p[0].abs() - h[0], p[1].abs() - h[1], p[2].abs() - h[2]];
    if q.iter().any(|&qi| qi > 0.0) {
        let g = [
            q[0].max(0.0) * side(p[0]),
            q[1].max(0.0) * side(p[1]),
            q[2].max(0.0) * side(p[2]),
        ];
        normalized(g)
    } else {
        let axis = if q[0] >= q[1] && q[0] >= q[2] {
            0
        } else if q[1] >= q[2] {
            1
        } else {
            2
        };
        let mut g = [0.0; 3];
        g[axis] = side(p[axis]);
        g
    }
}

/// Gradient of the cylinder distance, worked in the (radial, axial) half-plane and mapped
/// back. On the axis the radial direction is undefined; +x is taken.
fn cylinder_gradient(p: Vec3, radius: f64, half_height: f64) -> Vec3 {
    let rho = (p[0] * p[0] + p[1] * p[1]).sqrt();
    let radial = if rho > 0.0 {
        [p[0] / rho, p[1] / rho]
    } else {
        [1.0, 0.0]
    };
    let d = [rho - radius, p[2].abs() - half_height];
    let (gr, gz) = if d[0] > 0.0 || d[1] > 0.0 {
        let (a, b) = (d[0].max(0.0), d[1].max(0.0));
        let n = (a * a + b * b).sqrt();
        (a / n, b / n)
    } else if d[0] >= d[1] {
        (1.0, 0.0)
    } else {
        (0.0, 1.0)
    };
    [gr * radial[0], gr * radial[1], gz * side(p[2])]
}

/// Distance to a solid cylinder about z (radius r, from −h to +h).
fn cylinder_distance(p: Vec3, radius: f64, half_height: f64) -> f64 {
    let d = [
        (p[0] * p[0] + p[1] * p[1]).sqrt() - radius,
        p[2].abs() - half_height,
    ];
    let outside = (d[0].max(0.0).powi(2) + d[1].max(0.0).powi(2)).sqrt();
    outside + d[0].max(d[1]).min(0.0)
}

pub fn norm(v: Vec3) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

pub fn normalized(v: Vec3) -> Vec3 {
    let n = norm(v);
    if n > 0.0 {
        [v[0] / n, v[1] / n, v[2] / n]
    } else {
        [0.0, 0.0, 1.0]
    }
}
