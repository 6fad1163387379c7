"""Constant tiles: folded into one fill, and filled once rather than in every loop step.

A constant tile costs the Vector unit a ``v.dup``; arithmetic on it costs more instructions that compute what the
tracer already knows. FlashAttention starts its running maximum at ``tl.zeros([M], tl.float32) - float("inf")`` (a
``v.dup`` and a ``v.adds`` per program), and a row sum moved to the Cube (``compiler.language.cubesum``) multiplies
by a row of ones made in the loop step that needs it — a ``v.dup`` per step where the built-in flash kernel fills
that row once. Two rewrites of the traced records, each decided per kernel line (every instance of a line, in
every program and loop step, is rewritten or none is, so that the programs still merge into one nest):

- ``fold_fills``: a scalar step (``+ c``, ``* c``, ``max``/``min`` with ``c``) or a cast of a fill is a fill of
  the value it computes (in f32, rounded once to the result type, as the Vector unit computes it: bit for bit
  the same); a fill nothing reads any more goes.
- ``hoist_fills``: a fill in a loop step that every step makes alike (same value, type and shape) and that only
  that step reads — not as a ``tl.dot`` accumulator, which the Cube writes — is made once before the loop (the
  Halide/TVM loop-invariant code motion), and out of every enclosing loop the same way: once per program (also in a
  program whose loop runs no step, where nothing reads it: every program runs the same statements). Only a loop
  that runs two steps or more somewhere, or sits in one, is left so: the branches of an ``if`` on loaded data are
  loops of one step or none, and a fill made before one would only cost the programs that skip it.

rewrite::

    m = dup(0.0)                            m = dup(-inf)
    m = adds(m, -inf)                       ones = dup(1.0)
    for n in 0..N:               ==>        for n in 0..N:
      ones = dup(1.0)                         l = dot(ones, trans(p16))
      l = dot(ones, trans(p16))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from compiler.language.core import LoopRec, Rec, Tracer, drop, records
from compiler.language.errors import Site
from compiler.language.numerics import SCALAR, rounded
from compiler.language.stamp import original_bodies


def is_fill(r: Rec) -> bool:
    """A ``v.dup`` of one number into a tile (``tl.zeros``, ``tl.full``), reading nothing."""
    return r.kind == "vec" and r.op == "dup" and not r.ins


def fold_fills(t: Tracer) -> None:
    """Rewrite every scalar step and cast of a fill into the fill of its result (module docs), and of that fill,
    and so on (``tl.zeros(...).to(tl.float16) + 0.5``: one fill)."""
    while _fold_once(t):
        pass


def _fold_once(t: Tracer) -> bool:
    """One round of ``fold_fills``: the steps whose source is a fill now; whether any was folded. A stamped program's
    lines fold as its original's (``compiler.language.stamp.originals``): when none of the originals' lines folds,
    the round looks no further."""
    bodies = original_bodies(t)
    if len(bodies) < len(t.programs) and not _folding(t, [r for body in bodies for r in records(body)]):
        return False
    sources: set[int] = set()
    for found in _folding(t, [r for body in t.programs for r in records(body)]).values():
        for r, value in found:
            sources.add(r.ins[0])
            r.op, r.ins, r.attrs, r.params = "dup", (), (), (value,)
    if sources:
        _drop_unread(t, sources)
    return bool(sources)


def _folding(t: Tracer, recs: list[Rec]) -> dict[tuple, list[tuple[Rec, float]]]:
    """The lines of ``recs`` every instance of which is a scalar step or cast of a fill, by statement (its line, step
    and static attributes): each instance with the number it fills its tile with."""
    folded: dict[tuple, list[tuple[Rec, float]]] = {}
    vetoed: set[tuple] = set()
    for r in recs:
        value = _folded(t, r)
        if value is None:
            if r.kind == "vec" and r.op in ("scal", "cast"):
                vetoed.add((r.site, r.op, r.attrs))
            continue
        folded.setdefault((r.site, r.op, r.attrs), []).append((r, value))
    return {key: found for key, found in folded.items() if key not in vetoed}


def _folded(t: Tracer, r: Rec) -> float | None:
    """The number a scalar step or cast of a fill fills its tile with, or None if ``r`` is not one."""
    if r.kind != "vec" or r.op not in ("scal", "cast") or len(r.ins) != 1:
        return None
    src = t.values[r.ins[0]]
    made = src.rec
    if made is None or not is_fill(made) or src.transposed:
        return None
    out = t.values[r.out]  # type: ignore[index]
    if out.shape != src.shape or out.valid != src.valid or out.transposed:
        return None
    if not (src.dtype.is_float and out.dtype.is_float):  # a float → integer .to() truncates and saturates
        return None
    c = rounded(np.float32(made.params[0]), src.dtype).astype(np.float32)
    if r.op == "cast":
        value = float(rounded(c, out.dtype))
    elif r.attrs[0] in SCALAR:
        with np.errstate(all="ignore"):
            value = float(rounded(SCALAR[r.attrs[0]](c, np.float32(r.params[0])), out.dtype))
    else:
        return None
    return None if np.isnan(value) else value  # a NaN immediate is not equal to itself: programs would not compare


def _drop_unread(t: Tracer, vids: set[int]) -> None:
    """Drop the fills making ``vids`` that nothing reads, by line: every instance unread, or none dropped. A stamped
    program's fills are read as its original's (which it does not read): the lines are decided on the originals."""
    bodies = original_bodies(t)
    read = {v for body in bodies for r in records(body) for v in r.ins}
    by_site: dict[Site, bool] = {}  # line → every instance unread
    for body in bodies:
        for r in records(body):
            if is_fill(r) and r.out in vids:
                by_site[r.site] = by_site.get(r.site, True) and r.out not in read
    dead = {site for site, unread in by_site.items() if unread}
    if dead:
        gone = {id(r) for body in t.programs for r in records(body) if r.site in dead and is_fill(r) and r.out in vids}
        for body in t.programs:
            drop(body, gone)


def hoist_fills(t: Tracer) -> None:
    """Make each fill that qualifies (module docs) once before its loop, out of every loop it can leave.

    A loop is known by its place in the program (``_loops``' path), not by its line: the two loops an ``if``/``else``
    on loaded data becomes share the ``if``'s line, and so do a helper's loop called twice; a program where one of
    them runs no step gets a copy of that loop's own fill."""
    while True:
        # decided on one program of each form (compiler.language.stamp.originals): a stamped program's loops answer
        # as its original's, and reads only its own values
        bodies = original_bodies(t)
        readers = _readers(r for body in bodies for r in records(body))
        ok: dict[tuple[tuple[int, ...], int], bool] = {}  # (loop's place, position in its step): every instance
        repeats: set[tuple[int, ...]] = set()  # the places of loops that run two steps or more in some program
        for body in bodies:
            for _, path, loop in _loops(body, ()):
                if len(loop.iters) > 1:
                    repeats.add(path)
                for k in range(len(loop.iters[0]) if loop.iters else 0):
                    key = (path, k)
                    ok[key] = ok.get(key, True) and _invariant(t, loop, k, readers)
        # a fill leaves only a loop that repeats, or one inside a loop that repeats: out of an if on loaded data
        # (a loop of one step or none) it would cost the programs that do not take the branch and save nothing
        todo = {
            key for key, good in ok.items() if good and any(key[0][:n] in repeats for n in range(1, len(key[0]) + 1))
        }
        if not todo:
            return
        found = [(items, path, loop) for body in t.programs for items, path, loop in _loops(body, ())]
        made = {(path, k): loop.iters[0][k] for _, path, loop in found if loop.iters for k in range(len(loop.iters[0]))
                if (path, k) in todo}  # fmt: skip
        deepest = max(len(path) for path, _ in todo)
        for items, path, loop in found:  # the innermost loops first: hoisting changes the steps around them
            ks = sorted(k for where, k in todo if where == path)
            if ks and len(path) == deepest:
                _hoist(t, items, loop, [made[(path, k)] for k in ks], ks)


def _readers(recs: Iterable[Rec]) -> dict[int, list[tuple[Rec, int]]]:
    """Value → the records of ``recs`` reading it, with the input they read it at."""
    readers: dict[int, list[tuple[Rec, int]]] = {}
    for r in recs:
        for j, v in enumerate(r.ins):
            readers.setdefault(v, []).append((r, j))
    return readers


def _loops(items: list, path: tuple[int, ...]) -> Iterator[tuple[list, tuple[int, ...], LoopRec]]:
    """Every loop of a program with the list holding it and its place: the positions of it and of the loops around
    it in their lists (alike in every step of a loop and every program: they run the same statements)."""
    for i, d in enumerate(items):
        if isinstance(d, LoopRec):
            yield items, (*path, i), d
            for it in d.iters:
                yield from _loops(it, (*path, i))


def _invariant(t: Tracer, loop: LoopRec, k: int, readers: dict[int, list[tuple[Rec, int]]]) -> bool:
    """Whether record ``k`` of every step of ``loop`` is the same fill, read only in its own step and not as a
    ``tl.dot`` accumulator."""
    first = loop.iters[0][k]
    if not isinstance(first, Rec) or not is_fill(first):
        return False
    info = t.values[first.out]  # type: ignore[index]
    shape = (info.shape, info.dtype, info.valid, info.transposed)
    for it in loop.iters:
        r = it[k] if k < len(it) else None
        if not isinstance(r, Rec) or not is_fill(r) or r.site != first.site or r.params != first.params:
            return False
        i = t.values[r.out]  # type: ignore[index]
        if (i.shape, i.dtype, i.valid, i.transposed) != shape:
            return False
        mine = {id(x) for x in records(it)}
        for x, j in readers.get(r.out, []):  # type: ignore[arg-type]
            if id(x) not in mine or (x.kind == "dot" and j == 2):
                return False
    return True


def _hoist(t: Tracer, items: list, loop: LoopRec, like: list[Rec], ks: list[int]) -> None:
    """Move record ``k`` (each of ``ks``) of the first step of ``loop`` before it; the other steps' readers (each in
    its own step: ``_invariant``) read it. A loop of no steps in this program gets the fill all the same (``like``: one
    of another program's), unread, so that every program still runs the same statements."""
    if not loop.iters:
        kept = [_copy(t, r) for r in like]
    else:
        kept = [loop.iters[0][k] for k in ks]
    for it in loop.iters[1:]:
        now = {it[k].out: keep.out for k, keep in zip(ks, kept, strict=True)}  # its fills → the one hoisted
        for x in records(it):
            if any(v in now for v in x.ins):
                x.ins = tuple(now.get(v, v) for v in x.ins)
    for it in loop.iters:
        gone = {id(it[k]) for k in ks}
        it[:] = [d for d in it if id(d) not in gone]
    at = next(i for i, d in enumerate(items) if d is loop)
    items[at:at] = kept


def _copy(t: Tracer, r: Rec) -> Rec:
    """A new fill like ``r``, making a value of its own."""
    info = t.values[r.out]  # type: ignore[index]
    c = Rec("vec", "dup", r.site, (), None, (), r.params)
    c.out = t.new_value(info.shape, info.dtype, c, valid=info.valid, transposed=info.transposed)
    return c
