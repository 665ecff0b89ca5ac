//! A sparse LDLᵀ factorisation for IPOPT's KKT systems, with their inertia.
//!
//! IPOPT's step is the solution of the augmented system
//!
//! ```text
//! [ W + Σ + δw I      Jᵀ   ] [dx]   [r_x]
//! [      J          −δc I  ] [dy] = [r_y]
//! ```
//!
//! (primal block first: variables and slacks; then one row per constraint), and IPOPT needs
//! the number of negative eigenvalues to decide whether to convexify (`δw`). The systems loam
//! builds are small (about 1.5k rows and 8k nonzeros in the lower triangle for the hopper) and
//! very sparse, so an up-looking LDLᵀ (Davis, "Algorithm 849: A concise sparse Cholesky
//! factorization package", ACM TOMS 31(4), 2005) with a fill-reducing approximate minimum
//! degree ordering computed once per solve is enough; supernodes do not pay at this size.
//!
//! **Static 2×2 pivots.** D is block diagonal, with blocks of one or two rows fixed when the
//! pattern is analysed; L is unit lower triangular (zero inside a 2×2 block). By Sylvester's
//! law of inertia the eigenvalue signs of D's blocks are the inertia of the matrix. A KKT
//! matrix has zeros on the diagonal of its constraint block, and often of its primal block
//! too (a variable that enters only linearly: no curvature, no bound), so a factorisation
//! with 1×1 pivots alone meets zero pivots whatever the ordering. Each constraint row is
//! therefore paired with one of the variables it constrains (a greedy matching that prefers
//! variables with a zero diagonal, then the largest |J| entry), and the pair is ordered and
//! eliminated as one node: its pivot is the 2×2 block `[w a; a −δc]` after the Schur
//! updates, which is nonsingular whenever `a ≠ 0` and `w ≥ 0` (its determinant is
//! `−w δc − a² < 0`). This is the static-pivoting idea of Duff and Pralet ("Strategies for
//! scaling and pivoting for sparse symmetric indefinite problems", SIAM J. Matrix Anal. Appl.
//! 27(2), 2005), without their dynamic fallback: the pairs do not change once chosen.
//!
//! A pivot block that comes out (numerically) singular is regularised: `±δ` is added to its
//! diagonal with the sign its rows expect (+ for the primal block, − for the constraint
//! block, which IPOPT tells by the number of negative eigenvalues it expects), the same
//! dynamic regularisation as QDLDL in OSQP and Clarabel. Solves with a regularised factor
//! are then refined iteratively against the unperturbed matrix (`kkt.rs` reports the matrix
//! singular when refinement cannot bring the residual down, and IPOPT perturbs it itself).

/// How a factorisation went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// Factorised; `negative` eigenvalues of D are negative, `regularized` pivot blocks were
    /// shifted by ±δ.
    Done { negative: usize, regularized: usize },
    /// A pivot was not finite (a NaN or infinite entry, or overflow).
    NotFinite,
}

/// The symbolic analysis (pairs, ordering, block elimination tree, pattern of L) and the
/// numeric factors of one sparse symmetric matrix pattern.
#[derive(Clone, Debug)]
pub struct Ldl {
    n: usize,
    /// `perm[new] = old`.
    perm: Vec<usize>,
    /// Pivot blocks in the permuted order: block `b` is rows `start[b]..start[b + 1]` (one or
    /// two rows); `block[row]` is the block of a permuted row.
    start: Vec<usize>,
    block: Vec<usize>,
    /// The permuted matrix's upper triangle by columns (rows ≤ column), diagonal included.
    cp: Vec<usize>,
    ci: Vec<usize>,
    /// For input entry k: its place in `ci` (and in the permuted values).
    place: Vec<usize>,
    /// Permuted values, in `ci` order.
    cx: Vec<f64>,
    /// The block elimination tree.
    parent: Vec<usize>,
    /// L by (scalar) columns; the two columns of a 2×2 block have the same rows.
    lp: Vec<usize>,
    li: Vec<usize>,
    lx: Vec<f64>,
    /// D's blocks and their inverses, `[d00, d01, d11]` (a 1×1 block uses d00 only).
    d: Vec<[f64; 3]>,
    dinv: Vec<[f64; 3]>,
    /// The input pattern (upper triangle by rows = lower triangle by columns), for residuals.
    rows: Vec<usize>,
    cols: Vec<usize>,
    values: Vec<f64>,
    /// Workspaces, allocated once per analysis (factorisations and solves run every IPOPT
    /// iteration). `y` holds two columns, row-interleaved.
    y: Vec<f64>,
    pattern: Vec<usize>,
    flag: Vec<usize>,
    lnz: Vec<usize>,
    w: Vec<f64>,
    /// The symmetric scaling of the latest factorisation (`S A S` is factorised).
    scale: Vec<f64>,
}

