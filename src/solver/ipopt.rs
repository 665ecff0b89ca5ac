//! Safe wrapper over IPOPT 3.14's C interface (`IpStdCInterface.h`).
//!
//! Linking is left to the crate's `build.rs` (`cargo:rustc-link-lib=dylib=ipopt`
//! plus a link-search path / rpath to the directory holding `libipopt.so`).
//! The FFI declarations assume IPOPT's default build: `ipnumber = double`,
//! `ipindex = int` (no `IPOPT_SINGLE`, no `IPOPT_INT64`).
//!
//! The library itself never prints. IPOPT prints its banner and iteration log
//! to C stdout unless the caller sets `print_level = 0` and `sb = yes`.

use std::any::Any;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

// ---------------------------------------------------------------------------
// FFI
// ---------------------------------------------------------------------------

type IpNumber = f64;
type IpIndex = c_int;

#[repr(C)]
struct IpoptProblemInfo {
    _private: [u8; 0],
}
type IpoptProblemPtr = *mut IpoptProblemInfo;
type UserDataPtr = *mut c_void;

type EvalFCb =
    unsafe extern "C" fn(IpIndex, *mut IpNumber, bool, *mut IpNumber, UserDataPtr) -> bool;
type EvalGradFCb =
    unsafe extern "C" fn(IpIndex, *mut IpNumber, bool, *mut IpNumber, UserDataPtr) -> bool;
type EvalGCb =
    unsafe extern "C" fn(IpIndex, *mut IpNumber, bool, IpIndex, *mut IpNumber, UserDataPtr) -> bool;
type EvalJacGCb = unsafe extern "C" fn(
    IpIndex,
    *mut IpNumber,
    bool,
    IpIndex,
    IpIndex,
    *mut IpIndex,
    *mut IpIndex,
    *mut IpNumber,
    UserDataPtr,
) -> bool;
type EvalHCb = unsafe extern "C" fn(
    IpIndex,
    *mut IpNumber,
    bool,
    IpNumber,
    IpIndex,
    *mut IpNumber,
    bool,
    IpIndex,
    *mut IpIndex,
    *mut IpIndex,
    *mut IpNumber,
    UserDataPtr,
) -> bool;
type IntermediateCb = unsafe extern "C" fn(
    IpIndex,
    IpIndex,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpNumber,
    IpIndex,
    UserDataPtr,
) -> bool;

// IPOPT's C interface as re-implemented on its C++ interface by `ipopt_shim.cc` (same
// signatures, `loam_` names), so that a linear solver of loam's can be handed to IPOPT.
unsafe extern "C" {
    #[allow(clippy::too_many_arguments)]
    #[link_name = "loam_CreateIpoptProblem"]
    fn CreateIpoptProblem(
        n: IpIndex,
        x_l: *mut IpNumber,
        x_u: *mut IpNumber,
        m: IpIndex,
        g_l: *mut IpNumber,
        g_u: *mut IpNumber,
        nele_jac: IpIndex,
        nele_hess: IpIndex,
        index_style: IpIndex,
        eval_f: EvalFCb,
        eval_g: EvalGCb,
        eval_grad_f: EvalGradFCb,
        eval_jac_g: EvalJacGCb,
        eval_h: EvalHCb,
    ) -> IpoptProblemPtr;
    #[link_name = "loam_FreeIpoptProblem"]
    fn FreeIpoptProblem(problem: IpoptProblemPtr);
    #[link_name = "loam_AddIpoptStrOption"]
    fn AddIpoptStrOption(problem: IpoptProblemPtr, keyword: *mut c_char, val: *mut c_char) -> bool;
    #[link_name = "loam_AddIpoptNumOption"]
    fn AddIpoptNumOption(problem: IpoptProblemPtr, keyword: *mut c_char, val: IpNumber) -> bool;
    #[link_name = "loam_AddIpoptIntOption"]
    fn AddIpoptIntOption(problem: IpoptProblemPtr, keyword: *mut c_char, val: IpIndex) -> bool;
    #[link_name = "loam_OpenIpoptOutputFile"]
    fn OpenIpoptOutputFile(
        problem: IpoptProblemPtr,
        file_name: *mut c_char,
        print_level: c_int,
    ) -> bool;
    #[link_name = "loam_SetIpoptProblemScaling"]
    fn SetIpoptProblemScaling(
        problem: IpoptProblemPtr,
        obj_scaling: IpNumber,
        x_scaling: *mut IpNumber,
        g_scaling: *mut IpNumber,
    ) -> bool;
    #[link_name = "loam_SetIntermediateCallback"]
    fn SetIntermediateCallback(problem: IpoptProblemPtr, cb: IntermediateCb) -> bool;
    #[allow(clippy::too_many_arguments)]
    #[link_name = "loam_IpoptSolve"]
    fn IpoptSolve(
        problem: IpoptProblemPtr,
        x: *mut IpNumber,
        g: *mut IpNumber,
        obj_val: *mut IpNumber,
        mult_g: *mut IpNumber,
        mult_x_l: *mut IpNumber,
        mult_x_u: *mut IpNumber,
        user_data: UserDataPtr,
    ) -> c_int;
    #[allow(clippy::too_many_arguments)]
    #[link_name = "loam_GetIpoptCurrentIterate"]
    fn GetIpoptCurrentIterate(
        problem: IpoptProblemPtr,
        scaled: bool,
        n: IpIndex,
        x: *mut IpNumber,
        z_l: *mut IpNumber,
        z_u: *mut IpNumber,
        m: IpIndex,
        g: *mut IpNumber,
        lambda: *mut IpNumber,
    ) -> bool;
    /// Makes later solves factorise with `callbacks` (IPOPT's `linear_solver` set to
    /// `custom`), or, with null, with whatever `linear_solver` says.
    fn loam_UseLinearSolver(
        problem: IpoptProblemPtr,
        callbacks: *const super::kkt::Callbacks,
    ) -> bool;
}

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

/// The value of IPOPT's `linear_solver` option that selects loam's own sparse LDLᵀ
/// (`super::kkt`, `super::multifrontal`) instead of one of IPOPT's.
pub const LOAM_LINEAR_SOLVER: &str = "loam";

/// Problem structure, fixed when the problem is created. Index style is C (0-based).
///
/// Bounds are passed to IPOPT as given; IPOPT treats `|b| >= 1e19` (including
/// `f64::INFINITY`) as "no bound".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NlpStructure {
    pub x_lower: Vec<f64>,
    pub x_upper: Vec<f64>,
    pub g_lower: Vec<f64>,
    pub g_upper: Vec<f64>,
    /// Sparse Jacobian pattern of g (row = constraint, col = variable).
    pub jac_rows: Vec<i32>,
    pub jac_cols: Vec<i32>,
    /// LOWER triangle pattern of the Hessian of the Lagrangian (row >= col).
    pub hess_rows: Vec<i32>,
    pub hess_cols: Vec<i32>,
}

impl NlpStructure {
    /// Number of variables.
    pub fn n(&self) -> usize {
        self.x_lower.len()
    }
    /// Number of constraints.
    pub fn m(&self) -> usize {
        self.g_lower.len()
    }

    /// Checks lengths and index ranges; `Ipopt::new` calls this.
    pub fn validate(&self) -> Result<(), IpoptError> {
        let err = |message: String| Err(IpoptError::Structure { message });
        let (n, m) = (self.x_lower.len(), self.g_lower.len());
        if self.x_upper.len() != n {
            return err(format!(
                "x_lower has {n} entries but x_upper has {}",
                self.x_upper.len()
            ));
        }
        if self.g_upper.len() != m {
            return err(format!(
                "g_lower has {m} entries but g_upper has {}",
                self.g_upper.len()
            ));
        }
        if self.jac_rows.len() != self.jac_cols.len() {
            return err(format!(
                "jac_rows has {} entries but jac_cols has {}",
                self.jac_rows.len(),
                self.jac_cols.len()
            ));
        }
        if self.hess_rows.len() != self.hess_cols.len() {
            return err(format!(
                "hess_rows has {} entries but hess_cols has {}",
                self.hess_rows.len(),
                self.hess_cols.len()
            ));
        }
        for (what, len) in [
            ("number of variables", n),
            ("number of constraints", m),
            ("number of Jacobian entries", self.jac_rows.len()),
            ("number of Hessian entries", self.hess_rows.len()),
        ] {
            if len > i32::MAX as usize {
                return err(format!("{what} ({len}) exceeds i32::MAX"));
            }
        }
        let in_range = |v: i32, len: usize| v >= 0 && (v as usize) < len;
        for (k, (&r, &c)) in self.jac_rows.iter().zip(&self.jac_cols).enumerate() {
            if !in_range(r, m) {
                return err(format!(
                    "Jacobian entry {k}: row {r} out of range 0..{m} (m = number of constraints)"
                ));
            }
            if !in_range(c, n) {
                return err(format!(
                    "Jacobian entry {k}: column {c} out of range 0..{n} (n = number of variables)"
                ));
            }
        }
        for (k, (&r, &c)) in self.hess_rows.iter().zip(&self.hess_cols).enumerate() {
            if !in_range(r, n) {
                return err(format!(
                    "Hessian entry {k}: row {r} out of range 0..{n} (n = number of variables)"
                ));
            }
            if !in_range(c, n) {
                return err(format!(
                    "Hessian entry {k}: column {c} out of range 0..{n} (n = number of variables)"
                ));
            }
            if c > r {
                return err(format!(
                    "Hessian entry {k}: ({r}, {c}) is above the diagonal; give the lower triangle (row >= col)"
                ));
            }
        }
        Ok(())
    }
}

