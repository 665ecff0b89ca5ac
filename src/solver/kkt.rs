//! IPOPT's linear solver `loam`: the callbacks `ipopt_shim.cc` calls for each KKT system,
//! backed by the multifrontal LDLᵀ of [`super::multifrontal`].
//!
//! IPOPT hands over the pattern once per solve (upper triangle by rows, 0-based), then, each
//! iteration, new values, a right-hand side or several, and the number of negative eigenvalues
//! it expects (the number of constraint rows). The answer is the solution and the inertia, or
//! "wrong inertia" (IPOPT then adds `δw I` to the primal block and asks again), or "singular"
//! (IPOPT then adds `−δc I` to the constraint block). A factorisation whose negative pivots
//! already outnumber IPOPT's count stops there and answers "wrong inertia"
//! ([`Multifrontal::factor_within`]): IPOPT only asks whether the count is too large or too
//! small, so its path is the same. When IPOPT cannot refine a solution to
//! its tolerance it asks for more quality, and the pivot threshold is raised as IPOPT's MUMPS
//! interface raises its `mumps_pivtol` (from 1e-6 by u ← u^0.75 up to 0.1).
//!
//! The analysis (pairs, order, elimination tree, fronts) is made at the first factorisation,
//! when IPOPT has said which rows are constraints and the values say which variables have no
//! curvature; every later factorisation reuses it.
//!
//! **Status: an option, not the default** (`linear_solver: loam`). It converges on every
//! shipped problem and every height of the 30–100 mm sweep on both terrains, to the same
//! optima as MUMPS within 1e-4 except on problems with several local optima (the planar
//! monopod: a worse one); README, "Linear solvers", has the comparison.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::multifrontal::{Factor, Multifrontal};
use super::ordering::kkt_order;

/// IPOPT's `ESymSolverStatus`.
const SUCCESS: c_int = 0;
const SINGULAR: c_int = 1;
const WRONG_INERTIA: c_int = 2;
const FATAL_ERROR: c_int = 4;

/// The smallest pivot eigenvalue in the equilibrated matrix (largest entries about 1); a
/// smaller one is raised to it and the solve refined against the true matrix.
const FLOOR: f64 = 1e-9;
/// A solve is refined against the true matrix to this relative residual; one that stays
/// above it means the matrix is (numerically) singular.
const REFINED: f64 = 1e-10;
const MAX_REFINEMENT: usize = 10;
/// The pivot threshold u of the first factorisation, and the largest IPOPT may raise it to
/// (IPOPT's defaults for MUMPS: `mumps_pivtol` 1e-6, `mumps_pivtolmax` 0.1).
const THRESHOLD: f64 = 1e-6;
const MAX_THRESHOLD: f64 = 0.1;

/// The function table handed to `loam_UseLinearSolver`.
#[repr(C)]
pub struct Callbacks {
    create: extern "C" fn() -> *mut c_void,
    structure: unsafe extern "C" fn(*mut c_void, c_int, c_int, *const c_int, *const c_int) -> c_int,
    solve: unsafe extern "C" fn(
        *mut c_void,
        bool,
        *const f64,
        c_int,
        *mut f64,
        bool,
        c_int,
        *mut c_int,
    ) -> c_int,
    destroy: unsafe extern "C" fn(*mut c_void),
    increase_quality: unsafe extern "C" fn(*mut c_void) -> bool,
}

pub static CALLBACKS: Callbacks = Callbacks {
    create,
    structure,
    solve,
    destroy,
    increase_quality,
};

/// One KKT solver: the analysed pattern and the latest factors.
#[derive(Default)]
pub struct KktSolver {
    /// The pattern as IPOPT gave it, until the first factorisation tells which rows are
    /// constraints.
    pattern: Option<(usize, Vec<usize>, Vec<usize>)>,
    /// Rows before this index are the primal block (IPOPT tells with each inertia check).
    positive: usize,
    factors: Option<Multifrontal>,
    /// Inertia and perturbed pivots of the latest factorisation.
    negative: usize,
    regularized: usize,
    /// The pivot threshold, once IPOPT has asked for more quality.
    threshold: Option<f64>,
}

