"""Rotated loops for ``lower`` — Halide/TVM: a rotated loop, software pipelining of a loop where the Cube and the
Vector unit feed each other (FlashAttention's schedule): which statements of a loop step run one step ahead
(``rotation``), which vector statements one step late (``lagging``), and the instances a loop body's buffers take
per step (``alloc_turns``)."""

from __future__ import annotations

from compiler.ir import Alloc, Flag, Kernel, Loop, Move, Vec, pipe_of, reads, walk, writes
from isa import Pipe

#: Pipes of the statements that may run a loop step ahead: loads and the Cube's side (not the Vector unit's).
AHEAD_PIPES = frozenset({Pipe.MTE2, Pipe.MTE1, Pipe.CUBE, Pipe.FIX})


def rotation(kernel: Kernel, loop: Loop) -> tuple[int, ...] | None:
    """Which statements of ``loop``'s body run one step ahead, or None (see :func:`rotation_of`), with none that
    would wait for a release the rotated order emits after it on its own pipe (:func:`waits_behind`): such a
    statement stays in its step, and the choice is made again without it."""
    kept: set[int] = set()
    while True:
        ahead = rotation_of(kernel, loop, frozenset(kept))
        if ahead is None:
            return None
        bad = waits_behind(kernel, loop, ahead, lagging(loop, ahead, kernel))
        if not bad:
            return ahead
        kept |= bad


def rotation_of(kernel: Kernel, loop: Loop, kept: frozenset[int] = frozenset()) -> tuple[int, ...] | None:
    """Which statements of ``loop``'s body run one step ahead, or None — software pipelining of a loop where
    the Cube and the Vector unit feed each other (Halide/TVM: a rotated loop; FlashAttention's schedule).
    ``lower`` asks for loops marked ``rotate`` (the loops of the tile language).

    In a loop whose Cube work reads a vector result (a UB → L1 move on MTE3: ``P·V`` after the softmax), the
    Cube would wait for the Vector unit every step and the Vector unit for the Cube. The statements that do
    not depend on the Vector unit — loads, the Cube's ``Q·Kᵀ``, its FIXPIPE copy to UB — are emitted one
    step ahead: step ``i + 1``'s scores are computed while the Vector unit works on step ``i``::

        for i in 0..n:                        first(0)
          first(i)          ==>              for i in 0..n:
          rest(i)                              first(i + 1)   (if i + 1 < n)
                                               rest(i)

    A statement is in ``first`` if it runs on MTE2, MTE1, the Cube or FIXPIPE, reads nothing the rest of the
    body writes, and writes only buffers of this loop step (with two slots or more step ``i + 1`` writes one
    slot while step ``i`` reads the other; with one, the writer of step ``i + 1`` waits on the flag its
    reader of step ``i`` sets — the flags of the ``sync`` pass keep each buffer's order either way); the
    writers of one sync group move together (one pair of flags covers them). A flag goes with its
    statement: a ``wait`` with the statement after it, a ``set`` with the one before. The statements in ``kept``
    stay in their step.
    """
    body = loop.body
    if not body or type(body[0]) is not Alloc:
        return None
    leaves = [(i, list(walk((st,)))) for i, st in enumerate(body) if type(st) not in (Alloc, Flag)]
    if not any(type(x) is Move and x.pipe is Pipe.MTE3 for _, ls in leaves for x in ls):
        return None
    own = {name for name in body[0].bufs if kernel.buffer(name).slots >= 2}
    single = set(body[0].bufs) - own  # one slot: ahead only if every statement touching it goes ahead too
    inner = {name for _, ls in leaves for x in ls if type(x) is Alloc for name in x.bufs}
    # a buffer allocated again in the step (copies taking turns) with fewer slots than instances per step: step
    # i + 1's writer would wait for a reader of step i + 1 itself, so it goes ahead only with all its readers
    short = {name for name, t in alloc_turns(body)[0].items() if t > kernel.buffer(name).slots}

    def ok(ls: list) -> bool:
        stmts = [x for x in ls if type(x) not in (Alloc, Flag, Loop)]
        return all(pipe_of(x) in AHEAD_PIPES and set(writes(x)) <= own | inner | single for x in stmts)

    first = {i for i, ls in leaves if ok(ls) and i not in kept}
    by_index = dict(leaves)
    writers = [  # the statements writing each sync group: one pair of flags covers them, so they move together
        {i for i, ls in leaves for x in ls if set(writes(x)) & set(g.buffers)} for g in kernel.groups
    ]

    def settle(first: set[int]) -> set[int]:
        while True:
            late = {b for i, ls in leaves if i not in first for x in ls for b in writes(x)}
            drop = {i for i in first for x in by_index[i] if set(reads(x)) & late}
            drop |= {i for w in writers if w - first for i in w & first}
            behind_reads = {b for i, ls in leaves if i not in first for x in ls for b in reads(x)} & short
            drop |= {i for i in first for x in by_index[i] if set(writes(x)) & behind_reads}
            if not drop:
                return first
            first = first - drop

    first = settle(first)
    if not first or len(first) == len(leaves):
        return None
    ahead = with_flags(body, first)
    # with the Cube's work on the vector result a step late, a FIXPIPE copy into a one-slot buffer stays in its
    # step: ahead, FIXPIPE would take it before the late step's copies the Vector unit waits for
    single = {
        i
        for i in first
        for x in by_index[i]
        if pipe_of(x) is Pipe.FIX and any(kernel.buffer(b).slots < 2 for b in writes(x))
    }
    if single and cube_lagging(kernel, loop, ahead) is not None:
        kept = settle(first - single)
        if kept and cube_lagging(kernel, loop, with_flags(body, kept)) is not None:
            return with_flags(body, kept)
    return ahead


