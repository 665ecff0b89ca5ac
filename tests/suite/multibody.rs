//! The planar multibody module against independent truths: finite differences of its own
//! kinematics and energies (Jacobians, J̇ v, the kinetic energy's Hessian, Lagrange's
//! equations), conservation of energy and the free-fall parabola of the centre of mass in
//! simulated flight, and validation messages. Each check runs on the three presets at seeded
//! random states.

use loam::model::multibody::{Body, Joint, JointKind, Multibody, MultibodyError};
use loam::model::planar::{MonopodParams, PlanarFootParams, PlanarRobot, QuadrupedParams};

const G: f64 = 9.81;

/// A small deterministic generator (64-bit LCG, top bits), so that failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let unit = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

fn robots() -> Vec<PlanarRobot> {
    vec![
        PlanarFootParams::default().build(G),
        MonopodParams::default().build(G),
        QuadrupedParams::default().build(G),
    ]
}

/// A random state near the standing posture: positions ±0.2 m, angles ±0.6 rad, velocities
/// ±1 in SI units.
fn random_state(robot: &PlanarRobot, rng: &mut Lcg) -> (Vec<f64>, Vec<f64>) {
    let q = robot
        .standing
        .iter()
        .zip(&robot.coordinates)
        .map(|(&q0, c)| {
            let spread = if c.unit == "rad" { 0.6 } else { 0.2 };
            q0 + rng.uniform(-spread, spread)
        })
        .collect();
    let v = (0..robot.n_q()).map(|_| rng.uniform(-1.0, 1.0)).collect();
    (q, v)
}

fn axpy(a: f64, x: &[f64], y: &[f64]) -> Vec<f64> {
    x.iter().zip(y).map(|(xi, yi)| a * xi + yi).collect()
}

fn unit(n: usize, i: usize, scale: f64) -> Vec<f64> {
    let mut e = vec![0.0; n];
    e[i] = scale;
    e
}

fn max_abs(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Every body's COM and one other random point, for the point-wise checks.
fn points(robot: &PlanarRobot, rng: &mut Lcg) -> Vec<(usize, [f64; 2])> {
    let mut points = Vec::new();
    for (b, body) in robot.body.bodies.iter().enumerate() {
        points.push((b, body.com));
        points.push((b, [rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3)]));
    }
    points
}

#[test]
fn presets_validate_and_stand_on_the_ground() {
    for robot in robots() {
        robot.validate().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(robot.standing.len(), robot.n_q());
        for c in 0..robot.contacts.len() {
            let [_, z] = robot.contact_point(&robot.standing, c);
            assert!(
                z.abs() < 1e-12,
                "{}: contact {} at z = {z}",
                robot.name,
                robot.contacts[c].name
            );
        }
    }
    let quadruped = QuadrupedParams::default().build(G);
    assert_eq!(quadruped.body.bodies.len(), 13);
    assert_eq!(quadruped.inputs.len(), 12);
    for leg in ["front_left", "front_right", "hind_left", "hind_right"] {
        assert!(quadruped.contact(leg).is_some(), "{leg}");
    }
    // Torso level in the standing posture; feet right below the hips.
    assert_eq!(quadruped.standing[2], 0.0);
    let frames = quadruped.body.frames(&quadruped.standing);
    for c in &quadruped.contacts {
        let [x, _] =
            quadruped.contact_point(&quadruped.standing, quadruped.contact(&c.name).unwrap());
        let hip = &frames[c.body - 2].position;
        assert!((x - hip[0]).abs() < 1e-12, "{}", c.name);
    }
    let foot = PlanarFootParams::default().build(G);
    assert_eq!(foot.contacts[0].half_width, 0.05);
    assert!(MonopodParams::default().build(G).contact("foot").is_some());
}

