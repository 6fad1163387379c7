"""GM bandwidth shared by every transfer in flight on every core: fluid processor sharing.

Each transfer is a flow of bytes with its own cap (its path's peak). The link's bandwidth is split
max-min fairly (water-filling): flows whose cap is below the fair share get their cap, the rest share
what is left equally. Rates change only when a flow starts or ends, so the model never steps byte by
byte: on each change it moves every flow forward by ``rate × elapsed`` and schedules one wake-up at the
next completion (rounded up to a whole cycle).
"""

from __future__ import annotations

import math
from bisect import insort
from functools import partial
from operator import attrgetter

from simulator.clock import Clock, Due, Resume

_EPS = 1e-6
_CAP = attrgetter("cap")  # a flow's cap, the water-filling order


class _Flow:
    __slots__ = ("cap", "done", "not_before", "rate", "remaining")

    def __init__(self, nbytes: float, cap: float, done: Due | Resume, not_before: int) -> None:
        self.remaining = float(nbytes)
        self.cap = cap
        self.rate = 0.0
        self.done = done
        self.not_before = not_before


class SharedBandwidth:
    """A link of ``bandwidth`` bytes/cycle; ``transfer(n, cap)`` returns an event fired when done."""

    def __init__(self, env: Clock, bandwidth: float) -> None:
        self.env = env.agenda  # the clock, as the compiled engine reads it fast (``Agenda``)
        self.bandwidth = float(bandwidth)
        #: the flows streaming, in the order they started (the order their completions fire in)
        self.flows: list[_Flow] = []
        #: the same flows by cap, ties in start order: the water-filling order, kept as flows come and go
        #: rather than sorted at every change (a 24-core chip has dozens in flight)
        self._by_cap: list[_Flow] = []
        self._last = 0.0
        self._generation = 0
        #: (cycle, total bytes/cycle in use) at every change: the GM bandwidth counter of the trace.
        self.usage: list[tuple[int, float]] = []

    def transfer(
        self, nbytes: float, cap: float, delay: int = 0, min_cycles: int = 0, resume: Resume | None = None
    ) -> Due | None:
        """An event fired when ``nbytes`` have streamed at up to ``cap`` bytes/cycle.

        Streaming starts ``delay`` cycles from now (a transfer's fixed start-up) and the event fires no
        earlier than ``min_cycles`` after streaming starts. One event for the caller, whatever happens. Given
        a parked process's ``resume`` (``Clock.start``), that is fired instead, in the event's place, and
        the transfer returns None (for the process to yield: parked).
        """
        env = self.env
        done = Due([]) if resume is None else resume  # ``env.signal()``, without the call: once per transfer
        flow = _Flow(nbytes, cap, done, env.now + delay + min_cycles)
        if delay:
            env.call_later(delay, partial(self._start, flow))
        else:
            self._start(flow)
        return None if resume is not None else done  # type: ignore[return-value]  # ``done`` is the ``Due`` then

    def _start(self, flow: _Flow, _due: None = None) -> None:
        if flow.remaining <= 0:
            self._finish(flow)
            return
        self._advance()
        self.flows.append(flow)
        insort(self._by_cap, flow, key=_CAP)
        self._reallocate()

    def _finish(self, flow: _Flow) -> None:
        # ``fire_at`` would put the event later in the queue than a timeout followed by ``succeed`` does
        if flow.not_before > self.env.now:
            self.env.call_later(flow.not_before - self.env.now, partial(self._fire, flow.done))
        else:
            self.env.fire(flow.done)

    def _fire(self, done: Due | Resume, _due: None) -> None:
        self.env.fire(done)

    def rate_alone(self, cap: float) -> float:
        """The rate a flow gets with no other traffic."""
        return min(cap, self.bandwidth)

    # ------------------------------------------------------------------------------ internals
    def _advance(self) -> None:
        now = self.env.now
        dt = now - self._last
        if dt:
            for f in self.flows:
                f.remaining -= f.rate * dt
        self._last = float(now)  # the same differences: ``rate * dt`` is a float either way

    def _reallocate(self) -> None:
        flows = self.flows
        left, n = self.bandwidth, len(flows)
        soonest = math.inf  # the fewest cycles a flow needs to finish at its new rate (the same minimum in any order)
        if n == 1:  # the usual case, one transfer at a time: the loop below, once, with no loop
            f = flows[0]
            f.rate = left if left < f.cap else f.cap
            left -= f.rate
            soonest = f.remaining / f.rate
        else:
            for f in self._by_cap:
                share = left / n
                rate = f.rate = share if share < f.cap else f.cap  # min(cap, share), as written out: no call per flow
                left -= rate
                n -= 1
                cycles = f.remaining / rate
                if cycles < soonest:
                    soonest = cycles
        now = self.env.now
        total = self.bandwidth - left
        usage = self.usage
        last = usage[-1] if usage else None
        if last is not None and last[0] == now:
            usage[-1] = (now, total)
        elif last is None or last[1] != total:
            usage.append((now, total))
        self._generation += 1
        if flows:
            delay = math.ceil(now + soonest - _EPS) - now
            if delay < 0:
                delay = 0
            self.env.call_later(delay, partial(self._tick, self._generation))

    def _tick(self, generation: int, _due: None = None) -> None:
        if generation != self._generation:
            return  # a newer start or end rescheduled the wake-up
        self._advance()
        flows = self.flows
        # ``remaining <= _EPS * max(1, rate)``, written out
        finished = [f for f in flows if f.remaining <= _EPS * (f.rate if f.rate > 1.0 else 1.0)]
        if not finished:  # rounding: finish on the next whole cycle
            finished = [min(flows, key=lambda f: f.remaining / f.rate)]
        by_cap = self._by_cap
        for f in finished:
            flows.remove(f)
            by_cap.remove(f)
            self._finish(f)
        self._reallocate()
