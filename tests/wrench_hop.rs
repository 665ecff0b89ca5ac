//! The planar monopod hopping forward on a wrench-space terrain (docs/WRENCH_SPACE.md
//! section 4.4, second task; `planner::wrench_hop`): the plan converges, its wrenches lie in
//! W(θ), and its inputs replayed open loop in the MDP simulator reproduce it.

use std::sync::Arc;

use loam::model::planar::monopod::coordinate;
use loam::model::planar::MonopodParams;
use loam::planner::wrench_hop::{self, WrenchHop, WrenchPhase};
use loam::sim::mdp::hop as mdp_hop;
use loam::solver::{OptionValue, SolveSettings};
use loam::terrain::hull::HalfSpaces;
use loam::terrain::wrench_space::WrenchSpace;

fn quiet() -> SolveSettings {
    SolveSettings {
        log_level: 0,
        options: vec![("max_iter".into(), OptionValue::Int(1500))],
        ..SolveSettings::default()
    }
}

fn monopod_hop(distance: f64) -> Arc<WrenchHop> {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let space =
        WrenchSpace::load(&manifest.join("problems/data/wrench_space/rft_sand_monopod.yaml"))
            .unwrap();
    Arc::new(WrenchHop {
        robot: MonopodParams::default().build(9.81),
        space: Arc::new(space),
        grain_inertia: 2.0,
        phases: vec![
            WrenchPhase {
                contacts: vec![0],
                nodes: 31,
                duration: (0.1, 0.3),
            },
            WrenchPhase {
                contacts: vec![],
                nodes: 21,
                duration: (0.05, 0.6),
            },
        ],
        start_set: vec![(coordinate::PITCH, 0.0), (coordinate::HIP, 0.0)],
        end_set: vec![(coordinate::PITCH, 0.0)],
        distance: Some(distance),
        maximum_dissipation: true,
    })
}

#[test]
fn the_monopod_hops_forward_on_sand_and_its_plan_replays_in_the_mdp_simulator() {
    let distance = 0.3;
    let hop = monopod_hop(distance);
    let plan = wrench_hop::plan(&hop, &quiet(), None, None).unwrap();
    println!(
        "{:?} after {} iterations, objective {}, set-up {:.2} s, solve {:.2} s",
        plan.report.status,
        plan.report.iterations,
        plan.report.objective,
        plan.setup_seconds,
        plan.report.solve_seconds
    );
    println!("relaxation: {:?} iterations", plan.relaxed_iterations);
    assert!(
        plan.report.converged,
        "{:?}",
        &plan.report.violations[..plan.report.violations.len().min(8)]
    );
    let l = hop.layout();

    // Every planned ground wrench lies in W(θ) (the H-form of the hull at that θ).
    let ground = &plan.trajectory.phases[0];
    let mut worst: f64 = 0.0;
    for (x, u) in ground.states.iter().zip(&ground.controls) {
        let frame = hop.contact_frame(&x[..l.n_q], 0);
        let (w, vertices) = hop.wrench(&frame, &u[l.lambda(0)..l.lambda(0) + l.m]);
        if frame.depth >= 0.0 {
            continue;
        }
        let hull = HalfSpaces::of_wrench_space(&vertices).unwrap();
        let scale = vertices
            .iter()
            .flatten()
            .fold(0.0_f64, |m, c| m.max(c.abs()));
        worst = worst.max(-hull.slack(&w) / scale);
    }
    println!("largest excess of a planned wrench over W: {worst:.1e} (relative)");
    assert!(worst <= 1e-7);

    // The MDP replay of the inputs alone.
    let samples = mdp_hop::replay(&hop, &plan.trajectory, 20).unwrap();
    let mut stance_gap: f64 = 0.0;
    for s in &samples {
        if let Some((0, k)) = s.node {
            let x = &ground.states[k];
            for i in 0..l.n_q {
                stance_gap = stance_gap.max((s.q[i] - x[i]).abs());
            }
        }
    }
    let end = samples.last().unwrap();
    let planned = plan.trajectory.phases[1].states.last().unwrap();
    println!(
        "durations {:.3} / {:.3} s; end z {:.4} (plan {:.4}), leg {:.4} (plan {:.4}), foot depth {:.4}",
        plan.trajectory.phases[0].duration,
        plan.trajectory.phases[1].duration,
        end.q[1],
        planned[1],
        end.q[coordinate::LEG],
        planned[coordinate::LEG],
        end.depths[0]
    );
    println!(
        "ground nodes within {stance_gap:.1e}; end x {:.4} m (plan {:.4}), pitch {:.4} (plan {:.4})",
        end.q[0], planned[0], end.q[coordinate::PITCH], planned[coordinate::PITCH]
    );
    // The ground phase is the simulator's own step: the replay leaves it only by what IPOPT's
    // tolerance leaves in the dissipation rows, grown by the explicit step (measured 7e-6 m).
    assert!(
        stance_gap < 1e-4,
        "ground nodes {stance_gap} m from the plan"
    );
    // The flight, trapezoidal in the plan, is replayed in 20 simulator steps per interval:
    // the distance travelled within 1 % (measured 0.07 %).
    let travelled = end.q[0] - samples[0].q[0];
    assert!(
        (travelled - distance).abs() < 0.01 * distance,
        "travelled {travelled} m, planned {distance} m"
    );
    // The replay's foot ends at the surface, where the plan touches down.
    assert!(end.depths[0].abs() < 0.01, "foot at {} m", end.depths[0]);
}

#[test]
fn a_schedule_of_two_ground_phases_in_a_row_is_refused_with_the_reason() {
    let mut hop = (*monopod_hop(0.3)).clone();
    hop.phases[1].contacts = vec![0];
    let error = hop.validate().unwrap_err().to_string();
    assert!(error.contains("phases 0 and 1 are both ground"), "{error}");
    hop.phases = vec![hop.phases[1].clone()];
    hop.phases[0].contacts.clear();
    let error = hop.validate().unwrap_err().to_string();
    assert!(error.contains("starts on the ground"), "{error}");
}