/// The user's NLP. Each method returns false (or None) to signal an evaluation
/// error to IPOPT. Slices have exactly the lengths fixed by the `NlpStructure`.
pub trait Nlp {
    fn eval_f(&mut self, x: &[f64], new_x: bool) -> Option<f64>;
    fn eval_grad_f(&mut self, x: &[f64], new_x: bool, grad: &mut [f64]) -> bool;
    fn eval_g(&mut self, x: &[f64], new_x: bool, g: &mut [f64]) -> bool;
    /// `values` follows the order of `jac_rows`/`jac_cols`.
    fn eval_jac_g(&mut self, x: &[f64], new_x: bool, values: &mut [f64]) -> bool;
    /// `values` follows the order of `hess_rows`/`hess_cols` (lower triangle) and holds
    /// `obj_factor * ∇²f + Σ lambda_i ∇²g_i`.
    fn eval_h(
        &mut self,
        x: &[f64],
        new_x: bool,
        obj_factor: f64,
        lambda: &[f64],
        new_lambda: bool,
        values: &mut [f64],
    ) -> bool;
}

/// An IPOPT option value.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum OptionValue {
    Str(String),
    Num(f64),
    Int(i64),
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::Str(s) => write!(f, "\"{s}\""),
            OptionValue::Num(v) => write!(f, "{v}"),
            OptionValue::Int(v) => write!(f, "{v}"),
        }
    }
}

/// IPOPT's `ApplicationReturnStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpoptStatus {
    SolveSucceeded,
    SolvedToAcceptableLevel,
    InfeasibleProblemDetected,
    SearchDirectionBecomesTooSmall,
    DivergingIterates,
    UserRequestedStop,
    FeasiblePointFound,
    MaximumIterationsExceeded,
    RestorationFailed,
    ErrorInStepComputation,
    MaximumCpuTimeExceeded,
    MaximumWallTimeExceeded,
    NotEnoughDegreesOfFreedom,
    InvalidProblemDefinition,
    InvalidOption,
    InvalidNumberDetected,
    UnrecoverableException,
    NonIpoptExceptionThrown,
    InsufficientMemory,
    InternalError,
    Unknown(i32),
}

impl IpoptStatus {
    const TABLE: [(IpoptStatus, i32, &'static str); 20] = [
        (IpoptStatus::SolveSucceeded, 0, "Solve_Succeeded"),
        (
            IpoptStatus::SolvedToAcceptableLevel,
            1,
            "Solved_To_Acceptable_Level",
        ),
        (
            IpoptStatus::InfeasibleProblemDetected,
            2,
            "Infeasible_Problem_Detected",
        ),
        (
            IpoptStatus::SearchDirectionBecomesTooSmall,
            3,
            "Search_Direction_Becomes_Too_Small",
        ),
        (IpoptStatus::DivergingIterates, 4, "Diverging_Iterates"),
        (IpoptStatus::UserRequestedStop, 5, "User_Requested_Stop"),
        (IpoptStatus::FeasiblePointFound, 6, "Feasible_Point_Found"),
        (
            IpoptStatus::MaximumIterationsExceeded,
            -1,
            "Maximum_Iterations_Exceeded",
        ),
        (IpoptStatus::RestorationFailed, -2, "Restoration_Failed"),
        (
            IpoptStatus::ErrorInStepComputation,
            -3,
            "Error_In_Step_Computation",
        ),
        (
            IpoptStatus::MaximumCpuTimeExceeded,
            -4,
            "Maximum_CpuTime_Exceeded",
        ),
        (
            IpoptStatus::MaximumWallTimeExceeded,
            -5,
            "Maximum_WallTime_Exceeded",
        ),
        (
            IpoptStatus::NotEnoughDegreesOfFreedom,
            -10,
            "Not_Enough_Degrees_Of_Freedom",
        ),
        (
            IpoptStatus::InvalidProblemDefinition,
            -11,
            "Invalid_Problem_Definition",
        ),
        (IpoptStatus::InvalidOption, -12, "Invalid_Option"),
        (
            IpoptStatus::InvalidNumberDetected,
            -13,
            "Invalid_Number_Detected",
        ),
        (
            IpoptStatus::UnrecoverableException,
            -100,
            "Unrecoverable_Exception",
        ),
        (
            IpoptStatus::NonIpoptExceptionThrown,
            -101,
            "NonIpopt_Exception_Thrown",
        ),
        (IpoptStatus::InsufficientMemory, -102, "Insufficient_Memory"),
        (IpoptStatus::InternalError, -199, "Internal_Error"),
    ];

    pub fn from_code(code: i32) -> Self {
        Self::TABLE
            .iter()
            .find(|(_, c, _)| *c == code)
            .map(|(s, _, _)| *s)
            .unwrap_or(IpoptStatus::Unknown(code))
    }

    pub fn code(&self) -> i32 {
        match self {
            IpoptStatus::Unknown(c) => *c,
            s => Self::TABLE
                .iter()
                .find(|(t, _, _)| t == s)
                .map(|(_, c, _)| *c)
                .unwrap_or(i32::MIN),
        }
    }

    /// True only for `SolveSucceeded` and `SolvedToAcceptableLevel`.
    pub fn is_success(&self) -> bool {
        matches!(
            self,
            IpoptStatus::SolveSucceeded | IpoptStatus::SolvedToAcceptableLevel
        )
    }

    /// IPOPT's own spelling, e.g. `"Solve_Succeeded"`; `"Unknown"` for unknown codes.
    pub fn name(&self) -> &'static str {
        match self {
            IpoptStatus::Unknown(_) => "Unknown",
            s => Self::TABLE
                .iter()
                .find(|(t, _, _)| t == s)
                .map(|(_, _, n)| *n)
                .unwrap_or("Unknown"),
        }
    }
}

impl fmt::Display for IpoptStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpoptStatus::Unknown(c) => write!(f, "Unknown({c})"),
            s => f.write_str(s.name()),
        }
    }
}

/// One call of IPOPT's intermediate callback.
#[derive(Clone, Debug)]
pub struct IterationInfo {
    pub iteration: usize,
    /// True while IPOPT is in its feasibility-restoration phase (alg_mod == 1).
    pub restoration: bool,
    pub objective: f64,
    pub inf_pr: f64,
    pub inf_du: f64,
    pub mu: f64,
    pub d_norm: f64,
    pub regularization: f64,
    pub alpha_du: f64,
    pub alpha_pr: f64,
    pub ls_trials: usize,
}

/// Bound and constraint multipliers, as IPOPT returns them (and accepts them for a warm start).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Multipliers {
    pub g: Vec<f64>,
    pub x_lower: Vec<f64>,
    pub x_upper: Vec<f64>,
}

/// The iterate with the smallest unscaled primal infeasibility seen during a solve.
#[derive(Clone, Debug, PartialEq)]
pub struct BestIterate {
    pub iteration: usize,
    pub x: Vec<f64>,
    pub g: Vec<f64>,
    /// max over constraint and variable-bound violations (unscaled, infinity norm).
    pub inf_pr: f64,
    pub objective: f64,
}

#[derive(Clone, Debug)]
pub struct SolveResult {
    pub status: IpoptStatus,
    /// What IpoptSolve returned.
    pub x: Vec<f64>,
    pub g: Vec<f64>,
    pub objective: f64,
    pub multipliers: Multipliers,
    /// The last `iter_count` the intermediate callback saw (0 if it was never called).
    pub iterations: usize,
    /// Every intermediate callback, in order.
    pub history: Vec<IterationInfo>,
    /// Smallest unscaled primal infeasibility (ties: lower objective) among the iterates
    /// seen by the intermediate callback, read with `GetIpoptCurrentIterate(scaled=false)`.
    pub best: Option<BestIterate>,
}

#[derive(thiserror::Error, Debug)]
pub enum IpoptError {
    #[error("invalid NLP structure: {message}")]
    Structure { message: String },
    #[error("IPOPT rejected option `{name}` = {value}: {message}")]
    Option {
        name: String,
        value: String,
        message: String,
    },
    #[error("CreateIpoptProblem returned null")]
    Create,
    #[error("IPOPT could not open output file `{}` (print_level {print_level})", path.display())]
    OutputFile { path: PathBuf, print_level: i32 },
    #[error("{what} has length {got}, expected {expected}")]
    Length {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("SetIpoptProblemScaling failed")]
    Scaling,
}

