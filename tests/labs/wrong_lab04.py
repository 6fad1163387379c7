"""Typical wrong answers to lab 4 (memory reuse), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

from compiler.graph import ALIGN, plan_memory
from isa import Space


def _aligned(graph, name: str) -> int:
    return -(-graph.tensor(name).nbytes // ALIGN) * ALIGN


def _lifetimes(graph, *, keep_outputs=True, keep_weights=True, first_is_last_writer=False, given=True):
    end = len(graph.nodes)
    life = {t.name: [-1, -1] for t in graph.tensors if t.kind != "activation"}
    for i, node in enumerate(graph.nodes):
        for name in node.writes:
            if first_is_last_writer and name in life:
                life[name][0] = i
            life.setdefault(name, [i, i])
        for name in (*node.reads, *node.writes):
            life[name][1] = max(life[name][1], i)
    for t in graph.tensors:
        if (keep_weights and t.kind in ("weight", "const")) or (keep_outputs and t.name in graph.outputs):
            life[t.name][1] = end
    if not given:
        life = {k: v for k, v in life.items() if graph.tensor(k).kind == "activation"}
    return {k: tuple(v) for k, v in life.items()}


def _live(graph, *, align=True, inclusive=True, steps=None):
    life = _lifetimes(graph)
    size = _aligned if align else (lambda g, n: g.tensor(n).nbytes)
    steps = range(-1, len(graph.nodes) + 1) if steps is None else steps(graph)
    return [
        sum(size(graph, n) for n, (a, b) in life.items() if (a <= s if inclusive else a < s) and s <= b) for s in steps
    ]


def _allocate(graph, *, best=True, grow_top_hole=True, free_first=False, reuse=True):
    """Best fit as the planner does it, with one thing changed."""
    life = _lifetimes(graph)
    holes: list[tuple[int, int]] = []
    top = 0
    offsets: dict[str, int] = {}

    def place(size: int) -> int:
        nonlocal top
        fits = [(o, s) for o, s in holes if s >= size]
        if fits:
            o, s = min(fits, key=(lambda h: (h[1], h[0])) if best else (lambda h: h[0]))
            holes.remove((o, s))
            if s > size:
                holes.append((o + size, s - size))
            return o
        holes.sort()
        if grow_top_hole and holes and sum(holes[-1]) == top:
            o = holes.pop()[0]
        else:
            o = top
        top = o + size
        return o

    def free(offset: int, size: int) -> None:
        merged: list[tuple[int, int]] = []
        for o, s in sorted([*holes, (offset, size)]):
            if merged and sum(merged[-1]) == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        holes[:] = merged

    for t in graph.inputs:
        offsets[t.name] = place(_aligned(graph, t.name))
    for i, node in enumerate(graph.nodes):
        dead = [n for n in dict.fromkeys((*node.reads, *node.writes)) if life[n][1] == i and reuse]
        if free_first:
            for n in dead:
                if n in offsets:
                    free(offsets[n], _aligned(graph, n))
        for n in node.writes:
            if n not in offsets:
                offsets[n] = place(_aligned(graph, n))
        if not free_first:
            for n in dead:
                free(offsets[n], _aligned(graph, n))
    return offsets


def _largest(graph, capacity, policy, *, strict=False, one_if_none=False, answer_first_miss=False, naive=False):
    def fits(b: int) -> bool:
        peak = plan_memory(graph.rebuild(batch=b), "naive" if naive else policy).peak
        return peak < capacity if strict else peak <= capacity

    if not fits(1):
        return 1 if one_if_none else 0
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return hi if answer_first_miss else lo


def _temps(op, rows, chip, *, share_ignored=False, align=True, rows_as_tile=False, all_values=False):
    prog = op.tile_program()
    life = prog.lifetimes()
    a = chip.alignment(Space.UB) if align else 1
    per = {"tile": rows * op.cols, "rows": rows * op.cols if rows_as_tile else rows, "row": op.cols}
    values = prog.values if all_values else prog.temps
    size = {v.name: -(-per[v.shape] * v.dtype.itemsize // a) * a for v in values}
    if share_ignored:
        return sum(size.values())
    return max(sum(b for n, b in size.items() if life[n][0] <= i <= life[n][1]) for i in range(len(prog.ops)))


WRONG = {
    "4.1": [
        lambda g: _lifetimes(g, keep_outputs=False),
        lambda g: _lifetimes(g, keep_weights=False),
        lambda g: _lifetimes(g, first_is_last_writer=True),
        lambda g: _lifetimes(g, given=False),
    ],
    "4.2": [
        lambda g: _live(g, align=False),
        lambda g: _live(g, inclusive=False),
        lambda g: _live(g, steps=lambda g: range(len(g.nodes))),
    ],
    "4.3": [
        lambda g: _allocate(g, best=False),
        lambda g: _allocate(g, free_first=True),
        lambda g: _allocate(g, grow_top_hole=False),
        lambda g: _allocate(g, reuse=False),
    ],
    "4.4": ["a", "b"],
    "4.5": [
        lambda g, c, p: _largest(g, c, p, answer_first_miss=True),
        lambda g, c, p: _largest(g, c, p, strict=True),
        lambda g, c, p: _largest(g, c, p, naive=True),
        lambda g, c, p: _largest(g, c, p, one_if_none=True),
    ],
    "4.6": ["b", "c"],
    "4.7": [
        lambda op, r, chip: _temps(op, r, chip, share_ignored=True),
        lambda op, r, chip: _temps(op, r, chip, align=False),
        lambda op, r, chip: _temps(op, r, chip, rows_as_tile=True),
        lambda op, r, chip: _temps(op, r, chip, all_values=True),
    ],
}

# Hard-coded answers: right for at most one case, so the other cases must catch them.
WRONG["4.5"].append(lambda graph, capacity, policy: 8)
WRONG["4.7"].append(lambda op, rows, chip: 4096 * rows)
