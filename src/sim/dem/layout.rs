//! What a general scene places in its container besides the grains' material: fill regions
//! (grains poured into part of the container), walls (vertical planes with their own
//! friction, a gate among them when it is removed at a given time) and a rough floor (a
//! layer of fixed grains). `loam dem run` and `loam dem prepare` build the grains and the
//! bodies from them; the checks here are the scene's (errors name the field).
//!
//! ```yaml
//! fills: [{ x: [-0.15, -0.09], fill_height: 0.06 }]
//! walls: [{ axis: x, at: -0.09, grains: below, friction: 0.3, remove_at: 0.0 }]
//! rough_floor: { radius: 0.003 }
//! ```
//!
//! Choices written down:
//! - A wall is a kinematic box body 4 grain radii thick whose face is the plane; it reaches
//!   past the container's sides and far above any grain, so grains meet only its face. A
//!   removed wall is moved 1 km up in one step (Lube et al. lifted their gate in about
//!   0.1 s, fast against the collapse's √(H0/g); an instant removal is the usual DEM idealisation).
//! - A fill region is a footprint and a settled height: its grains are poured on a jittered
//!   lattice above it (about 1.8 times as tall as the settled fill) and settle under gravity
//!   with every wall in place, as `dem prepare` settles a bed.
//! - The rough floor's grains sit on the container floor (centre at z = r) on a square
//!   lattice one diameter apart with random ±r/4 offsets in x and y, pinned (inverse mass 0):
//!   they neither move nor spin, and flowing grains nest in their hollows.

use serde::{Deserialize, Serialize};

use super::backend::{Body, BodyGeometry, BodyState, Container, GrainState, Motion};
use super::bed::Rng;
use super::scene::{Scene, FILL_FRACTION};
use super::sdf::Shape;

/// A footprint of the container poured with grains.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fill {
    /// [x_min, x_max] of the footprint [m].
    pub x: [f64; 2],
    /// [y_min, y_max] of the footprint [m]. Default: the container's whole width.
    #[serde(default)]
    pub y: Option<[f64; 2]>,
    /// Height [m] the settled fill should reach above the floor (or the rough floor's top):
    /// count = height · footprint area · 0.6 / mean grain volume. Give this or `count`.
    #[serde(default)]
    pub fill_height: Option<f64>,
    /// Number of grains. Give this or `fill_height`.
    #[serde(default)]
    pub count: Option<usize>,
}

/// Which axis a wall's normal lies along.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    X,
    Y,
}

/// Which side of a wall's plane the grains are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Coordinate < `at`.
    Below,
    /// Coordinate > `at`.
    Above,
}

/// A vertical plane wall across the container (a gate when it has `remove_at`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wall {
    /// The axis of its normal: `x` (a plane x = at) or `y`.
    pub axis: Axis,
    /// Where the plane is [m]; strictly inside the container.
    pub at: f64,
    /// The side the grains are on: `below` (coordinate < at) or `above`.
    pub grains: Side,
    /// Grain–wall Coulomb friction. Default: the grains' wall friction.
    #[serde(default)]
    pub friction: Option<f64>,
    /// Time [s] at which the wall is removed; t = 0 is the end of settling. Default: never.
    #[serde(default)]
    pub remove_at: Option<f64>,
}

/// A layer of fixed grains on the container floor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoughFloor {
    /// Radius of the fixed grains [m]. Default: the grains' mean radius.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Seed of the lattice offsets. Default: the grains' seed + 2.
    #[serde(default)]
    pub seed: Option<u64>,
}

/// How far a removed wall is moved up [m].
pub const REMOVED_LIFT: f64 = 1000.0;

impl Scene {
    /// Whether the scene pours fill regions instead of a whole-container bed.
    pub fn has_fills(&self) -> bool {
        !self.fills.is_empty()
    }

    /// The rough floor's grain radius, if the scene has one.
    pub fn rough_radius(&self) -> Option<f64> {
        self.rough_floor
            .as_ref()
            .map(|f| f.radius.unwrap_or(self.grains.radius))
    }

