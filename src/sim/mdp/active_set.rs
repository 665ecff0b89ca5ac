//! The fast exact QP solvers of the step: dense active-set methods sized for a few contacts
//! (12 variables for four feet), in plain Rust on nalgebra. The step's QP is
//! min ½ cᵀQc + rᵀc over c_i ∈ h W_i with Q positive definite (a tree robot's contact
//! Jacobian has full row rank), so its answer c is unique; both methods end on it exactly,
//! up to the rounding of one small linear solve, where an interior point method stops at
//! its tolerance.
//!
//! **V-form: a primal active set on the product of simplices** (Wolfe's minimum-norm-point
//! method, with a quadratic for the norm and one simplex per contact). Contact i's impulse
//! is a convex combination of its points P_i = {0} ∪ {h w_ij}; each contact keeps a
//! *corral* S_i ⊆ P_i of affinely independent points (at most four in 3-D) with positive
//! weights, starting from {0} (c = 0 is admissible). A minor cycle minimises the objective
//! over the product of the affine hulls aff(S_i) (one Cholesky solve of at most 12
//! unknowns); if some affine weight is negative, it moves towards that minimiser until the
//! first weight reaches 0 and drops that point. At the affine minimiser each gradient block
//! g_i = (Qc + r)_i is orthogonal to aff(S_i), so a point x of P_i with g_iᵀx < g_iᵀc_i lies
//! outside aff(S_i): the major cycle adds, for every contact, the point with the least
//! g_iᵀx while that is below g_iᵀc_i. No point left to add is the optimality condition
//! (the variational inequality of test M6). Coplanar vertices, which make the λ of the
//! V-form non-unique, never enter one corral together.
//!
//! **H-form: Goldfarb and Idnani's dual active set** (Math. Prog. 27, 1983). It starts at
//! the unconstrained minimiser −Q⁻¹r and adds the most violated facet, moving along the
//! direction that keeps the active facets tight while the new facet's multiplier grows;
//! a facet whose multiplier would turn negative first is released. The active normals stay
//! linearly independent, so each step is a solve with at most 12 active rows, formed from
//! the Cholesky factor of Q.

use nalgebra::{DMatrix, DVector};

use super::MdpError;
use crate::terrain::hull::HalfSpaces;

/// Major cycles (points added) per contact, +10, before the method gives up.
const MAJOR_CYCLES_PER_CONTACT: usize = 50;

/// Relative size below which a gain or a violation is rounding (the tests ask for 1e-9).
const ROUNDING: f64 = 1e-12;

fn cholesky_of(q: &DMatrix<f64>) -> Result<nalgebra::Cholesky<f64, nalgebra::Dyn>, MdpError> {
    q.clone()
        .cholesky()
        .ok_or_else(|| MdpError::Qp("active set: the step's Q is not positive definite".into()))
}

/// One contact's corral: indices into {0} ∪ vertices (0 = the origin) and their weights.
struct Corral {
    points: Vec<usize>,
    weights: Vec<f64>,
}

