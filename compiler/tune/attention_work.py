"""Attention's work, counted: query tiles (*units*), their key tiles (*steps*) and Q blocks.

A *unit* is one query tile of one (batch, head): ``tile_q`` query rows and every key tile they attend to — all of
them, or with a causal mask only the tiles at or before the diagonal (a key tile wholly after the last query is
skipped; one that straddles the diagonal is a *diagonal* step and gets the mask). A *step* is one (unit, key tile)
pair: one score tile. Flash tiles the queries at two levels: ``q_tiles`` consecutive units of one (batch, head)
make a *Q block* (``block_q = q_tiles · tile_q`` rows, one program of the flash kernel), and a K/V tile is loaded
once per block. The default schedules' model, the GM traffic formula and lab 6 count with these; the kernels
themselves are tile-language programs (``compiler.attention.flash_lang``, ``naive``) whose loops make the same steps.

**GM traffic** (:func:`attention_traffic`), by formula: what every (query tile, key tile) step reads and writes.

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
from compiler.target import Target
from compiler.traffic import Term, Traffic
from compiler.tune.attention_schedule import AttentionSchedule
from isa import Space
from isa.records import record


@record
class Unit:
    """Query rows ``q0 .. q0+bq`` of (batch·heads) index ``bh``, and the key tiles they use."""

    bh: int
    qi: int
    q0: int
    bq: int
    kv_tiles: tuple[int, ...]


@record
class Step:
    """One score tile: ``unit``'s queries against keys ``kv0 .. kv0+bk`` (key tile ``j``)."""

    unit: Unit
    j: int
    kv0: int
    bk: int
    first: bool  # the unit's first key tile
    last: bool  # the unit's last key tile
    diag: bool  # straddles the causal diagonal: some of its elements are masked


def units(op: Attention, tile_q: int, tile_kv: int) -> list[Unit]:
    """Every (batch·head, query tile) unit in order, with the key tiles it needs."""
    s = op.seq
    out = []
    for bh in range(op.bh):
        for qi in range(-(-s // tile_q)):
            q0 = qi * tile_q
            bq = min(tile_q, s - q0)
            last_key = q0 + bq - 1 if op.causal else s - 1
            out.append(Unit(bh, qi, q0, bq, tuple(range(last_key // tile_kv + 1))))
    return out


def steps(op: Attention, unit: Unit, tile_kv: int) -> list[Step]:
    """The unit's steps, key tiles in order."""
    out = []
    n = len(unit.kv_tiles)
    for i, j in enumerate(unit.kv_tiles):
        kv0 = j * tile_kv
        bk = min(tile_kv, op.seq - kv0)
        diag = op.causal and kv0 + bk - 1 > unit.q0  # some key after some query of the tile
        out.append(Step(unit, j, kv0, bk, i == 0, i == n - 1, diag))
    return out


def q_blocks(block: list[Unit], q_tiles: int) -> list[list[Unit]]:
    """``block`` (units in order) cut into Q blocks: runs of the units of one (batch·head) whose query
    tiles share ``qi // q_tiles``."""
    out: list[list[Unit]] = []
    for u in block:
        if out and (out[-1][0].bh, out[-1][0].qi // q_tiles) == (u.bh, u.qi // q_tiles):
            out[-1].append(u)
        else:
            out.append([u])
    return out


def loads_nz(target: Target, dst: Space) -> bool:
    """Whether a GM load into ``dst`` changes the layout to the Cube's on the way (``nd2nz``): into L1 on a
    chip whose Cube takes its operands in the NZ layout (``[nd2nz]`` in its parameters), as ``lower`` loads
    a matmul's operands — every tile attention brings into L1 is a Cube operand."""
    return dst is Space.L1 and getattr(target.params, "nd2nz", None) is not None


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
