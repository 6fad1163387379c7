"""What attention's tile-language kernels (``naive.py``, ``flash_lang.py``) share: compiling flash's, and asking
once whether a schedule's tiles fit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from compiler.attention.op import Attention
from compiler.compiled import Compiled
from compiler.errors import BufferCapacityError, ScheduleError
from compiler.language.errors import LanguageError
from compiler.language.launch import compile_traced, trace
from compiler.memo import Memo


def compile_kernel(name: str, fn: Callable, grid: tuple[int, int, int], args: tuple, kwargs: dict, chip: object,
                   cores: int, depth: int, k0: int | None = None, rewrite: bool = True) -> Compiled:  # fmt: skip
    """``fn`` traced over ``grid`` and compiled by the language's passes, loops ``depth`` stages deep, every ``dot``
    longer than ``k0`` (if given) in L0 steps of ``k0``; ``rewrite=False``: as written (``compile_traced``)."""
    tracer, traced = trace(fn, grid, args, kwargs, False, depth)
    tracer.k_step = k0
    return compile_traced(name, tracer, traced, chip, cores, rewrite)


def short(op: Attention, seq: int) -> Attention:
    """One head group of ``op`` (one key head and its query heads) over at most ``seq`` positions: a program of it
    has the tiles of every program of ``op``, so compiling it tells whether a schedule fits."""
    return replace(op, batch=1, heads=op.group, kv_heads=1, seq=min(op.seq, seq))


def misfit(key: tuple, attempt: Callable[[], object]) -> Exception | None:
    """Why ``attempt()`` (a compile) is refused — tiles, stages, event ids — or None; remembered by ``key``, which
    names the chip by its fields (``Target.key``), never by its name."""

    def ask() -> Exception | None:
        try:
            attempt()
        except (LanguageError, BufferCapacityError, ScheduleError) as e:
            return e
        return None

    return MISFITS.get(key, ask)


#: Fit checks already answered: (chip's fields, the short kernel, the schedule on one core) → the refusal or None.
MISFITS: Memo[Exception | None] = Memo(4096)
