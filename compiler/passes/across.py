"""Software pipelining across the programs of a core, for ``lower`` — the pid loop treated as one stream of loop
steps (Halide/TVM: a rotated loop whose steps run on across the outer loop; the built-in FlashAttention's "the next
block's Q and first K/V load during the current block's last steps").

A core runs its programs one after the other. Inside a program, a loop marked ``rotate`` (``rotation``) runs the
statements that do not wait for the Vector unit — loads, the Cube's ``Q·Kᵀ``, its FIXPIPE copy — one step ahead.
Without more, the next program starts from scratch: its first loads wait behind the current program's last
statements, and its first ``Q·Kᵀ`` behind the current program's last ``P·V`` in the Cube's queue, while the
Vector unit waits for both. With ``lead_in``, the next program's loads before the loop (its Q block) and the
``first`` statements of its loop's step 0 are emitted where the current program's loop would emit a step ``n``::

    for pid in share:                           for pid in share:
      pre(pid); rest_of_prologue(pid)             pre(pid); rest_of_prologue(pid)     (first program only)
      for i in 0..n:                              for i in 0..n:
        first(i + 1) / rest(i) …      ==>           (i + 1 < n) first(i + 1)
      epilogue(pid)                                 (i + 1 = n) pre(pid + 1); first(pid + 1, step 0)
                                                    rest(i) …
                                                  epilogue(pid)
                                                  rest_of_prologue(pid + 1) (its pre and first step already out)

A program's tail — its loop's last lagging statements and its epilogue — may in turn wait until the next
program's first softmax has been issued (:func:`tail_waits`), so the Vector unit does not idle through the last
``P·V``'s round trip.

Every statement keeps its own program's addresses, buffer instances and flags; only the order changes. It is
applied (:func:`lead_in`) when the moves are safe by construction:

- ``pre`` holds the prologue's statements on the loading and Cube pipes that read nothing the rest of the
  prologue writes, with their flags; the waits just before the loop that guard what ``first`` reads go too;
- ``first`` and ``pre`` read nothing the rest of the prologue writes, and write nothing it touches;
- a buffer they write is one of the program's (allocated by the pid loop's body), of the loop's step, or of a
  loop inside ``first`` (then touched by nothing else); one that the statements they pass (the last step's
  other statements, the epilogue, the rest of the next prologue) also touch on the same pipe needs its own slot
  for the next program's instance — two slots for a program's buffer, three for a step's (the passed statements
  touch the last two steps' instances) — since a pipe's statements are ordered by nothing but their place;
  between pipes the ``sync`` pass's flags keep each buffer's instances in order;
- what they only read is written by them or before the pid loop.

``lower`` checks the result too: a core whose flags no longer take turns (:func:`takes_turns`: a wait still before
its set after ``issue_order`` — a cycle through the pipes' queues —, or a set of a flag still set) is emitted
again with its programs one after the other.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.ir import Alloc, Flag, Kernel, Loop, Parallel, Stmt, pipe_of, reads, walk, writes
from compiler.passes.issue import flags
from compiler.passes.rotation import AHEAD_PIPES, lagging, rotation, with_flags
from isa import Instruction, SetFlag
from isa.records import record


@record
class LeadIn:
    """How a core's programs overlap: the pid body's ``loop`` (its index ``at``), the body statements ``pre``
    that go ahead with it (indices, flags included), the loop's ``first`` statements (indices into its body:
    :func:`rotation`), and whether a program's ``tail`` — its last step's lagging statements and its epilogue —
    waits until the next program's first step has run its early part (:func:`tail_waits`)."""

    at: int
    pre: tuple[int, ...]
    first: tuple[int, ...]
    defer: bool = False


def lead_in(kernel: Kernel, par: Parallel) -> LeadIn | None:
    """The lead-in of ``par``'s programs (see the module docstring), or None where it would not be safe."""
    body = par.body
    at = next((i for i, s in enumerate(body) if type(s) is Loop and s.rotate), None)
    if at is None:
        return None
    loop = body[at]
    first = rotation(kernel, loop)
    if first is None:
        return None
    own = set(body[0].bufs) if body and type(body[0]) is Alloc else set()
    step_own = set(loop.body[0].bufs) if loop.body and type(loop.body[0]) is Alloc else set()
    first_stmts = [loop.body[i] for i in first if type(loop.body[i]) is not Flag]
    # the prologue's statements that may go ahead: loading and Cube pipes, reading nothing the others write
    prologue = [i for i in range(at) if type(body[i]) not in (Alloc, Flag)]
    ahead = {i for i in prologue if _pipes(body[i]) <= AHEAD_PIPES}
    while True:
        late_w = {b for i in prologue if i not in ahead for b in _writes(body[i])}
        drop = {i for i in ahead if _reads(body[i]) & late_w}
        if not drop:
            break
        ahead -= drop
    rest = [body[i] for i in prologue if i not in ahead]
    moved = [body[i] for i in sorted(ahead)] + first_stmts
    rest_r = {b for s in rest for b in _reads(s)}
    rest_w = {b for s in rest for b in _writes(s)}
    mr = {b for s in moved for b in _reads(s)}
    mw = {b for s in moved for b in _writes(s)}
    if mr & rest_w or mw & (rest_r | rest_w):
        return None
    # the waits just before the loop guarding what ``first`` touches go with it (their sets come from ``pre``)
    waits: list[int] = []
    j = at - 1
    while j >= 0 and type(body[j]) is Flag:
        f = body[j]
        if not f.set and f.dst in _pipes_of(first_stmts):
            group = next((g for g in kernel.groups if g.name == f.group), None)
            if group is None or not set(group.buffers) <= mw | (mr - rest_w):
                return None
            waits.append(j)
        j -= 1
    inner = {b for s in first_stmts for x in walk((s,)) if type(x) is Alloc for b in x.bufs}
    passed = rest + [s for i, s in enumerate(loop.body) if i not in first and type(s) not in (Alloc, Flag)]
    passed += [s for s in body[at + 1 :] if type(s) not in (Alloc, Flag)]
    on = _uses(moved)  # buffer → the pipes touching it in the moved statements
    for b, pipes in _uses(passed).items():
        if b not in mw:
            continue
        if b in inner or not (b in own or b in step_own):
            return None  # a buffer of an L0 step of ``first``, of the core's, or of a passed statement's loop
        if pipes & on[b] and kernel.buffer(b).slots < (2 if b in own else 3):
            return None  # one pipe touches both instances: no flag orders them, the slots must differ
    if mw - own - step_own - inner:
        return None  # the moved statements write a buffer of the core's (allocated before the pid loop)
    written = {b for s in body for x in walk((s,)) for b in writes(x)}
    if (mr - mw) & written:
        return None  # read, not written by the moved statements, but written in the programs
    pre = tuple(sorted(set(with_flags(body, ahead)) | set(waits)))
    return LeadIn(at, pre, first, tail_waits(kernel, par, at, first, rest))


