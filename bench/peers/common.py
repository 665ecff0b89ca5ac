#!/usr/bin/env python3
"""Shared pieces of the DEM peer study (bench/peers/README in results/dem/peers/README.md).

The scene, the poured cloud, the disc, and the measurements (surface height, packing fraction,
force at depth) are defined once here so that LIGGGHTS and YADE see the same bed and are
measured the same way. Pure Python (no NumPy) so that the LIGGGHTS half runs anywhere.

Subcommands (each prints JSON or writes the named file):
  scene BED                         the scene's parameters as JSON
  pour BED SEED OUT.data            LIGGGHTS data file of the poured cloud
  pour-xyz BED SEED OUT.txt         the same cloud as "x y z r vx vy vz" lines (YADE)
  disc-stl OUT.stl                  the intruding disc, bottom face at z = 0
  grains-data BED GRAINS OUT.data   LIGGGHTS data file of settled grains, at rest
  steps                             intrusion steps (start height + final depth at 5 cm/s)
  bed-info BED GRAINS               surface height and packing fractions of a settled bed
  liggghts-csv AVE.txt OUT.csv      LIGGGHTS's fix ave/time rows as the force CSV
  summary FORCE.csv                 force at 5, 10, 20 mm depth (+-0.5 mm window means)
  summary-line BED.json FORCE.csv [DT]
                                    one line of summary.jsonl: the bed's figures and the forces
                                    (DT: the intrusion's time step, when not TIME_STEP)
  time-step K                       TIME_STEP / K
  table SUMMARY.jsonl               the results table (markdown): per peer and bed, the mean
                                    over realisations and their range
"""

import json
import math
import sys

# The grains and contact law of problems/beds/poppy_bed.yaml with a soft-sphere law.
GRAINS = {
    "radius": 0.003,  # mean radius [m]
    "size_spread": 0.1,  # radii uniform in radius * (1 +- size_spread)
    "density": 1000.0,  # [kg/m^3]
    "friction": 0.5,  # grain-grain
    "wall_friction": 0.3,  # grain-container (floor and cylinder)
    "young": 1.0e7,  # Young's modulus of grains, walls and disc [Pa]
    "poisson": 0.3,
    "restitution": 0.5,  # every pair of materials
}
GRAVITY = 9.81  # [m/s^2]
TIME_STEP = 1.35e-5  # [s]
FILL_HEIGHT = 0.07  # [m] the count is loam's: fill * area * 0.6 / mean grain volume
FILL_FRACTION = 0.6  # loam's src/sim/dem/scene.rs FILL_FRACTION
SETTLE_KINETIC_ENERGY = 1.0e-9  # settled when the mean translational KE per grain is below [J]
SETTLE_MIN_TIME = 0.05  # [s] never stop earlier
SETTLE_MAX_TIME = 3.0  # [s] give up later
POUR_SPEED = 0.3  # [m/s] scale of the poured grains' random velocities (loam's)

BEDS = {
    "shipped": {"container_radius": 0.11},  # problems/beds/poppy_bed.yaml
    "small": {"container_radius": 0.06},  # 12 cm across
    "large": {"container_radius": 0.24},  # problems/beds/poppy_bed_large.yaml: ~66k grains
}

DISC = {
    "radius": 0.038,  # [m]
    "thickness": 0.005,  # [m]
    "friction": 0.5,  # disc-grain
    "speed": 0.05,  # [m/s] downwards
    "start_height": 0.010,  # [m] lowest face above the surface at the start
    "final_depth": 0.025,  # [m] lowest face below the surface at the end
    "row_travel": 1.0e-4,  # [m] each CSV row averages the force over this much travel
    "segments": 72,  # facets around the rim in the mesh
}

PACKING_LAYER = (0.01, 0.05)  # [m] the layer above the floor the packing fraction is taken over
SUMMARY_DEPTHS = (0.005, 0.010, 0.020)  # [m]
SUMMARY_WINDOW = 0.0005  # [m] half-width of the depth window averaged
# A wider window too: in the narrow small bed the force swings by +-50 % over a few mm
# (force chains to the wall build and break), more than +-0.5 mm averages out.
SUMMARY_WIDE_WINDOW = 0.0025  # [m]


def grain_count(container_radius):
    r, s = GRAINS["radius"], GRAINS["size_spread"]
    mean_volume = 4.0 / 3.0 * math.pi * r**3 * (1.0 + s * s)
    area = math.pi * container_radius**2
    return max(1, round(FILL_HEIGHT * area * FILL_FRACTION / mean_volume))


