//! Problems with known optima, through the same transcription and solver as the robot.

use std::f64::consts::PI;

use loam::solver::{self, OptionValue, SolveReport, SolveSettings};
use loam::symbolic::Sx;
use loam::transcription::{
    Nlp, Node, Ocp, Phase, PhaseTrajectory, Point, PointBounds, Scheme, Trajectory,
};

const INF: f64 = f64::INFINITY;

/// IPOPT pushed well below the discretisation errors measured here.
fn tight() -> SolveSettings {
    SolveSettings {
        options: vec![
            ("tol".into(), OptionValue::Num(1e-12)),
            ("constr_viol_tol".into(), OptionValue::Num(1e-12)),
        ],
        ..SolveSettings::default()
    }
}

fn solve(nlp: &mut Nlp, x0: &[f64], label: &str) -> SolveReport {
    let report = solver::solve(nlp, x0, &tight(), None, None).unwrap();
    assert!(report.converged, "{label}: {:?}", report.status);
    report
}

/// Fixes the full state at one point.
fn fix_state(phase: usize, node: Node, state: &[f64]) -> PointBounds {
    PointBounds {
        point: Point { phase, node },
        state_bounds: state.iter().map(|&v| Some((v, v))).collect(),
    }
}

/// A single phase of fixed duration T with free state and control, and fixed end states.
fn single_phase(
    nodes: usize,
    duration: f64,
    dynamics: fn(&[Sx], &[Sx]) -> Vec<Sx>,
    cost: fn(&[Sx], &[Sx]) -> Sx,
    start: [f64; 2],
    end: [f64; 2],
) -> Ocp {
    Ocp {
        total_duration: None,
        state_names: vec!["x".into(), "v".into()],
        control_names: vec!["u".into()],
        state_nominal: vec![1.0, 1.0],
        control_nominal: vec![1.0],
        phases: vec![Phase {
            name: "move".into(),
            nodes,
            duration: (duration, duration),
            dynamics: Box::new(dynamics),
            running_cost: Some(Box::new(cost)),
            path: None,
            state_bounds: vec![(-INF, INF); 2],
            control_bounds: vec![(-INF, INF)],
            entry: None,
            step: None,
        }],
        control_continuity: false,
        point_constraints: vec![],
        point_bounds: vec![
            fix_state(0, Node::First, &start),
            fix_state(0, Node::Last, &end),
        ],
    }
}

/// Largest |u - u*(t)| over the interior points (inner nodes and Hermite-Simpson midpoints)
/// and over the two end nodes, separately.
fn control_error(phase: &PhaseTrajectory, optimal: impl Fn(f64) -> f64) -> (f64, f64) {
    let n = phase.controls.len();
    let err = |t: f64, u: &[f64]| (u[0] - optimal(t)).abs();
    let h = phase.duration / (n - 1) as f64;
    let inner = (1..n - 1).map(|k| err(phase.node_time(k), &phase.controls[k]));
    let mids =
        (0..phase.mid_controls.len()).map(|k| err((k as f64 + 0.5) * h, &phase.mid_controls[k]));
    let interior = inner.chain(mids).fold(0.0, f64::max);
    let ends = err(0.0, &phase.controls[0]).max(err(phase.duration, &phase.controls[n - 1]));
    (interior, ends)
}

// ---------------------------------------------------------------------------------------
// 1. Double integrator x'' = u, (0, 0) -> (1, 0) in T = 1, min ∫u².
//
// The optimal control is linear (the costate of v is linear): u = a + b t with ∫u = 0 and
// ∫∫u = 1 gives u* = 6 - 12 t and ∫u*² = 12. The running cost here is ½u², so the NLP's
// objective is 6 and ∫u² is twice it.
// ---------------------------------------------------------------------------------------

fn double_integrator(nodes: usize) -> Ocp {
    single_phase(
        nodes,
        1.0,
        |x, u| vec![x[1].clone(), u[0].clone()],
        |_x, u| u[0].clone() * u[0].clone() * 0.5,
        [0.0, 0.0],
        [1.0, 0.0],
    )
}

fn double_integrator_u(t: f64) -> f64 {
    6.0 - 12.0 * t
}

