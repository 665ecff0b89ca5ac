//! IPOPT's linear solver `loam`: the callbacks `ipopt_shim.cc` calls for each KKT system,
//! backed by the sparse LDLᵀ of [`super::ldl`].
//!
//! IPOPT hands over the pattern once per solve (upper triangle by rows, 0-based), then, each
//! iteration, new values, a right-hand side or several, and the number of negative eigenvalues
//! it expects (the number of constraint rows). The answer is the solution and the inertia, or
//! "wrong inertia" (IPOPT then adds `δw I` to the primal block and asks again), or "singular"
//! (IPOPT then adds `−δc I` to the constraint block).
//!
//! **Status: experimental, not the default.** Without pivoting, the constraint rows and the
//! variables with no curvature give zero pivots that must be regularised (84 of 1481 on the
//! rigid hopper even with each constraint row ordered after one of its variables), and the
//! inertia of the regularised factor misleads IPOPT's convexification: measured on every
//! shipped problem (`loam solve P --set solver.linear_solver=loam`), none converges where
//! MUMPS does (hopper_granular: restoration failed after 1352 iterations; hopper_rigid:
//! 3000 iterations; the planar problems: restoration failed). Returning "singular" on a
//! tiny pivot instead (IPOPT then regularises `δc`) failed too. What it needs is 2×2
//! pivots (a matching of constraint rows to variables, compressed into the ordering) or
//! threshold pivoting with delayed pivots, as MA27/MA57 and MUMPS do.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::ldl::{block_ordering, kkt_pairs, Factor, Ldl, Refine};
use super::multifrontal::Multifrontal;

/// IPOPT's `ESymSolverStatus`.
const SUCCESS: c_int = 0;
const SINGULAR: c_int = 1;
const WRONG_INERTIA: c_int = 2;
const FATAL_ERROR: c_int = 4;

/// A pivot block whose determinant is within this many times its rounding error (relative
/// to the terms it was computed from) counts as singular and is regularised.
const TINY: f64 = 1e4 * f64::EPSILON;
/// The size of a regularised pivot in the equilibrated matrix (largest entries about 1).
const DELTA: f64 = 1e-9;
/// A solve through regularised pivots is refined against the true matrix to this relative
/// residual; one that stays above it means the matrix is singular.
const REFINED: f64 = 1e-10;
const MAX_REFINEMENT: usize = 10;

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
}

pub static CALLBACKS: Callbacks = Callbacks {
    create,
    structure,
    solve,
    destroy,
};

/// One KKT solver: the analysed pattern and the latest factors.
#[derive(Default)]
pub struct KktSolver {
    /// The pattern as IPOPT gave it, until the first factorisation tells which rows are
    /// constraints.
    pattern: Option<(usize, Vec<usize>, Vec<usize>)>,
    /// Rows before this index are the primal block (IPOPT tells with each inertia check).
    positive: usize,
    factors: Option<Factors>,
    /// Inertia and regularisation of the latest factorisation.
    negative: usize,
    regularized: usize,
}

/// The factorisation behind the solver.
enum Factors {
    /// Static 2×2 pivots, no dynamic pivoting ([`Ldl`]).
    Static(Ldl),
    /// Threshold pivoting with delayed pivots ([`Multifrontal`]).
    Multifrontal(Multifrontal),
}

impl Factors {
    fn refine(&mut self) -> &mut dyn Refine {
        match self {
            Factors::Static(ldl) => ldl,
            Factors::Multifrontal(f) => f,
        }
    }
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
            // Paired and ordered at the first factorisation, when IPOPT has said which rows
            // are constraints and the values tell which variables have no curvature.
            let pairs = kkt_pairs(n, rows, cols, values, self.positive);
            // Rows that would be zero pivots alone: the constraints, and the variables with a
            // zero diagonal left without a partner. They wait for a neighbour.
            let mut zero: Vec<bool> = (0..n).map(|i| i >= self.positive).collect();
            let largest = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            for (k, (&r, &c)) in rows.iter().zip(cols).enumerate() {
                if r == c && r < self.positive {
                    zero[r] = values[k].abs() <= 1e-14 * largest;
                }
            }
            let factors = if std::env::var_os("LOAM_KKT_STATIC").is_some() {
                Ldl::analyse_pairs(n, rows, cols, &pairs, &zero).map(Factors::Static)
            } else {
                block_ordering(n, rows, cols, &pairs, &zero)
                    .and_then(|(perm, _)| Multifrontal::analyse(n, rows, cols, perm))
                    .map(|mut f| {
                        if let Some(u) = std::env::var("LOAM_KKT_U").ok().and_then(|v| v.parse().ok()) {
                            f.set_threshold(u);
                        }
                        Factors::Multifrontal(f)
                    })
            };
            match factors {
                Ok(factors) => self.factors = Some(factors),
                Err(_) => return Outcome::Failed,
            }
        }
        let positive = self.positive;
        let Some(factors) = self.factors.as_mut() else {
            return Outcome::Failed;
        };
        if let Some(values) = values {
            let floor = std::env::var("LOAM_KKT_FLOOR").ok().and_then(|v| v.parse().ok()).unwrap_or(DELTA);
            let outcome = match factors {
                Factors::Static(ldl) => ldl.factor(values, positive, TINY, floor),
                Factors::Multifrontal(f) => f.factor(values, positive, floor),
            };
            match outcome {
                Factor::NotFinite => return Outcome::Failed,
                Factor::Done {
                    negative,
                    regularized,
                } => {
                    if let Some(dir) = std::env::var_os("LOAM_KKT_DUMP") {
                        static COUNT: std::sync::atomic::AtomicUsize =
                            std::sync::atomic::AtomicUsize::new(0);
                        let k = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let mut text = format!("{n} {positive} {negative} {regularized}\n");
                        for ((r, c), v) in rows.iter().zip(cols).zip(values) {
                            text += &format!("{r} {c} {v:e}\n");
                        }
                        let path = std::path::Path::new(&dir).join(format!("kkt{k:04}.txt"));
                        std::fs::write(path, text).unwrap();
                    }
                    self.negative = negative;
                    self.regularized = regularized;
                }
            }
        }
        if check_inertia && self.negative != expected_negative {
            return Outcome::WrongInertia;
        }
        // Only a fresh factorisation may be called singular: IPOPT cannot perturb the matrix
        // in the middle of its own iterative refinement (it aborts).
        let fresh = values.is_some();
        if fresh && self.regularized > 0 && std::env::var_os("LOAM_KKT_SINGULAR").is_some() {
            return Outcome::Singular;
        }
        for b in rhs.chunks_mut(n) {
            let residual = factors.refine().solve_refined(b, MAX_REFINEMENT);
            if std::env::var_os("LOAM_KKT_DEBUG").is_some() {
                eprintln!("residual {residual:.3e} reg {}", self.regularized);
            }
            if residual > REFINED && fresh {
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
