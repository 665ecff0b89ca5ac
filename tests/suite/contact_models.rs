//! Contact models as parts (`terrain::contact`): the linear spring-damper ground, one file
//! (`src/terrain/spring.rs`) plus its registration, planned and replayed by the same planner
//! and replay as rigid ground and the bed. A point mass dropped on it rebounds at the closed
//! form of the law, in the replay (to 1e-6) and in the plan (to the transcription's error),
//! and rests m g / k deep (1e-9).

use crate::common;

use std::path::Path;

use common::csv::{column, read_csv};
use common::run::{loam, read_json, shipped, solve_to};
use common::temp_dir::TempDir;

const G: f64 = 9.81;
const MASS: f64 = 1.0;
const STIFFNESS: f64 = 1000.0;
const DAMPING: f64 = 6.0;

/// The closed-form drop of a point mass `m` from rest at height `h` onto the ground
/// F = max(0, k d + c ḋ) under gravity: while the law pushes, d(t) = d_s + e^{−βt}(A cos ωt +
/// B sin ωt) (d_s = m g / k, A = −d_s, B = (v₀ + βA)/ω); once it has let go (k d + c ḋ = 0,
/// found by bisection on the closed form), ballistic to the surface. Returns (the time in the
/// ground, the speed it leaves the surface at).
fn closed_form_rebound(m: f64, k: f64, c: f64, h: f64) -> (f64, f64) {
    let v0 = (2.0 * G * h).sqrt();
    let beta = c / (2.0 * m);
    let omega = (k / m - beta * beta).sqrt();
    let ds = m * G / k;
    let (a, b) = (-ds, (v0 - beta * ds) / omega);
    let d = |t: f64| ds + (-beta * t).exp() * (a * (omega * t).cos() + b * (omega * t).sin());
    let dd = |t: f64| {
        (-beta * t).exp()
            * ((-beta * a + omega * b) * (omega * t).cos()
                + (-beta * b - omega * a) * (omega * t).sin())
    };
    let force = |t: f64| k * d(t) + c * dd(t);
    // The force is positive from touchdown until it first falls to 0 (gravity holds the mass
    // in a little past half a period): scan for the sign change, then bisect.
    let step = 1e-3 / omega;
    let mut hi = step;
    while force(hi) > 0.0 {
        hi += step;
        assert!(
            hi < 2.0 * std::f64::consts::PI / omega,
            "the law never lets go"
        );
    }
    let mut lo = hi - step;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if force(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (t1, d1, v1) = (lo, d(lo), dd(lo));
    // Ballistic from depth d1 rising at −v1: out of the ground if it has the speed for it.
    let out = v1 * v1 - 2.0 * G * d1;
    assert!(out > 0.0, "the mass falls back before the surface");
    let exit = out.sqrt();
    (t1 + (-v1 - exit) / G, exit)
}

#[test]
fn a_point_mass_dropped_on_the_spring_ground_rebounds_at_the_closed_form() {
    let tmp = TempDir::new("spring-drop");
    let run = tmp.path().join("drop");
    let solution = solve_to(Path::new(&shipped("spring_drop.yaml")), &run);
    assert_eq!(solution["converged"], true);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sim = loam(dir, &["simulate", run.to_str().unwrap()]);
    assert_eq!(sim.status, Some(0), "{}", sim.dump());
    let replay = read_json(&run.join("replay.json"));
    let events = replay["events"].as_array().expect("events");
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["touchdown", "lift-off"], "{events:?}");
    let t_down = events[0]["t"].as_f64().unwrap();
    let t_up = events[1]["t"].as_f64().unwrap();

    let (header, rows) = read_csv(&run.join("replay.csv"));
    assert_eq!(read_json(&run.join("replay.json"))["complete"], true);
    let t = column(&header, &rows, "t");
    let z = column(&header, &rows, "z");
    let vz = column(&header, &rows, "d_z");
    let h = z[0];
    assert!((h - 0.1).abs() < 1e-7, "dropped from {h}");
    let (contact_time, exit_speed) = closed_form_rebound(MASS, STIFFNESS, DAMPING, h);
    let restitution = exit_speed / (2.0 * G * h).sqrt();
    assert!(
        (t_down - (2.0 * h / G).sqrt()).abs() < 1e-9,
        "touchdown at {t_down}"
    );
    assert!(
        ((t_up - t_down) - contact_time).abs() < 1e-7,
        "in the ground {} s, closed form {contact_time} s",
        t_up - t_down
    );
    // After lift-off the flight is ballistic: every sample gives the exit speed back.
    let mut checked = 0;
    for k in 0..t.len() {
        if t[k] > t_up + 1e-6 {
            let exit = vz[k] + G * (t[k] - t_up);
            assert!(
                (exit - exit_speed).abs() < 1e-6 * exit_speed,
                "replay leaves at {exit} m/s, closed form {exit_speed} m/s (restitution {restitution})"
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked} samples after lift-off");

    // The same plan on another contact model (robot × contact model): on rigid ground the
    // mass lands with a plastic impact and stays on the surface.
    let rigid = loam(
        dir,
        &[
            "simulate",
            run.to_str().unwrap(),
            "--terrain",
            "rigid",
            "-q",
        ],
    );
    assert_eq!(rigid.status, Some(0), "{}", rigid.dump());
    let on_rigid = read_json(&run.join("replay-on-rigid.json"));
    assert_eq!(on_rigid["terrain"]["model"], "rigid");
    let kinds: Vec<&str> = on_rigid["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["touchdown"]);
    let (h_rigid, rows_rigid) = read_csv(&run.join("replay-on-rigid.csv"));
    let z_end = *column(&h_rigid, &rows_rigid, "z").last().unwrap();
    assert!(
        z_end.abs() < 1e-9,
        "on rigid ground the mass ends at z = {z_end}"
    );
    // `loam plot` draws the plan against each ground it was replayed on.
    let plot = loam(dir, &["plot", run.to_str().unwrap()]);
    assert_eq!(plot.status, Some(0), "{}", plot.dump());
    for figure in ["planar_run.png", "planar_run-on-rigid.png"] {
        assert!(
            run.join("plots").join(figure).is_file(),
            "{figure}: {}",
            plot.dump()
        );
    }

    // A replay that cannot reach the plan's end (here: out of integrator steps in the ground)
    // writes what it has, marked incomplete, says why on stderr and exits 1.
    let short = loam(
        dir,
        &["simulate", run.to_str().unwrap(), "--max-steps", "60", "-q"],
    );
    assert_eq!(short.status, Some(1), "{}", short.dump());
    assert!(
        short.stderr.contains("more than 60 integrator steps")
            && short.stderr.contains("marked incomplete"),
        "{}",
        short.dump()
    );
    let partial = read_json(&run.join("replay.json"));
    assert_eq!(partial["complete"], false);
    assert!(partial["stopped"]
        .as_str()
        .unwrap()
        .contains("60 integrator steps"));
    assert!(partial["integration"]["steps"].is_null());
    let (_, partial_rows) = read_csv(&run.join("replay.csv"));
    assert!(
        partial_rows.len() > 1 && partial_rows.len() < rows.len(),
        "{} of {} samples",
        partial_rows.len(),
        rows.len()
    );

    // The plan transcribes the same law: its stance lasts as long and it leaves as fast, up to
    // the trapezoidal rule's error on 41 nodes (0.1 % in time, 1.1 % in speed, most of it where
    // the law lets go: a kink the rule cannot resolve between nodes).
    let (header, rows) = read_csv(&run.join("trajectory.csv"));
    let t = column(&header, &rows, "t");
    let vz = column(&header, &rows, "d_z");
    let phase = column(&header, &rows, "phase");
    let first = |p: f64| phase.iter().position(|&q| q == p).unwrap();
    let planned_contact = t[first(2.0)] - t[first(1.0)];
    assert!(
        (planned_contact - contact_time).abs() < 2e-3 * contact_time,
        "planned {planned_contact} s in the ground, closed form {contact_time} s"
    );
    let planned_exit = vz[first(2.0)];
    assert!(
        (planned_exit - exit_speed).abs() < 2e-2 * exit_speed,
        "planned exit {planned_exit} m/s, closed form {exit_speed} m/s"
    );
}

#[test]
fn at_rest_on_the_spring_ground_a_body_sinks_m_g_over_k() {
    let tmp = TempDir::new("spring-rest");
    let robot = Path::new(env!("CARGO_MANIFEST_DIR")).join("robots/point_mass.yaml");
    let file = tmp.write(
        "rest.yaml",
        &format!(
            "robot: {{file: {}}}\n\
             terrain: {{model: spring, stiffness: {STIFFNESS}, damping: {DAMPING}}}\n\
             schedule:\n  - {{contacts: [foot], nodes: 11, duration: [0.2, 0.2]}}\n\
             task: {{start: {{set: {{pitch: 0.0}}}}, end: {{at_rest: true}}}}\n",
            robot.display()
        ),
    );
    let run = tmp.path().join("rest");
    let solution = solve_to(&file, &run);
    assert_eq!(solution["converged"], true);
    let sink = MASS * G / STIFFNESS;
    let (header, rows) = read_csv(&run.join("trajectory.csv"));
    for z in column(&header, &rows, "z") {
        assert!(
            (z + sink).abs() < 1e-9,
            "planned z {z}, −m g / k = {}",
            -sink
        );
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sim = loam(dir, &["simulate", run.to_str().unwrap()]);
    assert_eq!(sim.status, Some(0), "{}", sim.dump());
    let (header, rows) = read_csv(&run.join("replay.csv"));
    for z in column(&header, &rows, "z") {
        assert!(
            (z + sink).abs() < 1e-9,
            "replayed z {z}, −m g / k = {}",
            -sink
        );
    }
}