// ---------------------------------------------------------------------------
// Capturing IPOPT's C-stdout messages
// ---------------------------------------------------------------------------

/// Serialises our fd-1 redirections (fd 1 is process-global).
static STDOUT_CAPTURE: Mutex<()> = Mutex::new(());

/// Runs `f` with fd 1 redirected into a pipe and returns what was written to it.
/// Falls back to running `f` without capture if the redirection cannot be set up.
fn capture_stdout<R>(f: impl FnOnce() -> R) -> (R, String) {
    let _guard = STDOUT_CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: fflush(NULL) flushes all C output streams; always valid.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is a valid array of two c_ints for pipe() to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return (f(), String::new());
    }
    let (read_fd, write_fd) = (fds[0], fds[1]);
    // SAFETY: duplicating fd 1; a failure returns -1 and is handled.
    let saved = unsafe { libc::dup(1) };
    if saved < 0 {
        // SAFETY: both fds were just returned by pipe() and are owned here.
        unsafe {
            libc::close(read_fd);
            libc::close(write_fd);
        }
        return (f(), String::new());
    }
    // Drain the pipe on a thread so a long message can never block the writer.
    // SAFETY: read_fd is an open fd owned exclusively by this File from now on.
    let mut reader = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(read_fd) };
    let spawned = std::thread::Builder::new()
        .name("ipopt-stdout-capture".into())
        .spawn(move || {
            let mut buf = Vec::new();
            let _ = reader.read_to_end(&mut buf);
            buf
        });
    let Ok(drain) = spawned else {
        // The reader (and read_fd) was dropped with the failed closure.
        // SAFETY: write_fd and saved are owned here and closed exactly once.
        unsafe {
            libc::close(write_fd);
            libc::close(saved);
        }
        return (f(), String::new());
    };
    // SAFETY: write_fd and 1 are valid fds; after dup2, fd 1 refers to the pipe and
    // the original write_fd is no longer needed.
    let redirected = unsafe { libc::dup2(write_fd, 1) } >= 0;
    // SAFETY: write_fd is owned here and closed exactly once.
    unsafe { libc::close(write_fd) };
    let result = f();
    // SAFETY: flush C stdio into the pipe, then put the saved fd back on 1 and close
    // the copy. After this no write end of the pipe remains, so the reader sees EOF.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        if redirected {
            libc::dup2(saved, 1);
        }
        libc::close(saved);
    }
    let bytes = drain.join().unwrap_or_default();
    (result, String::from_utf8_lossy(&bytes).trim().to_string())
}

// ---------------------------------------------------------------------------
// Callback plumbing
// ---------------------------------------------------------------------------

/// What IPOPT's `user_data` points to during `IpoptSolve`.
struct CallbackData<'a> {
    nlp: &'a mut dyn Nlp,
    on_iteration: Option<&'a mut dyn FnMut(&IterationInfo) -> bool>,
    problem: IpoptProblemPtr,
    structure: &'a NlpStructure,
    n: usize,
    m: usize,
    history: Vec<IterationInfo>,
    last_iter: usize,
    best: Option<BestIterate>,
    // Scratch buffers for GetIpoptCurrentIterate (allocated once per solve).
    scratch_x: Vec<f64>,
    scratch_z_l: Vec<f64>,
    scratch_z_u: Vec<f64>,
    scratch_g: Vec<f64>,
    scratch_lambda: Vec<f64>,
    /// First panic payload from a callback; re-raised once IpoptSolve has returned.
    panic: Option<Box<dyn Any + Send + 'static>>,
}

/// Builds a shared slice, tolerating NULL for empty slices.
///
/// # Safety
/// If `len > 0` and `p` is non-null, `p` must point to `len` readable f64s valid for `'b`.
unsafe fn slice_in<'b>(p: *const f64, len: usize) -> Option<&'b [f64]> {
    if len == 0 {
        Some(&[])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: guaranteed by the caller.
        Some(unsafe { std::slice::from_raw_parts(p, len) })
    }
}

/// Builds a mutable slice, tolerating NULL for empty slices.
///
/// # Safety
/// If `len > 0` and `p` is non-null, `p` must point to `len` writable f64s valid for `'b`
/// and not aliased elsewhere.
unsafe fn slice_out<'b>(p: *mut f64, len: usize) -> Option<&'b mut [f64]> {
    if len == 0 {
        Some(&mut [])
    } else if p.is_null() {
        None
    } else {
        // SAFETY: guaranteed by the caller.
        Some(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }
}

/// Runs a trampoline body, converting a panic into `false` and remembering the payload.
///
/// # Safety
/// `user_data` must be the `CallbackData` pointer passed to `IpoptSolve`, and no
/// other reference to it may be live.
unsafe fn guarded(
    user_data: UserDataPtr,
    body: impl FnOnce(&mut CallbackData<'_>) -> bool,
) -> bool {
    if user_data.is_null() {
        return false;
    }
    let data = user_data.cast::<CallbackData<'_>>();
    // SAFETY: per the contract, `data` is valid and not otherwise borrowed; this
    // borrow ends before we touch `data` again below.
    if unsafe { (*data).panic.is_some() } {
        return false;
    }
    // SAFETY: as above; the &mut lives only inside the closure call.
    let outcome = catch_unwind(AssertUnwindSafe(|| body(unsafe { &mut *data })));
    match outcome {
        Ok(ok) => ok,
        Err(payload) => {
            // SAFETY: the closure's borrow has ended; `data` is still valid.
            unsafe { (*data).panic = Some(payload) };
            false
        }
    }
}

unsafe extern "C" fn tramp_eval_f(
    n: IpIndex,
    x: *mut IpNumber,
    new_x: bool,
    obj_value: *mut IpNumber,
    user_data: UserDataPtr,
) -> bool {
    let body = |d: &mut CallbackData<'_>| {
        if n < 0 || n as usize != d.n || obj_value.is_null() {
            return false;
        }
        // SAFETY: IPOPT's x holds n (= d.n) doubles for the duration of the call.
        let Some(x) = (unsafe { slice_in(x, d.n) }) else {
            return false;
        };
        match d.nlp.eval_f(x, new_x) {
            Some(v) => {
                // SAFETY: obj_value is non-null and points to one ipnumber.
                unsafe { *obj_value = v };
                true
            }
            None => false,
        }
    };
    // SAFETY: IPOPT passes back the user_data given to IpoptSolve (a live CallbackData)
    // and never nests eval callbacks.
    unsafe { guarded(user_data, body) }
}

unsafe extern "C" fn tramp_eval_grad_f(
    n: IpIndex,
    x: *mut IpNumber,
    new_x: bool,
    grad_f: *mut IpNumber,
    user_data: UserDataPtr,
) -> bool {
    let body = |d: &mut CallbackData<'_>| {
        if n < 0 || n as usize != d.n {
            return false;
        }
        // SAFETY: x and grad_f are distinct IPOPT arrays of n (= d.n) doubles.
        let (Some(x), Some(grad)) = (unsafe { slice_in(x, d.n) }, unsafe {
            slice_out(grad_f, d.n)
        }) else {
            return false;
        };
        d.nlp.eval_grad_f(x, new_x, grad)
    };
    // SAFETY: as in tramp_eval_f.
    unsafe { guarded(user_data, body) }
}

unsafe extern "C" fn tramp_eval_g(
    n: IpIndex,
    x: *mut IpNumber,
    new_x: bool,
    m: IpIndex,
    g: *mut IpNumber,
    user_data: UserDataPtr,
) -> bool {
    let body = |d: &mut CallbackData<'_>| {
        if n < 0 || m < 0 || n as usize != d.n || m as usize != d.m {
            return false;
        }
        // SAFETY: x holds n (= d.n) doubles and g, a distinct array, m (= d.m).
        let (Some(x), Some(g)) = (unsafe { slice_in(x, d.n) }, unsafe { slice_out(g, d.m) }) else {
            return false;
        };
        d.nlp.eval_g(x, new_x, g)
    };
    // SAFETY: as in tramp_eval_f.
    unsafe { guarded(user_data, body) }
}

