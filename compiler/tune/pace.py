"""The pace of a tile-language loop on in-order pipes: a roof of :func:`compiler.tune.model.predict` beside each pipe's
work.

Each pipe runs its instructions in program order, and a statement waits for the statements whose results it reads
and, to overwrite a buffer, for the readers of the instance its slot held. Where the pipes feed each other within
a loop step — a FlashAttention step's scores on the Cube, their softmax on the Vector unit, the probabilities back
through MTE3 and MTE1 for ``P·V`` on the Cube, once per query tile of a Q block — a step can take longer than its
busiest pipe's work: a pipe waits for a chain it cannot fill with other work. :func:`loop_pace` lays the steps
of such a loop out as ``lower`` emits them (rotated: the statements ``compiler.passes.rotation`` runs a step ahead
first, then the rest of the step, then those it runs a step late), each statement as early as its pipe, its
operands and its slot allow, and takes the interval between steps once the loop runs steady. A program's statements
outside the loop that the next program's lead-in does not issue early (``compiler.passes.across``) run in turn with
the steps: :func:`chain_cycles` adds the most work a pipe has in them.

A statement's time is its work per step from :func:`compiler.tune.model.price` (a copy's at the transfers in flight
the loop keeps); a loop inside the step (the L0 steps of a ``tl.dot``) is one statement per pipe, streaming: its
consumer starts after the producer's first execution and ends one execution after the producer's end.
"""

from __future__ import annotations

from compiler.ir import Alloc, Compute, Flag, Kernel, Loop, Parallel, reads, writes
from compiler.passes.across import lead_in
from compiler.passes.rotation import lagging, rotation, vector_first
from compiler.traffic import traced_trips
from isa.records import record

#: steps laid out, and how many of the last ones the interval is measured over (the first are the fill)
STEPS, MEASURED = 8, 4


@record
class _Node:
    """One statement of a loop step (``at``: its index in the loop's body), its leaves' work per step."""

    at: int
    pos: int  # its place in the step's body order, nested loops' statements in theirs
    work: tuple[tuple[str, float], ...]  # (pipe, cycles per step)
    ready: float  # cycles after it ends until its result is usable (a copy's latency beyond its stream)
    each: float  # cycles of one execution (a nested loop's statements run several per step)
    reads: frozenset[str]
    writes: frozenset[str]
    nested: bool  # inside a loop of the step: it streams with the statements of that loop


def chain_cycles(kernel: Kernel, leaves: tuple) -> float:
    """Cycles of the kernel's outermost tile-language loops at their pace (:func:`loop_pace`) on the busiest core:
    each loop's steps on that core times its interval, and the most work any pipe has outside those loops (a
    program's statements before and after its loop run in turn with it: the Vector unit's epilogue of a program
    — the last rescale and normalisation — comes after its last step's softmax and before the next program's
    first), less the statements the next program's lead-in runs during the current program's loop
    (``compiler.passes.across``: its loads and Cube work before the loop). ``leaves``:
    :func:`compiler.tune.model.price`'s, in its order (a statement's leaves follow each other, one per pipe); 0 for
    a kernel without such loops."""
    plan = kernel.plan
    share = max((len(s) for s in plan.assignment), default=1) if plan else 1
    cursor = [0]
    total = 0.0
    outside: dict[str, float] = {}  # each pipe's work outside the laid-out loops, on the busiest core

    def take(s) -> list:
        r, w = frozenset(reads(s)), frozenset(writes(s))
        out: list = []
        while cursor[0] < len(leaves):
            leaf = leaves[cursor[0]]
            if leaf.reads != r or leaf.writes != w or any(x.pipe == leaf.pipe for x in out):
                break
            out.append(leaf)
            cursor[0] += 1
        return out

    def visit(body: tuple, mult: float, env: dict[str, int], led: tuple[int, ...] = ()) -> None:
        nonlocal total
        for i, s in enumerate(body):
            if isinstance(s, Loop):
                n = traced_trips(kernel, s, env)[1] if s.kind == "traced" else s.count
                if s.kind == "traced":
                    nodes = _nodes(kernel, s, mult * n, {**env, s.var: 0}, take)
                    total += mult * n * loop_pace(kernel, s, nodes)
                else:
                    visit(s.body, mult * n, {**env, s.var: 0})
            elif isinstance(s, Parallel):
                lead = lead_in(kernel, s) if share > 1 else None
                visit(s.body, mult * share, {**env, **dict.fromkeys(s.vars, 0)}, lead.pre if lead else ())
            elif not isinstance(s, Alloc | Compute | Flag):
                for leaf in take(s):
                    if i not in led:
                        outside[leaf.pipe] = outside.get(leaf.pipe, 0.0) + leaf.work

    visit(kernel.body, 1.0, {})
    return total + max(outside.values(), default=0.0) if total else 0.0


