"""Attention's GM traffic, by formula: what every (query tile, key tile) step reads and writes.

Both schedules read each query tile once and write each output tile once. ``flash`` reads a K and a V
tile per (Q block, key tile) pair — once for all the query tiles of a block, and only for the pairs it
processes, so a causal mask that skips tiles saves their bytes (each query tile of a block runs every key tile the
block needs) — and, on a separated chip, hands each
score and partial-output tile from the AIC to an AIV (``ws_c2v``) and each probability tile back
(``ws_v2c``) through GM, once each way — counted here as whole tiles for every query tile of every block: a bound,
as tail tiles move less (the compiled kernel's ``traffic`` counts them exactly).
``naive`` reads K once per query tile to write the scores, reads the scores back and writes the
probabilities (whole rows), then reads the probabilities and V for ``P·V``: the ``seq²`` terms.
A compiled flash kernel's ``traffic`` takes q, k, v and o from here and the hand-overs as its split counted them.
The simulator's measured ``gm_read + gm_write`` equals the compiled total exactly (the tests check it).
"""

from __future__ import annotations

from compiler.attention.op import Attention
from compiler.attention.plan import q_blocks, units
from compiler.attention.schedule import AttentionSchedule
from compiler.traffic import Term, Traffic


def attention_traffic(op: Attention, schedule: AttentionSchedule, vector_per_cube: int) -> Traffic:
    """The GM bytes of ``op`` under a resolved ``schedule``, term by term."""
    d, n = op.head_dim, op.seq
    work = units(op, schedule.tile_q, schedule.tile_kv)
    rows = sum(u.bq for u in work)
    terms = [Term("q", False, rows * d * 2, why=f"{len(work)} query tiles, once each")]
    es = 2 if op.precision == "fast" else 4
    if schedule.algorithm == "flash":
        blocks = q_blocks(work, schedule.q_tiles)
        tiles = [sorted({j for u in qb for j in u.kv_tiles}) for qb in blocks]
        kv = sum(min(schedule.tile_kv, n - j * schedule.tile_kv) for ts in tiles for j in ts) * d * 2
        skipped = sum(-(-n // schedule.tile_kv) - len(u.kv_tiles) for u in work)
        why = f"{sum(map(len, tiles))} key tiles"
        if schedule.q_tiles > 1:
            why += f", once per Q block of {schedule.q_tiles} query tiles"
        why += f"; {skipped} masked tiles skipped" if skipped else ""
        terms += [Term("k", False, kv, why=why), Term("v", False, kv, why=why)]
        if vector_per_cube:
            steps = schedule.q_tiles * sum(map(len, tiles))  # every query tile of a block, a tail block's too
            tq, tk = schedule.tile_q, schedule.tile_kv
            c2v, v2c = steps * (tq * tk * es + tq * d * 4), steps * tq * tk * 2
            why = f"Cube↔Vector hand-over: {steps} steps (whole tiles)"
            for name, b in (("ws_c2v", c2v), ("ws_v2c", v2c)):
                terms += [Term(name, True, b, why=why), Term(name, False, b, why=why)]
    else:
        tiles = -(-n // schedule.tile_kv)
        terms += [
            Term("k", False, len(work) * n * d * 2, why=f"all of k per query tile ({len(work)})"),
            Term("s", True, rows * n * es, why="the score matrix"),
            Term("s", False, rows * n * es, why="read back by the softmax"),
            Term("p", True, rows * n * 2, why="the probability matrix"),
            Term("p", False, rows * n * 2, why=f"read by P·V ({tiles} tiles per query tile)"),
            Term("v", False, len(work) * n * d * 2, why=f"all of v per query tile ({len(work)})"),
        ]
    terms.append(Term("o", True, rows * d * 2, why="once"))
    return Traffic(tuple(terms))
