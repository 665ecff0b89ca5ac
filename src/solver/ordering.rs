//! The order in which loam's sparse LDLᵀ ([`super::multifrontal`]) eliminates a KKT matrix:
//! constraint rows paired with variables, and a fill-reducing order that keeps the pairs
//! together.
//!
//! IPOPT's step is the solution of the augmented system
//!
//! ```text
//! [ W + Σ + δw I      Jᵀ   ] [dx]   [r_x]
//! [      J          −δc I  ] [dy] = [r_y]
//! ```
//!
//! (primal block first: variables and slacks; then one row per constraint). A KKT matrix has
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

const NONE: usize = usize::MAX;

/// The elimination order of a KKT matrix (one triangle; rows `positive..` are constraints)
/// for [`super::multifrontal::Multifrontal::analyse`]: `perm[new] = old`. Constraint rows
/// and the variables with a zero diagonal that find no partner would be zero pivots alone;
/// they wait for a neighbour in the order.
pub fn kkt_order(
    n: usize,
    rows: &[usize],
    cols: &[usize],
    values: &[f64],
    positive: usize,
) -> Result<Vec<usize>, String> {
    let zero = zero_pivots(n, rows, cols, values, positive);
    let pairs = kkt_pairs(n, rows, cols, values, positive, &zero);
    Ok(block_ordering(n, rows, cols, &pairs, &zero)?.0)
}

/// The rows of a KKT matrix that are zero pivots on their own: the constraints, and the
/// variables whose diagonal (duplicates summed) is zero relative to the largest entry.
pub fn zero_pivots(
    n: usize,
    rows: &[usize],
    cols: &[usize],
    values: &[f64],
    positive: usize,
) -> Vec<bool> {
    let largest = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    let mut diagonal = vec![0.0_f64; n];
    for ((&i, &j), &a) in rows.iter().zip(cols).zip(values) {
        if i == j {
            diagonal[i] += a;
        }
    }
    (0..n)
        .map(|i| i >= positive || diagonal[i].abs() <= 1e-14 * largest)
        .collect()
}

/// Pairs each constraint row (`row >= positive`) of a KKT matrix with one primal variable it
/// touches, for [`block_ordering`]: a maximum matching (Kuhn's augmenting paths), built
/// first over the variables with a zero diagonal (which need a partner most: alone they are
/// zero pivots) and then extended to all; augmenting never unmatches a variable, so the first
/// stage's variables stay paired. Each row tries its candidates by decreasing |entry|.
/// `values` are the entries of the pattern `(rows, cols)` (one triangle), `zero` says which
/// rows are zero pivots alone ([`zero_pivots`]); returns `(variable, constraint)` pairs.
pub fn kkt_pairs(
    n: usize,
    rows: &[usize],
    cols: &[usize],
    values: &[f64],
    positive: usize,
    zero: &[bool],
) -> Vec<(usize, usize)> {
    let constraints = n.saturating_sub(positive);
    let mut candidates: Vec<Vec<(usize, f64)>> = vec![Vec::new(); constraints];
    for ((&i, &j), &a) in rows.iter().zip(cols).zip(values) {
        let (variable, constraint) = (i.min(j), i.max(j));
        if constraint >= positive && variable < positive && a != 0.0 {
            candidates[constraint - positive].push((variable, a.abs()));
        }
    }
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
                zero,
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
        let zero = zero_pivots(n, &r, &c, &v, nv);
        let pairs = kkt_pairs(n, &r, &c, &v, nv, &zero);
        assert_eq!(pairs.len(), m, "every constraint paired");
        assert!(
            pairs.iter().all(|&(var, con)| var < 3 && con >= nv),
            "{pairs:?}"
        );
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
        let zero = zero_pivots(4, &r, &c, &v, 2);
        let mut pairs = kkt_pairs(4, &r, &c, &v, 2, &zero);
        pairs.sort_unstable();
        assert_eq!(pairs, vec![(0, 3), (1, 2)]);
    }
}
