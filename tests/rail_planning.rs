//! Planning with wrench spaces: the hopper on an inclined rail (docs/WRENCH_SPACE.md section
//! 4.4, tests P1-P5).

use std::path::Path;
use std::sync::Arc;

use loam::model::hopper::{state, Hopper};
use loam::model::rail::RailWrenches;
use loam::planner::rail::{self, RailJump, RailPlan};
use loam::problem::{self, Problem};
use loam::sim::command::Command;
use loam::sim::mdp::rail as mdp_rail;
use loam::sim::mdp::QpSolver;
use loam::sim::reduced::{self, Simulator};
use loam::solver::SolveSettings;
use loam::terrain::wrench_space::WrenchSpace;
use loam::terrain::{AddedMass, Terrain};
use loam::transcription::{PhaseTrajectory, Trajectory};

fn quiet() -> SolveSettings {
    SolveSettings {
        log_level: 0,
        ..SolveSettings::default()
    }
}

/// The shipped 60 mm poppy-seed jump with no added mass (c_g = 0: the bed's force is F_hyd(d))
/// and `nodes` per phase.
fn granular(nodes: usize) -> Problem {
    let overrides = [
        "terrain.surrounding_mass_scaling=0".to_string(),
        format!("phases.0.nodes={nodes}"),
        format!("phases.1.nodes={nodes}"),
    ];
    problem::load(Path::new("problems/hopper_granular.yaml"), &overrides).unwrap()
}

fn bed(problem: &Problem) -> AddedMass {
    AddedMass::from_medium(
        &problem.terrain.medium_parameters(),
        problem.robot.foot_radius,
    )
}

fn rail_plan(jump: &RailJump, start: Option<&Trajectory>) -> RailPlan {
    let plan = rail::plan(jump, &quiet(), start, None).unwrap();
    assert!(
        plan.report.converged,
        "rail plan at α = {}: {:?} after {} iterations",
        jump.rail.angle, plan.report.status, plan.report.iterations
    );
    plan
}

/// The reduced-order replay (adaptive integration with events, MODEL.md section 2's stick
/// law) of a command from `initial` on `terrain`: the apex rise [m].
fn reduced_apex(robot: &Hopper, terrain: &Terrain, command: &Command, initial: &[f64]) -> f64 {
    let sim = Simulator {
        robot,
        terrain,
        command,
        settings: reduced::Settings::default(),
    };
    let x0: [f64; state::COUNT] = initial.try_into().unwrap();
    sim.run(x0, &[]).unwrap().apex_rise().expect("an apex")
}

/// P1: at α = 0 a wrench space whose pure-down capacity is F_hyd(d) is the 1-D granular
/// model without added mass (c_g = 0), whose force law the reduced-order simulator integrates
/// in continuous time with events and the bed's stick law (0 ≤ load ≤ F_hyd holds the foot).
/// The rail plan (the MDP step in stance) replayed there reaches its planned apex within
/// 1 mm at 31 nodes, and closer at 61.
///
/// The specification compares with the 1-D granular *plan* at c_g = 0; that plan does not
/// exist: IPOPT reports the 1-D NLP infeasible at c_g = 0 (its stance applies F_hyd whenever
/// the foot touches, so the foot cannot stop and unload before take-off without moving up,
/// which ż_f ≤ 0 forbids; added mass hides that between nodes). The simulator that holds the
/// 1-D law exactly is the reference instead.
#[test]
fn p1_at_zero_angle_the_rail_plan_replays_in_the_1d_granular_simulator() {
    let mut gaps = Vec::new();
    let mut previous: Option<Trajectory> = None;
    for nodes in [31, 61, 121] {
        let problem = granular(nodes);
        let robot = Hopper::from_problem(&problem);
        let terrain = Terrain::AddedMass(bed(&problem));
        let jump = RailJump::from_problem(&problem, 0.0, RailWrenches::Hydrostatic(bed(&problem)))
            .unwrap();
        // The finer grids start from the coarser plan, so that all three are one plan.
        let guess = previous.as_ref().map(|t| resampled(t, nodes));
        let plan = rail_plan(&jump, guess.as_ref());
        previous = Some(plan.trajectory.clone());
        let start = &plan.trajectory.phases[0].states[0];
        let command = mdp_rail::command_of(&plan.trajectory);
        let apex = reduced_apex(&robot, &terrain, &command, start);
        let rest = robot.rest_state(&terrain, start[state::Z_D]);
        println!(
            "N = {nodes}: rail plan {} iterations, objective {:.6e}, apex {:.3} mm; \
             reduced-order replay apex {:.3} mm; rest foot {:.4} mm (1-D model {:.4} mm)",
            plan.report.iterations,
            plan.report.objective,
            plan.apex_rise * 1e3,
            apex * 1e3,
            start[state::Z_F] * 1e3,
            rest[state::Z_F] * 1e3,
        );
        assert!((start[state::Z_F] - rest[state::Z_F]).abs() < 1e-9);
        gaps.push((apex - plan.apex_rise).abs());
    }
    assert!(gaps[0] < 1e-3, "gap at 31 nodes {:.3} mm", gaps[0] * 1e3);
    assert!(gaps[1] < gaps[0] && gaps[2] < gaps[1], "gaps {gaps:?}");
}

/// `trajectory` on `nodes` nodes per phase, by linear interpolation in time.
fn resampled(trajectory: &Trajectory, nodes: usize) -> Trajectory {
    let lerp = |rows: &[Vec<f64>], s: f64| -> Vec<f64> {
        let x = s * (rows.len() - 1) as f64;
        let i = (x.floor() as usize).min(rows.len() - 2);
        let f = x - i as f64;
        rows[i]
            .iter()
            .zip(&rows[i + 1])
            .map(|(a, b)| a + f * (b - a))
            .collect()
    };
    Trajectory {
        phases: trajectory
            .phases
            .iter()
            .map(|p| {
                let at = |k: usize| k as f64 / (nodes - 1) as f64;
                PhaseTrajectory {
                    name: p.name.clone(),
                    duration: p.duration,
                    states: (0..nodes).map(|k| lerp(&p.states, at(k))).collect(),
                    controls: (0..nodes).map(|k| lerp(&p.controls, at(k))).collect(),
                    ..Default::default()
                }
            })
            .collect(),
    }
}
