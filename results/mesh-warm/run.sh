#!/usr/bin/env bash
# Warm starts across node counts and schemes (see README.md in this folder).
#
#   bash results/mesh-warm/run.sh [LOAM_BINARY]      # default target/release/loam
#
# For every problems/*.yaml: level 0 is the file's own node counts N_p, level k every phase at
# 2^k (N_p - 1) + 1 nodes (N -> 2N-1 -> 4N-3 -> 8N-7). Every level is solved cold, and every
# level > 0 warm-started from the previous level's warm run (level 0's cold run first), all
# with `--set mesh.tolerance=1000` so that no solve refines its mesh by itself. Every plan is
# replayed on its own model (`loam simulate`). The hopper files also go across schemes: from
# the trapezoidal level-0 plan to Hermite-Simpson at levels 0 and 1 (and those cold).
#
# One solve at a time, each under `timeout 300`. A problem whose level-0 solve exits 2 (the
# wrench-space files refuse `mesh.tolerance`) or takes over 60 s is listed as excluded.
# Problems with more than 3 phases or over 100 nodes in all stop at level BIG_MAX_LEVEL
# (default 2: the 8N-7 level is cut for them to keep the run within about an hour on 2 busy
# cores); the others at MAX_LEVEL (default 3), except those LEVEL_CAP names (below). Set
# BIG_MAX_LEVEL=3 LEVEL_CAP="" for the full set.
#
# Environment: RUNS_DIR (default: a new temp dir; run folders already holding a finished
# record there are reused), MAX_LEVEL, BIG_MAX_LEVEL, PROBLEMS (space-separated names; default
# every problems/*.yaml), TIMEOUT (300), EXCLUDE_OVER_S (60), LEVEL_CAP.
# Writes results/mesh-warm/table.csv (the table), details.csv (more columns per solve) and
# excluded.txt; prints the table as markdown at the end.
set -u -o pipefail
cd "$(dirname "$0")/../.."

LOAM=${1:-target/release/loam}
LOAM=$(realpath "$LOAM")
RUNS=${RUNS_DIR:-$(mktemp -d /tmp/loam-mesh-warm.XXXXXX)}
mkdir -p "$RUNS"
MAX_LEVEL=${MAX_LEVEL:-3}
BIG_MAX_LEVEL=${BIG_MAX_LEVEL:-2}
TIMEOUT=${TIMEOUT:-300}
EXCLUDE_OVER_S=${EXCLUDE_OVER_S:-60}
# Per-problem top levels, e.g. "two_link_hop=1": the slowest chains, cut to keep the run within
# about 75 minutes (two_link_hop's warm and cold 41+41+29 solves take about 5 min together; see
# README.md). LEVEL_CAP="" runs every level.
LEVEL_CAP=${LEVEL_CAP-two_link_hop=1 two_link_spring_hop=1}
OUT=results/mesh-warm
RECORDS="$RUNS/records.tsv"   # one line per solve: problem scheme level nodes start dir rc wall_s
: > "$RECORDS.new"
EXCLUDED="$OUT/excluded.txt"
: > "$EXCLUDED"
HOPPERS="hopper_granular hopper_rigid hopper_two_hops"
started=$(date +%s)

echo "loam: $LOAM ($("$LOAM" --version 2>/dev/null))"
echo "runs: $RUNS"

# Node counts of a problem file's phases, in order (the schedule's `nodes:`), space-separated.
file_nodes() {
    python3 - "$1" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
print(" ".join(str(p["nodes"]) for p in doc["schedule"]))
EOF
}
file_scheme() {
    python3 - "$1" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
print((doc.get("transcription") or {}).get("scheme", "trapezoidal"))
EOF
}

# level_nodes LEVEL N1 N2 ... -> the level's node counts
level_nodes() {
    local k=$1; shift
    local out=()
    for n in "$@"; do out+=($(( (1 << k) * (n - 1) + 1 ))); done
    echo "${out[@]}"
}
join_plus() { local IFS=+; echo "$*"; }

