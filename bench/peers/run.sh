#!/usr/bin/env bash
# The DEM peers (LIGGGHTS, YADE) on loam's beds: see results/dem/peers/README.md.
#
#   bench/peers/run.sh [all|intrusion|speed]
#
# intrusion: for each peer and bed, pour (loam's cloud for the seed), settle, push the disc in;
#   writes <peer>_<bed>_seed<s>.{bed.json,force.csv} and summary.jsonl under $OUT, and the
#   settled shipped bed of LIGGGHTS's first seed as shipped_bed.grains.txt (the speed bed).
# speed: time each peer on each settled bed of SPEED_BEDS at rest ($OUT/<bed>_bed.grains.txt,
#   settled first with LIGGGHTS if missing); prints one JSON line per measurement on stdout,
#   with the bed and the machine's 1-minute load average when the run started (other users'
#   work slows it).
# A peer that is not installed is skipped with "skipped: <peer> not installed" (exit 0).
#
# Environment (defaults in brackets):
#   OUT [results/dem/peers]   where results go        WORK [a temporary folder]  restarts, logs
#   LIGGGHTS_BEDS [small shipped]  LIGGGHTS_SEEDS [1 2]
#   LIGGGHTS_DIVISORS [1]  the intrusion again from the same settled bed at the time step
#                          divided by each (e.g. "1 2 4"): <name>_dt<k>.force.csv, summary lines
#                          with time_step_s; the peer's own time-step study
#   YADE_BEDS [small]              YADE_SEEDS [1]
#   SPEED_BEDS [shipped large]     SPEED_STEPS [2000]  YADE_SPEED_BEDS [shipped]
#   NICE [nice]  (set NICE= to run at normal priority)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
what=${1:-all}
case "$what" in
all | intrusion | speed) ;;
*)
    echo "usage: bench/peers/run.sh [all|intrusion|speed] (got '$what')" >&2
    exit 2
    ;;
esac

