//! Radial-basis interpolation over θ = (d, φ) (docs/WRENCH_SPACE.md section 3.3): fitted once in
//! f64, evaluated generically over the scalar so the simulator and the planner share one source.

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use crate::scalar::Scalar;

/// Smoothing of the distance, r² → r² + δ²: keeps the kernels C² (a finite Hessian at the
/// nodes for CasADi) while changing values by O(δ³).
const DELTA: f64 = 1e-6;

/// The Gaussian width of the authors' published Pebbles model: exp(−(2.7 r)²).
const GAUSSIAN_SHAPE: f64 = 2.7;

/// The radial kernel and its coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// φ(r) = r³ on θ scaled by the grid spacings, D = diag(1/Δd, 1/Δφ), with an affine tail
    /// (reproduces affine data exactly). loam's default: median hull error 1.3 % on the RFT
    /// Sand-like grid against 4.7 % for `paper_linear` (docs/WRENCH_SPACE.md, "Implemented").
    #[default]
    Cubic,
    /// φ(r) = r on raw (d [m], φ [rad]), no tail: the authors' published Sand model.
    PaperLinear,
    /// φ(r) = exp(−(2.7 r)²) on raw (d, φ), no tail: the authors' published Pebbles model.
    PaperGaussian,
}

impl Kernel {
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Cubic => "cubic",
            Kernel::PaperLinear => "paper_linear",
            Kernel::PaperGaussian => "paper_gaussian",
        }
    }

    /// φ at squared distance `r2`.
    fn value<S: Scalar>(self, r2: S) -> S {
        let r2 = r2 + DELTA * DELTA;
        match self {
            // (r² + δ²)^{3/2}; a product and a square root cost a third of a `powf`.
            Kernel::Cubic => r2.clone() * r2.sqrt(),
            Kernel::PaperLinear => r2.sqrt(),
            Kernel::PaperGaussian => (r2 * -(GAUSSIAN_SHAPE * GAUSSIAN_SHAPE)).exp(),
        }
    }

    fn has_tail(self) -> bool {
        self == Kernel::Cubic
    }
}

/// Interpolants of several outputs over the same centres:
/// f_k(θ) = Σ_j a_jk φ(‖D(θ − θ_j)‖) + c_0k + c_1k (D θ)_d + c_2k (D θ)_φ.
#[derive(Clone, Debug)]
pub struct Rbf {
    kernel: Kernel,
    /// D's diagonal: 1/Δ for `cubic`, 1 for the raw-unit kernels.
    scale: [f64; 2],
    /// The centres D θ_j.
    centers: Vec<[f64; 2]>,
    /// a_jk, one row per output: weights[k][j].
    weights: Vec<Vec<f64>>,
    /// (c_0k, c_1k, c_2k); zero without a tail.
    tails: Vec<[f64; 3]>,
}

/// The interpolation system is singular (repeated or collinear nodes for the tail).
#[derive(Debug, Clone, Copy)]
pub struct Singular;