/// ∫u² and the control errors (interior, end nodes) for `intervals` intervals.
fn solve_double_integrator(scheme: Scheme, intervals: usize) -> (f64, (f64, f64)) {
    let mut nlp = Nlp::build(&double_integrator(intervals + 1), scheme).unwrap();
    let x0 = vec![0.0; nlp.n_variables()];
    let report = solve(&mut nlp, &x0, &format!("{scheme:?} N={intervals}"));
    let phase = &nlp.unpack(&report.x).phases[0];
    (
        2.0 * report.objective,
        control_error(phase, double_integrator_u),
    )
}

#[test]
fn double_integrator_hermite_simpson_is_exact() {
    // The optimum has cubic x, quadratic v and linear u: the Hermite interpolant and Simpson's
    // rule are exact on it, so it is feasible for the NLP with the true cost, at any N.
    for intervals in [5, 10, 20] {
        let (integral, (inner, ends)) = solve_double_integrator(Scheme::HermiteSimpson, intervals);
        let u_err = inner.max(ends);
        println!("HS N={intervals}: ∫u² = {integral:.12}, max |u - (6 - 12t)| = {u_err:.2e}");
        assert!(
            (integral - 12.0).abs() < 1e-8,
            "N={intervals}: ∫u² = {integral}"
        );
        assert!(u_err < 1e-6, "N={intervals}: control error {u_err}");
    }
}

#[test]
fn double_integrator_trapezoidal_converges_at_second_order() {
    // Measured (N = 10, 20, 40, 80): ∫u² - 12 = 0.461, 0.117, 0.0295, 0.00743, about 46 h²
    // (24 h² from the trapezoidal quadrature of u² and about as much from the x defect
    // under-integrating the quadratic v). The controls at the inner nodes converge at second
    // order too; the two end controls only at first order (0.39, 0.24, 0.14, 0.071), the
    // familiar trapezoidal end-point artefact.
    let mut runs = Vec::new();
    for intervals in [10, 20, 40, 80] {
        let (integral, (inner, ends)) = solve_double_integrator(Scheme::Trapezoidal, intervals);
        let error = integral - 12.0;
        println!(
            "trapezoidal N={intervals}: ∫u² = {integral:.12}, error {error:.3e}, \
             |u - (6 - 12t)| inner {inner:.3e}, ends {ends:.3e}"
        );
        assert!(
            error > 0.0,
            "N={intervals}: below the continuous optimum: {integral}"
        );
        runs.push((error, inner, ends));
    }
    for w in runs.windows(2) {
        let ratios = (w[0].0 / w[1].0, w[0].1 / w[1].1, w[0].2 / w[1].2);
        println!(
            "error ratios: cost {:.3}, inner controls {:.3}, end controls {:.3}",
            ratios.0, ratios.1, ratios.2
        );
        assert!(
            (3.0..5.0).contains(&ratios.0),
            "cost error ratio {ratios:?}"
        );
        assert!(
            (3.0..5.0).contains(&ratios.1),
            "inner control ratio {ratios:?}"
        );
        assert!(
            (1.5..2.5).contains(&ratios.2),
            "end control ratio {ratios:?}"
        );
    }
    assert!(runs[3].0 < 1e-2 && runs[3].1 < 1e-2, "N=80: {runs:?}");
}

// ---------------------------------------------------------------------------------------
// 2. Oscillator x'' = -x + u, (x, v) = (1, 0) -> (0, 0) in T = π/2, min ∫u².
//
// With z = (x, v): ż = A z + B u, A = [[0, 1], [-1, 0]], B = (0, 1). The minimum of ∫₀ᵀu²
// taking z0 to zT is dᵀ W(T)⁻¹ d with d = zT - e^{AT} z0 and the controllability Gramian
// W(T) = ∫₀ᵀ e^{A(T-s)} B Bᵀ e^{Aᵀ(T-s)} ds, attained by u*(t) = Bᵀ e^{Aᵀ(T-t)} W⁻¹ d.
//
// A generates rotations: e^{At} = [[cos t, sin t], [-sin t, cos t]], so with τ = T - s,
// e^{Aτ} B = (sin τ, cos τ) and
//   W(T) = ∫₀ᵀ [[sin²τ, sin τ cos τ], [sin τ cos τ, cos²τ]] dτ
//        = [[T/2 - sin 2T / 4, sin²T / 2], [sin²T / 2, T/2 + sin 2T / 4]].
// At T = π/2: W = [[π/4, 1/2], [1/2, π/4]], det W = (π² - 4)/16,
//   W⁻¹ = 16/(π² - 4) [[π/4, -1/2], [-1/2, π/4]],
// and d = -e^{AT} (1, 0) = -(cos T, -sin T) = (0, 1). Hence
//   J* = dᵀ W⁻¹ d = (π/4) · 16/(π² - 4) = 4π/(π² - 4) ≈ 2.14097,
//   u*(t) = 16/(π² - 4) · (π/4 cos(T - t) - ½ sin(T - t)).
// ---------------------------------------------------------------------------------------