def scene(bed):
    if bed not in BEDS:
        sys.exit(f"unknown bed '{bed}': expected one of {', '.join(BEDS)}")
    radius = BEDS[bed]["container_radius"]
    return {
        "bed": bed,
        "container_radius": radius,
        "grains": grain_count(radius),
        "grain": GRAINS,
        "gravity": GRAVITY,
        "time_step": TIME_STEP,
        "disc": DISC,
    }


class SplitMix64:
    """loam's generator (src/sim/dem/bed.rs Rng), so that seed s pours loam's cloud for seed s."""

    MASK = (1 << 64) - 1

    def __init__(self, seed):
        self.state = (seed ^ 0x9E3779B97F4A7C15) & self.MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next_u64() >> 11) / float(1 << 53)


def pour(bed, seed):
    """loam's pour (src/sim/dem/bed.rs `pour`, cylinder case): radii uniform in r(1 +- s), a
    jittered lattice 1.5 diameters apart in a layer and 1.1 apart between layers, random
    velocities. Returns [(x, y, z, r, vx, vy, vz)]."""
    radius_c = BEDS[bed]["container_radius"]
    n = grain_count(radius_c)
    rng = SplitMix64(seed)
    r0, s = GRAINS["radius"], GRAINS["size_spread"]
    radii = [r0 * (1.0 + s * (2.0 * rng.uniform() - 1.0)) for _ in range(n)]
    r_max = r0 * (1.0 + s)
    spacing = 2.0 * r_max * 1.5
    jitter = 0.4 * r_max
    layer_spacing = 2.0 * r_max * 1.1
    clearance = r_max + jitter + 1e-3 * r_max
    nx = math.floor(2.0 * (radius_c - clearance) / spacing)
    sites = []
    for ix in range(nx + 1):
        for iy in range(nx + 1):
            x = -radius_c + clearance + ix * spacing
            y = -radius_c + clearance + iy * spacing
            if math.hypot(x, y) <= radius_c - clearance:
                sites.append((x, y))
    grains = []
    site = layer = 0
    for i in range(n):
        x, y = sites[site]
        z = r_max + jitter + layer * layer_spacing
        px = x + jitter * (2.0 * rng.uniform() - 1.0)
        py = y + jitter * (2.0 * rng.uniform() - 1.0)
        pz = z + 0.1 * r_max * rng.uniform()
        vx = POUR_SPEED * (2.0 * rng.uniform() - 1.0)
        vy = POUR_SPEED * (2.0 * rng.uniform() - 1.0)
        vz = -POUR_SPEED * rng.uniform()
        grains.append((px, py, pz, radii[i], vx, vy, vz))
        site += 1
        if site == len(sites):
            site = 0
            layer += 1
    return grains


def write_liggghts_data(bed, grains, path, origin):
    radius_c = BEDS[bed]["container_radius"]
    half = radius_c + 0.005
    top = max(g[2] + g[3] for g in grains) + 0.02
    with open(path, "w") as f:
        f.write(f"bed {bed}: {origin} (bench/peers/common.py)\n\n")
        f.write(f"{len(grains)} atoms\n3 atom types\n\n")
        f.write(f"{-half:.6f} {half:.6f} xlo xhi\n{-half:.6f} {half:.6f} ylo yhi\n")
        f.write(f"-0.005 {max(top, 0.2):.6f} zlo zhi\n\nAtoms\n\n")
        for i, (x, y, z, r, *_v) in enumerate(grains, 1):
            f.write(f"{i} 1 {2 * r:.12e} {GRAINS['density']} {x:.12e} {y:.12e} {z:.12e}\n")
        f.write("\nVelocities\n\n")
        for i, (*_x, vx, vy, vz) in enumerate(grains, 1):
            f.write(f"{i} {vx:.12e} {vy:.12e} {vz:.12e} 0 0 0\n")


def intrusion_steps():
    travel = DISC["start_height"] + DISC["final_depth"]
    return math.ceil(travel / (DISC["speed"] * TIME_STEP) - 1e-9)


def liggghts_csv(ave_path, csv_path):
    """fix ave/time rows "step depth fz fx fy" (means over 0.1 mm of travel) as CSV, with the
    time since the disc started (from the depth: it moves at constant speed)."""
    with open(ave_path) as f, open(csv_path, "w") as out:
        out.write("time_s,depth_m,force_z_N,force_x_N,force_y_N\n")
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            _step, depth, fz, fx, fy = (float(v) for v in line.split())
            t = (depth + DISC["start_height"]) / DISC["speed"]
            out.write(f"{t:.6g},{depth:.6g},{fz:.6g},{fx:.6g},{fy:.6g}\n")


