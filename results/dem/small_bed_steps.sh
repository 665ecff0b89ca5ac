#!/usr/bin/env bash
# The small bed's intrusion force against the time step, over several pours (results/README.md,
# "Small bed"): for each seed, pour and settle problems/beds/poppy_bed_small.yaml with that seed,
# push the 76 mm disc in at 5 cm/s at the scene's step (0.1 of the Rayleigh time, 14.8 µs) and
# half of it, and print the force at 5, 10, 20 mm (mean over ±2.5 mm). (Until 2026-11-26 the
# default was 0.2 T_R, 29.6 µs; small_bed_steps.txt keeps those rows too.)
#
#   results/dem/small_bed_steps.sh [SEED ...]     (default: 1 2 3 4; about 2 minutes per seed)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
loam=${LOAM:-$root/target/release/loam}
work=$(mktemp -d -t loam-small-bed.XXXXXX)
echo "seed  step [µs]  packing  F at 5 / 10 / 20 mm [N]"
for seed in "${@:-1 2 3 4}"; do
    for s in $seed; do
        sed "s/^  seed: 1 /  seed: $s /" "$root/problems/beds/poppy_bed_small.yaml" >"$work/bed.yaml"
        grep -q "^  seed: $s " "$work/bed.yaml" || { echo "could not set the seed" >&2; exit 1; }
        "$loam" dem prepare "$work/bed.yaml" -o "$work/s$s.bed" >"$work/prepare.log"
        packing=$(sed -n 's/.*volume fraction \([0-9.]*\).*/\1/p' "$work/prepare.log")
        for step in default 7.4e-6; do
            args=()
            [ "$step" = default ] || args=(--time-step "$step")
            "$loam" dem intrude "$work/s$s.bed" --velocity 0.05 --depth 0.022 "${args[@]}" \
                -o "$work/s$s.csv" >/dev/null
            python3 - "$work/s$s.csv" "$s" "$step" "$packing" "$root/results/dem" <<'PY'
import sys
path, seed, step, packing, here = sys.argv[1:]
sys.path.insert(0, here)
from step_study import forces  # the window means of results/README.md
f = forces(path)
micro = "14.8" if step == "default" else f"{float(step) * 1e6:.1f}"
print(f"{seed:>4}  {micro:>9}  {packing:>7}  {f[0]:.1f} / {f[1]:.1f} / {f[2]:.1f}")
PY
        done
    done
done
rm -rf "$work"