#[test]
fn mass_matrix_is_spd_and_the_hessian_of_kinetic_energy() {
    let mut rng = Lcg(1);
    for robot in robots() {
        for _ in 0..3 {
            let (q, v) = random_state(&robot, &mut rng);
            let n = robot.n_q();
            let m = robot.body.mass_matrix_f64(&q);
            let scale = max_abs(m.iter().copied());
            for i in 0..n {
                for j in 0..n {
                    assert!(
                        (m[(i, j)] - m[(j, i)]).abs() <= 1e-14 * scale,
                        "{}: not symmetric",
                        robot.name
                    );
                }
            }
            let eigen = m.clone().symmetric_eigen();
            assert!(
                eigen.eigenvalues.min() > 0.0,
                "{}: eigenvalues {}",
                robot.name,
                eigen.eigenvalues
            );
            // T is quadratic in v: a central second difference with a unit step is exact up to
            // rounding.
            let t = |v: &[f64]| robot.body.kinetic_energy(&q, v);
            let h = 1.0;
            for i in 0..n {
                for j in 0..n {
                    let (ei, ej) = (unit(n, i, h), unit(n, j, h));
                    let pp = axpy(1.0, &ei, &axpy(1.0, &ej, &v));
                    let pm = axpy(1.0, &ei, &axpy(-1.0, &ej, &v));
                    let mp = axpy(-1.0, &ei, &axpy(1.0, &ej, &v));
                    let mm = axpy(-1.0, &ei, &axpy(-1.0, &ej, &v));
                    let hess = (t(&pp) - t(&pm) - t(&mp) + t(&mm)) / (4.0 * h * h);
                    assert!(
                        (hess - m[(i, j)]).abs() <= 1e-6 * scale,
                        "{}: M[{i}][{j}] = {} but ∂²T/∂v∂v = {hess}",
                        robot.name,
                        m[(i, j)]
                    );
                }
            }
            // And T = ½ vᵀ M v.
            let quad = 0.5
                * (v.iter().enumerate())
                    .map(|(i, vi)| vi * (0..n).map(|j| m[(i, j)] * v[j]).sum::<f64>())
                    .sum::<f64>();
            assert!((quad - t(&v)).abs() <= 1e-12 * quad.abs().max(1.0));
        }
    }
}

#[test]
fn point_jacobian_and_bias_acceleration_match_finite_differences() {
    let mut rng = Lcg(2);
    for robot in robots() {
        let body = &robot.body;
        let n = robot.n_q();
        for _ in 0..3 {
            let (q, v) = random_state(&robot, &mut rng);
            for (b, local) in points(&robot, &mut rng) {
                let jac = body.point_jacobian(&q, b, local);
                let h = 1e-6;
                #[allow(clippy::needless_range_loop)]
                for k in 0..n {
                    let plus = body.point(&axpy(1.0, &unit(n, k, h), &q), b, local);
                    let minus = body.point(&axpy(-1.0, &unit(n, k, h), &q), b, local);
                    for r in 0..2 {
                        let fd = (plus[r] - minus[r]) / (2.0 * h);
                        assert!(
                            (fd - jac[r][k]).abs() < 1e-8,
                            "{} body {b}: J[{r}][{k}] = {} vs {fd}",
                            robot.name,
                            jac[r][k]
                        );
                    }
                }
                // Velocity is J v.
                let vel = body.point_velocity(&q, &v, b, local);
                for r in 0..2 {
                    let jv: f64 = (0..n).map(|k| jac[r][k] * v[k]).sum();
                    assert!(
                        (vel[r] - jv).abs() < 1e-12,
                        "{}: point velocity",
                        robot.name
                    );
                }
                // J̇ v = d/dt (J(q + t v) v) at t = 0.
                let bias = body.point_bias_acceleration(&q, &v, b, local);
                let dt = 1e-5;
                let ahead = body.point_velocity(&axpy(dt, &v, &q), &v, b, local);
                let behind = body.point_velocity(&axpy(-dt, &v, &q), &v, b, local);
                for r in 0..2 {
                    let fd = (ahead[r] - behind[r]) / (2.0 * dt);
                    assert!(
                        (fd - bias[r]).abs() < 1e-7 * (1.0 + fd.abs()),
                        "{} body {b}: J̇v[{r}] = {} vs {fd}",
                        robot.name,
                        bias[r]
                    );
                }
            }
        }
    }
}