    /// The floor the poured grains rest on: the rough floor's top, or z = 0.
    pub fn floor_top(&self) -> f64 {
        self.rough_radius().map_or(0.0, |r| 2.0 * r)
    }

    /// Mean volume of a grain: radii uniform in r (1 ± s) have E[r³] = r³ (1 + s²).
    pub fn mean_grain_volume(&self) -> f64 {
        let g = &self.grains;
        4.0 / 3.0 * std::f64::consts::PI * g.radius.powi(3) * (1.0 + g.size_spread * g.size_spread)
    }

    /// A fill's footprint, its y range defaulted to the container's width.
    pub fn fill_footprint(&self, fill: &Fill) -> ([f64; 2], [f64; 2]) {
        let [_, half_y] = self.container.half_extents();
        (fill.x, fill.y.unwrap_or([-half_y, half_y]))
    }

    /// The number of grains of fill `fill`.
    pub fn fill_count(&self, fill: &Fill) -> usize {
        match (fill.count, fill.fill_height) {
            (Some(n), _) => n,
            (None, Some(h)) => {
                let (x, y) = self.fill_footprint(fill);
                let area = (x[1] - x[0]) * (y[1] - y[0]);
                ((h * area * FILL_FRACTION / self.mean_grain_volume()).round() as usize).max(1)
            }
            (None, None) => 1,
        }
    }

    /// Checks fills, walls and the rough floor against the container; (field, message).
    pub fn validate_layout(&self) -> Result<(), (String, String)> {
        let [half_x, half_y] = self.container.half_extents();
        let r_max = self.grains.radius * (1.0 + self.grains.size_spread);
        let bad = |field: String, message: String| Err((field, message));
        for (i, wall) in self.walls.iter().enumerate() {
            let field = |f: &str| format!("walls[{i}].{f}");
            let half = match wall.axis {
                Axis::X => half_x,
                Axis::Y => half_y,
            };
            if !(wall.at.is_finite() && wall.at.abs() < half - 2.0 * r_max) {
                return bad(
                    field("at"),
                    format!(
                        "is {} m; the wall must lie inside the container, at least one grain \
                         diameter from its sides: |at| < {:.4} m along {:?}",
                        wall.at,
                        half - 2.0 * r_max,
                        wall.axis
                    ),
                );
            }
            if let Some(mu) = wall.friction {
                if !(0.0..=10.0).contains(&mu) {
                    return bad(
                        field("friction"),
                        format!("is {mu}; a Coulomb friction coefficient must be in [0, 10]"),
                    );
                }
            }
            if let Some(t) = wall.remove_at {
                if !(t >= 0.0 && t.is_finite()) {
                    return bad(
                        field("remove_at"),
                        format!("is {t}; a removal time must be ≥ 0 s (t = 0 ends settling)"),
                    );
                }
            }
        }
        if let Some(floor) = &self.rough_floor {
            if let Some(r) = floor.radius {
                if !(r > 0.0 && r.is_finite() && 4.0 * r < 2.0 * half_x.min(half_y)) {
                    return bad(
                        "rough_floor.radius".into(),
                        format!("is {r} m; it must be positive and fit the container twice"),
                    );
                }
            }
        }
        for (i, fill) in self.fills.iter().enumerate() {
            let field = |f: &str| format!("fills[{i}].{f}");
            let (x, y) = self.fill_footprint(fill);
            for (name, [lo, hi], half) in [("x", x, half_x), ("y", y, half_y)] {
                let inside = lo.is_finite() && hi.is_finite() && lo >= -half && hi <= half;
                if !inside || hi - lo < 2.0 * r_max {
                    return bad(
                        field(name),
                        format!(
                            "is [{lo}, {hi}] m; a fill region must lie inside the container \
                             ([{}, {half}] m along {name}) and be at least one grain diameter \
                             ({:.4} m) wide",
                            -half,
                            2.0 * r_max
                        ),
                    );
                }
            }
            if let Container::Cylinder { radius } = self.container {
                let corner = x[0].abs().max(x[1].abs()).hypot(y[0].abs().max(y[1].abs()));
                if corner > radius {
                    return bad(
                        field("x"),
                        format!(
                            "reaches {corner:.4} m from the axis; the cylinder's radius is \
                             {radius} m: the fill region must lie inside it"
                        ),
                    );
                }
            }
            for (k, wall) in self.walls.iter().enumerate() {
                let (lo, hi) = match wall.axis {
                    Axis::X => (x[0], x[1]),
                    Axis::Y => (y[0], y[1]),
                };
                let on_side = match wall.grains {
                    Side::Below => hi <= wall.at,
                    Side::Above => lo >= wall.at,
                };
                if !on_side {
                    return bad(
                        field(if wall.axis == Axis::X { "x" } else { "y" }),
                        format!(
                            "is [{lo}, {hi}] m; wall {k} at {} m keeps the grains {:?} it: a \
                             fill region must lie wholly on the grains' side of every wall",
                            wall.at, wall.grains
                        ),
                    );
                }
            }
            match (fill.count, fill.fill_height) {
                (Some(0), _) => return bad(field("count"), "is 0; it must be ≥ 1".into()),
                (Some(_), None) => {}
                (None, Some(h)) if h > 0.0 && h.is_finite() => {}
                (None, Some(h)) => {
                    return bad(
                        field("fill_height"),
                        format!("is {h}; it must be a positive height in m"),
                    )
                }
                _ => {
                    return bad(
                        format!("fills[{i}]"),
                        "give exactly one of `count` and `fill_height`".into(),
                    )
                }
            }
        }
        Ok(())
    }

