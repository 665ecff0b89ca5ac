//! The transcription's exact derivatives (CasADi, assembled element by element) against
//! central finite differences, on a nonlinear two-phase problem with both schemes.

use crate::common;

use common::fd::{
    check_first_derivatives, check_second_derivatives, random_multipliers, random_point, Rng,
};
use loam::scalar::Scalar;
use loam::symbolic::Sx;
use loam::transcription::{
    Bounded, Nlp, Node, Ocp, Phase, Point, PointBounds, PointConstraint, Scheme,
};

const INF: f64 = f64::INFINITY;
const TOLERANCE: f64 = 1e-6;
const POINTS: usize = 3;

/// A pendulum-like swing, then a spring-mass-like phase, with states (q, v, e) and controls
/// (a, b). Everything is nonlinear (sin, cos, exp, ln, sqrt, tanh, powf, fmin, fmax, if_else,
/// products with the free durations), the phases have different dynamics, costs and path
/// constraints, and a point constraint couples two points of different phases.
fn two_phase_problem(nodes: usize, control_continuity: bool) -> Ocp {
    let swing = Phase {
        name: "swing".into(),
        nodes,
        duration: (0.5, 2.0),
        dynamics: Box::new(|x: &[Sx], u: &[Sx]| {
            let (q, v, e) = (&x[0], &x[1], &x[2]);
            let (a, b) = (&u[0], &u[1]);
            vec![
                v.clone(),
                q.sin() * -9.81 - v.clone() * v.abs() * 0.3 + a.clone() * (q.square() * -0.2).exp(),
                a.square() + b.max_f(0.0) * v.tanh() + e.cos() * 0.1,
            ]
        }),
        running_cost: Some(Box::new(|x: &[Sx], u: &[Sx]| {
            let (q, v) = (&x[0], &x[1]);
            u[0].square() + (q.clone() * 0.3).exp() * v.square() * 0.1 + u[1].clone() * q.clone()
        })),
        path: Some(Box::new(|x: &[Sx], u: &[Sx]| {
            let (q, v) = (&x[0], &x[1]);
            let (a, b) = (&u[0], &u[1]);
            vec![
                Bounded::between(
                    "energy",
                    v.square() * 0.5 + (1.0 - q.cos()) * 9.81,
                    -10.0,
                    10.0,
                ),
                Bounded::at_most("grip", a.clone() * q.cos() - b.max_f(-0.5), 2.0),
            ]
        })),
        state_bounds: vec![(-INF, INF); 3],
        control_bounds: vec![(-2.0, 2.0), (-INF, INF)],
        entry: None,
        step: None,
    };
    let spring = Phase {
        name: "spring".into(),
        nodes: nodes + 1,
        duration: (0.5, 2.0),
        dynamics: Box::new(|x: &[Sx], u: &[Sx]| {
            let (q, v, e) = (&x[0], &x[1], &x[2]);
            let (a, b) = (&u[0], &u[1]);
            vec![
                v.clone() * (e.clone() * 0.5).cos(),
                q.clone() * -4.0 - v.clone() * 0.5
                    + b.min_f(1.0) * (q.square() + 1.0).sqrt()
                    + a.clone() / (e.sin() + 2.0),
                (v.square() + 1.0).ln() + (a.square() + 1.0).powf(1.5) * 0.1,
            ]
        }),
        running_cost: Some(Box::new(|x: &[Sx], u: &[Sx]| {
            let (q, e) = (&x[0], &x[2]);
            (u[1].square() + 1.0).sqrt() + (q.clone() - 1.0).square() * e.clone() * 0.5
        })),
        path: Some(Box::new(|x: &[Sx], u: &[Sx]| {
            let (q, v) = (&x[0], &x[1]);
            let bent = Sx::if_else(&q.gt(&Sx::zero()), &q.square(), &(-q.clone()));
            vec![
                Bounded::at_least("clearance", q.clone() + (v.clone() * 3.0).sin() * 0.1, -1.0),
                Bounded::between("bent", bent + u[0].clone() * v.clone(), -3.0, 3.0),
                Bounded::equal(
                    "ratio",
                    u[1].clone() * (q.clone() * 0.5).exp() - v.clone(),
                    0.0,
                ),
            ]
        })),
        state_bounds: vec![(-INF, INF), (-5.0, 5.0), (-INF, INF)],
        control_bounds: vec![(-INF, INF); 2],
        entry: None,
        step: None,
    };
    let point = |phase, node| Point { phase, node };
    Ocp {
        total_duration: None,
        state_names: vec!["q".into(), "v".into(), "e".into()],
        control_names: vec!["a".into(), "b".into()],
        state_nominal: vec![1.0, 2.0, 1.0],
        control_nominal: vec![1.0, 0.5],
        phases: vec![swing, spring],
        control_continuity,
        point_constraints: vec![PointConstraint {
            name: "periodic".into(),
            f: Box::new(|p: &[Vec<Sx>]| {
                let (start, end) = (&p[0], &p[1]);
                vec![
                    Bounded::equal("q", end[0].clone() - start[0].clone(), 0.0),
                    Bounded::equal(
                        "v",
                        end[1].clone() * start[0].cos() + (start[3].clone() * end[4].clone()).sin(),
                        0.0,
                    ),
                    Bounded::at_most("e", (end[2].clone() - start[2].clone()).exp(), 3.0),
                ]
            }),
            instances: vec![
                vec![point(0, Node::First), point(1, Node::Last)],
                vec![point(0, Node::Index(2)), point(1, Node::Index(1))],
            ],
        }],
        point_bounds: vec![PointBounds {
            point: point(0, Node::First),
            state_bounds: vec![Some((0.3, 0.3)), None, Some((0.0, 0.0))],
        }],
    }
}

