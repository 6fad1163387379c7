"""Graders of lab 2, tiling and loop order. Oracles: the compiler's traffic analysis (which the simulator's
measured GM bytes equal exactly, tests/compiler) and the compiler's capacity checks."""

from __future__ import annotations

import itertools
from typing import Any

from compiler import MatMul, Schedule
from dsasim import compile_and_run, compile_op
from isa import DsasimError
from labs.checks.core import Grader, exercise
from simulator import load_chip

#: (M, N, K, tm, tn, tk): square and not, tails, loops of one trip (K = tk, N = tn), tiny tiles.
TRAFFIC_CASES = (
    (256, 256, 256, 64, 64, 64),
    (256, 256, 256, 32, 128, 64),
    (128, 256, 64, 64, 64, 64),
    (96, 160, 80, 32, 64, 32),
    (100, 70, 90, 32, 48, 32),
    (64, 512, 128, 64, 128, 32),
    (128, 128, 512, 32, 128, 128),
)


def _orders() -> list[tuple[str, ...]]:
    return list(itertools.permutations("mnk"))


@exercise("2.1", "predict_gm_bytes(M, N, K, tm, tn, tk, order) → GM bytes of an f16 matmul")
def _predict(g: Grader, fn: Any) -> None:
    g.function(fn, "predict_gm_bytes", 7)
    chip = load_chip("edu")
    for (M, N, K, tm, tn, tk), order in itertools.product(TRAFFIC_CASES, _orders()):
        try:
            compiled = compile_op(
                MatMul(M, N, K), Schedule(tile={"m": tm, "n": tn, "k": tk}, order=order, buffers={"c": 1}), chip
            )
        except DsasimError:
            continue  # this order cannot hold its accumulators in L0C: no run to compare with
        case = f"predict_gm_bytes({M}, {N}, {K}, {tm}, {tn}, {tk}, {order})"
        got = g.number(g.call(fn, M, N, K, tm, tn, tk, tuple(order), case=case), case, integer=True, unit="bytes")
        trips = {"m": -(-M // tm), "n": -(-N // tn), "k": -(-K // tk)}
        if 1 in trips.values():
            hint = "a loop of one trip is not generated: it neither holds a load nor repeats one"
        elif M % tm or N % tn or K % tk:
            hint = "trip counts round up: a tail tile is one more trip"
        else:
            hint = (
                "a load sits in the innermost loop indexing its tensor; loops around it that do not index it repeat it"
            )
        g.close(got, compiled.gm_bytes_expected, case, hint=hint)


@exercise("2.2", "best_orders: the orders (e.g. 'm,n,k') of the 256³ matmul with 64³ tiles that move the fewest bytes")
def _best_orders(g: Grader, answer: Any) -> None:
    got = set()
    for o in g.strings(answer, "best_orders", "m,n,k"):
        norm = "".join(ch for ch in o.lower() if ch in "mnk")
        if sorted(norm) != ["k", "m", "n"]:
            g.fail(f"the entry {o!r} is not an order of m, n and k", hint="write orders as 'm,n,k'")
        got.add(norm)
    chip = load_chip("edu")
    moved = {}
    for order in _orders():
        sched = Schedule(tile={"m": 64, "n": 64, "k": 64}, order=order, buffers={"c": 1})
        try:
            moved["".join(order)] = compile_and_run(MatMul(256, 256, 256), sched, chip, timing_only=True).stats.gm_bytes
        except DsasimError:
            continue
    fewest = {o for o, b in moved.items() if b == min(moved.values())}
    for o in got - set(moved):
        g.fail(f"order {','.join(o)} does not compile", hint="read the error it raises")
    g.right(
        got == fewest,
        f"your list {sorted(answer)}",
        hint="measure run.stats.gm_bytes for every order that compiles; list all that tie for the fewest",
    )


@exercise("2.3", "'a', 'b', 'c' or 'd': why cycles fell faster than bytes as tiles grew")
def _why_cycles(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "de9022bb59567f19550f",
        hint="compare the number of copies and mmads of the two runs (r.program.instruction_count) and lab 0's copy "
        "model: the peak bandwidth is a constant of the chip; which part of a copy's time does not depend on its size?",
    )


@exercise("2.4", "c_tile_fits(chip, tm, tn, c_buffers) → do the f32 accumulator tiles fit L0C?")
def _fits(g: Grader, fn: Any) -> None:
    g.function(fn, "c_tile_fits", 4)
    cases = [("edu", 128, 128, 1), ("edu", 128, 128, 2), ("edu", 64, 128, 2), ("edu", 96, 96, 2), ("edu", 80, 80, 2),
             ("edu", 256, 64, 1), ("edu", 128, 144, 1), ("edu", 48, 176, 2), ("ascend910b-like", 128, 128, 2),
             ("ascend910b-like", 128, 160, 2)]  # fmt: skip
    for chip_name, tm, tn, cb in cases:
        chip = load_chip(chip_name)
        case = f"c_tile_fits({chip_name}, {tm}, {tn}, {cb})"
        got = g.call(fn, chip, tm, tn, cb, case=case)
        if not isinstance(got, bool) and type(got).__name__ != "bool_":
            g.fail(f"{case} gave {type(got).__name__} {got!r:.40}; it should be True or False", hint="return a bool")
        sched = Schedule(tile={"m": tm, "n": tn, "k": 32, "k0": 16}, order=("m", "n", "k"), buffers={"c": cb})
        try:
            compile_op(MatMul(2 * tm, 2 * tn, 64), sched, chip)
            fits = True
        except DsasimError as err:
            if "L0C" not in str(err):
                continue
            fits = False
        g.right(bool(got) == fits, f"{case} = {bool(got)}", hint="f32 is 4 bytes; every buffer holds one tile")
