//! Tests of the IPOPT wrapper (HS071, option errors, warm starts, structure checks).

use std::panic::AssertUnwindSafe;

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
    let r = ip
        .solve(&mut super::probe::ProbeNlp, &[0.5], None, None)
        .unwrap();
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
    fn eval_h(&mut self, _: &[f64], _: bool, _: f64, _: &[f64], _: bool, v: &mut [f64]) -> bool {
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
    fn eval_h(&mut self, _: &[f64], _: bool, _: f64, _: &[f64], _: bool, _: &mut [f64]) -> bool {
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