impl Rbf {
    /// Fits every column of `values` (one row per node) at `nodes` (θ_j = (d, φ)), with
    /// `spacing` = (Δd, Δφ) for the scaled kernel.
    #[allow(non_snake_case)]
    pub fn fit(
        kernel: Kernel,
        nodes: &[[f64; 2]],
        values: &DMatrix<f64>,
        spacing: [f64; 2],
    ) -> Result<Rbf, Singular> {
        let scale = match kernel {
            Kernel::Cubic => [1.0 / spacing[0], 1.0 / spacing[1]],
            Kernel::PaperLinear | Kernel::PaperGaussian => [1.0, 1.0],
        };
        let centers: Vec<[f64; 2]> = nodes
            .iter()
            .map(|t| [t[0] * scale[0], t[1] * scale[1]])
            .collect();
        let n = centers.len();
        let tail = if kernel.has_tail() { 3 } else { 0 };
        // [K P; Pᵀ 0] [a; c] = [f; 0]
        let mut A = DMatrix::zeros(n + tail, n + tail);
        for (i, ci) in centers.iter().enumerate() {
            for (j, cj) in centers.iter().enumerate() {
                A[(i, j)] = kernel.value((ci[0] - cj[0]).powi(2) + (ci[1] - cj[1]).powi(2));
            }
            if tail == 3 {
                for (k, p) in [1.0, ci[0], ci[1]].into_iter().enumerate() {
                    A[(i, n + k)] = p;
                    A[(n + k, i)] = p;
                }
            }
        }
        let mut rhs = DMatrix::zeros(n + tail, values.ncols());
        rhs.rows_mut(0, n).copy_from(values);
        let solution = A.lu().solve(&rhs).ok_or(Singular)?;
        if solution.iter().any(|x| !x.is_finite()) {
            return Err(Singular);
        }
        let weights = (0..values.ncols())
            .map(|k| solution.column(k).rows(0, n).iter().copied().collect())
            .collect();
        let tails = (0..values.ncols())
            .map(|k| match tail {
                3 => [solution[(n, k)], solution[(n + 1, k)], solution[(n + 2, k)]],
                _ => [0.0; 3],
            })
            .collect();
        Ok(Rbf {
            kernel,
            scale,
            centers,
            weights,
            tails,
        })
    }

    /// An interpolant given by its weights rather than fitted: `weights[k][j]` the weight of
    /// output k at centre `nodes[j]`, for a kernel without an affine tail (the paper kernels,
    /// on raw (d, φ)). `None` for a kernel with a tail.
    pub fn from_weights(kernel: Kernel, nodes: &[[f64; 2]], weights: Vec<Vec<f64>>) -> Option<Rbf> {
        if kernel.has_tail() {
            return None;
        }
        let outputs = weights.len();
        Some(Rbf {
            kernel,
            scale: [1.0, 1.0],
            centers: nodes.to_vec(),
            weights,
            tails: vec![[0.0; 3]; outputs],
        })
    }

    /// Every output at θ = (`depth`, `tilt`).
    pub fn eval<S: Scalar>(&self, depth: &S, tilt: &S) -> Vec<S> {
        self.eval_with(depth, tilt, &self.weights, &self.tails)
    }

    /// Linear combinations of the outputs at θ: per entry of `combinations`, Σ c·output_k
    /// over its (k, c). The interpolant is linear in its coefficients, so this combines them
    /// first and evaluates one interpolant per combination (cheaper than every output).
    pub fn eval_combined<S: Scalar>(
        &self,
        depth: &S,
        tilt: &S,
        combinations: &[Vec<(usize, f64)>],
    ) -> Vec<S> {
        let n = self.centers.len();
        let mut weights = Vec::with_capacity(combinations.len());
        let mut tails = Vec::with_capacity(combinations.len());
        for combination in combinations {
            let mut w = vec![0.0; n];
            let mut t = [0.0; 3];
            for &(k, c) in combination {
                for (wj, aj) in w.iter_mut().zip(&self.weights[k]) {
                    *wj += c * aj;
                }
                for (ti, ai) in t.iter_mut().zip(&self.tails[k]) {
                    *ti += c * ai;
                }
            }
            weights.push(w);
            tails.push(t);
        }
        self.eval_with(depth, tilt, &weights, &tails)
    }

    fn eval_with<S: Scalar>(
        &self,
        depth: &S,
        tilt: &S,
        weights: &[Vec<f64>],
        tails: &[[f64; 3]],
    ) -> Vec<S> {
        let x = depth.clone() * self.scale[0];
        let y = tilt.clone() * self.scale[1];
        let basis: Vec<S> = self
            .centers
            .iter()
            .map(|c| {
                self.kernel
                    .value((x.clone() - c[0]).square() + (y.clone() - c[1]).square())
            })
            .collect();
        weights
            .iter()
            .zip(tails)
            .map(|(weights, tail)| {
                let affine = x.clone() * tail[1] + y.clone() * tail[2] + tail[0];
                basis
                    .iter()
                    .zip(weights)
                    .fold(affine, |sum, (phi, &a)| sum + phi.clone() * a)
            })
            .collect()
    }
}