out=${OUT:-$root/results/dem/peers}
liggghts_beds=${LIGGGHTS_BEDS-small shipped}
liggghts_seeds=${LIGGGHTS_SEEDS-1 2}
liggghts_divisors=${LIGGGHTS_DIVISORS-1}
yade_beds=${YADE_BEDS-small}
yade_seeds=${YADE_SEEDS-1}
work=${WORK:-$(mktemp -d -t loam-peers.XXXXXX)}
mkdir -p "$out" "$work"
nice_cmd=${NICE-nice}
common() { python3 "$here/common.py" "$@"; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
say() { echo "$*" >&2; }

have_liggghts=0
have_yade=0
command -v liggghts >/dev/null && have_liggghts=1
command -v yade >/dev/null && have_yade=1
[ $have_liggghts = 1 ] || echo "skipped: liggghts not installed"
[ $have_yade = 1 ] || echo "skipped: yade not installed"

radius_of() { common scene "$1" | json_field container_radius; }

# Pour and settle with LIGGGHTS: $work/liggghts_<bed>_seed<s>.{restart,grains,settle.log}.
liggghts_settle() {
    local bed=$1 seed=$2 name="liggghts_$1_seed$2"
    common pour "$bed" "$seed" "$work/$name.data"
    say "liggghts: pouring and settling $bed bed, seed $seed"
    (cd "$work" && $nice_cmd liggghts -in "$here/liggghts/settle.in" -var dir "$here/liggghts" \
        -var R "$(radius_of "$bed")" -var data "$name.data" -var out "$name" \
        -log "$name.settle.log" >/dev/null)
}

liggghts_intrusion() {
    local bed=$1 seed=$2 name="liggghts_$1_seed$2"
    liggghts_settle "$bed" "$seed"
    local settle_time info surface
    local settled
    settled=$(awk '/^SETTLED/ {print $2}' "$work/$name.settle.log" | tail -1)
    settle_time=$(awk '/^SETTLED/ {print $4}' "$work/$name.settle.log" | tail -1)
    info=$(common bed-info "$bed" "$work/$name.grains")
    surface=$(echo "$info" | json_field surface_height_m)
    echo "$info" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d.update(peer="liggghts", seed=int(sys.argv[1]), settled=sys.argv[2] == "yes", settle_time_s=float(sys.argv[3]))
print(json.dumps(d))' "$seed" "$settled" "$settle_time" >"$out/$name.bed.json"
    if [ "$bed" = shipped ] && [ "$seed" = "${liggghts_seeds%% *}" ]; then
        save_speed_bed "$work/$name.grains" shipped
    fi
    common disc-stl "$work/disc.stl"
    say "liggghts: intrusion into $bed bed, seed $seed (surface $surface m)"
    (cd "$work" && $nice_cmd liggghts -in "$here/liggghts/intrude.in" -var dir "$here/liggghts" \
        -var R "$(radius_of "$bed")" -var restart "$name.restart" -var stl disc.stl \
        -var surface "$surface" -var steps "$(common steps)" -var out "$name" \
        -log "$name.intrude.log" >/dev/null)
    common liggghts-csv "$work/$name.force.txt" "$out/$name.force.csv"
    local k dt steps
    steps=$(common steps)
    for k in $liggghts_divisors; do
        [ "$k" = 1 ] && continue
        dt=$(common time-step "$k")
        say "liggghts: intrusion into $bed bed, seed $seed, time step / $k"
        # The same travel in k times the steps; a force row still every 0.1 mm (148 steps at
        # the default step, intrude.in's row).
        (cd "$work" && $nice_cmd liggghts -in "$here/liggghts/intrude.in" -var dir "$here/liggghts" \
            -var R "$(radius_of "$bed")" -var restart "$name.restart" -var stl disc.stl \
            -var surface "$surface" -var steps "$((steps * k))" -var dt "$dt" \
            -var row "$((148 * k))" -var out "${name}_dt$k" -log "${name}_dt$k.intrude.log" >/dev/null)
        common liggghts-csv "$work/${name}_dt$k.force.txt" "$out/${name}_dt$k.force.csv"
        common summary-line "$out/$name.bed.json" "$out/${name}_dt$k.force.csv" "$dt" \
            >>"$out/summary.jsonl"
    done
}

yade_intrusion() {
    local bed=$1 seed=$2 name="yade_$1_seed$2"
    say "yade: pouring, settling and intrusion, $bed bed, seed $seed"
    (cd "$work" && $nice_cmd yade -n -j1 -x "$here/yade/bed.py" intrude "$bed" "$seed" \
        "$work/$name" >"$work/$name.log" 2>&1)
    cp "$work/$name.bed.json" "$work/$name.force.csv" "$out/"
}

summarise() {
    common summary-line "$out/$1.bed.json" "$out/$1.force.csv" >>"$out/summary.jsonl"
}

# The beds the speed runs time: settled grains as "x y z r" lines. save_speed_bed DUMP BED
save_speed_bed() {
    awk -v bed="$2" 'BEGIN {print "# x y z r: the " bed " bed settled by LIGGGHTS (bench/peers/run.sh)"}
         f {print $1, $2, $3, $4} /^ITEM: ATOMS/ {f = 1}' "$1" >"$out/$2_bed.grains.txt"
}

# study PEER BEDS SEEDS: the intrusion study of one peer.
study() {
    local peer=$1 bed seed
    for bed in $2; do
        for seed in $3; do
            "${peer}_intrusion" "$bed" "$seed"
            summarise "${peer}_${bed}_seed$seed"
        done
    done
}

if [ "$what" = all ] || [ "$what" = intrusion ]; then
    [ $have_liggghts = 0 ] || study liggghts "$liggghts_beds" "$liggghts_seeds"
    [ $have_yade = 0 ] || study yade "$yade_beds" "$yade_seeds"
fi

if [ "$what" = all ] || [ "$what" = speed ]; then
    steps=${SPEED_STEPS:-2000}
    for bed in ${SPEED_BEDS-shipped large}; do
        grains=$out/${bed}_bed.grains.txt
        if [ ! -f "$grains" ] && [ $have_liggghts = 1 ]; then
            liggghts_settle "$bed" 1
            save_speed_bed "$work/liggghts_${bed}_seed1.grains" "$bed"
        fi
        if [ ! -f "$grains" ]; then
            echo "skipped: speed on the $bed bed (no settled bed and no liggghts to settle one)"
            continue
        fi
        common grains-data "$bed" "$grains" "$work/speed.data"
        if [ $have_liggghts = 1 ]; then
            for np in 1 2; do
                launcher=()
                if [ "$np" = 2 ]; then
                    command -v mpirun >/dev/null || { echo "skipped: liggghts on 2 processes (no mpirun)"; continue; }
                    launcher=(mpirun --allow-run-as-root --oversubscribe -np 2)
                fi
                load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo null)
                (cd "$work" && $nice_cmd "${launcher[@]}" liggghts -in "$here/liggghts/speed.in" \
                    -var dir "$here/liggghts" -var R "$(radius_of "$bed")" -var data speed.data \
                    -var steps "$steps" -log "speed_np$np.log" >/dev/null)
                version=$(head -1 "$work/speed_np$np.log" | sed -E 's/.*Version ([^,]*),.*/\1/')
                awk -v np="$np" -v version="$version" -v steps="$steps" -v load="$load" -v bed="$bed" '
                    /^Loop time of/ && $9 == steps {
                        printf "{\"peer\": \"liggghts\", \"version\": \"%s\", \"bed\": \"%s\", \"processes\": %d, \"grains\": %d, \"steps\": %d, \"wall_s\": %s, \"particle_steps_per_s\": %.6g, \"load_avg_1min\": %s}\n",
                            version, bed, np, $12, steps, $4, $12 * steps / $4, load }' "$work/speed_np$np.log" | tail -1
            done
        fi
        # YADE is about 40 times slower: by default it times the shipped bed only.
        if [ $have_yade = 1 ] && [[ " ${YADE_SPEED_BEDS-shipped} " == *" $bed "* ]]; then
            cp "$grains" "$work/speed.grains"
            for threads in 1 2; do
                (cd "$work" && $nice_cmd yade -n -j"$threads" -x "$here/yade/bed.py" speed "$bed" 0 \
                    "$work/speed" "$steps" 2>&1) | sed -n 's/^PEER_SPEED //p'
            done
        fi
    done
fi