def write_xyz(bed, seed, path):
    with open(path, "w") as f:
        for g in pour(bed, seed):
            f.write(" ".join(f"{v:.12e}" for v in g) + "\n")


def disc_triangles():
    """A closed flat cylinder: bottom face at z = 0, top at the thickness, rim of `segments`
    rectangles, faces as fans of thin triangles from the centre."""
    R, h, n = DISC["radius"], DISC["thickness"], DISC["segments"]
    rim = [(R * math.cos(2 * math.pi * k / n), R * math.sin(2 * math.pi * k / n)) for k in range(n)]
    tris = []
    for k in range(n):
        (x0, y0), (x1, y1) = rim[k], rim[(k + 1) % n]
        tris.append(((0, 0, 0), (x1, y1, 0), (x0, y0, 0)))  # bottom, normal -z
        tris.append(((0, 0, h), (x0, y0, h), (x1, y1, h)))  # top, normal +z
        tris.append(((x0, y0, 0), (x1, y1, 0), (x1, y1, h)))  # rim
        tris.append(((x0, y0, 0), (x1, y1, h), (x0, y0, h)))
    return tris


def write_disc_stl(path):
    def normal(a, b, c):
        u = [b[i] - a[i] for i in range(3)]
        v = [c[i] - a[i] for i in range(3)]
        n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
        norm = math.sqrt(sum(x * x for x in n))
        return [x / norm for x in n]

    with open(path, "w") as f:
        f.write("solid disc\n")
        for t in disc_triangles():
            f.write("  facet normal {:.9e} {:.9e} {:.9e}\n    outer loop\n".format(*normal(*t)))
            for p in t:
                f.write("      vertex {:.9e} {:.9e} {:.9e}\n".format(*p))
            f.write("    endloop\n  endfacet\n")
        f.write("endsolid disc\n")


