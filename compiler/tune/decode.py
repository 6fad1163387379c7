"""Decode attention's schedule family: the keys per K/V tile of its fused kernel (``compiler.decode_attention``).

A decode kernel is bound by the cache's bytes, so its schedule's one real choice is ``tile_kv`` (keys per K/V tile):
:func:`decode_cycles` prices a core's loads, one after another (:func:`problem_loads`), for each tile of
:data:`TILE_KV`; :func:`decode_schedule` takes the cheapest whose program fits the chip (a compile of one or two
problems on one core), ties to the least busy MTE2: the ND→NZ change is cheaper per byte for loads of a multiple of
32 KiB (384 keys of 256 B: 96 KiB). Flash-decoding's chunk count (``compiler.graph.kv_chunks``) asks the same model.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.decode_attention.kernel import launch_decode, query_rows
from compiler.decode_attention.op import KV_DTYPES, DecodeAttention
from compiler.target import Target
from compiler.tune.attention_fit import misfit
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.attention_work import loads_nz
from isa import Space, Transfer
from isa.timing import nd2nz_cycles

#: keys per K/V tile the default schedule tries
TILE_KV = (64, 128, 192, 256, 320, 384, 448, 512)


def decode_cycles(op: DecodeAttention, target: Target, tile_kv: int, cores: int) -> float:
    """Predicted cycles of ``op`` with ``tile_kv`` keys per tile on ``cores`` cores: each core's problems one
    after another, each tile's K and V loads in turn on its MTE2 (:func:`problem_loads`)."""
    active = min(cores, op.problems)
    return -(-op.problems // active) * problem_loads(op, target, tile_kv, active, op.problems > active)


def problem_loads(op: DecodeAttention, target: Target, tile_kv: int, active: int = 1, staggered: bool = True) -> float:
    """Cycles one problem's K and V loads take on a core while ``active`` cores load alike. A load's fixed
    cycles (start-up, a cycle per key row, the ND→NZ change's own) stream no byte. With one problem per core
    the cores are in step — their fixed cycles at once — so a load takes its fixed cycles and then its bytes
    at the core's share of the GM; with more problems than cores the stagger (module doc) lets the other
    cores' streaming fill one core's fixed cycles, and a load takes the longer of its time alone and its
    share of the GM's time for the active cores' loads."""
    row = op.head_dim * KV_DTYPES[op.kv_dtype].itemsize
    path = target.path(Space.GM, Space.L1)
    share = min(path.bandwidth, target.gm_bandwidth / active)
    total = 0.0
    for start in range(0, op.keys, tile_kv):
        rows = min(tile_kv, op.keys - start)
        extra = nd2nz_cycles(target.params, rows, row) if loads_nz(target, Space.L1) else 0
        load = Transfer(Space.GM, Space.L1, rows, row, extra)
        fixed = load.fixed_cycles(path)
        if staggered:
            total += 2 * max(fixed + load.nbytes / path.bandwidth, load.nbytes * active / target.gm_bandwidth)
        else:
            total += 2 * (fixed + load.nbytes / share)
    return total


def decode_schedule(op: DecodeAttention, target: Target, schedule: AttentionSchedule) -> AttentionSchedule:
    """``schedule`` with ``tile_kv`` (if not given) the cheapest by :func:`decode_cycles` of those whose
    program fits the chip, and ``depth`` 2 (the next tile's loads overlap this one's work) unless given."""
    depth = schedule.depth or 2
    rows = query_rows(op.group)
    base = schedule.replace(algorithm="flash", tile_q=rows, block_q=rows, depth=depth)
    if schedule.tile_kv or op.pages:
        return base.replace(tile_kv=schedule.tile_kv or op.block)
    cap = -(-op.keys // 16) * 16
    # the fewest predicted cycles, then the least busy MTE2 (more slack under the GM's pace), then larger
    tiles = sorted(
        (t for t in TILE_KV if t <= max(TILE_KV[0], cap)),
        key=lambda t: (decode_cycles(op, target, t, base.cores), problem_loads(op, target, t), -t),
    )
    error: Exception | None = None
    one = op.one_problem()
    if op.problems > 1:  # a core with two problems holds the next one's first tiles beside this one's (programs
        one = replace(one, batch=2)  # overlap): check the fit on two, one core, as the kernel will run them
    for t in tiles:
        chosen = base.replace(tile_kv=t)
        error = misfit((target.key, one, chosen.replace(cores=1)),
                       lambda s=chosen: launch_decode(one, s.replace(cores=1), target.params))  # fmt: skip
        if error is None:
            return chosen
    raise error  # type: ignore[misc]
