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
//!   smaller than a floor is raised to it ([`perturb`]); solves are refined
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

const NONE: usize = usize::MAX;
/// Passes of Ruiz's equilibration per factorisation (each O(nonzeros); the row maxima are
/// within a few per cent of 1 after five).
const RUIZ_PASSES: usize = 5;

/// How a factorisation went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// Factorised; `negative` eigenvalues of D are negative, `regularized` pivot blocks had
    /// an eigenvalue raised to the floor ([`perturb`]).
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

impl Multifrontal {
    /// Analyses the pattern of a symmetric `n × n` matrix given by one triangle (entry k at
    /// `(rows[k], cols[k])`), eliminated in the order `perm` (`perm[new] = old`).
    pub fn analyse(
        n: usize,
        rows: &[usize],
        cols: &[usize],
        perm: Vec<usize>,
    ) -> Result<Multifrontal, String> {
        if rows.len() != cols.len() || perm.len() != n {
            return Err("pattern and order differ in length".into());
        }
        if u32::try_from(n).is_err() {
            return Err(format!("{n} rows: more than 32-bit indices address"));
        }
        if let Some(k) = (0..rows.len()).find(|&k| rows[k] >= n || cols[k] >= n) {
            return Err(format!(
                "entry {k} at ({}, {}) is outside the {n} x {n} matrix",
                rows[k], cols[k]
            ));
        }
        let mut pinv = vec![NONE; n];
        for (new, &old) in perm.iter().enumerate() {
            if old >= n || pinv[old] != NONE {
                return Err("the order is not a permutation".into());
            }
            pinv[old] = new;
        }
        // The lower triangle in the new numbering, by columns and by rows.
        let mut by_column: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (&r, &c) in rows.iter().zip(cols) {
            let (a, b) = (pinv[r], pinv[c]);
            let (i, j) = (a.max(b), a.min(b));
            if i != j {
                by_column[j].push(i);
                by_row[i].push(j);
            }
        }
        // Elimination tree (Liu's algorithm with path compression).
        let mut etree = vec![NONE; n];
        let mut ancestor = vec![NONE; n];
        for i in 0..n {
            for &j in &by_row[i] {
                let mut r = j;
                while ancestor[r] != NONE && ancestor[r] != i {
                    let next = ancestor[r];
                    ancestor[r] = i;
                    r = next;
                }
                if ancestor[r] == NONE {
                    ancestor[r] = i;
                    etree[r] = i;
                }
            }
        }
        // The structure of each column of L below its diagonal: its own entries and its
        // children's structures (children have smaller indices, so one pass in order).
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for j in 0..n {
            if etree[j] != NONE {
                children[etree[j]].push(j);
            }
        }
        let mut structure: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut mark = vec![NONE; n];
        for j in 0..n {
            let mut s = Vec::new();
            for &i in &by_column[j] {
                if mark[i] != j {
                    mark[i] = j;
                    s.push(i);
                }
            }
            for &c in &children[j] {
                for &i in &structure[c] {
                    if i != j && mark[i] != j {
                        mark[i] = j;
                        s.push(i);
                    }
                }
            }
            s.sort_unstable();
            structure[j] = s;
        }
        // Relaxed supernodes (CHOLMOD's amalgamation rule): column j joins the supernode
        // ending at j − 1 when it is that column's parent (so the supernode is a chain of the
        // tree and its front's rows are its columns and the last column's structure) and the
        // merged front stores few explicit zeros. Larger fronts mean fewer, denser
        // eliminations, and above all that a constraint row and the variable it is ordered
        // after are summed in one front, where a 2×2 pivot can take them together instead
        // of delaying the variable.
        let mut first = vec![0];
        let mut true_entries = if n > 0 { 1 + structure[0].len() } else { 0 };
        for j in 1..n {
            let start = *first.last().expect("first holds 0");
            let width = j + 1 - start;
            let merged_true = true_entries + 1 + structure[j].len();
            let dense = width * (width + 1) / 2 + width * structure[j].len();
            let zeros = dense.saturating_sub(merged_true) as f64;
            let dense = dense as f64;
            let joins = etree[j - 1] == j
                && (width <= 4
                    || (width <= 16 && zeros <= 0.8 * dense)
                    || (width <= 48 && zeros <= 0.1 * dense)
                    || zeros <= 0.05 * dense);
            if joins {
                true_entries = merged_true;
            } else {
                first.push(j);
                true_entries = 1 + structure[j].len();
            }
        }
        first.push(n);
        let supernodes = first.len() - 1;
        let mut supernode_of = vec![0; n];
        for s in 0..supernodes {
            supernode_of[first[s]..first[s + 1]].fill(s);
        }
        let parent: Vec<usize> = (0..supernodes)
            .map(|s| match etree[first[s + 1] - 1] {
                NONE => NONE,
                p => supernode_of[p],
            })
            .collect();
        let below: Vec<Vec<usize>> = (0..supernodes)
            .map(|s| std::mem::take(&mut structure[first[s + 1] - 1]))
            .collect();
        let mut entries: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); supernodes];
        for (k, (&r, &c)) in rows.iter().zip(cols).enumerate() {
            let (a, b) = (pinv[r], pinv[c]);
            entries[supernode_of[a.min(b)]].push((k, a, b));
        }
        // The fronts' layouts without delayed columns, computed once: where each entry and
        // each child's contribution lands.
        let mut position = vec![NONE; n];
        let mut entry_slots: Vec<Vec<u32>> = vec![Vec::new(); supernodes];
        let mut relative: Vec<Vec<u32>> = vec![Vec::new(); supernodes];
        let mut children_of: Vec<Vec<usize>> = vec![Vec::new(); supernodes];
        for c in 0..supernodes {
            if parent[c] != NONE {
                children_of[parent[c]].push(c);
            }
        }
        for s in 0..supernodes {
            let own = first[s]..first[s + 1];
            let m = own.len() + below[s].len();
            if u32::try_from(m * m).is_err() {
                return Err(format!(
                    "a front of {m} rows: too large to factorise densely"
                ));
            }
            for (t, g) in own.clone().chain(below[s].iter().copied()).enumerate() {
                position[g] = t;
            }
            entry_slots[s] = entries[s]
                .iter()
                .map(|&(_, a, b)| {
                    let (i, j) = (position[a], position[b]);
                    (i.max(j) + i.min(j) * m) as u32
                })
                .collect();
            for &c in &children_of[s] {
                relative[c] = below[c].iter().map(|&g| position[g] as u32).collect();
            }
        }
        let narrow = |v: &[usize]| -> Vec<u32> { v.iter().map(|&i| i as u32).collect() };
        Ok(Multifrontal {
            perm,
            first,
            parent,
            below,
            entries,
            entry_slots,
            relative,
            rows: narrow(rows),
            cols: narrow(cols),
            values: vec![0.0; rows.len()],
            scale: vec![1.0; n],
            fronts: vec![Front::default(); supernodes],
            position: vec![NONE; n],
            work: vec![0.0; n],
            local: Vec::new(),
            norm: 0.0,
            rhs: vec![0.0; n],
            residual: vec![0.0; n],
            before: vec![0.0; n],
            scratch: Vec::new(),
            pool: Vec::new(),
            pending: (0..supernodes).map(|_| Vec::new()).collect(),
        })
    }

    /// The number of supernodes (fronts) of the analysis.
    pub fn supernodes(&self) -> usize {
        self.first.len() - 1
    }

    /// Factorises the matrix with these values (in the order of the analysed pattern).
    /// `positive` is the number of leading rows (original numbering) whose pivots are
    /// expected positive; the rest are expected negative. `threshold` is the pivot test's u
    /// (0 < u ≤ 0.5; larger is more stable and delays more pivots). Pivot eigenvalues below
    /// `floor` in magnitude (in the equilibrated matrix) are raised to it.
    pub fn factor(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
    ) -> Factor {
        self.factor_within(values, positive, threshold, floor, usize::MAX)
    }

    /// [`Self::factor`], stopped as soon as more than `most_negative` pivots are negative
    /// ([`Factor::TooNegative`]): the inertia is then wrong whatever the rest holds, and IPOPT
    /// asks for the matrix again with its Hessian block shifted, so the rest of the work would
    /// be thrown away. (Negative pivots only accumulate, and IPOPT tells a count that is too
    /// large from one that is too small, so stopping early changes none of its decisions.)
    pub fn factor_within(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
        most_negative: usize,
    ) -> Factor {
        // The same code compiled twice: with AVX2 where the processor has it (4-wide vectors
        // in the dense loops; a few per cent on the hopper's KKT matrices, whose fronts are
        // small). No fused multiply-adds either way (Rust contracts none), so both give the
        // same factors bit for bit.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2 (checked just above).
            return unsafe { self.factor_avx2(values, positive, threshold, floor, most_negative) };
        }
        self.factor_portable(values, positive, threshold, floor, most_negative)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn factor_avx2(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
        most_negative: usize,
    ) -> Factor {
        self.factor_portable(values, positive, threshold, floor, most_negative)
    }

    #[inline(always)]
    fn factor_portable(
        &mut self,
        values: &[f64],
        positive: usize,
        threshold: f64,
        floor: f64,
        most_negative: usize,
    ) -> Factor {
        assert_eq!(
            values.len(),
            self.values.len(),
            "one value per analysed entry"
        );
        // The largest |entry|, and in the same pass whether every entry is finite (f64::max
        // would pass over a NaN).
        let (norm, finite) = values.iter().fold((0.0_f64, true), |(m, finite), v| {
            (m.max(v.abs()), finite && v.is_finite())
        });
        if !finite {
            return Factor::NotFinite;
        }
        self.values.copy_from_slice(values);
        self.norm = norm;
        let threshold = threshold.clamp(1e-12, 0.5);
        equilibrate(
            &self.rows,
            &self.cols,
            &self.values,
            &mut self.scale,
            &mut self.work,
        );
        let supernodes = self.supernodes();
        let (mut negative, mut regularized) = (0, 0);
        for s in 0..supernodes {
            let children = std::mem::take(&mut self.pending[s]);
            let mut front = std::mem::take(&mut self.fronts[s]);
            // The front's rows: delayed columns, own columns, rows below.
            let index = &mut front.rows;
            index.clear();
            for c in &children {
                index.extend_from_slice(&c.rows[..c.delayed]);
            }
            index.extend(self.first[s]..self.first[s + 1]);
            let summed = index.len();
            index.extend_from_slice(&self.below[s]);
            let m = index.len();
            // Without delayed columns the front is laid out as the analysis computed it, and
            // so is every child's contribution (its `below` rows): precomputed slots. Either
            // way each entry of the front receives the same sums in the same order.
            let planned = children.iter().all(|c| c.delayed == 0);
            if !planned {
                for (t, &g) in index.iter().enumerate() {
                    self.position[g] = t;
                }
            }
            // Only the lower triangle is read: zero just that.
            let f = &mut self.scratch;
            if f.len() < m * m {
                f.resize(m * m, 0.0);
            }
            for j in 0..m {
                f[j + j * m..(j + 1) * m].fill(0.0);
            }
            if planned {
                for (&(k, _, _), &slot) in self.entries[s].iter().zip(&self.entry_slots[s]) {
                    let (r, c) = (self.rows[k] as usize, self.cols[k] as usize);
                    let v = self.values[k] * self.scale[r] * self.scale[c];
                    f[slot as usize] += v;
                }
            } else {
                for &(k, a, b) in &self.entries[s] {
                    let (r, c) = (self.rows[k] as usize, self.cols[k] as usize);
                    let v = self.values[k] * self.scale[r] * self.scale[c];
                    let (i, j) = (self.position[a], self.position[b]);
                    f[i.max(j) + i.min(j) * m] += v;
                }
            }
            for c in children {
                let cm = c.rows.len();
                if planned {
                    let relative = &self.relative[c.from];
                    debug_assert_eq!(relative.len(), cm);
                    for (cj, &j) in relative.iter().enumerate() {
                        let column = &mut f[j as usize * m..(j as usize + 1) * m];
                        for (&i, &v) in relative[cj..]
                            .iter()
                            .zip(&c.values[cj + cj * cm..(cj + 1) * cm])
                        {
                            column[i as usize] += v;
                        }
                    }
                } else {
                    for (cj, &gj) in c.rows.iter().enumerate() {
                        let j = self.position[gj];
                        for (&gi, &v) in c.rows[cj..]
                            .iter()
                            .zip(&c.values[cj + cj * cm..(cj + 1) * cm])
                        {
                            let i = self.position[gi];
                            f[i.max(j) + i.min(j) * m] += v;
                        }
                    }
                }
                self.pool.push(c);
            }
            let root = self.parent[s] == NONE;
            let expected = |g: usize| if self.perm[g] < positive { 1.0 } else { -1.0 };
            front.pivots.clear();
            let mut k = 0;
            while k < summed {
                let Some(pivot) = choose(f, m, k, summed, threshold).or(if root {
                    Some(Choice::Forced(largest_diagonal(f, m, k, summed)))
                } else {
                    None
                }) else {
                    break; // delay the rest to the parent
                };
                match pivot {
                    Choice::One(t) | Choice::Forced(t) => {
                        swap(f, m, index, k, t);
                        let mut block = [f[k + k * m], 0.0, 0.0];
                        let singular = block[0] == 0.0;
                        if perturb(&mut block, 1, singular, [expected(index[k]), 0.0], floor) {
                            regularized += 1;
                        }
                        let (neg, inverse) = block_inverse(&block, 1);
                        negative += neg;
                        eliminate_one(f, m, k, inverse[0]);
                        front.pivots.push(Pivot::One {
                            at: k,
                            inverse: inverse[0],
                        });
                        k += 1;
                    }
                    Choice::Two(t, r) => {
                        swap(f, m, index, k, t);
                        let r = if r == k { t } else { r };
                        swap(f, m, index, k + 1, r);
                        let mut block = [f[k + k * m], f[k + 1 + k * m], f[k + 1 + (k + 1) * m]];
                        let singular = block[0] * block[2] == block[1] * block[1];
                        let signs = [expected(index[k]), expected(index[k + 1])];
                        if perturb(&mut block, 2, singular, signs, floor) {
                            regularized += 1;
                        }
                        let (neg, inverse) = block_inverse(&block, 2);
                        negative += neg;
                        eliminate_two(f, m, k, &inverse);
                        front.pivots.push(Pivot::Two { at: k, inverse });
                        k += 2;
                    }
                }
                if negative > most_negative {
                    // Give back what this factorisation holds, so that the next starts clean.
                    self.fronts[s] = front;
                    for list in &mut self.pending {
                        self.pool.append(list);
                    }
                    return Factor::TooNegative { negative };
                }
            }
            if !root && k < m {
                let rest = m - k;
                let mut c = self.pool.pop().unwrap_or_default();
                c.from = s;
                c.rows.clear();
                c.rows.extend_from_slice(&index[k..]);
                c.delayed = summed - k;
                c.values.clear();
                for j in k..m {
                    // The lower triangle is what is kept up to date; above it, stale values.
                    c.values.extend_from_slice(&f[k + j * m..(j + 1) * m]);
                }
                debug_assert_eq!(c.values.len(), rest * rest);
                self.pending[self.parent[s]].push(c);
            }
            front.eliminated = k;
            front.l.clear();
            front.l.extend_from_slice(&f[..k * m]);
            self.fronts[s] = front;
        }
        if self.fronts.iter().flat_map(|f| &f.pivots).any(|p| match p {
            Pivot::One { inverse, .. } => !inverse.is_finite(),
            Pivot::Two { inverse, .. } => inverse.iter().any(|x| !x.is_finite()),
        }) {
            return Factor::NotFinite;
        }
        Factor::Done {
            negative,
            regularized,
        }
    }

    /// Eliminated pivots of the latest factorisation (the matrix's dimension when complete).
    pub fn eliminated(&self) -> usize {
        self.fronts.iter().map(|f| f.eliminated).sum()
    }
}

