"""The tuner's vocabulary: a knob, a candidate, a schedule family, and why a schedule was refused.

Apart from ``compiler.tune.space`` so that the families (``loopnest``, ``attention``) and the space that
picks one of them import these names without importing each other.
"""

from __future__ import annotations

import abc
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from compiler.errors import BufferCapacityError, OutOfEventIds, ScheduleError
from compiler.language.errors import CannotSplit, LanguageError, TilesDoNotFit, TooManyEventIds
from compiler.ops import Op, OpError
from compiler.target import Target
from compiler.tune.model import Prediction
from isa.records import record

#: What the compiler raises for a schedule it refuses (a kernel built in the tile language: ``LanguageError``).
REFUSED = (ScheduleError, BufferCapacityError, OpError, LanguageError)


@record
class Knob:
    """One dimension of a space: ``tile.m``, ``order``, ``parallel``, ``buffers.a``, ``prefetch``, ``algorithm``..."""

    name: str
    choices: tuple

    @property
    def ordinal(self) -> bool:
        """Numeric choices, where neighbours behave alike (a model-based search may exploit that)."""
        return all(isinstance(c, int) and not isinstance(c, bool) for c in self.choices)


@dataclass(frozen=True, eq=False)
class Candidate:
    """One distinct, valid schedule, with the model's estimate (and, for loop-nest schedules, the
    compiler's kernel after ``buffer``, built when first asked for: ``build``)."""

    index: int
    schedule: Any
    build: Callable[[], Any] | None = field(repr=False)
    prediction: Prediction = field(repr=False)

    @cached_property
    def kernel(self) -> Any:
        """The kernel the estimate was made of (loop nests: after ``buffer``), or None."""
        return self.build() if self.build is not None else None

    @property
    def key(self) -> str:
        return schedule_key(self.schedule)


def schedule_key(schedule: Any) -> str:
    """A stable text key of a schedule (sorted JSON), for databases and de-duplication."""
    return json.dumps(schedule.to_json(), sort_keys=True, separators=(",", ":"))


class Family(abc.ABC):
    """One kind of schedule: its knobs, its canonical forms, its valid candidates."""

    name: ClassVar[str]

    def __init__(self, op: Op, target: Target, fixed: Any) -> None:
        self.op, self.target, self.fixed = op, target, fixed

    @property
    def cores(self) -> int:
        return self.fixed.cores

    def baseline(self) -> Any:
        """The pinned knobs as the compiler takes them, to complete with its own defaults (the baseline)."""
        return self.fixed

    @abc.abstractmethod
    def best(self) -> Any:
        """The compiler's default schedule: the pinned knobs, and the best of the family's choices for the rest by
        the one cost model — one of the family's candidates."""

    @abc.abstractmethod
    def knobs(self) -> tuple[Knob, ...]:
        """The free knobs and their choices."""

    @abc.abstractmethod
    def enumerate(self, pruned: Counter, max_instructions: int) -> Iterator[tuple[Any, Any, Prediction]]:
        """``(schedule, build, prediction)`` of every distinct valid candidate (``build``: a function that returns its
        kernel, or None); refusals counted in ``pruned`` by reason."""

    @abc.abstractmethod
    def canonical(self, values: Mapping[str, object]) -> Any:
        """The canonical schedule for raw knob values; raises what the compiler raises if it is refused."""

    @abc.abstractmethod
    def values_of(self, schedule: Any) -> dict[str, object]:
        """A complete schedule as raw knob values."""


#: Pruning categories of a schedule the compiler refused, by the knob its error names.
KNOB_REASONS = {
    "buffers": "need too many event ids",
    "cores": "have fewer parallel tiles than cores",
    "prefetch": "prefetch deeper than their buffers",
}


def reason(e: Exception) -> str:
    """Why the compiler refused a schedule, as a pruning category."""
    if isinstance(e, BufferCapacityError | TilesDoNotFit):
        return f"do not fit {e.buffer}"
    if isinstance(e, OutOfEventIds | TooManyEventIds):
        return "need too many event ids"  # a flag group's, or a separated chip's hand-overs'
    if isinstance(e, CannotSplit):
        return "cannot be split between the Cube and the Vector cores"
    if isinstance(e, ScheduleError):
        return KNOB_REASONS.get(e.knob, f"are refused ({e.knob})")
    return "are refused by the operator"