const NONE: usize = usize::MAX;
/// Passes of Ruiz's equilibration per factorisation (each O(nonzeros); the row maxima are
/// within a few per cent of 1 after five).
const RUIZ_PASSES: usize = 5;

/// Pairs each constraint row (`row >= positive`) of a KKT matrix with one primal variable it
/// touches, for [`Ldl::analyse_pairs`]: a maximum matching (Kuhn's augmenting paths), built
/// first over the variables with a zero diagonal (which need a partner most: alone they are
/// zero pivots) and then extended to all; augmenting never unmatches a variable, so the first
/// stage's variables stay paired. Each row tries its candidates by decreasing |entry|.
/// `values` are the entries of the pattern `(rows, cols)` (one triangle); returns
/// `(variable, constraint)` pairs.
pub fn kkt_pairs(
    n: usize,
    rows: &[usize],
    cols: &[usize],
    values: &[f64],
    positive: usize,
) -> Vec<(usize, usize)> {
    let scale = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let mut diagonal = vec![0.0_f64; n];
    let constraints = n.saturating_sub(positive);
    let mut candidates: Vec<Vec<(usize, f64)>> = vec![Vec::new(); constraints];
    for k in 0..rows.len() {
        let (i, j, a) = (rows[k], cols[k], values[k]);
        if i == j {
            diagonal[i] += a;
            continue;
        }
        let (variable, constraint) = (i.min(j), i.max(j));
        if constraint >= positive && variable < positive && a != 0.0 {
            candidates[constraint - positive].push((variable, a.abs()));
        }
    }
    let zero: Vec<bool> = (0..positive)
        .map(|v| diagonal[v].abs() <= 1e-14 * scale)
        .collect();
    let candidates: Vec<Vec<usize>> = candidates
        .into_iter()
        .map(|mut c| {
            c.sort_by(|(u, a), (v, b)| b.total_cmp(a).then(u.cmp(v)));
            c.into_iter().map(|(v, _)| v).collect()
        })
        .collect();
    // partner[variable] = constraint (0-based within the constraint block).
    let mut partner = vec![NONE; positive];
    let mut matched = vec![false; constraints];
    let mut seen = vec![usize::MAX; positive];
    for (stage, only_zero) in [true, false].into_iter().enumerate() {
        for c in 0..constraints {
            if matched[c] {
                continue;
            }
            let stamp = stage * constraints + c;
            if augment(c, &candidates, &zero, only_zero, &mut partner, &mut seen, stamp) {
                matched[c] = true;
            }
        }
    }
    partner
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != NONE)
        .map(|(v, &c)| (v, positive + c))
        .collect()
}

/// One augmenting-path search of Kuhn's matching from constraint `c` (iterative, so deep
/// paths do not overflow the stack).
fn augment(
    c: usize,
    candidates: &[Vec<usize>],
    zero: &[bool],
    only_zero: bool,
    partner: &mut [usize],
    seen: &mut [usize],
    stamp: usize,
) -> bool {
    // Stack of (constraint, next candidate index, variable taken to reach it).
    let mut stack: Vec<(usize, usize, usize)> = vec![(c, 0, NONE)];
    while let Some(&mut (row, ref mut next, _)) = stack.last_mut() {
        let Some(&v) = candidates[row].get(*next) else {
            stack.pop();
            continue;
        };
        *next += 1;
        if (only_zero && !zero[v]) || seen[v] == stamp {
            continue;
        }
        seen[v] = stamp;
        if partner[v] == NONE {
            // Flip the path: each constraint on the stack takes the variable after it.
            let mut take = v;
            while let Some((row, _, came)) = stack.pop() {
                partner[take] = row;
                take = came;
            }
            return true;
        }
        stack.push((partner[v], 0, v));
    }
    false
}

impl Ldl {
    /// Analyses the pattern of a symmetric `n × n` matrix given by one triangle: entry k is
    /// at `(rows[k], cols[k])`. Orders it by approximate minimum degree; every pivot 1×1.
    pub fn analyse(n: usize, rows: &[usize], cols: &[usize]) -> Result<Ldl, String> {
        Ldl::analyse_pairs(n, rows, cols, &[], &vec![false; n])
    }

