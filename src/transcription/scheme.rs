//! Collocation schemes: the defect constraints and the matching quadrature of the running
//! cost on one interval of length h.

use crate::symbolic::Sx;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// Trapezoidal defects, second order; states and controls piecewise linear. The paper's
    /// choice.
    #[default]
    Trapezoidal,
    /// Hermite-Simpson in separated form (midpoint state and control are variables), fourth
    /// order; states piecewise cubic.
    HermiteSimpson,
}

impl Scheme {
    /// Whether each interval carries its midpoint state and control as variables.
    pub fn has_midpoint(self) -> bool {
        matches!(self, Scheme::HermiteSimpson)
    }

    pub fn name(self) -> &'static str {
        match self {
            Scheme::Trapezoidal => "trapezoidal",
            Scheme::HermiteSimpson => "hermite_simpson",
        }
    }
}

/// Names of the defect rows of one interval, in the order [`interval`] returns them.
pub fn defect_names(scheme: Scheme, state_names: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    if scheme.has_midpoint() {
        names.extend(state_names.iter().map(|s| format!("midpoint defect {s}")));
    }
    names.extend(state_names.iter().map(|s| format!("defect {s}")));
    names
}

/// Defects and cost quadrature of one interval.
///
/// `f` and `l` hold the dynamics and running cost at the interval's points: `[start, end]`
/// for trapezoidal, `[start, mid, end]` for Hermite-Simpson; `x` likewise holds the states.
pub fn interval(scheme: Scheme, h: &Sx, x: &[&[Sx]], f: &[Vec<Sx>], l: &[Sx]) -> (Vec<Sx>, Sx) {
    let n = x[0].len();
    match scheme {
        Scheme::Trapezoidal => {
            let (x0, x1) = (x[0], x[1]);
            let defects = (0..n)
                .map(|i| {
                    let d = x1[i].clone()
                        - x0[i].clone()
                        - h.clone() * 0.5 * (f[0][i].clone() + f[1][i].clone());
                    d
                })
                .collect();
            let cost = h.clone() * 0.5 * (l[0].clone() + l[1].clone());
            (defects, cost)
        }
        Scheme::HermiteSimpson => {
            let (x0, xm, x1) = (x[0], x[1], x[2]);
            let mut defects = Vec::with_capacity(2 * n);
            for i in 0..n {
                // Hermite interpolation of the midpoint state...
                let d = xm[i].clone()
                    - (x0[i].clone() + x1[i].clone()) * 0.5
                    - h.clone() * 0.125 * (f[0][i].clone() - f[2][i].clone());
                defects.push(d);
            }
            for i in 0..n {
                // ...and Simpson quadrature of the dynamics over the interval.
                let d = x1[i].clone()
                    - x0[i].clone()
                    - h.clone() / 6.0 * (f[0][i].clone() + f[1][i].clone() * 4.0 + f[2][i].clone());
                defects.push(d);
            }
            let cost = h.clone() / 6.0 * (l[0].clone() + l[1].clone() * 4.0 + l[2].clone());
            (defects, cost)
        }
    }
}
