#!/usr/bin/env bash
# Regenerates the curated results: the paper's Fig. 5 and 6 analogues (a height sweep planned
# on both terrains, every plan replayed on both), one run of each shipped problem with its
# replays and figures, the DEM study and the wrench-space experiments. Run from anywhere:
#
#   bash results/regenerate.sh                   # everything (the DEM parts take tens of minutes)
#   bash results/regenerate.sh --cheap           # everything but the DEM (6 minutes on 2 busy cores)
#   bash results/regenerate.sh --cheap PART...   # only these parts, e.g. jump-sweep hopper_rigid
#
# Parts: jump-sweep, hopper_granular, hopper_rigid,, hopper_two_hops, hopper_rail,
# monopod_sand_hop, monopod_gait_sand, monopod_hop, monopod_granular_hop, monopod_gait, gait-cot, gait-cot-sand,
# planar_foot_step, wrench_space, mdp and, without --cheap, dem. `--cheap` is what `cargo test --release --test suite --
# results_fresh::` checks: when that test reports a drift the code meant, run it, look at the
# figures it redraws and fix the README claims that quote the numbers (results/README.md,
# "What CI checks").
#
# A plan solved again into its folder replaces the old one when it differs (`loam solve`
# archives the old plan's files); DEM replays of a replaced plan are not thrown away: they move,
# with the plan they replayed (solution.json, trajectory.csv), to
# results/dem/earlier_plans/<problem>-<plan_id>/. Without --cheap the DEM replays of the new
# plans are then made; with it they are not (results/README.md lists which DEM numbers come
# from which plan).
set -euo pipefail
cd "$(dirname "$0")/.."
cheap=false
if [ "${1:-}" = "--cheap" ]; then
    cheap=true
    shift
fi
all_parts="jump-sweep hopper_granular hopper_rigid hopper_two_hops hopper_rail monopod_sand_hop
monopod_gait_sand monopod_hop monopod_granular_hop monopod_gait gait-cot gait-cot-sand planar_foot_step wrench_space mdp"
$cheap || all_parts="$all_parts dem"
parts="${*:-$all_parts}"
for part in $parts; do
    case " $(echo $all_parts) " in
        *" $part "*) ;;
        *) echo "regenerate.sh: no part '$part' (parts: $(echo $all_parts))" >&2; exit 2 ;;
    esac