def alloc_turns(body: tuple) -> tuple[dict[str, int], dict[int, dict[str, int]]]:
    """Instances per step of each buffer of a loop body's ``alloc`` (more than one: allocated again in the body, the
    copies of an unrolled loop taking turns), and per statement the instance it uses of those allocated again."""
    turns: dict[str, int] = dict.fromkeys(body[0].bufs, 1) if body and type(body[0]) is Alloc else {}
    at: dict[int, dict[str, int]] = {}
    for j, st in enumerate(body):
        if j and type(st) is Alloc:
            for name in st.bufs:
                turns[name] = turns.get(name, 1) + 1
        at[j] = {name: t - 1 for name, t in turns.items() if t > 1}
    return turns, at


def waits_behind(
    kernel: Kernel, loop: Loop, ahead: tuple[int, ...], lag: tuple[tuple[int, ...], tuple[int, ...]]
) -> set[int]:
    """The statements of ``ahead`` that would deadlock the rotated loop: each writes a buffer of the step whose
    slot it waits for while the statement releasing that slot depends, through the step's buffers or a pipe's
    order, on a statement emitted after it on its own pipe.

    The writer of step ``i + 1`` (emitted before the rest of step ``i``, and with ``lag`` before the lagging
    statements of step ``i - 1``) waits for the slot's instance ``g`` steps back (``g``: the buffer's slots per
    instance a step takes). With ``g = 1`` that is released by step ``i``'s rest, with ``g = 2`` and a lagging
    reader by step ``i - 1``'s lagging part — both emitted after the writer. If what releases it waits for a
    statement on the writer's pipe that is emitted after the writer (``V`` moved to L0A ahead into one slot,
    ``P·V`` reading it after the move of ``p`` on the same MTE1), each pipe waits for the other::

        first(i + 1):  wait cube→mte1 A.free(i);  A(i+1) ← mte1 …      MTE1 stops here …
        rest(i):       B(i) ← mte1 p(i);  mmad A(i) @ B(i);  set A.free  … so B(i) never moves, nor the mmad
    """
    body = loop.body
    if not body or type(body[0]) is not Alloc:
        return set()
    behind = set(lag[0])
    turns, at = alloc_turns(body)
    stmts = [i for i, st in enumerate(body) if type(st) not in (Alloc, Flag)]
    rds = {i: {b for x in walk((body[i],)) for b in reads(x)} for i in stmts}
    wrs = {i: {b for x in walk((body[i],)) for b in writes(x)} for i in stmts}
    pipes = {i: {pipe_of(x) for x in walk((body[i],))} - {None} for i in stmts}
    rest = [i for i in stmts if i not in ahead]
    first = [i for i in stmts if i in ahead]

    # what each statement reads and writes, a buffer taking turns in the step named with the turn it uses
    rk = {i: {(b, at[i].get(b, 0)) for b in rds[i]} for i in stmts}
    wk = {i: {(b, at[i].get(b, 0)) for b in wrs[i]} for i in stmts}

    def before(r: int, w: int, late: list[int]) -> set:
        """The pipes of ``r`` and of every statement it waits for, transitively: in its step, one before it on a
        pipe it runs on or touching what it writes, or writing what it reads; of ``late`` (ahead statements of a
        later step emitted after ``w`` and before ``r``: other instances of the step's buffers), one before it on
        a pipe it runs on."""
        pos = {j: (0, j) for j in late if j != w} | {j: (1, j) for j in rest}
        seen, todo, out = {r}, [r], set(pipes[r])
        while todo:
            k = todo.pop()
            for j in pos:
                if (
                    pos[j] < pos[k]
                    and j not in seen
                    and (pipes[j] & pipes[k] or (pos[j][0] == pos[k][0] and (wk[j] & (rk[k] | wk[k]) or rk[j] & wk[k])))
                ):
                    seen.add(j)
                    todo.append(j)
                    out |= pipes[j]
        return out

    bad = set()
    for w in first:
        for b in wrs[w] & set(body[0].bufs):
            # the instance the writer waits for: ``slots`` instances back, a step taking ``turns`` of them
            slots, t = kernel.buffer(b).slots, turns.get(b, 1)
            tw = at[w].get(b, 0)
            g, turn = -((tw - slots) // t), (tw - slots) % t  # steps back, and that instance's turn in its step
            if g >= 3:
                continue
            for r in rest:
                if b not in rds[r] | wrs[r] or at[r].get(b, 0) != turn or (g == 2 and r not in behind):
                    continue
                # released after the whole next step's ahead part (one step back, lagging reader), else after the
                # ahead statements emitted after ``w`` in its own part
                late = first if g == 1 and r in behind else [j for j in first if j > w]
                if pipes[w] & before(r, w, late):
                    bad.add(w)
    return bad


def with_flags(body: tuple, chosen: set[int]) -> tuple[int, ...]:
    """``chosen`` statements of ``body`` with their flags: a wait goes with the statement after it, a set with
    the one before."""
    out = set(chosen)
    for i, st in enumerate(body):
        if type(st) is Flag:
            j = i
            step = 1 if not st.set else -1
            while 0 <= j < len(body) and type(body[j]) is Flag:
                j += step
            if j in chosen:
                out.add(i)
    return tuple(sorted(out))


def lagging(
    loop: Loop, ahead: tuple[int, ...], kernel: Kernel | None = None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Which statements of a rotated loop's step run one step late, and which statements follow them: the Cube's
    work on the step's vector result with everything reading it (:func:`cube_lagging`, given the ``kernel``
    for its buffers' slots), else the last vector statements reading the step's FIXPIPE copies
    (:func:`adds_lagging`)."""
    deep = cube_lagging(kernel, loop, ahead) if kernel is not None else None
    return deep if deep is not None else adds_lagging(loop, ahead)


def cube_lagging(kernel: Kernel, loop: Loop, ahead: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The Cube's side of a rotated loop's step that reads the step's vector result runs one step late — after
    the next step's vector work — or None: FlashAttention's three-stage software pipeline, as the built-in flash
    kernel orders it (``Q·Kᵀ`` of step ``i + 1``, the softmax of step ``i``, ``P·V`` of step ``i - 1``).

    With only the loads and ``Q·Kᵀ`` ahead (:func:`rotation`), the scalar unit, which issues in program order,
    reaches step ``i``'s ``P·V`` right after its softmax: the Cube's operand moves wait for the softmax, their
    queue fills, and the next step's softmax is not issued until they have gone — the Vector unit waits for
    the Cube every step. Here ``behind`` starts at the first statement off the Vector unit that reads a vector
    result of the step (the UB → L1 move of ``p``) and holds every later statement off the Vector unit and
    every statement reading what ``behind`` writes (the FIXPIPE copies of ``P·V`` and the adds reading them)::

        first(0)                                first(0)
        for i in 0..n:                          for i in 0..n:
          first(i + 1)            ==>             first(i + 1)
          rest(i)                                 early(i);  behind(i - 1);  after(i)
                                                behind(n - 1)

    ``after`` holds the other statements that must keep their order with ``behind`` (reading or writing what
    it writes, writing what it reads — unless in a buffer of the step with two slots or more, which step
    ``i`` and step ``i - 1`` use in turn —, or following one of them on a pipe other than the Vector unit's);
    a statement moved before a ``behind`` statement of its own step must not touch what that one writes or
    write what it reads. None unless some vector statement stays early (the softmax of step ``i``)."""
    body = loop.body
    if not body or type(body[0]) is not Alloc or kernel.target.vector_per_cube:
        return None  # a separated chip's split hands the tiles over in the order of a step: not applied there
    turns = alloc_turns(body)[0]
    leaves = [i for i, st in enumerate(body) if type(st) not in (Alloc, Flag) and i not in ahead]
    rds = {i: {b for x in walk((body[i],)) for b in reads(x)} for i in leaves}
    wrs = {i: {b for x in walk((body[i],)) for b in writes(x)} for i in leaves}
    pipes = {i: {pipe_of(x) for x in walk((body[i],))} - {None, Pipe.V} for i in leaves}
    made: set[str] = set()  # written by the step's vector statements so far
    start = None
    for i in leaves:
        if type(body[i]) is Vec or pipes[i] == {Pipe.MTE3}:  # the Vector unit's side: its results, to L1
            made |= wrs[i]
        elif pipes[i] and rds[i] & made:
            start = i
            break
    if start is None:
        return None
    behind: list[int] = []
    bw: set[str] = set()
    for i in leaves:
        if i >= start and ((type(body[i]) is not Vec and pipes[i] != {Pipe.MTE3}) or rds[i] & bw):
            behind.append(i)
            bw |= wrs[i]
    br = {b for i in behind for b in rds[i]}
    # buffers whose instances of step i and of step i - 1 take different slots (all of them: copies taking turns)
    turned = {b for b in body[0].bufs if kernel.buffer(b).slots >= 2 * turns[b]}
    after: list[int] = []
    for i in leaves:
        if i in behind:
            continue
        joins = (
            rds[i] & bw
            or (wrs[i] & (br | bw)) - turned
            or any(rds[i] & wrs[j] or wrs[i] & (rds[j] | wrs[j]) or pipes[i] & pipes[j] for j in after)
            or any(pipes[i] & pipes[j] for j in behind if j < i)
        )
        if joins:
            after.append(i)
    moved = [i for i in leaves if i not in behind]  # each now runs before the behind statements of its own step
    for i in moved:
        for j in behind:
            if j < i and (wrs[i] & (rds[j] | wrs[j]) or rds[i] & wrs[j]):
                return None
    if not any(type(body[i]) is Vec and i < start for i in moved if i not in after):
        return None
    return with_flags(body, set(behind)), with_flags(body, set(after))


def adds_lagging(loop: Loop, ahead: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Which vector statements of a rotated loop's step run one step late, and which statements follow them
    — the Vector unit's side of FlashAttention's software pipeline (``acc += Oᵀ_t`` after the next step's
    softmax, as the built-in flash kernel does it).

    A step whose vector code ends by reading a FIXPIPE copy made in the same step (``acc + p·v``, ``p`` made
    by the Vector unit earlier in that step) waits for the round trip UB → L1 → L0 → Cube → L0C → UB. Those
    last vector statements (``behind``) are emitted after the next step's early part instead::

        first(0)                                first(0)
        for i in 0..n:                          for i in 0..n:
          first(i + 1)            ==>             first(i + 1)
          rest(i)                                 early(i);  behind(i - 1);  after(i)
                                                behind(n - 1)

    ``after`` holds the statements of the step that must keep their order with ``behind``: those reading what
    it writes (``acc * alpha`` reads ``acc``), and those touching what an earlier one of them writes, writing
    what it reads, or running on its pipe after it (with an unrolled loop: the later copies' softmax and the
    Cube work on it). Nothing is lagged (``((), ())``) unless the early part neither reads what ``behind``
    writes nor writes what it uses (FIXPIPE's copies excepted: their flags order them)."""
    body = loop.body
    none: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    leaves = [i for i, st in enumerate(body) if type(st) not in (Alloc, Flag) and i not in ahead]

    def fix(i: int) -> bool:
        return type(body[i]) is Move and body[i].pipe is Pipe.FIX

    fixed = {b for i in leaves if fix(i) for b in writes(body[i])}
    start = next((i for i in leaves if type(body[i]) is Vec and set(reads(body[i])) & fixed), None)
    if start is None or not all(type(body[i]) is Vec or fix(i) for i in leaves if i >= start):
        return none
    behind = [i for i in leaves if i >= start and type(body[i]) is Vec]
    bw = {b for i in behind for b in writes(body[i])}
    br = {b for i in behind for b in reads(body[i])}
    # what each statement (a loop: all of it) reads, writes, and the pipes other than the Vector unit's it runs on
    rds = {i: {b for x in walk((body[i],)) for b in reads(x)} for i in leaves}
    wrs = {i: {b for x in walk((body[i],)) for b in writes(x)} for i in leaves}
    pipes = {i: {pipe_of(x) for x in walk((body[i],))} - {None, Pipe.V} for i in leaves}
    after: set[int] = set()
    grown = True
    while grown:
        grown = False
        for i in leaves:
            if i >= start or i in after:
                continue
            rd, wr = rds[i], wrs[i]
            joins = rd & bw or any(
                j < i and (rd & wrs[j] or wr & (rds[j] | wrs[j]) or pipes[i] & pipes[j]) for j in after
            )  # a statement after one of them on its pipe stays after it too: each pipe keeps its order
            if joins:
                after.add(i)
                grown = True
    early = [i for i in leaves if i not in after and i not in behind]
    for i in early:
        if set(reads(body[i])) & bw or (not fix(i) and set(writes(body[i])) & (br | bw)):
            return none
    return with_flags(body, set(behind)), with_flags(body, after)


def vector_first(body: tuple, order: tuple[int, ...]) -> tuple[int, ...]:
    """``order`` (indices of ``body``'s statements, as a rotated loop emits a group of them) with each vector
    statement moved up past the statements before it that run off the Vector unit and share no buffer with it
    (it reads nothing they write, writes nothing they touch) — list scheduling for the scalar unit, which issues
    in program order and stops at a full pipe queue.

    In a step of FlashAttention the Cube's ``P·V`` of one query tile waits for that tile's softmax: its operand
    moves fill MTE1's queue and hold the scalar unit, and the vector statements written after them (the rescale
    by ``alpha``, the next tile's softmax) wait to be issued though they need nothing from them::

        softmax(0); mte3 p(0); for K: … P·V(0) …; alpha(0)      ==>      softmax(0); alpha(0); mte3 p(0); for K: …

    Each pipe keeps the order of its statements (a vector statement passes none of the Vector unit's, nor an
    ``alloc`` of a buffer it uses: a statement's instances are those of its place in the body); a flag goes
    with its statement (a wait with the statement after it, a set with the one before), so the ``sync``
    pass's flags keep pairing in each pipe's order."""
    blocks: list[list[int]] = []
    waits: list[int] = []
    for j in order:
        st = body[j]
        if type(st) is Flag:
            if st.set and blocks and not waits:
                blocks[-1].append(j)
            else:
                waits.append(j)
            continue
        blocks.append([*waits, j])
        waits = []
    if waits:
        blocks.append(waits)

    def head(b: list[int]) -> object:
        return next((body[j] for j in b if type(body[j]) is not Flag), None)

    def touched(st: object) -> tuple[set[str], set[str], set]:
        xs = list(walk((st,)))  # type: ignore[arg-type]
        return {b for x in xs for b in reads(x)}, {b for x in xs for b in writes(x)}, {pipe_of(x) for x in xs}

    out: list[list[int]] = []
    for b in blocks:
        st = head(b)
        at = len(out)
        if type(st) is Vec:
            rd, wr = set(reads(st)), set(writes(st))
            while at > 0:
                prev = head(out[at - 1])
                if prev is None or (type(prev) is Alloc and set(prev.bufs) & (rd | wr)):
                    break
                prd, pwr, pipes = touched(prev) if type(prev) is not Alloc else (set(), set(), set())
                if Pipe.V in pipes or rd & pwr or wr & (prd | pwr):
                    break
                at -= 1
        out.insert(at, b)
    return tuple(j for b in out for j in b)


def rotated_body(s: Loop, ahead: tuple[int, ...], lag: tuple[tuple[int, ...], tuple[int, ...]]) -> tuple:
    """How ``lower.Emitter.rotated`` walks ``s``'s body: its ``alloc``, the statements run a step ahead, the rest of a
    step (vector statements first: ``vector_first``), the lagging ones and those after them, and the
    allocations' turns per step (statements by index when a buffer is allocated again in the body)."""
    alloc = s.body[0] if s.body and type(s.body[0]) is Alloc else Alloc(())
    behind, after = lag
    first: tuple = tuple(st for i, st in enumerate(s.body) if i in ahead)
    order = vector_first(
        s.body,
        tuple(
            i
            for i, st in enumerate(s.body)
            if i not in ahead and i not in behind and i not in after and st is not alloc
        ),
    )
    rest: tuple = tuple(s.body[i] for i in order)
    late: tuple = tuple(s.body[i] for i in behind)
    then: tuple = tuple(s.body[i] for i in after)
    turns, at = alloc_turns(s.body)
    again = any(t > 1 for t in turns.values())
    multi = [name for name, t in turns.items() if t > 1]
    if again:  # each statement with its own instances: ``step`` walks them one by one (by index)
        first, late, then, rest = ahead, behind, after, order
    return alloc, first, rest, late, then, turns, at, again, multi
