#!/usr/bin/env bash
# The disc intrusion of results/README.md ("Convergence over twelve realisations") on a GPU:
# the six shipped-bed pours (seed 1 is results/dem/poppy_bed.bed; seeds 2-6 are
# problems/beds/poppy_bed.yaml with its seed changed, prepared by `loam dem prepare`), each at
# the default step (14.8 us), half and a quarter of it, on the CUDA backend. The GPU runs the
# CPU's step but rounds differently, so each run is another realisation of the chaotic bed
# than the CPU's runs in results/dem/intrusion_disc*.csv.
# Ran on an NVIDIA H100 (2026-11-26), one run after another (17 runs in 400 s; seed 6 at the
# default step was left out when the device time ran short). Usage: run.sh LOAM BEDS_DIR OUT_DIR
set -euo pipefail
loam=$1; beds=$2; out=$3
mkdir -p "$out"
for k in 1 2 3 4 5 6; do
  for step in default half quarter; do
    case $step in
      default) dt=() ;;
      half) dt=(--time-step 7.3889e-6) ;;
      quarter) dt=(--time-step 3.69445e-6) ;;
    esac
    "$loam" dem intrude "$beds/seed$k.bed" --body disc --radius 0.038 --thickness 0.005 \
      --velocity 0.05 --depth 0.022 "${dt[@]}" --backend cuda -o "$out/seed${k}_$step.csv"
  done
done
