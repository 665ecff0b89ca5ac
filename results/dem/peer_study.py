#!/usr/bin/env python3
"""loam's intrusion force against LIGGGHTS's and YADE's, over every realisation in results/dem.

The force on the 76 mm disc at 5, 10 and 20 mm (mean of F_z over +-2.5 mm of depth, the same
window in every code) on the shipped bed and on the small one, as mean +- standard error over
realisations (pours, and for loam's shipped bed also a GPU run of each pour), the difference of
the means with Welch's t, and each code's own time-step study: the change of the force when
the step is halved and halved again, paired by pour.

Reads results/dem/step_study.py's runs (loam, shipped bed), small_bed_steps.txt (loam, small
bed: the rows of the beds poured at 0.1 T_R) and peers/summary.jsonl (bench/peers/run.sh).

    python3 results/dem/peer_study.py
"""
import json
import math
import os
import re

from step_study import mean_force, mean_se
from step_study import runs as loam_shipped_runs

HERE = os.path.dirname(os.path.abspath(__file__))
DEPTHS = ("5", "10", "20")
PEER_STEP = 1.35e-5  # bench/peers/common.py TIME_STEP


def cell(values):
    m, se = mean_se(values)
    return "%.2f +- %.2f N" % (m, se)


def welch(a, b):
    """(difference of means in % of b's, Welch's t)."""
    (ma, sa), (mb, sb) = mean_se(a), mean_se(b)
    return 100 * (ma / mb - 1), (ma - mb) / math.hypot(sa, sb)


def loam_small():
    """{(seed, step_us): [F5, F10, F20]} for the beds poured at 0.1 T_R."""
    text = open(os.path.join(HERE, "small_bed_steps.txt")).read()
    # The first block holds beds poured at the old step (0.2 T_R): skip it.
    blocks = text.split("\n# ")[1:]
    found = {}
    for block in blocks:
        for line in block.splitlines():
            m = re.match(r"\s*(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+) / ([\d.]+) / ([\d.]+)", line)
            if m:
                seed, step = int(m.group(1)), m.group(2)
                found[(seed, step)] = [float(m.group(i)) for i in (3, 4, 5)]
    return found


def peers():
    """{(peer, bed, dt, seed): [F5, F10, F20]}."""
    found = {}
    for line in open(os.path.join(HERE, "peers", "summary.jsonl")):
        if not line.strip():
            continue
        r = json.loads(line)
        dt = r.get("time_step_s", PEER_STEP)
        key = (r["peer"], r["bed"], round(dt * 1e9), r["seed"])
        found[key] = [r[f"force_{d}mm_wide_N"] for d in DEPTHS]
    return found


def peer_work(bed, divisor):
    """{seed: [mean force over 0-20 mm]} of LIGGGHTS's runs at its step / divisor."""
    found = {}
    folder = os.path.join(HERE, "peers")
    suffix = "" if divisor == 1 else f"_dt{divisor}"
    for name in os.listdir(folder):
        m = re.fullmatch(rf"liggghts_{bed}_seed(\d+){suffix}\.force\.csv", name)
        if m:
            path = os.path.join(folder, name)
            found[int(m.group(1))] = [mean_force(path, depth="depth_m", force="force_z_N")]
    return found


def row(label, runs):
    cells = "  ".join(cell([r[i] for r in runs]) for i in range(3))
    print(f"  {label:34s} n = {len(runs):2d}  {cells}")


def compare(label, a, b):
    cells = "  ".join(
        "%+.1f %% (t = %+.1f)" % welch([r[i] for r in a], [r[i] for r in b]) for i in range(3)
    )
    print(f"  {label:34s}         {cells}")


def paired(label, by_seed_a, by_seed_b):
    seeds = sorted(set(by_seed_a) & set(by_seed_b))
    if not seeds:
        return
    columns = len(by_seed_a[seeds[0]])
    changes = [
        [100 * (by_seed_b[s][i] / by_seed_a[s][i] - 1) for i in range(columns)] for s in seeds
    ]
    cells = "  ".join(
        "%+.1f +- %.1f %%" % mean_se([c[i] for c in changes]) for i in range(columns)
    )
    print(f"  {label:34s} n = {len(seeds):2d}  {cells}")