def _nodes(kernel: Kernel, loop: Loop, steps: float, env: dict[str, int], take) -> list[_Node]:
    """The statements of ``loop``'s step, in body order, with their work per step (``steps``: the loop's steps on the
    core, what its statements' leaves are summed over)."""
    out: list[_Node] = []

    def visit(body: tuple, at: int | None, mult: float, env: dict[str, int]) -> None:
        for i, s in enumerate(body):
            here = i if at is None else at
            if isinstance(s, Loop):
                n = traced_trips(kernel, s, env)[1] if s.kind == "traced" else s.count
                visit(s.body, here, mult * n, {**env, s.var: 0})
            elif not isinstance(s, Alloc | Compute | Flag):
                got = take(s)
                if not got:
                    continue
                work = tuple((x.pipe, x.work / steps) for x in got)
                each = max(x.work / x.mult for x in got)
                ready = max(0.0, max(x.single for x in got) - each)
                out.append(_Node(here, len(out), work, ready, each, got[0].reads, got[0].writes, at is not None))

    visit(loop.body, None, steps, env)
    return out


def loop_pace(kernel: Kernel, loop: Loop, nodes: list[_Node]) -> float:
    """Cycles between steps of ``loop`` running steady: :data:`STEPS` steps laid out in the order ``lower`` emits them,
    each statement at the earliest its pipe (in program order), its operands and its slot allow."""
    if len({p for n in nodes for p, _ in n.work}) < 2:
        return 0.0
    body = loop.body
    ahead = rotation(kernel, loop) if loop.rotate else None
    if ahead is None:
        order = [(i, 0) for i in range(len(body))]
        emitted = [(t, i, d) for t in range(STEPS) for i, d in order]
    else:
        behind, after = lagging(loop, ahead, kernel)
        rest = vector_first(body, tuple(i for i in range(len(body)) if i not in (*ahead, *behind, *after)))
        emitted = [(0, i, 0) for i in ahead]
        for t in range(STEPS):
            emitted += [(t, i, 1) for i in ahead if t + 1 < STEPS] + [(t, i, 0) for i in rest]
            emitted += [(t, i, -1) for i in behind if t > 0] + [(t, i, 0) for i in after]
        emitted += [(STEPS, i, -1) for i in behind]
    by_at: dict[int, list[_Node]] = {}
    for n in nodes:
        by_at.setdefault(n.at, []).append(n)
    writers: dict[str, list[int]] = {}
    for n in nodes:
        for b in n.writes:
            writers.setdefault(b, []).append(n.pos)
    slots = {b.name: max(1, b.slots) for b in kernel.buffers}

    def instance(b: str, pos: int, step: int, write: bool) -> int:
        """Which instance of ``b`` the statement at ``pos`` of ``step`` writes, or reads (the last written before it,
        in its step or the one before)."""
        ws = writers[b]
        if write:
            return step * len(ws) + ws.index(pos)
        before = sum(1 for w in ws if w < pos)
        return step * len(ws) + before - 1

    free: dict[str, float] = {}
    done: dict[tuple[str, int], tuple[float, float, _Node]] = {}  # (buffer, instance) → written: start, end, by
    used: dict[tuple[str, int], float] = {}  # (buffer, instance) → the last of its readers' ends so far
    ends: dict[int, float] = {}
    for base, i, d in emitted:
        step = base + d
        if not 0 <= step < STEPS:
            continue
        for n in by_at.get(i, ()):
            start = max((free.get(p, 0.0) for p, _ in n.work), default=0.0)
            floor = 0.0
            for b in n.reads:
                if b not in writers:
                    continue
                got = done.get((b, instance(b, n.pos, step, False)))
                if got is None:
                    continue
                s0, e0, by = got
                if n.nested and by.nested and by.at == n.at and by.pos < n.pos:  # the same loop: streaming
                    start = max(start, s0 + by.each)
                    floor = max(floor, e0 + n.each)
                else:
                    start = max(start, e0)
            for b in n.writes:
                start = max(start, used.get((b, instance(b, n.pos, step, True) - slots.get(b, 1)), 0.0))
            end = max(start + max(w for _, w in n.work), floor)
            for p, w in n.work:
                free[p] = start + w
            end_ready = end + n.ready
            for b in n.writes:
                done[(b, instance(b, n.pos, step, True))] = (start, end_ready, n)
            for b in n.reads:
                if b in writers:
                    key = (b, instance(b, n.pos, step, False))
                    used[key] = max(used.get(key, 0.0), end)
            ends[step] = max(ends.get(step, 0.0), end_ready)
    last = STEPS - 1
    return (ends[last] - ends[last - MEASURED]) / MEASURED
