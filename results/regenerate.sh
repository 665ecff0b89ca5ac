#!/usr/bin/env bash
# Regenerates the curated results: the paper's Fig. 5 and 6 analogues (a height sweep planned
# on both terrains, every plan replayed on both) and one run of each shipped problem with its
# replays and figures. Run from the repository root: bash results/regenerate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
loam=target/release/loam

# Fig. 5 and 6: plans for 30..100 mm on poppy seeds (added-mass model) and on rigid ground,
# each replayed by the reduced-order simulator on its own terrain and on the other.
rm -rf results/jump-sweep
$loam sweep problems/hopper_granular.yaml -q --out results/jump-sweep \
    --vary task.apex_height=0.03:0.10:0.01 --vary terrain.model=added_mass,rigid
$loam plot results/jump-sweep -q

# One 60 mm plan per shipped problem, replayed on its own terrain and on the other.
for problem in hopper_granular hopper_rigid; do
    rm -rf "results/$problem"
    $loam solve "problems/$problem.yaml" -q --out "results/$problem"
    $loam simulate "results/$problem" -q
    $loam simulate "results/$problem" -q --terrain rigid
    $loam simulate "results/$problem" -q --terrain poppy_seeds
    $loam plot "results/$problem" -q
done

# Two hops on rigid ground (the schedule as data): the plan, its replay, its figure.
rm -rf results/hopper_two_hops
$loam solve problems/hopper_two_hops.yaml -q --out results/hopper_two_hops
$loam simulate results/hopper_two_hops -q
$loam plot results/hopper_two_hops --png-only -q
# The hopper on a rail inclined 0.2 rad over the RFT poppy-seed wrench space; `solve` replays
# it in the MDP simulator itself (mdp_replay.csv).
rm -rf results/hopper_rail
$loam solve problems/hopper_rail.yaml -q --out results/hopper_rail
$loam plot results/hopper_rail --png-only -q
# The planar monopod hopping 0.3 m forward on sand given as a wrench space; `solve` replays
# its inputs in the MDP simulator (replay.csv).
rm -rf results/monopod_sand_hop
$loam solve problems/monopod_sand_hop.yaml -q --out results/monopod_sand_hop
$loam plot results/monopod_sand_hop --png-only -q

# The DEM bed: a poured and settled bed of ~14 000 3-mm grains with the Hertz-Mindlin law (about
# 1.5 minutes on two cores), both 60 mm plans replayed on it by the CPU backend, and the
# intrusion force of the robot's foot driven slowly into the same bed at the scene's step and at
# half of it (the forces must not move by more than 5 %: docs/MODEL.md section 4.1).
mkdir -p results/dem
$loam dem prepare problems/beds/poppy_bed.yaml --output results/dem/poppy_bed.bed
for problem in hopper_granular hopper_rigid; do
    $loam simulate "results/$problem" --backend dem-cpu --bed results/dem/poppy_bed.bed -q
    $loam plot "results/$problem/dem-cpu" -q
done
$loam dem intrude results/dem/poppy_bed.bed --body disc --radius 0.038 --thickness 0.005 \
    --velocity 0.05 --depth 0.022 --output results/dem/intrusion_disc.csv
half=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['time_step_s'] / 2)" \
    <($loam dem info results/dem/poppy_bed.bed --json))
$loam dem intrude results/dem/poppy_bed.bed --body disc --radius 0.038 --thickness 0.005 \
    --velocity 0.05 --depth 0.022 --time-step "$half" --output results/dem/intrusion_disc_half_step.csv

# The hard-contact law for comparison: the same bed with projected Jacobi, whose force and
# replay apex depend on the solver's iteration budget (README): both plans at 20, 50, 100 and
# 200 iterations, and the intrusion at 100.
$loam dem prepare problems/beds/poppy_bed_jacobi.yaml --output results/dem/poppy_bed_jacobi.bed
$loam dem intrude results/dem/poppy_bed_jacobi.bed --body disc --radius 0.038 --thickness 0.005 \
    --velocity 0.05 --depth 0.02 --iterations 100 --output results/dem/intrusion_disc_jacobi.csv
echo "plan,iterations,apex_rise_m,takeoff_s,rest_depth_m,wall_s" > results/dem/iteration_study.csv
for problem in hopper_granular hopper_rigid; do
    for iterations in 20 50 100 200; do
        run=$(mktemp -d)
        cp "results/$problem/solution.json" "results/$problem/trajectory.csv" "$run/"
        $loam simulate "$run" --backend dem-cpu --bed results/dem/poppy_bed_jacobi.bed \
            --snapshot-every 0 --iterations "$iterations" -q || true
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(','.join(map(str, [sys.argv[2], sys.argv[3], d['apex_rise_m'], d['takeoff_s'], d['rest_depth_m'], round(d['wall_time_s'], 1)])))" \
            "$run/dem-cpu/dem.json" "$problem" "$iterations" >> results/dem/iteration_study.csv
        rm -rf "$run"
    done
done

# The planar walk-through of README.md: the monopod's forward hop, its replay, its figures.
rm -rf results/monopod_hop
cargo run --release -q -- solve problems/monopod_hop.yaml --out results/monopod_hop -q
cargo run --release -q -- simulate results/monopod_hop -q
cargo run --release -q -- plot results/monopod_hop --png-only --animate -q
# The monopod hopping up out of poppy seeds (the added-mass terrain under a planar robot).
rm -rf results/monopod_granular_hop
$loam solve problems/monopod_granular_hop.yaml -q --out results/monopod_granular_hop
$loam simulate results/monopod_granular_hop -q
$loam plot results/monopod_granular_hop --png-only -q

# A planar robot's plan checked on grains: the planar foot's 0.2 m step, planned on rigid
# ground, replayed on its own ground and in a 34 cm box of DEM grains (about 1.5 min).
$loam dem prepare problems/beds/planar_box.yaml --output results/dem/planar_box.bed
rm -rf results/planar_foot_step
$loam solve problems/planar_foot_step.yaml -q --out results/planar_foot_step
$loam simulate results/planar_foot_step -q
$loam simulate results/planar_foot_step --backend dem-cpu --bed results/dem/planar_box.bed \
    --foot-depth 0.1 -q
$loam plot results/planar_foot_step --png-only -q

# The wrench-space terrain (docs/WRENCH_SPACE.md): sections of the shipped Sand-like wrench
# space, and the wrench-space paper's experiments in the maximum-dissipation simulator (a few
# seconds each): drop tests, the accuracy test's straight and curved paths, the quadruped
# standing, pushing its front feet, trotting in place and dropped on a slope.
$loam wrench-space plot problems/data/wrench_space/rft_sand_like.yaml --out results/wrench_space
rm -f results/wrench_space/wrench_slices.svg
$loam wrench-space plot problems/data/wrench_space/dem_poppy_small_bed.yaml --out results/wrench_space/dem_poppy_small_bed
rm -f results/wrench_space/dem_poppy_small_bed/wrench_slices.svg
for scenario in problems/mdp/*.yaml; do
    name=$(basename "$scenario" .yaml)
    rm -rf "results/mdp/$name"
    $loam mdp run "$scenario" --out "results/mdp/$name" --no-plots -q
    $loam plot "results/mdp/$name" --png-only -q
done
