"""The engine's clock: SimPy's environment, with its event loop in one function and light events.

A run of 100,000 instructions goes round SimPy's event loop about 150,000 times, and ``Environment.run``
spends a method call (``step``) and an exception frame on each. ``Clock.run`` does what ``step`` does —
pop the next event, advance the time, call its callbacks, crash on a failed event nobody handled — in
one loop, on the clock's ``Agenda``: the current cycle, the queue and the calls that schedule on it, as an object
the compiled engine reads without a dict lookup (the clock is a SimPy environment, a Python class).

The engine's processes are *light*: ``start`` runs a generator as SimPy's ``env.process`` would — first
resumed by an urgent event at the cycle it is started, then each time the event it yielded fires — without
SimPy's ``Process`` object (its ``_resume`` bookkeeping, and the event it schedules when the generator
ends, which nothing waits for). An exception a process raises stops the run at once, as SimPy's would when
it reached the failed process's event (no other process can fail in between: only processes raise).

The engine's processes wait on ``Due`` events, which carry only what the event loop and a waiting process
read of an event. ``after`` (a ``Timeout``), ``signal`` (an ``Event``), ``fire`` (``succeed``), ``fire_at``
(``succeed`` at a later cycle) and ``call_later`` (a timeout's callback) each put the event in the same place
of the queue as SimPy's own would, without SimPy's constructor checks and nested calls, on the path of
every instruction. The events run in the same order, so a run's cycles, stats and trace are SimPy's, byte
for byte; processes, conditions and everything else stay SimPy's own.

What only calls a function — ``call_later``, ``call_first``, a process waking after the cycles it yielded — is
queued as the function itself, with no event: ``run`` calls it where it would have called the event's one
callback. ``run(until=…)`` is SimPy's own loop, stepping with ``Agenda.step``.

One kind of event is put ahead of SimPy's order on purpose: ``call_first`` (a transfer completing, its data
landing) runs before every ordinary event of its cycle, so whatever a flag or a timeout resumes at cycle
``t`` reads the data that lands at ``t`` — whichever process was woken first, and however early the
flag was set.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Any, Final

import simpy
from simpy import events
from simpy.core import BoundClass

#: SimPy's two priorities, queued with every event (``Final``: constants to the compiled clock, not looked up each time)
URGENT: Final = events.URGENT
NORMAL: Final = events.NORMAL

#: a light process's resumption (``Clock.start``): what a process waiting with no event is woken by
Resume = Callable[[None], None]


class Due:
    """An event with only what the event loop and a waiting process read of one (``callbacks``, ``_ok``,
    ``_value``): scheduled at once (``after``, ``call_later``) or when fired (``signal``). It always
    succeeds with no value: ``_ok`` and ``_value`` are the class's, not set per event."""

    __slots__ = ("callbacks",)
    _ok = True
    _value = None

    def __init__(self, callbacks: list) -> None:
        self.callbacks: list | None = callbacks  # None once it has fired (``run``)


