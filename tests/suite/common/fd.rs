//! Central finite-difference checks of a transcribed [`Nlp`]'s exact derivatives, usable on
//! any NLP (the test problems here, the robot's later).
//!
//! Include from a test crate with
//! ```ignore
//! mod common {
//!     pub mod fd;
//! }
//! ```
//!
//! Errors are relative: |exact - fd| / max(1, |exact|). Entries outside the sparsity
//! pattern count as exact zeros, so a finite difference found there is reported as an error
//! of the same measure (a pattern that misses a dependency fails the check).
//!
//! Steps are central, h = 1e-6 max(1, |x_j|): truncation ~h² f''' and round-off
//! ~1e-16 |f| / h stay near 1e-10 for well-scaled problems.

#![allow(dead_code)]

use loam::transcription::Nlp;

/// Relative step of the central differences.
pub const STEP: f64 = 1e-6;

/// A fixed-seed xorshift64* generator: reproducible random points without a crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// A random point within the variable bounds: each variable uniform on its bounds, an
/// infinite bound replaced by `spread` times the variable's nominal magnitude.
pub fn random_point(nlp: &Nlp, rng: &mut Rng, spread: f64) -> Vec<f64> {
    (0..nlp.n_variables())
        .map(|i| {
            let scale = spread * nlp.x_nominal[i].abs().max(1e-3);
            let mut lo = nlp.x_lower[i];
            let mut hi = nlp.x_upper[i];
            if !lo.is_finite() {
                lo = if hi.is_finite() {
                    hi - 2.0 * scale
                } else {
                    -scale
                };
            }
            if !hi.is_finite() {
                hi = lo + 2.0 * scale;
            }
            rng.uniform(lo, hi)
        })
        .collect()
}

/// Random multipliers, one per constraint row, uniform in [-scale, scale].
pub fn random_multipliers(nlp: &Nlp, rng: &mut Rng, scale: f64) -> Vec<f64> {
    (0..nlp.n_constraints())
        .map(|_| rng.uniform(-scale, scale))
        .collect()
}

fn step(x: f64) -> f64 {
    STEP * x.abs().max(1.0)
}

fn relative_error(exact: f64, fd: f64) -> f64 {
    (exact - fd).abs() / exact.abs().max(1.0)
}

/// The worst mismatches seen, for the message of a failing check.
struct Worst {
    entries: Vec<(f64, String)>,
}

impl Worst {
    const KEEP: usize = 8;

    fn new() -> Worst {
        Worst {
            entries: Vec::new(),
        }
    }

    fn max(&self) -> f64 {
        self.entries.first().map_or(0.0, |e| e.0)
    }

    fn offer(&mut self, error: f64, describe: impl FnOnce() -> String) {
        if error.is_nan() {
            self.entries.insert(0, (f64::INFINITY, describe()));
        } else if self.entries.len() < Self::KEEP || error > self.entries.last().unwrap().0 {
            let at = self.entries.partition_point(|e| e.0 >= error);
            self.entries.insert(at, (error, describe()));
        }
        self.entries.truncate(Self::KEEP);
    }

    fn print(&self, what: &str) {
        println!("{what}: max relative error {:.3e}", self.max());
        for (error, text) in self.entries.iter().filter(|e| e.0 > 1e-8) {
            println!("  {error:.3e}  {text}");
        }
    }
}

fn describe_variable(nlp: &Nlp, j: usize) -> String {
    format!("variable {j} (nominal {})", nlp.x_nominal[j])
}