    /// As [`Ldl::analyse`], with each of `pairs` eliminated as one 2×2 pivot block (the pair's
    /// first row first), and knowing which diagonal entries are zero: a 1×1 pivot on such a
    /// row is ordered after one of its neighbours, so that its pivot is not zero from the
    /// start. The ordering is AMD's on the graph whose nodes are the blocks.
    pub fn analyse_pairs(
        n: usize,
        rows: &[usize],
        cols: &[usize],
        pairs: &[(usize, usize)],
        zero: &[bool],
    ) -> Result<Ldl, String> {
        if rows.len() != cols.len() {
            return Err("row and column index lists differ in length".into());
        }
        if let Some(k) = (0..rows.len()).find(|&k| rows[k] >= n || cols[k] >= n) {
            return Err(format!(
                "entry {k} at ({}, {}) is outside the {n} x {n} matrix",
                rows[k], cols[k]
            ));
        }
        let (perm, start) = block_ordering(n, rows, cols, pairs, zero)?;
        let mut block = vec![0; n];
        for b in 0..start.len() - 1 {
            block[start[b]..start[b + 1]].fill(b);
        }
        let mut pinv = vec![0; n];
        for (new, &old) in perm.iter().enumerate() {
            pinv[old] = new;
        }
        // The permuted upper triangle by columns; every diagonal entry present (a structural
        // zero on the diagonal still needs a pivot).
        let entry = |k: usize| {
            let (a, b) = (pinv[rows[k]], pinv[cols[k]]);
            (a.min(b), a.max(b))
        };
        let mut count = vec![1usize; n];
        for k in 0..rows.len() {
            let (i, j) = entry(k);
            if i != j {
                count[j] += 1;
            }
        }
        let mut cp = vec![0; n + 1];
        for j in 0..n {
            cp[j + 1] = cp[j] + count[j];
        }
        let mut ci = vec![0; cp[n]];
        let mut next = cp.clone();
        // The diagonal first in each column.
        for j in 0..n {
            ci[next[j]] = j;
            next[j] += 1;
        }
        let mut place = vec![0; rows.len()];
        for k in 0..rows.len() {
            let (i, j) = entry(k);
            if i == j {
                place[k] = cp[j];
            } else {
                place[k] = next[j];
                ci[next[j]] = i;
                next[j] += 1;
            }
        }
        // Block elimination tree and column counts of L (Davis's ldl_symbolic on the blocks;
        // a block row of a column counts once per row of the block).
        let nb = start.len() - 1;
        let mut parent = vec![NONE; nb];
        let mut flag = vec![NONE; nb];
        let mut count = vec![0usize; nb];
        for kb in 0..nb {
            flag[kb] = kb;
            for k in start[kb]..start[kb + 1] {
                for &row in &ci[cp[k]..cp[k + 1]] {
                    let mut ib = block[row];
                    while ib < kb && flag[ib] != kb {
                        if parent[ib] == NONE {
                            parent[ib] = kb;
                        }
                        count[ib] += start[kb + 1] - start[kb];
                        flag[ib] = kb;
                        ib = parent[ib];
                    }
                }
            }
        }
        let mut lp = vec![0; n + 1];
        for j in 0..n {
            lp[j + 1] = lp[j] + count[block[j]];
        }
        Ok(Ldl {
            n,
            perm,
            start,
            block,
            cx: vec![0.0; ci.len()],
            cp,
            ci,
            place,
            parent,
            li: vec![0; lp[n]],
            lx: vec![0.0; lp[n]],
            lp,
            d: vec![[0.0; 3]; nb],
            dinv: vec![[0.0; 3]; nb],
            rows: rows.to_vec(),
            cols: cols.to_vec(),
            values: vec![0.0; rows.len()],
            y: vec![0.0; 2 * n],
            pattern: vec![0; nb],
            flag: vec![NONE; nb],
            lnz: vec![0; n],
            w: vec![0.0; n],
            scale: vec![1.0; n],
        })
    }

    pub fn dim(&self) -> usize {
        self.n
    }

    /// Entries of the analysed pattern (one value each in [`Ldl::factor`]).
    pub fn input_nonzeros(&self) -> usize {
        self.rows.len()
    }

