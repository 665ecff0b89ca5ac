# YADE half of the DEM peer study (results/dem/peers/README.md). Run with
#   yade -n -x bench/peers/yade/bed.py MODE BED SEED OUT [STEPS]
# MODE "intrude": pour and settle bed BED (see bench/peers/common.py) from loam's poured cloud
#   for SEED, write OUT.grains ("x y z r" per grain) and OUT.bed.json, then push the disc in at
#   5 cm/s and write OUT.force.csv.
# MODE "speed": load the settled grains OUT.grains (from either peer) into the container at rest
#   and time STEPS steps; print one JSON line.
# Hertz-Mindlin (Ip2_FrictMat_FrictMat_MindlinPhys + Law2_ScGeom_MindlinPhys_Mindlin) with
# viscous damping from the restitution coefficient in the normal and tangential directions,
# grains rotate, no rolling resistance, no numerical (Cundall) damping.
import json
import math
import os
import sys
import time

import yade.config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), ".."))
import common  # noqa: E402

mode, bed, seed, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# SMOKE=1 in the environment: one settling chunk and three force rows, to check the script.
smoke = os.environ.get("SMOKE") == "1"
scene = common.scene(bed)
R = scene["container_radius"]
G = common.GRAINS
D = common.DISC
E, NU, RHO = G["young"], G["poisson"], G["density"]

grain_mat = O.materials.append(
    FrictMat(young=E, poisson=NU, density=RHO, frictionAngle=math.atan(G["friction"]), label="grain")
)
# Friction of a pair is the smaller of the two materials' (YADE's default): grain-wall 0.3,
# grain-disc 0.5.
wall_mat = O.materials.append(
    FrictMat(young=E, poisson=NU, density=RHO, frictionAngle=math.atan(G["wall_friction"]), label="wall")
)
disc_mat = O.materials.append(
    FrictMat(young=E, poisson=NU, density=RHO, frictionAngle=math.atan(D["friction"]), label="disc")
)

if mode == "intrude":
    cloud = common.pour(bed, seed)
    column = max(g[2] + g[3] for g in cloud) + 0.02
else:
    cloud = [(x, y, z, r, 0.0, 0.0, 0.0) for x, y, z, r in common.read_grains(out + ".grains")]
    column = max(g[2] + g[3] for g in cloud) + 0.05

# The container: a floor plane and a cylinder of 64 facets (its flats 0.13 mm (shipped) or
# 0.07 mm (small) inside the true radius).
O.bodies.append(wall((0, 0, 0), axis=2, sense=1, material=wall_mat))
O.bodies.append(
    geom.facetCylinder(
        (0, 0, column / 2), radius=R, height=column, segmentsNumber=64, wallMask=4, material=wall_mat
    )
)
grain_ids = []
for x, y, z, r, vx, vy, vz in cloud:
    b = sphere((x, y, z), r, material=grain_mat)
    b.state.vel = Vector3(vx, vy, vz)
    grain_ids.append(O.bodies.append(b))

O.dt = common.TIME_STEP
O.engines = [
    ForceResetter(),
    InsertionSortCollider([Bo1_Sphere_Aabb(), Bo1_Facet_Aabb(), Bo1_Wall_Aabb()]),
    InteractionLoop(
        [Ig2_Sphere_Sphere_ScGeom(), Ig2_Facet_Sphere_ScGeom(hertzian=True), Ig2_Wall_Sphere_ScGeom(hertzian=True)],
        [Ip2_FrictMat_FrictMat_MindlinPhys(en=G["restitution"], es=G["restitution"])],
        [Law2_ScGeom_MindlinPhys_Mindlin()],
    ),
    NewtonIntegrator(damping=0.0, gravity=(0, 0, -common.GRAVITY), label="newton"),
]


def mean_kinetic_energy():
    total = 0.0
    for i in grain_ids:
        s = O.bodies[i].state
        total += 0.5 * s.mass * s.vel.squaredNorm()
    return total / len(grain_ids)


def write_grains(path):
    with open(path, "w") as f:
        f.write("# x y z r\n")
        for i in grain_ids:
            b = O.bodies[i]
            p = b.state.pos
            f.write(f"{p[0]:.9e} {p[1]:.9e} {p[2]:.9e} {b.shape.radius:.9e}\n")


if mode == "speed":
    steps = int(sys.argv[5])
    O.run(200, True)  # contacts found, collider warmed up
    load = os.getloadavg()[0]
    start = time.perf_counter()
    O.run(steps, True)
    wall_s = time.perf_counter() - start
    threads = O.numThreads
    print(
        "PEER_SPEED "
        + json.dumps(
            {
                "peer": "yade",
                "version": yade.config.version,
                "threads": threads,
                "grains": len(grain_ids),
                "steps": steps,
                "wall_s": wall_s,
                "particle_steps_per_s": len(grain_ids) * steps / wall_s,
                "load_avg_1min": load,
            }
        )
    )
    sys.exit(0)

