//! The step's QP over the contact impulses c = (c_1, …, c_N), c_i = h w_i:
//! min ½ cᵀ Q c + rᵀ c over c_i ∈ h W_i, in either form of W_i, solved by Clarabel; and the
//! safeguards every solver's answer passes through (see [`feasible_and_no_worse`]).

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use nalgebra::{DMatrix, DVector};

use super::MdpError;
use crate::terrain::hull::{HalfSpaces, COPLANAR_TOLERANCE};

/// A sparse matrix assembled column by column (Clarabel takes compressed sparse columns).
struct Columns {
    rows: usize,
    columns: Vec<Vec<(usize, f64)>>,
}

impl Columns {
    fn new(rows: usize, columns: usize) -> Self {
        Columns {
            rows,
            columns: vec![Vec::new(); columns],
        }
    }

    fn push(&mut self, row: usize, column: usize, value: f64) {
        if value != 0.0 {
            self.columns[column].push((row, value));
        }
    }

    fn into_csc(mut self) -> CscMatrix<f64> {
        let mut colptr = vec![0];
        let mut rowval = Vec::new();
        let mut nzval = Vec::new();
        for column in &mut self.columns {
            column.sort_by_key(|&(row, _)| row);
            for &(row, value) in column.iter() {
                rowval.push(row);
                nzval.push(value);
            }
            colptr.push(rowval.len());
        }
        CscMatrix::new(self.rows, self.columns.len(), colptr, rowval, nzval)
    }
}

/// Clarabel's settings for the step: tight tolerances, since the two forms and the two
/// solvers are compared to 1e-8 and the rest state must hold to 1e-9 m/s.
fn settings() -> DefaultSettings<f64> {
    DefaultSettings {
        verbose: false,
        max_iter: 200,
        tol_gap_abs: 1e-12,
        tol_gap_rel: 1e-12,
        tol_feas: 1e-12,
        tol_ktratio: 1e-10,
        ..DefaultSettings::default()
    }
}

fn run_clarabel(
    p: &CscMatrix<f64>,
    q: &[f64],
    a: &CscMatrix<f64>,
    b: &[f64],
    cones: &[SupportedConeT<f64>],
) -> Result<Vec<f64>, MdpError> {
    let mut solver = DefaultSolver::new(p, q, a, b, cones, settings())
        .map_err(|e| MdpError::Qp(format!("Clarabel rejected the step's QP: {e}")))?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => Ok(solver.solution.x.clone()),
        status => Err(MdpError::Qp(format!(
            "Clarabel stopped with status {status:?} after {} iterations",
            solver.solution.iterations
        ))),
    }
}

/// Q's upper triangle, placed at (offset, offset).
fn push_upper(columns: &mut Columns, q: &DMatrix<f64>, offset: usize) {
    for j in 0..q.ncols() {
        for i in 0..=j {
            columns.push(offset + i, offset + j, q[(i, j)]);
        }
    }
}

/// The QP in units where the impulses and the objective are O(1): c = `impulse` ĉ, and the
/// objective divided by its largest coefficient. Clarabel's tolerances are absolute in
/// these units; unscaled (impulses ~0.1 N s, objectives ~1e-3 J) its answers drift by
/// ~1e-7 m/s per step where a foot should stay at rest.
fn scaled(q: &DMatrix<f64>, r: &DVector<f64>, impulse: f64) -> (DMatrix<f64>, DVector<f64>) {
    let (q, r) = (q * (impulse * impulse), r * impulse);
    let size = q.amax().max(r.amax()).max(f64::MIN_POSITIVE);
    (q / size, r / size)
}

