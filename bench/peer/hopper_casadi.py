#!/usr/bin/env python3
"""The hopper's jump written out by hand with CasADi's Python API: `loam bench`'s peer.

The optimal control problem loam plans for the hopper's robot file (robots/hopper.yaml under
problems/hopper_granular.yaml: docs/MODEL.md sections 1, 2 and 5), transcribed the plain way in
the hopper's own coordinates: SX symbols for every node's state (z_m, ż_m, z_r, ż_r, z_f, ż_f,
e, z_d) and command rate u and every phase's duration, the dynamics in explicit form (no
acceleration or contact-force variables), one `casadi.nlpsol('solver', 'ipopt', ...)` per
stage, solved with the IPOPT options loam runs with, from the peer's own rest guess, in one
stage or in loam's two (durations held, then released with the multipliers).

Input (a file named on the command line, or stdin): a JSON object, as
`loam bench --peer-input PROBLEM.yaml` prints it for a problem whose robot is the hopper:
  robot
    mass            {motor, rod, foot}: m_m, m_r, m_f [kg]
    spring          {stiffness, damping, rest}: k_s [N/m], c_s [N s/m], l_0 [m] on the leg
    drive           {force_constant, position_gain, velocity_feedforward, velocity_gain,
                    integral_gain}: K_m, P_p, V_f, V_p, V_i of the PI drive on the stroke
    force_limit     [lower, upper] on the drive's force F_m [N]
    stroke          {position: [lower, upper], velocity: v}: limits on z_m − z_r and its rate
    leg             {position: [lower, upper], velocity: v}: limits on z_r − z_f and its rate
                    (null: unlimited)
    standing_stroke z_m − z_r of the robot's standing posture, where the rest guess holds it
  gravity           g [m/s²]
  terrain           {model: rigid} or {model: added_mass, foot_radius, recruitment_rate,
                    shear_band_angle_deg, surrounding_mass_scaling, volume_fraction,
                    grain_density, penetration_stiffness, resistive_stress, drag_scaling}
  schedule          per phase {stance: true|false, nodes: N, duration: [lower, upper]}:
                    stance and flight in turn, from a stance, ending in the flight to the apex
  task              {apex_rise: h, apex_of: motor|rod|foot|null (null: the centre of mass),
                    start_stroke: z_m − z_r at the start, or null (free within the stroke),
                    contact_margin: c (a held foot's normal force ≥ c × weight at every stance
                    node but the lift-off one; a foot leaving the bed accelerates up ≥ c g)}
  scheme            trapezoidal | hermite_simpson
  initial_guess     rest (the robot at rest at every node, each duration 0.2 s within its
                    bounds, u = 0) | zero
  solver_options    the IPOPT options (loam's defaults with the problem's `solver` on top)
  two_stage         null (one solve), or {held: a duration or null per phase, iterations: the
                    first stage's cap, if_infeasible: the durations held instead when IPOPT
                    finds the first stage infeasible, or null, release_options: the IPOPT
                    options the release adds}: docs/MODEL.md 5.2
  x0                optional: the starting point in place of the guess, in the NLP's variable
                    order (per phase: (x, u) at each node, the midpoints' (x, u) for
                    Hermite-Simpson, then the duration); then one solve, whatever two_stage says
  points            optional, for --evaluate
Output: one JSON line on stdout:
  {"objective", "iterations", "status", "converged", "setup_s", "solve_s", "stages"}
  (and the solution `x`, in the same order, with --with-x)
where setup_s is building the NLP and the solver objects and solve_s the solver calls (a
fallback's solver object, built only when needed, included). Loading CasADi's IPOPT plugin
happens before the clock starts: like importing casadi, it is process start-up, which the
caller measures around the process.
With --evaluate it solves nothing and prints the NLP's bounds (lbx, ubx, lbg, ubg; null where
infinite), the names of its variables and rows (x_names, g_names), and at each vector of the
input's `points` f, g, `motion` (per node and midpoint, in the variables' order: z̈_m, z̈_r,
z̈_f and the ground's force on the foot, 0 in the air) and `impulse` (per phase, the ground's
impulse on the foot landing at its start, else 0).

Run it with the casadi==3.8.2 package that loam's build provisions on PYTHONPATH:
  loam bench --peer-input problems/hopper_granular.yaml > /tmp/hopper.json
  PYTHONPATH=~/.cache/loam/casadi-3.8.2:~/.cache/loam/numpy-2.2.6 \\
      python3 bench/peer/hopper_casadi.py /tmp/hopper.json
"""