    /// Entries of L below the diagonal (the fill the ordering left).
    pub fn factor_nonzeros(&self) -> usize {
        self.lp[self.n]
    }

    /// Number of 2×2 pivot blocks.
    pub fn pairs(&self) -> usize {
        self.n - (self.start.len() - 1)
    }

    /// Factorises the matrix with these values (in the order of the analysed pattern).
    /// `positive` is the number of leading rows (in the original order) whose pivots are
    /// expected positive; the rest are expected negative. A pivot block that is singular to
    /// within its rounding error times `tiny` (a relative tolerance, e.g. 1e-12) is shifted by
    /// ±`delta` with the expected signs (in the equilibrated matrix, whose rows' largest
    /// entries are about 1).
    pub fn factor(&mut self, values: &[f64], positive: usize, tiny: f64, delta: f64) -> Factor {
        assert_eq!(
            values.len(),
            self.values.len(),
            "one value per analysed entry"
        );
        self.values.copy_from_slice(values);
        equilibrate(&self.rows, &self.cols, &self.values, &mut self.scale, &mut self.w);
        self.cx.iter_mut().for_each(|x| *x = 0.0);
        for (k, &v) in values.iter().enumerate() {
            // Duplicates (a second diagonal entry) add up.
            let scaled = v * self.scale[self.rows[k]] * self.scale[self.cols[k]];
            self.cx[self.place[k]] += scaled;
        }
        let nb = self.start.len() - 1;
        let (y, pattern, flag, lnz) = (
            &mut self.y,
            &mut self.pattern,
            &mut self.flag,
            &mut self.lnz,
        );
        y.fill(0.0);
        flag.fill(NONE);
        lnz.fill(0);
        let (mut negative, mut regularized) = (0, 0);
        for kb in 0..nb {
            let k0 = self.start[kb];
            let sk = self.start[kb + 1] - k0;
            // The pivot block (upper triangle: row ≤ column) and y = A(rows above, block);
            // the pattern of the block row of L is the union of paths in the block
            // elimination tree.
            let mut dk = [[0.0_f64; 2]; 2];
            // The sum of the magnitudes of the terms of each entry of the pivot block: its
            // rounding error is about ε times this.
            let mut size = [[0.0_f64; 2]; 2];
            let mut top = nb;
            flag[kb] = kb;
            for c in 0..sk {
                let k = k0 + c;
                for p in self.cp[k]..self.cp[k + 1] {
                    let i = self.ci[p];
                    if self.block[i] == kb {
                        let r = i - k0;
                        dk[r][c] += self.cx[p];
                        size[r][c] += self.cx[p].abs();
                        if r != c {
                            dk[c][r] += self.cx[p];
                            size[c][r] += self.cx[p].abs();
                        }
                        continue;
                    }
                    y[2 * i + c] += self.cx[p];
                    let mut ib = self.block[i];
                    let mut len = 0;
                    while ib < kb && flag[ib] != kb {
                        pattern[len] = ib;
                        len += 1;
                        flag[ib] = kb;
                        ib = self.parent[ib];
                    }
                    while len > 0 {
                        top -= 1;
                        len -= 1;
                        pattern[top] = pattern[len];
                    }
                }
            }
            for &ib in &pattern[top..nb] {
                let i0 = self.start[ib];
                let si = self.start[ib + 1] - i0;
                let mut yi = [[0.0_f64; 2]; 2];
                for t in 0..si {
                    for c in 0..sk {
                        yi[t][c] = std::mem::take(&mut y[2 * (i0 + t) + c]);
                    }
                }
                // The rows of L's block column found so far (the same in both its columns).
                let (first, filled) = (self.lp[i0], lnz[i0]);
                let second = self.lp[i0 + si - 1];
                for q in 0..filled {
                    let r = self.li[first + q];
                    let (l0, l1) = (self.lx[first + q], self.lx[second + q]);
                    for c in 0..sk {
                        let mut update = l0 * yi[0][c];
                        if si == 2 {
                            update += l1 * yi[1][c];
                        }
                        y[2 * r + c] -= update;
                    }
                }
                // L(k, i) = (D_i⁻¹ y_i)ᵀ, and D_k −= L(k, i) y_i.
                let inv = self.dinv[ib];
                for c in 0..sk {
                    let l = if si == 1 {
                        [inv[0] * yi[0][c], 0.0]
                    } else {
                        [
                            inv[0] * yi[0][c] + inv[1] * yi[1][c],
                            inv[1] * yi[0][c] + inv[2] * yi[1][c],
                        ]
                    };
                    for c2 in 0..sk {
                        let term = l[0] * yi[0][c2] + l[1] * yi[1][c2];
                        dk[c][c2] -= term;
                        size[c][c2] += (l[0] * yi[0][c2]).abs() + (l[1] * yi[1][c2]).abs();
                    }
                    for (t, &lt) in l.iter().enumerate().take(si) {
                        let column = i0 + t;
                        let at = self.lp[column] + lnz[column];
                        self.li[at] = k0 + c;
                        self.lx[at] = lt;
                        lnz[column] += 1;
                    }
                }
            }
            let expected = |c: usize| {
                if self.perm[k0 + c] < positive {
                    1.0
                } else {
                    -1.0
                }
            };
            let mut block = if sk == 1 {
                [dk[0][0], 0.0, 0.0]
            } else {
                [dk[0][0], 0.5 * (dk[0][1] + dk[1][0]), dk[1][1]]
            };
            if block.iter().any(|x| !x.is_finite()) {
                return Factor::NotFinite;
            }
            // Singular when the pivot block's determinant is within its own rounding error
            // (a relative criterion: a constraint row with small entries has a small but
            // well-determined pivot).
            let singular = if sk == 1 {
                block[0].abs() <= tiny * size[0][0]
            } else {
                let error = block[2].abs() * size[0][0]
                    + block[0].abs() * size[1][1]
                    + 2.0 * block[1].abs() * size[0][1].max(size[1][0]);
                (block[0] * block[2] - block[1] * block[1]).abs() <= tiny * error
            };
            let signs = [expected(0), if sk == 2 { expected(1) } else { 0.0 }];
            if perturb(&mut block, sk, singular, signs, delta) {
                regularized += 1;
            }
            let (inertia, inv) = block_inverse(&block, sk);
            negative += inertia;
            self.d[kb] = block;
            self.dinv[kb] = inv;
        }
        Factor::Done {
            negative,
            regularized,
        }
    }

}

