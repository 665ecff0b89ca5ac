//! Safe wrapper over IPOPT 3.14's C interface (`IpStdCInterface.h`).
//!
//! Linking is left to the crate's `build.rs` (`cargo:rustc-link-lib=dylib=ipopt`
//! plus a link-search path / rpath to the directory holding `libipopt.so`).
//! The FFI declarations assume IPOPT's default build: `ipnumber = double`,
//! `ipindex = int` (no `IPOPT_SINGLE`, no `IPOPT_INT64`).
//!
//! The library itself never prints. IPOPT prints its banner and iteration log
//! to C stdout unless the caller sets `print_level = 0` and `sb = yes`.

mod callbacks;
mod ffi;
mod options;
mod probe;
mod solve;
mod status;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use ffi::{FreeIpoptProblem, IpoptProblemPtr};

pub use options::{valid_settings, OptionValue};
pub use probe::probe_solve;
pub use status::IpoptStatus;

/// The value of IPOPT's `linear_solver` option that selects loam's own sparse LDLᵀ
/// (`super::kkt`, `super::multifrontal`) instead of one of IPOPT's.
pub const LOAM_LINEAR_SOLVER: &str = "loam";

/// Problem structure, fixed when the problem is created. Index style is C (0-based).
///
/// Bounds are passed to IPOPT as given; IPOPT treats `|b| >= 1e19` (including
/// `f64::INFINITY`) as "no bound".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NlpStructure {
    pub x_lower: Vec<f64>,
    pub x_upper: Vec<f64>,
    pub g_lower: Vec<f64>,
    pub g_upper: Vec<f64>,
    /// Sparse Jacobian pattern of g (row = constraint, col = variable).
    pub jac_rows: Vec<i32>,
    pub jac_cols: Vec<i32>,
    /// LOWER triangle pattern of the Hessian of the Lagrangian (row >= col).
    pub hess_rows: Vec<i32>,
    pub hess_cols: Vec<i32>,
}

impl NlpStructure {
    /// Number of variables.
    pub fn n(&self) -> usize {
        self.x_lower.len()
    }
    /// Number of constraints.
    pub fn m(&self) -> usize {
        self.g_lower.len()
    }

    /// Checks lengths and index ranges; `Ipopt::new` calls this.
    pub fn validate(&self) -> Result<(), IpoptError> {
        let err = |message: String| Err(IpoptError::Structure { message });
        let (n, m) = (self.x_lower.len(), self.g_lower.len());
        if self.x_upper.len() != n {
            return err(format!(
                "x_lower has {n} entries but x_upper has {}",
                self.x_upper.len()
            ));
        }
        if self.g_upper.len() != m {
            return err(format!(
                "g_lower has {m} entries but g_upper has {}",
                self.g_upper.len()
            ));
        }
        if self.jac_rows.len() != self.jac_cols.len() {
            return err(format!(
                "jac_rows has {} entries but jac_cols has {}",
                self.jac_rows.len(),
                self.jac_cols.len()
            ));
        }
        if self.hess_rows.len() != self.hess_cols.len() {
            return err(format!(
                "hess_rows has {} entries but hess_cols has {}",
                self.hess_rows.len(),
                self.hess_cols.len()
            ));
        }
        for (what, len) in [
            ("number of variables", n),
            ("number of constraints", m),
            ("number of Jacobian entries", self.jac_rows.len()),
            ("number of Hessian entries", self.hess_rows.len()),
        ] {
            if len > i32::MAX as usize {
                return err(format!("{what} ({len}) exceeds i32::MAX"));
            }
        }
        let in_range = |v: i32, len: usize| v >= 0 && (v as usize) < len;
        for (k, (&r, &c)) in self.jac_rows.iter().zip(&self.jac_cols).enumerate() {
            if !in_range(r, m) {
                return err(format!(
                    "Jacobian entry {k}: row {r} out of range 0..{m} (m = number of constraints)"
                ));
            }
            if !in_range(c, n) {
                return err(format!(
                    "Jacobian entry {k}: column {c} out of range 0..{n} (n = number of variables)"
                ));
            }
        }
        for (k, (&r, &c)) in self.hess_rows.iter().zip(&self.hess_cols).enumerate() {
            if !in_range(r, n) {
                return err(format!(
                    "Hessian entry {k}: row {r} out of range 0..{n} (n = number of variables)"
                ));
            }
            if !in_range(c, n) {
                return err(format!(
                    "Hessian entry {k}: column {c} out of range 0..{n} (n = number of variables)"
                ));
            }
            if c > r {
                return err(format!(
                    "Hessian entry {k}: ({r}, {c}) is above the diagonal; give the lower triangle (row >= col)"
                ));
            }
        }
        Ok(())
    }
}