import argparse
import json
import math
import sys
import time

import casadi as ca

# The state.
Z_M, V_M, Z_R, V_R, Z_F, V_F, E, Z_D = range(8)
STATE_NAMES = ["z_m", "v_m", "z_r", "v_r", "z_f", "v_f", "e", "z_d"]
N_X, N_U = 8, 1
INF = float("inf")


def fail(message):
    sys.stderr.write(f"hopper_casadi.py: {message}\n")
    sys.exit(2)


def limits(pair):
    """A [lower, upper] pair from JSON, null for unlimited."""
    if pair is None:
        return (-INF, INF)
    lower, upper = pair
    return (-INF if lower is None else lower, INF if upper is None else upper)


class Hopper:
    """MODEL.md section 1, on rigid ground or the added-mass bed of section 2."""

    def __init__(self, data):
        r = data["robot"]
        m = r["mass"]
        self.m_m, self.m_r, self.m_f = m["motor"], m["rod"], m["foot"]
        s = r["spring"]
        self.k_s, self.c_s, self.l_0 = s["stiffness"], s["damping"], s["rest"]
        d = r["drive"]
        self.K_m, self.P_p, self.V_f = (
            d["force_constant"],
            d["position_gain"],
            d["velocity_feedforward"],
        )
        self.V_p, self.V_i = d["velocity_gain"], d["integral_gain"]
        self.force_limit = limits(r["force_limit"])
        self.stroke = limits(r["stroke"].get("position"))
        self.stroke_speed = r["stroke"].get("velocity")
        self.leg = limits(r["leg"].get("position"))
        self.leg_speed = r["leg"].get("velocity")
        self.standing_stroke = r.get("standing_stroke", 0.0)
        self.g = data["gravity"]
        self.mass = self.m_m + self.m_r + self.m_f
        self.weight = self.mass * self.g
        t = data["terrain"]
        if t["model"] not in ("rigid", "added_mass"):
            fail(f"terrain {t['model']!r}: the peer plans on rigid ground or the added-mass bed")
        self.granular = t["model"] == "added_mass"
        if self.granular:
            self.R = t["foot_radius"]
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
        """The spring's force on the rod, + up: k_s (l_0 − leg) − c_s d(leg)/dt."""
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
        """What the foot presses on the ground with when it is held still."""
        return self.spring(x) + self.m_f * self.g

    def momentum(self, x):
        return self.m_m * x[V_M] + self.m_r * x[V_R] + self.m_f * x[V_F]

    def height(self, x, body):
        if body == "motor":
            return x[Z_M]
        if body == "rod":
            return x[Z_R]
        if body == "foot":
            return x[Z_F]
        return (self.m_m * x[Z_M] + self.m_r * x[Z_R] + self.m_f * x[Z_F]) / self.mass

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

    def foot_acceleration(self, stance, x):
        if not stance:
            return (-self.spring(x) - self.m_f * self.g) / self.m_f
        if self.granular:
            force, added_mass = self.resistance(x[Z_F], x[V_F])
            return (force - self.ground_load(x)) / (added_mass + self.m_f)
        return 0

    def bed_reaction(self, x):
        """The bed's force on a foot sinking under the law: F − m_a z̈_f."""
        force, added_mass = self.resistance(x[Z_F], x[V_F])
        return force - added_mass * self.foot_acceleration(True, x)

    def dynamics(self, stance, x, u):
        F_s, F_m = self.spring(x), self.motor(x, u)
        return ca.vertcat(
            x[V_M],
            F_m / self.m_m - self.g,
            x[V_R],
            (F_s - F_m) / self.m_r - self.g,
            x[V_F],
            self.foot_acceleration(stance, x),
            self.velocity_error(x, u),
            u,
        )

    def rest_state(self, stroke):
        """At rest, the drive at `stroke`: the spring carrying motor and rod, the drive's
        integrator the motor, and the ground (on grains: the depth whose static resistance
        is the weight) the whole robot."""
        z_f = -self.rest_depth(self.weight) if self.granular else 0.0
        z_r = z_f + self.l_0 - (self.m_m + self.m_r) * self.g / self.k_s
        e = self.m_m * self.g / (self.K_m * self.V_i)
        return [z_r + stroke, 0.0, z_r, 0.0, z_f, 0.0, e, stroke]

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