fn cases() -> Vec<(Scheme, bool)> {
    vec![
        (Scheme::Trapezoidal, false),
        (Scheme::Trapezoidal, true),
        (Scheme::HermiteSimpson, false),
        (Scheme::HermiteSimpson, true),
    ]
}

#[test]
fn first_derivatives_match_finite_differences() {
    let mut rng = Rng::new(20240611);
    for (scheme, continuity) in cases() {
        let mut nlp = Nlp::build(&two_phase_problem(5, continuity), scheme).unwrap();
        println!(
            "{scheme:?}, control continuity {continuity}: {} variables, {} rows, {} Jacobian entries",
            nlp.n_variables(),
            nlp.n_constraints(),
            nlp.jac_rows.len()
        );
        for point in 0..POINTS {
            let x = random_point(&nlp, &mut rng, 1.5);
            let error = check_first_derivatives(&mut nlp, &x);
            assert!(
                error < TOLERANCE,
                "{scheme:?}, continuity {continuity}, point {point}: error {error:.3e}"
            );
        }
    }
}

#[test]
fn second_derivatives_match_finite_differences() {
    let mut rng = Rng::new(7);
    for (scheme, continuity) in cases() {
        let mut nlp = Nlp::build(&two_phase_problem(5, continuity), scheme).unwrap();
        println!(
            "{scheme:?}, control continuity {continuity}: {} Hessian entries",
            nlp.hess_rows.len()
        );
        for point in 0..POINTS {
            let x = random_point(&nlp, &mut rng, 1.5);
            // The objective alone, the constraints alone, then both with random weights.
            let (sigma, lambda) = match point {
                0 => (1.0, vec![0.0; nlp.n_constraints()]),
                1 => (0.0, random_multipliers(&nlp, &mut rng, 1.0)),
                _ => (
                    rng.uniform(0.1, 2.0),
                    random_multipliers(&nlp, &mut rng, 1.0),
                ),
            };
            let error = check_second_derivatives(&mut nlp, &x, sigma, &lambda);
            assert!(
                error < TOLERANCE,
                "{scheme:?}, continuity {continuity}, point {point}: error {error:.3e}"
            );
        }
    }
}

/// A point constraint that reads the same variable twice (`Last` and `Index(nodes - 1)` are
/// one node). The element's local Hessian has an off-diagonal entry (1, 0) that lands on
/// the global diagonal; `Nlp::build` keeps only the local lower triangle, so the global
/// diagonal receives H_loc[1][0] once where the symmetric sum needs it twice
/// (d²/dq² (q·q) = 2, not 1). See src/transcription/nlp.rs, `add_element`.
#[test]
fn aliased_points_in_a_point_constraint() {
    let nodes = 4;
    let mut ocp = two_phase_problem(nodes, false);
    ocp.point_constraints = vec![PointConstraint {
        name: "aliased".into(),
        f: Box::new(|p: &[Vec<Sx>]| {
            vec![Bounded::at_most(
                "product",
                p[0][0].clone() * p[1][0].clone(),
                1.0,
            )]
        }),
        instances: vec![vec![
            Point {
                phase: 0,
                node: Node::Last,
            },
            Point {
                phase: 0,
                node: Node::Index(nodes - 1),
            },
        ]],
    }];
    let mut rng = Rng::new(3);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let mut nlp = Nlp::build(&ocp, scheme).unwrap();
        let x = random_point(&nlp, &mut rng, 1.5);
        assert!(check_first_derivatives(&mut nlp, &x) < TOLERANCE);
        let lambda = random_multipliers(&nlp, &mut rng, 1.0);
        let error = check_second_derivatives(&mut nlp, &x, 1.0, &lambda);
        assert!(error < TOLERANCE, "{scheme:?}: error {error:.3e}");
    }
}