impl Multifrontal {
    /// Solves A x = b (x holds b on entry) with the factors, refining against the
    /// unperturbed A until the residual is at round-off level, stops falling (by half or more
    /// per step), or `max_steps` corrections were made. Returns the final relative residual
    /// ‖b − A x‖∞ / (‖A‖ ‖x‖∞ + ‖b‖∞).
    pub fn solve_refined(&mut self, x: &mut [f64], max_steps: usize) -> f64 {
        let mut b = std::mem::take(&mut self.rhs);
        let mut r = std::mem::take(&mut self.residual);
        let mut before = std::mem::take(&mut self.before);
        b.copy_from_slice(x);
        self.solve_factored(x);
        before.copy_from_slice(x);
        let mut ratio = f64::INFINITY;
        for step in 0..=max_steps {
            self.multiply(x, &mut r);
            for (ri, bi) in r.iter_mut().zip(&b) {
                *ri = bi - *ri;
            }
            let scale = self.norm * inf_norm(x) + inf_norm(&b);
            let new = if scale > 0.0 {
                inf_norm(&r) / scale
            } else {
                0.0
            };
            if step > 0 && !(new < ratio) {
                // The last correction did not help: keep the solution before it.
                x.copy_from_slice(&before);
                break;
            }
            let stalled = step > 0 && new > 0.5 * ratio;
            ratio = new;
            if ratio <= 1e-15 || stalled || step == max_steps || !ratio.is_finite() {
                break;
            }
            before.copy_from_slice(x);
            self.solve_factored(&mut r);
            for (xi, dx) in x.iter_mut().zip(&r) {
                *xi += dx;
            }
        }
        (self.rhs, self.residual, self.before) = (b, r, before);
        ratio
    }