/// The V-form by the primal active set: λ per contact (the weights of its vertices).
#[allow(non_snake_case)]
pub(super) fn solve_vertices(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    vertices: &[&[[f64; 3]]],
    h: f64,
) -> Result<Vec<Vec<f64>>, MdpError> {
    let n = Q.nrows();
    let point = |i: usize, k: usize| -> [f64; 3] {
        if k == 0 {
            [0.0; 3]
        } else {
            let w = vertices[i][k - 1];
            [h * w[0], h * w[1], h * w[2]]
        }
    };
    let reach = vertices
        .iter()
        .flat_map(|set| set.iter())
        .map(|w| h * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt())
        .fold(0.0, f64::max);
    let mut corrals: Vec<Corral> = vertices
        .iter()
        .map(|_| Corral {
            points: vec![0],
            weights: vec![1.0],
        })
        .collect();
    let impulse = |corrals: &[Corral]| {
        let mut c = DVector::zeros(n);
        for (i, corral) in corrals.iter().enumerate() {
            for (&k, &weight) in corral.points.iter().zip(&corral.weights) {
                let p = point(i, k);
                for a in 0..3 {
                    c[3 * i + a] += weight * p[a];
                }
            }
        }
        c
    };
    let mut c = DVector::zeros(n);
    let mut major = 0;
    loop {
        // Major cycle: add each contact's best point while it improves.
        // The gradient's rounding scales with its terms, not with itself (0 at an optimum
        // inside W).
        let curvature = Q * &c;
        let tolerance = ROUNDING * curvature.amax().max(r.amax()) * reach;
        let gradient = curvature + r;
        let mut added = false;
        for (i, corral) in corrals.iter_mut().enumerate() {
            if corral.points.len() == 4 {
                continue;
            }
            let g = [gradient[3 * i], gradient[3 * i + 1], gradient[3 * i + 2]];
            let value = |k: usize| {
                let p = point(i, k);
                g[0] * p[0] + g[1] * p[1] + g[2] * p[2]
            };
            let here = g[0] * c[3 * i] + g[1] * c[3 * i + 1] + g[2] * c[3 * i + 2];
            let best = (0..=vertices[i].len())
                .min_by(|&a, &b| value(a).total_cmp(&value(b)))
                .expect("the origin is always a point");
            if value(best) < here - tolerance && !corral.points.contains(&best) {
                corral.points.push(best);
                corral.weights.push(0.0);
                added = true;
            }
        }
        if !added {
            break;
        }
        major += 1;
        if major > MAJOR_CYCLES_PER_CONTACT * vertices.len() + 10 {
            return Err(MdpError::Qp(format!(
                "active set (vertices): no optimum after {major} major cycles"
            )));
        }
        // Minor cycles: to the affine minimiser, dropping points whose weight reaches 0.
        loop {
            let mut affine = affine_minimiser(Q, r, &corrals, &point)?;
            let mut step: f64 = 1.0;
            for (corral, beta) in corrals.iter().zip(&affine) {
                for (&w, &b) in corral.weights.iter().zip(beta) {
                    if b < 0.0 {
                        step = step.min(w / (w - b));
                    }
                }
            }
            for (corral, beta) in corrals.iter_mut().zip(affine.iter_mut()) {
                for (w, b) in corral.weights.iter_mut().zip(beta.iter()) {
                    *w += step * (b - *w);
                }
                // The points that blocked the step leave (not those a zero step left at 0
                // on their way up: a point just added starts at weight 0).
                let mut k = 0;
                while k < corral.points.len() {
                    let blocking = beta[k] < 0.0 && corral.weights[k] <= 1e-14;
                    if blocking && corral.points.len() > 1 {
                        corral.points.remove(k);
                        corral.weights.remove(k);
                        beta.remove(k);
                    } else {
                        k += 1;
                    }
                }
                corral.weights.iter_mut().for_each(|w| *w = w.max(0.0));
                let total: f64 = corral.weights.iter().sum();
                corral.weights.iter_mut().for_each(|w| *w /= total);
            }
            if step >= 1.0 {
                break;
            }
        }
        c = impulse(&corrals);
    }
    Ok(corrals
        .iter()
        .zip(vertices)
        .map(|(corral, set)| {
            let mut lambda = vec![0.0; set.len()];
            for (&k, &w) in corral.points.iter().zip(&corral.weights) {
                if k > 0 {
                    lambda[k - 1] = w;
                }
            }
            lambda
        })
        .collect())
}

/// The affine weights (summing to 1 per corral) of the minimiser of the objective over the
/// product of the corrals' affine hulls: c_i = s_i0 + Σ_k α_ik (s_ik − s_i0).
#[allow(non_snake_case)]
fn affine_minimiser(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    corrals: &[Corral],
    point: &impl Fn(usize, usize) -> [f64; 3],
) -> Result<Vec<Vec<f64>>, MdpError> {
    let n = Q.nrows();
    let unknowns: usize = corrals.iter().map(|c| c.points.len() - 1).sum();
    let mut base = DVector::zeros(n);
    let mut D = DMatrix::zeros(n, unknowns);
    let mut column = 0;
    for (i, corral) in corrals.iter().enumerate() {
        let origin = point(i, corral.points[0]);
        for a in 0..3 {
            base[3 * i + a] = origin[a];
        }
        for &k in &corral.points[1..] {
            let p = point(i, k);
            for a in 0..3 {
                D[(3 * i + a, column)] = p[a] - origin[a];
            }
            column += 1;
        }
    }
    let mut alpha = DVector::zeros(0);
    if unknowns > 0 {
        let QD = Q * &D;
        let reduced = D.transpose() * &QD;
        let rhs = -(D.transpose() * (Q * &base + r));
        alpha = match reduced.clone().cholesky() {
            Some(cholesky) => cholesky.solve(&rhs),
            None => reduced.lu().solve(&rhs).ok_or_else(|| {
                MdpError::Qp("active set (vertices): a corral lost its affine independence".into())
            })?,
        };
    }
    let mut start = 0;
    Ok(corrals
        .iter()
        .map(|corral| {
            let m = corral.points.len() - 1;
            let rest = alpha.rows(start, m);
            start += m;
            let mut beta = vec![1.0 - rest.sum()];
            beta.extend(rest.iter());
            beta
        })
        .collect())
}

