//! Realisations of one bed replayed side by side (`replay_hopper_scenes`, `loam validate
//! --side-by-side`): each scene of the batch is the single replay of its bed, on the CPU
//! (scenes stepped in parallel) and on the GPU (scenes of one launch). The GPU test is
//! `#[ignore]`d; on a GPU machine run `cargo test --release --test suite -- dem_cuda
//! --include-ignored`.

use std::sync::OnceLock;

use loam::model::hopper::Hopper;
use loam::sim::dem::cuda::CudaBackend;
use loam::sim::dem::hopper::{
    bodies_csv, replay_hopper, replay_hopper_scenes, HopperReplay, HopperReplaySettings,
};
use loam::sim::dem::{bed, Backend, Checkpoint, CpuBackend, CpuScenes, Scene};

const SCENE: &str = "
container: { shape: cylinder, radius: 0.05 }
grains: { radius: 0.004, size_spread: 0.1, density: 1000, friction: 0.5, fill_height: 0.04, seed: 11 }
settle: { kinetic_energy: 1.0e-12, max_time: 3.0 }
";

/// The bed (about 700 grains) and two copies with one grain nudged by one ulp.
fn realisations() -> &'static [Checkpoint] {
    static BEDS: OnceLock<Vec<Checkpoint>> = OnceLock::new();
    BEDS.get_or_init(|| {
        let scene = Scene::parse(SCENE, std::path::Path::new("<realisations test>")).unwrap();
        let bed = bed::prepare(&mut CpuBackend::new(), &scene).unwrap();
        assert!(bed.info.settled, "{:?}", bed.info);
        let n = bed.grains.len();
        vec![
            bed.nudged(n / 3).unwrap(),
            bed.nudged(2 * n / 3).unwrap(),
            bed,
        ]
    })
}

fn robot() -> Hopper {
    Hopper::from_problem(&loam::problem::Problem::default())
}

/// A quick push: the actuator retracts then extends by 25 mm over 0.1 s, and the robot hops.
fn push(t: f64) -> (f64, f64) {
    let w = 2.0 * std::f64::consts::PI / 0.1;
    if t < 0.1 {
        (-0.0125 * (1.0 - (w * t).cos()), -0.0125 * w * (w * t).sin())
    } else {
        (0.0, 0.0)
    }
}

fn settings() -> HopperReplaySettings {
    HopperReplaySettings {
        t_max: 0.3,
        settle_time: 0.05,
        ..HopperReplaySettings::default()
    }
}

/// Each bed replayed alone on a fresh backend from `make(1)`, and all of them side by side on
/// `make(beds)`.
fn alone_and_together(
    make: &dyn Fn(usize) -> Box<dyn Backend>,
) -> (Vec<HopperReplay>, Vec<HopperReplay>) {
    let beds = realisations();
    let (robot, settings) = (robot(), settings());
    let alone = beds
        .iter()
        .map(|bed| replay_hopper(&mut *make(1), bed, &robot, 0.03, &push, 0.0, &settings).unwrap())
        .collect();
    let together = replay_hopper_scenes(
        &mut *make(beds.len()),
        beds,
        &robot,
        0.03,
        &push,
        0.0,
        &settings,
    )
    .unwrap()
    .into_iter()
    .map(Result::unwrap)
    .collect();
    (alone, together)
}

/// Scene s of the batch is the single replay of bed s, bit for bit, and the realisations are
/// not copies of each other: the nudge moved the outcome.
fn assert_scenes_are_single_replays(alone: &[HopperReplay], together: &[HopperReplay]) {
    assert_eq!(alone.len(), together.len());
    for (s, (a, t)) in alone.iter().zip(together).enumerate() {
        assert!(
            a.reached_apex,
            "realisation {s} did not hop: {}",
            a.apex_rise
        );
        assert_eq!(bodies_csv(a), bodies_csv(t), "realisation {s}");
        assert_eq!(
            a.apex_rise.to_bits(),
            t.apex_rise.to_bits(),
            "realisation {s}"
        );
    }
    let rises: Vec<f64> = alone.iter().map(|r| r.apex_rise).collect();
    assert!(
        rises[0] != rises[2] || rises[1] != rises[2],
        "nudged beds replayed exactly as the bed: {rises:?}"
    );
    // The batch ran on past a scene that had reached its apex: each ends at its own apex.
    for (s, t) in together.iter().enumerate() {
        assert_eq!(t.apex_time, alone[s].apex_time, "realisation {s}");
    }
}

#[test]
fn cpu_realisations_side_by_side_are_the_single_replays_bit_for_bit() {
    let (alone, together) = alone_and_together(&|scenes| -> Box<dyn Backend> {
        if scenes == 1 {
            Box::new(CpuBackend::new())
        } else {
            Box::new(CpuScenes::new(scenes))
        }
    });
    assert_scenes_are_single_replays(&alone, &together);
}

#[test]
fn realisations_side_by_side_refuse_snapshots_and_a_backend_of_another_size() {
    let beds = realisations();
    let robot = robot();
    let with_snapshots = HopperReplaySettings {
        snapshot_every: Some(0.05),
        ..settings()
    };
    let refusal = |backend: &mut dyn Backend, settings: &HopperReplaySettings| {
        replay_hopper_scenes(backend, beds, &robot, 0.03, &push, 0.0, settings)
            .unwrap_err()
            .to_string()
    };
    let err = refusal(&mut CpuScenes::new(3), &with_snapshots);
    assert!(
        err.contains("snapshots are taken from a single replay"),
        "{err}"
    );
    let err = refusal(&mut CpuScenes::new(2), &settings());
    assert!(
        err.contains("3 realisations on a cpu backend of 2 scenes"),
        "{err}"
    );
    let err = refusal(&mut CpuBackend::new(), &settings());
    assert!(err.contains("of 1 scenes"), "{err}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --release --test suite -- dem_cuda --include-ignored"]
fn gpu_realisations_in_one_launch_are_the_single_gpu_replays() {
    loam::sim::dem::cuda::probe().unwrap_or_else(|e| panic!("this test needs an NVIDIA GPU: {e}"));
    let (alone, together) =
        alone_and_together(&|scenes| -> Box<dyn Backend> { Box::new(CudaBackend::new(scenes)) });
    for (a, t) in alone.iter().zip(&together) {
        eprintln!(
            "apex rise alone {:.9} m, in the launch {:.9} m",
            a.apex_rise, t.apex_rise
        );
    }
    assert_scenes_are_single_replays(&alone, &together);
}
