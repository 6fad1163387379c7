"""``simulator.clock.Clock``: its light calls and processes run in the order SimPy's own events would."""

from __future__ import annotations

import simpy

from simulator.clock import Clock


def _scenario(env, log, light: bool):
    """Two processes waiting some cycles and on a signal, callbacks due at the same cycles, one of them urgent:
    built the same way on a ``Clock`` (light calls) and on a plain ``simpy.Environment`` (events)."""

    def note(what):
        return lambda _event: log.append((what, env.now))

    def later(delay, what):
        if light:
            env.call_later(delay, note(what))
        else:
            env.timeout(delay).callbacks.append(note(what))

    signal = env.signal() if light else env.event()

    def waiter(name):
        for delay in (2, 0, 3):
            yield delay if light else env.timeout(delay)
            log.append((name, env.now))
        yield signal
        log.append((name + " signalled", env.now))

    def firer():
        yield 6 if light else env.timeout(6)
        log.append(("fire", env.now))
        if light:
            env.fire(signal)
        else:
            signal.succeed()

    later(2, "a")
    if light:
        env.call_first(2, note("first"))
        for p in (waiter("p"), waiter("q"), firer()):
            env.start(p)
    else:
        urgent = simpy.events.Event(env)
        urgent._ok, urgent._value = True, None
        env.schedule(urgent, simpy.events.URGENT, 2)
        urgent.callbacks.append(note("first"))
        for p in (waiter("p"), waiter("q"), firer()):
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
    assert light[0] == ("c", 0) and ("first", 2) in light and light.index(("first", 2)) < light.index(("a", 2))
