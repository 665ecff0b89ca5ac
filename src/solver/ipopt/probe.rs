//! Probing options by running them: `probe_solve` on a one-variable NLP.

use super::{Ipopt, IpoptError, IpoptStatus, Nlp, NlpStructure, OptionValue};

/// min (x - 0.5)², -1 ≤ x ≤ 1, -1 ≤ g(x) = x ≤ 1: the smallest NLP that makes IPOPT build its
/// whole algorithm (linear solver included) before the first iteration.
pub(super) struct ProbeNlp;

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