impl Refine for Ldl {
    fn dim(&self) -> usize {
        self.n
    }

    fn pattern(&self) -> (&[usize], &[usize], &[f64]) {
        (&self.rows, &self.cols, &self.values)
    }

    /// Solves with the factors: `x` holds b on entry and the solution on exit.
    fn solve_factored(&mut self, x: &mut [f64]) {
        let n = self.n;
        let w = &mut self.w;
        for (wi, &old) in w.iter_mut().zip(&self.perm) {
            *wi = x[old] * self.scale[old];
        }
        for j in 0..n {
            let wj = w[j];
            for p in self.lp[j]..self.lp[j + 1] {
                w[self.li[p]] -= self.lx[p] * wj;
            }
        }
        for (b, inv) in self.dinv.iter().enumerate() {
            let k = self.start[b];
            if self.start[b + 1] - k == 1 {
                w[k] *= inv[0];
            } else {
                let (a, c) = (w[k], w[k + 1]);
                w[k] = inv[0] * a + inv[1] * c;
                w[k + 1] = inv[1] * a + inv[2] * c;
            }
        }
        for j in (0..n).rev() {
            let mut wj = w[j];
            for p in self.lp[j]..self.lp[j + 1] {
                wj -= self.lx[p] * w[self.li[p]];
            }
            w[j] = wj;
        }
        for (new, &old) in self.perm.iter().enumerate() {
            x[old] = w[new] * self.scale[old];
        }
    }

}

/// Solves with a factorisation of a symmetric matrix given by one triangle, refined
/// iteratively against the matrix itself.
pub trait Refine {
    fn dim(&self) -> usize;

    /// The matrix last factorised: one triangle, `(rows, cols, values)`.
    fn pattern(&self) -> (&[usize], &[usize], &[f64]);

    /// Solves with the factors: `x` holds b on entry and the solution on exit.
    fn solve_factored(&mut self, x: &mut [f64]);

    /// y = A x with the values last factorised (unperturbed by any regularisation).
    fn multiply(&self, x: &[f64], y: &mut [f64]) {
        let (rows, cols, values) = self.pattern();
        y.iter_mut().for_each(|v| *v = 0.0);
        for k in 0..rows.len() {
            let (i, j, a) = (rows[k], cols[k], values[k]);
            y[i] += a * x[j];
            if i != j {
                y[j] += a * x[i];
            }
        }
    }

