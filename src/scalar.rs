//! The scalar the model equations are written over, once: `f64` for the simulators and
//! CasADi's SX symbols (`crate::symbolic::Sx`) for the planner.

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// Arithmetic and the elementary functions the models need.
///
/// Comparisons return 1 or 0 in the scalar type so that `if_else` can be traced
/// symbolically; `if_else(c, a, b)` is `a` where `c != 0` and `b` elsewhere.
pub trait Scalar:
    Clone
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
{
    fn constant(value: f64) -> Self;
    fn sin(&self) -> Self;
    fn cos(&self) -> Self;
    fn tan(&self) -> Self;
    fn exp(&self) -> Self;
    fn ln(&self) -> Self;
    fn sqrt(&self) -> Self;
    fn tanh(&self) -> Self;
    fn abs(&self) -> Self;
    fn square(&self) -> Self;
    fn powf(&self, exponent: f64) -> Self;
    fn min(&self, other: &Self) -> Self;
    fn max(&self, other: &Self) -> Self;
    fn lt(&self, other: &Self) -> Self;
    fn gt(&self, other: &Self) -> Self;
    fn if_else(condition: &Self, if_true: &Self, if_false: &Self) -> Self;

    fn zero() -> Self {
        Self::constant(0.0)
    }
    fn min_f(&self, bound: f64) -> Self {
        self.min(&Self::constant(bound))
    }
    fn max_f(&self, bound: f64) -> Self {
        self.max(&Self::constant(bound))
    }
}

impl Scalar for f64 {
    fn constant(value: f64) -> Self {
        value
    }
    fn sin(&self) -> Self {
        f64::sin(*self)
    }
    fn cos(&self) -> Self {
        f64::cos(*self)
    }
    fn tan(&self) -> Self {
        f64::tan(*self)
    }
    fn exp(&self) -> Self {
        f64::exp(*self)
    }
    fn ln(&self) -> Self {
        f64::ln(*self)
    }
    fn sqrt(&self) -> Self {
        f64::sqrt(*self)
    }
    fn tanh(&self) -> Self {
        f64::tanh(*self)
    }
    fn abs(&self) -> Self {
        f64::abs(*self)
    }
    fn square(&self) -> Self {
        self * self
    }
    fn powf(&self, exponent: f64) -> Self {
        f64::powf(*self, exponent)
    }
    fn min(&self, other: &Self) -> Self {
        f64::min(*self, *other)
    }
    fn max(&self, other: &Self) -> Self {
        f64::max(*self, *other)
    }
    fn lt(&self, other: &Self) -> Self {
        f64::from(u8::from(self < other))
    }
    fn gt(&self, other: &Self) -> Self {
        f64::from(u8::from(self > other))
    }
    fn if_else(condition: &Self, if_true: &Self, if_false: &Self) -> Self {
        if *condition != 0.0 {
            *if_true
        } else {
            *if_false
        }
    }
}
