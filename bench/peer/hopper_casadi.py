#!/usr/bin/env python3
"""The hopper's jump written out by hand with CasADi's Python API: `loam bench`'s peer.

The same optimal control problem as loam's (docs/MODEL.md sections 1 and 2; the NLP stated in
src/planner/mod.rs), transcribed the plain way: SX symbols for every node's state and control
and every phase's duration, one `casadi.nlpsol('solver', 'ipopt', ...)` over the whole NLP,
solved from the all-zero guess (the paper's) with the IPOPT options loam ran with.

Input (a file named on the command line, or stdin): a JSON object with
  `problem`         the resolved problem, every field filled in (as in loam's solution.json)
  `solver_options`  the IPOPT options in effect (as in loam's solution.json)
  `x0`              optional: the starting point in place of zeros, in the NLP's variable
                    order (loam's: per phase, (x, u) at each node, then the duration)
Output: one JSON line on stdout:
  {"objective", "iterations", "status", "converged", "setup_s", "solve_s"}
  (and the solution `x`, in the same order, with --with-x)
With --evaluate it solves nothing and prints the NLP's bounds (lbx, ubx, lbg, ubg; null where
infinite) and f and g at each vector of the input's `points`, rows in loam's order.
where setup_s is building the NLP and the solver object and solve_s the solver call. Loading
CasADi's IPOPT plugin happens before the clock starts: like importing casadi, it is process
start-up, which the caller measures around the process.

Run it with the casadi==3.8.2 package that loam's build provisions on PYTHONPATH:
  PYTHONPATH=~/.cache/loam/casadi-3.8.2 python3 bench/peer/hopper_casadi.py results/x/solution.json
"""

import argparse
import json
import math
import sys
import time

import casadi as ca

# The state, in loam's order.
Z_M, V_M, Z_R, V_R, Z_F, V_F, E, Z_D = range(8)
N_X, N_U = 8, 1
INF = float("inf")


def fail(message):
    sys.stderr.write(f"hopper_casadi.py: {message}\n")
    sys.exit(2)


class Hopper:
    """MODEL.md section 1, on rigid ground or the added-mass bed of section 2."""

    def __init__(self, problem):
        r = problem["robot"]
        self.m_m, self.m_r, self.m_f = r["motor_mass"], r["rod_mass"], r["foot_mass"]
        self.k_s, self.c_s, self.l_0 = (
            r["spring_stiffness"],
            r["spring_damping"],
            r["spring_rest_length"],
        )
        self.K_m, self.P_p, self.V_f = (
            r["force_constant"],
            r["position_gain"],
            r["velocity_feedforward"],
        )
        self.V_p, self.V_i = r["velocity_gain"], r["integral_gain"]
        self.g = problem["gravity"]
        t = problem["terrain"]
        self.granular = t["model"] == "added_mass"
        if self.granular:
            self.R = r["foot_radius"]
            self.mu = t["recruitment_rate"]
            self.theta = math.radians(t["shear_band_angle_deg"])
            self.c_g, self.phi, self.rho = (
                t["surrounding_mass_scaling"],
                t["volume_fraction"],
                t["grain_density"],
            )
            self.k_sh, self.sigma, self.b = (
                t["penetration_stiffness"],
                t["resistive_stress"],
                t["drag_scaling"],
            )
            z, v = ca.SX.sym("z_f"), ca.SX.sym("v_f")
            self.bed = ca.Function("bed", [z, v], list(self.resistance(z, v)))

    def spring(self, x):
        return self.k_s * (x[Z_F] - x[Z_R] + self.l_0) - self.c_s * (x[V_R] - x[V_F])

    def velocity_error(self, x, u):
        return (
            self.P_p * (x[Z_D] - (x[Z_M] - x[Z_R]))
            + self.V_f * u
            - (x[V_M] - x[V_R])
        )

    def motor(self, x, u):
        return self.K_m * (self.V_p * self.velocity_error(x, u) + self.V_i * x[E])

    def ground_load(self, x):
        return self.spring(x) + self.m_f * self.g

    def momentum(self, x):
        return self.m_m * x[V_M] + self.m_r * x[V_R] + self.m_f * x[V_F]

    def resistance(self, z_f, v_f):
        """The bed's force before the added-mass inertia term, and the added mass."""
        area = math.pi * self.R * self.R
        d_c = self.R * math.tan(self.theta) / self.mu
        density = self.c_g * self.phi * self.rho * self.mu
        depth = ca.fmax(-z_f, 0)
        s = ca.fmin(depth / d_c, 1)
        uncovered = 1 - s
        a_flat = uncovered**2 * area
        i_flat = (1 - uncovered**2 * uncovered) * (area * d_c / 3)
        i_cone = (depth * area - i_flat) / math.cos(self.theta)
        f_hyd = i_flat * (self.k_sh / area) + i_cone * self.sigma
        drag = ca.if_else(z_f < 0, a_flat * v_f**2 * (self.b * density), 0)
        return f_hyd + drag, i_flat * density

    def dynamics(self, stance, x, u):
        F_s, F_m = self.spring(x), self.motor(x, u)
        if not stance:
            a_f = -F_s / self.m_f - self.g
        elif self.granular:
            force, added_mass = self.resistance(x[Z_F], x[V_F])
            a_f = (force - self.ground_load(x)) / (added_mass + self.m_f)
        else:
            a_f = 0
        return ca.vertcat(
            x[V_M],
            F_m / self.m_m - self.g,
            x[V_R],
            (F_s - F_m) / self.m_r - self.g,
            x[V_F],
            a_f,
            self.velocity_error(x, u),
            u,
        )

    def rest_state(self):
        """At rest before the jump, the actuator at mid-stroke."""
        weight = (self.m_m + self.m_r + self.m_f) * self.g
        z_f = -self.rest_depth(weight) if self.granular else 0.0
        z_r = z_f + self.l_0 - (self.m_m + self.m_r) * self.g / self.k_s
        e = self.m_m * self.g / (self.K_m * self.V_i)
        return [z_r, 0.0, z_r, 0.0, z_f, 0.0, e, 0.0]

    def rest_depth(self, load):
        """Bisection for the depth whose static resistance carries `load`."""
        static = lambda d: float(self.bed(-d, 0)[0])
        high = self.R * math.tan(self.theta) / self.mu
        while static(high) < load:
            high *= 2
        low = 0.0
        for _ in range(200):
            mid = 0.5 * (low + high)
            if static(mid) < load:
                low = mid
            else:
                high = mid
        return 0.5 * (low + high)


