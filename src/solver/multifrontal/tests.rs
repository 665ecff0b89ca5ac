//! Tests of the multifrontal factorisation against dense linear algebra.

use super::kernels::{block_inverse, perturb};
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
