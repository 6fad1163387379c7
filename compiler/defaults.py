"""Default schedules: ``default_schedule(op, chip)`` fills every knob the user left out with the best values of
the loop-nest family (:meth:`compiler.tune.loopnest.LoopNestFamily.best`) — the tuner's own space, ranked by the
tuner's own model: one place ranks the tile menu, and a default schedule is always one of the tuner's candidates.
"""

from __future__ import annotations

from compiler.ops import Op
from compiler.schedule import Schedule
from compiler.target import Target
from compiler.tune.loopnest import LoopNestFamily


def default_schedule(op: Op, chip: object, schedule: Schedule | None = None) -> Schedule:
    """A complete schedule for ``op`` on ``chip``: the given knobs, and good values for the rest."""
    return LoopNestFamily(op, Target.of(chip), schedule).best()
