"""Attention's work, counted: query tiles (*units*), their key tiles (*steps*) and Q blocks.

A *unit* is one query tile of one (batch, head): ``tile_q`` query rows and every key tile they attend to — all of
them, or with a causal mask only the tiles at or before the diagonal (a key tile wholly after the last query is
skipped; one that straddles the diagonal is a *diagonal* step and gets the mask). A *step* is one (unit, key tile)
pair: one score tile. Flash tiles the queries at two levels: ``q_tiles`` consecutive units of one (batch, head)
make a *Q block* (``block_q = q_tiles · tile_q`` rows, one program of the flash kernel), and a K/V tile is loaded
once per block. The default schedules' model, the GM traffic formula and lab 6 count with these; the kernels
themselves are tile-language programs (``flash_lang.py``, ``naive.py``) whose loops make the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.attention.op import Attention
from compiler.target import Target
from isa import Space


@dataclass(frozen=True)
class Unit:
    """Query rows ``q0 .. q0+bq`` of (batch·heads) index ``bh``, and the key tiles they use."""

    bh: int
    qi: int
    q0: int
    bq: int
    kv_tiles: tuple[int, ...]


@dataclass(frozen=True)
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
