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
//! very sparse, so a simplicial, up-looking LDLᵀ (Davis, "Algorithm 849: A concise sparse
//! Cholesky factorization package", ACM TOMS 31(4), 2005) with a fill-reducing approximate
//! minimum degree ordering computed once per solve is enough; supernodes do not pay at this
//! size.
//!
//! **Pivoting.** There is none: D is diagonal, and by Sylvester's law of inertia the signs of
//! its entries are the inertia of the matrix. A symmetric indefinite matrix need not have such
//! a factorisation for a given ordering; the KKT matrices do when they are quasi-definite
//! (`δc > 0` and the primal block positive definite), and in practice far more often. A pivot
//! that comes out (numerically) zero is replaced by `±δ`, with the sign the block it belongs
//! to expects (+ for the primal block, − for the constraint block, which IPOPT tells us by
//! the number of negative eigenvalues it expects), the same dynamic regularisation as QDLDL in
//! OSQP and Clarabel. Solves with a regularised factor are then refined iteratively against
//! the unperturbed matrix; if refinement cannot bring the residual down, the matrix is
//! reported singular and IPOPT perturbs it itself. Pivots of the wrong sign that are not tiny
//! are kept: they are the inertia IPOPT asks for.

/// How a factorisation went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// Factorised; `negative` pivots are negative, `regularized` pivots were replaced by ±δ.
    Done { negative: usize, regularized: usize },
    /// A pivot was not finite (a NaN or infinite entry, or overflow).
    NotFinite,
}

/// The symbolic analysis (ordering, elimination tree, pattern of L) and the numeric factors
/// of one sparse symmetric matrix pattern.
#[derive(Clone, Debug)]
pub struct Ldl {
    n: usize,
    /// `perm[new] = old`.
    perm: Vec<usize>,
    /// The permuted matrix's upper triangle by columns (rows ≤ column), diagonal included.
    cp: Vec<usize>,
    ci: Vec<usize>,
    /// For input entry k: its place in `ci` (and in the permuted values).
    place: Vec<usize>,
    /// Permuted values, in `ci` order.
    cx: Vec<f64>,
    parent: Vec<usize>,
    lp: Vec<usize>,
    li: Vec<usize>,
    lx: Vec<f64>,
    d: Vec<f64>,
    /// The input pattern (upper triangle by rows = lower triangle by columns), for residuals.
    rows: Vec<usize>,
    cols: Vec<usize>,
    values: Vec<f64>,
    /// Workspaces, allocated once per analysis (factorisations and solves run every IPOPT
    /// iteration).
    y: Vec<f64>,
    pattern: Vec<usize>,
    flag: Vec<usize>,
    lnz: Vec<usize>,
    w: Vec<f64>,
}

const NONE: usize = usize::MAX;

impl Ldl {
    /// Analyses the pattern of a symmetric `n × n` matrix given by one triangle: entry k is
    /// at `(rows[k], cols[k])`, with no duplicates. Orders it by approximate minimum degree.
    pub fn analyse(n: usize, rows: &[usize], cols: &[usize]) -> Result<Ldl, String> {
        Ldl::analyse_with_zeros(n, rows, cols, &vec![false; n])
    }

    /// As [`Ldl::analyse`], knowing which diagonal entries are zero (in a KKT matrix: the
    /// constraint rows, and variables with no curvature and no bound): each of those is
    /// ordered after one of its neighbours, so that its pivot is not zero from the start.
    pub fn analyse_with_zeros(
        n: usize,
        rows: &[usize],
        cols: &[usize],
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
        let perm = amd_order(n, rows, cols, zero)?;
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
        // Elimination tree and column counts of L (Davis's ldl_symbolic).
        let mut parent = vec![NONE; n];
        let mut flag = vec![NONE; n];
        let mut lnz = vec![0usize; n];
        for k in 0..n {
            flag[k] = k;
            for &row in &ci[cp[k]..cp[k + 1]] {
                let mut i = row;
                while i < k && flag[i] != k {
                    if parent[i] == NONE {
                        parent[i] = k;
                    }
                    lnz[i] += 1;
                    flag[i] = k;
                    i = parent[i];
                }
            }
        }
        let mut lp = vec![0; n + 1];
        for k in 0..n {
            lp[k + 1] = lp[k] + lnz[k];
        }
        Ok(Ldl {
            n,
            perm,
            cx: vec![0.0; ci.len()],
            cp,
            ci,
            place,
            parent,
            li: vec![0; lp[n]],
            lx: vec![0.0; lp[n]],
            lp,
            d: vec![0.0; n],
            rows: rows.to_vec(),
            cols: cols.to_vec(),
            values: vec![0.0; rows.len()],
            y: vec![0.0; n],
            pattern: vec![0; n],
            flag: vec![NONE; n],
            lnz: vec![0; n],
            w: vec![0.0; n],
        })
    }

    pub fn dim(&self) -> usize {
        self.n
    }

    /// Entries of the analysed pattern (one value each in [`Ldl::factor`]).
    pub fn input_nonzeros(&self) -> usize {
        self.rows.len()
    }

