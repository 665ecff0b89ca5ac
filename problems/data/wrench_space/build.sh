#!/bin/sh
# Rebuilds the shipped wrench-space data files (docs/WRENCH_SPACE.md, "Implemented").
# Run from the repository root after `cargo build --release`.
set -e
loam=${LOAM:-target/release/loam}
# The spec's §3.5 test foot (0.10 x 0.30 m, 0.10 m out of plane) in the Sand-like RFT medium
# (generic fit, zeta = 0.4 N/cm^3); d = 0 .. -0.10 m by 0.01, tilt = 0 .. 1.5 rad by 0.15.
$loam wrench-space build --generator rft --medium generic --zeta 0.4 --medium-name sand_like \
    --foot-width 0.10 --foot-height 0.30 --foot-thickness 0.10 \
    --depth-max 0.10 --depth-step 0.01 --tilt-max 1.5 --tilt-step 0.15 \
    --out problems/data/wrench_space/rft_sand_like.yaml
# The hopper's 7.6 cm disc foot as a planar section: 0.076 m wide, 5 mm thick, and
# pi R^2 / 2R = 0.0597 m out of plane so the sole has the disc's area; loose poppy seeds;
# d = 0 .. -0.05 m by 0.005, tilt = 0 .. 0.8 rad by 0.1.
$loam wrench-space build --generator rft --medium poppy-seeds-loose \
    --foot-width 0.076 --foot-height 0.005 --foot-thickness 0.05969026041820607 \
    --depth-max 0.05 --depth-step 0.005 --tilt-max 0.8 --tilt-step 0.1 \
    --out problems/data/wrench_space/rft_poppy_hopper_disc.yaml
# The planar quadruped's feet (problems/mdp/quadruped_*.yaml): a 15 x 15 cm snowshoe-like
# sole (the 65 kg robot would sink past the data on smaller feet in this soft medium), the
# 10 cm foot link as the height, the torque point halfway up it; the Sand-like medium. A foot
# carries about 160 N standing (1.8 cm deep), 320 N in a trot's two-foot phase.
$loam wrench-space build --generator rft --medium generic --zeta 0.4 --medium-name sand_like \
    --foot-width 0.15 --foot-height 0.10 --foot-thickness 0.15 --torque-point 0.05 \
    --depth-max 0.10 --depth-step 0.01 --tilt-max 1.5 --tilt-step 0.15 \
    --out problems/data/wrench_space/rft_sand_quadruped.yaml
# The planar monopod's foot (problems/monopod_sand_hop.yaml): a 10 x 10 cm sole, 2 cm thick,
# the torque point 5 cm up the leg; the Sand-like medium; d = 0 .. -0.08 m by 0.01, tilt =
# 0 .. 0.6 rad by 0.15. The 11.2 kg robot rests about 2.5 cm deep.
$loam wrench-space build --generator rft --medium generic --zeta 0.4 --medium-name sand_like \
    --foot-width 0.10 --foot-height 0.02 --foot-thickness 0.10 --torque-point 0.05 \
    --depth-max 0.08 --depth-step 0.01 --tilt-max 0.6 --tilt-step 0.15 \
    --out problems/data/wrench_space/rft_sand_monopod.yaml
# The same kind of data from loam's DEM (the paper's protocol, about 5 minutes on two cores):
# a 3 x 3 cm box foot, 5 cm tall, dragged through the small poppy-seed bed (12 cm across,
# 4158 grains, Hertz-Mindlin) 1.5 cm deep at tilts 0 and 0.3 rad in the 26 directions.
bed=$(mktemp -d)/poppy_bed_small.bed
$loam dem prepare problems/beds/poppy_bed_small.yaml --output "$bed"
$loam wrench-space build --generator dem --bed "$bed" --medium-name poppy_bed_small_dem \
    --foot-width 0.03 --foot-height 0.05 --foot-thickness 0.03 --torque-point 0.05 \
    --depth-max 0.015 --depth-step 0.015 --tilt-max 0.3 --tilt-step 0.3 --approach-speed 0.2 \
    --out problems/data/wrench_space/dem_poppy_small_bed.yaml