    /// The walls as kinematic bodies, in the order of `walls`.
    pub fn wall_bodies(&self) -> Vec<Body> {
        let [half_x, half_y] = self.container.half_extents();
        let r_max = self.grains.radius * (1.0 + self.grains.size_spread);
        let thick = 2.0 * r_max;
        let tall = 100.0;
        self.walls
            .iter()
            .map(|wall| {
                let sign = match wall.grains {
                    Side::Below => 1.0,
                    Side::Above => -1.0,
                };
                let centre = wall.at + sign * thick;
                let (position, half_extents) = match wall.axis {
                    Axis::X => ([centre, 0.0, 0.0], [thick, half_y + 2.0 * thick, tall]),
                    Axis::Y => ([0.0, centre, 0.0], [half_x + 2.0 * thick, thick, tall]),
                };
                Body {
                    geometry: BodyGeometry::Shape(Shape::Box { half_extents }),
                    motion: Motion::Kinematic,
                    mass: 1.0,
                    friction: wall
                        .friction
                        .unwrap_or(self.grains.wall_friction.unwrap_or(self.grains.friction)),
                    state: BodyState {
                        position,
                        ..BodyState::default()
                    },
                }
            })
            .collect()
    }

    /// The state of wall `index`'s body once removed.
    pub fn removed_wall_state(&self, body: &Body) -> BodyState {
        let mut state = body.state;
        state.position[2] += REMOVED_LIFT;
        state.velocity = [0.0; 3];
        state
    }
}