/// Copies a sparsity pattern into IPOPT's index arrays.
///
/// # Safety
/// If `rows.len() > 0`, `i_row` and `j_col` must be null or each point to `rows.len()`
/// writable ints. `cols.len()` must equal `rows.len()`.
unsafe fn fill_pattern(
    rows: &[i32],
    cols: &[i32],
    i_row: *mut IpIndex,
    j_col: *mut IpIndex,
) -> bool {
    let nnz = rows.len();
    if nnz == 0 {
        return true;
    }
    if i_row.is_null() || j_col.is_null() || cols.len() != nnz {
        return false;
    }
    // SAFETY: i_row has room for nnz ints (caller); `rows` is a Rust slice and cannot
    // overlap IPOPT's buffer.
    unsafe { std::ptr::copy_nonoverlapping(rows.as_ptr(), i_row, nnz) };
    // SAFETY: as above, for j_col and `cols`.
    unsafe { std::ptr::copy_nonoverlapping(cols.as_ptr(), j_col, nnz) };
    true
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn tramp_eval_jac_g(
    n: IpIndex,
    x: *mut IpNumber,
    new_x: bool,
    m: IpIndex,
    nele_jac: IpIndex,
    i_row: *mut IpIndex,
    j_col: *mut IpIndex,
    values: *mut IpNumber,
    user_data: UserDataPtr,
) -> bool {
    let body = |d: &mut CallbackData<'_>| {
        let nnz = d.structure.jac_rows.len();
        if n < 0 || m < 0 || nele_jac < 0 {
            return false;
        }
        if n as usize != d.n || m as usize != d.m || nele_jac as usize != nnz {
            return false;
        }
        if values.is_null() {
            // Structure query: iRow/jCol hold nele_jac (= nnz) ints each.
            // SAFETY: see above; the pattern slices have nnz entries (validated).
            return unsafe {
                fill_pattern(&d.structure.jac_rows, &d.structure.jac_cols, i_row, j_col)
            };
        }
        // SAFETY: value call: x holds n doubles, values (distinct) nele_jac doubles.
        let (Some(x), Some(vals)) = (unsafe { slice_in(x, d.n) }, unsafe {
            slice_out(values, nnz)
        }) else {
            return false;
        };
        d.nlp.eval_jac_g(x, new_x, vals)
    };
    // SAFETY: as in tramp_eval_f.
    unsafe { guarded(user_data, body) }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn tramp_eval_h(
    n: IpIndex,
    x: *mut IpNumber,
    new_x: bool,
    obj_factor: IpNumber,
    m: IpIndex,
    lambda: *mut IpNumber,
    new_lambda: bool,
    nele_hess: IpIndex,
    i_row: *mut IpIndex,
    j_col: *mut IpIndex,
    values: *mut IpNumber,
    user_data: UserDataPtr,
) -> bool {
    let body = |d: &mut CallbackData<'_>| {
        let nnz = d.structure.hess_rows.len();
        if n < 0 || m < 0 || nele_hess < 0 {
            return false;
        }
        if n as usize != d.n || m as usize != d.m || nele_hess as usize != nnz {
            return false;
        }
        if values.is_null() {
            // Structure query: iRow/jCol hold nele_hess (= nnz) ints each.
            // SAFETY: see above; the pattern slices have nnz entries (validated).
            return unsafe {
                fill_pattern(&d.structure.hess_rows, &d.structure.hess_cols, i_row, j_col)
            };
        }
        // SAFETY: value call: x holds n doubles, lambda m doubles, and values (distinct
        // from both) nele_hess doubles.
        let (Some(x), Some(lambda), Some(vals)) = (
            unsafe { slice_in(x, d.n) },
            unsafe { slice_in(lambda, d.m) },
            unsafe { slice_out(values, nnz) },
        ) else {
            return false;
        };
        d.nlp.eval_h(x, new_x, obj_factor, lambda, new_lambda, vals)
    };
    // SAFETY: as in tramp_eval_f.
    unsafe { guarded(user_data, body) }
}