def tail_waits(kernel: Kernel, par: Parallel, at: int, first: tuple[int, ...], rest: list[Stmt]) -> bool:
    """Whether a program's tail — its loop's last lagging statements (``rotation.lagging``: the last ``P·V``, its
    FIXPIPE copies and the adds reading them) and the statements after its loop (the epilogue) — may wait
    until the next program has run its prologue and the early part of its first step (the softmax of its first
    scores), as the loop's steps wait for each other::

        … early(p, n-1); behind(p, n-2); after(p, n-1)         … early(p, n-1); behind(p, n-2); after(p, n-1)
        behind(p, n-1); epilogue(p)                  ==>      prologue(p+1); first(p+1, 1); early(p+1, 0)
        prologue(p+1); first(p+1, 1); early(p+1, 0)            behind(p, n-1); epilogue(p)
        after(p+1, 0) …                                        after(p+1, 0) …

    The Vector unit then works on the next program's softmax while the last ``P·V`` makes its round trip through
    L1, the Cube and FIXPIPE, rather than waiting for it. The step's buffers keep the order they have between two
    steps of the loop; a buffer of the program's (the running max, sum and accumulator) that both sides touch on
    one pipe needs two slots (the next program's instance in the other), and one of the core's is not touched by
    both with a write."""
    body = par.body
    loop = body[at]
    behind, after = lagging(loop, first, kernel)
    own = set(body[0].bufs) if body and type(body[0]) is Alloc else set()
    step_own = {b for x in walk(loop.body) if type(x) is Alloc for b in x.bufs}
    early = [s for i, s in enumerate(loop.body) if i not in behind and i not in after and type(s) not in (Alloc, Flag)]
    tail = [loop.body[i] for i in behind if type(loop.body[i]) not in (Alloc, Flag)]
    tail += [s for s in body[at + 1 :] if type(s) not in (Alloc, Flag)]
    if not tail or any(type(s) is Alloc for s in body[at + 1 :]):
        return False
    # the loop's own "free" sets (right after it) stay in place: the next program's loads wait for them
    freed = {b for f in body[at + 1 : at + 1 + loop_sets(body, at)] for g in kernel.groups if g.name == f.group
             for b in g.buffers}  # fmt: skip
    if freed & set(_uses(tail)):
        return False
    moved = rest + early
    m_use, t_use = _uses(moved), _uses(tail)
    written = {b for s in moved + tail for b in _writes(s)}
    for b in set(m_use) & set(t_use) & written:
        if b in step_own:
            continue  # a step's buffer: steps 0 and n - 1 keep the order two steps of the loop have
        if b not in own:
            return False
        if m_use[b] & t_use[b] and kernel.buffer(b).slots < 2:
            return False
    return True


def loop_sets(body: tuple[Stmt, ...], at: int) -> int:
    """How many ``set`` flags follow the loop at ``body[at]`` directly (they go with it: a buffer of the program
    its loop's statements read last, released)."""
    n = 0
    while at + 1 + n < len(body) and type(f := body[at + 1 + n]) is Flag and f.set:
        n += 1
    return n


def takes_turns(stream: Sequence[Instruction]) -> bool:
    """Whether each flag's sets and waits take turns in ``stream``, a set first: no wait before its set (the
    scalar unit's issue order could not hold it: a cycle through the pipes' queues) and no set of a flag still
    set (a core's flag is set once, then consumed)."""
    pending: set[tuple] = set()
    for i in flags(stream):
        x = stream[i]
        k = (x.src, x.dst, x.event)  # type: ignore[attr-defined]
        if (k in pending) is (type(x) is SetFlag):
            return False
        pending.symmetric_difference_update((k,))
    return True


def _uses(stmts: list[Stmt]) -> dict[str, set]:
    out: dict[str, set] = {}
    for s in stmts:
        for x in walk((s,)):
            for b in (*reads(x), *writes(x)):
                out.setdefault(b, set()).add(pipe_of(x))
    return out


def _pipes(s: Stmt) -> set:
    return {pipe_of(x) for x in walk((s,))} - {None}


def _pipes_of(stmts: list[Stmt]) -> set:
    return {p for s in stmts for p in _pipes(s)}


def _reads(s: Stmt) -> set[str]:
    return {b for x in walk((s,)) for b in reads(x)}


def _writes(s: Stmt) -> set[str]:
    return {b for x in walk((s,)) for b in writes(x)}