    /// Factorises the matrix with these values (in the order of the analysed pattern).
    /// `positive` is the number of leading rows (in the original order) whose pivots are
    /// expected positive; the rest are expected negative. A pivot with |d| ≤ `tiny` is
    /// replaced by ±`delta` with the expected sign.
    pub fn factor(&mut self, values: &[f64], positive: usize, tiny: f64, delta: f64) -> Factor {
        assert_eq!(
            values.len(),
            self.values.len(),
            "one value per analysed entry"
        );
        self.values.copy_from_slice(values);
        self.cx.iter_mut().for_each(|x| *x = 0.0);
        for (k, &v) in values.iter().enumerate() {
            // Duplicates (a second diagonal entry) add up.
            self.cx[self.place[k]] += v;
        }
        let n = self.n;
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
        for k in 0..n {
            // Nonzero pattern of row k of L (a path in the elimination tree) and y = A(0..k, k).
            let mut top = n;
            flag[k] = k;
            for p in self.cp[k]..self.cp[k + 1] {
                let mut i = self.ci[p];
                y[i] += self.cx[p];
                let mut len = 0;
                while i < k && flag[i] != k {
                    pattern[len] = i;
                    len += 1;
                    flag[i] = k;
                    i = self.parent[i];
                }
                while len > 0 {
                    top -= 1;
                    len -= 1;
                    pattern[top] = pattern[len];
                }
            }
            let mut dk = y[k];
            y[k] = 0.0;
            for &i in &pattern[top..n] {
                let yi = y[i];
                y[i] = 0.0;
                let (start, end) = (self.lp[i], self.lp[i] + lnz[i]);
                for p in start..end {
                    y[self.li[p]] -= self.lx[p] * yi;
                }
                let l_ki = yi / self.d[i];
                dk -= l_ki * yi;
                self.li[end] = k;
                self.lx[end] = l_ki;
                lnz[i] += 1;
            }
            if !dk.is_finite() {
                return Factor::NotFinite;
            }
            if dk.abs() <= tiny {
                let expected_positive = self.perm[k] < positive;
                dk = if expected_positive { delta } else { -delta };
                regularized += 1;
            }
            if dk < 0.0 {
                negative += 1;
            }
            self.d[k] = dk;
        }
        Factor::Done {
            negative,
            regularized,
        }
    }

    /// Solves with the factors: `x` holds b on entry and the solution on exit.
    pub fn solve_factored(&mut self, x: &mut [f64]) {
        let n = self.n;
        let w = &mut self.w;
        for (wi, &old) in w.iter_mut().zip(&self.perm) {
            *wi = x[old];
        }
        for j in 0..n {
            let wj = w[j];
            for p in self.lp[j]..self.lp[j + 1] {
                w[self.li[p]] -= self.lx[p] * wj;
            }
        }
        for j in 0..n {
            w[j] /= self.d[j];
        }
        for j in (0..n).rev() {
            let mut wj = w[j];
            for p in self.lp[j]..self.lp[j + 1] {
                wj -= self.lx[p] * w[self.li[p]];
            }
            w[j] = wj;
        }
        for (new, &old) in self.perm.iter().enumerate() {
            x[old] = w[new];
        }
    }

    /// y = A x with the values last factorised (unperturbed by any regularisation).
    pub fn multiply(&self, x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for k in 0..self.rows.len() {
            let (i, j, a) = (self.rows[k], self.cols[k], self.values[k]);
            y[i] += a * x[j];
            if i != j {
                y[j] += a * x[i];
            }
        }
    }

    /// Largest absolute entry of the matrix last factorised.
    pub fn max_abs(&self) -> f64 {
        self.values.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// Solves A x = b (x holds b on entry), refining against the unperturbed A until the
    /// residual is at round-off level or `max_steps` corrections were made. Returns the final
    /// relative residual ‖b − A x‖∞ / (‖A‖ ‖x‖∞ + ‖b‖∞).
    pub fn solve_refined(&mut self, x: &mut [f64], max_steps: usize) -> f64 {
        let b = x.to_vec();
        self.solve_factored(x);
        let norm_a = self.max_abs();
        let mut r = vec![0.0; self.n];
        let mut ratio = f64::INFINITY;
        for step in 0..=max_steps {
            self.multiply(x, &mut r);
            for (ri, bi) in r.iter_mut().zip(&b) {
                *ri = bi - *ri;
            }
            let scale = norm_a * inf_norm(x) + inf_norm(&b);
            ratio = if scale > 0.0 {
                inf_norm(&r) / scale
            } else {
                0.0
            };
            if ratio <= 1e-15 || step == max_steps || !ratio.is_finite() {
                break;
            }
            self.solve_factored(&mut r);
            for (xi, dx) in x.iter_mut().zip(&r) {
                *xi += dx;
            }
        }
        ratio
    }
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Approximate minimum degree ordering (SuiteSparse's AMD, through the `amd` crate) of the
/// symmetric pattern given by one triangle.
fn amd_order(
    n: usize,
    rows: &[usize],
    cols: &[usize],
    zero: &[bool],
) -> Result<Vec<usize>, String> {
    if n == 0 {
        return Ok(Vec::new());
    }
    // Both triangles, no diagonal, sorted and without duplicates: AMD's valid input.
    let mut adjacency: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (&i, &j) in rows.iter().zip(cols) {
        if i != j {
            adjacency[i].push(j);
            adjacency[j].push(i);
        }
    }
    let mut ap = Vec::with_capacity(n + 1);
    let mut ai = Vec::new();
    ap.push(0usize);
    for column in &mut adjacency {
        column.sort_unstable();
        column.dedup();
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
        .map(|v| zero[v] && !adjacency[v].is_empty())
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
        if placed[v] {
            continue;
        }
        if waiting[v] {
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
        let mut checked = 0;
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
                a[i][i] = rng.next() * 4.0 - (if kkt { 0.5 } else { 2.0 });
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
            let mut ldl =
                Ldl::analyse_with_zeros(n, &r, &c, &(0..n).map(|i| i >= n - m).collect::<Vec<_>>())
                    .unwrap();
            let Factor::Done {
                negative,
                regularized,
            } = ldl.factor(&v, n - m, 1e-14, 1e-9)
            else {
                panic!("trial {trial}: not factorised")
            };
            if regularized > 0 {
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
        let Factor::Done { negative, .. } = ldl.factor(&v, 2, 1e-14, 1e-8) else {
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
