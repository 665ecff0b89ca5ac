//! Realisations of one bed replayed side by side (`replay_planar_scenes`, `loam validate
//! --side-by-side`): the hopper's 60 mm jump as a robot file (the committed run
//! `results/hopper_granular`), each scene of the batch the single replay of its bed, on the CPU
//! (scenes stepped in parallel) and on the GPU (scenes of one launch). The GPU test is
//! `#[ignore]`d; on a GPU machine run `cargo test --release --test suite -- dem_cuda
//! --include-ignored`. (The refusals of a batch are tested in `dem_planar`.)

use std::sync::OnceLock;

use loam::api::SavedPlanarPlan;
use loam::sim::dem::cuda::CudaBackend;
use loam::sim::dem::planar::{
    replay_planar, replay_planar_scenes, PlanarDemReplay, PlanarDemSettings,
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

/// The hopper's committed robot-file run: robot, plan and feet.
fn hopper_run() -> SavedPlanarPlan {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/hopper_granular");
    loam::api::read_planar_run(&dir).unwrap()
}

/// As `loam simulate` replays the run, settling 0.05 s.
fn settings(run: &SavedPlanarPlan) -> PlanarDemSettings {
    PlanarDemSettings {
        feet: run.grain_feet(),
        apex: run.dem_apex(),
        settle_time: 0.05,
        ..PlanarDemSettings::default()
    }
}

/// Each bed replayed alone on a fresh backend from `make(1)`, and all of them side by side on
/// `make(beds)`.
fn alone_and_together(
    make: &dyn Fn(usize) -> Box<dyn Backend>,
) -> (Vec<PlanarDemReplay>, Vec<PlanarDemReplay>) {
    let beds = realisations();
    let run = hopper_run();
    let settings = settings(&run);
    let alone = beds
        .iter()
        .map(|bed| replay_planar(&mut *make(1), bed, &run.robot, &run.table, &settings).unwrap())
        .collect();
    let together = replay_planar_scenes(
        &mut *make(beds.len()),
        beds,
        &run.robot,
        &run.table,
        &settings,
    )
    .unwrap()
    .into_iter()
    .map(Result::unwrap)
    .collect();
    (alone, together)
}

/// What a replay computed, every number to the bit: `{:?}` writes each f64 in the fewest
/// digits that read back as the same bits.
fn bits(replay: &PlanarDemReplay) -> String {
    format!("{:?} {:?}", replay.samples, replay.summary)
}

/// Scene s of the batch is the single replay of bed s, bit for bit, and the realisations are
/// not copies of each other: the nudge moved the outcome.
fn assert_scenes_are_single_replays(alone: &[PlanarDemReplay], together: &[PlanarDemReplay]) {
    assert_eq!(alone.len(), together.len());
    for (s, (a, t)) in alone.iter().zip(together).enumerate() {
        assert_eq!(
            a.summary.reached_apex,
            Some(true),
            "realisation {s} did not hop: {:?}",
            a.summary
        );
        assert_eq!(bits(a), bits(t), "realisation {s}");
    }
    let rises: Vec<f64> = alone
        .iter()
        .map(|r| r.summary.achieved_apex_rise_m.unwrap())
        .collect();
    assert!(
        rises[0] != rises[2] || rises[1] != rises[2],
        "nudged beds replayed exactly as the bed: {rises:?}"
    );
    // The batch ran on past a scene that had reached its apex: each ends at its own apex.
    for (s, t) in together.iter().enumerate() {
        assert_eq!(
            t.samples.last().unwrap().t,
            alone[s].samples.last().unwrap().t,
            "realisation {s}"
        );
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
#[ignore = "needs an NVIDIA GPU: cargo test --release --test suite -- dem_cuda --include-ignored"]
fn gpu_realisations_in_one_launch_are_the_single_gpu_replays() {
    loam::sim::dem::cuda::probe().unwrap_or_else(|e| panic!("this test needs an NVIDIA GPU: {e}"));
    let (alone, together) =
        alone_and_together(&|scenes| -> Box<dyn Backend> { Box::new(CudaBackend::new(scenes)) });
    for (a, t) in alone.iter().zip(&together) {
        eprintln!(
            "apex rise alone {:.9} m, in the launch {:.9} m",
            a.summary.achieved_apex_rise_m.unwrap_or(f64::NAN),
            t.summary.achieved_apex_rise_m.unwrap_or(f64::NAN)
        );
    }
    assert_scenes_are_single_replays(&alone, &together);
}