def main():
    peer = peers()
    ligg = lambda bed, dt: {s: v for (p, b, d, s), v in peer.items() if p == "liggghts" and b == bed and d == dt}
    yade = [v for (p, b, d, s), v in peer.items() if p == "yade" and b == "small"]
    step = round(PEER_STEP * 1e9)

    print("Force at 5 / 10 / 20 mm (mean over +-2.5 mm), mean +- standard error over realisations")
    print("Small bed (12 cm, 4,158 grains):")
    small = loam_small()
    loam_default = [v for (s, dt), v in small.items() if dt == "14.8"]
    loam_half = [v for (s, dt), v in small.items() if dt == "7.4"]
    peer_small = list(ligg("small", step).values())
    row("loam, 14.8 us", loam_default)
    row("loam, 7.4 us", loam_half)
    row("LIGGGHTS, 13.5 us", peer_small)
    row("YADE, 13.5 us", yade)
    row("LIGGGHTS and YADE", peer_small + yade)
    compare("loam 14.8 us against LIGGGHTS", loam_default, peer_small)
    compare("loam 14.8 us against both peers", loam_default, peer_small + yade)

    print("Shipped bed (22 cm, 13,977 grains):")
    shipped = loam_shipped_runs()
    by_step = {
        name: [v for (b, k, s), v in shipped.items() if s == name]
        for name in ("default", "half", "quarter")
    }
    row("loam, 14.8 us (CPU and GPU runs)", by_step["default"])
    peer_steps = {}
    for k in (1, 2, 4):
        runs = ligg("shipped", round(PEER_STEP / k * 1e9))
        if runs:
            peer_steps[k] = runs
            row(f"LIGGGHTS, {13.5 / k:.2f} us", list(runs.values()))
    if 1 in peer_steps:
        compare("loam 14.8 us against LIGGGHTS", by_step["default"], list(peer_steps[1].values()))

    print("Each code's own time-step study, the change paired by pour (mean +- standard error):")
    loam_by = lambda name: {(b, k): v for (b, k, s), v in shipped.items() if s == name}
    paired("loam shipped: 14.8 -> 7.4 us", loam_by("default"), loam_by("half"))
    paired("loam shipped: 7.4 -> 3.7 us", loam_by("half"), loam_by("quarter"))
    paired("loam shipped: 14.8 -> 3.7 us", loam_by("default"), loam_by("quarter"))
    if 1 in peer_steps and 2 in peer_steps:
        paired("LIGGGHTS shipped: 13.5 -> 6.75 us", peer_steps[1], peer_steps[2])
    if 2 in peer_steps and 4 in peer_steps:
        paired("LIGGGHTS shipped: 6.75 -> 3.375 us", peer_steps[2], peer_steps[4])
    if 1 in peer_steps and 4 in peer_steps:
        paired("LIGGGHTS shipped: 13.5 -> 3.375 us", peer_steps[1], peer_steps[4])
    small_by = lambda dt: {s: v for (s, d), v in small.items() if d == dt}
    paired("loam small: 14.8 -> 7.4 us", small_by("14.8"), small_by("7.4"))

    print("Mean force over 0-20 mm (work / depth), shipped bed:")
    loam_work = loam_shipped_runs(lambda path: [mean_force(path)])
    work_by = lambda name: {(b, k): v for (b, k, s), v in loam_work.items() if s == name}
    for name, label in (("default", "14.8"), ("half", "7.4"), ("quarter", "3.7")):
        values = [v[0] for v in work_by(name).values()]
        print(f"  {'loam, ' + label + ' us':34s} n = {len(values):2d}  " + cell(values))
    peer_runs = {k: peer_work("shipped", k) for k in (1, 2, 4)}
    for k, runs in peer_runs.items():
        if runs:
            values = [v[0] for v in runs.values()]
            print(f"  {'LIGGGHTS, %.2f us' % (13.5 / k):34s} n = {len(values):2d}  " + cell(values))
    if peer_runs[1]:
        a = [v[0] for v in work_by("default").values()]
        b = [v[0] for v in peer_runs[1].values()]
        print(f"  {'loam 14.8 us against LIGGGHTS':34s}         " + "%+.1f %% (t = %+.1f)" % welch(a, b))
    paired("loam: 14.8 -> 7.4 us", work_by("default"), work_by("half"))
    paired("loam: 7.4 -> 3.7 us", work_by("half"), work_by("quarter"))
    paired("LIGGGHTS: 13.5 -> 6.75 us", peer_runs[1], peer_runs[2])
    paired("LIGGGHTS: 6.75 -> 3.375 us", peer_runs[2], peer_runs[4])


if __name__ == "__main__":
    main()