/// The rough floor's pinned grains (none without a rough floor).
pub fn rough_floor_grains(scene: &Scene) -> GrainState {
    let mut out = GrainState::default();
    let (Some(floor), Some(r)) = (&scene.rough_floor, scene.rough_radius()) else {
        return out;
    };
    let mut rng = Rng::new(floor.seed.unwrap_or(scene.grains.seed.wrapping_add(2)));
    let [half_x, half_y] = scene.container.half_extents();
    let spacing = 2.0 * r;
    let nx = ((2.0 * (half_x - r)) / spacing).floor() as i64;
    let ny = ((2.0 * (half_y - r)) / spacing).floor() as i64;
    // Centre the lattice in the container.
    let x0 = -0.5 * nx as f64 * spacing;
    let y0 = -0.5 * ny as f64 * spacing;
    for ix in 0..=nx {
        for iy in 0..=ny {
            let x = (x0 + ix as f64 * spacing + 0.25 * r * (2.0 * rng.uniform() - 1.0))
                .clamp(-half_x + r, half_x - r);
            let y = (y0 + iy as f64 * spacing + 0.25 * r * (2.0 * rng.uniform() - 1.0))
                .clamp(-half_y + r, half_y - r);
            if let Container::Cylinder { radius } = scene.container {
                if x.hypot(y) > radius - r {
                    continue;
                }
            }
            out.position.push([x, y, r]);
            out.velocity.push([0.0; 3]);
            out.radius.push(r);
            out.inverse_mass.push(0.0);
        }
    }
    out
}

/// The grains of the fill regions, each on a jittered lattice above its footprint, with
/// random velocities (as [`super::bed::pour`] pours a whole bed), ready to fall.
pub fn pour_fills(scene: &Scene) -> GrainState {
    let spec = &scene.grains;
    let mut rng = Rng::new(spec.seed);
    let r_max = spec.radius * (1.0 + spec.size_spread);
    // Denser than a bed's pour (1.2 diameters apart, ±0.1 diameter jitter): a fill is
    // narrow and tall, and a sparse lattice would stand several times its settled height.
    let spacing = 2.0 * r_max * 1.2;
    let jitter = 0.2 * r_max;
    let layer_spacing = 2.0 * r_max * 1.1;
    let clearance = r_max + jitter + 1e-3 * r_max;
    let mut out = GrainState::default();
    for fill in &scene.fills {
        let (x, y) = scene.fill_footprint(fill);
        let count = scene.fill_count(fill);
        let nx = (((x[1] - x[0]) - 2.0 * clearance) / spacing)
            .floor()
            .max(0.0) as usize;
        let ny = (((y[1] - y[0]) - 2.0 * clearance) / spacing)
            .floor()
            .max(0.0) as usize;
        // Centred sites, so a fill one site wide sits in the middle of its footprint.
        let x0 = 0.5 * (x[0] + x[1]) - 0.5 * nx as f64 * spacing;
        let y0 = 0.5 * (y[0] + y[1]) - 0.5 * ny as f64 * spacing;
        let sites: Vec<[f64; 2]> = (0..=nx)
            .flat_map(|i| (0..=ny).map(move |j| (i, j)))
            .map(|(i, j)| [x0 + i as f64 * spacing, y0 + j as f64 * spacing])
            .collect();
        for k in 0..count {
            let [sx, sy] = sites[k % sites.len()];
            let layer = k / sites.len();
            let radius = spec.radius * (1.0 + spec.size_spread * (2.0 * rng.uniform() - 1.0));
            let z = scene.floor_top() + r_max + jitter + layer as f64 * layer_spacing;
            out.position.push([
                sx + jitter * (2.0 * rng.uniform() - 1.0),
                sy + jitter * (2.0 * rng.uniform() - 1.0),
                z + 0.1 * r_max * rng.uniform(),
            ]);
            // Slow random velocities: enough to break the lattice, not to fly over a wall.
            let speed = 0.1;
            out.velocity.push([
                speed * (2.0 * rng.uniform() - 1.0),
                speed * (2.0 * rng.uniform() - 1.0),
                -speed * rng.uniform(),
            ]);
            out.radius.push(radius);
            out.inverse_mass
                .push(1.0 / (spec.density * 4.0 / 3.0 * std::f64::consts::PI * radius.powi(3)));
        }
    }
    out
}

/// Appends `more` to `grains` (both without angular velocities).
pub fn append(grains: &mut GrainState, more: GrainState) {
    grains.position.extend(more.position);
    grains.velocity.extend(more.velocity);
    grains.radius.extend(more.radius);
    grains.inverse_mass.extend(more.inverse_mass);
}
