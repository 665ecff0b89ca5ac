//! The second, independent QP solver (docs/WRENCH_SPACE.md 3.6, M7): a log-barrier Newton
//! method on the V-form, min ½ λᵀ P λ + pᵀ λ over λ_i ≥ 0, 1ᵀλ_i ≤ 1 per contact, the
//! method of a later implementation by the paper's group. Written out here (no library), so
//! that Clarabel's answers are checked against code that shares nothing with it.
//!
//! The objective is first divided by its scale (the largest |Pᵢⱼ| or |pᵢ|), so the barrier
//! weight μ is relative; each stage minimises f/μ − Σ log λ − Σ log(1 − 1ᵀλ_i) by damped
//! Newton steps (fraction-to-the-boundary 0.99, Armijo backtracking) from the previous
//! stage's answer, and μ falls by 10× per stage from 1 to 1e-10. On the central path the
//! distance to the optimum is O(μ), so the answer is good to ~1e-10 relative.

use nalgebra::{DMatrix, DVector};

use super::MdpError;

/// The barrier weight the last stage runs at (relative to the objective's scale).
pub const FINAL_BARRIER_WEIGHT: f64 = 1e-10;

/// The barrier objective f/μ − Σ log(slacks), +∞ outside the domain.
fn barrier(
    p: &DMatrix<f64>,
    lin: &DVector<f64>,
    blocks: &[usize],
    x: &DVector<f64>,
    mu: f64,
) -> f64 {
    let mut value = (0.5 * x.dot(&(p * x)) + lin.dot(x)) / mu;
    let mut start = 0;
    for &m in blocks {
        let block = x.rows(start, m);
        let slack = 1.0 - block.sum();
        if slack <= 0.0 || block.iter().any(|&l| l <= 0.0) {
            return f64::INFINITY;
        }
        value -= slack.ln() + block.iter().map(|l| l.ln()).sum::<f64>();
        start += m;
    }
    value
}

/// λ per contact (`blocks` = the number of vertices of each contact).
#[allow(non_snake_case)]
pub(super) fn solve(
    P: &DMatrix<f64>,
    p: &DVector<f64>,
    blocks: &[usize],
) -> Result<Vec<Vec<f64>>, MdpError> {
    let n = p.len();
    let scale = P.amax().max(p.amax()).max(f64::MIN_POSITIVE);
    let (P, p) = (P / scale, p / scale);
    // The simplex's centre-ish point: strictly inside every constraint.
    let mut x = DVector::zeros(n);
    let mut start = 0;
    for &m in blocks {
        x.rows_mut(start, m).fill(0.5 / m as f64);
        start += m;
    }
    let mut mu = 1.0;
    loop {
        for _ in 0..100 {
            let mut gradient = (&P * &x + &p) / mu;
            let mut hessian = &P / mu;
            let mut start = 0;
            for &m in blocks {
                let slack = 1.0 - x.rows(start, m).sum();
                for j in start..start + m {
                    gradient[j] += 1.0 / slack - 1.0 / x[j];
                    hessian[(j, j)] += 1.0 / (x[j] * x[j]);
                    for k in start..start + m {
                        hessian[(j, k)] += 1.0 / (slack * slack);
                    }
                }
                start += m;
            }
            // Cholesky, or LU where rounding in a Hessian spanning 1e20 (weights near 0 at a
            // small μ) breaks positive definiteness.
            let step = match hessian.clone().cholesky() {
                Some(cholesky) => cholesky.solve(&-&gradient),
                None => hessian
                    .lu()
                    .solve(&-&gradient)
                    .ok_or_else(|| MdpError::Qp("barrier Newton: singular Newton system".into()))?,
            };
            let decrement = -gradient.dot(&step);
            if decrement < 1e-14 {
                break;
            }
            // Largest step that keeps every slack positive, then 0.99 of it.
            let mut alpha: f64 = 1.0;
            let mut start = 0;
            for &m in blocks {
                for j in start..start + m {
                    if step[j] < 0.0 {
                        alpha = alpha.min(-0.99 * x[j] / step[j]);
                    }
                }
                let slack = 1.0 - x.rows(start, m).sum();
                let rise = step.rows(start, m).sum();
                if rise > 0.0 {
                    alpha = alpha.min(0.99 * slack / rise);
                }
                start += m;
            }
            let current = barrier(&P, &p, blocks, &x, mu);
            loop {
                let trial = &x + alpha * &step;
                if barrier(&P, &p, blocks, &trial, mu) <= current - 1e-4 * alpha * decrement {
                    x = trial;
                    break;
                }
                alpha *= 0.5;
                if alpha < 1e-12 {
                    // No decrease within rounding: this stage is as good as it gets.
                    break;
                }
            }
            if alpha < 1e-12 {
                break;
            }
        }
        if mu <= FINAL_BARRIER_WEIGHT {
            break;
        }
        mu = (mu * 0.1).max(FINAL_BARRIER_WEIGHT);
    }
    let mut start = 0;
    Ok(blocks
        .iter()
        .map(|&m| {
            let lambda = x.rows(start, m).iter().copied().collect();
            start += m;
            lambda
        })
        .collect())
}