def read_grains(path):
    """Settled grains from "x y z r" lines (further columns and "#" lines ignored) or from a
    LIGGGHTS dump whose first four columns are x y z radius."""
    grains = []
    with open(path) as f:
        lines = f.readlines()
    if lines and lines[0].startswith("ITEM:"):  # a LIGGGHTS dump: rows after "ITEM: ATOMS"
        lines = lines[next(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS")) + 1 :]
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        x, y, z, r = (float(v) for v in line.split()[:4])
        grains.append((x, y, z, r))
    return grains


def surface_height(grains, container_radius):
    """loam's definition (src/sim/dem/bed.rs `surface_height`): square columns one mean grain
    diameter wide on a grid anchored at (-R, -R); in each column whose grains have centres
    within R/2 of the axis, the highest grain top z + r; the surface is the mean of those."""
    mean_radius = sum(g[3] for g in grains) / len(grains)
    width = 2.0 * mean_radius
    half = container_radius
    n = math.ceil(2.0 * half / width) + 1
    top = {}
    for x, y, z, r in grains:
        if math.hypot(x, y) >= 0.5 * container_radius:
            continue
        i = min(max(math.floor((x + half) / width), 0), n - 1)
        j = min(max(math.floor((y + half) / width), 0), n - 1)
        top[(i, j)] = max(top.get((i, j), -math.inf), z + r)
    return sum(top.values()) / len(top)


def slab_volume(z, r, lo, hi):
    """Volume of the sphere (centre height z, radius r) between the planes z = lo and z = hi."""
    a, b = max(lo, z - r) - z, min(hi, z + r) - z
    if b <= a:
        return 0.0
    return math.pi * (r * r * (b - a) - (b**3 - a**3) / 3.0)


def bed_info(bed, path):
    radius_c = BEDS[bed]["container_radius"]
    grains = read_grains(path)
    surface = surface_height(grains, radius_c)
    area = math.pi * radius_c**2
    lo, hi = PACKING_LAYER
    layer = sum(slab_volume(z, r, lo, hi) for _x, _y, z, r in grains)
    total = sum(4.0 / 3.0 * math.pi * r**3 for *_p, r in grains)
    return {
        "bed": bed,
        "grains": len(grains),
        "surface_height_m": surface,
        "packing_fraction_layer": layer / (area * (hi - lo)),
        "packing_fraction_bulk": total / (area * surface),
    }


def read_force_csv(path):
    rows = []
    with open(path) as f:
        header = f.readline().strip().split(",")
        d, fz = header.index("depth_m"), header.index("force_z_N")
        for line in f:
            cols = line.strip().split(",")
            rows.append((float(cols[d]), float(cols[fz])))
    return rows


def force_summary(path):
    rows = read_force_csv(path)
    out = {}
    for depth in SUMMARY_DEPTHS:
        for suffix, half_width in (("", SUMMARY_WINDOW), ("_wide", SUMMARY_WIDE_WINDOW)):
            window = [f for d, f in rows if abs(d - depth) <= half_width]
            key = f"force_{round(depth * 1000)}mm{suffix}_N"
            out[key] = sum(window) / len(window) if window else None
    # Where the disc first meets the bed, for re-referencing the depth to another surface.
    out["depth_force_first_1N_m"] = next((d for d, f in rows if f >= 1.0), None)
    return out


def table(path):
    runs = [json.loads(line) for line in open(path) if line.strip()]
    groups = {}
    for run in runs:
        dt = run.get("time_step_s", TIME_STEP)
        groups.setdefault((run["peer"], run["bed"], dt), []).append(run)
    keys = [
        ("force_5mm_N", "F(5 mm) [N]", "{:.1f}"),
        ("force_10mm_N", "F(10 mm) [N]", "{:.1f}"),
        ("force_20mm_N", "F(20 mm) [N]", "{:.1f}"),
        ("force_5mm_wide_N", "F(5 +- 2.5 mm) [N]", "{:.1f}"),
        ("force_10mm_wide_N", "F(10 +- 2.5 mm) [N]", "{:.1f}"),
        ("force_20mm_wide_N", "F(20 +- 2.5 mm) [N]", "{:.1f}"),
        ("packing_fraction_layer", "phi (1-5 cm)", "{:.3f}"),
        ("packing_fraction_bulk", "phi (bulk)", "{:.3f}"),
        ("surface_height_m", "surface [mm]", "{:.1f}"),
        ("settle_time_s", "settle [s]", "{:.2f}"),
    ]
    lines = ["| peer | bed | dt [us] | grains | seeds | " + " | ".join(k[1] for k in keys) + " |"]
    lines.append("|---" * (5 + len(keys)) + "|")
    for (peer, bed, dt), group in sorted(groups.items(), key=lambda g: (g[0][1], g[0][0], -g[0][2])):
        group = sorted(group, key=lambda r: r["seed"])
        seeds = ", ".join(str(r["seed"]) for r in group)
        cells = [peer, bed, "%.2f" % (dt * 1e6), str(group[0]["grains"]), seeds]
        for key, _title, fmt in keys:
            scale = 1000.0 if key == "surface_height_m" else 1.0
            values = [r[key] * scale for r in group if r.get(key) is not None]
            if not values:
                cells.append("-")
                continue
            mean = sum(values) / len(values)
            cell = fmt.format(mean)
            if len(values) > 1:
                cell += " (" + fmt.format(min(values)) + " to " + fmt.format(max(values)) + ")"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "scene":
        print(json.dumps(scene(args[0])))
    elif cmd == "pour":
        scene(args[0])
        write_liggghts_data(args[0], pour(args[0], int(args[1])), args[2], f"poured, seed {args[1]}")
    elif cmd == "grains-data":
        scene(args[0])
        grains = [(x, y, z, r, 0.0, 0.0, 0.0) for x, y, z, r in read_grains(args[1])]
        write_liggghts_data(args[0], grains, args[2], f"settled grains of {args[1]} at rest")
    elif cmd == "steps":
        print(intrusion_steps())
    elif cmd == "liggghts-csv":
        liggghts_csv(args[0], args[1])
    elif cmd == "pour-xyz":
        scene(args[0])
        write_xyz(args[0], int(args[1]), args[2])
    elif cmd == "disc-stl":
        write_disc_stl(args[0])
    elif cmd == "bed-info":
        scene(args[0])
        print(json.dumps(bed_info(args[0], args[1])))
    elif cmd == "summary-line":
        line = json.load(open(args[0]))
        line.update(force_summary(args[1]))
        if len(args) > 2:
            line["time_step_s"] = float(args[2])
        print(json.dumps(line))
    elif cmd == "time-step":
        print(repr(TIME_STEP / int(args[0])))
    elif cmd == "table":
        table(args[0])
    elif cmd == "summary":
        print(json.dumps(force_summary(args[0])))
    else:
        sys.exit(f"unknown subcommand '{cmd}'\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv)