/// What loam's solver did for IPOPT in one solve (`solution.json`'s `kkt_systems`): how
/// often it factorised, how many of those factorisations had the wrong inertia (IPOPT then
/// shifts the Hessian block and asks again), and how many right-hand sides it solved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct KktCounts {
    pub factorisations: usize,
    pub wrong_inertia: usize,
    pub solves: usize,
}

thread_local! {
    /// IPOPT calls its linear solver on the thread that runs the solve, so the counts of the
    /// solve running on this thread ([`take_counts`]).
    static COUNTS: std::cell::Cell<KktCounts> = const {
        std::cell::Cell::new(KktCounts { factorisations: 0, wrong_inertia: 0, solves: 0 })
    };
}

/// The counts since the last call on this thread, which starts them again from zero.
pub fn take_counts() -> KktCounts {
    COUNTS.take()
}

fn count(change: impl FnOnce(&mut KktCounts)) {
    COUNTS.with(|c| {
        let mut counts = c.get();
        change(&mut counts);
        c.set(counts);
    });
}

/// What one factorisation told IPOPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Solved,
    Singular,
    WrongInertia,
    Failed,
}

impl KktSolver {
    /// Analyses the pattern: `ia` (dim + 1 row starts) and `ja` (column of each entry) of the
    /// upper triangle.
    pub fn analyse(&mut self, dim: usize, ia: &[usize], ja: &[usize]) -> Result<(), String> {
        let mut rows = Vec::with_capacity(ja.len());
        for r in 0..dim {
            rows.extend(std::iter::repeat_n(r, ia[r + 1] - ia[r]));
        }
        self.pattern = Some((dim, rows, ja.to_vec()));
        self.factors = None;
        self.positive = dim;
        Ok(())
    }

    /// Factorises (when `values` is Some) and solves each right-hand side in place. The
    /// last `expected_negative` rows are the constraint block.
    pub fn solve(
        &mut self,
        values: Option<&[f64]>,
        rhs: &mut [f64],
        check_inertia: bool,
        expected_negative: usize,
    ) -> Outcome {
        let Some((n, rows, cols)) = self.pattern.as_ref() else {
            return Outcome::Failed;
        };
        let n = *n;
        if check_inertia {
            self.positive = n.saturating_sub(expected_negative);
        }
        if let (None, Some(values)) = (&self.factors, values) {
            let analysed = kkt_order(n, rows, cols, values, self.positive)
                .and_then(|perm| Multifrontal::analyse(n, rows, cols, perm));
            match analysed {
                Ok(factors) => self.factors = Some(factors),
                Err(_) => return Outcome::Failed,
            }
        }
        let threshold = self.threshold();
        let Some(factors) = self.factors.as_mut() else {
            return Outcome::Failed;
        };
        if let Some(values) = values {
            count(|c| c.factorisations += 1);
            // With the inertia checked, a factorisation with too many negative pivots stops.
            let most_negative = if check_inertia {
                expected_negative
            } else {
                usize::MAX
            };
            let fac = factors.factor_within(values, self.positive, threshold, FLOOR, most_negative);
            match fac {
                Factor::NotFinite => return Outcome::Failed,
                Factor::TooNegative { negative } => {
                    self.negative = negative;
                    count(|c| c.wrong_inertia += 1);
                    return Outcome::WrongInertia;
                }
                Factor::Done {
                    negative,
                    regularized,
                } => {
                    self.negative = negative;
                    self.regularized = regularized;
                }
            }
        }
        if check_inertia && self.negative != expected_negative {
            if values.is_some() {
                count(|c| c.wrong_inertia += 1);
            }
            return Outcome::WrongInertia;
        }
        // Only a fresh factorisation may be called singular: IPOPT cannot perturb the matrix
        // in the middle of its own iterative refinement (it aborts).
        let fresh = values.is_some();
        for b in rhs.chunks_mut(n) {
            count(|c| c.solves += 1);
            if factors.solve_refined(b, MAX_REFINEMENT) > REFINED && fresh {
                return Outcome::Singular;
            }
            if b.iter().any(|x| !x.is_finite()) {
                return if fresh {
                    Outcome::Singular
                } else {
                    Outcome::Failed
                };
            }
        }
        Outcome::Solved
    }

