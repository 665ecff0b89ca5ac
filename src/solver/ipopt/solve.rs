//! Creating an IPOPT problem and solving it, keeping the least-infeasible iterate.

use std::ffi::c_void;

use super::callbacks::{
    guarded, tramp_eval_f, tramp_eval_g, tramp_eval_grad_f, tramp_eval_h, tramp_eval_jac_g,
    CallbackData,
};
use super::ffi::{
    CreateIpoptProblem, GetIpoptCurrentIterate, IpIndex, IpNumber, IpoptSolve,
    SetIntermediateCallback, UserDataPtr,
};
use super::{
    BestIterate, Ipopt, IpoptError, IpoptStatus, IterationInfo, Multipliers, Nlp, NlpStructure,
    OptionValue, SolveResult,
};

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