/// Unscaled primal infeasibility (infinity norm of bound and constraint violations).
/// NaN counts as infinitely infeasible.
fn primal_infeasibility(s: &NlpStructure, x: &[f64], g: &[f64]) -> f64 {
    let mut worst = 0.0_f64;
    let mut acc = |v: f64, lo: f64, hi: f64| {
        let viol = (lo - v).max(v - hi);
        if v.is_nan() {
            worst = f64::INFINITY;
        } else if viol > worst {
            worst = viol;
        }
    };
    for ((&v, &lo), &hi) in x.iter().zip(&s.x_lower).zip(&s.x_upper) {
        acc(v, lo, hi);
    }
    for ((&v, &lo), &hi) in g.iter().zip(&s.g_lower).zip(&s.g_upper) {
        acc(v, lo, hi);
    }
    worst
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn tramp_intermediate(
    alg_mod: IpIndex,
    iter_count: IpIndex,
    obj_value: IpNumber,
    inf_pr: IpNumber,
    inf_du: IpNumber,
    mu: IpNumber,
    d_norm: IpNumber,
    regularization_size: IpNumber,
    alpha_du: IpNumber,
    alpha_pr: IpNumber,
    ls_trials: IpIndex,
    user_data: UserDataPtr,
) -> bool {
    if user_data.is_null() {
        return false;
    }
    let data = user_data.cast::<CallbackData<'_>>();
    let info = IterationInfo {
        iteration: iter_count.max(0) as usize,
        restoration: alg_mod == 1,
        objective: obj_value,
        inf_pr,
        inf_du,
        mu,
        d_norm,
        regularization: regularization_size,
        alpha_du,
        alpha_pr,
        ls_trials: ls_trials.max(0) as usize,
    };

    // Read the current unscaled iterate into the scratch buffers. This is done through
    // raw pointers, without holding a `&mut CallbackData`, in case IPOPT re-enters an
    // eval callback while computing it.
    // SAFETY: `data` is the live CallbackData passed to IpoptSolve; the field reads and
    // the as_mut_ptr calls create only momentary borrows. The scratch buffers have n
    // (x, z_L, z_U) and m (g, lambda) entries, matching what we pass.
    let have_iterate = unsafe {
        if (*data).panic.is_some() {
            return false;
        }
        let (problem, n, m) = ((*data).problem, (*data).n, (*data).m);
        let px = (*data).scratch_x.as_mut_ptr();
        let pzl = (*data).scratch_z_l.as_mut_ptr();
        let pzu = (*data).scratch_z_u.as_mut_ptr();
        let pg = (*data).scratch_g.as_mut_ptr();
        let plam = (*data).scratch_lambda.as_mut_ptr();
        GetIpoptCurrentIterate(
            problem,
            false,
            n as IpIndex,
            px,
            pzl,
            pzu,
            m as IpIndex,
            pg,
            plam,
        )
    };

    // SAFETY: same pointer as in `guarded`; no other borrow of it is live here.
    unsafe {
        guarded(user_data, |d| {
            d.last_iter = info.iteration;
            if have_iterate {
                let inf = primal_infeasibility(d.structure, &d.scratch_x, &d.scratch_g);
                let better = match &d.best {
                    None => true,
                    Some(b) => inf < b.inf_pr || (inf == b.inf_pr && obj_value < b.objective),
                };
                if better {
                    match &mut d.best {
                        Some(b) => {
                            b.iteration = info.iteration;
                            b.x.copy_from_slice(&d.scratch_x);
                            b.g.copy_from_slice(&d.scratch_g);
                            b.inf_pr = inf;
                            b.objective = obj_value;
                        }
                        None => {
                            d.best = Some(BestIterate {
                                iteration: info.iteration,
                                x: d.scratch_x.clone(),
                                g: d.scratch_g.clone(),
                                inf_pr: inf,
                                objective: obj_value,
                            })
                        }
                    }
                }
            }
            let keep_going = match d.on_iteration.as_mut() {
                Some(cb) => cb(&info),
                None => true,
            };
            d.history.push(info);
            keep_going
        })
    }
}

// ---------------------------------------------------------------------------
// Ipopt
// ---------------------------------------------------------------------------

/// An IPOPT problem instance (owns the `IpoptProblem`, freed on drop).
pub struct Ipopt {
    problem: IpoptProblemPtr,
    structure: NlpStructure,
}

// SAFETY: the IpoptProblem is exclusively owned by this value and has no thread
// affinity; all access goes through `&mut self`. (IPOPT guards its MUMPS calls with a
// global mutex, so independent instances may solve on different threads.)
unsafe impl Send for Ipopt {}

impl Drop for Ipopt {
    fn drop(&mut self) {
        // SAFETY: `problem` came from CreateIpoptProblem, is non-null and freed once.
        unsafe { FreeIpoptProblem(self.problem) };
    }
}

/// Sets one option on `problem`; on rejection returns what IPOPT printed (maybe empty).
/// `str_val` is the C string of an `OptionValue::Str`.
fn add_option(
    problem: IpoptProblemPtr,
    key: &CStr,
    value: &OptionValue,
    str_val: Option<&CStr>,
) -> Result<(), String> {
    let k = key.as_ptr().cast_mut();
    let add_num = |v: f64| {
        // SAFETY: `problem` is a valid IpoptProblem; the keyword is only read.
        capture_stdout(|| unsafe { AddIpoptNumOption(problem, k, v) })
    };
    let add_int = |v: IpIndex| {
        // SAFETY: `problem` is a valid IpoptProblem; the keyword is only read.
        capture_stdout(|| unsafe { AddIpoptIntOption(problem, k, v) })
    };
    let add_str = |v: &CStr| {
        // SAFETY: `problem` is a valid IpoptProblem; IPOPT only reads the NUL-terminated
        // strings (the C signature is non-const, but they are copied into std::string).
        capture_stdout(|| unsafe { AddIpoptStrOption(problem, k, v.as_ptr().cast_mut()) })
    };
    let (ok, printed) = match (value, str_val) {
        (OptionValue::Str(_), Some(v)) => add_str(v),
        (OptionValue::Str(_), None) => (false, String::new()),
        (OptionValue::Num(v), _) => add_num(*v),
        (OptionValue::Int(v), _) => match IpIndex::try_from(*v) {
            // Retry as Num: `max_wall_time: 5` should set a Number option.
            Ok(iv) => match add_int(iv) {
                (true, _) => (true, String::new()),
                (false, printed) => (add_num(*v as f64).0, printed),
            },
            Err(_) => match add_num(*v as f64) {
                (true, _) => (true, String::new()),
                (false, printed) if printed.contains("not a valid option") => (false, printed),
                (false, _) => (
                    false,
                    format!("{v} does not fit in a 32-bit integer option"),
                ),
            },
        },
    };
    if ok {
        Ok(())
    } else {
        Err(printed)
    }
}

impl Ipopt {
    /// Validates `structure` and creates the IPOPT problem.
    pub fn new(structure: &NlpStructure) -> Result<Self, IpoptError> {
        structure.validate()?;
        let mut s = structure.clone();
        // SAFETY: the bound arrays have n and m entries (validated); IPOPT copies them
        // during the call. The callbacks match the C typedefs.
        let problem = unsafe {
            CreateIpoptProblem(
                s.n() as IpIndex,
                s.x_lower.as_mut_ptr(),
                s.x_upper.as_mut_ptr(),
                s.m() as IpIndex,
                s.g_lower.as_mut_ptr(),
                s.g_upper.as_mut_ptr(),
                s.jac_rows.len() as IpIndex,
                s.hess_rows.len() as IpIndex,
                0,
                tramp_eval_f,
                tramp_eval_g,
                tramp_eval_grad_f,
                tramp_eval_jac_g,
                tramp_eval_h,
            )
        };
        if problem.is_null() {
            return Err(IpoptError::Create);
        }
        let this = Ipopt {
            problem,
            structure: s,
        };
        // SAFETY: problem is a valid IpoptProblem; the trampoline matches Intermediate_CB.
        unsafe { SetIntermediateCallback(this.problem, tramp_intermediate) };
        Ok(this)
    }

    /// The structure this problem was created with.
    pub fn structure(&self) -> &NlpStructure {
        &self.structure
    }

    /// Sets one option. On rejection the error carries the text IPOPT printed.
    /// An `Int` rejected by IPOPT is retried as `Num` (for `tol: 1`-style input).
    ///
    /// IPOPT prints its reason through its console journal, which stays silent once a
    /// solve has run with `print_level = 0`; in that case the option is replayed on a
    /// throwaway problem (fresh journal) to obtain the reason.
    pub fn set_option(&mut self, name: &str, value: &OptionValue) -> Result<(), IpoptError> {
        let reject = |message: String| IpoptError::Option {
            name: name.to_string(),
            value: value.to_string(),
            message,
        };
        if name == "linear_solver" {
            let ours = *value == OptionValue::Str(LOAM_LINEAR_SOLVER.into());
            let callbacks: *const super::kkt::Callbacks = if ours {
                &super::kkt::CALLBACKS
            } else {
                std::ptr::null()
            };
            // SAFETY: valid problem; the callback table is a static.
            let ok = unsafe { loam_UseLinearSolver(self.problem, callbacks) };
            if ours {
                return if ok {
                    Ok(())
                } else {
                    Err(reject("IPOPT refused `linear_solver: custom`".into()))
                };
            }
        }
        let key = CString::new(name)
            .map_err(|_| reject("option name contains a NUL byte".to_string()))?;
        let str_val = match value {
            OptionValue::Str(s) => Some(
                CString::new(s.as_str())
                    .map_err(|_| reject("option value contains a NUL byte".to_string()))?,
            ),
            _ => None,
        };
        let mut message = match add_option(self.problem, &key, value, str_val.as_deref()) {
            Ok(()) => return Ok(()),
            Err(printed) => printed,
        };
        if message.is_empty() {
            let tiny = NlpStructure {
                x_lower: vec![0.0],
                x_upper: vec![1.0],
                ..Default::default()
            };
            message = Ipopt::new(&tiny)
                .ok()
                .and_then(|scratch| {
                    add_option(scratch.problem, &key, value, str_val.as_deref()).err()
                })
                .unwrap_or_default();
        }
        if message.is_empty() {
            message = "IPOPT returned false without printing a reason; the option name may be \
                       unknown, or the value of the wrong type or out of range"
                .to_string();
        }
        Err(reject(message))
    }

    /// Sets options in order, stopping at the first rejected one.
    pub fn set_options(&mut self, opts: &[(String, OptionValue)]) -> Result<(), IpoptError> {
        for (name, value) in opts {
            self.set_option(name, value)?;
        }
        Ok(())
    }

    /// Sets user scaling (objective factor, optional per-variable and per-constraint
    /// factors) and the option `nlp_scaling_method = user-scaling`.
    pub fn set_scaling(
        &mut self,
        objective: f64,
        x: Option<&[f64]>,
        g: Option<&[f64]>,
    ) -> Result<(), IpoptError> {
        let (n, m) = (self.structure.n(), self.structure.m());
        if let Some(x) = x.filter(|x| x.len() != n) {
            return Err(IpoptError::Length {
                what: "x scaling",
                expected: n,
                got: x.len(),
            });
        }
        if let Some(g) = g.filter(|g| g.len() != m) {
            return Err(IpoptError::Length {
                what: "g scaling",
                expected: m,
                got: g.len(),
            });
        }
        let mut xs = x.map(<[f64]>::to_vec);
        let mut gs = g.map(<[f64]>::to_vec);
        let px = xs.as_mut().map_or(std::ptr::null_mut(), |v| v.as_mut_ptr());
        let pg = gs.as_mut().map_or(std::ptr::null_mut(), |v| v.as_mut_ptr());
        // SAFETY: valid problem; px/pg are null or point to n/m doubles that IPOPT copies.
        let ok = unsafe { SetIpoptProblemScaling(self.problem, objective, px, pg) };
        if !ok {
            return Err(IpoptError::Scaling);
        }
        self.set_option(
            "nlp_scaling_method",
            &OptionValue::Str("user-scaling".to_string()),
        )
    }

    /// Makes IPOPT also write its log to `path` at `print_level` (0..=12), appended to what
    /// the file holds.
    pub fn open_output_file(&mut self, path: &Path, print_level: i32) -> Result<(), IpoptError> {
        let fail = || IpoptError::OutputFile {
            path: path.to_path_buf(),
            print_level,
        };
        let c_path = {
            use std::os::unix::ffi::OsStrExt;
            CString::new(path.as_os_str().as_bytes()).map_err(|_| fail())?
        };
        // SAFETY: valid problem; IPOPT only reads the NUL-terminated path.
        let ok =
            unsafe { OpenIpoptOutputFile(self.problem, c_path.as_ptr().cast_mut(), print_level) };
        if ok {
            Ok(())
        } else {
            Err(fail())
        }
    }

    /// Solves from `x0`.
    ///
    /// With `warm` Some, sets `warm_start_init_point = yes` and passes the multipliers;
    /// with None, sets `warm_start_init_point = no`.
    /// `on_iteration` is called from IPOPT's intermediate callback; returning false stops
    /// IPOPT (status `UserRequestedStop`). A panic in a callback makes IPOPT stop (the
    /// callback returns false) and is re-raised here once `IpoptSolve` has returned.
    pub fn solve(
        &mut self,
        nlp: &mut dyn Nlp,
        x0: &[f64],
        warm: Option<&Multipliers>,
        on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
    ) -> Result<SolveResult, IpoptError> {
        let (n, m) = (self.structure.n(), self.structure.m());
        let check = |what: &'static str, expected: usize, got: usize| {
            if expected == got {
                Ok(())
            } else {
                Err(IpoptError::Length {
                    what,
                    expected,
                    got,
                })
            }
        };
        check("x0", n, x0.len())?;
        if let Some(w) = warm {
            check("warm-start multipliers g", m, w.g.len())?;
            check("warm-start multipliers x_lower", n, w.x_lower.len())?;
            check("warm-start multipliers x_upper", n, w.x_upper.len())?;
        }
        let warm_flag = if warm.is_some() { "yes" } else { "no" };
        self.set_option(
            "warm_start_init_point",
            &OptionValue::Str(warm_flag.to_string()),
        )?;

        let mut x = x0.to_vec();
        let mut g = vec![0.0; m];
        let mut objective = 0.0;
        let mut mult = match warm {
            Some(w) => w.clone(),
            None => Multipliers {
                g: vec![0.0; m],
                x_lower: vec![0.0; n],
                x_upper: vec![0.0; n],
            },
        };

        // Re-coerce so the trait objects' lifetime bounds can shrink to this call.
        let on_iteration = on_iteration.map(|f| -> &mut dyn FnMut(&IterationInfo) -> bool { f });
        let mut data = CallbackData {
            nlp,
            on_iteration,
            problem: self.problem,
            structure: &self.structure,
            n,
            m,
            history: Vec::new(),
            last_iter: 0,
            best: None,
            scratch_x: vec![0.0; n],
            scratch_z_l: vec![0.0; n],
            scratch_z_u: vec![0.0; n],
            scratch_g: vec![0.0; m],
            scratch_lambda: vec![0.0; m],
            panic: None,
        };
        let user_data = (&raw mut data).cast::<c_void>();
        // SAFETY: valid problem; x has n entries, g/mult.g have m, mult.x_* have n (IPOPT
        // reads/writes exactly those); `data` outlives the call and is only accessed via
        // `user_data` (by the trampolines) until IpoptSolve returns.
        let code = unsafe {
            IpoptSolve(
                self.problem,
                x.as_mut_ptr(),
                g.as_mut_ptr(),
                &mut objective,
                mult.g.as_mut_ptr(),
                mult.x_lower.as_mut_ptr(),
                mult.x_upper.as_mut_ptr(),
                user_data,
            )
        };
        if let Some(payload) = data.panic.take() {
            std::panic::resume_unwind(payload);
        }
        Ok(SolveResult {
            status: IpoptStatus::from_code(code),
            x,
            g,
            objective,
            multipliers: mult,
            iterations: data.last_iter,
            history: data.history,
            best: data.best,
        })
    }
}