    /// Raises the pivot threshold as IPOPT's MUMPS interface raises its pivtol (u ← u^0.75,
    /// up to [`MAX_THRESHOLD`]); false when it is already there.
    pub fn increase_quality(&mut self) -> bool {
        if self.regularized > 0 {
            // Perturbed pivots: the matrix is (numerically) singular, which a larger threshold
            // does not cure; IPOPT then perturbs it itself (δw, δc). Measured: raising the
            // threshold here drove it to its maximum on most problems and made the
            // quadruped's fronts 6 times dearer (4.7 s against 20 s for its solve).
            return false;
        }
        let current = self.threshold();
        let raised = current.powf(0.75).min(MAX_THRESHOLD);
        if raised <= current {
            return false;
        }
        self.threshold = Some(raised);
        true
    }

    fn threshold(&self) -> f64 {
        self.threshold.unwrap_or(THRESHOLD)
    }

    /// Negative pivots of the latest factorisation.
    pub fn negative(&self) -> usize {
        self.negative
    }
}

extern "C" fn create() -> *mut c_void {
    Box::into_raw(Box::<KktSolver>::default()).cast()
}

/// # Safety
/// `solver` comes from `create`; `ia` has `dim + 1` and `ja` `nonzeros` entries.
unsafe extern "C" fn structure(
    solver: *mut c_void,
    dim: c_int,
    nonzeros: c_int,
    ia: *const c_int,
    ja: *const c_int,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract (IPOPT's InitializeStructure arguments).
        let solver = unsafe { &mut *solver.cast::<KktSolver>() };
        let (dim, nonzeros) = (dim as usize, nonzeros as usize);
        // SAFETY: as above.
        let (ia, ja) = unsafe {
            (
                std::slice::from_raw_parts(ia, dim + 1),
                std::slice::from_raw_parts(ja, nonzeros),
            )
        };
        let ia: Vec<usize> = ia.iter().map(|&i| i as usize).collect();
        let ja: Vec<usize> = ja.iter().map(|&j| j as usize).collect();
        solver.analyse(dim, &ia, &ja)
    }));
    match result {
        Ok(Ok(())) => SUCCESS,
        _ => FATAL_ERROR,
    }
}

/// # Safety
/// `solver` comes from `create` and was analysed; `values` has one entry per analysed
/// nonzero; `rhs` has `nrhs * dim` entries; `negative` is writable.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn solve(
    solver: *mut c_void,
    new_matrix: bool,
    values: *const f64,
    nrhs: c_int,
    rhs: *mut f64,
    check_negative: bool,
    expected_negative: c_int,
    negative: *mut c_int,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract (IPOPT's MultiSolve arguments).
        let solver = unsafe { &mut *solver.cast::<KktSolver>() };
        let Some((n, _, cols)) = solver.pattern.as_ref() else {
            return Outcome::Failed;
        };
        let (n, nnz) = (*n, cols.len());
        // SAFETY: as above.
        let values = new_matrix.then(|| unsafe { std::slice::from_raw_parts(values, nnz) });
        // SAFETY: as above.
        let rhs = unsafe { std::slice::from_raw_parts_mut(rhs, n * nrhs as usize) };
        let outcome = solver.solve(values, rhs, check_negative, expected_negative as usize);
        // SAFETY: as above.
        unsafe { *negative = solver.negative() as c_int };
        outcome
    }));
    match result {
        Ok(Outcome::Solved) => SUCCESS,
        Ok(Outcome::Singular) => SINGULAR,
        Ok(Outcome::WrongInertia) => WRONG_INERTIA,
        Ok(Outcome::Failed) | Err(_) => FATAL_ERROR,
    }
}

