//! Dense kernels of the factorisation: equilibration, pivot choice, perturbation and
//! inversion of pivot blocks, and the elimination of 1×1 and 2×2 pivots from a front.

use super::{NONE, RUIZ_PASSES};

/// Symmetric equilibration (Ruiz, "A scaling algorithm to equilibrate both rows and columns
/// norms in matrices", RAL-TR-2001-034) of the matrix given by one triangle: `scale` such
/// that S A S has every row's largest entry near 1, so that pivot tests and floors see rows
/// of comparable size. A row with no nonzero entry keeps scale 1. `largest` is workspace.
#[inline(always)]
pub(super) fn equilibrate(
    rows: &[u32],
    cols: &[u32],
    values: &[f64],
    scale: &mut [f64],
    largest: &mut [f64],
) {
    scale.fill(1.0);
    for _ in 0..RUIZ_PASSES {
        largest.fill(0.0);
        for ((&i, &j), &v) in rows.iter().zip(cols).zip(values) {
            let (i, j) = (i as usize, j as usize);
            let a = (v * scale[i] * scale[j]).abs();
            // max, not a comparison: the same value (the values are finite), no branch.
            largest[i] = larger(largest[i], a);
            largest[j] = larger(largest[j], a);
        }
        for (s, &m) in scale.iter_mut().zip(largest.iter()) {
            // Dividing by 1 leaves a row without entries as it is: branch-free, vectorised.
            let root = if m > 0.0 && m.is_finite() {
                m.sqrt()
            } else {
                1.0
            };
            *s /= root;
        }
    }
}

/// Static pivot perturbation of a symmetric pivot block `[d00, d01, d11]` of `size` 1 or 2:
/// every eigenvalue smaller than `floor` in magnitude is raised to `floor`, keeping its sign;
/// an eigenvalue that is numerically zero (`singular`: the block's determinant is within its
/// rounding error) takes the sign the block's rows expect (`signs`: +1 primal, −1 constraint).
/// Small pivots are what make a factorisation without dynamic pivoting grow (its multipliers
/// are divided by them); a floor bounds that growth, and iterative refinement against the
/// unperturbed matrix recovers the accuracy (the strategy of PARDISO's and SuperLU_DIST's
/// static pivoting). Returns whether the block changed.
#[inline(always)]
pub(super) fn perturb(
    block: &mut [f64; 3],
    size: usize,
    singular: bool,
    signs: [f64; 2],
    floor: f64,
) -> bool {
    if size == 1 {
        let d = block[0];
        let raised = if singular {
            signs[0] * floor
        } else if d.abs() < floor {
            d.signum() * floor
        } else {
            return false;
        };
        block[0] = raised;
        return true;
    }
    // Eigen-decomposition by one Jacobi rotation: [c −s; s c] diag(λ) [c −s; s c]ᵀ.
    let [a, b, c] = *block;
    let theta = 0.5 * (2.0 * b).atan2(a - c);
    let (sn, cs) = theta.sin_cos();
    let mut lambda = [
        a * cs * cs + 2.0 * b * sn * cs + c * sn * sn,
        a * sn * sn - 2.0 * b * sn * cs + c * cs * cs,
    ];
    let small = usize::from(lambda[1].abs() < lambda[0].abs());
    let mut changed = false;
    if singular {
        // The larger eigenvalue keeps its sign; the zero one takes the sign the block still
        // needs to have the inertia its rows expect.
        let big = lambda[1 - small];
        let expected_negative = signs.iter().filter(|&&s| s < 0.0).count();
        let left = expected_negative.saturating_sub(usize::from(big < 0.0));
        lambda[small] = if left > 0 { -floor } else { floor };
        changed = true;
    }
    for l in &mut lambda {
        if l.abs() < floor {
            *l = if *l < 0.0 { -floor } else { floor };
            changed = true;
        }
    }
    if changed {
        *block = [
            lambda[0] * cs * cs + lambda[1] * sn * sn,
            (lambda[0] - lambda[1]) * sn * cs,
            lambda[0] * sn * sn + lambda[1] * cs * cs,
        ];
    }
    changed
}

/// The number of negative eigenvalues of a symmetric pivot block `[d00, d01, d11]` of
/// `size` 1 or 2, and its inverse in the same layout (not finite when it is singular).
#[inline(always)]
pub(super) fn block_inverse(b: &[f64; 3], size: usize) -> (usize, [f64; 3]) {
    if size == 1 {
        return (usize::from(b[0] < 0.0), [1.0 / b[0], 0.0, 0.0]);
    }
    let det = b[0] * b[2] - b[1] * b[1];
    // det < 0: eigenvalues of opposite signs; det > 0: both of the diagonal's sign.
    let negative = if det < 0.0 {
        1
    } else if b[0] < 0.0 || (b[0] == 0.0 && b[2] < 0.0) {
        2
    } else {
        0
    };
    (negative, [b[2] / det, -b[1] / det, b[0] / det])
}

pub(super) fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// max(g, x) for a running maximum `g` that is never NaN: `f64::max`'s value (a NaN `x`
/// leaves `g`), in one `maxsd` instead of a NaN test and a blend.
#[inline(always)]
fn larger(g: f64, x: f64) -> f64 {
    if x > g {
        x
    } else {
        g
    }
}

/// The largest |v_i| (0 for none), in four running maxima: max is exact, so any grouping
/// gives the same value, and four break the chain of dependent compares.
#[inline(always)]
fn largest_magnitude(v: &[f64]) -> f64 {
    let mut lanes = [0.0_f64; 4];
    let mut chunks = v.chunks_exact(4);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = larger(*lane, x.abs());
        }
    }
    let mut g = larger(larger(lanes[0], lanes[1]), larger(lanes[2], lanes[3]));
    for x in chunks.remainder() {
        g = larger(g, x.abs());
    }
    g
}

