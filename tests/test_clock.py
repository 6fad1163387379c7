"""``simulator.clock.Clock``: its light calls and processes run in the order SimPy's own events would."""

from __future__ import annotations

import simpy

from simulator.clock import Clock


def _scenario(env, log, light: bool):
    """Two processes waiting some cycles and on a signal, one parked and fired, callbacks due at the same cycles, one
    of them urgent:
    built the same way on a ``Clock`` (light calls) and on a plain ``simpy.Environment`` (events)."""

    def note(what):
        return lambda _event: log.append((what, env.now))

    def later(delay, what):
        if light:
            env.call_later(delay, note(what))
        else:
            env.timeout(delay).callbacks.append(note(what))

    signal = env.signal() if light else env.event()
    # a process parked (``yield None``) is resumed where an event it waited on would run: fired now, or later
    woken = [None, None] if light else [env.event(), env.event()]

    def waiter(name):
        for delay in (2, 0, 3):
            yield delay if light else env.timeout(delay)
            log.append((name, env.now))
        yield signal
        log.append((name + " signalled", env.now))

    def parked():
        for event, name in zip(woken, ("woken", "woken later"), strict=True):
            yield event
            log.append((name, env.now))

    def firer():
        yield 6 if light else env.timeout(6)
        log.append(("fire", env.now))
        if light:
            env.fire(signal)
            env.fire(resume)
        else:
            signal.succeed()
            woken[0].succeed()
        yield 1 if light else env.timeout(1)
        if light:
            env.fire_at(resume, 9)
        else:
            woken[1]._ok, woken[1]._value = True, None
            env.schedule(woken[1], simpy.events.NORMAL, 2)
        later(2, "at 9, made after the wake")

    later(2, "a")
    if light:
        env.call_first(2, note("first"))
        for p in (waiter("p"), waiter("q"), firer()):
            env.start(p)
        resume = env.start(parked())
    else:
        urgent = simpy.events.Event(env)
        urgent._ok, urgent._value = True, None
        env.schedule(urgent, simpy.events.URGENT, 2)
        urgent.callbacks.append(note("first"))
        for p in (waiter("p"), waiter("q"), firer(), parked()):
            env.process(p)
    later(5, "b")
    later(0, "c")


def test_light_calls_and_processes_keep_simpys_order():
    light, plain = [], []
    clock, env = Clock(), simpy.Environment()
    _scenario(clock, light, light=True)
    _scenario(env, plain, light=False)
    clock.run()
    env.run()
    assert light == plain
    assert ("woken", 6) in light and light.index(("woken later", 9)) < light.index(("at 9, made after the wake", 9))
    assert light[0] == ("c", 0) and ("first", 2) in light and light.index(("first", 2)) < light.index(("a", 2))
