"""The engine's clock: SimPy's environment, with its event loop in one function.

A run of 100,000 instructions goes round SimPy's event loop about 150,000 times, and ``Environment.run``
spends a method call (``step``) and an exception frame on each. ``Clock.run`` does what ``step`` does —
pop the next event, advance the time, call its callbacks, crash on a failed event nobody handled — in
one loop. Everything else (events, processes, timeouts, their order) is SimPy's own.

``fire`` triggers an event the way ``Event.succeed`` does (same place in the queue) in one call instead of
two: the scalar unit and the pipes wake each other tens of thousands of times a run. ``call_later`` schedules
a plain callback where ``env.timeout(delay).callbacks.append(fn)`` would, in the
same place of the event queue, without building a ``Timeout`` nobody yields (a transfer's completion).
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.core import BoundClass
from simpy.events import NORMAL


class Due:
    """An event due at a known cycle, with only what the event loop and a waiting process read of one
    (``callbacks``, ``_ok``, ``_value``): a ``Timeout`` without its constructor's checks and calls."""

    __slots__ = ("_ok", "_value", "callbacks")

    def __init__(self, callbacks: list) -> None:
        self.callbacks = callbacks
        self._ok = True
        self._value = None


class Clock(simpy.Environment):
    """``simpy.Environment`` whose ``run()`` (until nothing is scheduled) steps without a call per event."""

    def __init__(self) -> None:
        super().__init__()
        # SimPy binds ``event``, ``timeout``, ``process``… to the instance only for names in the instance's
        # own class ``__dict__``; a subclass must do it itself, or every ``env.timeout`` goes through a
        # descriptor and builds a bound method.
        for name, attr in vars(simpy.Environment).items():
            if type(attr) is BoundClass:
                setattr(self, name, getattr(self, name))

    def run(self, until: Any = None) -> Any:
        if until is not None:  # a stop time or event: SimPy's own loop handles it
            return super().run(until)
        queue = self._queue
        while queue:
            self._now, _, _, event = heappop(queue)
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            if not event._ok and not hasattr(event, "_defused"):
                # As ``Environment.step``: raise a copy, the original as its cause.
                exc = type(event._value)(*event._value.args)
                exc.__cause__ = event._value
                raise exc
        return None

    def after(self, delay: int) -> Due:
        """``env.timeout(delay)`` for a process to yield (``delay`` ≥ 0), in the same place of the queue."""
        due = Due([])
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), due))
        return due

    def call_later(self, delay: int, fn: Callable[[Due], None]) -> None:
        """Call ``fn`` ``delay`` cycles from now, ordered as a ``Timeout`` made now would be."""
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), Due([fn])))

    def signal(self) -> Due:
        """An event for a process to wait on until another ``fire``s it (``env.event()`` without its
        constructor): the scalar unit waiting for room in a queue, a pipe for work."""
        return Due([])

    def fire_at(self, event: simpy.Event | Due, at: int) -> None:
        """Fire ``event`` at cycle ``at`` (now or later) as one scheduled event: a flag set behind transfers in
        flight fires when they complete, and its waiter resumes then. What a ``Timeout`` does to itself, on an
        event made earlier."""
        event._ok, event._value = True, None
        heappush(self._queue, (at if at > self._now else self._now, NORMAL, next(self._eid), event))

    def fire(self, event: simpy.Event | Due) -> None:
        """``event.succeed()`` for an event not yet triggered: it is processed after those already due now."""
        event._ok, event._value = True, None
        heappush(self._queue, (self._now, NORMAL, next(self._eid), event))
