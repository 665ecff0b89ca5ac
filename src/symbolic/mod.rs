//! CasADi through cxx: SX expressions, derivatives and compiled `Function`s.
//!
//! Nothing outside this module touches C++. Expressions are built by the same generic model
//! code that the simulators run on `f64` (see [`crate::scalar::Scalar`]); the planner then asks
//! CasADi for exact sparse Jacobians and Hessians and evaluates them through [`Function`],
//! whose work vectors are allocated once so that solver callbacks never allocate.

mod ffi;

use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};

use cxx::UniquePtr;
use ffi::bridge;

use crate::scalar::Scalar;

/// A process-wide, re-entrant lock on loam's native numerical code (CasADi's symbolic core,
/// IPOPT): held while an NLP is transcribed ([`crate::transcription::Nlp::build`]), solved
/// ([`crate::solver::solve`]) and while a [`Function`] is freed. A parallel test run that
/// transcribed and solved on several threads at once crashed (SIGSEGV) in two fresh-clone CI
/// runs, though CasADi's SX reference counts are thread-safe and IPOPT's solves were already
/// serialised; not diagnosed further, so every native step is serialised. Plans in parallel
/// belong in separate processes (`loam sweep` does that); evaluating different functions on
/// different threads outside a solve is not locked.
pub fn exclusive() -> Exclusive {
    let depth = NATIVE_DEPTH.with(|d| {
        let depth = d.get();
        d.set(depth + 1);
        depth
    });
    let guard = (depth == 0).then(|| NATIVE.lock().unwrap_or_else(|e| e.into_inner()));
    Exclusive { _guard: guard }
}

static NATIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());

