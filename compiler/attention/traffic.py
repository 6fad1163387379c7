"""Attention's GM traffic, by formula: what every (query tile, key tile) step reads and writes.

Both schedules read each query tile once and write each output tile once. ``flash`` reads a K and a V
tile per (Q block, key tile) pair — once for all the query tiles of a block, and only for the pairs it
processes, so a causal mask that skips tiles saves their bytes — and, on a separated chip, moves each
score, probability and partial-output tile through GM once each way.
``naive`` reads K once per query tile to write the scores, reads the scores back and writes the
probabilities (whole rows), then reads the probabilities and V for ``P·V``: the ``seq²`` terms.
The simulator's measured ``gm_read + gm_write`` equals the total exactly (the tests check it).
"""

from __future__ import annotations

from compiler.attention.op import Attention
from compiler.attention.plan import units as plan_units
from compiler.attention.schedule import AttentionSchedule
from compiler.traffic import Term, Traffic


def attention_traffic(
    op: Attention, schedule: AttentionSchedule, vector_per_cube: int, kernel: object | None = None
) -> Traffic:
    """The GM bytes of ``op`` under a resolved ``schedule``, term by term: flash's steps are ``kernel``'s (a
    ``FlashKernel``); naive's query tiles are the plan's (``kernel`` None)."""
    d, n = op.head_dim, op.seq
    if kernel is None:
        units = plan_units(op, schedule.tile_q, schedule.tile_kv)
    else:
        units = [u for block in kernel.blocks for u in block]
    q_bytes = sum(u.bq for u in units) * d * 2
    terms = [Term("q", False, q_bytes, why=f"{len(units)} query tiles, once each")]
    if schedule.algorithm == "flash":
        st = [s for block in kernel.blocks for s in kernel.core_steps(block)]
        loads = [s for s in st if s.kv_first]
        kv = sum(s.bk for s in loads) * d * 2
        skipped = sum(-(-n // schedule.tile_kv) - len(u.kv_tiles) for u in units)
        why = f"{len(loads)} key tiles"
        if schedule.q_tiles > 1:
            why += f", once per Q block of {schedule.q_tiles} query tiles"
        why += f"; {skipped} masked tiles skipped" if skipped else ""
        terms += [Term("k", False, kv, why=why), Term("v", False, kv, why=why)]
        if vector_per_cube:
            es = 2 if op.precision == "fast" else 4
            s_b = sum(s.bk * s.unit.bq for s in st)
            pv_b = sum((d + 1) * s.unit.bq * 4 for s in st)
            ones = len(kernel.blocks) * schedule.k0 * 2
            for name, b in (("ws_s", s_b * es), ("ws_p", s_b * 2), ("ws_pv", pv_b), ("ws_ones", ones)):
                terms += [
                    Term(name, True, b, why="Cube↔Vector hand-over"),
                    Term(name, False, b, why="Cube↔Vector hand-over"),
                ]
    else:
        es = 2 if op.precision == "fast" else 4
        rows = sum(u.bq for u in units)
        tiles = -(-n // schedule.tile_kv)
        terms += [
            Term("k", False, len(units) * n * d * 2, why=f"all of k per query tile ({len(units)})"),
            Term("s", True, rows * n * es, why="the score matrix"),
            Term("s", False, rows * n * es, why="read back by the softmax"),
            Term("p", True, rows * n * 2, why="the probability matrix"),
            Term("p", False, rows * n * 2, why=f"read by P·V ({tiles} tiles per query tile)"),
            Term("v", False, len(units) * n * d * 2, why=f"all of v per query tile ({len(units)})"),
        ]
    terms.append(Term("o", True, sum(u.bq for u in units) * d * 2, why="once"))
    return Traffic(tuple(terms))
