//! Solving a transcribed NLP with IPOPT: option defaults, scaling, the callback adapter, and
//! the report (status, best iterate, worst violated rows by name).

pub mod ipopt;
pub mod kkt;
pub mod multifrontal;
pub mod ordering;

use std::path::PathBuf;
use std::time::Instant;

pub use ipopt::{IpoptError, IpoptStatus, IterationInfo, Multipliers, OptionValue};

use crate::symbolic::SymbolicError;
use crate::transcription::nlp::{Nlp, Violation};

#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error(transparent)]
    Ipopt(#[from] IpoptError),
    #[error("evaluating the NLP failed: {0}")]
    Symbolic(#[from] SymbolicError),
}

/// How to run IPOPT.
#[derive(Clone, Debug)]
pub struct SolveSettings {
    /// Options passed to IPOPT after loam's defaults (so they win).
    pub options: Vec<(String, OptionValue)>,
    /// IPOPT's own log, at `file_print_level`.
    pub log_file: Option<PathBuf>,
    pub log_level: i32,
}

impl Default for SolveSettings {
    fn default() -> Self {
        SolveSettings {
            options: Vec::new(),
            log_file: None,
            log_level: 5,
        }
    }
}

/// loam's default IPOPT options; a problem file's `solver:` entries override them.
///
/// `mu_strategy: adaptive`: with IPOPT's monotone default the 80 mm poppy-seed jump ended
/// locally infeasible from loam's guess; adaptive converged on every reachable height.
pub fn default_options() -> Vec<(String, OptionValue)> {
    vec![
        ("print_level".into(), OptionValue::Int(0)),
        ("sb".into(), OptionValue::Str("yes".into())),
        ("tol".into(), OptionValue::Num(1e-8)),
        ("constr_viol_tol".into(), OptionValue::Num(1e-8)),
        ("max_iter".into(), OptionValue::Int(3000)),
        ("mu_strategy".into(), OptionValue::Str("adaptive".into())),
        (
            "nlp_scaling_method".into(),
            OptionValue::Str("gradient-based".into()),
        ),
    ]
}

/// Checks IPOPT options without solving anything (on a one-variable problem), so that a
/// bad option is reported before any result is written.
pub fn check_options(options: &[(String, OptionValue)]) -> Result<(), IpoptError> {
    let structure = ipopt::NlpStructure {
        x_lower: vec![-1.0],
        x_upper: vec![1.0],
        hess_rows: vec![0],
        hess_cols: vec![0],
        ..Default::default()
    };
    let mut probe = ipopt::Ipopt::new(&structure)?;
    probe.set_options(&default_options())?;
    probe.set_options(options)?;
    let mut all = default_options();
    all.extend(options.iter().cloned());
    let linear_solver = all
        .iter()
        .rev()
        .find(|(name, _)| name == "linear_solver")
        .map(|(name, value)| (name.clone(), value.clone()));
    let refuse = |value: &OptionValue, reason: String| {
        let working = available_linear_solvers(&all);
        IpoptError::Option {
            name: "linear_solver".into(),
            value: value.to_string(),
            message: format!(
                "{reason}; linear solvers that work in this IPOPT build: {}",
                if working.is_empty() {
                    "none found".to_string()
                } else {
                    working.join(", ")
                }
            ),
        }
    };
    if let Some((_, value)) = &linear_solver {
        // `custom` is how loam hands IPOPT its own solver (`linear_solver: loam`); on its own
        // it names no solver object.
        if *value == OptionValue::Str("custom".into()) {
            return Err(refuse(
                value,
                "`custom` names no solver object; loam's own sparse LDLᵀ is `loam`".into(),
            ));
        }
    }
    // Some values pass `set_option` and fail only when a solve starts: a linear solver whose
    // library IPOPT loads at run time (HSL's ma27..ma97 from libhsl.so, pardiso) and this
    // build does not find. Run them on a one-variable problem.
    let Err(reason) = ipopt::probe_solve(&all)? else {
        return Ok(());
    };
    let reason = format!("IPOPT cannot start a solve with it: {reason}");
    Err(match &linear_solver {
        Some((_, value)) => refuse(value, reason),
        None => IpoptError::Option {
            name: "(these options together)".into(),
            value: String::new(),
            message: reason,
        },
    })
}

/// The settings of `linear_solver` that run a solve in this IPOPT build (with the other
/// `options`). Only those IPOPT documents as built in ("use the ... package") are tried: a
/// second failed run-time library load in one process has crashed IPOPT 3.14 (ma97 after
/// ma27..ma86), so the "load ... at runtime" ones are not probed, and `custom` needs a C++
/// solver object.
pub fn available_linear_solvers(options: &[(String, OptionValue)]) -> Vec<String> {
    ipopt::valid_settings("linear_solver")
        .into_iter()
        .filter(|(value, description)| value != "custom" && !description.contains("load"))
        .map(|(value, _)| value)
        .chain([ipopt::LOAM_LINEAR_SOLVER.to_string()])
        .filter(|candidate| {
            let mut with = options.to_vec();
            with.push((
                "linear_solver".to_string(),
                OptionValue::Str(candidate.clone()),
            ));
            matches!(ipopt::probe_solve(&with), Ok(Ok(())))
        })
        .collect()
}

/// What a solve produced. Not converging is a status here, not an error.
#[derive(Clone, Debug)]
pub struct SolveReport {
    pub status: IpoptStatus,
    pub converged: bool,
    pub iterations: usize,
    pub objective: f64,
    /// The solution, or when not converged the least-infeasible iterate IPOPT visited.
    pub x: Vec<f64>,
    pub g: Vec<f64>,
    pub max_violation: f64,
    /// Rows violated by more than the tolerance, worst first (empty when converged).
    pub violations: Vec<Violation>,
    /// Inequality constraints on a bound at the reported point, by name, with row counts.
    pub binding: Vec<(String, usize)>,
    pub multipliers: Multipliers,
    pub history: Vec<IterationInfo>,
    pub solve_seconds: f64,
    /// The IPOPT options the solve ran under, by name: loam's defaults, the settings' options
    /// on top (IPOPT keeps the last value set), and whether it warm-started.
    pub options: std::collections::BTreeMap<String, OptionValue>,
    /// With `linear_solver: loam`: its factorisations and solves in this solve.
    pub kkt: Option<kkt::KktCounts>,
}

/// Adapter from the transcribed NLP to IPOPT's callbacks, caching values between calls at
/// the same point.
struct Callbacks<'a> {
    nlp: &'a mut Nlp,
    objective: f64,
    g: Vec<f64>,
    grad: Vec<f64>,
    jac: Vec<f64>,
    value_fresh: bool,
    first_fresh: bool,
    failed: Option<SymbolicError>,
}