/// Checks the objective gradient and every Jacobian entry from `eval_first` against central
/// differences of `eval_value`, and that the Jacobian pattern covers every nonzero the
/// differences find. Duplicate (row, col) entries of the pattern are summed, as IPOPT does.
/// Prints the worst entries; returns the largest relative error.
pub fn check_first_derivatives(nlp: &mut Nlp, x: &[f64]) -> f64 {
    let (n, m) = (nlp.n_variables(), nlp.n_constraints());
    assert_eq!(x.len(), n);
    let nnz = nlp.jac_rows.len();
    assert_eq!(nlp.jac_cols.len(), nnz);
    assert!(
        nlp.jac_rows.iter().all(|&r| r < m),
        "Jacobian row out of range"
    );
    assert!(
        nlp.jac_cols.iter().all(|&c| c < n),
        "Jacobian column out of range"
    );

    let mut grad = vec![0.0; n];
    let mut jac = vec![0.0; nnz];
    nlp.eval_first(x, &mut grad, &mut jac).unwrap();
    // Column-wise view of the pattern: entry indices per column.
    let mut by_col: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, &c) in nlp.jac_cols.iter().enumerate() {
        by_col[c].push(k);
    }

    let mut worst = Worst::new();
    let mut xp = x.to_vec();
    let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
    let mut exact = vec![0.0; m];
    let mut in_pattern = vec![false; m];
    for j in 0..n {
        let h = step(x[j]);
        xp[j] = x[j] + h;
        let fp = nlp.eval_value(&xp, &mut gp).unwrap();
        xp[j] = x[j] - h;
        let fm = nlp.eval_value(&xp, &mut gm).unwrap();
        xp[j] = x[j];
        let dh = 2.0 * h;

        let fd = (fp - fm) / dh;
        worst.offer(relative_error(grad[j], fd), || {
            format!(
                "objective gradient, {}: exact {:.9e}, fd {fd:.9e}",
                describe_variable(nlp, j),
                grad[j]
            )
        });

        for &k in &by_col[j] {
            exact[nlp.jac_rows[k]] += jac[k];
            in_pattern[nlp.jac_rows[k]] = true;
        }
        for r in 0..m {
            let fd = (gp[r] - gm[r]) / dh;
            let e = relative_error(exact[r], fd);
            worst.offer(e, || {
                format!(
                    "row {r} `{}`, {}{}: exact {:.9e}, fd {fd:.9e}",
                    nlp.constraint_name(r),
                    describe_variable(nlp, j),
                    if in_pattern[r] {
                        ""
                    } else {
                        " (outside the pattern)"
                    },
                    exact[r]
                )
            });
        }
        for &k in &by_col[j] {
            exact[nlp.jac_rows[k]] = 0.0;
            in_pattern[nlp.jac_rows[k]] = false;
        }
    }
    worst.print("first derivatives");
    worst.max()
}

/// σ ∇f + Jᵀλ from `eval_first`.
fn lagrangian_gradient(
    nlp: &mut Nlp,
    x: &[f64],
    sigma: f64,
    lambda: &[f64],
    grad: &mut [f64],
    jac: &mut [f64],
) -> Vec<f64> {
    nlp.eval_first(x, grad, jac).unwrap();
    let mut out: Vec<f64> = grad.iter().map(|g| sigma * g).collect();
    for (k, v) in jac.iter().enumerate() {
        out[nlp.jac_cols[k]] += lambda[nlp.jac_rows[k]] * v;
    }
    out
}

/// Checks the Hessian of the Lagrangian σ f + λᵀg from `eval_second` (lower triangle,
/// duplicate slots summed, mirrored into the full symmetric matrix) against central
/// differences of the Lagrangian gradient built from `eval_first`, over every entry of the
/// full n×n matrix (so entries missing from the pattern are caught). Prints the worst
/// entries; returns the largest relative error.
pub fn check_second_derivatives(nlp: &mut Nlp, x: &[f64], sigma: f64, lambda: &[f64]) -> f64 {
    let (n, m) = (nlp.n_variables(), nlp.n_constraints());
    assert_eq!(x.len(), n);
    assert_eq!(lambda.len(), m);
    let nnz = nlp.hess_rows.len();
    assert_eq!(nlp.hess_cols.len(), nnz);
    for (&r, &c) in nlp.hess_rows.iter().zip(&nlp.hess_cols) {
        assert!(
            r < n && c <= r,
            "Hessian entry ({r}, {c}) is not in the lower triangle"
        );
    }

    let mut hess = vec![0.0; nnz];
    nlp.eval_second(x, sigma, lambda, &mut hess).unwrap();
    // Column j of the full symmetric matrix: (row, slot) pairs from both triangles.
    let mut by_col: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, (&r, &c)) in nlp.hess_rows.iter().zip(&nlp.hess_cols).enumerate() {
        by_col[c].push((r, k));
        if r != c {
            by_col[r].push((c, k));
        }
    }

    let mut grad = vec![0.0; n];
    let mut jac = vec![0.0; nlp.jac_rows.len()];
    let mut worst = Worst::new();
    let mut xp = x.to_vec();
    let mut exact = vec![0.0; n];
    let mut in_pattern = vec![false; n];
    for j in 0..n {
        let h = step(x[j]);
        xp[j] = x[j] + h;
        let lp = lagrangian_gradient(nlp, &xp, sigma, lambda, &mut grad, &mut jac);
        xp[j] = x[j] - h;
        let lm = lagrangian_gradient(nlp, &xp, sigma, lambda, &mut grad, &mut jac);
        xp[j] = x[j];

        for &(i, k) in &by_col[j] {
            exact[i] += hess[k];
            in_pattern[i] = true;
        }
        for i in 0..n {
            let fd = (lp[i] - lm[i]) / (2.0 * h);
            worst.offer(relative_error(exact[i], fd), || {
                format!(
                    "H[{i}][{j}]{}: exact {:.9e}, fd {fd:.9e}",
                    if in_pattern[i] {
                        ""
                    } else {
                        " (outside the pattern)"
                    },
                    exact[i]
                )
            });
        }
        for &(i, _) in &by_col[j] {
            exact[i] = 0.0;
            in_pattern[i] = false;
        }
    }
    worst.print("second derivatives");
    worst.max()
}
