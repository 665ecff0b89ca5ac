//! IPOPT's callbacks into Rust: the trampolines for the NLP's evaluations, their shared
//! state, and capturing what IPOPT prints on C stdout.

use std::any::Any;
use std::ffi::c_int;
use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use super::ffi::{IpIndex, IpNumber, IpoptProblemPtr, UserDataPtr};
use super::{BestIterate, IterationInfo, Nlp, NlpStructure};

/// Serialises our fd-1 redirections (fd 1 is process-global).
static STDOUT_CAPTURE: Mutex<()> = Mutex::new(());

/// Runs `f` with fd 1 redirected into a pipe and returns what was written to it.
/// Falls back to running `f` without capture if the redirection cannot be set up.
pub(super) fn capture_stdout<R>(f: impl FnOnce() -> R) -> (R, String) {
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
pub(super) struct CallbackData<'a> {
    pub(super) nlp: &'a mut dyn Nlp,
    pub(super) on_iteration: Option<&'a mut dyn FnMut(&IterationInfo) -> bool>,
    pub(super) problem: IpoptProblemPtr,
    pub(super) structure: &'a NlpStructure,
    pub(super) n: usize,
    pub(super) m: usize,
    pub(super) history: Vec<IterationInfo>,
    pub(super) last_iter: usize,
    pub(super) best: Option<BestIterate>,
    // Scratch buffers for GetIpoptCurrentIterate (allocated once per solve).
    pub(super) scratch_x: Vec<f64>,
    pub(super) scratch_z_l: Vec<f64>,
    pub(super) scratch_z_u: Vec<f64>,
    pub(super) scratch_g: Vec<f64>,
    pub(super) scratch_lambda: Vec<f64>,
    /// First panic payload from a callback; re-raised once IpoptSolve has returned.
    pub(super) panic: Option<Box<dyn Any + Send + 'static>>,
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
pub(super) unsafe fn guarded(
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

pub(super) unsafe extern "C" fn tramp_eval_f(
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

pub(super) unsafe extern "C" fn tramp_eval_grad_f(
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

pub(super) unsafe extern "C" fn tramp_eval_g(
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
pub(super) unsafe extern "C" fn tramp_eval_jac_g(
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
pub(super) unsafe extern "C" fn tramp_eval_h(
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