def transcribe(problem):
    """The NLP {x, f, g} with its bounds."""
    robot = Hopper(problem)
    task = problem["task"]
    phases = problem["phases"]
    hops = len(phases) // 2
    if [p["domain"] for p in phases] != ["stance", "flight"] * hops or (
        robot.granular and hops != 1
    ):
        fail("the peer plans stance and flight in turn (one hop on a granular bed)")
    hermite_simpson = problem["transcription"]["scheme"] == "hermite_simpson"

    w, lbw, ubw = [], [], []
    g, lbg, ubg = [], [], []
    J = 0
    nodes = []  # per phase: [(x, u)] at its nodes

    def variable(name, n, lb, ub):
        v = ca.SX.sym(name, n)
        w.append(v)
        lbw.extend(lb)
        ubw.extend(ub)
        return v

    def constraint(expr, lb, ub):
        g.append(expr)
        lbg.append(lb)
        ubg.append(ub)

    # Variables, per phase: (x, u) at each node, the midpoints (Hermite-Simpson), the duration.
    durations, midpoints = [], []
    for p, phase in enumerate(phases):
        stance = phase["domain"] == "stance"
        lbx, ubx = [-INF] * N_X, [INF] * N_X
        if stance and robot.granular:
            ubx[V_F] = 0.0  # the bed never pushes the foot back up
        if not stance and not robot.granular:
            lbx[Z_F] = 0.0
        points = []
        for k in range(phase["nodes"]):
            x = variable(f"x_{p}_{k}", N_X, lbx, ubx)
            u = variable(f"u_{p}_{k}", N_U, [-INF], [INF])
            points.append((x, u))
        mids = []
        if hermite_simpson:
            for k in range(phase["nodes"] - 1):
                x = variable(f"xm_{p}_{k}", N_X, lbx, ubx)
                u = variable(f"um_{p}_{k}", N_U, [-INF], [INF])
                mids.append((x, u))
        nodes.append(points)
        midpoints.append(mids)
        lo, hi = phase["duration"]
        durations.append(variable(f"T_{p}", 1, [lo], [hi]))

    # Start at rest: fixed by bounds, the actuator position free within the stroke or fixed.
    rest = robot.rest_state()
    start_lb, start_ub = list(rest), list(rest)
    if task["start_position"] == "free":
        start_lb[Z_M] -= task["stroke"]
        start_ub[Z_M] += task["stroke"]
        start_lb[Z_D], start_ub[Z_D] = -INF, INF
    else:
        a = float(task["start_position"])
        start_lb[Z_M] += a
        start_ub[Z_M] += a
        start_lb[Z_D] = start_ub[Z_D] = a
    for i in range(N_X):
        lbw[i] = max(lbw[i], start_lb[i])
        ubw[i] = min(ubw[i], start_ub[i])
    if robot.granular:
        # Takeoff: the foot has stopped sinking.
        i = (phases[0]["nodes"] - 1) * (N_X + N_U) + V_F
        lbw[i], ubw[i] = 0.0, 0.0

    # Collocation defects, running cost and path constraints.
    for p, phase in enumerate(phases):
        stance = phase["domain"] == "stance"
        h = durations[p] / (phase["nodes"] - 1)
        f = lambda x, u: robot.dynamics(stance, x, u)
        cost = lambda u: 0.5 * u**2
        points = nodes[p]
        for k in range(phase["nodes"] - 1):
            (x0, u0), (x1, u1) = points[k], points[k + 1]
            if hermite_simpson:
                xm, um = midpoints[p][k]
                f0, fm, f1 = f(x0, u0), f(xm, um), f(x1, u1)
                constraint(xm - 0.5 * (x0 + x1) - h / 8 * (f0 - f1), [0] * N_X, [0] * N_X)
                constraint(x1 - x0 - h / 6 * (f0 + 4 * fm + f1), [0] * N_X, [0] * N_X)
                J += h / 6 * (cost(u0) + 4 * cost(um) + cost(u1))
            else:
                constraint(x1 - x0 - h / 2 * (f(x0, u0) + f(x1, u1)), [0] * N_X, [0] * N_X)
                J += h / 2 * (cost(u0) + cost(u1))
        for x, u in points + midpoints[p]:
            constraint(robot.motor(x, u), [-task["max_motor_force"]], [task["max_motor_force"]])
            constraint(x[Z_M] - x[Z_R], [-task["stroke"]], [task["stroke"]])
            constraint(x[Z_R] - x[Z_F], [task["min_rod_foot_gap"]], [INF])
            if stance and not robot.granular:
                constraint(robot.ground_load(x), [0], [INF])

    # State and command continuous at takeoff; at touchdown (rigid ground, several hops) the
    # foot is on the ground and a plastic impact stops it, the rest continuous.
    for p in range(len(phases) - 1):
        (x0, u0), (x1, u1) = nodes[p][-1], nodes[p + 1][0]
        if phases[p + 1]["domain"] == "stance":
            constraint(x0[Z_F], [0], [0])
            for i in range(N_X):
                constraint(x1[i] if i == V_F else x1[i] - x0[i], [0], [0])
            constraint(u1 - u0, [0], [0])
        else:
            constraint(ca.vertcat(x1 - x0, u1 - u0), [0] * (N_X + N_U), [0] * (N_X + N_U))

    x_to = nodes[0][-1][0]
    x_start, u_start = nodes[0][0]
    x_apex = nodes[-1][-1][0]
    constraint(x_start[Z_D] - (x_start[Z_M] - x_start[Z_R]), [0], [0])
    if robot.granular:
        # Takeoff once the spring pulls the foot up; in flight the foot stays above that height.
        constraint(robot.ground_load(x_to), [-INF], [0])
        for x, _ in nodes[1][1:]:
            constraint(x[Z_F] - x_to[Z_F], [0], [INF])
    else:
        for p in range(0, len(phases), 2):  # every stance ends at a take-off
            constraint(robot.ground_load(nodes[p][-1][0]), [0], [0])
    constraint(robot.momentum(x_apex), [0], [0])  # the flight ends at the apex
    height = task["apex_height"]
    constraint(x_apex[Z_R] - x_start[Z_R], [height], [height])

    nlp = {"x": ca.vertcat(*w), "f": J, "g": ca.vertcat(*g)}
    bounds = {
        "lbx": lbw,
        "ubx": ubw,
        "lbg": [b for row in lbg for b in row],
        "ubg": [b for row in ubg for b in row],
    }
    return nlp, bounds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="the JSON input (default: stdin)")
    parser.add_argument(
        "--with-x", action="store_true", help="add the solution vector `x` to the output"
    )
    parser.add_argument(
        "--evaluate",
        action="store_true",
        help="solve nothing: print the NLP's bounds, and f and g at each of the input's "
        "`points` (for comparing the transcription with loam's)",
    )
    args = parser.parse_args()
    try:
        with open(args.file) if args.file else sys.stdin as stream:
            data = json.load(stream)
    except (OSError, ValueError) as e:
        fail(f"cannot read the problem JSON from {args.file or 'stdin'}: {e}")
    for key in ("problem", "solver_options"):
        if key not in data:
            fail(
                f"the JSON has no `{key}`: give loam's solution.json of the run (it has "
                "`problem` and `solver_options`) or an object with both"
            )
    problem, options = data["problem"], data["solver_options"]
    if problem.get("robot", {}).get("model", "hopper") != "hopper":
        fail("the peer transcribes the hopper only")

    if args.evaluate:
        nlp, bounds = transcribe(problem)
        nlp_f = ca.Function("nlp", [nlp["x"]], [nlp["f"], nlp["g"]])
        values = [nlp_f(point) for point in data.get("points", [])]
        # JSON has no infinity: an infinite bound is null.
        finite = lambda v: [b if math.isfinite(b) else None for b in v]
        result = {key: finite(value) for key, value in bounds.items()}
        result["f"] = [float(f) for f, _ in values]
        result["g"] = [g.full().ravel().tolist() for _, g in values]
        print(json.dumps(result))
        return

    ca.load_nlpsol("ipopt")

    started = time.perf_counter()
    nlp, bounds = transcribe(problem)
    solver = ca.nlpsol("solver", "ipopt", nlp, {"ipopt": options, "print_time": False})
    built = time.perf_counter()
    solution = solver(x0=data.get("x0", 0), **bounds)
    solved = time.perf_counter()

    stats = solver.stats()
    result = {
        "objective": float(solution["f"]),
        "iterations": stats["iter_count"],
        "status": stats["return_status"],
        "converged": bool(stats["success"]),
        "setup_s": built - started,
        "solve_s": solved - built,
    }
    if args.with_x:
        result["x"] = solution["x"].full().ravel().tolist()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