thread_local! {
    static NATIVE_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Holds [`exclusive`]'s lock until dropped (nested holds on one thread are free).
pub struct Exclusive {
    _guard: Option<std::sync::MutexGuard<'static, ()>>,
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        NATIVE_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SymbolicError {
    #[error("CasADi could not build function `{name}`: {message}")]
    Build { name: String, message: String },
    #[error("CasADi failed: {0}")]
    Casadi(String),
    #[error("function `{name}` takes {expected} numbers in `{what}`, got {got}")]
    Length {
        name: String,
        what: &'static str,
        expected: usize,
        got: usize,
    },
}

/// The version of the CasADi library loam runs against (`casadi::CasadiMeta::version()`).
pub fn casadi_version() -> String {
    bridge::casadi_version()
}

/// The version of the IPOPT library loam runs against (IPOPT's `GetIpoptVersion`).
pub fn ipopt_version() -> String {
    bridge::ipopt_version()
}

/// An SX expression: a matrix of scalar expression nodes (here almost always a scalar or a
/// column vector).
pub struct Sx(UniquePtr<bridge::Sx>);

/// Unary and binary operation codes of `casadi_shim.cc`.
#[derive(Clone, Copy)]
#[repr(u8)]
enum UnaryOp {
    Neg = 0,
    Sin = 1,
    Cos = 2,
    Tan = 3,
    Exp = 4,
    Log = 5,
    Sqrt = 6,
    Tanh = 7,
    Abs = 8,
    Square = 9,
}

#[derive(Clone, Copy)]
#[repr(u8)]
enum BinaryOp {
    Add = 0,
    Sub = 1,
    Mul = 2,
    Div = 3,
    Min = 5,
    Max = 6,
    Lt = 8,
    Gt = 10,
    ConstPow = 12,
}

fn must<T>(result: Result<T, cxx::Exception>) -> T {
    // These operations act on well-formed scalars built by loam itself; CasADi throwing here
    // is a bug in loam, not a user error.
    result.unwrap_or_else(|e| panic!("CasADi rejected an elementary operation: {}", e.what()))
}

impl Sx {
    /// A column vector of `n` fresh symbols.
    pub fn symbol(name: &str, n: usize) -> Sx {
        Sx(bridge::sx_symbol(name, n))
    }

    /// Symbols `name_0 .. name_{n-1}` as separate scalars, with the vector they form.
    pub fn symbols(name: &str, n: usize) -> (Sx, Vec<Sx>) {
        let vector = Sx::symbol(name, n);
        let elements = (0..n).map(|i| vector.get(i)).collect();
        (vector, elements)
    }

    pub fn get(&self, i: usize) -> Sx {
        Sx(bridge::sx_element(&self.0, i).unwrap_or_else(|e| panic!("{}", e.what())))
    }

    pub fn numel(&self) -> usize {
        bridge::sx_numel(&self.0)
    }

    pub fn nnz(&self) -> usize {
        bridge::sx_nnz(&self.0)
    }

    pub fn shape(&self) -> (usize, usize) {
        (bridge::sx_size1(&self.0), bridge::sx_size2(&self.0))
    }

    /// The constant value, when the expression is one.
    pub fn as_constant(&self) -> Option<f64> {
        if bridge::sx_is_constant(&self.0) && self.numel() == 1 {
            bridge::sx_to_double(&self.0).ok()
        } else {
            None
        }
    }

    pub fn vertcat(items: &[Sx]) -> Sx {
        let mut list = bridge::sxlist_new();
        for item in items {
            bridge::sxlist_push(list.pin_mut(), &item.0);
        }
        Sx(must(bridge::sx_vertcat(&list)))
    }

    pub fn jacobian(&self, x: &Sx) -> Result<Sx, SymbolicError> {
        bridge::sx_jacobian(&self.0, &x.0)
            .map(Sx)
            .map_err(casadi_error)
    }

    pub fn gradient(&self, x: &Sx) -> Result<Sx, SymbolicError> {
        bridge::sx_gradient(&self.0, &x.0)
            .map(Sx)
            .map_err(casadi_error)
    }

    /// The lower triangle (diagonal included) of the Hessian of a scalar expression.
    pub fn hessian_lower(&self, x: &Sx) -> Result<Sx, SymbolicError> {
        bridge::sx_hessian_lower(&self.0, &x.0)
            .map(Sx)
            .map_err(casadi_error)
    }

    pub fn dot(&self, other: &Sx) -> Sx {
        Sx(must(bridge::sx_dot(&self.0, &other.0)))
    }

    /// Row and column of every structural nonzero, in CasADi's (column-major) nonzero order,
    /// which is the order a [`Function`] writes the expression's values in.
    pub fn sparsity(&self) -> (Vec<usize>, Vec<usize>) {
        let rows = bridge::sx_triplet_rows(&self.0)
            .into_iter()
            .map(|r| r as usize)
            .collect();
        let cols = bridge::sx_triplet_cols(&self.0)
            .into_iter()
            .map(|c| c as usize)
            .collect();
        (rows, cols)
    }

    fn unary(&self, op: UnaryOp) -> Sx {
        Sx(must(bridge::sx_unary(op as u8, &self.0)))
    }

    fn binary(&self, op: BinaryOp, other: &Sx) -> Sx {
        Sx(must(bridge::sx_binary(op as u8, &self.0, &other.0)))
    }
}

fn casadi_error(e: cxx::Exception) -> SymbolicError {
    SymbolicError::Casadi(e.what().to_string())
}

impl Clone for Sx {
    fn clone(&self) -> Self {
        Sx(bridge::sx_clone(&self.0))
    }
}

impl fmt::Debug for Sx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&bridge::sx_to_string(&self.0))
    }
}

impl From<f64> for Sx {
    fn from(value: f64) -> Self {
        Sx(bridge::sx_constant(value))
    }
}