#[test]
fn bias_forces_satisfy_lagranges_equations() {
    let mut rng = Lcg(3);
    for robot in robots() {
        let body = &robot.body;
        let n = robot.n_q();
        for _ in 0..3 {
            let (q, v) = random_state(&robot, &mut rng);
            // ∂T/∂v_i, exact for a quadratic with a unit step.
            let momentum = |q: &[f64], i: usize| {
                let e = unit(n, i, 1.0);
                (body.kinetic_energy(q, &axpy(1.0, &e, &v))
                    - body.kinetic_energy(q, &axpy(-1.0, &e, &v)))
                    / 2.0
            };
            let h = body.bias_forces(&q, &v);
            let scale = max_abs(h.iter().copied()) + body.total_mass() * G;
            for (i, &hi) in h.iter().enumerate() {
                let dt = 1e-4;
                let dp_dt =
                    (momentum(&axpy(dt, &v, &q), i) - momentum(&axpy(-dt, &v, &q), i)) / (2.0 * dt);
                let dq = 1e-6;
                let qp = axpy(1.0, &unit(n, i, dq), &q);
                let qm = axpy(-1.0, &unit(n, i, dq), &q);
                let dt_dq =
                    (body.kinetic_energy(&qp, &v) - body.kinetic_energy(&qm, &v)) / (2.0 * dq);
                let dv_dq = (body.potential_energy(&qp) - body.potential_energy(&qm)) / (2.0 * dq);
                let lagrange = dp_dt - dt_dq + dv_dq;
                assert!(
                    (lagrange - hi).abs() <= 1e-6 * scale,
                    "{}: h[{i}] = {hi} but Lagrange gives {lagrange}",
                    robot.name,
                );
            }
        }
    }
}

