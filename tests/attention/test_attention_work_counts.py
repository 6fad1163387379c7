"""The default attention search counts the work of a schedule in closed form (``work_counts``); it is the count of
the listed units and Q blocks (``plan.units``, ``plan.q_blocks``) dealt round-robin to the cores."""

from __future__ import annotations

import itertools

from compiler.attention.op import Attention
from compiler.tune.attention_work import q_blocks, units
from compiler.tune.steps import work_counts


def listed(op: Attention, tile_q: int, tile_kv: int, q_tiles: int, cores: int) -> tuple[int, int, int, int]:
    """The count from the lists: each core's programs, its K/V loads (one per key tile of a Q block's last query
    tile) and its query tiles."""
    work = q_blocks(units(op, tile_q, tile_kv), q_tiles)
    blocks = [[u for qb in work[c::cores] for u in qb] for c in range(min(cores, len(work)))]
    loads = max(sum(len(qb[-1].kv_tiles) for qb in q_blocks(b, q_tiles)) for b in blocks)
    return q_tiles * loads, loads, len(blocks), max(len(b) for b in blocks)


def test_work_counts_equal_the_listed_units():
    for (seq, causal, heads), tile_q, tile_kv, q_tiles, cores in itertools.product(
        ((200, True, 3), (200, False, 1), (1024, True, 4), (77, True, 2), (16, False, 1)),
        (16, 48, 64),
        (32, 96, 256),
        (1, 3, 8),
        (1, 5, 24, 64),
    ):
        op = Attention(batch=1, heads=heads, seq=seq, head_dim=64, causal=causal)
        got = work_counts(op, tile_q, tile_kv, q_tiles, cores)
        assert got == listed(op, tile_q, tile_kv, q_tiles, cores), (seq, causal, heads, tile_q, tile_kv, q_tiles, cores)