impl Callbacks<'_> {
    fn refresh(&mut self, new_x: bool) {
        if new_x {
            self.value_fresh = false;
            self.first_fresh = false;
        }
    }
    fn value(&mut self, x: &[f64]) -> bool {
        if !self.value_fresh {
            match self.nlp.eval_value(x, &mut self.g) {
                Ok(f) => self.objective = f,
                Err(e) => return self.fail(e),
            }
            self.value_fresh = true;
        }
        self.objective.is_finite()
    }
    fn first(&mut self, x: &[f64]) -> bool {
        if !self.first_fresh {
            if let Err(e) = self.nlp.eval_first(x, &mut self.grad, &mut self.jac) {
                return self.fail(e);
            }
            self.first_fresh = true;
        }
        true
    }
    fn fail(&mut self, e: SymbolicError) -> bool {
        self.failed.get_or_insert(e);
        false
    }
}

impl ipopt::Nlp for Callbacks<'_> {
    fn eval_f(&mut self, x: &[f64], new_x: bool) -> Option<f64> {
        self.refresh(new_x);
        self.value(x).then_some(self.objective)
    }
    fn eval_grad_f(&mut self, x: &[f64], new_x: bool, grad: &mut [f64]) -> bool {
        self.refresh(new_x);
        let ok = self.first(x);
        grad.copy_from_slice(&self.grad);
        ok
    }
    fn eval_g(&mut self, x: &[f64], new_x: bool, g: &mut [f64]) -> bool {
        self.refresh(new_x);
        let ok = self.value(x);
        g.copy_from_slice(&self.g);
        ok && g.iter().all(|v| v.is_finite())
    }
    fn eval_jac_g(&mut self, x: &[f64], new_x: bool, values: &mut [f64]) -> bool {
        self.refresh(new_x);
        let ok = self.first(x);
        values.copy_from_slice(&self.jac);
        ok
    }
    fn eval_h(
        &mut self,
        x: &[f64],
        new_x: bool,
        obj_factor: f64,
        lambda: &[f64],
        _new_lambda: bool,
        values: &mut [f64],
    ) -> bool {
        self.refresh(new_x);
        match self.nlp.eval_second(x, obj_factor, lambda, values) {
            Ok(()) => values.iter().all(|v| v.is_finite()),
            Err(e) => self.fail(e),
        }
    }
}