    /// Largest absolute entry of the matrix last factorised.
    fn max_abs(&self) -> f64 {
        self.pattern().2.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// Solves A x = b (x holds b on entry), refining against the unperturbed A until the
    /// residual is at round-off level, stops falling (by half or more per step), or
    /// `max_steps` corrections were made. Returns the final relative residual
    /// ‖b − A x‖∞ / (‖A‖ ‖x‖∞ + ‖b‖∞).
    fn solve_refined(&mut self, x: &mut [f64], max_steps: usize) -> f64 {
        let b = x.to_vec();
        self.solve_factored(x);
        let norm_a = self.max_abs();
        let mut r = vec![0.0; self.dim()];
        let mut before = x.to_vec();
        let mut ratio = f64::INFINITY;
        for step in 0..=max_steps {
            self.multiply(x, &mut r);
            for (ri, bi) in r.iter_mut().zip(&b) {
                *ri = bi - *ri;
            }
            let scale = norm_a * inf_norm(x) + inf_norm(&b);
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
        ratio
    }
}

/// Symmetric equilibration (Ruiz, "A scaling algorithm to equilibrate both rows and columns
/// norms in matrices", RAL-TR-2001-034) of the matrix given by one triangle: `scale` such
/// that S A S has every row's largest entry near 1, so that pivot tests and floors see rows
/// of comparable size. A row with no nonzero entry keeps scale 1. `largest` is workspace.
pub fn equilibrate(
    rows: &[usize],
    cols: &[usize],
    values: &[f64],
    scale: &mut [f64],
    largest: &mut [f64],
) {
    scale.fill(1.0);
    for _ in 0..RUIZ_PASSES {
        largest.fill(0.0);
        for k in 0..rows.len() {
            let (i, j) = (rows[k], cols[k]);
            let a = (values[k] * scale[i] * scale[j]).abs();
            largest[i] = largest[i].max(a);
            largest[j] = largest[j].max(a);
        }
        for (s, &m) in scale.iter_mut().zip(largest.iter()) {
            if m > 0.0 && m.is_finite() {
                *s /= m.sqrt();
            }
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
pub fn perturb(block: &mut [f64; 3], size: usize, singular: bool, signs: [f64; 2], floor: f64) -> bool {
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

/// The fill-reducing order of a symmetric pattern (one triangle) with each of `pairs` kept
/// together, first row first: AMD on the graph whose nodes are the pairs and the other rows;
/// a lone row with a `zero` diagonal is placed right after its first neighbour. Returns
/// `perm` (`perm[new] = old`) and the first new index of each node (and n at the end).
pub fn block_ordering(
    n: usize,
    rows: &[usize],
    cols: &[usize],
    pairs: &[(usize, usize)],
    zero: &[bool],
) -> Result<(Vec<usize>, Vec<usize>), String> {
        // The blocks in the input's numbering: the pairs, then every other row alone.
        let mut owner = vec![NONE; n];
        let mut members: Vec<Vec<usize>> = Vec::with_capacity(n);
        for &(a, b) in pairs {
            if a >= n || b >= n || a == b || owner[a] != NONE || owner[b] != NONE {
                return Err(format!("pair ({a}, {b}) is not two distinct, unpaired rows"));
            }
            owner[a] = members.len();
            owner[b] = members.len();
            members.push(vec![a, b]);
        }
        for (v, o) in owner.iter_mut().enumerate() {
            if *o == NONE {
                *o = members.len();
                members.push(vec![v]);
            }
        }
        let blocks = members.len();
        let mut adjacency: Vec<Vec<usize>> = vec![Vec::new(); blocks];
        for (&i, &j) in rows.iter().zip(cols) {
            let (a, b) = (owner[i], owner[j]);
            if a != b {
                adjacency[a].push(b);
                adjacency[b].push(a);
            }
        }
        for column in &mut adjacency {
            column.sort_unstable();
            column.dedup();
        }
        let waiting: Vec<bool> = members
            .iter()
            .map(|m| m.len() == 1 && zero[m[0]])
            .collect();
        let order = amd_order(&adjacency, &waiting)?;
        let mut perm = Vec::with_capacity(n);
        let mut start = Vec::with_capacity(order.len() + 1);
        for &b in &order {
            start.push(perm.len());
            for &v in &members[b] {
                perm.push(v);
            }
        }
        start.push(n);
        Ok((perm, start))
}

/// The number of negative eigenvalues of a symmetric pivot block `[d00, d01, d11]` of
/// `size` 1 or 2, and its inverse in the same layout (not finite when it is singular).
pub fn block_inverse(b: &[f64; 3], size: usize) -> (usize, [f64; 3]) {
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

/// Approximate minimum degree ordering (SuiteSparse's AMD, through the `amd` crate) of the
/// graph with these adjacency lists (sorted, no self loops). A `waiting` node (a 1×1 pivot
/// with a zero diagonal) is placed right after the first of its neighbours to be placed.
fn amd_order(adjacency: &[Vec<usize>], waiting: &[bool]) -> Result<Vec<usize>, String> {
    let n = adjacency.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut ap = Vec::with_capacity(n + 1);
    let mut ai = Vec::new();
    ap.push(0usize);
    for column in adjacency {
        ai.extend_from_slice(column);
        ap.push(ai.len());
    }
    let (amd, _, _) = amd::order(n, &ap, &ai, &amd::Control::default())
        .map_err(|status| format!("AMD ordering failed: {status:?}"))?;
    // A node with a zero diagonal waits until one of its neighbours is eliminated; eliminating
    // a node releases the nodes waiting on it (which release theirs).
    let mut perm = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    let waiting: Vec<bool> = (0..n)
        .map(|v| waiting[v] && !adjacency[v].is_empty())
        .collect();
    let mut stack = Vec::new();
    let mut place = |v: usize, perm: &mut Vec<usize>, placed: &mut Vec<bool>| {
        stack.push(v);
        while let Some(v) = stack.pop() {
            if placed[v] {
                continue;
            }
            placed[v] = true;
            perm.push(v);
            stack.extend(adjacency[v].iter().filter(|&&u| waiting[u] && !placed[u]));
        }
    };
    for &v in &amd {
        if placed[v] || waiting[v] {
            continue;
        }
        place(v, &mut perm, &mut placed);
    }
    // Zero-diagonal nodes all of whose neighbours also wait: AMD's order.
    for &v in &amd {
        if !placed[v] {
            place(v, &mut perm, &mut placed);
        }
    }
    debug_assert_eq!(perm.len(), n);
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lower triangle of a dense symmetric matrix, row-major `a[i][j]`.
    fn lower(a: &[Vec<f64>]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..a.len() {
            for j in 0..=i {
                if a[i][j] != 0.0 || i == j {
                    r.push(i);
                    c.push(j);
                    v.push(a[i][j]);
                }
            }
        }
        (r, c, v)
    }

    /// A small deterministic generator (xorshift), so the tests need no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Random sparse symmetric matrices, some KKT-shaped with a zero constraint block: the
    /// number of negative pivots equals the number of negative eigenvalues (nalgebra's
    /// symmetric eigensolver), and solves match a dense LU solve.
    #[test]
    fn inertia_and_solutions_match_dense_linear_algebra() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut checked, mut regularized_matrices, mut regularized_without_pairs) = (0, 0, 0);
        for trial in 0..200 {
            let kkt = trial % 2 == 0;
            let n = 4 + (rng.next() * 30.0) as usize;
            let m = if kkt {
                1 + (rng.next() * (n as f64 / 2.0)) as usize
            } else {
                0
            };
            let mut a = vec![vec![0.0; n]; n];
            for i in 0..n - m {
                // In a KKT matrix a third of the variables enter linearly (no curvature).
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
                // Every constraint row touches at least one variable.
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
                continue; // nearly singular: no inertia to check
            }
            let (r, c, v) = lower(&a);
            let pairs = kkt_pairs(n, &r, &c, &v, n - m);
            let zero: Vec<bool> = (0..n).map(|i| i >= n - m || a[i][i] == 0.0).collect();
            let mut ldl = Ldl::analyse_pairs(n, &r, &c, &pairs, &zero).unwrap();
            if kkt {
                let mut unpaired = Ldl::analyse_pairs(n, &r, &c, &[], &zero).unwrap();
                if let Factor::Done { regularized, .. } = unpaired.factor(&v, n - m, 1e-12, 1e-9)
                {
                    regularized_without_pairs += usize::from(regularized > 0);
                }
            }
            let Factor::Done {
                negative,
                regularized,
            } = ldl.factor(&v, n - m, 1e-12, 1e-9)
            else {
                panic!("trial {trial}: not factorised")
            };
            if regularized > 0 {
                regularized_matrices += 1;
                continue; // a structurally zero pivot: the inertia is the regularised matrix's
            }
            let expected = eigen.iter().filter(|&&e| e < 0.0).count();
            assert_eq!(negative, expected, "trial {trial}: eigenvalues {eigen}");
            let b: Vec<f64> = (0..n).map(|_| rng.next() - 0.5).collect();
            let mut x = b.clone();
            ldl.solve_factored(&mut x);
            let reference = dense
                .lu()
                .solve(&nalgebra::DVector::from_vec(b.clone()))
                .unwrap();
            for (xi, ri) in x.iter().zip(reference.iter()) {
                assert!(
                    (xi - ri).abs() <= 1e-8 * (1.0 + ri.abs()) / smallest,
                    "trial {trial}"
                );
            }
            checked += 1;
        }
        assert!(checked > 100, "only {checked} matrices checked");
        // With the 2×2 pivots, a zero pivot is rarer (a variable with no curvature and no
        // constraint left to pair it with) than with 1×1 pivots alone.
        assert!(
            regularized_matrices * 3 < regularized_without_pairs,
            "{regularized_matrices} matrices regularised with 2×2 pivots, \
             {regularized_without_pairs} without"
        );
    }

    /// The rigid-hopper shape that defeated 1×1 pivots: equality constraints that tie
    /// variables with no curvature ([0 J'; J 0] blocks). With the constraint rows paired to
    /// those variables, no pivot is regularised, the inertia is (n, m) and solves are exact.
    #[test]
    fn a_kkt_matrix_of_linear_variables_needs_no_regularisation() {
        // Variables 0..6 (the first three linear), constraints 6..9: x_k − x_{k+1}/2 − h u_k
        // = 0, shaped like a collocation defect.
        let (nv, m) = (6, 3);
        let n = nv + m;
        let mut a = vec![vec![0.0; n]; n];
        for i in 3..6 {
            a[i][i] = 2.0; // controls: effort
        }
        for k in 0..m {
            let row = nv + k;
            let entries = [(k, 1.0), ((k + 1) % 3, -0.5), (3 + k, -0.1)];
            for (col, value) in entries {
                a[row][col] = value;
                a[col][row] = value;
            }
        }
        let (r, c, v) = lower(&a);
        let pairs = kkt_pairs(n, &r, &c, &v, nv);
        assert_eq!(pairs.len(), m, "every constraint paired");
        assert!(pairs.iter().all(|&(var, _)| var < 3), "paired with the linear variables");
        let zero: Vec<bool> = (0..n).map(|i| i >= nv || i < 3).collect();
        let mut ldl = Ldl::analyse_pairs(n, &r, &c, &pairs, &zero).unwrap();
        let dense = nalgebra::DMatrix::from_fn(n, n, |i, j| a[i][j]);
        let expected = dense
            .clone()
            .symmetric_eigen()
            .eigenvalues
            .iter()
            .filter(|&&e| e < 0.0)
            .count();
        assert_eq!(
            ldl.factor(&v, nv, 1e-12, 1e-9),
            Factor::Done {
                negative: expected,
                regularized: 0
            }
        );
        let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let mut x = b.clone();
        ldl.solve_factored(&mut x);
        let mut y = vec![0.0; n];
        ldl.multiply(&x, &mut y);
        for (yi, bi) in y.iter().zip(&b) {
            assert!((yi - bi).abs() < 1e-12, "{yi} vs {bi}");
        }
    }

    #[test]
    fn a_saddle_point_matrix_solves_and_has_its_inertia() {
        // [2 0 1; 0 3 1; 1 1 0]: two positive eigenvalues, one negative.
        let a = vec![
            vec![2.0, 0.0, 1.0],
            vec![0.0, 3.0, 1.0],
            vec![1.0, 1.0, 0.0],
        ];
        let (r, c, v) = lower(&a);
        let mut ldl = Ldl::analyse(3, &r, &c).unwrap();
        let Factor::Done { negative, .. } = ldl.factor(&v, 2, 1e-12, 1e-8) else {
            panic!("not factorised")
        };
        assert_eq!(negative, 1);
        let mut x = vec![1.0, 2.0, 3.0];
        let residual = ldl.solve_refined(&mut x, 5);
        assert!(residual < 1e-14, "{residual}");
        let mut y = vec![0.0; 3];
        ldl.multiply(&x, &mut y);
        for (yi, bi) in y.iter().zip([1.0, 2.0, 3.0]) {
            assert!((yi - bi).abs() < 1e-12);
        }
    }
}
