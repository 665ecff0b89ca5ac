"""loam: plan robot motions on soft and granular ground, replay and plot the plans.

The same library as the ``loam`` command line (docs/PYTHON.md)::

    import loam
    problem = loam.load_problem("problems/hopper_granular.yaml", set=["task.apex_rise=0.06"])
    plan = problem.solve()              # IPOPT; plan.objective, plan.status, plan.trajectory
    plan.write("runs/hop")              # the run folder `loam solve` writes
    replay = plan.simulate()            # `loam simulate runs/hop`
    loam.plot("runs/hop")               # `loam plot runs/hop`
"""

import os as _os
import warnings as _warnings

from .errors import (
    ComputationError,
    InputError,
    LoamError,
    OutputError,
    ProblemError,
)

try:
    from ._loam import (
        Plan,
        Problem,
        Replay,
        build_info,
        casadi_dir,
        load_problem,
        loaded_casadi_dir,
        plot,
        simulate,
    )
except ImportError as _error:  # pragma: no cover - what a broken installation sees
    if "libcasadi" in str(_error) or "libipopt" in str(_error):
        raise ImportError(
            f"{_error}. loam's extension module finds CasADi and IPOPT where loam's build "
            "found them (LOAM_CASADI_DIR, or ~/.cache/loam/casadi-3.8.2/casadi); that folder "
            "is gone or was moved: rebuild the package (pip install ./python)"
        ) from _error
    raise

__all__ = [
    "ComputationError",
    "InputError",
    "LoamError",
    "OutputError",
    "Plan",
    "Problem",
    "ProblemError",
    "Replay",
    "build_info",
    "casadi_dir",
    "load_problem",
    "loaded_casadi_dir",
    "plot",
    "simulate",
]

# The rpath lists every folder loam's build may have taken; the loader takes the first that
# holds the libraries. Say so when that is not the folder loam was linked against.
_loaded = loaded_casadi_dir()
if _loaded is not None and _os.path.realpath(_loaded) != _os.path.realpath(casadi_dir()):
    _warnings.warn(
        f"loam was linked against CasADi in {casadi_dir()} but loaded it from {_loaded}",
        RuntimeWarning,
    )