const OSC_T: f64 = PI / 2.0;

/// The Gramian's closed form at any T, applied to d = -e^{AT} z0 with z0 = (1, 0).
fn oscillator_optimum() -> (f64, [f64; 2]) {
    let t = OSC_T;
    let w = [
        [t / 2.0 - (2.0 * t).sin() / 4.0, t.sin().powi(2) / 2.0],
        [t.sin().powi(2) / 2.0, t / 2.0 + (2.0 * t).sin() / 4.0],
    ];
    let d = [-t.cos(), t.sin()];
    let det = w[0][0] * w[1][1] - w[0][1] * w[1][0];
    let p = [
        (w[1][1] * d[0] - w[0][1] * d[1]) / det,
        (-w[1][0] * d[0] + w[0][0] * d[1]) / det,
    ];
    (d[0] * p[0] + d[1] * p[1], p)
}

fn oscillator_u(t: f64) -> f64 {
    // Bᵀ e^{Aᵀτ} = (sin τ, cos τ).
    let p = oscillator_optimum().1;
    let tau = OSC_T - t;
    tau.sin() * p[0] + tau.cos() * p[1]
}

fn oscillator(nodes: usize) -> Ocp {
    single_phase(
        nodes,
        OSC_T,
        |x, u| vec![x[1].clone(), u[0].clone() - x[0].clone()],
        |_x, u| u[0].clone() * u[0].clone(),
        [1.0, 0.0],
        [0.0, 0.0],
    )
}

#[test]
fn oscillator_matches_the_gramian_optimum_at_each_schemes_order() {
    let (optimum, _) = oscillator_optimum();
    let closed_form = 4.0 * PI / (PI * PI - 4.0);
    println!("Gramian optimum dᵀW⁻¹d = {optimum:.15} (4π/(π²-4) = {closed_form:.15})");
    assert!((optimum - closed_form).abs() < 1e-14);

    // Measured errors: trapezoidal (N = 10, 20, 40, 80) 8.44e-2, 2.10e-2, 5.26e-3, 1.32e-3
    // (ratios 4.02, 3.99, 3.99); Hermite-Simpson (N = 5, 10, 20, 40) 3.72e-4, 2.32e-5,
    // 1.45e-6, 9.06e-8 (ratios 16.02, 16.01, 16.00), all far above IPOPT's 1e-12.
    for (scheme, intervals, ratios, finest) in [
        (Scheme::Trapezoidal, [10, 20, 40, 80], 3.0..5.5, 2e-3),
        (Scheme::HermiteSimpson, [5, 10, 20, 40], 12.0..20.0, 1e-6),
    ] {
        let mut errors = Vec::new();
        let mut control_errors = Vec::new();
        for n in intervals {
            let mut nlp = Nlp::build(&oscillator(n + 1), scheme).unwrap();
            let x0 = vec![0.0; nlp.n_variables()];
            let report = solve(&mut nlp, &x0, &format!("{scheme:?} N={n}"));
            let error = report.objective - optimum;
            let (inner, ends) = control_error(&nlp.unpack(&report.x).phases[0], oscillator_u);
            println!(
                "{scheme:?} N={n}: ∫u² = {:.12}, error {error:.3e}, \
                 |u - u*| inner {inner:.3e}, ends {ends:.3e}",
                report.objective
            );
            assert!(error > 0.0, "{scheme:?} N={n}: below the optimum");
            errors.push(error);
            control_errors.push(inner.max(ends));
        }
        for w in errors.windows(2) {
            let ratio = w[0] / w[1];
            println!("{scheme:?}: error ratio {ratio:.3}");
            assert!(
                ratios.contains(&ratio),
                "{scheme:?}: ratio {ratio}, {errors:?}"
            );
        }
        assert!(errors[3] < finest, "{scheme:?}: {errors:?}");
        assert!(
            control_errors.windows(2).all(|w| w[1] < 0.7 * w[0]),
            "{scheme:?}: controls do not converge: {control_errors:?}"
        );
        assert!(control_errors[3] < 0.05, "{control_errors:?}");
    }
}