class Transcription:
    """The NLP {x, f, g} with its bounds and names, the rest guess, and where the durations
    are."""

    def __init__(self, data):
        robot = self.robot = Hopper(data)
        phases = data["schedule"]
        hops = len(phases) // 2
        if hops == 0 or [p["stance"] for p in phases] != [True, False] * hops:
            fail("the peer plans stance and flight in turn, from a stance to a flight to the apex")
        if robot.granular and hops != 1:
            fail("the peer plans one hop on the added-mass bed (a foot never lands in it)")
        task = data["task"]
        margin = task.get("contact_margin", 0.0)
        hermite_simpson = data["scheme"] == "hermite_simpson"
        if data["scheme"] not in ("trapezoidal", "hermite_simpson"):
            fail(f"scheme {data['scheme']!r}: the peer knows trapezoidal and hermite_simpson")

        w, lbw, ubw, self.x_names = [], [], [], []
        self.slots = []  # (stance, x, u) of every node and midpoint, in variable order
        g, lbg, ubg, self.g_names = [], [], [], []
        J = 0
        nodes, midpoints, durations = [], [], []
        self.duration_index = []

        def variable(name, names, lb, ub):
            v = ca.SX.sym(name, len(names))
            w.append(v)
            lbw.extend(lb)
            ubw.extend(ub)
            self.x_names.extend(f"{name}: {n}" for n in names)
            return v

        def row(name, expr, lb, ub):
            g.append(expr)
            lbg.append(lb)
            ubg.append(ub)
            self.g_names.append(name)

        # Variables, per phase: (x, u) at each node, the midpoints (Hermite-Simpson), the
        # duration. Bounds: a foot in the bed never rises (`sinks`); in the air over rigid
        # ground it stays above it (`clearance`).
        for p, phase in enumerate(phases):
            stance = phase["stance"]
            lbx, ubx = [-INF] * N_X, [INF] * N_X
            if stance and robot.granular:
                ubx[V_F] = 0.0
            if not stance and not robot.granular:
                lbx[Z_F] = 0.0
            points = []
            for k in range(phase["nodes"]):
                x = variable(f"p{p} node {k} x", STATE_NAMES, lbx, ubx)
                u = variable(f"p{p} node {k} u", ["u"], [-INF], [INF])
                points.append((x, u))
            mids = []
            if hermite_simpson:
                for k in range(phase["nodes"] - 1):
                    x = variable(f"p{p} midpoint {k} x", STATE_NAMES, lbx, ubx)
                    u = variable(f"p{p} midpoint {k} u", ["u"], [-INF], [INF])
                    mids.append((x, u))
            nodes.append(points)
            midpoints.append(mids)
            self.slots += [(stance, x, u) for x, u in points + mids]
            lo, hi = phase["duration"]
            self.duration_index.append(len(lbw))
            durations.append(variable(f"p{p} duration", ["T"], [lo], [hi]))

        # The start at rest: still, the foot on rigid ground or in the bed.
        for i in (V_M, V_R, V_F):
            lbw[i] = ubw[i] = 0.0
        if robot.granular:
            ubw[Z_F] = min(ubw[Z_F], 0.0)
        else:
            lbw[Z_F] = ubw[Z_F] = 0.0

        # The model as functions of one point's (x, u), called at every node and midpoint.
        x_, u_ = ca.SX.sym("x", N_X), ca.SX.sym("u")
        dynamics = {
            stance: ca.Function(f"f_{stance}", [x_, u_], [robot.dynamics(stance, x_, u_)])
            for stance in (True, False)
        }
        motor = ca.Function("motor", [x_, u_], [robot.motor(x_, u_)])
        reaction = ca.Function(
            "reaction",
            [x_],
            [robot.bed_reaction(x_) if robot.granular else robot.ground_load(x_)],
        )

        # Collocation defects, running cost and the rows at every node and midpoint.
        for p, phase in enumerate(phases):
            stance = phase["stance"]
            n = phase["nodes"]
            h = durations[p] / (n - 1)
            cost = lambda u: 0.5 * u**2
            points = nodes[p]
            f = [dynamics[stance](x, u) for x, u in points]
            for k in range(n - 1):
                (x0, u0), (x1, u1) = points[k], points[k + 1]
                if hermite_simpson:
                    xm, um = midpoints[p][k]
                    f0, fm, f1 = f[k], dynamics[stance](xm, um), f[k + 1]
                    for i, d in enumerate(ca.vertsplit(xm - 0.5 * (x0 + x1) - h / 8 * (f0 - f1))):
                        row(f"p{p} interval {k}: midpoint defect {STATE_NAMES[i]}", d, 0, 0)
                    for i, d in enumerate(ca.vertsplit(x1 - x0 - h / 6 * (f0 + 4 * fm + f1))):
                        row(f"p{p} interval {k}: defect {STATE_NAMES[i]}", d, 0, 0)
                    J += h / 6 * (cost(u0) + 4 * cost(um) + cost(u1))
                else:
                    defects = x1 - x0 - h / 2 * (f[k] + f[k + 1])
                    for i, d in enumerate(ca.vertsplit(defects)):
                        row(f"p{p} interval {k}: defect {STATE_NAMES[i]}", d, 0, 0)
                    J += h / 2 * (cost(u0) + cost(u1))
            at = [(f"node {k}", x, u, k) for k, (x, u) in enumerate(points)]
            at += [(f"midpoint {k}", x, u, None) for k, (x, u) in enumerate(midpoints[p])]
            for where, x, u, k in at:
                name = f"p{p} {where}"
                row(f"{name}: drive force", motor(x, u), *robot.force_limit)
                if any(map(math.isfinite, robot.stroke)):
                    row(f"{name}: stroke", x[Z_M] - x[Z_R], *robot.stroke)
                if robot.stroke_speed is not None:
                    v = robot.stroke_speed
                    row(f"{name}: stroke speed", x[V_M] - x[V_R], -v, v)
                if any(map(math.isfinite, robot.leg)):
                    row(f"{name}: leg", x[Z_R] - x[Z_F], *robot.leg)
                if robot.leg_speed is not None:
                    v = robot.leg_speed
                    row(f"{name}: leg speed", x[V_R] - x[V_F], -v, v)
                if stance:
                    # The ground pushes, never pulls; a held foot keeps the margin at every
                    # node but the lift-off one.
                    least = margin * robot.weight if k is not None and k + 1 < n else 0.0
                    what = "bed reaction" if robot.granular else "ground reaction"
                    row(f"{name}: {what}", reaction(x), least, INF)

        # Where phases meet: the state and the command rate continuous; lift-off where the
        # foot leaves, touchdown and a plastic impact on the foot where it lands.
        impulses = [0] * len(phases)
        for p in range(len(phases) - 1):
            (x0, u0), (x1, u1) = nodes[p][-1], nodes[p + 1][0]
            name = f"p{p} -> p{p + 1}"
            if phases[p + 1]["stance"]:
                for i in range(N_X):
                    if i == V_F:
                        row(f"{name}: foot stops", x1[i], 0, 0)
                    else:
                        row(f"{name}: continuity {STATE_NAMES[i]}", x1[i] - x0[i], 0, 0)
                row(f"{name}: continuity u", u1 - u0, 0, 0)
                row(f"{name}: touchdown", x1[Z_F], 0, 0)
                # The ground's impulse on the foot, m_f (0 − ż_f⁻), pushes.
                impulses[p + 1] = -robot.m_f * x0[V_F]
                row(f"{name}: impulse", impulses[p + 1], 0, INF)
            else:
                for i in range(N_X):
                    row(f"{name}: continuity {STATE_NAMES[i]}", x1[i] - x0[i], 0, 0)
                row(f"{name}: continuity u", u1 - u0, 0, 0)
                if robot.granular:
                    row(f"{name}: stops sinking", x0[V_F], 0, 0)
                    row(
                        f"{name}: accelerates up",
                        robot.foot_acceleration(False, x1),
                        margin * robot.g,
                        INF,
                    )
                else:
                    row(f"{name}: lift-off", robot.ground_load(x0), 0, 0)

        # At rest at the start: the command at the drive's position, the drive holding the
        # motor at a zero command rate, the spring carrying motor and rod, the bed the robot.
        x_start = nodes[0][0][0]
        row("start: command at its position", x_start[Z_D] - (x_start[Z_M] - x_start[Z_R]), 0, 0)
        row("start: drive holds the motor", robot.motor(x_start, 0) - robot.m_m * robot.g, 0, 0)
        row(
            "start: spring holds motor and rod",
            robot.spring(x_start) - (robot.m_m + robot.m_r) * robot.g,
            0,
            0,
        )
        if robot.granular:
            force, _ = robot.resistance(x_start[Z_F], x_start[V_F])
            row("start: bed holds the weight", force - robot.weight, 0, 0)
        if task.get("start_stroke") is not None:
            s = task["start_stroke"]
            row("start: stroke", x_start[Z_M] - x_start[Z_R], s, s)

        # In the air after the bed, the foot stays above where it left it.
        if robot.granular:
            x_takeoff = nodes[0][-1][0]
            for k, (x, _) in enumerate(nodes[1][1:], start=1):
                row(f"p1 node {k}: above the crater", x[Z_F] - x_takeoff[Z_F], 0, INF)

        # The last flight ends at the apex, where the rise is measured.
        x_apex = nodes[-1][-1][0]
        row("apex", robot.momentum(x_apex), 0, 0)
        body, rise = task.get("apex_of"), task["apex_rise"]
        row("apex rise", robot.height(x_apex, body) - robot.height(x_start, body), rise, rise)

        self.nlp = {"x": ca.vertcat(*w), "f": J, "g": ca.vertcat(*g)}
        self.reaction, self.impulses = reaction, impulses
        self.bounds = {"lbx": lbw, "ubx": ubw, "lbg": lbg, "ubg": ubg}

        # The rest guess: the robot at rest at every node, u = 0, each duration 0.2 s.
        stroke = task.get("start_stroke")
        rest = robot.rest_state(robot.standing_stroke if stroke is None else stroke)
        guess = []
        for p, phase in enumerate(phases):
            points = phase["nodes"] + (phase["nodes"] - 1 if hermite_simpson else 0)
            guess += (rest + [0.0]) * points
            lo, hi = phase["duration"]
            guess.append(min(max(0.2, lo), hi))
        self.rest_guess = guess

    def motion(self):
        """What a point implies at every node and midpoint: the bodies' accelerations and the
        ground's force on the foot (0 in the air); and the impulse of each landing."""
        motion = []
        for stance, x, u in self.slots:
            f = self.robot.dynamics(stance, x, u)
            motion += [f[V_M], f[V_R], f[V_F], self.reaction(x) if stance else 0]
        return ca.Function(
            "motion", [self.nlp["x"]], [ca.vertcat(*motion), ca.vertcat(*self.impulses)]
        )