    /// y = A x with the values last factorised (unperturbed by any pivot floor).
    fn multiply(&self, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for ((&i, &j), &a) in self.rows.iter().zip(&self.cols).zip(&self.values) {
            let (i, j) = (i as usize, j as usize);
            y[i] += a * x[j];
            if i != j {
                y[j] += a * x[i];
            }
        }
    }

    /// Solves with the factors: `x` holds b on entry and the solution on exit.
    ///
    /// Each front gathers its rows of the work vector into a dense local one, applies its
    /// pivots there (contiguous loops) and scatters them back: every entry receives the same
    /// operations in the same order as applied in place.
    pub fn solve_factored(&mut self, x: &mut [f64]) {
        let w = &mut self.work;
        let local = &mut self.local;
        for (wi, &old) in w.iter_mut().zip(&self.perm) {
            *wi = x[old] * self.scale[old];
        }
        for front in &self.fronts {
            let (m, rows, l) = (front.rows.len(), &front.rows, &front.l);
            local.clear();
            local.extend(rows.iter().map(|&r| w[r]));
            for pivot in &front.pivots {
                match *pivot {
                    Pivot::One { at, .. } => {
                        let x = local[at];
                        if x != 0.0 {
                            let column = &l[at * m + at + 1..(at + 1) * m];
                            for (v, &li) in local[at + 1..].iter_mut().zip(column) {
                                *v -= li * x;
                            }
                        }
                    }
                    Pivot::Two { at, .. } => {
                        let (x, y) = (local[at], local[at + 1]);
                        let first = &l[at * m + at + 2..(at + 1) * m];
                        let second = &l[(at + 1) * m + at + 2..(at + 2) * m];
                        for ((v, &l0), &l1) in local[at + 2..].iter_mut().zip(first).zip(second) {
                            *v -= l0 * x + l1 * y;
                        }
                    }
                }
            }
            for (&r, &v) in rows.iter().zip(local.iter()) {
                w[r] = v;
            }
        }
        for front in &self.fronts {
            let rows = &front.rows;
            for pivot in &front.pivots {
                match *pivot {
                    Pivot::One { at, inverse } => w[rows[at]] *= inverse,
                    Pivot::Two { at, inverse } => {
                        let (x, y) = (w[rows[at]], w[rows[at + 1]]);
                        w[rows[at]] = inverse[0] * x + inverse[1] * y;
                        w[rows[at + 1]] = inverse[1] * x + inverse[2] * y;
                    }
                }
            }
        }
        for front in self.fronts.iter().rev() {
            let (m, rows, l) = (front.rows.len(), &front.rows, &front.l);
            local.clear();
            local.extend(rows.iter().map(|&r| w[r]));
            for pivot in front.pivots.iter().rev() {
                match *pivot {
                    Pivot::One { at, .. } => {
                        let mut x = local[at];
                        let column = &l[at * m + at + 1..(at + 1) * m];
                        for (&v, &li) in local[at + 1..].iter().zip(column) {
                            x -= li * v;
                        }
                        local[at] = x;
                    }
                    Pivot::Two { at, .. } => {
                        let (mut x, mut y) = (local[at], local[at + 1]);
                        let first = &l[at * m + at + 2..(at + 1) * m];
                        let second = &l[(at + 1) * m + at + 2..(at + 2) * m];
                        for ((&v, &l0), &l1) in local[at + 2..].iter().zip(first).zip(second) {
                            x -= l0 * v;
                            y -= l1 * v;
                        }
                        local[at] = x;
                        local[at + 1] = y;
                    }
                }
            }
            // Only the pivots' rows changed: the eliminated ones, which lead the front.
            for (&r, &v) in rows.iter().zip(local.iter()).take(front.eliminated) {
                w[r] = v;
            }
        }
        for (new, &old) in self.perm.iter().enumerate() {
            x[old] = w[new] * self.scale[old];
        }
    }
}

