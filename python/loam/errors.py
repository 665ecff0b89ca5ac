"""The exceptions of loam, one per class of failure, as the ``loam`` command line sorts them.

Each carries ``exit_code``, the code ``loam`` exits with for the same failure (README,
"Exit codes"), and its text is what ``loam`` prints after ``error:``. A plan that did not
converge is not an exception: it is the plan's ``status`` (``converged`` False).
"""


class LoamError(Exception):
    """Any failure of loam."""

    exit_code = 1


class InputError(LoamError, ValueError):
    """Input to fix: a run folder that is not loam's, a terrain that does not exist, an
    IPOPT option IPOPT refuses, a tolerance out of range. The message names what and where."""

    exit_code = 2


class ProblemError(InputError):
    """A problem file (or dict) that cannot be used.

    Attributes: ``file`` (the file, or a dict's origin), ``line`` and ``column`` (1-based,
    None when unknown), ``field`` (dotted path such as ``robot.motor_mass``, or None),
    ``reason`` (what is wrong and what is accepted) and ``override`` (the ``set=`` entry the
    value came from, or None). ``str(error)`` is ``FILE:LINE:COLUMN: FIELD: REASON``.
    """

    file = None
    line = None
    column = None
    field = None
    reason = None
    override = None


class OutputError(LoamError, OSError):
    """The environment: results that cannot be written (a read-only folder, a full disk)."""

    exit_code = 3


class ComputationError(LoamError, RuntimeError):
    """The computation failed: IPOPT or the symbolic layer raised, a replay could not run."""

    exit_code = 1