# Settle: as loam and the LIGGGHTS script, until the mean translational kinetic energy per
# grain is below 1e-9 J (checked every 2000 steps, after at least 0.05 s; 3 s at most).
chunk = 2000
wall_start = time.perf_counter()
settled = False
while O.time < common.SETTLE_MAX_TIME:
    O.run(chunk, True)
    ke = mean_kinetic_energy()
    print(f"settle t={O.time:.4f} s  mean KE={ke:.3e} J  wall={time.perf_counter() - wall_start:.0f} s", flush=True)
    if O.time >= common.SETTLE_MIN_TIME and ke < common.SETTLE_KINETIC_ENERGY:
        settled = True
        break
    if smoke:
        break
write_grains(out + ".grains")
info = common.bed_info(bed, out + ".grains")
info.update({"peer": "yade", "seed": seed, "settled": settled, "settle_time_s": O.time})
with open(out + ".bed.json", "w") as f:
    f.write(json.dumps(info) + "\n")
print("BED " + json.dumps(info), flush=True)
surface = info["surface_height_m"]

# The disc: a closed flat cylinder of facets (a 24-gon scaled to the disc's area). YADE's
# Ig2_Facet_Sphere_ScGeom knows no mesh: a grain within about sqrt(2 r overlap) of an edge
# touches both facets (and up to 24 at the centre of a face), which shares its load between
# several contacts (a locally stiffer contact) rather than adding force.
n = 24
z0 = surface + D["start_height"] + D["thickness"] / 2
equal_area = D["radius"] * math.sqrt(2 * math.pi / (n * math.sin(2 * math.pi / n)))
disc = geom.facetCylinder(
    (0, 0, z0), radius=equal_area, height=D["thickness"], segmentsNumber=n, wallMask=7, material=disc_mat
)
disc_ids = O.bodies.append(disc)
for i in disc_ids:
    O.bodies[i].state.vel = Vector3(0, 0, -D["speed"])
    O.bodies[i].state.blockedDOFs = "xyzXYZ"  # kinematic: moved by NewtonIntegrator at its velocity
disc_set = set(disc_ids)

travel = D["start_height"] + D["final_depth"]
total_steps = int(math.ceil(travel / (D["speed"] * O.dt)))
row_steps = int(round(D["row_travel"] / (D["speed"] * O.dt)))
if smoke:
    total_steps = 3 * row_steps
sample_every = 4  # the force is sampled every 4 steps and averaged over each row's samples
step0 = O.iter
rows = []
acc = {"depth": 0.0, "fz": 0.0, "fx": 0.0, "fy": 0.0, "n": 0}


def bottom_depth():
    zb = O.bodies[disc_ids[0]].state.pos[2]  # every facet moves with the disc; any one will do
    return surface - (z0 - D["thickness"] / 2 + (zb - disc_first_z))


def sample():
    f = Vector3(0, 0, 0)
    for i in disc_ids:
        f += O.forces.f(i)
    acc["depth"] += bottom_depth()
    acc["fz"] += f[2]
    acc["fx"] += f[0]
    acc["fy"] += f[1]
    acc["n"] += 1


disc_first_z = O.bodies[disc_ids[0]].state.pos[2]
O.engines = O.engines + [PyRunner(command="sample()", iterPeriod=sample_every, initRun=False)]
steps = 0
while steps < total_steps:
    count = min(row_steps, total_steps - steps)
    O.run(count, True)
    steps += count
    if acc["n"]:
        k = acc["n"]
        depth = acc["depth"] / k
        rows.append(
            (
                (depth + D["start_height"]) / D["speed"],  # since the disc started, as LIGGGHTS's
                depth,
                acc["fz"] / k,
                acc["fx"] / k,
                acc["fy"] / k,
            )
        )
    acc = {k: 0.0 for k in acc}
    acc["n"] = 0
    if len(rows) % 25 == 0:
        print(f"intrude depth={rows[-1][1] * 1000:.2f} mm  fz={rows[-1][2]:.3f} N  wall={time.perf_counter() - wall_start:.0f} s", flush=True)

# The grains push the disc up: the facets' force is the grains' force on the disc.
with open(out + ".force.csv", "w") as f:
    f.write("time_s,depth_m,force_z_N,force_x_N,force_y_N\n")
    for r in rows:
        f.write(",".join(f"{v:.6g}" for v in r) + "\n")
print("DONE " + out, flush=True)