/// Solves the NLP from `x0`, warm-starting from `warm` multipliers when given.
pub fn solve(
    nlp: &mut Nlp,
    x0: &[f64],
    settings: &SolveSettings,
    warm: Option<&Multipliers>,
    on_iteration: Option<&mut dyn FnMut(&IterationInfo) -> bool>,
) -> Result<SolveReport, SolveError> {
    let _native = crate::symbolic::exclusive();
    let to_i32 = |v: &[usize]| v.iter().map(|&i| i as i32).collect::<Vec<i32>>();
    let structure = ipopt::NlpStructure {
        x_lower: nlp.x_lower.iter().map(|&v| v.max(-1e20)).collect(),
        x_upper: nlp.x_upper.iter().map(|&v| v.min(1e20)).collect(),
        g_lower: nlp.g_lower.iter().map(|&v| v.max(-1e20)).collect(),
        g_upper: nlp.g_upper.iter().map(|&v| v.min(1e20)).collect(),
        jac_rows: to_i32(&nlp.jac_rows),
        jac_cols: to_i32(&nlp.jac_cols),
        hess_rows: to_i32(&nlp.hess_rows),
        hess_cols: to_i32(&nlp.hess_cols),
    };
    let mut solver = ipopt::Ipopt::new(&structure)?;
    // No user scaling: the NLP's nominal magnitudes (`Nlp::x_nominal`) were once handed to
    // IPOPT here, but `nlp_scaling_method: gradient-based` (below) overrides user scaling, so
    // they did nothing (119 iterations with and without them on the 60 mm poppy-seed jump).
    // Made effective (`user-scaling`) they converged to worse optima or not at all on the
    // 30-100 mm sweep from the rest guess (50 mm poppy seeds infeasible, 60 mm 0.0524 against
    // 0.0477), so they stay off.
    solver.set_options(&default_options())?;
    solver.set_options(&settings.options)?;
    if let Some(path) = &settings.log_file {
        solver.open_output_file(path, settings.log_level)?;
    }

    let (n, m) = (nlp.n_variables(), nlp.n_constraints());
    let n_jac = nlp.jac_rows.len();
    let started = Instant::now();
    let mut callbacks = Callbacks {
        nlp,
        objective: 0.0,
        g: vec![0.0; m],
        grad: vec![0.0; n],
        jac: vec![0.0; n_jac],
        value_fresh: false,
        first_fresh: false,
        failed: None,
    };
    kkt::take_counts(); // from zero: what an earlier solve on this thread left
    let result = solver.solve(&mut callbacks, x0, warm, on_iteration)?;
    let kkt_counts = kkt::take_counts();
    let solve_seconds = started.elapsed().as_secs_f64();
    if let Some(e) = callbacks.failed.take() {
        if !result.status.is_success() {
            return Err(e.into());
        }
    }

    let converged = result.status.is_success();
    let nlp = callbacks.nlp;
    let (mut x, mut objective) = (result.x, result.objective);
    if !converged {
        // Keep the least-infeasible iterate when IPOPT ended somewhere worse.
        let final_violation = {
            let mut g = vec![0.0; m];
            nlp.eval_value(&x, &mut g)?;
            nlp.max_violation(&x, &g)
        };
        if let Some(best) = &result.best {
            if best.inf_pr < final_violation {
                x = best.x.clone();
                objective = best.objective;
            }
        }
    }
    let mut g = vec![0.0; m];
    let evaluated = nlp.eval_value(&x, &mut g)?;
    if !converged {
        objective = evaluated;
    }
    let max_violation = nlp.max_violation(&x, &g);
    // A failed solve's best iterate is only near its active set; look wider there.
    let binding = nlp.binding(&g, if converged { 1e-6 } else { 1e-2 });
    let violations = if converged {
        Vec::new()
    } else {
        nlp.violations(&g, 1e-6)
    };
    let mut options: std::collections::BTreeMap<String, OptionValue> = default_options()
        .into_iter()
        .chain(settings.options.iter().cloned())
        .collect();
    options.insert(
        "warm_start_init_point".into(),
        OptionValue::Str(if warm.is_some() { "yes" } else { "no" }.into()),
    );
    Ok(SolveReport {
        status: result.status,
        converged,
        iterations: result.iterations,
        objective,
        x,
        g,
        max_violation,
        violations,
        binding,
        multipliers: result.multipliers,
        history: result.history,
        solve_seconds,
        kkt: (options.get("linear_solver")
            == Some(&OptionValue::Str(ipopt::LOAM_LINEAR_SOLVER.into())))
        .then_some(kkt_counts),
        options,
    })
}