// ---------------------------------------------------------------------------------------
// 3. Accelerate, coast, brake: three phases of x'' = u with u fixed to +1, 0 and -1 by the
// phases' control bounds, free durations, rest-to-rest from x = 0 to x = 1, minimising
// time plus fuel, ∫(1 + c u²) dt = T1 + T2 + T3 + c (T1 + T3).
//
// The phase links carry (x, v) across the switches. v rises at rate 1 for T1 and must fall
// back to 0 at rate 1, so T3 = T1 = τ; the coast speed is τ and the distance τ² + τ T2 = 1, so T2 = 1/τ - τ and
// the cost is (1 + 2c) τ + 1/τ, minimal at τ = 1/√(1 + 2c) with cost 2√(1 + 2c). For
// c = 3/2: T1 = T3 = 1/2, T2 = 3/2, cost 4. Every piece is quadratic in time with
// constant u, so both schemes are exact.
// ---------------------------------------------------------------------------------------

const FUEL: f64 = 1.5;

fn accelerate_coast_brake(nodes: usize) -> Ocp {
    let phase = |name: &str, u: f64| Phase {
        name: name.into(),
        nodes,
        duration: (0.05, 5.0),
        dynamics: Box::new(|x: &[Sx], u: &[Sx]| vec![x[1].clone(), u[0].clone()]),
        running_cost: Some(Box::new(|_x: &[Sx], u: &[Sx]| {
            u[0].clone() * u[0].clone() * FUEL + 1.0
        })),
        path: None,
        state_bounds: vec![(-INF, INF); 2],
        control_bounds: vec![(u, u)],
        entry: None,
        step: None,
    };
    Ocp {
        total_duration: None,
        state_names: vec!["x".into(), "v".into()],
        control_names: vec!["u".into()],
        state_nominal: vec![1.0, 1.0],
        control_nominal: vec![1.0],
        phases: vec![
            phase("accelerate", 1.0),
            phase("coast", 0.0),
            phase("brake", -1.0),
        ],
        control_continuity: false,
        point_constraints: vec![],
        point_bounds: vec![
            fix_state(0, Node::First, &[0.0, 0.0]),
            fix_state(2, Node::Last, &[1.0, 0.0]),
        ],
    }
}

#[test]
fn accelerate_coast_brake_links_phases_and_finds_the_durations() {
    let tau = 1.0 / (1.0 + 2.0 * FUEL).sqrt();
    let expected_durations = [tau, 1.0 / tau - tau, tau];
    let expected_cost = 2.0 * (1.0 + 2.0 * FUEL).sqrt();
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let nodes = 6;
        let mut nlp = Nlp::build(&accelerate_coast_brake(nodes), scheme).unwrap();
        // A deliberately poor guess: one second per phase, x creeping from 0 to 1, u wrong.
        let guess = Trajectory {
            phases: (0..3)
                .map(|p| PhaseTrajectory {
                    name: String::new(),
                    duration: 1.0,
                    states: (0..nodes)
                        .map(|k| vec![(p * (nodes - 1) + k) as f64 / (3 * nodes - 3) as f64, 0.3])
                        .collect(),
                    controls: vec![vec![0.0]; nodes],
                    mid_states: vec![],
                    mid_controls: vec![],
                })
                .collect(),
        };
        let x0 = nlp.pack(&guess);
        let report = solve(&mut nlp, &x0, &format!("{scheme:?}"));
        let trajectory = nlp.unpack(&report.x);
        let durations: Vec<f64> = trajectory.phases.iter().map(|p| p.duration).collect();
        println!(
            "{scheme:?}: cost {:.12}, durations {durations:?}",
            report.objective
        );
        assert!(
            (report.objective - expected_cost).abs() < 1e-8,
            "{scheme:?}: cost {}",
            report.objective
        );
        for (p, (got, want)) in durations.iter().zip(&expected_durations).enumerate() {
            assert!(
                (got - want).abs() < 1e-6,
                "{scheme:?}: T{p} = {got}, want {want}"
            );
        }
        // Phase links: the last state of each phase is the first of the next.
        for pair in trajectory.phases.windows(2) {
            let (end, start) = (pair[0].states.last().unwrap(), &pair[1].states[0]);
            for i in 0..2 {
                assert!(
                    (end[i] - start[i]).abs() < 1e-9,
                    "{scheme:?}: {} -> {}: {end:?} vs {start:?}",
                    pair[0].name,
                    pair[1].name
                );
            }
        }
        // The switches happen where the analysis says: v = τ at both, x = τ²/2 and 1 - τ²/2.
        let first_switch = &trajectory.phases[1].states[0];
        let second_switch = &trajectory.phases[2].states[0];
        assert!(
            (first_switch[0] - tau * tau / 2.0).abs() < 1e-6,
            "{first_switch:?}"
        );
        assert!((first_switch[1] - tau).abs() < 1e-6, "{first_switch:?}");
        assert!((second_switch[0] - (1.0 - tau * tau / 2.0)).abs() < 1e-6);
        assert!((second_switch[1] - tau).abs() < 1e-6, "{second_switch:?}");
    }
}