class Agenda:
    """What the engine's units use of the clock — the current cycle, the queue, and the calls that schedule on it —
    as an object of the compiled engine's own (``simulator.native``). ``Clock`` is a SimPy environment, a Python
    class: each read of its ``_now`` is a lookup in the instance's dict, and each call of its methods a lookup and a
    bound method; the units read the cycle several times per event and schedule once or twice, so they hold the
    clock's agenda instead, whose ``now`` is a machine integer and whose methods are called directly. It shares the
    clock's queue and event ids, and keeps the clock's ``_now`` equal to ``now`` for SimPy's own code."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.now = 0
        self.queue: list[tuple[int, int, int, Any]] = clock._queue
        self.eid: Any = clock._eid  # SimPy's ``itertools.count``

    def run(self) -> None:
        """Step until nothing is scheduled."""
        queue = self.queue
        while queue:
            self.step()

    def step(self) -> None:
        """What ``Environment.step`` does — pop the next event, advance the time, call its callbacks, crash on a failed
        event nobody handled — for light calls too."""
        if not self.queue:
            raise simpy.core.EmptySchedule()
        self.now, _, _, event = heappop(self.queue)
        self.clock._now = self.now
        # A light call (``call_later``, ``call_first``, a process waking): a function (pure or compiled, a closure, a
        # bound method, a partial), no event — no SimPy event is callable.
        if callable(event):
            event(None)
            return
        callbacks, event.callbacks = event.callbacks, None
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            # As ``Environment.step``: raise a copy, the original as its cause.
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc

    def start(self, process: Generator[Due | int | None, None, None]) -> Resume:
        """``Clock.start``."""
        queue, eid = self.queue, self.eid

        def resume(_event: Due | None) -> None:
            due: Any
            try:  # not ``contextlib.suppress``: a context manager per event costs more than the rest
                # ``send(None)``, as SimPy resumes a process: ``next`` is the same step, and the compiled engine takes
                # it through the generator's own slot, without a bound method's call and its arguments parsed
                due = next(process)
            except StopIteration:
                return
            if type(due) is int:
                heappush(queue, (self.now + due, NORMAL, next(eid), resume))  # a light call (``run``)
            elif due is not None:  # None: parked, until its ``resume`` is fired
                due.callbacks.append(resume)

        heappush(queue, (self.now, URGENT, next(eid), resume))
        return resume

    def after(self, delay: int) -> Due:
        """``Clock.after``."""
        due = Due([])
        heappush(self.queue, (self.now + delay, NORMAL, next(self.eid), due))
        return due

    def call_later(self, delay: int, fn: Callable[[None], None]) -> None:
        """``Clock.call_later``."""
        heappush(self.queue, (self.now + delay, NORMAL, next(self.eid), fn))

    def call_first(self, delay: int, fn: Callable[[None], None]) -> None:
        """``Clock.call_first``."""
        heappush(self.queue, (self.now + delay, URGENT, next(self.eid), fn))

    def fire_at(self, event: Due | Resume, at: int) -> None:
        """``Clock.fire_at``."""
        heappush(self.queue, (at if at > self.now else self.now, NORMAL, next(self.eid), event))

    def fire(self, event: Due | Resume) -> None:
        """``Clock.fire``."""
        heappush(self.queue, (self.now, NORMAL, next(self.eid), event))


class Clock(simpy.Environment):
    """``simpy.Environment`` whose ``run()`` (until nothing is scheduled) steps without a call per event, through its
    ``agenda``."""

    #: SimPy allows fractional times; every time on this clock is a whole cycle (the engine's units, the GM link,
    #: the collectives all wait whole cycles), which lets the compiled engine (``simulator.native``) keep it, and
    #: the queue's keys, as machine integers
    _now: int  # type: ignore[assignment]
    _queue: list[tuple[int, int, int, Any]]  # type: ignore[assignment]

    @property
    def now(self) -> int:
        """The current cycle."""
        return self._now

    def __init__(self) -> None:
        super().__init__()
        # SimPy binds ``event``, ``timeout``, ``process``… to the instance only for names in the instance's
        # own class ``__dict__``; a subclass must do it itself, or every ``env.timeout`` goes through a
        # descriptor and builds a bound method.
        for name, attr in vars(simpy.Environment).items():
            if type(attr) is BoundClass:
                setattr(self, name, getattr(self, name))
        #: what the engine's units hold of the clock (``Agenda``)
        self.agenda = Agenda(self)

    def run(self, until: Any = None) -> Any:
        if until is not None:  # a stop time or event: SimPy's own loop, stepping with ``step``
            return super().run(until)
        self.agenda.run()
        return None

    def step(self) -> None:
        self.agenda.step()

    def start(self, process: Generator[Due | int | None, None, None]) -> Resume:
        """Run ``process`` (a generator yielding ``Due`` events, delays or ``None``) as ``env.process`` would: its
        first step at an urgent event now, each later one when the event it yielded fires. A yielded ``int`` is
        ``after(delay)`` made at that moment, in the same place of the queue, without an event of its own: the
        process's ``resume`` is queued as a call (``run``). A yielded ``None`` *parks* the process: it waits
        for whoever holds the ``resume`` this returns to ``fire`` it (or ``fire_at``), which queues the
        ``resume`` where the event it would have waited on would go — an ``Event`` with one callback, the
        process, without the event."""
        return self.agenda.start(process)

    def after(self, delay: int) -> Due:
        """``env.timeout(delay)`` for a process to yield (``delay`` ≥ 0), in the same place of the queue."""
        return self.agenda.after(delay)

    def call_later(self, delay: int, fn: Callable[[None], None]) -> None:
        """Call ``fn`` ``delay`` cycles from now, ordered as a ``Timeout`` made now would be."""
        self.agenda.call_later(delay, fn)

    def call_first(self, delay: int, fn: Callable[[None], None]) -> None:
        """Call ``fn`` ``delay`` cycles from now (``delay`` > 0), before every ordinary event of that cycle — in
        particular before a process a flag set earlier for that cycle resumes, or one that resumes then for
        another reason and finds that flag set. Calls due at the same cycle keep the order they were made in."""
        self.agenda.call_first(delay, fn)

    def signal(self) -> Due:
        """An event for a process to wait on until another ``fire``s it (``env.event()`` without its
        constructor): the scalar unit waiting for room in a queue, a pipe for work."""
        return Due([])

    def fire_at(self, event: Due | Resume, at: int) -> None:
        """Fire ``event`` at cycle ``at`` (now or later) as one scheduled event: a flag set behind transfers in
        flight fires when they complete, and its waiter resumes then. What a ``Timeout`` does to itself, on an
        event made earlier."""
        self.agenda.fire_at(event, at)

    def fire(self, event: Due | Resume) -> None:
        """``event.succeed()`` for an event not yet triggered: it is processed after those already due now. A
        parked process's ``resume`` (``start``) is fired the same way, and resumes where the event's one
        callback would run."""
        self.agenda.fire(event)
