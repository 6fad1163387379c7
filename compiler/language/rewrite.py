"""Rewrites of a traced launch's records, before they merge into the static nest (``compiler.language.nest``).

They make Triton's FlashAttention loop compile as it reads, each applied at every instance of a line:

- ``copy_for_stores``: a loaded tile stored and also read by vector code, or a value carried across loop steps
  and stored inside the loop, is stored from a ``v.copy``;

- ``split_vector_accumulators``: ``acc = tl.dot(p, v, acc)`` on an accumulator vector code changes
  (``acc = acc * alpha[:, None]``) becomes ``tl.dot(p, v)`` into L0C and a vector add into ``acc`` (in UB):
  L0C is written by the Cube only — what the built-in FlashAttention does too;
- ``carry_copies``: a loop-carried value read after its replacement was written (``m_ij = tl.maximum(m_i,
  ...)``, then ``tl.exp(m_i - m_ij)``, ``m_i = m_ij`` carried) gets a copy at the end of the loop step;
- ``cube_first``: in a loop step, a ``tl.dot`` that reads a vector result (``p.to(tl.float16)``) moves up
  with the vector lines it needs, just after them: the rest of the step's vector work (``tl.sum(p, 1)``,
  the statistics, ``acc * alpha``) then runs while ``p`` goes to the Cube, instead of before;
- ``cube_results_last``: in a loop step, the lines that read such a dot's result (``acc + p·v``), and those
  that depend on them, go to the end of the step: the Vector unit, which runs in order, does the step's
  other work (``acc * alpha[:, None]``) while ``p`` makes its trip through L1, the Cube and FIXPIPE.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from compiler.language.core import LoopRec, Rec, Tracer
from compiler.language.stamp import original_bodies, stamped_from


def _walk_lists(items: list, inside: list | None = None) -> Iterator[tuple[Rec, list | None]]:
    """Every record of a program with the innermost loop-step list holding it (None: outside loops)."""
    for d in items:
        if isinstance(d, LoopRec):
            for it in d.iters:
                yield from _walk_lists(it, it)
        else:
            yield d, inside


def _all(items: list) -> Iterator[Rec]:
    for d, _ in _walk_lists(items):
        yield d


def copy_for_stores(t: Tracer) -> None:
    """A store reads a ``v.copy`` of its value, at every instance of that line, where the value is a loaded tile
    also read by vector code (``tl.store(y, x)`` and ``tl.sum(x)``: a tile in UB is handed on by one unit, so
    MTE3 and the Vector unit do not both wait on the load), or is carried from one loop step to the next (the
    running accumulator stored inside its loop: the copy is the step's own value)."""
    need = set()  # the store lines to copy for, at every instance (all programs and steps run the same operations)
    for body in original_bodies(t):  # a stamped program's lines answer as its original's
        readers: dict[int, set[str]] = {}
        for d in _all(body):
            for v in d.ins:
                readers.setdefault(v, set()).add(d.kind)
        carried = _carried(body)
        for d in _all(body):
            made = t.values[d.ins[0]].rec if d.kind == "store" else None
            if made is not None and (
                (made.kind == "load" and "vec" in readers.get(d.ins[0], ()))
                or (made.kind == "vec" and d.ins[0] in carried)
            ):
                need.add(d.site)
    if not need:
        return
    for body in t.programs:
        for d, inside in list(_walk_lists(body)):
            if d.kind != "store" or d.site not in need:
                continue
            info = t.values[d.ins[0]]
            copy = Rec("vec", "un", d.site, (d.ins[0],), None, ("copy",))
            copy.out = t.new_value(info.shape, info.dtype, copy, info.valid, info.transposed)
            d.ins = (copy.out, *d.ins[1:])
            items = body if inside is None else inside
            items.insert(next(i for i, x in enumerate(items) if x is d), copy)


def _carried(items: list) -> set[int]:
    """Values made in one step of a loop and read in its next step."""
    out: set[int] = set()
    for d in items:
        if isinstance(d, LoopRec):
            for a, b in zip(d.iters, d.iters[1:], strict=False):
                made = {r.out for r in _all(a)}
                out.update(v for r in _all(b) for v in r.ins if v in made)
            for it in d.iters:
                out |= _carried(it)
    return out


def split_vector_accumulators(t: Tracer) -> None:
    """``acc = tl.dot(a, b, acc)`` where ``acc`` is not a Cube value (vector code scaled it, or a load made
    it), or is read inside the loop that accumulates it: record ``tl.dot(a, b)`` and a vector add instead, at
    every instance of that line."""
    bodies = original_bodies(t)  # a stamped program's lines answer as its original's
    dots = [d for body in bodies for d in _all(body) if d.kind == "dot" and len(d.ins) == 3]

    def in_cube(d: Rec) -> bool:
        made = t.values[d.ins[2]].rec
        return made is not None and (
            made.kind == "dot" or (made.kind == "vec" and made.op == "dup" and made.params == (0.0,))
        )

    split = {(d.site, d.attrs) for d in dots if not in_cube(d)} | _observed_in_loop(bodies)
    if not split:
        return
    for body in t.programs:
        _split_in(t, body, split)


def _observed_in_loop(bodies: list[list]) -> set:
    """The ``tl.dot(a, b, acc)`` lines whose accumulator is read in the loop step that accumulates it (``tl.store``
    of the running sum inside the K loop): in L0C it is only whole after the loop, so it accumulates in UB."""
    out: set = set()

    def visit(items: list) -> None:
        for d in items:
            if isinstance(d, LoopRec):
                for it in d.iters:
                    read = {v for r in _all(it) if r.kind in ("store", "vec") for v in r.ins}
                    out.update(
                        (r.site, r.attrs) for r in _all(it) if r.kind == "dot" and len(r.ins) == 3 and r.out in read
                    )
                    visit(it)

    for body in bodies:
        visit(body)
    return out


def _split_in(t: Tracer, items: list, split: set) -> None:
    i = 0
    while i < len(items):
        d = items[i]
        if isinstance(d, LoopRec):
            for it in d.iters:
                _split_in(t, it, split)
        elif d.kind == "dot" and len(d.ins) == 3 and (d.site, d.attrs) in split:
            out = t.values[d.out]
            product = t.new_value(out.shape, out.dtype, d)
            add = Rec("vec", "bin", d.site, (d.ins[2], product), d.out, ("add", False, False))
            out.rec = add
            d.ins, d.out = d.ins[:2], product
            d.attrs = (*d.attrs[:2], False, *d.attrs[3:])
            items.insert(i + 1, add)
            i += 1
        i += 1


def carry_copies(t: Tracer, statics: set[int], of: dict[int, object]) -> None:
    """For each statement in ``statics`` (ids of their ``Static``; ``of``: record id → its ``Static``) inside a
    loop: copy its value at the end of every loop step — before the step's tail of lines reading Cube results
    (``cube_results_last``) when that tail reads nothing from before the step, so that the tail can run a step
    late (``rotation.lagging``) — and let every reader outside that step read the copy. Where the copies go, and
    who reads them, is found in each original program (``compiler.language.stamp.originals``) and done by position
    in the programs stamped from it."""
    like = stamped_from(t)
    plans: dict[int, list[tuple[int, int, list[int]]]] = {}  # per original: (record, where in its step, readers)
    for p, body in enumerate(t.programs):
        flat = list(_walk_lists(body))  # (record, its step list) in order, before any copy
        original = like.get(p)
        if original is None:
            plans[p] = _carry(t, flat, statics, of)
            continue
        for at, where, outside in plans[original]:
            d, it = flat[at]
            copy = _copy_of(t, d)
            it.insert(where, copy)  # type: ignore[union-attr]
            for i in outside:
                r = flat[i][0]
                r.ins = tuple(copy.out if v == d.out else v for v in r.ins)


def _carry(
    t: Tracer, flat: list[tuple[Rec, list | None]], statics: set[int], of: dict[int, object]
) -> list[tuple[int, int, list[int]]]:
    """``carry_copies`` in one program (its records ``flat``); what it did, by position: per record copied, where the
    copy went in its step and the records (outside the step) that read the copy."""
    places = [i for i, (d, it) in enumerate(flat) if it is not None and id(of.get(id(d))) in statics]
    if not places:
        return []
    position = {id(d): i for i, (d, _) in enumerate(flat)}
    readers: dict[int, list[Rec]] = {}  # value → the records reading it (each once), found in one walk
    for r, _ in flat:
        for v in dict.fromkeys(r.ins):
            readers.setdefault(v, []).append(r)
    plan = []
    for i in places:
        d, it = flat[i]
        copy = _copy_of(t, d)
        where = _tail_start(it)  # type: ignore[arg-type]
        it.insert(where, copy)  # type: ignore[union-attr]
        mine = {id(r) for r in _all(it)}  # type: ignore[arg-type]
        outside = [r for r in readers.get(d.out, ()) if id(r) not in mine]  # type: ignore[call-overload]
        for r in outside:
            r.ins = tuple(copy.out if v == d.out else v for v in r.ins)
        plan.append((i, where, [position[id(r)] for r in outside]))
    return plan


def _copy_of(t: Tracer, d: Rec) -> Rec:
    """A ``v.copy`` of ``d``'s value, making a value of its own."""
    info = t.values[d.out]  # type: ignore[index]
    copy = Rec("vec", "un", d.site, (d.out,), None, ("copy",))
    copy.out = t.new_value(info.shape, info.dtype, copy, valid=info.valid)
    return copy


def _tail_start(items: list) -> int:
    """Where the step's tail of lines reading Cube results made from its vector values begins (its end if
    there is none, if it is not last, or if it reads a value made before the step)."""
    tail = _cube_readers(items)
    if not tail or items[-len(tail) :] != tail:
        return len(items)
    start = len(items) - len(tail)
    made = {d.out for d in items if isinstance(d, Rec)}
    if any(v not in made for d in tail for v in d.ins):
        return len(items)
    return start


def cube_first(t: Tracer) -> list[tuple[list, list]]:
    """Move each ``tl.dot`` that reads a vector result of its loop step, with the records it needs (the vector
    lines making its operands, the loads it reads), up to the first of them; the other records keep their
    order after. Returns what to undo: (list, its old contents) per list changed."""
    return _reorder(t, _cube_first_order)


def _reorder(t: Tracer, order_of: Callable[[Tracer, list], list | None]) -> list[tuple[list, list]]:
    """Each loop step's records put in the order ``order_of`` gives (None: left as they are); what to undo."""
    undo: list[tuple[list, list]] = []
    like = stamped_from(t)
    orders: dict[int, list[list[int] | None]] = {}  # per original program, per step list: its new order (indices)
    for p, body in enumerate(t.programs):
        original = like.get(p)
        mine = orders[p] = [] if original is None else orders[original]
        for n, (_, it) in enumerate(_lists(body)):
            if original is None:  # decided here
                order = order_of(t, it)
                at = None if order is None else {id(d): i for i, d in enumerate(it)}
                mine.append(None if at is None else [at[id(d)] for d in order])  # type: ignore[union-attr]
            if mine[n] is not None:  # a stamped program: its original's order, its lists being alike
                undo.append((it, list(it)))
                it[:] = [undo[-1][1][i] for i in mine[n]]  # type: ignore[union-attr]
    return undo


def _lists(items: list) -> Iterator[tuple[None, list]]:
    for d in items:
        if isinstance(d, LoopRec):
            for it in d.iters:
                yield None, it
                yield from _lists(it)


def _cube_first_order(t: Tracer, items: list) -> list | None:
    made = {d.out: i for i, d in enumerate(items) if isinstance(d, Rec) and d.out is not None}
    for k, d in enumerate(items):
        if not (isinstance(d, Rec) and d.kind == "dot"):
            continue
        operands = [made.get(v) for v in d.ins[:2]]
        if not any(j is not None and items[j].kind == "vec" for j in operands):
            continue
        need: set[int] = set()
        todo = [j for j in operands if j is not None]
        while todo:
            j = todo.pop()
            if j in need:
                continue
            need.add(j)
            todo += [made[v] for v in items[j].ins if v in made and made[v] < j]
        if any(isinstance(items[j], LoopRec) for j in need):
            return None
        first = min(need)
        grown = True
        while grown:  # and the vector lines before the dot that read only what moves (tl.sum(p, 1)): no tile
            grown = False  # of them then waits in UB for the rest of the step
            for j in range(first, k):
                d = items[j]
                if j in need or not isinstance(d, Rec) or d.kind != "vec" or not d.ins:
                    continue
                if all(made.get(v, -1) in need for v in d.ins):
                    need.add(j)
                    grown = True
        moved = [*sorted(need), k]
        if moved == list(range(first, k + 1)):
            continue  # already together
        if any(isinstance(items[j], LoopRec) for j in range(first, k)):
            return None
        loads = {items[j].op for j in need if items[j].kind == "load"}
        if any(items[j].kind == "store" and items[j].op in loads for j in range(first, k) if j not in need):
            return None  # a load would move above a store to its array
        rest = [items[j] for j in range(first, len(items)) if j not in need and j != k]
        return items[:first] + [items[j] for j in moved] + rest
    return None


def cube_results_last(t: Tracer) -> list[tuple[list, list]]:
    """Move the records that read a ``dot`` result made from a vector value of the same loop step (and those
    that depend on them) to the end of the step, in their order. Returns what to undo, as ``cube_first``."""
    return _reorder(t, _results_last_order)


def _cube_readers(items: list) -> list[Rec] | None:
    """The records of a step reading a ``dot`` result made from the step's vector values, and those depending
    on them, in order (None if a loop comes after one of them)."""
    made = {d.out: d for d in items if isinstance(d, Rec) and d.out is not None}
    late = {
        d.out
        for d in items
        if isinstance(d, Rec) and d.kind == "dot" and any(v in made and made[v].kind == "vec" for v in d.ins[:2])
    }
    found: list[Rec] = []
    outs: set[int] = set()
    for d in items:
        if not isinstance(d, Rec):
            if found:
                return None  # a loop after them: left as it is
            continue
        if d.kind == "dot" and any(v in outs for v in d.ins):
            return None  # a dot reads them (a cast tile's scores feed P·V): they cannot go after it
        if d.kind != "dot" and any(v in late or v in outs for v in d.ins):
            found.append(d)
            if d.out is not None:
                outs.add(d.out)
    return found


def _results_last_order(t: Tracer, items: list) -> list | None:
    sunk = _cube_readers(items)
    if not sunk:
        return None
    gone = {id(d) for d in sunk}
    order = [d for d in items if id(d) not in gone] + sunk
    return None if order == items else order