macro_rules! binary_ops {
    ($($trait:ident $method:ident $op:ident),*) => {$(
        impl $trait<Sx> for Sx {
            type Output = Sx;
            fn $method(self, rhs: Sx) -> Sx { self.binary(BinaryOp::$op, &rhs) }
        }
        impl $trait<&Sx> for &Sx {
            type Output = Sx;
            fn $method(self, rhs: &Sx) -> Sx { self.binary(BinaryOp::$op, rhs) }
        }
        impl $trait<f64> for Sx {
            type Output = Sx;
            fn $method(self, rhs: f64) -> Sx { self.binary(BinaryOp::$op, &Sx::from(rhs)) }
        }
        impl $trait<Sx> for f64 {
            type Output = Sx;
            fn $method(self, rhs: Sx) -> Sx { Sx::from(self).binary(BinaryOp::$op, &rhs) }
        }
    )*};
}
binary_ops!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div);

impl Neg for Sx {
    type Output = Sx;
    fn neg(self) -> Sx {
        self.unary(UnaryOp::Neg)
    }
}

impl Scalar for Sx {
    fn constant(value: f64) -> Self {
        Sx::from(value)
    }
    fn sin(&self) -> Self {
        self.unary(UnaryOp::Sin)
    }
    fn cos(&self) -> Self {
        self.unary(UnaryOp::Cos)
    }
    fn tan(&self) -> Self {
        self.unary(UnaryOp::Tan)
    }
    fn exp(&self) -> Self {
        self.unary(UnaryOp::Exp)
    }
    fn ln(&self) -> Self {
        self.unary(UnaryOp::Log)
    }
    fn sqrt(&self) -> Self {
        self.unary(UnaryOp::Sqrt)
    }
    fn tanh(&self) -> Self {
        self.unary(UnaryOp::Tanh)
    }
    fn abs(&self) -> Self {
        self.unary(UnaryOp::Abs)
    }
    fn square(&self) -> Self {
        self.unary(UnaryOp::Square)
    }
    fn powf(&self, exponent: f64) -> Self {
        self.binary(BinaryOp::ConstPow, &Sx::from(exponent))
    }
    fn min(&self, other: &Self) -> Self {
        self.binary(BinaryOp::Min, other)
    }
    fn max(&self, other: &Self) -> Self {
        self.binary(BinaryOp::Max, other)
    }
    fn lt(&self, other: &Self) -> Self {
        self.binary(BinaryOp::Lt, other)
    }
    fn gt(&self, other: &Self) -> Self {
        self.binary(BinaryOp::Gt, other)
    }
    fn if_else(condition: &Self, if_true: &Self, if_false: &Self) -> Self {
        Sx(must(bridge::sx_if_else(
            &condition.0,
            &if_true.0,
            &if_false.0,
        )))
    }
}

/// A compiled CasADi function of SX expressions, evaluated on flat buffers: `input` is the
/// concatenation of every argument's nonzeros, `output` of every result's.
pub struct Function {
    name: String,
    inner: UniquePtr<bridge::Func>,
    input_len: usize,
    output_len: usize,
    output_nnz: Vec<usize>,
}