/// The H-form by Goldfarb and Idnani's dual active set: the impulses c.
#[allow(non_snake_case)]
pub(super) fn solve_half_spaces(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    hulls: &[HalfSpaces],
    h: f64,
) -> Result<DVector<f64>, MdpError> {
    let n = Q.nrows();
    let cholesky = cholesky_of(Q)?;
    // Facet k: (contact, unit normal, h b).
    let facets: Vec<(usize, [f64; 3], f64)> = hulls
        .iter()
        .enumerate()
        .flat_map(|(i, hull)| {
            hull.normals
                .iter()
                .zip(&hull.offsets)
                .map(move |(a, b)| (i, *a, h * b))
        })
        .collect();
    let row = |k: usize| {
        let (i, a, _) = facets[k];
        let mut x = DVector::zeros(n);
        x.rows_mut(3 * i, 3).copy_from_slice(&a);
        x
    };
    let slack = |k: usize, c: &DVector<f64>| {
        let (i, a, b) = facets[k];
        b - (a[0] * c[3 * i] + a[1] * c[3 * i + 1] + a[2] * c[3 * i + 2])
    };
    let size = h * hulls.iter().map(|hull| hull.scale).fold(0.0, f64::max);
    let tolerance = ROUNDING * size.max(f64::MIN_POSITIVE);
    let mut c = -cholesky.solve(r);
    // Active facets, their rows Q⁻¹aₖ, and multipliers.
    let mut active: Vec<usize> = Vec::new();
    let mut multipliers: Vec<f64> = Vec::new();
    for _ in 0..20 * facets.len() + 20 {
        let Some(p) = (0..facets.len())
            .filter(|k| !active.contains(k))
            .min_by(|&a, &b| slack(a, &c).total_cmp(&slack(b, &c)))
            .filter(|&k| slack(k, &c) < -tolerance)
        else {
            return Ok(c);
        };
        let new_row = row(p);
        let q_inv_new = cholesky.solve(&new_row);
        let mut added_multiplier = 0.0;
        loop {
            // Dual direction ρ = S⁻¹ Nᵀ Q⁻¹ a_p (S = Nᵀ Q⁻¹ N); primal z = −Q⁻¹ (a_p − N ρ).
            let mut N = DMatrix::zeros(n, active.len());
            for (j, &k) in active.iter().enumerate() {
                let (i, a, _) = facets[k];
                N.view_mut((3 * i, j), (3, 1)).copy_from_slice(&a);
            }
            let q_inv_N = cholesky.solve(&N);
            let S = N.transpose() * &q_inv_N;
            let rho = if active.is_empty() {
                DVector::zeros(0)
            } else {
                let rhs = N.transpose() * &q_inv_new;
                S.clone().cholesky().map(|f| f.solve(&rhs)).ok_or_else(|| {
                    MdpError::Qp("active set (half-spaces): active facets dependent".into())
                })?
            };
            let z = -(&q_inv_new - &q_inv_N * &rho);
            let rate = new_row.dot(&z);
            let full = if rate < -ROUNDING * q_inv_new.dot(&new_row) {
                slack(p, &c) / rate
            } else {
                f64::INFINITY
            };
            let partial = (0..active.len())
                .filter(|&j| rho[j] > 0.0)
                .map(|j| (multipliers[j] / rho[j], j))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let step = partial.map_or(full, |(t, _)| t.min(full));
            if !step.is_finite() {
                return Err(MdpError::Qp(
                    "active set (half-spaces): the wrench spaces admit no answer".into(),
                ));
            }
            if full.is_finite() {
                c += step * &z;
            }
            for (u, rate) in multipliers.iter_mut().zip(rho.iter()) {
                *u -= step * rate;
            }
            added_multiplier += step;
            if step == full {
                active.push(p);
                multipliers.push(added_multiplier);
                break;
            }
            let (_, j) = partial.expect("a partial step");
            active.remove(j);
            multipliers.remove(j);
        }
    }
    Err(MdpError::Qp(
        "active set (half-spaces): no optimum within the iteration limit".into(),
    ))
}