/// The largest |h w| over the vertices: the impulse unit.
fn impulse_unit<'a>(vertices: impl Iterator<Item = &'a [f64; 3]>, h: f64) -> f64 {
    let largest = vertices
        .map(|w| (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt())
        .fold(0.0, f64::max);
    h * largest.max(f64::MIN_POSITIVE)
}

/// H-form: variables c; rows aₖᵀ c_i ≤ h bₖ for every facet of every contact.
pub(super) fn clarabel_half_spaces(
    q: &DMatrix<f64>,
    r: &DVector<f64>,
    hulls: &[HalfSpaces],
    h: f64,
) -> Result<DVector<f64>, MdpError> {
    let unit = h * hulls
        .iter()
        .map(|hull| hull.scale)
        .fold(f64::MIN_POSITIVE, f64::max);
    let (q, r) = scaled(q, r, unit);
    let n = q.nrows();
    let mut p = Columns::new(n, n);
    push_upper(&mut p, &q, 0);
    let rows: usize = hulls.iter().map(HalfSpaces::len).sum();
    let mut a = Columns::new(rows, n);
    let mut b = Vec::with_capacity(rows);
    for (i, hull) in hulls.iter().enumerate() {
        for (normal, offset) in hull.normals.iter().zip(&hull.offsets) {
            for (k, value) in normal.iter().enumerate() {
                a.push(b.len(), 3 * i + k, *value);
            }
            b.push(h * offset / unit);
        }
    }
    let cones = [SupportedConeT::NonnegativeConeT(rows)];
    let x = run_clarabel(&p.into_csc(), r.as_slice(), &a.into_csc(), &b, &cones)?;
    Ok(DVector::from_vec(x) * unit)
}

/// V-form: variables (λ, c) with c_i = h B_i λ_i as equality rows (so P stays the small
/// block Q and the KKT system sparse), λ ≥ 0, 1ᵀλ_i ≤ 1. Returns λ per contact.
pub(super) fn clarabel_vertices(
    q: &DMatrix<f64>,
    r: &DVector<f64>,
    vertices: &[&[[f64; 3]]],
    h: f64,
) -> Result<Vec<Vec<f64>>, MdpError> {
    let unit = impulse_unit(vertices.iter().flat_map(|set| set.iter()), h);
    let (q, r) = scaled(q, r, unit);
    let n_c = q.nrows();
    let n_lambda: usize = vertices.iter().map(|v| v.len()).sum();
    let n = n_lambda + n_c;
    let mut p = Columns::new(n, n);
    push_upper(&mut p, &q, n_lambda);
    let mut linear = vec![0.0; n_lambda];
    linear.extend(r.iter());
    let rows = n_c + n_lambda + vertices.len();
    let mut a = Columns::new(rows, n);
    let mut b = vec![0.0; rows];
    let mut column = 0;
    for (i, set) in vertices.iter().enumerate() {
        for (k, row) in (0..3).map(|k| (k, 3 * i + k)) {
            a.push(row, n_lambda + row, 1.0);
            for (j, vertex) in set.iter().enumerate() {
                a.push(row, column + j, -h / unit * vertex[k]);
            }
        }
        for j in 0..set.len() {
            a.push(n_c + column + j, column + j, -1.0);
            a.push(n_c + n_lambda + i, column + j, 1.0);
        }
        b[n_c + n_lambda + i] = 1.0;
        column += set.len();
    }
    let cones = [
        SupportedConeT::ZeroConeT(n_c),
        SupportedConeT::NonnegativeConeT(n_lambda + vertices.len()),
    ];
    let x = run_clarabel(&p.into_csc(), &linear, &a.into_csc(), &b, &cones)?;
    let mut start = 0;
    Ok(vertices
        .iter()
        .map(|set| {
            let lambda = x[start..start + set.len()].to_vec();
            start += set.len();
            lambda
        })
        .collect())
}

/// c_i = h B_i λ_i, after projecting λ_i onto {λ ≥ 0, 1ᵀλ ≤ 1} by clipping and scaling (an
/// interior-point answer can sit a rounding error outside).
pub(super) fn impulses_of_weights(
    vertices: &[&[[f64; 3]]],
    weights: &mut [Vec<f64>],
    h: f64,
) -> DVector<f64> {
    let mut c = DVector::zeros(3 * vertices.len());
    for (i, (set, lambda)) in vertices.iter().zip(weights.iter_mut()).enumerate() {
        lambda.iter_mut().for_each(|l| *l = l.max(0.0));
        let total: f64 = lambda.iter().sum();
        if total > 1.0 {
            lambda.iter_mut().for_each(|l| *l /= total);
        }
        for (vertex, l) in set.iter().zip(lambda.iter()) {
            for k in 0..3 {
                c[3 * i + k] += h * l * vertex[k];
            }
        }
    }
    c
}

/// Scales each c_i towards 0 until it satisfies its facets that do not pass through the
/// origin (W_i is star-shaped about 0, so the scaled impulse is admissible). Facets through
/// the origin (b within the hull's coplanarity tolerance of 0) cannot be met by scaling; an
/// interior-point answer violates them by a rounding error at most, which is left.
pub(super) fn into_half_spaces(c: &mut DVector<f64>, hulls: &[HalfSpaces], h: f64) {
    for (i, hull) in hulls.iter().enumerate() {
        let ci = [c[3 * i], c[3 * i + 1], c[3 * i + 2]];
        let through_origin = COPLANAR_TOLERANCE * hull.scale;
        let mut s: f64 = 1.0;
        for (a, b) in hull.normals.iter().zip(&hull.offsets) {
            let reach = a[0] * ci[0] + a[1] * ci[1] + a[2] * ci[2];
            if *b > through_origin && reach > h * b {
                s = s.min(h * b / reach);
            }
        }
        for k in 0..3 {
            c[3 * i + k] *= s;
        }
    }
}

/// ½ cᵀ Q c + rᵀ c: the change of the step's kinetic energy E(v⁺) − E(v_free).
pub(super) fn objective(q: &DMatrix<f64>, r: &DVector<f64>, c: &DVector<f64>) -> f64 {
    0.5 * c.dot(&(q * c)) + r.dot(c)
}

/// The last safeguard: c = 0 is always admissible, so an answer whose objective is above
/// 0 (a solver's tolerance on a step that needs no impulse) is replaced by 0. With the
/// projections above, a step never adds kinetic energy.
pub(super) fn feasible_and_no_worse(
    q: &DMatrix<f64>,
    r: &DVector<f64>,
    c: DVector<f64>,
) -> DVector<f64> {
    if objective(q, r, &c) > 0.0 {
        DVector::zeros(c.len())
    } else {
        c
    }
}

/// Solves the KKT system [Q Eᵀ; E 0] [x; y] = [−r; e] by SVD (Q may be singular on the
/// face, rows of E may be redundant): the least-norm solution.
#[allow(non_snake_case)]
fn equality_qp(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    E: &DMatrix<f64>,
    e: &DVector<f64>,
) -> Option<(DVector<f64>, DVector<f64>)> {
    let (n, m) = (Q.nrows(), E.nrows());
    if n == 0 {
        return Some((DVector::zeros(0), DVector::zeros(m)));
    }
    let mut K = DMatrix::zeros(n + m, n + m);
    K.view_mut((0, 0), (n, n)).copy_from(Q);
    K.view_mut((n, 0), (m, n)).copy_from(E);
    K.view_mut((0, n), (n, m)).copy_from(&E.transpose());
    let mut rhs = DVector::zeros(n + m);
    rhs.rows_mut(0, n).copy_from(&-r);
    rhs.rows_mut(n, m).copy_from(e);
    let tolerance = 1e-12 * K.amax();
    let solution = K.svd(true, true).solve(&rhs, tolerance).ok()?;
    Some((solution.rows(0, n).into(), solution.rows(n, m).into()))
}

/// Active-set polish of an interior-point answer in the H-form (OSQP's "polish"): the
/// facets within 1e-7 (relative) of the answer are taken as active, the equality QP on them
/// is solved exactly, facets with negative multipliers are released and violated ones
/// added, one at a time. Where
/// the optimum sits exactly on the boundary with a zero multiplier (a foot at exactly its
/// capacity), an interior-point method converges only as √μ; the polish lands on it.
/// None when that does not settle.
#[allow(non_snake_case)]
pub(super) fn polish_half_spaces(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    hulls: &[HalfSpaces],
    h: f64,
    c: &DVector<f64>,
) -> Option<DVector<f64>> {
    let mut rows: Vec<(usize, [f64; 3], f64, f64)> = Vec::new();
    for (i, hull) in hulls.iter().enumerate() {
        for (a, b) in hull.normals.iter().zip(&hull.offsets) {
            rows.push((i, *a, h * b, h * hull.scale));
        }
    }
    let reach = |c: &DVector<f64>, (i, a, _, _): &(usize, [f64; 3], f64, f64)| {
        a[0] * c[3 * i] + a[1] * c[3 * i + 1] + a[2] * c[3 * i + 2]
    };
    let mut active: Vec<usize> = (0..rows.len())
        .filter(|&k| rows[k].2 - reach(c, &rows[k]) <= 1e-7 * rows[k].3)
        .collect();
    for _ in 0..2 * rows.len() {
        let E = DMatrix::from_fn(active.len(), c.len(), |k, j| {
            let (i, a, _, _) = rows[active[k]];
            if j / 3 == i {
                a[j % 3]
            } else {
                0.0
            }
        });
        let e = DVector::from_iterator(active.len(), active.iter().map(|&k| rows[k].2));
        let (x, y) = equality_qp(Q, r, &E, &e)?;
        match (0..y.len()).min_by(|&a, &b| y[a].total_cmp(&y[b])) {
            Some(k) if y[k] < -1e-12 * y.amax() => {
                active.remove(k);
            }
            _ => {
                // Add the most violated facet, if any, and solve again.
                let violation = |k: usize| reach(&x, &rows[k]) - rows[k].2 - 1e-9 * rows[k].3;
                match (0..rows.len())
                    .filter(|k| !active.contains(k))
                    .max_by(|&a, &b| violation(a).total_cmp(&violation(b)))
                {
                    Some(k) if violation(k) > 0.0 => active.push(k),
                    _ => return Some(x),
                }
            }
        }
    }
    None
}

/// The same polish in the V-form, as a small active-set method: it starts from the vertices
/// carrying at least 1e-3 of their contact's largest weight (an interior-point answer
/// spreads tiny weights over every vertex of the optimal face) and the simplex rows with
/// slack below 1e-7, then drops negative weights, makes exceeded simplex rows equalities,
/// releases rows with negative multipliers and adds the vertex with the most negative
/// reduced cost, one change at a time, until the KKT conditions hold. None when that does
/// not settle within 3 changes per contact (+3), where the interior-point answer is kept.
#[allow(non_snake_case)]
pub(super) fn polish_vertices(
    Q: &DMatrix<f64>,
    r: &DVector<f64>,
    vertices: &[&[[f64; 3]]],
    h: f64,
    weights: &[Vec<f64>],
) -> Option<Vec<Vec<f64>>> {
    let mut free: Vec<(usize, usize)> = Vec::new();
    for (i, lambda) in weights.iter().enumerate() {
        let largest = lambda.iter().fold(0.0, |a: f64, &b| a.max(b));
        free.extend(
            (0..lambda.len())
                .filter(|&j| lambda[j] > 1e-3 * largest && lambda[j] > 0.0)
                .map(|j| (i, j)),
        );
    }
    // A face with many vertices (a ring of coplanar ones) makes each change an SVD of that
    // size: past four per contact the polish costs more than the step and is skipped.
    if free.len() > 4 * weights.len() {
        return None;
    }
    let mut full: Vec<usize> = (0..weights.len())
        .filter(|&i| 1.0 - weights[i].iter().sum::<f64>() < 1e-7)
        .collect();
    let column = |i: usize, j: usize| {
        let mut x = DVector::zeros(Q.nrows());
        for k in 0..3 {
            x[3 * i + k] = h * vertices[i][j][k];
        }
        x
    };
    for _ in 0..3 * weights.len() + 3 {
        let hB = DMatrix::from_fn(Q.nrows(), free.len(), |row, k| {
            let (i, j) = free[k];
            if row / 3 == i {
                h * vertices[i][j][row % 3]
            } else {
                0.0
            }
        });
        let P = hB.transpose() * Q * &hB;
        let p = hB.transpose() * r;
        let E = DMatrix::from_fn(full.len(), free.len(), |row, k| {
            if free[k].0 == full[row] {
                1.0
            } else {
                0.0
            }
        });
        let (x, y) = equality_qp(&P, &p, &E, &DVector::from_element(full.len(), 1.0))?;
        if let Some(k) = (0..x.len())
            .filter(|&k| x[k] < 0.0)
            .min_by(|&a, &b| x[a].total_cmp(&x[b]))
        {
            free.remove(k);
            continue;
        }
        let mut sums = vec![0.0; weights.len()];
        for (k, &(i, _)) in free.iter().enumerate() {
            sums[i] += x[k];
        }
        if let Some(i) = (0..sums.len()).find(|i| !full.contains(i) && sums[*i] > 1.0 + 1e-12) {
            full.push(i);
            continue;
        }
        if let Some(row) = (0..y.len()).find(|&row| y[row] < -1e-12 * y.amax()) {
            full.remove(row);
            continue;
        }
        // Reduced costs of the vertices left at 0: (h x_j)ᵀ ∇f(c) + the row's multiplier.
        let c = &hB * &x;
        let gradient = Q * &c + r;
        let multiplier = |i: usize| full.iter().position(|&f| f == i).map_or(0.0, |row| y[row]);
        let mut worst: Option<((usize, usize), f64)> = None;
        let mut scale: f64 = 0.0;
        for (i, set) in vertices.iter().enumerate() {
            for j in 0..set.len() {
                let cost = column(i, j).dot(&gradient);
                scale = scale.max(cost.abs());
                let reduced = cost + multiplier(i);
                if !free.contains(&(i, j)) && worst.is_none_or(|(_, w)| reduced < w) {
                    worst = Some(((i, j), reduced));
                }
            }
        }
        match worst {
            Some((vertex, reduced)) if reduced < -1e-9 * scale => free.push(vertex),
            _ => {
                let mut polished: Vec<Vec<f64>> =
                    weights.iter().map(|l| vec![0.0; l.len()]).collect();
                for (k, &(i, j)) in free.iter().enumerate() {
                    polished[i][j] = x[k];
                }
                return Some(polished);
            }
        }
    }
    None
}