/// A pivot choice among a front's fully summed columns `k..summed`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Choice {
    One(usize),
    Two(usize, usize),
    /// A root front's last resort: the largest diagonal, whatever its size.
    Forced(usize),
}

/// The first fully summed column (from `k`) that gives an acceptable 1×1 pivot, or a 2×2
/// pivot with its largest fully summed entry; None when every column fails (delay them).
#[inline(always)]
pub(super) fn choose(f: &[f64], m: usize, k: usize, summed: usize, u: f64) -> Option<Choice> {
    // Entries of the symmetric front, of which the lower triangle is stored.
    let at = |i: usize, j: usize| f[i.max(j) + i.min(j) * m];
    // max is exact, so the order of the scan does not change the answer: the row part is
    // strided, the column part contiguous (and vectorised), around the skipped entry.
    let column_max = |t: usize, skip: usize| {
        let mut g = 0.0_f64;
        for i in k..t {
            if i != skip {
                g = larger(g, f[t + i * m].abs());
            }
        }
        let below = &f[t + 1 + t * m..(t + 1) * m];
        if skip > t && skip < m {
            let (before, after) = below.split_at(skip - t - 1);
            let g = larger(g, largest_magnitude(before));
            larger(g, largest_magnitude(&after[1..]))
        } else {
            larger(g, largest_magnitude(below))
        }
    };
    for t in k..summed {
        let d = f[t + t * m];
        let gamma = column_max(t, NONE);
        if d != 0.0 && d.abs() >= u * gamma {
            return Some(Choice::One(t));
        }
        // The partner: the largest fully summed off-diagonal entry of column t.
        let Some(r) = (k..summed)
            .filter(|&i| i != t)
            .max_by(|&a, &b| at(a, t).abs().total_cmp(&at(b, t).abs()))
        else {
            continue;
        };
        let (a, b, c) = (d, at(r, t), f[r + r * m]);
        let det = a * c - b * b;
        if b == 0.0 || det == 0.0 || !det.is_finite() {
            continue;
        }
        let (gt, gr) = (column_max(t, r), column_max(r, t));
        let (i0, i1, i2) = ((c / det).abs(), (b / det).abs(), (a / det).abs());
        if i0 * gt + i1 * gr <= 1.0 / u && i1 * gt + i2 * gr <= 1.0 / u {
            return Some(Choice::Two(t, r));
        }
    }
    None
}

#[inline(always)]
pub(super) fn largest_diagonal(f: &[f64], m: usize, k: usize, summed: usize) -> usize {
    (k..summed)
        .max_by(|&a, &b| f[a + a * m].abs().total_cmp(&f[b + b * m].abs()))
        .unwrap_or(k)
}

/// Swaps rows and columns `a` and `b` of the dense symmetric front, of which the lower
/// triangle is stored (LAPACK's `dsyswapr`).
#[inline(always)]
pub(super) fn swap(f: &mut [f64], m: usize, index: &mut [usize], a: usize, b: usize) {
    if a == b {
        return;
    }
    let (a, b) = (a.min(b), a.max(b));
    index.swap(a, b);
    for j in 0..a {
        f.swap(a + j * m, b + j * m);
    }
    f.swap(a + a * m, b + b * m);
    for i in a + 1..b {
        f.swap(i + a * m, b + i * m);
    }
    for i in b + 1..m {
        f.swap(i + a * m, i + b * m);
    }
}

/// Eliminates the 1×1 pivot at `k` (inverse `inverse`) from the lower triangle: the
/// trailing block loses c cᵀ / d, and column k becomes L's column c / d.
#[inline(always)]
pub(super) fn eliminate_one(f: &mut [f64], m: usize, k: usize, inverse: f64) {
    for j in k + 1..m {
        let c = f[j + k * m] * inverse;
        if c == 0.0 {
            continue;
        }
        let (left, right) = f.split_at_mut(j * m);
        let column_k = &left[k * m + j..k * m + m];
        let column_j = &mut right[j..m];
        for (x, &l) in column_j.iter_mut().zip(column_k) {
            *x -= l * c;
        }
    }
    for i in k + 1..m {
        f[i + k * m] *= inverse;
    }
}

/// Eliminates the 2×2 pivot at `k`, `k + 1` (inverse `[e00, e01, e11]`) from the lower
/// triangle.
#[inline(always)]
pub(super) fn eliminate_two(f: &mut [f64], m: usize, k: usize, inverse: &[f64; 3]) {
    for j in k + 2..m {
        let (x, y) = (f[j + k * m], f[j + (k + 1) * m]);
        let c0 = inverse[0] * x + inverse[1] * y;
        let c1 = inverse[1] * x + inverse[2] * y;
        if c0 == 0.0 && c1 == 0.0 {
            continue;
        }
        let (left, right) = f.split_at_mut(j * m);
        let column_k = &left[k * m + j..k * m + m];
        let column_k1 = &left[(k + 1) * m + j..(k + 2) * m];
        let column_j = &mut right[j..m];
        for ((x, &l0), &l1) in column_j.iter_mut().zip(column_k).zip(column_k1) {
            *x -= l0 * c0 + l1 * c1;
        }
    }
    for i in k + 2..m {
        let (x, y) = (f[i + k * m], f[i + (k + 1) * m]);
        f[i + k * m] = inverse[0] * x + inverse[1] * y;
        f[i + (k + 1) * m] = inverse[1] * x + inverse[2] * y;
    }
    f[k + 1 + k * m] = 0.0;
}
