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
