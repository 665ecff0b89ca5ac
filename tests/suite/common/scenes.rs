//! Scene files shared by the DEM tests.

/// A bed of 60 grains in a 3 cm cylinder: settles in well under a second.
pub const TINY_BED: &str = "\
container: { shape: cylinder, radius: 0.03 }
grains: { radius: 0.004, density: 1000, friction: 0.5, count: 60, seed: 2 }
settle: { kinetic_energy: 1.0e-9, max_time: 2.0 }
";