/// # Safety
/// `solver` comes from `create` and is not used again.
unsafe extern "C" fn destroy(solver: *mut c_void) {
    if !solver.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(solver.cast::<KktSolver>()) });
    }
}

/// # Safety
/// `solver` comes from `create`.
unsafe extern "C" fn increase_quality(solver: *mut c_void) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract.
        let solver = unsafe { &mut *solver.cast::<KktSolver>() };
        solver.increase_quality()
    }))
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The upper triangle by rows (IPOPT's CSR, 0-based) of a dense symmetric matrix.
    fn upper_csr(a: &[Vec<f64>]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let (mut ia, mut ja, mut values) = (vec![0], Vec::new(), Vec::new());
        for (i, row) in a.iter().enumerate() {
            for (j, &v) in row.iter().enumerate().skip(i) {
                if v != 0.0 || i == j {
                    ja.push(j);
                    values.push(v);
                }
            }
            ia.push(ja.len());
        }
        (ia, ja, values)
    }

    /// IPOPT's protocol on a small KKT matrix (two variables, one constraint): the right
    /// inertia solves the system; asking for another inertia is answered "wrong inertia", as
    /// IPOPT needs to decide on convexifying; a later solve with the same factors reuses
    /// them.
    #[test]
    fn answers_ipopts_inertia_checks_and_solves() {
        // [2 0 1; 0 0 1; 1 1 0]: the second variable has no curvature.
        let a = vec![
            vec![2.0, 0.0, 1.0],
            vec![0.0, 0.0, 1.0],
            vec![1.0, 1.0, 0.0],
        ];
        let (ia, ja, values) = upper_csr(&a);
        let mut solver = KktSolver::default();
        solver.analyse(3, &ia, &ja).unwrap();
        let mut rhs = vec![3.0, 1.0, 2.0];
        assert_eq!(
            solver.solve(Some(&values), &mut rhs, true, 1),
            Outcome::Solved
        );
        assert_eq!(solver.negative(), 1);
        // x = (1, 1, 1): 2 + 1 = 3, 1 = 1, 1 + 1 = 2.
        for x in &rhs {
            assert!((x - 1.0).abs() < 1e-14, "{rhs:?}");
        }
        let mut again = vec![3.0, 1.0, 2.0];
        assert_eq!(solver.solve(None, &mut again, false, 1), Outcome::Solved);
        assert_eq!(again, rhs);
        let mut rhs = vec![3.0, 1.0, 2.0];
        assert_eq!(
            solver.solve(Some(&values), &mut rhs, true, 2),
            Outcome::WrongInertia
        );
    }

    /// IPOPT's requests for quality raise the pivot threshold as for MUMPS (1e-6 by
    /// u ← u^0.75 to 0.1, then no more), but not after perturbed pivots.
    #[test]
    fn quality_requests_raise_the_threshold_to_its_cap() {
        let mut solver = KktSolver::default();
        let mut thresholds = vec![solver.threshold()];
        while solver.increase_quality() {
            thresholds.push(solver.threshold());
        }
        assert_eq!(thresholds[0], THRESHOLD);
        assert!((thresholds[1] - 1e-6_f64.powf(0.75)).abs() < 1e-12);
        assert_eq!(*thresholds.last().unwrap(), MAX_THRESHOLD);
        assert!(thresholds.windows(2).all(|w| w[1] > w[0]));
        assert_eq!(thresholds.len(), 8, "{thresholds:?}");
        let mut perturbed = KktSolver {
            regularized: 1,
            ..KktSolver::default()
        };
        assert!(!perturbed.increase_quality());
        assert_eq!(perturbed.threshold(), THRESHOLD);
    }
}
