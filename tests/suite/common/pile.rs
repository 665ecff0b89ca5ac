//! Measuring a conical pile of grains centred on the z axis: its surface profile and the
//! slope of its flank (the angle of repose), shared by the DEM laws' tests.
#![allow(dead_code)] // each test binary uses its own part

use loam::sim::dem::GrainState;

/// The pile's surface: in radial bins `width` wide about the z axis, the highest grain top
/// above `base` (0 where no grain top is above it), out to `reach`.
pub fn surface_profile(grains: &GrainState, width: f64, reach: f64, base: f64) -> Vec<f64> {
    let bins = (reach / width).ceil() as usize;
    let mut top = vec![0.0f64; bins];
    for (x, r) in grains.position.iter().zip(&grains.radius) {
        let b = (x[0].hypot(x[1]) / width) as usize;
        if b < bins {
            top[b] = top[b].max(x[2] + r - base);
        }
    }
    top
}

/// The slope angle [degrees] of a profile `width` per bin between the radii where it first
/// falls below 75 % and below 25 % of its peak (the highest of its first three bins), so
/// that neither the rounded apex nor the foot counts.
pub fn flank_angle(profile: &[f64], width: f64) -> f64 {
    let peak = profile[..3].iter().cloned().fold(0.0, f64::max);
    let cross = |f: f64| {
        profile
            .iter()
            .position(|&t| t < f * peak)
            .unwrap_or(profile.len()) as f64
            * width
    };
    ((0.5 * peak) / (cross(0.25) - cross(0.75)))
        .atan()
        .to_degrees()
}

/// The grains on the pile's surface, as (distance from the z axis, height of the grain's
/// top): those with no other grain above them (no grain higher up whose centre is closer
/// sideways than the two radii).
pub fn surface_grains(grains: &GrainState) -> Vec<(f64, f64)> {
    let x = &grains.position;
    let r = &grains.radius;
    (0..grains.len())
        .filter(|&i| {
            !(0..grains.len()).any(|j| {
                x[j][2] > x[i][2] && (x[j][0] - x[i][0]).hypot(x[j][1] - x[i][1]) < r[i] + r[j]
            })
        })
        .map(|i| (x[i][0].hypot(x[i][1]), x[i][2] + r[i]))
        .collect()
}

/// The angle [degrees] of the cone fitted by least squares to the surface grains between
/// radii `from` and `to` from the z axis: the pile's angle of repose.
pub fn cone_angle(surface: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let points: Vec<&(f64, f64)> = surface
        .iter()
        .filter(|p| p.0 >= from && p.0 <= to)
        .collect();
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let slope = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
        / points.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
    (-slope).atan().to_degrees()
}
