"""GM bandwidth shared by every transfer in flight on every core: fluid processor sharing.

Each transfer is a flow of bytes with its own cap (its path's peak). The link's bandwidth is split
max-min fairly (water-filling): flows whose cap is below the fair share get their cap, the rest share
what is left equally. Rates change only when a flow starts or ends, so the model never steps byte by
byte: on each change it moves every flow forward by ``rate × elapsed`` and schedules one wake-up at the
next completion (rounded up to a whole cycle).
"""

from __future__ import annotations

import math

import simpy

_EPS = 1e-6


class _Flow:
    __slots__ = ("cap", "done", "not_before", "rate", "remaining")

    def __init__(self, nbytes: float, cap: float, done: simpy.Event, not_before: int) -> None:
        self.remaining = float(nbytes)
        self.cap = cap
        self.rate = 0.0
        self.done = done
        self.not_before = not_before


class SharedBandwidth:
    """A link of ``bandwidth`` bytes/cycle; ``transfer(n, cap)`` returns an event fired when done."""

    def __init__(self, env: simpy.Environment, bandwidth: float) -> None:
        self.env = env
        self.bandwidth = float(bandwidth)
        self.flows: list[_Flow] = []
        self._last = 0.0
        self._generation = 0
        #: (cycle, total bytes/cycle in use) at every change: the GM bandwidth counter of the trace.
        self.usage: list[tuple[int, float]] = []

    def transfer(self, nbytes: float, cap: float, delay: int = 0, min_cycles: int = 0) -> simpy.Event:
        """An event fired when ``nbytes`` have streamed at up to ``cap`` bytes/cycle.

        Streaming starts ``delay`` cycles from now (a transfer's fixed start-up) and the event fires no
        earlier than ``min_cycles`` after streaming starts. One event for the caller, whatever happens.
        """
        env = self.env
        done = env.event()
        start = env.now + delay
        flow = _Flow(nbytes, cap, done, start + min_cycles)
        if delay:
            env.timeout(delay).callbacks.append(lambda _e: self._start(flow))
        else:
            self._start(flow)
        return done

    def _start(self, flow: _Flow) -> None:
        if flow.remaining <= 0:
            self._finish(flow)
            return
        self._advance()
        self.flows.append(flow)
        self._reallocate()

    def _finish(self, flow: _Flow) -> None:
        wait = flow.not_before - self.env.now
        if wait > 0:
            self.env.timeout(wait).callbacks.append(lambda _e: flow.done.succeed())
        else:
            flow.done.succeed()

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
        self._last = now

    def _reallocate(self) -> None:
        flows = self.flows
        left, n = self.bandwidth, len(flows)
        for f in sorted(flows, key=lambda f: f.cap) if n > 1 else flows:
            f.rate = min(f.cap, left / n)
            left -= f.rate
            n -= 1
        now = self.env.now
        total = self.bandwidth - left
        if self.usage and self.usage[-1][0] == now:
            self.usage[-1] = (now, total)
        elif not self.usage or self.usage[-1][1] != total:
            self.usage.append((now, total))
        self._generation += 1
        if flows:
            finish = now + min(f.remaining / f.rate for f in flows)
            delay = max(0, math.ceil(finish - _EPS) - now)
            gen = self._generation
            self.env.timeout(delay).callbacks.append(lambda _e: self._tick(gen))

    def _tick(self, generation: int) -> None:
        if generation != self._generation:
            return  # a newer start or end rescheduled the wake-up
        self._advance()
        finished = [f for f in self.flows if f.remaining <= _EPS * max(1.0, f.rate)]
        if not finished:  # rounding: finish on the next whole cycle
            finished = [min(self.flows, key=lambda f: f.remaining / f.rate)]
        for f in finished:
            self.flows.remove(f)
            self._finish(f)
        self._reallocate()