done
wanted() { case " $(echo $parts) " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

cargo build --release --quiet
loam="${CARGO_TARGET_DIR:-target}/release/loam"

# `loam solve problems/PROBLEM.yaml ARGS --out results/PROBLEM`, keeping the DEM replays of a
# plan it replaces under results/dem/earlier_plans/ (see the top). With --cheap, a folder that
# holds DEM replays keeps its plan, and so its DEM replays, when the solve gives the same
# trajectory.csv byte for byte (its solution.json may then be of an older loam, e.g. without a
# field added to the problem since); its reduced-order replays and figures are made again.
solve_into() {
    local problem=$1
    shift
    local dir="results/$problem"
    rm -rf "$dir/archive"
    if $cheap && [ -f "$dir/trajectory.csv" ] && { [ -d "$dir/dem-cpu" ] || [ -d "$dir/dem-cuda" ]; }; then
        local fresh
        fresh=$(mktemp -d)
        $loam solve "problems/$problem.yaml" -q --out "$fresh/run" "$@"
        if cmp -s "$fresh/run/trajectory.csv" "$dir/trajectory.csv"; then
            rm -rf "$fresh"
            echo "regenerate.sh: $dir: the same trajectory, plan and DEM replays kept" >&2
            return
        fi
        rm -rf "$fresh"
    fi
    $loam solve "problems/$problem.yaml" -q --out "$dir" "$@"
    local old
    for old in "$dir"/archive/*/; do
        [ -d "$old" ] || continue
        if [ -d "$old/dem-cpu" ] || [ -d "$old/dem-cuda" ]; then
            local keep
            keep="results/dem/earlier_plans/$problem-$(basename "$old")"
            rm -rf "$keep"
            mkdir -p "$keep"
            mv "$old/solution.json" "$old/trajectory.csv" "$keep/"
            for dem in dem-cpu dem-cuda; do
                if [ -d "$old/$dem" ]; then mv "$old/$dem" "$keep/"; fi
            done
            echo "regenerate.sh: $dir holds a new plan; its earlier plan's DEM replays are now in $keep" >&2
        fi
    done
    rm -rf "$dir/archive"
}

# Fig. 5 and 6: the hopper as a robot file (robots/hopper.yaml), plans for 30..100 mm on poppy
# seeds (added-mass model) and on rigid ground, each at the defaults (refined to 0.5 %) and
# replayed on its own ground and on the other (replays.csv; tests/suite/results_fresh.rs runs
# the same sweep). 90 and 100 mm are beyond the robot on poppy seeds: those plans do not
# converge, so the sweep exits 1, which is a result here.
if wanted jump-sweep; then
    rm -rf results/jump-sweep
    $loam sweep problems/hopper_granular.yaml -q --out results/jump-sweep \
        --vary task.apex_rise=0.03:0.10:0.01 \
        --vary 'terrain=[{model: added_mass, medium: poppy_seeds, foot_radius: 0.038}, {model: rigid}]' \
        || [ $? -eq 1 ]
    $loam plot results/jump-sweep -q
fi

# The 60 mm jump (robots/hopper.yaml) planned on poppy seeds and on rigid ground, each
# replayed on its own ground and on the other: the rigid plan on the hopper's own bed (the
# terrain of hopper_granular.yaml, its 3.8 cm disc; the `poppy_seeds` preset's disc is 8 cm).
if wanted hopper_granular; then
    solve_into hopper_granular
    $loam simulate results/hopper_granular -q
    $loam simulate results/hopper_granular -q --terrain rigid
    $loam plot results/hopper_granular -q
fi
if wanted hopper_rigid; then
    solve_into hopper_rigid
    $loam simulate results/hopper_rigid -q
    $loam simulate results/hopper_rigid -q --terrain problems/hopper_granular.yaml
    $loam plot results/hopper_rigid -q
fi

# Two hops on rigid ground (the schedule as data): the plan, its replay, its figure.
if wanted hopper_two_hops; then
    solve_into hopper_two_hops
    $loam simulate results/hopper_two_hops -q
    $loam plot results/hopper_two_hops --png-only -q
fi
# The hopper on a rail inclined 0.2 rad over the RFT poppy-seed wrench space; `solve` replays
# it in the MDP simulator itself (replay.csv).
if wanted hopper_rail; then
    solve_into hopper_rail
    $loam plot results/hopper_rail --png-only -q
fi
# The planar monopod hopping 0.3 m forward on sand given as a wrench space; `solve` replays
# its inputs in the MDP simulator (replay.csv).
if wanted monopod_sand_hop; then
    solve_into monopod_sand_hop
    # Its verdict: the solve's own MDP replay (the plan's step), the closed-form grounds, and
    # the MDP simulator again at its 1 ms step (README, "The verdict on a plan").
    $loam validate results/monopod_sand_hop -q \
        --terrain rigid,poppy_seeds,problems/monopod_sand_hop.yaml
    $loam plot results/monopod_sand_hop --png-only -q
fi

# The monopod's periodic stride on that sand (about a minute): `solve` replays it over three
# strides open loop in the MDP simulator (replay.json's strides), `simulate` with the servos.
if wanted monopod_gait_sand; then
    solve_into monopod_gait_sand
    $loam simulate results/monopod_gait_sand -q
    $loam plot results/monopod_gait_sand --png-only --animate -q
fi

# The DEM bed: a poured and settled bed of ~14 000 3-mm grains with the Hertz-Mindlin law (about
# 1.5 minutes on two cores), both 60 mm plans replayed on it by the CPU backend, and the
# intrusion force of the robot's foot driven slowly into the same bed at the scene's step and at
# half of it (the forces must not move by more than 5 %: docs/MODEL.md section 4.1).
if wanted dem; then
    mkdir -p results/dem
    $loam dem prepare problems/beds/poppy_bed.yaml --output results/dem/poppy_bed.bed
    for problem in hopper_granular hopper_rigid; do
        # Exit 1: the replay did not reach the plan's end on the grains; it is written all
        # the same.
        $loam simulate "results/$problem" --backend dem-cpu --bed results/dem/poppy_bed.bed -q \
            || [ $? -eq 1 ]
        $loam plot "results/$problem" -q
    done
    # The verdict on both plans (README, "The verdict on a plan"): every simulator, the DEM
    # over realisations of the bed (6 and 3). The realisations' dem_replay.csv are not
    # committed (.gitignore); their dem.json are.
    $loam validate results/hopper_granular --bed results/dem/poppy_bed.bed --realisations 6 -q
    $loam validate results/hopper_rigid --bed results/dem/poppy_bed.bed --realisations 3 \
        --t-max 0.3 -q || [ $? -eq 1 ]
    # The poppy-seed material calibrated against its targets (docs/DEM.md, "Calibration"; about
    # 9 minutes on two cores): no candidate meets every target, so the command exits 1.
    $loam material calibrate materials/poppy_seeds.yaml \
        --vary contact.rolling_friction=0,0.1,0.2,0.3 \
        --out results/dem/calibration/poppy_seeds || [ $? -eq 1 ]
    $loam dem intrude results/dem/poppy_bed.bed --body disc --radius 0.038 --thickness 0.005 \
        --velocity 0.05 --depth 0.022 --output results/dem/intrusion_disc.csv
    half=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['time_step_s'] / 2)" \
        <($loam dem info results/dem/poppy_bed.bed --json))
    $loam dem intrude results/dem/poppy_bed.bed --body disc --radius 0.038 --thickness 0.005 \
        --velocity 0.05 --depth 0.022 --time-step "$half" --output results/dem/intrusion_disc_half_step.csv

    # The hard-contact law for comparison: the same bed with projected Jacobi, whose force and
    # replay apex depend on the solver's iteration budget (README): both plans at 20, 50, 100
    # and 200 iterations, and the intrusion at 100.
    $loam dem prepare problems/beds/poppy_bed_jacobi.yaml --output results/dem/poppy_bed_jacobi.bed
    $loam dem intrude results/dem/poppy_bed_jacobi.bed --body disc --radius 0.038 --thickness 0.005 \
        --velocity 0.05 --depth 0.02 --iterations 100 --output results/dem/intrusion_disc_jacobi.csv
    echo "plan,iterations,apex_rise_m,settle_sink_m,wall_s" > results/dem/iteration_study.csv
    for problem in hopper_granular hopper_rigid; do
        for iterations in 20 50 100 200; do
            run=$(mktemp -d)
            cp "results/$problem/solution.json" "results/$problem/trajectory.csv" "$run/"
            $loam simulate "$run" --backend dem-cpu --bed results/dem/poppy_bed_jacobi.bed \
                --snapshot-every 0 --iterations "$iterations" -q || true
            python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(','.join(map(str, [sys.argv[2], sys.argv[3], d['achieved_apex_rise_m'], d['settle_sink_m'], round(d['wall_time_s'], 1)])))" \
                "$run/dem-cpu/dem.json" "$problem" "$iterations" >> results/dem/iteration_study.csv
            rm -rf "$run"
        done
    done
fi

# The planar walk-through of README.md: the monopod's forward hop, its replay, its figures.
if wanted monopod_hop; then
    solve_into monopod_hop
    $loam simulate results/monopod_hop -q
    # Its verdict on poppy seeds (the added-mass model) and on sand (the MDP simulator).
    $loam validate results/monopod_hop -q --terrain rigid,poppy_seeds,problems/monopod_sand_hop.yaml
    $loam plot results/monopod_hop --png-only --animate -q
fi
# The monopod hopping up out of poppy seeds (the added-mass terrain under a planar robot).
if wanted monopod_granular_hop; then
    solve_into monopod_granular_hop
    $loam simulate results/monopod_granular_hop -q
    $loam plot results/monopod_granular_hop --png-only -q
fi

# A gait: the monopod's periodic stride on rigid ground, replayed over three strides.
if wanted monopod_gait; then
    solve_into monopod_gait
    $loam simulate results/monopod_gait -q
    $loam plot results/monopod_gait --png-only --animate -q
fi
# The gait's cost of transport against speed on rigid ground and on the spring ground, four
# starts a point (about a minute on 2 cores). Only sweep.csv and the figure are kept: the
# fourteen run folders are 5 MB and each is `loam solve problems/monopod_gait.yaml --set ...`.
if wanted gait-cot; then
    rm -rf results/gait-cot
    $loam sweep problems/monopod_gait.yaml --vary task.speed=0.4,0.5,0.6,0.7,0.8,1.0,1.2 \
        --vary terrain.model=rigid,spring --set starts=4 --out results/gait-cot > /dev/null
    $loam plot results/gait-cot --png-only -q
    find results/gait-cot -mindepth 1 -maxdepth 1 -type d ! -name plots -exec rm -rf {} +
fi

# The stride on sand at five speeds (about 8 minutes on 2 cores): each plan's cost of transport,
# and its three-stride open-loop MDP replay from its solve.
if wanted gait-cot-sand; then
    rm -rf results/gait-cot-sand
    # Exit 1 when a speed does not converge (recorded in sweep.csv); anything else stops here.
    code=0
    $loam sweep problems/monopod_gait_sand.yaml --vary task.speed=0.3,0.35,0.4,0.45,0.5 \
        --out results/gait-cot-sand > /dev/null || code=$?
    [ "$code" -le 1 ] || exit "$code"
    $loam plot results/gait-cot-sand --png-only -q
    find results/gait-cot-sand -mindepth 1 -maxdepth 1 -type d ! -name plots -exec rm -rf {} +
fi

# A planar robot's plan checked on grains: the planar foot's 0.2 m step, planned on rigid
# ground, replayed on its own ground and (without --cheap) in a 34 cm box of DEM grains (about
# 1.5 min to pour, 2.5 min to replay).
if wanted planar_foot_step; then
    solve_into planar_foot_step
    $loam simulate results/planar_foot_step -q
    if ! $cheap; then
        $loam dem prepare problems/beds/planar_box.yaml --output results/dem/planar_box.bed
        $loam simulate results/planar_foot_step --backend dem-cpu --bed results/dem/planar_box.bed \
            --foot-depth 0.1 -q
    fi
    # The figure draws the DEM replay's CSV, which is not committed (.gitignore): without it
    # (a checkout, --cheap) the committed figure stays.
    if [ -f results/planar_foot_step/dem-cpu/dem.json ] \
        && [ ! -f results/planar_foot_step/dem-cpu/dem_replay.csv ]; then
        echo "regenerate.sh: results/planar_foot_step/plots/ kept: no dem-cpu/dem_replay.csv to draw" >&2
    else
        $loam plot results/planar_foot_step --png-only -q
    fi
fi

# The wrench-space terrain (docs/WRENCH_SPACE.md): sections of the shipped Sand-like wrench
# space, and the wrench-space paper's experiments in the maximum-dissipation simulator (a few
# seconds each): drop tests, the accuracy test's straight and curved paths, the quadruped
# standing, pushing its front feet, trotting in place and dropped on a slope.
if wanted wrench_space; then
    $loam wrench-space plot problems/data/wrench_space/rft_sand_like.yaml --out results/wrench_space
    rm -f results/wrench_space/wrench_slices.svg
    $loam wrench-space plot problems/data/wrench_space/dem_poppy_small_bed.yaml --out results/wrench_space/dem_poppy_small_bed
    rm -f results/wrench_space/dem_poppy_small_bed/wrench_slices.svg
fi
if wanted mdp; then
    for scenario in problems/mdp/*.yaml; do
        name=$(basename "$scenario" .yaml)
        rm -rf "results/mdp/$name"
        $loam mdp run "$scenario" --out "results/mdp/$name" --no-plots -q
        $loam plot "results/mdp/$name" --png-only -q
    done
fi