// ---------------------------------------------------------------------------
// Probing options by running them
// ---------------------------------------------------------------------------

/// min (x - 0.5)², -1 ≤ x ≤ 1, -1 ≤ g(x) = x ≤ 1: the smallest NLP that makes IPOPT build its
/// whole algorithm (linear solver included) before the first iteration.
struct ProbeNlp;

impl Nlp for ProbeNlp {
    fn eval_f(&mut self, x: &[f64], _: bool) -> Option<f64> {
        Some((x[0] - 0.5).powi(2))
    }
    fn eval_grad_f(&mut self, x: &[f64], _: bool, grad: &mut [f64]) -> bool {
        grad[0] = 2.0 * (x[0] - 0.5);
        true
    }
    fn eval_g(&mut self, x: &[f64], _: bool, g: &mut [f64]) -> bool {
        g[0] = x[0];
        true
    }
    fn eval_jac_g(&mut self, _: &[f64], _: bool, values: &mut [f64]) -> bool {
        values[0] = 1.0;
        true
    }
    fn eval_h(
        &mut self,
        _: &[f64],
        _: bool,
        obj_factor: f64,
        _: &[f64],
        _: bool,
        values: &mut [f64],
    ) -> bool {
        values[0] = 2.0 * obj_factor;
        true
    }
}

/// Runs IPOPT for one iteration on a one-variable problem with `options`. Options IPOPT only
/// acts on when a solve starts (a linear solver whose library it loads at run time, such as
/// HSL's `libhsl.so` for ma27/ma57/ma77/ma86/ma97 or `libpardiso.so`) pass `set_option` but stop
/// the solve at once with status `Invalid_Option`; this returns `Err(reason)` then, the reason
/// being IPOPT's own message ("libhsl.so: cannot open shared object file: ...").
///
/// IPOPT's log of the probe goes to a temporary file (removed), never to stdout.
pub fn probe_solve(options: &[(String, OptionValue)]) -> Result<Result<(), String>, IpoptError> {
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let structure = NlpStructure {
        x_lower: vec![-1.0],
        x_upper: vec![1.0],
        g_lower: vec![-1.0],
        g_upper: vec![1.0],
        jac_rows: vec![0],
        jac_cols: vec![0],
        hess_rows: vec![0],
        hess_cols: vec![0],
    };
    let mut probe = Ipopt::new(&structure)?;
    probe.set_options(options)?;
    probe.set_options(&[
        ("print_level".into(), OptionValue::Int(0)),
        ("sb".into(), OptionValue::Str("yes".into())),
        ("max_iter".into(), OptionValue::Int(1)),
    ])?;
    let log = std::env::temp_dir().join(format!(
        ".loam-ipopt-probe-{}-{}.log",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    ));
    let logged = probe.open_output_file(&log, 5).is_ok();
    let result = probe.solve(&mut ProbeNlp, &[0.0], None, None);
    if matches!(&result, Ok(r) if r.status == IpoptStatus::InvalidOption) {
        // IPOPT 3.14 crashes freeing an MA97 interface whose library failed to load (its
        // destructor calls ma97's finalise through a null pointer): leak this one small
        // problem instead, after flushing its log (fflush(NULL): every C stream).
        // SAFETY: fflush(NULL) is always valid.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        std::mem::forget(probe);
    } else {
        drop(probe); // closes the log
    }
    let printed = if logged {
        std::fs::read_to_string(&log).unwrap_or_default()
    } else {
        String::new()
    };
    let _ = std::fs::remove_file(&log);
    let result = result?;
    if result.status != IpoptStatus::InvalidOption {
        return Ok(Ok(()));
    }
    let reason = printed
        .lines()
        .filter_map(|line| line.split_once("Exception message:").map(|(_, m)| m.trim()))
        .chain(
            printed
                .lines()
                .filter_map(|line| line.trim().strip_prefix("EXIT:").map(str::trim)),
        )
        .find(|m| !m.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| "IPOPT stopped with Invalid_Option before its first iteration".into());
    Ok(Err(reason))
}

