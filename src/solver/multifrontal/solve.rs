//! Solves with the factors, refined iteratively against the unperturbed matrix.

use super::kernels::inf_norm;
use super::{Multifrontal, Pivot};

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
