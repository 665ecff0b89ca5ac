//! Problems with known optima, through the same transcription and solver as the robot.

use loam::solver::{self, SolveSettings};
use loam::symbolic::Sx;
use loam::transcription::{Bounded, Nlp, Node, Ocp, Phase, Point, PointBounds, Scheme};

/// x'' = u on one phase of fixed duration T, from (x0, v0) to (x1, v1), min ½∫u².
fn double_integrator(nodes: usize) -> Ocp {
    let inf = f64::INFINITY;
    Ocp {
        state_names: vec!["x".into(), "v".into()],
        control_names: vec!["u".into()],
        state_nominal: vec![1.0, 1.0],
        control_nominal: vec![1.0],
        phases: vec![Phase {
            name: "move".into(),
            nodes,
            duration: (1.0, 1.0),
            dynamics: Box::new(|x: &[Sx], u: &[Sx]| vec![x[1].clone(), u[0].clone()]),
            running_cost: Some(Box::new(|_x: &[Sx], u: &[Sx]| {
                u[0].clone() * u[0].clone() * 0.5
            })),
            path: None,
            state_bounds: vec![(-inf, inf); 2],
            control_bounds: vec![(-inf, inf)],
        }],
        control_continuity: false,
        point_constraints: vec![],
        point_bounds: vec![
            PointBounds {
                point: Point {
                    phase: 0,
                    node: Node::First,
                },
                state_bounds: vec![Some((0.0, 0.0)), Some((0.0, 0.0))],
            },
            PointBounds {
                point: Point {
                    phase: 0,
                    node: Node::Last,
                },
                state_bounds: vec![Some((1.0, 1.0)), Some((0.0, 0.0))],
            },
        ],
    }
}

#[test]
fn minimum_energy_double_integrator_costs_twelve() {
    // u(t) = 6 - 12 t is optimal; ∫u² = 12, so ½∫u² = 6. Both schemes integrate the
    // piecewise-linear optimum's quadratic cost exactly only in the limit; Hermite-Simpson is
    // exact for this cubic-state problem.
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let ocp = double_integrator(21);
        let mut nlp = Nlp::build(&ocp, scheme).unwrap();
        let x0 = vec![0.0; nlp.n_variables()];
        let report = solver::solve(&mut nlp, &x0, &SolveSettings::default(), None, None).unwrap();
        assert!(report.converged, "{scheme:?}: {:?}", report.status);
        let integral = 2.0 * report.objective;
        println!(
            "{scheme:?}: ∫u² = {integral:.10} in {} iterations",
            report.iterations
        );
        let tol = if scheme == Scheme::HermiteSimpson {
            1e-8
        } else {
            0.2
        };
        assert!(
            (integral - 12.0).abs() < tol,
            "{scheme:?}: ∫u² = {integral}"
        );
    }
}

#[allow(dead_code)]
fn unused(_: Bounded) {}
