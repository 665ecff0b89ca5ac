//! Comparing numbers computed two ways.
#![allow(dead_code)] // each test binary uses its own part

/// The largest |a_i − b_i| of two vectors of the same length.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}
