//! Pieces of loam's sparse symmetric indefinite solver for IPOPT's KKT systems
//! ([`super::multifrontal`]): the pairing of constraint rows with variables and the
//! fill-reducing order built on it, the equilibration, the pivot blocks' perturbation and
//! inertia, and iterative refinement.
//!
//! IPOPT's step is the solution of the augmented system
//!
//! ```text
//! [ W + Σ + δw I      Jᵀ   ] [dx]   [r_x]
//! [      J          −δc I  ] [dy] = [r_y]
//! ```
//!
//! (primal block first: variables and slacks; then one row per constraint), and IPOPT needs
//! the number of negative eigenvalues to decide whether to convexify (`δw`). A KKT matrix has
//! zeros on the diagonal of its constraint block, and often of its primal block too (a
//! variable that enters only linearly: no curvature, no bound), so an elimination with 1×1
//! pivots alone meets zero pivots whatever the order. Each constraint row is therefore paired
//! with one of the variables it constrains and the pair is kept together in the order, so
//! that the two are summed in the same front, where a 2×2 pivot `[w a; a −δc]` (nonsingular
//! when `a ≠ 0` and `w ≥ 0`: its determinant is `−w δc − a² < 0`) can take them together
//! (Duff and Pralet, "Strategies for scaling and pivoting for sparse symmetric indefinite
//! problems", SIAM J. Matrix Anal. Appl. 27(2), 2005).
//!
//! An earlier factorisation of loam's used these pairs as *static* 2×2 pivots, with no
//! pivoting at run time. It converged on the hoppers but not reliably elsewhere: measured on
//! the granular jump, small pivots left entries of 1e21 in its factors and IPOPT's iterates
//! wandered (97 iterations to a worse optimum, against MUMPS's 44). Threshold pivoting with
//! delayed pivots replaced it.

/// How a factorisation went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// Factorised; `negative` eigenvalues of D are negative, `regularized` pivot blocks were
    /// shifted by ±δ.
    Done { negative: usize, regularized: usize },
    /// A pivot was not finite (a NaN or infinite entry, or overflow).
    NotFinite,
}

const NONE: usize = usize::MAX;
/// Passes of Ruiz's equilibration per factorisation (each O(nonzeros); the row maxima are
/// within a few per cent of 1 after five).
const RUIZ_PASSES: usize = 5;

/// Pairs each constraint row (`row >= positive`) of a KKT matrix with one primal variable it
/// touches, for [`block_ordering`]: a maximum matching (Kuhn's augmenting paths), built
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
            if augment(
                c,
                &candidates,
                &zero,
                only_zero,
                &mut partner,
                &mut seen,
                stamp,
            ) {
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
        for ((&i, &j), &v) in rows.iter().zip(cols).zip(values) {
            let a = (v * scale[i] * scale[j]).abs();
            if a > largest[i] {
                largest[i] = a;
            }
            if a > largest[j] {
                largest[j] = a;
            }
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
pub fn perturb(
    block: &mut [f64; 3],
    size: usize,
    singular: bool,
    signs: [f64; 2],
    floor: f64,
) -> bool {
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
            return Err(format!(
                "pair ({a}, {b}) is not two distinct, unpaired rows"
            ));
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
    let waiting: Vec<bool> = members.iter().map(|m| m.len() == 1 && zero[m[0]]).collect();
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

/// The lower triangle (diagonal always included) of a dense symmetric matrix `a[i][j]`, as
/// the solver's tests give matrices to it.
#[cfg(test)]
pub(crate) fn lower(a: &[Vec<f64>]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Constraints x_k − x_{k+1}/2 − h u_k = 0 (shaped like collocation defects) on three
    /// variables without curvature and three controls: every constraint is paired, with a
    /// variable without curvature, and each pair is adjacent in the order.
    #[test]
    fn constraints_pair_with_the_variables_that_need_a_partner() {
        let (nv, m) = (6, 3);
        let n = nv + m;
        let mut a = vec![vec![0.0; n]; n];
        for i in 3..6 {
            a[i][i] = 2.0;
        }
        for k in 0..m {
            for (col, value) in [(k, 1.0), ((k + 1) % 3, -0.5), (3 + k, -0.1)] {
                a[nv + k][col] = value;
                a[col][nv + k] = value;
            }
        }
        let (r, c, v) = lower(&a);
        let pairs = kkt_pairs(n, &r, &c, &v, nv);
        assert_eq!(pairs.len(), m, "every constraint paired");
        assert!(
            pairs.iter().all(|&(var, con)| var < 3 && con >= nv),
            "{pairs:?}"
        );
        let zero: Vec<bool> = (0..n).map(|i| i >= nv).collect();
        let (perm, start) = block_ordering(n, &r, &c, &pairs, &zero).unwrap();
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
        for &(var, con) in &pairs {
            let at = perm.iter().position(|&x| x == var).unwrap();
            assert_eq!(perm[at + 1], con, "pair ({var}, {con}) adjacent");
            assert!(start.contains(&at), "a pair starts a node");
        }
    }

    /// A maximum matching, not a greedy one: the first constraint's best candidate is the
    /// second's only one, and augmenting gives both a partner.
    #[test]
    fn the_matching_augments() {
        // Variables 0, 1; constraints 2 (touches 0 strongly, 1 weakly) and 3 (touches 0).
        let (r, c, v) = (
            vec![0, 1, 2, 2, 3, 2, 3],
            vec![0, 1, 0, 1, 0, 2, 3],
            vec![0.0, 0.0, 5.0, 1.0, 1.0, 0.0, 0.0],
        );
        let mut pairs = kkt_pairs(4, &r, &c, &v, 2);
        pairs.sort_unstable();
        assert_eq!(pairs, vec![(0, 3), (1, 2)]);
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