/// Classic fourth-order Runge–Kutta on (q, v) under the robot's passive forces (no inputs,
/// no contacts), with the springs' damping removed; returns the states at every step.
fn simulate_flight(
    robot: &PlanarRobot,
    q: &[f64],
    v: &[f64],
    dt: f64,
    steps: usize,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    let n = robot.n_q();
    let u = vec![0.0; robot.inputs.len()];
    let rate = |x: &[f64]| -> Vec<f64> {
        let (q, v) = x.split_at(n);
        let force = robot.generalized_forces(q, v, &u);
        let a = robot.body.forward_dynamics_f64(q, v, &force);
        v.iter().copied().chain(a.iter().copied()).collect()
    };
    let mut x: Vec<f64> = q.iter().chain(v).copied().collect();
    let mut out = vec![(q.to_vec(), v.to_vec())];
    for _ in 0..steps {
        let k1 = rate(&x);
        let k2 = rate(&axpy(dt / 2.0, &k1, &x));
        let k3 = rate(&axpy(dt / 2.0, &k2, &x));
        let k4 = rate(&axpy(dt, &k3, &x));
        for i in 0..x.len() {
            x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
        out.push((x[..n].to_vec(), x[n..].to_vec()));
    }
    out
}

fn undamped(mut robot: PlanarRobot) -> PlanarRobot {
    for spring in &mut robot.springs {
        spring.damping = 0.0;
    }
    robot
}

#[test]
fn flight_conserves_energy_and_the_centre_of_mass_falls_on_a_parabola() {
    let mut rng = Lcg(4);
    for robot in robots().into_iter().map(undamped) {
        let (q0, v0) = random_state(&robot, &mut rng);
        let body = &robot.body;
        let energy = |q: &[f64], v: &[f64]| {
            body.kinetic_energy(q, v) + body.potential_energy(q) + robot.spring_energy(q)
        };
        let e0 = energy(&q0, &v0);
        // The COM's initial velocity, from the bodies' COM velocities.
        let mut com_velocity = [0.0; 2];
        for (b, part) in body.bodies.iter().enumerate() {
            let vel = body.point_velocity(&q0, &v0, b, part.com);
            com_velocity[0] += part.mass * vel[0] / body.total_mass();
            com_velocity[1] += part.mass * vel[1] / body.total_mass();
        }
        let com0 = body.centre_of_mass(&q0);
        let dt = 5e-5;
        let steps = 10_000; // 0.5 s
        let trajectory = simulate_flight(&robot, &q0, &v0, dt, steps);
        // Relative to the energy's size: the kinetic plus |potential| at the start.
        let e_scale = body.kinetic_energy(&q0, &v0)
            + body.potential_energy(&q0).abs()
            + robot.spring_energy(&q0);
        let mut worst_energy: f64 = 0.0;
        let mut worst_com: f64 = 0.0;
        for (k, (q, v)) in trajectory.iter().enumerate() {
            worst_energy = worst_energy.max((energy(q, v) - e0).abs() / e_scale);
            let t = k as f64 * dt;
            let com = body.centre_of_mass(q);
            let expected = [
                com0[0] + com_velocity[0] * t,
                com0[1] + com_velocity[1] * t - 0.5 * G * t * t,
            ];
            worst_com = worst_com
                .max((com[0] - expected[0]).abs())
                .max((com[1] - expected[1]).abs());
        }
        eprintln!(
            "{}: energy drift {worst_energy:.2e} (relative), COM error {worst_com:.2e} m",
            robot.name
        );
        assert!(
            worst_energy < 1e-9,
            "{}: energy drift {worst_energy:e}",
            robot.name
        );
        assert!(
            worst_com < 1e-9,
            "{}: COM off the parabola by {worst_com:e} m",
            robot.name
        );
    }
}

#[test]
fn forward_dynamics_solves_the_equations_of_motion() {
    let mut rng = Lcg(5);
    for robot in robots() {
        let (q, v) = random_state(&robot, &mut rng);
        let u: Vec<f64> = robot
            .inputs
            .iter()
            .map(|i| rng.uniform(i.limit.0, i.limit.1))
            .collect();
        let force = robot.generalized_forces(&q, &v, &u);
        let a = robot.body.forward_dynamics_f64(&q, &v, &force);
        let m = robot.body.mass_matrix_f64(&q);
        let h = robot.body.bias_forces(&q, &v);
        let residual = &m * &a;
        for i in 0..robot.n_q() {
            assert!(
                (residual[i] + h[i] - force[i]).abs() < 1e-9 * (1.0 + force[i].abs()),
                "{}",
                robot.name
            );
        }
    }
}

#[test]
fn generalized_forces_select_inputs_and_add_springs() {
    let monopod = MonopodParams::default();
    let robot = monopod.build(G);
    let q = [0.1, 0.6, 0.2, -0.3, 0.45];
    let v = [0.0, 0.0, 0.0, 0.5, -0.2];
    let f = robot.generalized_forces(&q, &v, &[7.0, 30.0]);
    assert_eq!(&f[..3], &[0.0, 0.0, 0.0]);
    assert_eq!(f[3], 7.0);
    let spring =
        -monopod.leg_stiffness * (0.45 - monopod.leg_rest_length) - monopod.leg_damping * -0.2;
    assert!((f[4] - (30.0 + spring)).abs() < 1e-12);
}

#[test]
fn wrench_maps_by_virtual_work_and_the_foot_inputs_are_the_body_wrench() {
    let mut rng = Lcg(6);
    for robot in robots() {
        let body = &robot.body;
        let n = robot.n_q();
        let (q, _) = random_state(&robot, &mut rng);
        let dq: Vec<f64> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
        for (b, local) in points(&robot, &mut rng) {
            let wrench = [
                rng.uniform(-5.0, 5.0),
                rng.uniform(-5.0, 5.0),
                rng.uniform(-5.0, 5.0),
            ];
            let g = body.wrench_to_generalized(&q, b, local, &wrench);
            // Qᵀ δq = F · δr + τ δθ.
            let h = 1e-6;
            let plus = body.point(&axpy(h, &dq, &q), b, local);
            let minus = body.point(&axpy(-h, &dq, &q), b, local);
            let angle = |q: &[f64]| body.frames(q)[b].angle;
            let dtheta = (angle(&axpy(h, &dq, &q)) - angle(&axpy(-h, &dq, &q))) / (2.0 * h);
            let work = wrench[0] * (plus[0] - minus[0]) / (2.0 * h)
                + wrench[1] * (plus[1] - minus[1]) / (2.0 * h)
                + wrench[2] * dtheta;
            let power: f64 = g.iter().zip(&dq).map(|(a, b)| a * b).sum();
            assert!(
                (work - power).abs() < 1e-7,
                "{} body {b}: {work} vs {power}",
                robot.name
            );
        }
    }
    let foot = PlanarFootParams::default().build(G);
    let q = [0.3, 0.2, 0.4];
    let wrench = [3.0, -4.0, 0.5];
    let com = foot.body.bodies[0].com;
    let from_wrench = foot.body.wrench_to_generalized(&q, 0, com, &wrench);
    let from_inputs = foot.generalized_forces(&q, &[0.0; 3], &wrench);
    for (a, b) in from_wrench.iter().zip(&from_inputs) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn validate_names_the_body_at_fault() {
    let robot = QuadrupedParams {
        shank_mass: 0.0,
        ..Default::default()
    }
    .build(G);
    let error = robot.body.validate().unwrap_err();
    assert_eq!(
        error.to_string(),
        "body `shank_front_left`: mass must be > 0 kg, got 0"
    );
    assert!(robot
        .validate()
        .unwrap_err()
        .to_string()
        .contains("shank_front_left"));

    let robot = MonopodParams {
        leg_inertia: f64::NAN,
        ..Default::default()
    }
    .build(G);
    assert!(robot
        .body
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("body `leg`: inertia"));

    let bad_parent = Multibody {
        gravity: G,
        guide_angle: 0.0,
        bodies: vec![
            Body {
                name: "base".into(),
                mass: 1.0,
                inertia: 0.1,
                com: [0.0; 2],
                joint: None,
            },
            Body {
                name: "arm".into(),
                mass: 1.0,
                inertia: 0.1,
                com: [0.0; 2],
                joint: Some(Joint {
                    kind: JointKind::Revolute,
                    parent: 1,
                    origin: [0.0; 2],
                }),
            },
        ],
    };
    match bad_parent.validate() {
        Err(MultibodyError::Body { body, .. }) => assert_eq!(body, "arm"),
        other => panic!("{other:?}"),
    }
    let mut bad_axis = bad_parent.clone();
    bad_axis.bodies[1].joint = Some(Joint {
        kind: JointKind::Prismatic { axis: [1.0, 1.0] },
        parent: 0,
        origin: [0.0; 2],
    });
    assert!(bad_axis
        .validate()
        .unwrap_err()
        .to_string()
        .contains("unit vector"));
}

/// A pendulum hanging from a base far heavier than it: its small-swing period approaches
/// 2π √((I + m l²) / (m g l)), an analytic truth outside the module's own energies.
#[test]
fn compound_pendulum_on_a_heavy_base_swings_at_its_period() {
    let (m, l, i) = (1.0, 0.5, 0.01);
    let body = Multibody {
        gravity: G,
        guide_angle: 0.0,
        bodies: vec![
            Body {
                name: "base".into(),
                mass: 1e9,
                inertia: 1e9,
                com: [0.0; 2],
                joint: None,
            },
            Body {
                name: "bob".into(),
                mass: m,
                inertia: i,
                com: [0.0, -l],
                joint: Some(Joint {
                    kind: JointKind::Revolute,
                    parent: 0,
                    origin: [0.0; 2],
                }),
            },
        ],
    };
    body.validate().unwrap();
    // Hold the base with gravity compensation on it (Q = m_total g on z) and start the bob
    // at a small angle; measure the first return through zero from the positive side.
    let q = [0.0, 0.0, 0.0, 1e-3];
    let v = [0.0; 4];
    let lift = |q: &[f64], v: &[f64]| {
        let mut f = vec![0.0; 4];
        f[1] = body.total_mass() * G;
        body.forward_dynamics_f64(q, v, &f)
    };
    let dt = 1e-4;
    let mut x = [q.to_vec(), v.to_vec()].concat();
    let mut t = 0.0;
    let mut crossings = Vec::new();
    while crossings.len() < 2 && t < 5.0 {
        let rate = |x: &[f64]| -> Vec<f64> {
            let a = lift(&x[..4], &x[4..]);
            x[4..].iter().copied().chain(a.iter().copied()).collect()
        };
        let k1 = rate(&x);
        let k2 = rate(&axpy(dt / 2.0, &k1, &x));
        let k3 = rate(&axpy(dt / 2.0, &k2, &x));
        let k4 = rate(&axpy(dt, &k3, &x));
        let before = x[3];
        for j in 0..8 {
            x[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
        if before > 0.0 && x[3] <= 0.0 || before < 0.0 && x[3] >= 0.0 {
            crossings.push(t + dt * before / (before - x[3]));
        }
        t += dt;
    }
    let period = 2.0 * (crossings[1] - crossings[0]);
    let expected = 2.0 * std::f64::consts::PI * ((i + m * l * l) / (m * G * l)).sqrt();
    assert!(
        (period - expected).abs() < 1e-5 * expected,
        "period {period} vs {expected}"
    );
}

#[test]
fn preset_parameters_read_from_yaml_with_defaults_and_reject_unknown_fields() {
    let foot: PlanarFootParams = serde_yaml::from_str("{}").unwrap();
    assert_eq!(foot, PlanarFootParams::default());
    let monopod: MonopodParams = serde_yaml::from_str("leg_stiffness: 5000.0").unwrap();
    assert_eq!(monopod.leg_stiffness, 5000.0);
    assert_eq!(monopod.body_mass, MonopodParams::default().body_mass);
    let quadruped: QuadrupedParams =
        serde_yaml::from_str(&serde_yaml::to_string(&QuadrupedParams::default()).unwrap()).unwrap();
    assert_eq!(quadruped, QuadrupedParams::default());
    let error = serde_yaml::from_str::<QuadrupedParams>("torso_mas: 30").unwrap_err();
    assert!(error.to_string().contains("torso_mas"), "{error}");
}

/// The monopod can push off forward: with its foot pinned to the ground behind the body and
/// full thrust, the ground pushes the foot up and forward and the body accelerates up and
/// forward (pinned-foot dynamics: [M −Jᵀ; J 0] [q̈; f] = [Q − h; −J̇ v]).
#[test]
fn monopod_pushes_off_forward_with_its_foot_behind() {
    let params = MonopodParams::default();
    let robot = params.build(G);
    let body = &robot.body;
    let foot = &robot.contacts[robot.contact("foot").unwrap()];
    let n = robot.n_q();
    let hip = -0.3; // the foot swings back (clockwise) behind the hip
    let leg = 0.45;
    let q = vec![0.0, leg * f64::cos(hip), 0.0, hip, leg];
    let v = vec![0.0; n];
    let [foot_x, foot_z] = body.point(&q, foot.body, foot.point);
    assert!(
        foot_x < -0.1 && foot_z.abs() < 1e-12,
        "foot at ({foot_x}, {foot_z})"
    );
    let thrust = params.thrust_limit.1;
    let force = robot.generalized_forces(&q, &v, &[0.0, thrust]);
    let h = body.bias_forces(&q, &v);
    let jac = body.point_jacobian(&q, foot.body, foot.point);
    let bias = body.point_bias_acceleration(&q, &v, foot.body, foot.point);
    let m = body.mass_matrix_f64(&q);
    let mut kkt = nalgebra::DMatrix::zeros(n + 2, n + 2);
    let mut rhs = nalgebra::DVector::zeros(n + 2);
    for i in 0..n {
        for j in 0..n {
            kkt[(i, j)] = m[(i, j)];
        }
        for r in 0..2 {
            kkt[(i, n + r)] = -jac[r][i];
            kkt[(n + r, i)] = jac[r][i];
        }
        rhs[i] = force[i] - h[i];
    }
    rhs[n] = -bias[0];
    rhs[n + 1] = -bias[1];
    let solution = kkt.lu().solve(&rhs).unwrap();
    let (ground_x, ground_z) = (solution[n], solution[n + 1]);
    assert!(
        ground_z > 0.0 && ground_x > 0.0,
        "ground force ({ground_x}, {ground_z})"
    );
    assert!(
        solution[0] > 0.0 && solution[1] > 0.0,
        "body accelerates ({}, {})",
        solution[0],
        solution[1]
    );
    // The leg extends and the foot stays put.
    assert!(solution[4] > 0.0);
    for r in 0..2 {
        let foot_acc: f64 = (0..n).map(|k| jac[r][k] * solution[k]).sum::<f64>() + bias[r];
        assert!(foot_acc.abs() < 1e-9);
    }
}

/// A base on a guide tilted by β is the free base reparametrized: with T the map from the
/// guided coordinates to the free ones ((x, z) turned by R(β), pitch + β, joints as they
/// are), M_guided(q) = Tᵀ M_free(T q) T and h_guided = Tᵀ h_free, and every point sits
/// where the free robot puts it (1e-12, at random states of every preset).
#[test]
fn a_tilted_guide_is_the_free_base_turned() {
    let mut rng = Lcg(7);
    for free in robots() {
        for beta in [0.2, -0.7] {
            let mut guided = free.clone();
            guided.body.guide_angle = beta;
            let n = free.n_q();
            let (s, c) = f64::sin_cos(beta);
            // T: ∂q_free/∂q_guided.
            let mut t = vec![vec![0.0; n]; n];
            t[0][0] = c;
            t[0][1] = -s;
            t[1][0] = s;
            t[1][1] = c;
            for (i, row) in t.iter_mut().enumerate().skip(2) {
                row[i] = 1.0;
            }
            let apply = |x: &[f64]| -> Vec<f64> {
                (0..n)
                    .map(|i| (0..n).map(|j| t[i][j] * x[j]).sum())
                    .collect()
            };
            for _ in 0..5 {
                let (q, v) = random_state(&guided, &mut rng);
                let mut q_free = apply(&q);
                q_free[2] += beta;
                let v_free = apply(&v);
                for (body, local) in points(&free, &mut rng) {
                    let a = guided.body.point(&q, body, local);
                    let b = free.body.point(&q_free, body, local);
                    assert!(max_abs([a[0] - b[0], a[1] - b[1]]) < 1e-12, "{}", free.name);
                }
                let (mg, mf) = (guided.body.mass_matrix(&q), free.body.mass_matrix(&q_free));
                let (hg, hf) = (
                    guided.body.bias_forces(&q, &v),
                    free.body.bias_forces(&q_free, &v_free),
                );
                for i in 0..n {
                    let h: f64 = (0..n).map(|k| t[k][i] * hf[k]).sum();
                    assert!((hg[i] - h).abs() < 1e-12, "{} h[{i}]", free.name);
                    for j in 0..n {
                        let m: f64 = (0..n)
                            .flat_map(|k| (0..n).map(move |l| (k, l)))
                            .map(|(k, l)| t[k][i] * mf[k][l] * t[l][j])
                            .sum();
                        assert!((mg[i][j] - m).abs() < 1e-12, "{} M[{i}][{j}]", free.name);
                    }
                }
            }
        }
    }
}