# solve PROBLEM SCHEME LEVEL "NODES" START WARMDIR -> sets $DIR, $RC, $WALL
solve() {
    local p=$1 scheme=$2 level=$3 nodes=$4 start=$5 warm=$6
    local tag="${scheme}_L${level}_${start}"
    DIR="$RUNS/$p/$tag"
    local args=(--set mesh.tolerance=1000 --set "transcription.scheme=$scheme")
    local i=0
    for n in $nodes; do args+=(--set "schedule.$i.nodes=$n"); i=$((i + 1)); done
    [ -n "$warm" ] && args+=(--warm-start "$warm")
    if [ -f "$DIR/record" ]; then
        read -r RC WALL < "$DIR/record"
    else
        rm -rf "$DIR"; mkdir -p "$DIR"
        local t0 t1
        t0=$(date +%s.%N)
        timeout "$TIMEOUT" "$LOAM" solve "problems/$p.yaml" "${args[@]}" --out "$DIR" \
            > "$DIR/solve.out" 2> "$DIR/solve.err"
        RC=$?
        t1=$(date +%s.%N)
        WALL=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
        if [ -f "$DIR/solution.json" ] && [ -f "$DIR/trajectory.csv" ]; then
            timeout "$TIMEOUT" "$LOAM" simulate "$DIR" > "$DIR/simulate.out" 2> "$DIR/simulate.err"
            echo $? > "$DIR/simulate.rc"
        fi
        echo "$RC $WALL" > "$DIR/record"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$scheme" "$level" "$(join_plus $nodes)" \
        "$start" "$DIR" "$RC" "$WALL" >> "$RECORDS.new"
    printf '  %-28s %-16s %-22s %-26s rc=%s %6ss\n' "$p" "$scheme" "$(join_plus $nodes)" \
        "$start" "$RC" "$WALL"
}

if [ -n "${PROBLEMS:-}" ]; then
    problems=$PROBLEMS