/// The settings IPOPT lists for the string option `name`, each with IPOPT's description
/// (asked by setting a value no option has, so that IPOPT prints the option's documentation).
pub fn valid_settings(name: &str) -> Vec<(String, String)> {
    let tiny = NlpStructure {
        x_lower: vec![0.0],
        x_upper: vec![1.0],
        ..Default::default()
    };
    let Ok(mut scratch) = Ipopt::new(&tiny) else {
        return Vec::new();
    };
    let message = match scratch.set_option(name, &OptionValue::Str("\u{1}none".into())) {
        Err(IpoptError::Option { message, .. }) => message,
        _ => return Vec::new(),
    };
    message
        .lines()
        .skip_while(|line| !line.starts_with("Valid Settings:"))
        .skip(1)
        .take_while(|line| line.starts_with(char::is_whitespace))
        .filter_map(|line| {
            let line = line.trim();
            let (value, description) = line.split_once(' ').unwrap_or((line, ""));
            (!value.is_empty()).then(|| (value.to_string(), description.trim().to_string()))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(ip: &mut Ipopt) {
        ip.set_option("print_level", &OptionValue::Int(0)).unwrap();
        ip.set_option("sb", &OptionValue::Str("yes".into()))
            .unwrap();
    }

    /// HS071 from the IPOPT documentation.
    struct Hs071 {
        f_evals: usize,
    }

    fn hs071_structure() -> NlpStructure {
        let mut hess_rows = Vec::new();
        let mut hess_cols = Vec::new();
        for r in 0..4 {
            for c in 0..=r {
                hess_rows.push(r);
                hess_cols.push(c);
            }
        }
        NlpStructure {
            x_lower: vec![1.0; 4],
            x_upper: vec![5.0; 4],
            g_lower: vec![25.0, 40.0],
            g_upper: vec![2e19, 40.0],
            jac_rows: vec![0, 0, 0, 0, 1, 1, 1, 1],
            jac_cols: vec![0, 1, 2, 3, 0, 1, 2, 3],
            hess_rows,
            hess_cols,
        }
    }

    impl Nlp for Hs071 {
        fn eval_f(&mut self, x: &[f64], _new_x: bool) -> Option<f64> {
            self.f_evals += 1;
            Some(x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2])
        }
        fn eval_grad_f(&mut self, x: &[f64], _new_x: bool, grad: &mut [f64]) -> bool {
            grad[0] = x[0] * x[3] + x[3] * (x[0] + x[1] + x[2]);
            grad[1] = x[0] * x[3];
            grad[2] = x[0] * x[3] + 1.0;
            grad[3] = x[0] * (x[0] + x[1] + x[2]);
            true
        }
        fn eval_g(&mut self, x: &[f64], _new_x: bool, g: &mut [f64]) -> bool {
            g[0] = x[0] * x[1] * x[2] * x[3];
            g[1] = x.iter().map(|v| v * v).sum();
            true
        }
        fn eval_jac_g(&mut self, x: &[f64], _new_x: bool, v: &mut [f64]) -> bool {
            v[0] = x[1] * x[2] * x[3];
            v[1] = x[0] * x[2] * x[3];
            v[2] = x[0] * x[1] * x[3];
            v[3] = x[0] * x[1] * x[2];
            for i in 0..4 {
                v[4 + i] = 2.0 * x[i];
            }
            true
        }
        fn eval_h(
            &mut self,
            x: &[f64],
            _new_x: bool,
            of: f64,
            l: &[f64],
            _new_lambda: bool,
            v: &mut [f64],
        ) -> bool {
            // Lower triangle, row-major: (0,0) (1,0) (1,1) (2,0) (2,1) (2,2) (3,0) (3,1) (3,2) (3,3)
            v[0] = of * (2.0 * x[3]);
            v[1] = of * x[3];
            v[2] = 0.0;
            v[3] = of * x[3];
            v[4] = 0.0;
            v[5] = 0.0;
            v[6] = of * (2.0 * x[0] + x[1] + x[2]);
            v[7] = of * x[0];
            v[8] = of * x[0];
            v[9] = 0.0;

            v[1] += l[0] * (x[2] * x[3]);
            v[3] += l[0] * (x[1] * x[3]);
            v[4] += l[0] * (x[0] * x[3]);
            v[6] += l[0] * (x[1] * x[2]);
            v[7] += l[0] * (x[0] * x[2]);
            v[8] += l[0] * (x[0] * x[1]);

            v[0] += l[1] * 2.0;
            v[2] += l[1] * 2.0;
            v[5] += l[1] * 2.0;
            v[9] += l[1] * 2.0;
            true
        }
    }

    fn solve_hs071() -> SolveResult {
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        quiet(&mut ip);
        ip.set_option("tol", &OptionValue::Num(1e-9)).unwrap();
        let mut nlp = Hs071 { f_evals: 0 };
        ip.solve(&mut nlp, &[1.0, 5.0, 5.0, 1.0], None, None)
            .unwrap()
    }

    #[test]
    fn hs071_exact_derivatives() {
        let r = solve_hs071();
        assert_eq!(r.status, IpoptStatus::SolveSucceeded);
        let expect = [1.0, 4.742_999_64, 3.821_149_98, 1.379_408_29];
        for (a, b) in r.x.iter().zip(expect) {
            assert!((a - b).abs() < 1e-6, "x = {:?}", r.x);
        }
        assert!(
            (r.objective - 17.014_017_14).abs() < 1e-6,
            "f = {}",
            r.objective
        );
        assert!((r.g[0] - 25.0).abs() < 1e-6 && (r.g[1] - 40.0).abs() < 1e-6);
        assert!(!r.history.is_empty());
        assert!(r.iterations > 0);
        assert_eq!(r.iterations, r.history.last().unwrap().iteration);
        assert_eq!(r.history[0].iteration, 0);
        // Best iterate: feasible at the end, so close to the solution.
        let best = r.best.as_ref().unwrap();
        assert!(best.inf_pr < 1e-6, "best = {best:?}");
        assert_eq!(r.multipliers.g.len(), 2);
        assert_eq!(r.multipliers.x_lower.len(), 4);
    }

    /// IPOPT driven through loam's own linear solver (`linear_solver: loam`) reaches HS071's
    /// known optimum, as with MUMPS.
    #[test]
    fn hs071_with_loams_linear_solver() {
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        quiet(&mut ip);
        ip.set_option("tol", &OptionValue::Num(1e-9)).unwrap();
        ip.set_option(
            "linear_solver",
            &OptionValue::Str(LOAM_LINEAR_SOLVER.to_string()),
        )
        .unwrap();
        let mut nlp = Hs071 { f_evals: 0 };
        let r = ip
            .solve(&mut nlp, &[1.0, 5.0, 5.0, 1.0], None, None)
            .unwrap();
        let mumps = solve_hs071();
        assert_eq!(r.status, IpoptStatus::SolveSucceeded);
        for (a, b) in r.x.iter().zip(&mumps.x) {
            assert!((a - b).abs() < 1e-7, "loam {:?} mumps {:?}", r.x, mumps.x);
        }
        assert!((r.objective - 17.014_017_14).abs() < 1e-6);
    }

    #[test]
    fn infeasible_problem_reports_best_iterate() {
        let s = NlpStructure {
            x_lower: vec![0.0],
            x_upper: vec![1.0],
            g_lower: vec![2.0],
            g_upper: vec![f64::INFINITY],
            jac_rows: vec![0],
            jac_cols: vec![0],
            hess_rows: vec![0],
            hess_cols: vec![0],
        };
        let mut ip = Ipopt::new(&s).unwrap();
        quiet(&mut ip);
        // The probe's functions, min (x - 0.5)² with g(x) = x, under bounds that make it
        // infeasible: x in [0, 1], g ≥ 2.
        let r = ip.solve(&mut super::ProbeNlp, &[0.5], None, None).unwrap();
        assert!(!r.status.is_success(), "status {}", r.status);
        assert_eq!(r.status, IpoptStatus::InfeasibleProblemDetected);
        let best = r.best.expect("best iterate");
        // The closest feasible-ish point is x = 1 (violation 1).
        assert!((best.inf_pr - 1.0).abs() < 1e-3, "best = {best:?}");
        assert!((best.x[0] - 1.0).abs() < 1e-3);
        assert!((best.g[0] - best.x[0]).abs() < 1e-12);
        assert!(r.history.iter().any(|h| h.restoration));
    }

    #[test]
    fn option_errors_carry_ipopt_text() {
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        let e = ip
            .set_option("no_such_option", &OptionValue::Num(1.0))
            .unwrap_err();
        match &e {
            IpoptError::Option { name, message, .. } => {
                assert_eq!(name, "no_such_option");
                assert!(message.contains("not a valid option"), "message: {message}");
            }
            other => panic!("unexpected {other:?}"),
        }
        let e = ip
            .set_option("tol", &OptionValue::Str("abc".into()))
            .unwrap_err();
        assert!(
            matches!(&e, IpoptError::Option { message, .. } if message.contains("of type")),
            "{e}"
        );
        let e = ip
            .set_option("mu_strategy", &OptionValue::Str("nonsense".into()))
            .unwrap_err();
        assert!(
            matches!(&e, IpoptError::Option { message, .. } if message.contains("not a valid setting")),
            "{e}"
        );
        let e = ip
            .set_option("max_iter", &OptionValue::Int(-3))
            .unwrap_err();
        assert!(matches!(e, IpoptError::Option { .. }), "{e}");
        // Int for a Num option is retried as Num.
        ip.set_option("tol", &OptionValue::Int(1)).unwrap();
        ip.set_option("max_wall_time", &OptionValue::Int(5))
            .unwrap();
        ip.set_option("max_iter", &OptionValue::Int(100)).unwrap();
        // set_options stops at the first rejected one.
        let opts = vec![
            ("print_level".to_string(), OptionValue::Int(0)),
            ("bogus".to_string(), OptionValue::Int(1)),
            ("also_bogus".to_string(), OptionValue::Int(1)),
        ];
        match ip.set_options(&opts).unwrap_err() {
            IpoptError::Option { name, .. } => assert_eq!(name, "bogus"),
            other => panic!("unexpected {other:?}"),
        }
        // A NUL in the name is rejected without reaching IPOPT.
        assert!(ip.set_option("a\0b", &OptionValue::Int(1)).is_err());
    }

    #[test]
    fn option_errors_after_a_quiet_solve_still_carry_ipopt_text() {
        // After a solve with print_level=0 IPOPT's console journal is silent, so the
        // wrapper replays the option on a throwaway problem to get the reason.
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        quiet(&mut ip);
        let r = ip
            .solve(&mut Hs071 { f_evals: 0 }, &[1.0, 5.0, 5.0, 1.0], None, None)
            .unwrap();
        assert!(r.status.is_success());
        match ip.set_option("foo", &OptionValue::Int(3)).unwrap_err() {
            IpoptError::Option { message, .. } => {
                assert!(message.contains("not a valid option"), "{message}")
            }
            other => panic!("unexpected {other:?}"),
        }
        let e = ip
            .set_option("max_iter", &OptionValue::Num(2.5))
            .unwrap_err();
        assert!(e.to_string().contains("of type"), "{e}");
        ip.set_option("max_wall_time", &OptionValue::Int(5))
            .unwrap();
    }

    #[test]
    fn user_stop_at_iteration_two() {
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        quiet(&mut ip);
        let mut seen = Vec::new();
        let mut cb = |info: &IterationInfo| {
            seen.push(info.iteration);
            info.iteration < 2
        };
        let r = ip
            .solve(
                &mut Hs071 { f_evals: 0 },
                &[1.0, 5.0, 5.0, 1.0],
                None,
                Some(&mut cb),
            )
            .unwrap();
        assert_eq!(r.status, IpoptStatus::UserRequestedStop);
        assert_eq!(r.iterations, 2);
        assert_eq!(seen, vec![0, 1, 2]);
        assert_eq!(r.history.len(), 3);
    }

    #[test]
    fn warm_start_needs_fewer_iterations() {
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        quiet(&mut ip);
        let mut nlp = Hs071 { f_evals: 0 };
        let cold = ip
            .solve(&mut nlp, &[1.0, 5.0, 5.0, 1.0], None, None)
            .unwrap();
        assert_eq!(cold.status, IpoptStatus::SolveSucceeded);
        ip.set_option("mu_init", &OptionValue::Num(1e-9)).unwrap();
        ip.set_option("warm_start_bound_push", &OptionValue::Num(1e-9))
            .unwrap();
        ip.set_option("warm_start_mult_bound_push", &OptionValue::Num(1e-9))
            .unwrap();
        let warm = ip
            .solve(&mut nlp, &cold.x, Some(&cold.multipliers), None)
            .unwrap();
        assert_eq!(warm.status, IpoptStatus::SolveSucceeded);
        assert!(
            warm.iterations < cold.iterations,
            "warm {} vs cold {}",
            warm.iterations,
            cold.iterations
        );
        for (a, b) in warm.x.iter().zip(&cold.x) {
            assert!((a - b).abs() < 1e-6);
        }
        // Solving again without `warm` resets warm_start_init_point and works.
        let again = ip
            .solve(&mut nlp, &[1.0, 5.0, 5.0, 1.0], None, None)
            .unwrap();
        assert!(again.status.is_success());
    }

    #[test]
    fn structure_validation() {
        let good = hs071_structure();
        let cases: Vec<(NlpStructure, &str)> = vec![
            (
                NlpStructure {
                    x_upper: vec![5.0; 3],
                    ..good.clone()
                },
                "x_upper",
            ),
            (
                NlpStructure {
                    g_upper: vec![1.0],
                    ..good.clone()
                },
                "g_upper",
            ),
            (
                NlpStructure {
                    jac_cols: vec![0; 7],
                    ..good.clone()
                },
                "jac_cols",
            ),
            (
                NlpStructure {
                    hess_cols: vec![0; 9],
                    ..good.clone()
                },
                "hess_cols",
            ),
            (
                NlpStructure {
                    jac_rows: vec![0, 0, 0, 0, 1, 1, 1, 2],
                    ..good.clone()
                },
                "row 2",
            ),
            (
                NlpStructure {
                    jac_cols: vec![0, 1, 2, 4, 0, 1, 2, 3],
                    ..good.clone()
                },
                "column 4",
            ),
            (
                NlpStructure {
                    hess_rows: vec![0],
                    hess_cols: vec![1],
                    ..good.clone()
                },
                "above the diagonal",
            ),
            (
                NlpStructure {
                    hess_rows: vec![-1],
                    hess_cols: vec![0],
                    ..good.clone()
                },
                "row -1",
            ),
        ];
        for (s, needle) in cases {
            match Ipopt::new(&s) {
                Err(IpoptError::Structure { message }) => {
                    assert!(message.contains(needle), "{message:?} lacks {needle:?}")
                }
                Err(e) => panic!("unexpected {e:?}"),
                Ok(_) => panic!("accepted bad structure ({needle})"),
            }
        }
        // Length errors at solve time.
        let mut ip = Ipopt::new(&good).unwrap();
        let e = ip
            .solve(&mut Hs071 { f_evals: 0 }, &[1.0; 3], None, None)
            .unwrap_err();
        assert!(matches!(
            e,
            IpoptError::Length {
                what: "x0",
                expected: 4,
                got: 3
            }
        ));
        let bad = Multipliers {
            g: vec![0.0; 1],
            x_lower: vec![0.0; 4],
            x_upper: vec![0.0; 4],
        };
        let e = ip
            .solve(&mut Hs071 { f_evals: 0 }, &[1.0; 4], Some(&bad), None)
            .unwrap_err();
        assert!(matches!(
            e,
            IpoptError::Length {
                expected: 2,
                got: 1,
                ..
            }
        ));
        assert!(matches!(
            ip.set_scaling(1.0, Some(&[1.0; 2]), None),
            Err(IpoptError::Length { .. })
        ));
    }

    #[test]
    fn status_codes_round_trip() {
        for code in [
            0, 1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -10, -11, -12, -13, -100, -101, -102, -199,
        ] {
            let s = IpoptStatus::from_code(code);
            assert!(!matches!(s, IpoptStatus::Unknown(_)));
            assert_eq!(s.code(), code);
        }
        assert_eq!(IpoptStatus::from_code(42), IpoptStatus::Unknown(42));
        assert_eq!(IpoptStatus::Unknown(42).code(), 42);
        assert_eq!(IpoptStatus::SolveSucceeded.to_string(), "Solve_Succeeded");
        assert_eq!(
            IpoptStatus::InfeasibleProblemDetected.name(),
            "Infeasible_Problem_Detected"
        );
        assert!(IpoptStatus::SolvedToAcceptableLevel.is_success());
        assert!(!IpoptStatus::FeasiblePointFound.is_success());
    }

    #[test]
    fn scaling_and_output_file() {
        let dir = std::env::temp_dir().join(format!("ipopt_wrap_test_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("ipopt.log");
        let mut ip = Ipopt::new(&hs071_structure()).unwrap();
        quiet(&mut ip);
        ip.open_output_file(&log, 5).unwrap();
        ip.set_option("print_user_options", &OptionValue::Str("yes".into()))
            .unwrap();
        ip.set_scaling(2.0, Some(&[1.0; 4]), Some(&[0.5, 0.5]))
            .unwrap();
        let r = ip
            .solve(&mut Hs071 { f_evals: 0 }, &[1.0, 5.0, 5.0, 1.0], None, None)
            .unwrap();
        assert!(r.status.is_success());
        assert!((r.objective - 17.014_017_14).abs() < 1e-6);
        drop(ip);
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(
            text.contains("user-scaling"),
            "log lacks user-scaling:\n{text}"
        );
        assert!(
            text.contains("EXIT: Optimal Solution Found"),
            "log:\n{text}"
        );
        assert!(Ipopt::new(&hs071_structure())
            .unwrap()
            .open_output_file(&dir.join("missing/dir/x.log"), 5)
            .is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Failing evaluations are reported to IPOPT, not turned into panics.
    struct FailingF;
    impl Nlp for FailingF {
        fn eval_f(&mut self, _: &[f64], _: bool) -> Option<f64> {
            None
        }
        fn eval_grad_f(&mut self, _: &[f64], _: bool, g: &mut [f64]) -> bool {
            g.fill(0.0);
            true
        }
        fn eval_g(&mut self, _: &[f64], _: bool, _: &mut [f64]) -> bool {
            true
        }
        fn eval_jac_g(&mut self, _: &[f64], _: bool, _: &mut [f64]) -> bool {
            true
        }
        fn eval_h(
            &mut self,
            _: &[f64],
            _: bool,
            _: f64,
            _: &[f64],
            _: bool,
            v: &mut [f64],
        ) -> bool {
            v.fill(0.0);
            true
        }
    }

    fn one_var() -> NlpStructure {
        NlpStructure {
            x_lower: vec![-1.0],
            x_upper: vec![1.0],
            hess_rows: vec![0],
            hess_cols: vec![0],
            ..Default::default()
        }
    }

    #[test]
    fn evaluation_error_is_a_status() {
        let mut ip = Ipopt::new(&one_var()).unwrap();
        quiet(&mut ip);
        let r = ip.solve(&mut FailingF, &[0.0], None, None).unwrap();
        assert!(!r.status.is_success(), "{}", r.status);
    }

    struct Panicky;
    impl Nlp for Panicky {
        fn eval_f(&mut self, _: &[f64], _: bool) -> Option<f64> {
            panic!("boom in eval_f")
        }
        fn eval_grad_f(&mut self, _: &[f64], _: bool, _: &mut [f64]) -> bool {
            true
        }
        fn eval_g(&mut self, _: &[f64], _: bool, _: &mut [f64]) -> bool {
            true
        }
        fn eval_jac_g(&mut self, _: &[f64], _: bool, _: &mut [f64]) -> bool {
            true
        }
        fn eval_h(
            &mut self,
            _: &[f64],
            _: bool,
            _: f64,
            _: &[f64],
            _: bool,
            _: &mut [f64],
        ) -> bool {
            true
        }
    }

    #[test]
    fn panic_in_callback_is_reraised_after_solve() {
        let mut ip = Ipopt::new(&one_var()).unwrap();
        quiet(&mut ip);
        let caught = std::panic::catch_unwind(AssertUnwindSafe(|| {
            ip.solve(&mut Panicky, &[0.0], None, None)
        }));
        let payload = caught.expect_err("panic should propagate");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in eval_f"));
        // The problem is still usable afterwards.
        let r = ip.solve(&mut FailingF, &[0.0], None, None).unwrap();
        assert!(!r.status.is_success());
    }
}
