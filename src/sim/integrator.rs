//! Dormand–Prince 5(4): an explicit embedded Runge–Kutta pair with error control and a
//! fourth-order continuous extension (dense output), after Hairer, Nørsett & Wanner,
//! *Solving ODEs I*, section II.5 and their `dopri5` code.
//!
//! The integrator takes one step at a time so that the caller can locate events on the dense
//! output between two accepted steps and restart from the located instant.

/// Error tolerances of the step-size control: a step is accepted when the RMS over components
/// of err_i / (atol + rtol · max(|x_i|, |x_i⁺|)) is at most 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    pub rtol: f64,
    pub atol: f64,
}

impl Default for Tolerances {
    /// Tight enough that a replay's error is far below the collocation error it measures
    /// (states are millimetres and metres per second).
    fn default() -> Self {
        Tolerances {
            rtol: 1e-10,
            atol: 1e-12,
        }
    }
}

const C: [f64; 7] = [0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0, 1.0];
const A: [[f64; 6]; 7] = [
    [0.0; 6],
    [0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
    [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
    [
        19372.0 / 6561.0,
        -25360.0 / 2187.0,
        64448.0 / 6561.0,
        -212.0 / 729.0,
        0.0,
        0.0,
    ],
    [
        9017.0 / 3168.0,
        -355.0 / 33.0,
        46732.0 / 5247.0,
        49.0 / 176.0,
        -5103.0 / 18656.0,
        0.0,
    ],
    [
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
    ],
];
/// Fifth-order solution minus the embedded fourth-order one.
const E: [f64; 7] = [
    71.0 / 57600.0,
    0.0,
    -71.0 / 16695.0,
    71.0 / 1920.0,
    -17253.0 / 339200.0,
    22.0 / 525.0,
    -1.0 / 40.0,
];
/// Dense-output coefficients of Hairer's `contd5`.
const D: [f64; 7] = [
    -12715105075.0 / 11282082432.0,
    0.0,
    87487479700.0 / 32700410799.0,
    -10690763975.0 / 1880347072.0,
    701980252875.0 / 199316789632.0,
    -1453857185.0 / 822651844.0,
    69997945.0 / 29380423.0,
];

/// One accepted step from `t0` to `t0 + h`, with what its dense output needs.
#[derive(Clone, Debug)]
pub struct Step {
    pub t0: f64,
    pub h: f64,
    pub x0: Vec<f64>,
    pub x1: Vec<f64>,
    /// ẋ at the end of the step (first-same-as-last: the next step's first stage).
    pub dx1: Vec<f64>,
    dense: [Vec<f64>; 5],
}

impl Step {
    pub fn t1(&self) -> f64 {
        self.t0 + self.h
    }

    /// The state at `t` in [t0, t0 + h] from the fourth-order continuous extension.
    pub fn interpolate(&self, t: f64) -> Vec<f64> {
        let theta = ((t - self.t0) / self.h).clamp(0.0, 1.0);
        let theta1 = 1.0 - theta;
        let r = &self.dense;
        (0..self.x0.len())
            .map(|i| {
                r[0][i]
                    + theta * (r[1][i] + theta1 * (r[2][i] + theta * (r[3][i] + theta1 * r[4][i])))
            })
            .collect()
    }
}

/// The outcome of one attempted step.
pub enum Attempt {
    Accepted(Step),
    /// The error was too large; try again from the same point with `h`.
    Rejected {
        h: f64,
    },
}

/// Takes one step of size `h` from (t0, x0) with ẋ0 = `dx0`; returns the step and the error
/// norm (≤ 1 means acceptable). `f` may fail (a singular constrained system); its error is
/// passed on.
pub fn step<E>(
    f: &mut dyn FnMut(f64, &[f64]) -> Result<Vec<f64>, E>,
    t0: f64,
    x0: &[f64],
    dx0: &[f64],
    h: f64,
    tol: Tolerances,
) -> Result<(Step, f64), E> {
    let n = x0.len();
    let mut k: Vec<Vec<f64>> = Vec::with_capacity(7);
    k.push(dx0.to_vec());
    // Stages 2-6; the seventh is evaluated at the fifth-order solution (below).
    for s in 1..6 {
        let mut x = x0.to_vec();
        for (j, kj) in k.iter().enumerate().take(s) {
            let a = A[s][j];
            if a != 0.0 {
                for i in 0..n {
                    x[i] += h * a * kj[i];
                }
            }
        }
        k.push(f(t0 + C[s] * h, &x)?);
    }
    // Stage 7 is evaluated at the fifth-order solution, which A[6] holds the weights of.
    let mut x1 = x0.to_vec();
    for (j, kj) in k.iter().enumerate().take(6) {
        for i in 0..n {
            x1[i] += h * A[6][j] * kj[i];
        }
    }
    k.push(f(t0 + h, &x1)?);
    let mut sum = 0.0;
    for i in 0..n {
        let mut err = 0.0;
        for (j, kj) in k.iter().enumerate() {
            err += E[j] * kj[i];
        }
        let scale = tol.atol + tol.rtol * x0[i].abs().max(x1[i].abs());
        sum += (h * err / scale).powi(2);
    }
    let error = (sum / n as f64).sqrt();
    let mut dense: [Vec<f64>; 5] = std::array::from_fn(|_| vec![0.0; n]);
    for i in 0..n {
        let dx = x1[i] - x0[i];
        let b = h * k[0][i] - dx;
        dense[0][i] = x0[i];
        dense[1][i] = dx;
        dense[2][i] = b;
        dense[3][i] = dx - h * k[6][i] - b;
        let mut d = 0.0;
        for (j, kj) in k.iter().enumerate() {
            d += D[j] * kj[i];
        }
        dense[4][i] = h * d;
    }
    let dx1 = k.pop().expect("seven stages");
    Ok((
        Step {
            t0,
            h,
            x0: x0.to_vec(),
            x1,
            dx1,
            dense,
        },
        error,
    ))
}

/// A step with size control: accepted, or rejected with the next size to try.
/// `h_next` of an accepted step is returned through the step's error as the usual
/// 0.9 · err^(−1/5) factor, clamped to [0.2, 5].
pub fn attempt<E>(
    f: &mut dyn FnMut(f64, &[f64]) -> Result<Vec<f64>, E>,
    t0: f64,
    x0: &[f64],
    dx0: &[f64],
    h: f64,
    tol: Tolerances,
) -> Result<(Attempt, f64), E> {
    let (step, error) = step(f, t0, x0, dx0, h, tol)?;
    let factor = if error == 0.0 {
        5.0
    } else {
        (0.9 * error.powf(-0.2)).clamp(0.2, 5.0)
    };
    Ok(if error <= 1.0 && error.is_finite() {
        (Attempt::Accepted(step), h * factor)
    } else {
        let shrink = if error.is_finite() {
            factor.min(0.9)
        } else {
            0.1
        };
        (Attempt::Rejected { h: h * shrink }, h * shrink)
    })
}

/// Finds t in [a, b] where `g` changes sign (g(a) and g(b) of opposite signs) by the Illinois
/// variant of regula falsi, to `t_tol`.
pub fn locate_root(g: &mut dyn FnMut(f64) -> f64, mut a: f64, mut b: f64, t_tol: f64) -> f64 {
    let mut ga = g(a);
    let mut gb = g(b);
    if ga == 0.0 {
        return a;
    }
    if gb == 0.0 {
        return b;
    }
    let mut side = 0;
    for _ in 0..200 {
        if (b - a).abs() <= t_tol {
            break;
        }
        let mut t = (a * gb - b * ga) / (gb - ga);
        if !(t > a.min(b) && t < a.max(b)) {
            t = 0.5 * (a + b);
        }
        let gt = g(t);
        if gt == 0.0 {
            return t;
        }
        if (gt > 0.0) == (gb > 0.0) {
            b = t;
            gb = gt;
            if side == 1 {
                ga *= 0.5;
            }
            side = 1;
        } else {
            a = t;
            ga = gt;
            if side == -1 {
                gb *= 0.5;
            }
            side = -1;
        }
    }
    // The bracket end past the sign change, so that the event has happened there.
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ẋ = λ x integrated to t = 1 against e^λ, and the dense output in between.
    #[test]
    fn exponential_decay_matches_the_analytic_solution_and_its_dense_output() {
        let lambda = -3.0;
        let mut f = |_t: f64, x: &[f64]| Ok::<_, ()>(vec![lambda * x[0]]);
        let tol = Tolerances::default();
        let (mut t, mut x) = (0.0, vec![1.0]);
        let mut dx = f(t, &x).unwrap();
        let mut h: f64 = 1e-3;
        let mut worst_dense: f64 = 0.0;
        while t < 1.0 {
            h = h.min(1.0 - t);
            match attempt(&mut f, t, &x, &dx, h, tol).unwrap() {
                (Attempt::Accepted(s), next) => {
                    let mid = s.t0 + 0.37 * s.h;
                    worst_dense =
                        worst_dense.max((s.interpolate(mid)[0] - (lambda * mid).exp()).abs());
                    t = s.t1();
                    x = s.x1;
                    dx = s.dx1;
                    h = next;
                }
                (Attempt::Rejected { .. }, next) => h = next,
            }
        }
        assert!((x[0] - lambda.exp()).abs() < 1e-10, "{}", x[0]);
        assert!(worst_dense < 1e-9, "dense output error {worst_dense}");
    }

    #[test]
    fn the_root_finder_finds_a_sign_change() {
        let root = locate_root(&mut |t| t * t - 2.0, 0.0, 2.0, 1e-14);
        assert!((root - 2f64.sqrt()).abs() < 1e-13);
    }
}
