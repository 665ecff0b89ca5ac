# %% [markdown]
# # A jump on poppy seeds, from Python
#
# The hopper of Hubicki et al. (IROS 2016) jumps from a bed of poppy seeds: plan the jump with
# IPOPT, replay the plan's command in the simulator on the bed and on rigid ground, and draw
# it. Every step is the library call the `loam` command line makes, so the run folder this
# writes is the one `loam solve` would (docs/PYTHON.md).
#
# Run it as a script (`python examples/jump.py`, from anywhere, after `pip install ./python`)
# or cell by cell (`# %%`) in VS Code, Jupyter (jupytext) or Spyder.

# %%
from pathlib import Path

import numpy as np

import loam

root = Path(__file__).resolve().parents[1] if "__file__" in globals() else Path.cwd()
run_dir = root / "runs" / "python-jump"

# %% [markdown]
# ## The problem
# A YAML file, with fields overridden as `loam solve --set` does. A bad value raises
# `loam.ProblemError` naming the file, line and field.

# %%
problem = loam.load_problem(
    root / "problems" / "hopper_granular.yaml",
    set=["task.apex_rise=0.06"],  # a 60 mm rise of the rod
)
print(problem)
print("apex rise asked:", problem.to_dict()["task"]["apex_rise"], "m")

# %% [markdown]
# ## Plan
# `solve()` transcribes the hybrid dynamics by collocation and runs IPOPT. `progress` sees
# every iteration (returning False would stop IPOPT).

# %%
def progress(info):
    if info["iteration"] % 10 == 0:
        print(f"  iteration {info['iteration']:3d}  objective {info['objective']:.4e}")


plan = problem.solve(progress=progress)
print(plan)
print(f"converged: {plan.converged}, objective {plan.objective:.6e} (½∫u² dt)")
for name, duration, nodes in plan.phases:
    print(f"  {name:15s} {duration * 1e3:6.1f} ms over {nodes} nodes")

# %% [markdown]
# The trajectory: one NumPy array per column of `trajectory.csv` (docs/ROBOTS.md: the robot's
# coordinates in m, their rates `d_*` in m/s, the drive's states, the foot's force in N).
# robots/hopper.yaml: `z` is the motor block's height, the rod hangs `stroke` below it.

# %%
traj = plan.trajectory
print(plan.columns)
rod = traj["z"] - traj["stroke"]
rise = rod.max() - rod[0]
print(f"rod rise {rise * 1e3:.2f} mm; peak ground force {traj['foot_fz'].max():.1f} N")

# %% [markdown]
# ## Write the run folder
# `solution.json`, `trajectory.csv` and `ipopt.log`, as `loam solve --out DIR` writes them.

# %%
plan_id = plan.write(run_dir)
print("wrote", run_dir, "plan", plan_id)

# %% [markdown]
# ## Replay
# The plan's command alone, integrated through the hybrid model with event detection: on the
# bed it was planned for, then on rigid ground (a terrain the plan did not expect).

# %%
on_bed = plan.simulate()
on_rigid = plan.simulate(terrain="rigid")
for replay in (on_bed, on_rigid):
    s = replay.summary
    apex = s["achieved_apex_rise_m"]
    print(
        f"{replay.stem:16s} apex rise "
        + (f"{apex * 1e3:6.2f} mm" if apex is not None else "   none")
        + f" (planned {s['planned_apex_rise_m'] * 1e3:.2f} mm)"
    )

# The replay's samples are arrays too: how far the rod strays from the plan on the bed.
z_plan = np.interp(on_bed.data["t"], traj["t"], rod)
rod_bed = on_bed.data["z"] - on_bed.data["stroke"]
print(f"largest rod difference on the bed: {np.abs(rod_bed - z_plan).max() * 1e3:.3f} mm")

# %% [markdown]
# ## Figures
# `loam.plot` draws the run and its replays into `runs/python-jump/plots/`, as `loam plot`.

# %%
for file in loam.plot(run_dir, svg=False):
    print("drew", file)

# %% [markdown]
# With matplotlib, the arrays draw directly.

# %%
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
if plt is not None:
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(traj["t"], rod * 1e3, "o", ms=3, label="plan (nodes)")
    for replay, label in ((on_bed, "replay on the bed"), (on_rigid, "replay on rigid ground")):
        ax.plot(replay.data["t"], (replay.data["z"] - replay.data["stroke"]) * 1e3, label=label)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("rod height [mm]")
    ax.legend()
    fig.tight_layout()
    fig.savefig(run_dir / "plots" / "rod_matplotlib.png", dpi=120)
    print("drew", run_dir / "plots" / "rod_matplotlib.png")