def solve(data, transcription, started):
    """One solve, or loam's two stages; the report."""
    nlp, bounds = transcription.nlp, transcription.bounds
    options = data["solver_options"]
    plugin = lambda extra: {"ipopt": {**options, **extra}, "print_time": False}
    if "x0" in data:
        x0 = data["x0"]
    elif data.get("initial_guess", "rest") == "rest":
        x0 = transcription.rest_guess
    else:
        x0 = [0.0] * len(bounds["lbx"])
    two_stage = data.get("two_stage") if "x0" not in data else None

    if not two_stage:
        solver = ca.nlpsol("solver", "ipopt", nlp, plugin({}))
        built = time.perf_counter()
        solution = solver(x0=x0, **bounds)
        stats = solver.stats()
        kept = {"x": solution["x"], "f": float(solution["f"]), "stats": stats}
        stages = [stage("solve", kept)]
    else:
        first = ca.nlpsol(
            "hold", "ipopt", nlp, plugin({"max_iter": two_stage["iterations"]})
        )
        release = ca.nlpsol("release", "ipopt", nlp, plugin(two_stage["release_options"]))
        built = time.perf_counter()
        stages = []

        def hold(durations):
            lbx, ubx, start = list(bounds["lbx"]), list(bounds["ubx"]), list(x0)
            for i, d in zip(transcription.duration_index, durations):
                if d is not None:
                    lbx[i] = ubx[i] = start[i] = d
            solution = first(x0=start, lbx=lbx, ubx=ubx, lbg=bounds["lbg"], ubg=bounds["ubg"])
            held = {"x": solution["x"], "f": float(solution["f"]), "stats": first.stats()}
            held["lam_x"], held["lam_g"] = solution["lam_x"], solution["lam_g"]
            stages.append(stage("hold durations", held))
            return held

        held = hold(two_stage["held"])
        if (
            two_stage.get("if_infeasible") is not None
            and held["stats"]["return_status"] == "Infeasible_Problem_Detected"
        ):
            held = hold(two_stage["if_infeasible"])
        # The released durations sit inside their bounds: their multipliers start at 0.
        lam_x = held["lam_x"].full().ravel()
        for i in transcription.duration_index:
            lam_x[i] = 0.0
        solution = release(x0=held["x"], lam_x0=lam_x, lam_g0=held["lam_g"], **bounds)
        kept = {"x": solution["x"], "f": float(solution["f"]), "stats": release.stats()}
        stages.append(stage("release", kept))
        if not kept["stats"]["success"]:
            again = ca.nlpsol("fallback", "ipopt", nlp, plugin({}))
            solution = again(x0=x0, **bounds)
            fallback = {"x": solution["x"], "f": float(solution["f"]), "stats": again.stats()}
            stages.append(stage("fallback", fallback))
            if fallback["stats"]["success"]:
                kept = fallback
    solved = time.perf_counter()
    return kept, stages, built - started, solved - built


