//! `loam bench mdp`: the maximum-dissipation simulator's step on the 13-body planar
//! quadruped with four feet in a granular bed (docs/WRENCH_SPACE.md 3.6, M10: the paper took
//! 0.343 s per step in MATLAB; loam's goal is < 0.5 ms). Each configuration (form × solver)
//! starts from the standing posture, settles for `--settle` steps with the joints held, then
//! times `--steps` single steps; medians and the 10th–90th percentiles are printed, and
//! each median's ratio to the first configuration's (V-form with Clarabel, the default
//! before the active-set solvers), measured in the same invocation.
//!
//! The wrench set is synthetic: 26 vertices (the paper's m = 26 direction grid: two poles
//! and three rings of eight) of a mirror-symmetric set with a pure-down capacity of
//! 4000 N/m × depth, scaled with depth. The step's cost does not depend on where the
//! vertices come from, only on their number.

use std::sync::Arc;
use std::time::Instant;

use loam::model::planar::QuadrupedParams;
use loam::sim::mdp::{JointHold, MdpOptions, MdpSim, QpSolver, WrenchForm};
use loam::terrain::wrench_set::ScaledPolytope;

use crate::cli::BadInput;

#[derive(clap::Args)]
pub struct BenchMdpArgs {
    /// Timed steps per configuration.
    #[arg(long, default_value_t = 1000)]
    pub steps: usize,
    /// Untimed steps first, for the feet to sink in.
    #[arg(long, default_value_t = 500)]
    pub settle: usize,
    /// Also time the barrier-Newton solver (slow: dense Newton steps on all the weights).
    #[arg(long)]
    pub barrier: bool,
}

/// 26 wrenches over the m = 26 direction grid, at d = −0.1 m.
fn wrench_set() -> ScaledPolytope {
    let mut directions = vec![[0.0, 1.0, 0.0], [0.0, -1.0, 0.0]];
    for elevation in [-45f64, 0.0, 45.0] {
        for k in 0..8 {
            let (e, a) = (elevation.to_radians(), (45.0 * k as f64).to_radians());
            directions.push([e.cos() * a.cos(), e.sin(), e.cos() * a.sin()]);
        }
    }
    let points = directions
        .iter()
        .map(|u| [200.0 * u[0], 200.0 * (1.0 + u[1]), 10.0 * u[2]])
        .collect();
    ScaledPolytope {
        points,
        depth_scale: 0.1,
        torque_point: 0.05,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

pub fn bench(args: BenchMdpArgs) -> anyhow::Result<u8> {
    if args.steps == 0 {
        return Err(BadInput("--steps must be ≥ 1".into()).into());
    }
    let robot = QuadrupedParams::default().build(9.81);
    let set = Arc::new(wrench_set());
    let mut configurations = vec![
        (WrenchForm::Vertices, QpSolver::Clarabel),
        (WrenchForm::HalfSpaces, QpSolver::Clarabel),
        (WrenchForm::Vertices, QpSolver::ActiveSet),
        (WrenchForm::HalfSpaces, QpSolver::ActiveSet),
    ];
    if args.barrier {
        configurations.push((WrenchForm::Vertices, QpSolver::BarrierNewton));
    }
    println!(
        "mdp step: planar quadruped ({} bodies, {} coordinates), 4 contacts, 26 vertices each, h = 1 ms; {} timed steps after {} settling",
        robot.body.bodies.len(),
        robot.n_q(),
        args.steps,
        args.settle
    );
    let u = vec![0.0; robot.inputs.len()];
    let mut reference = None;
    for (form, solver) in configurations {
        let options = MdpOptions {
            form,
            solver,
            joint_hold: Some(JointHold::default()),
            ..Default::default()
        };
        let sim = MdpSim::uniform(&robot, set.clone(), options)?;
        let (mut q, mut v) = (robot.standing.clone(), vec![0.0; robot.n_q()]);
        for _ in 0..args.settle {
            let report = sim.step(&q, &v, &u)?;
            (q, v) = (report.q, report.v);
        }
        let mut times = Vec::with_capacity(args.steps);
        let mut in_contact = 0;
        for _ in 0..args.steps {
            let start = Instant::now();
            let report = sim.step(&q, &v, &u)?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
            in_contact += report.contacts.iter().filter(|c| c.in_contact).count();
            (q, v) = (report.q, report.v);
        }
        times.sort_by(f64::total_cmp);
        let median = percentile(&times, 0.5);
        let reference = *reference.get_or_insert(median);
        println!(
            "  {:<12} {:<15} median {:.3} ms per step ({:.1}x as fast as the first; p10 {:.3}, p90 {:.3}); {:.2} feet in contact on average",
            format!("{form:?}"),
            format!("{solver:?}"),
            median,
            reference / median,
            percentile(&times, 0.1),
            percentile(&times, 0.9),
            in_contact as f64 / args.steps as f64
        );
    }
    Ok(0)
}