/// `task.objective: time` on a robot file: a carriage of mass m on a vertical prismatic joint
/// of a fixed frame, its force |F| ≤ F_max, moved D up from rest to rest in least time. The
/// optimum is bang-bang: full force up, accelerating at a = (F_max − m g)/m, then full force
/// down, braking at b = (F_max + m g)/m; T = t₁ + t₂ with t₁ = √(2 D b / (a (a + b))), t₂ = a t₁ / b.
/// The plan's duration is T to the mesh's resolution of the switch (0.5 %).
#[test]
fn a_minimum_time_lift_is_bang_bang_at_the_analytic_time() {
    use crate::common::run::loam;
    use crate::common::temp_dir::TempDir;
    let dir = TempDir::new("minimum_time_lift");
    let (m, f_max, d, g): (f64, f64, f64, f64) = (2.0, 40.0, 0.2, 9.81);
    let robot = format!(
        "name: lift\nlocked: [x, z, pitch]\nbodies:\n  - {{name: frame, mass: 1.0, inertia: 0.01}}\n  \
         - name: carriage\n    mass: {m}\n    inertia: 0.01\n    joint: {{name: lift, parent: frame, \
         type: prismatic, axis: [0.0, 1.0], position: [-1.0, 1.0], nominal: 0.1}}\nactuators:\n  \
         - {{name: push, joint: lift, kind: force, limit: [-{f_max}, {f_max}]}}\ncontacts:\n  \
         - {{name: base, body: frame, point: [0.0, 0.0], shape: point}}\nstanding: {{lift: 0.0}}\n"
    );
    std::fs::write(dir.path().join("lift.yaml"), robot).unwrap();
    let problem = format!(
        "robot: {{file: lift.yaml}}\nterrain: {{model: rigid}}\nschedule:\n  \
         - {{contacts: [base], nodes: 41, duration: [0.05, 2.0]}}\ntask:\n  \
         end: {{at_rest: true, change: {{lift: {d}}}}}\n  objective: time\n"
    );
    std::fs::write(dir.path().join("lift_problem.yaml"), problem).unwrap();
    let out = loam(
        dir.path(),
        &["solve", "lift_problem.yaml", "--out", "run", "-q"],
    );
    assert_eq!(out.code(), 0, "{}", out.dump());
    let text = std::fs::read_to_string(dir.path().join("run/solution.json")).unwrap();
    let solution: serde_json::Value = serde_json::from_str(&text).unwrap();
    let duration = solution["key_figures"]["duration_s"].as_f64().unwrap();
    let (a, b) = ((f_max - m * g) / m, (f_max + m * g) / m);
    let t1 = (2.0 * d * b / (a * (a + b))).sqrt();
    let analytic = t1 + a * t1 / b;
    assert!(
        (duration - analytic).abs() < 5e-3 * analytic,
        "duration {duration} s, analytic {analytic} s"
    );
    // The objective is the duration, plus the small effort term.
    let objective = solution["objective"].as_f64().unwrap();
    assert!(objective >= duration && objective < duration * 1.001);
    // Bang-bang: the force sits at +F_max early and at −F_max late.
    let (header, rows) = crate::common::csv::read_csv(&dir.path().join("run/trajectory.csv"));
    let push = crate::common::csv::column(&header, &rows, "push");
    assert!((push[2] - f_max).abs() < 1e-3 * f_max, "{push:?}");
    assert!(
        (push[push.len() - 3] + f_max).abs() < 1e-3 * f_max,
        "{push:?}"
    );
}