def stage(name, result):
    stats = result["stats"]
    return {
        "stage": name,
        "status": stats["return_status"],
        "converged": bool(stats["success"]),
        "iterations": stats["iter_count"],
        "objective": result["f"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="the JSON input (default: stdin)")
    parser.add_argument(
        "--with-x", action="store_true", help="add the solution vector `x` to the output"
    )
    parser.add_argument(
        "--evaluate",
        action="store_true",
        help="solve nothing: print the NLP's bounds and names, and f and g at each of the "
        "input's `points` (for checking loam's plan against this transcription)",
    )
    args = parser.parse_args()
    try:
        with open(args.file) if args.file else sys.stdin as stream:
            data = json.load(stream)
    except (OSError, ValueError) as e:
        fail(f"cannot read the input JSON from {args.file or 'stdin'}: {e}")
    for key in ("robot", "terrain", "schedule", "task", "scheme", "solver_options"):
        if key not in data:
            fail(
                f"the JSON has no `{key}`: give what `loam bench --peer-input PROBLEM.yaml` "
                "prints for a hopper problem"
            )

    if args.evaluate:
        transcription = Transcription(data)
        nlp = transcription.nlp
        nlp_f = ca.Function("nlp", [nlp["x"]], [nlp["f"], nlp["g"]])
        values = [nlp_f(point) for point in data.get("points", [])]
        # JSON has no infinity: an infinite bound is null.
        finite = lambda v: [b if math.isfinite(b) else None for b in v]
        result = {key: finite(value) for key, value in transcription.bounds.items()}
        result["x_names"] = transcription.x_names
        result["g_names"] = transcription.g_names
        result["f"] = [float(f) for f, _ in values]
        result["g"] = [g.full().ravel().tolist() for _, g in values]
        result["motion"], result["impulse"] = [], []
        motion_of = transcription.motion()
        for point in data.get("points", []):
            motion, impulse = motion_of(point)
            result["motion"].append(motion.full().reshape((-1, 4)).tolist())
            result["impulse"].append(impulse.full().ravel().tolist())
        print(json.dumps(result))
        return

    ca.load_nlpsol("ipopt")

    started = time.perf_counter()
    transcription = Transcription(data)
    kept, stages, setup_s, solve_s = solve(data, transcription, started)
    stats = kept["stats"]
    result = {
        "objective": kept["f"],
        "iterations": sum(s["iterations"] for s in stages),
        "status": stats["return_status"],
        "converged": bool(stats["success"]),
        "setup_s": setup_s,
        "solve_s": solve_s,
        "stages": stages,
    }
    if args.with_x:
        result["x"] = kept["x"].full().ravel().tolist()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