else
    problems=$(for f in problems/*.yaml; do basename "$f" .yaml; done)
fi

for p in $problems; do
    f=problems/$p.yaml
    read -r -a n0 <<< "$(file_nodes "$f")"
    scheme=$(file_scheme "$f")
    total=0; for n in "${n0[@]}"; do total=$((total + n)); done
    top=$MAX_LEVEL
    if [ "${#n0[@]}" -gt 3 ] || [ "$total" -gt 100 ]; then top=$BIG_MAX_LEVEL; fi
    for cap in $LEVEL_CAP; do [ "${cap%%=*}" = "$p" ] && top=${cap#*=}; done
    echo "== $p: ${#n0[@]} phases, nodes $(join_plus "${n0[@]}") ($total), $scheme, levels 0-$top"

    # Level 0, cold: the chain's start, and the exclusion test.
    solve "$p" "$scheme" 0 "${n0[*]}" cold ""
    if [ "$RC" = 2 ]; then
        echo "$p: excluded: exit 2: $(grep -m1 . "$DIR/solve.err")" | tee -a "$EXCLUDED"
        grep -v -P "^$p\t" "$RECORDS.new" > "$RECORDS.tmp"; mv "$RECORDS.tmp" "$RECORDS.new"
        continue
    fi
    if python3 -c "import sys; sys.exit(0 if $WALL > $EXCLUDE_OVER_S else 1)"; then
        echo "$p: excluded: its level-0 cold solve took ${WALL} s (over ${EXCLUDE_OVER_S} s)" | tee -a "$EXCLUDED"
        grep -v -P "^$p\t" "$RECORDS.new" > "$RECORDS.tmp"; mv "$RECORDS.tmp" "$RECORDS.new"
        continue
    fi
    prev_warm=$DIR
    prev_nodes=$(join_plus "${n0[@]}")
    for ((k = 1; k <= top; k++)); do
        nodes=$(level_nodes $k "${n0[@]}")
        solve "$p" "$scheme" $k "$nodes" "warm-from-$prev_nodes" "$prev_warm"
        if [ -f "$DIR/solution.json" ]; then
            prev_warm=$DIR
        else
            # No plan (time-out): chain on from this level's cold plan, solved next.
            prev_warm=""
        fi
        warm_dir=$DIR
        solve "$p" "$scheme" $k "$nodes" cold ""
        [ -z "$prev_warm" ] && [ -f "$DIR/solution.json" ] && prev_warm=$DIR
        prev_nodes=$(join_plus $nodes)
        [ -z "$prev_warm" ] && { echo "  chain broken at level $k"; break; }
    done

    # Across schemes: the trapezoidal level-0 plan to Hermite-Simpson at levels 0 and 1.
    if [[ " $HOPPERS " == *" $p "* ]]; then
        if [ "$scheme" = trapezoidal ]; then
            trap_dir=$RUNS/$p/trapezoidal_L0_cold
        else
            solve "$p" trapezoidal 0 "${n0[*]}" cold ""
            trap_dir=$DIR
        fi
        for k in 0 1; do
            nodes=$(level_nodes $k "${n0[@]}")
            solve "$p" hermite_simpson $k "$nodes" "warm-from-$(join_plus "${n0[@]}")-trapezoidal" "$trap_dir"
            [ "$scheme" != hermite_simpson ] && solve "$p" hermite_simpson $k "$nodes" cold ""
        done
    fi
done
mv "$RECORDS.new" "$RECORDS"

# The table: from each run's solution.json and replay.json.
python3 - "$RECORDS" "$OUT" <<'EOF'
import csv, json, math, os, sys
records, out = sys.argv[1], sys.argv[2]

def replay_error(path):
    """The replay's relative error as loam's mesh refinement measures it (api/solve.rs
    replay_error): a gait's worst stride (length, apex); otherwise the largest of the centre of
    mass's peak rise, the task's apex rise and (where it travels over 1 cm) the distance."""
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        return None
    if not r.get("complete", False):
        return math.inf
    strides = r.get("strides") or []
    if strides:
        return max(max(s["length_error_rel"], s["apex_error_rel"]) for s in strides)
    e = max(r["com_peak_error_rel"], r.get("apex_rise_error_rel") or 0.0)
    if abs(r["planned_distance_m"]) > 0.01:
        e = max(e, r["distance_error_rel"])
    return e

def fmt(x, spec):
    return "" if x is None else format(x, spec)

table, details = [], []
for line in open(records):
    p, scheme, level, nodes, start, d, rc, wall = line.rstrip("\n").split("\t")
    sol_path = os.path.join(d, "solution.json")
    sol = json.load(open(sol_path)) if os.path.exists(sol_path) else None
    if sol is None:
        status = "timeout" if rc in ("124", "137") else f"exit {rc}, no plan"
        table.append([p, scheme, nodes, start, status, "false", "", "", "", ""])
        details.append([p, scheme, level, nodes, start, rc, wall] + [""] * 8 + [d])
        continue
    err = replay_error(os.path.join(d, "replay.json"))
    stages = ";".join(f'{s["stage"]}:{s["status"]}:{s["iterations"]}' for s in sol.get("stages") or [])
    ws = sol["provenance"]["warm_start"]
    table.append([p, scheme, nodes, start, sol["status"], str(sol["converged"]).lower(),
                  fmt(sol["objective"], ".7g"), sol["iterations"],
                  fmt(1000 * sol["timing_s"]["solve"], ".1f"), fmt(err, ".3e")])
    details.append([p, scheme, level, nodes, start, rc, wall,
                    fmt(1000 * sol["timing_s"]["setup"], ".1f"),
                    fmt(1000 * sol["timing_s"]["total"], ".1f"),
                    ws.get("kind"), stages,
                    sol["n_variables"], fmt(sol["max_violation"], ".2e"),
                    fmt((sol.get("transcription_error") or {}).get("max"), ".3e"),
                    " ".join(f'{q["name"]}={q["duration_s"]:.5f}' for q in sol["phases"]), d])

with open(os.path.join(out, "table.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["problem", "scheme", "nodes", "start", "status", "converged", "objective",
                "iterations", "solve_ms", "replay_error_rel"])
    w.writerows(table)
with open(os.path.join(out, "details.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["problem", "scheme", "level", "nodes", "start", "exit_code", "wall_s",
                "setup_ms", "total_ms", "warm_start_kind", "stages", "n_variables",
                "max_violation", "transcription_error_max", "phase_durations_s", "run_dir"])
    w.writerows(details)

print()
print("| problem | scheme | nodes | start | status | conv. | objective | iter. | solve ms | replay err. |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in table:
    print("| " + " | ".join(str(x) for x in r) + " |")
EOF
echo
cat "$EXCLUDED"
echo "total wall time: $(( $(date +%s) - started )) s"
