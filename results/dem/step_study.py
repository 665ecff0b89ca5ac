#!/usr/bin/env python3
"""The disc's intrusion force against the time step over every realisation in results/dem.

Reads the CPU runs (intrusion_disc[_seedK][_half_step|_quarter_step].csv, one per pour and
step) and the GPU runs (gpu_intrusion/seedK_{default,half,quarter}.csv, another realisation
of each pour), takes the force at 5, 10 and 20 mm as results/README.md does (the mean of F_z
over the rows within +-2.5 mm of depth), and prints, per step, the mean over realisations with
its standard error, and the change between steps paired by pour and backend; then the same
for the mean force over the first 20 mm (the work of the intrusion divided by its depth, a
figure that averages the force chains' swings over the whole curve).

    python3 results/dem/step_study.py
"""
import csv
import math
import os
import statistics as st

HERE = os.path.dirname(os.path.abspath(__file__))
DEPTHS = (0.005, 0.010, 0.020)
STEPS = (("default", "", "14.8 us"), ("half", "_half_step", "7.4 us"), ("quarter", "_quarter_step", "3.7 us"))


def forces(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [
        st.mean(float(r["F_z"]) for r in rows if abs(float(r["depth"]) - d) <= 0.0025 + 1e-12)
        for d in DEPTHS
    ]


def mean_force(path, top=0.0, bottom=0.020, depth="depth", force="F_z"):
    """The mean of the force over depths top..bottom, by the trapezoidal rule: the work /
    depth. `depth` and `force` name the CSV's columns (a peer's are depth_m, force_z_N)."""
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    points = [(float(r[depth]), float(r[force])) for r in rows]
    points = [(d, f) for d, f in points if top <= d <= bottom]
    work = sum(0.5 * (f0 + f1) * (d1 - d0) for (d0, f0), (d1, f1) in zip(points, points[1:]))
    return work / (points[-1][0] - points[0][0])


def runs(measure=forces):
    """{(backend, pour, step): [F at 5, 10, 20 mm]} for every file present."""
    found = {}
    for k in range(1, 7):
        seed = "" if k == 1 else f"_seed{k}"
        for step, suffix, _ in STEPS:
            cpu = os.path.join(HERE, f"intrusion_disc{seed}{suffix}.csv")
            gpu = os.path.join(HERE, "gpu_intrusion", f"seed{k}_{step}.csv")
            for backend, path in (("cpu", cpu), ("gpu", gpu)):
                if os.path.exists(path):
                    found[(backend, k, step)] = measure(path)
    return found


def mean_se(values):
    """Mean and standard error; the error is nan for a single value."""
    if len(values) < 2:
        return (values[0] if values else float("nan")), float("nan")
    return st.mean(values), st.stdev(values) / math.sqrt(len(values))


def main():
    found = runs()
    for label, backends in (("CPU", ("cpu",)), ("GPU", ("gpu",)), ("CPU and GPU", ("cpu", "gpu"))):
        print(f"{label}: force at 5 / 10 / 20 mm, mean +- standard error over realisations")
        for step, _, name in STEPS:
            vals = [v for (b, _, s), v in found.items() if b in backends and s == step]
            cells = "  ".join("%.2f +- %.2f N" % mean_se([v[i] for v in vals]) for i in range(3))
            print(f"  {name:8s} n = {len(vals):2d}  {cells}")
        for a, b in (("default", "half"), ("half", "quarter"), ("default", "quarter")):
            pairs = [
                [100 * (found[(bk, k, b)][i] / found[(bk, k, a)][i] - 1) for i in range(3)]
                for bk in backends
                for k in range(1, 7)
                if (bk, k, a) in found and (bk, k, b) in found
            ]
            cells = "  ".join("%+.1f +- %.1f %%" % mean_se([p[i] for p in pairs]) for i in range(3))
            print(f"  {a} -> {b}: n = {len(pairs):2d}  {cells}")


def work():
    found = runs(lambda path: [mean_force(path)])
    print("Mean force over 0-20 mm (work / depth), mean +- standard error over realisations")
    for step, _, name in STEPS:
        vals = [v[0] for (b, _, s), v in found.items() if s == step]
        print(f"  {name:8s} n = {len(vals):2d}  %.2f +- %.2f N" % mean_se(vals))
    for a, b in (("default", "half"), ("half", "quarter"), ("default", "quarter")):
        pairs = [
            100 * (found[(bk, k, b)][0] / found[(bk, k, a)][0] - 1)
            for bk in ("cpu", "gpu")
            for k in range(1, 7)
            if (bk, k, a) in found and (bk, k, b) in found
        ]
        print(f"  {a} -> {b}: n = {len(pairs):2d}  %+.1f +- %.1f %%" % mean_se(pairs))


if __name__ == "__main__":
    main()
    work()
