//! A multifrontal LDLᵀ factorisation with threshold pivoting (1×1 and 2×2 pivots, delayed
//! pivots) for IPOPT's KKT systems, with their inertia: `linear_solver: loam`.
//!
//! The KKT matrix of an interior-point step is symmetric indefinite; a factorisation without
//! pivoting has to divide by whatever pivots the ordering gives it, and the small ones make
//! its factors grow until the solves are useless (see [`super::ordering`] for loam's earlier
//! static-pivot factorisation and what it measured). This is the classic
//! remedy of MA27/MA57 and MUMPS (Duff and Reid, "The multifrontal solution of indefinite
//! sparse symmetric linear equations", ACM TOMS 9(3), 1983):
//!
//! - **Analysis** (once per solve): a fill-reducing order (AMD on the graph in which each
//!   constraint row is kept next to a variable it constrains, [`super::ordering::kkt_order`]),
//!   the elimination tree, the structure of L, and relaxed supernodes: chains of columns
//!   with (nearly) the same structure, each eliminated in one dense *front* (its lower
//!   triangle stored).
//! - **Factorisation** (each IPOPT iteration): the fronts in tree order. A front gathers its
//!   columns' entries of the matrix and its children's contribution blocks (extend-add), then
//!   eliminates its fully summed columns with Bunch–Kaufman-style pivots: a 1×1 pivot
//!   `d` is taken when `|d| ≥ u · max|column|`, else a 2×2 pivot with the column's largest
//!   fully summed entry when it passes the Duff–Reid test `|D⁻¹| γ ≤ 1/u`; a column that finds
//!   neither is *delayed*: passed to the parent front with the contribution block, where more
//!   of its entries are summed. A root front must eliminate everything and takes its best
//!   pivot regardless.
//! - The matrix is equilibrated first (Ruiz's symmetric scaling), and every pivot eigenvalue
//!   smaller than a floor is raised to it ([`perturb`](kernels::perturb)); solves are refined
//!   iteratively against the unperturbed matrix.
//!
//! - Fronts that receive no delayed column (most of them) assemble through slots the
//!   analysis computed; only the others map their rows at factorisation time.
//!
//! Measured against MUMPS on every shipped problem and the height sweep: README, "Linear
//! solvers" (per IPOPT iteration it now costs as much as MUMPS on the rigid jump and less on
//! every other shipped problem, the planar ones included). Left for later: the dense kernels are plain loops (no blocking, no
//! BLAS: the hopper's fronts hold 15 rows on average); the 2×2 partner is searched among the
//! fully summed columns only.
//!
//! By Sylvester's law of inertia the eigenvalue signs of D's 1×1 and 2×2 blocks are the
//! matrix's inertia, which IPOPT needs.

mod analyse;
mod factor;
mod kernels;
mod solve;
#[cfg(test)]
mod tests;

const NONE: usize = usize::MAX;
/// Passes of Ruiz's equilibration per factorisation (each O(nonzeros); the row maxima are
/// within a few per cent of 1 after five).
const RUIZ_PASSES: usize = 5;

/// How a factorisation went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// Factorised; `negative` eigenvalues of D are negative, `regularized` pivot blocks had
    /// an eigenvalue raised to the floor ([`perturb`](kernels::perturb)).
    Done { negative: usize, regularized: usize },
    /// A pivot was not finite (a NaN or infinite entry, or overflow).
    NotFinite,
    /// Stopped when `negative` pivots had turned out negative, more than the caller allowed
    /// ([`Multifrontal::factor_within`]); the factors are incomplete and must not be used.
    TooNegative { negative: usize },
}

/// One eliminated pivot of a front: its position in the front and D's block inverse.
#[derive(Clone, Copy, Debug)]
enum Pivot {
    One { at: usize, inverse: f64 },
    Two { at: usize, inverse: [f64; 3] },
}

/// A factorised front: its rows (after pivoting; the first `eliminated` are its pivots) and
/// the columns of L for them (`rows.len() × eliminated`, column-major).
#[derive(Clone, Debug, Default)]
struct Front {
    rows: Vec<usize>,
    eliminated: usize,
    l: Vec<f64>,
    pivots: Vec<Pivot>,
}

/// A contribution block on its way to the parent front: its rows (the first `delayed` are
/// columns the child could not eliminate) and its dense values (column-major, symmetric).
#[derive(Clone, Debug, Default)]
struct Contribution {
    /// The supernode that sent it.
    from: usize,
    rows: Vec<usize>,
    delayed: usize,
    values: Vec<f64>,
}

#[derive(Clone, Debug)]
pub struct Multifrontal {
    /// `perm[new] = old`.
    perm: Vec<usize>,
    /// Supernode s holds the columns `first[s]..first[s + 1]` (new numbering).
    first: Vec<usize>,
    parent: Vec<usize>,
    /// The rows of each supernode's front below its own columns (sorted, new numbering).
    below: Vec<Vec<usize>>,
    /// The input entries each supernode assembles: (entry, new row, new column).
    entries: Vec<Vec<(usize, usize, usize)>>,
    /// Where each of those entries lands in its front (lower triangle, column-major) when the
    /// front holds no delayed column: its own columns, then `below`.
    entry_slots: Vec<Vec<u32>>,
    /// For each supernode, the positions of its `below` rows in its parent's front when
    /// neither front holds a delayed column (increasing, as both are sorted).
    relative: Vec<Vec<u32>>,
    /// The input pattern (one triangle, original numbering; 32-bit, which halves the
    /// equilibration's and the refinement's index traffic) and its latest values.
    rows: Vec<u32>,
    cols: Vec<u32>,
    values: Vec<f64>,
    scale: Vec<f64>,
    /// One front per supernode (its buffers kept between factorisations).
    fronts: Vec<Front>,
    position: Vec<usize>,
    work: Vec<f64>,
    /// A front's rows of the work vector, during a solve.
    local: Vec<f64>,
    /// The largest |entry| of the matrix last factorised, and the refinement's workspaces
    /// (right-hand side, residual, the solution before a correction).
    norm: f64,
    rhs: Vec<f64>,
    residual: Vec<f64>,
    before: Vec<f64>,
    /// The dense front being factorised, and spent contribution blocks to reuse.
    scratch: Vec<f64>,
    pool: Vec<Contribution>,
    pending: Vec<Vec<Contribution>>,
}