impl Function {
    pub fn new(name: &str, inputs: &[&Sx], outputs: &[&Sx]) -> Result<Function, SymbolicError> {
        let mut input_list = bridge::sxlist_new();
        for x in inputs {
            bridge::sxlist_push(input_list.pin_mut(), &x.0);
        }
        let mut output_list = bridge::sxlist_new();
        for y in outputs {
            bridge::sxlist_push(output_list.pin_mut(), &y.0);
        }
        let inner = bridge::func_new(name, &input_list, &output_list).map_err(|e| {
            SymbolicError::Build {
                name: name.to_string(),
                message: e.what().to_string(),
            }
        })?;
        let input_len = (0..bridge::func_n_in(&inner))
            .map(|i| bridge::func_nnz_in(&inner, i))
            .sum();
        let output_nnz: Vec<usize> = (0..bridge::func_n_out(&inner))
            .map(|i| bridge::func_nnz_out(&inner, i))
            .collect();
        Ok(Function {
            name: name.to_string(),
            inner,
            input_len,
            output_len: output_nnz.iter().sum(),
            output_nnz,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn input_len(&self) -> usize {
        self.input_len
    }

    pub fn output_len(&self) -> usize {
        self.output_len
    }

    /// Nonzeros of each output, in order.
    pub fn output_nnz(&self) -> &[usize] {
        &self.output_nnz
    }

    /// Evaluates without allocating.
    pub fn eval(&mut self, input: &[f64], output: &mut [f64]) -> Result<(), SymbolicError> {
        if input.len() != self.input_len {
            return Err(self.length_error("input", self.input_len, input.len()));
        }
        if output.len() != self.output_len {
            return Err(self.length_error("output", self.output_len, output.len()));
        }
        bridge::func_eval(self.inner.pin_mut(), input, output)
            .map_err(|e| SymbolicError::Casadi(e.what().to_string()))
    }

    fn length_error(&self, what: &'static str, expected: usize, got: usize) -> SymbolicError {
        SymbolicError::Length {
            name: self.name.clone(),
            what,
            expected,
            got,
        }
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        let inner = std::mem::replace(&mut self.inner, UniquePtr::null());
        let _native = exclusive();
        drop(inner);
    }
}

// SAFETY: a `Function` owns its CasADi function, work vectors and memory slot outright and is
// only evaluated through `&mut self`, so moving it to another thread is sound. CasADi is built
// with CASADI_WITH_THREADSAFE_SYMBOLICS, so SX nodes shared with other threads' expressions
// are reference-counted safely.
unsafe impl Send for Function {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_of_a_scalar_function_match_calculus() {
        let (x, xs) = Sx::symbols("x", 2);
        // f = x0^2 x1 + sin(x1)
        let f = xs[0].square() * xs[1].clone() + xs[1].sin();
        let grad = f.gradient(&x).unwrap();
        let hess = f.hessian_lower(&x).unwrap();
        let mut fun = Function::new("f", &[&x], &[&f, &grad, &hess]).unwrap();
        let (rows, cols) = hess.sparsity();
        assert!(
            rows.iter().zip(&cols).all(|(r, c)| r >= c),
            "lower triangle only"
        );
        let mut out = vec![0.0; fun.output_len()];
        let (a, b) = (1.5_f64, 0.3_f64);
        fun.eval(&[a, b], &mut out).unwrap();
        assert!((out[0] - (a * a * b + b.sin())).abs() < 1e-14);
        assert!((out[1] - 2.0 * a * b).abs() < 1e-14);
        assert!((out[2] - (a * a + b.cos())).abs() < 1e-14);
        let h = &out[3..];
        for (k, (r, c)) in rows.iter().zip(&cols).enumerate() {
            let expected = match (r, c) {
                (0, 0) => 2.0 * b,
                (1, 0) => 2.0 * a,
                (1, 1) => -b.sin(),
                _ => unreachable!(),
            };
            assert!((h[k] - expected).abs() < 1e-14);
        }
    }

    #[test]
    fn the_same_generic_code_runs_on_f64_and_sx() {
        fn model<S: Scalar>(x: &S) -> S {
            let clipped = x.min_f(1.0).max_f(-1.0);
            S::if_else(&x.gt(&S::zero()), &(clipped.clone() * 3.0), &clipped.exp())
        }
        let x = Sx::symbol("x", 1);
        let y = model(&x);
        let mut fun = Function::new("model", &[&x], &[&y]).unwrap();
        for v in [-2.0, -0.5, 0.0, 0.25, 4.0] {
            let mut out = [0.0];
            fun.eval(&[v], &mut out).unwrap();
            assert_eq!(out[0], model(&v), "at {v}");
        }
    }

    #[test]
    fn wrong_buffer_lengths_are_errors() {
        let x = Sx::symbol("x", 3);
        let mut fun = Function::new("id", &[&x], &[&x]).unwrap();
        let mut out = [0.0; 3];
        assert!(matches!(
            fun.eval(&[1.0], &mut out),
            Err(SymbolicError::Length { .. })
        ));
    }
}