/// Symmetric equilibration (Ruiz, "A scaling algorithm to equilibrate both rows and columns
/// norms in matrices", RAL-TR-2001-034) of the matrix given by one triangle: `scale` such
/// that S A S has every row's largest entry near 1, so that pivot tests and floors see rows
/// of comparable size. A row with no nonzero entry keeps scale 1. `largest` is workspace.
#[inline(always)]
fn equilibrate(rows: &[u32], cols: &[u32], values: &[f64], scale: &mut [f64], largest: &mut [f64]) {
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
fn perturb(block: &mut [f64; 3], size: usize, singular: bool, signs: [f64; 2], floor: f64) -> bool {
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
fn block_inverse(b: &[f64; 3], size: usize) -> (usize, [f64; 3]) {
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

fn inf_norm(v: &[f64]) -> f64 {
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
enum Choice {
    One(usize),
    Two(usize, usize),
    /// A root front's last resort: the largest diagonal, whatever its size.
    Forced(usize),
}

/// The first fully summed column (from `k`) that gives an acceptable 1×1 pivot, or a 2×2
/// pivot with its largest fully summed entry; None when every column fails (delay them).
#[inline(always)]
fn choose(f: &[f64], m: usize, k: usize, summed: usize, u: f64) -> Option<Choice> {
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
fn largest_diagonal(f: &[f64], m: usize, k: usize, summed: usize) -> usize {
    (k..summed)
        .max_by(|&a, &b| f[a + a * m].abs().total_cmp(&f[b + b * m].abs()))
        .unwrap_or(k)
}

/// Swaps rows and columns `a` and `b` of the dense symmetric front, of which the lower
/// triangle is stored (LAPACK's `dsyswapr`).
#[inline(always)]
fn swap(f: &mut [f64], m: usize, index: &mut [usize], a: usize, b: usize) {
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
fn eliminate_one(f: &mut [f64], m: usize, k: usize, inverse: f64) {
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
fn eliminate_two(f: &mut [f64], m: usize, k: usize, inverse: &[f64; 3]) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::ordering::{kkt_order, lower};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Random sparse symmetric indefinite and KKT-shaped matrices (a third of the variables
    /// without curvature, a zero constraint block), in the KKT order and in the natural
    /// order: the inertia equals the count of negative eigenvalues (nalgebra's symmetric
    /// eigensolver) with no pivot perturbed, and solves match a dense LU solve.
    #[test]
    fn inertia_and_solutions_match_dense_linear_algebra() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut checked = 0;
        for trial in 0..300 {
            let kkt = trial % 2 == 0;
            let n = 4 + (rng.next() * 40.0) as usize;
            let m = if kkt {
                1 + (rng.next() * (n as f64 / 2.0)) as usize
            } else {
                0
            };
            let mut a = vec![vec![0.0; n]; n];
            for i in 0..n - m {
                a[i][i] = if kkt && rng.next() < 0.33 {
                    0.0
                } else {
                    rng.next() * 4.0 - (if kkt { 0.5 } else { 2.0 })
                };
            }
            for _ in 0..2 * n {
                let (i, j) = (
                    (rng.next() * n as f64) as usize,
                    (rng.next() * n as f64) as usize,
                );
                if i == j || (kkt && i >= n - m && j >= n - m) {
                    continue;
                }
                let v = rng.next() * 2.0 - 1.0;
                a[i][j] = v;
                a[j][i] = v;
            }
            if kkt {
                for r in n - m..n {
                    let c = (rng.next() * (n - m) as f64) as usize;
                    a[r][c] = 1.0 + rng.next();
                    a[c][r] = a[r][c];
                }
            }
            let dense = nalgebra::DMatrix::from_fn(n, n, |i, j| a[i][j]);
            let eigen = dense.clone().symmetric_eigen().eigenvalues;
            let smallest = eigen.iter().fold(f64::INFINITY, |s, e| s.min(e.abs()));
            if smallest < 1e-3 {
                continue;
            }
            let (r, c, v) = lower(&a);
            let perm = if trial % 4 == 0 {
                (0..n).collect()
            } else {
                kkt_order(n, &r, &c, &v, n - m).unwrap()
            };
            let mut lu = Multifrontal::analyse(n, &r, &c, perm).unwrap();
            let outcome = lu.factor(&v, n - m, 0.01, 1e-14);
            let expected = eigen.iter().filter(|&&e| e < 0.0).count();
            assert_eq!(
                outcome,
                Factor::Done {
                    negative: expected,
                    regularized: 0
                },
                "trial {trial}: eigenvalues {eigen}"
            );
            assert_eq!(lu.eliminated(), n);
            let b: Vec<f64> = (0..n).map(|_| rng.next() - 0.5).collect();
            let mut x = b.clone();
            lu.solve_factored(&mut x);
            let reference = dense.lu().solve(&nalgebra::DVector::from_vec(b)).unwrap();
            for (xi, ri) in x.iter().zip(reference.iter()) {
                assert!(
                    (xi - ri).abs() <= 1e-9 * (1.0 + ri.abs()) / smallest,
                    "trial {trial}: {xi} vs {ri}"
                );
            }
            checked += 1;
        }
        assert!(checked > 150, "only {checked} matrices checked");
    }

    /// A factorisation told to stop once its negative pivots exceed a count stops with more
    /// than that count, and leaves nothing behind: the next factorisation of the same
    /// analysis is exactly the one without the stop (same inertia, same solution bit for bit).
    #[test]
    fn a_factorisation_stopped_at_too_many_negative_pivots_leaves_nothing_behind() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut stopped = 0;
        for trial in 0..60 {
            let n = 10 + (rng.next() * 30.0) as usize;
            let mut a = vec![vec![0.0; n]; n];
            for (i, row) in a.iter_mut().enumerate() {
                row[i] = rng.next() * 4.0 - 2.0;
            }
            for _ in 0..2 * n {
                let (i, j) = (
                    (rng.next() * n as f64) as usize,
                    (rng.next() * n as f64) as usize,
                );
                if i != j {
                    let v = rng.next() * 2.0 - 1.0;
                    a[i][j] = v;
                    a[j][i] = v;
                }
            }
            let (r, c, v) = lower(&a);
            let perm = kkt_order(n, &r, &c, &v, n).unwrap();
            let mut reference = Multifrontal::analyse(n, &r, &c, perm.clone()).unwrap();
            let Factor::Done { negative, .. } = reference.factor(&v, n, 0.01, 1e-14) else {
                panic!("trial {trial}: not factorised");
            };
            if negative == 0 {
                continue;
            }
            let mut lu = Multifrontal::analyse(n, &r, &c, perm).unwrap();
            match lu.factor_within(&v, n, 0.01, 1e-14, negative - 1) {
                Factor::TooNegative { negative: seen } => {
                    assert_eq!(seen, negative, "trial {trial}")
                }
                other => panic!("trial {trial}: {other:?}"),
            }
            assert_eq!(
                lu.factor(&v, n, 0.01, 1e-14),
                reference.factor(&v, n, 0.01, 1e-14),
                "trial {trial}"
            );
            let b: Vec<f64> = (0..n).map(|_| rng.next() - 0.5).collect();
            let (mut x, mut y) = (b.clone(), b.clone());
            lu.solve_factored(&mut x);
            reference.solve_factored(&mut y);
            assert_eq!(x, y, "trial {trial}");
            stopped += 1;
        }
        assert!(stopped > 30, "only {stopped} matrices stopped");
    }

    /// A matrix whose natural order starts with a zero pivot ([0 1; 1 0] blocks in a chain)
    /// needs 2×2 or delayed pivots: factorised exactly, with the inertia of its eigenvalues.
    #[test]
    fn zero_leading_pivots_are_taken_in_pairs_or_delayed() {
        let n = 6;
        let mut a = vec![vec![0.0; n]; n];
        for k in (0..n).step_by(2) {
            a[k][k + 1] = 1.0;
            a[k + 1][k] = 1.0;
            a[k + 1][k + 1] = 1e-3;
        }
        a[2][1] = 0.5;
        a[1][2] = 0.5;
        a[5][0] = 0.25;
        a[0][5] = 0.25;
        let (r, c, v) = lower(&a);
        let mut lu = Multifrontal::analyse(n, &r, &c, (0..n).collect()).unwrap();
        let dense = nalgebra::DMatrix::from_fn(n, n, |i, j| a[i][j]);
        let expected = dense
            .clone()
            .symmetric_eigen()
            .eigenvalues
            .iter()
            .filter(|&&e| e < 0.0)
            .count();
        assert_eq!(
            lu.factor(&v, 3, 0.01, 1e-14),
            Factor::Done {
                negative: expected,
                regularized: 0
            }
        );
        let b: Vec<f64> = (0..n).map(|i| i as f64 - 2.0).collect();
        let mut x = b.clone();
        let residual = lu.solve_refined(&mut x, 3);
        assert!(residual < 1e-15, "{residual}");
    }

    /// The pivot blocks' inertia, and their perturbation: small eigenvalues raised to the
    /// floor with their sign, a zero one given the sign its rows expect.
    #[test]
    fn pivot_blocks_count_and_perturb_their_eigenvalues() {
        assert_eq!(block_inverse(&[2.0, 0.0, 0.0], 1).0, 0);
        assert_eq!(block_inverse(&[-2.0, 0.0, 0.0], 1).0, 1);
        assert_eq!(block_inverse(&[0.0, 1.0, 0.0], 2).0, 1);
        assert_eq!(block_inverse(&[-3.0, 1.0, -1.0], 2).0, 2);
        assert_eq!(block_inverse(&[3.0, 1.0, 1.0], 2).0, 0);
        let (_, inverse) = block_inverse(&[2.0, 1.0, 3.0], 2);
        // [2 1; 1 3]⁻¹ = [3 −1; −1 2] / 5
        for (x, y) in inverse.iter().zip([0.6, -0.2, 0.4]) {
            assert!((x - y).abs() < 1e-15);
        }
        let mut block = [1e-20, 0.0, 0.0];
        assert!(perturb(&mut block, 1, false, [-1.0, 0.0], 1e-9));
        assert_eq!(block[0], 1e-9, "a small pivot keeps its sign");
        let mut block = [0.0, 0.0, 0.0];
        assert!(perturb(&mut block, 1, true, [-1.0, 0.0], 1e-9));
        assert_eq!(block[0], -1e-9, "a zero pivot takes the expected sign");
        // [1 1; 1 1] is singular (eigenvalues 2 and 0); a primal and a constraint row expect
        // one eigenvalue of each sign.
        let mut block = [1.0, 1.0, 1.0];
        assert!(perturb(&mut block, 2, true, [1.0, -1.0], 1e-9));
        assert_eq!(block_inverse(&block, 2).0, 1);
        let mut block = [4.0, 1.0, -2.0];
        assert!(
            !perturb(&mut block, 2, false, [1.0, -1.0], 1e-9),
            "left alone"
        );
        assert_eq!(block, [4.0, 1.0, -2.0]);
    }
}