/// The user's NLP. Each method returns false (or None) to signal an evaluation
/// error to IPOPT. Slices have exactly the lengths fixed by the `NlpStructure`.
pub trait Nlp {
    fn eval_f(&mut self, x: &[f64], new_x: bool) -> Option<f64>;
    fn eval_grad_f(&mut self, x: &[f64], new_x: bool, grad: &mut [f64]) -> bool;
    fn eval_g(&mut self, x: &[f64], new_x: bool, g: &mut [f64]) -> bool;
    /// `values` follows the order of `jac_rows`/`jac_cols`.
    fn eval_jac_g(&mut self, x: &[f64], new_x: bool, values: &mut [f64]) -> bool;
    /// `values` follows the order of `hess_rows`/`hess_cols` (lower triangle) and holds
    /// `obj_factor * ∇²f + Σ lambda_i ∇²g_i`.
    fn eval_h(
        &mut self,
        x: &[f64],
        new_x: bool,
        obj_factor: f64,
        lambda: &[f64],
        new_lambda: bool,
        values: &mut [f64],
    ) -> bool;
}

/// One call of IPOPT's intermediate callback.
#[derive(Clone, Debug)]
pub struct IterationInfo {
    pub iteration: usize,
    /// True while IPOPT is in its feasibility-restoration phase (alg_mod == 1).
    pub restoration: bool,
    pub objective: f64,
    pub inf_pr: f64,
    pub inf_du: f64,
    pub mu: f64,
    pub d_norm: f64,
    pub regularization: f64,
    pub alpha_du: f64,
    pub alpha_pr: f64,
    pub ls_trials: usize,
}

/// Bound and constraint multipliers, as IPOPT returns them (and accepts them for a warm start).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Multipliers {
    pub g: Vec<f64>,
    pub x_lower: Vec<f64>,
    pub x_upper: Vec<f64>,
}

/// The iterate with the smallest unscaled primal infeasibility seen during a solve.
#[derive(Clone, Debug, PartialEq)]
pub struct BestIterate {
    pub iteration: usize,
    pub x: Vec<f64>,
    pub g: Vec<f64>,
    /// max over constraint and variable-bound violations (unscaled, infinity norm).
    pub inf_pr: f64,
    pub objective: f64,
}

#[derive(Clone, Debug)]
pub struct SolveResult {
    pub status: IpoptStatus,
    /// What IpoptSolve returned.
    pub x: Vec<f64>,
    pub g: Vec<f64>,
    pub objective: f64,
    pub multipliers: Multipliers,
    /// The last `iter_count` the intermediate callback saw (0 if it was never called).
    pub iterations: usize,
    /// Every intermediate callback, in order.
    pub history: Vec<IterationInfo>,
    /// Smallest unscaled primal infeasibility (ties: lower objective) among the iterates
    /// seen by the intermediate callback, read with `GetIpoptCurrentIterate(scaled=false)`.
    pub best: Option<BestIterate>,
}

#[derive(thiserror::Error, Debug)]
pub enum IpoptError {
    #[error("invalid NLP structure: {message}")]
    Structure { message: String },
    #[error("IPOPT rejected option `{name}` = {value}: {message}")]
    Option {
        name: String,
        value: String,
        message: String,
    },
    #[error("CreateIpoptProblem returned null")]
    Create,
    #[error("IPOPT could not open output file `{}` (print_level {print_level})", path.display())]
    OutputFile { path: PathBuf, print_level: i32 },
    #[error("{what} has length {got}, expected {expected}")]
    Length {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("SetIpoptProblemScaling failed")]
    Scaling,
}

/// An IPOPT problem instance (owns the `IpoptProblem`, freed on drop).
pub struct Ipopt {
    problem: IpoptProblemPtr,
    structure: NlpStructure,
}

// SAFETY: the IpoptProblem is exclusively owned by this value and has no thread
// affinity; all access goes through `&mut self`. (IPOPT guards its MUMPS calls with a
// global mutex, so independent instances may solve on different threads.)
unsafe impl Send for Ipopt {}

impl Drop for Ipopt {
    fn drop(&mut self) {
        // SAFETY: `problem` came from CreateIpoptProblem, is non-null and freed once.
        unsafe { FreeIpoptProblem(self.problem) };
    }
}
