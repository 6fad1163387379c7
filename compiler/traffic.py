"""The analytic GM traffic of a kernel: how loop order and hoisting decide how often a tensor moves.

After ``hoist`` every GM access is a ``Load`` or ``Store`` at a known loop level. Over all its
executions it touches every tile of its tensor once for each iteration of the enclosing loops that do
*not* index the tensor (those re-read the same tiles), so, exactly — tails included::

    bytes(T) = size(T) × Π { trip count of ℓ : ℓ encloses the access and does not run along T's axes }

Statements before the parallel loop run once on every core, so they count once per core used.
For matmul with order m,n,k this gives the textbook ``|A|·N/tn + |B|·M/tm + |C|``; with order m,k,n
``|A| + |B|·M/tm + |C|`` (a stays resident across the n loop). The simulator's measured
``gm_read + gm_write`` equals the sum exactly (a test checks it).
"""

from __future__ import annotations

import math

from compiler.ir import Kernel, Load, Loop, Parallel, Store
from compiler.passes.hoist import SUB_AXES
from compiler.target import fmt_bytes
from isa.records import record


@record
class Term:
    """One kind of GM access: ``tensor_bytes`` moved ``factor`` times. A loop nest's terms are its access
    statements (``loops``: the enclosing loops that re-read it, "no×4", or "cores×2"); attention's say
    ``why`` in words ("32 key tiles")."""

    tensor: str
    write: bool
    tensor_bytes: int
    factor: int = 1
    loops: tuple[str, ...] = ()
    why: str = ""
    #: the tensor's bytes when ``tensor_bytes`` is not (a traced kernel's term: one tile, moved ``factor`` times)
    size: int = 0

    @property
    def bytes(self) -> int:
        return self.tensor_bytes * self.factor

    def text(self) -> str:
        times = f" × {self.factor} ({' · '.join(self.loops)})" if self.factor > 1 else ""
        verb = "write" if self.write else "read "
        why = f"  ({self.why})" if self.why else ""
        return f"{verb} {self.tensor:<6}{fmt_bytes(self.tensor_bytes):>11}{times} = {self.bytes:,} B{why}"


@record
class Traffic:
    terms: tuple[Term, ...]

    @property
    def read(self) -> int:
        return sum(t.bytes for t in self.terms if not t.write)

    @property
    def write(self) -> int:
        return sum(t.bytes for t in self.terms if t.write)

    @property
    def total(self) -> int:
        return self.read + self.write

    def text(self) -> str:
        lines = [t.text() for t in self.terms]
        lines.append(f"GM total {self.total:,} B ({fmt_bytes(self.total)})")
        return "\n".join(lines)


def memory_cycles(target: object, compulsory: int, read: int, write: int) -> float:
    """Cycles the chip's memory takes to serve ``read`` and ``write`` GM bytes of which ``compulsory`` are first
    reads (0 if its bandwidth is unknown) — the one rule every cost model uses.

    Without an L2 every byte crosses the GM link: ``(read + write) / gm_bandwidth``. With one (``simulator.l2``)
    that holds every tensor the kernel reads, a tensor's first read misses and its re-reads (the same tile of
    B for every row block of A, the same K/V tile for every query tile) hit: the misses and the writes cross
    the GM link, the hits the L2's, at the same time — ``max((compulsory + write) / gm_bandwidth, (read -
    compulsory) / l2 bandwidth)``. Re-reads of a kernel whose tensors do not fit the L2 are priced as misses."""
    gm = target.gm_bandwidth
    if not math.isfinite(gm):
        return 0.0
    l2 = getattr(target.params, "l2", None)
    if l2 is None or compulsory > l2.size:
        return (read + write) / gm
    return max((compulsory + write) / gm, (read - compulsory) / l2.bandwidth)


def gm_traffic(kernel: Kernel) -> Traffic:
    """The GM bytes of a hoisted (or later) kernel, by the formula above; a traced kernel's load or store (its tensor
    is flat and its statement computes the addresses) moves its buffer's tile at every execution, a ``traced`` loop's
    executions counted program by program (:func:`traced_trips`)."""
    op = kernel.op
    ncores = kernel.plan.ncores if kernel.plan else 1
    terms: list[Term] = []
    tensors = {t.name: t for t in op.tensors()}
    traced = kernel.traced is not None

    def visit(body: tuple, loops: tuple[tuple[str, str, float], ...], inside_parallel: bool, env: dict) -> None:
        for s in body:
            if isinstance(s, Loop):
                n = traced_trips(kernel, s, env)[0] if s.kind == "traced" else s.count
                visit(s.body, (*loops, (s.var, s.axis, n)), inside_parallel, {**env, s.var: 0} if traced else env)
            elif isinstance(s, Parallel):
                inner = {**env, **dict.fromkeys(s.vars, 0)} if traced else env
                visit(s.body, (*loops, *zip(s.vars, s.axes, s.counts)), True, inner)
            elif isinstance(s, Load | Store):
                t = tensors[s.tensor]
                if s.site is not None:
                    b = kernel.buffer(s.buf)
                    tile = math.prod(kernel.axis(d).tile if d else 1 for d in b.dims) * b.dtype.itemsize
                    times = math.prod(n for _, _, n in loops) * (1 if inside_parallel else ncores)
                    terms.append(Term(s.tensor, isinstance(s, Store), tile, round(times), (), "tiles", t.nbytes))
                    continue
                # a loop over blocks of k tiles or parts of a tile walks its parent axis (``SUB_AXES``)
                again = [(v, n) for v, a, n in loops if SUB_AXES.get(a, a) not in t.dims and n > 1]
                factor = math.prod(n for _, n in again)
                why = [f"{v}×{n}" for v, n in again]
                if not inside_parallel and ncores > 1:
                    factor *= ncores
                    why.append(f"cores×{ncores}")
                terms.append(Term(s.tensor, isinstance(s, Store), t.nbytes, factor, tuple(why)))

    visit(kernel.body, (), False, {})
    return Traffic(tuple(terms))


def traced_trips(kernel: Kernel, loop: Loop, env: dict[str, int]) -> tuple[float, float]:
    """A ``traced`` loop's trip count per program (its bounds may depend on the program: a causal kernel's key loop)
    at the outer loops' indices ``env``: the average over every program of the kernel's parallel loop, and the steps of
    the core with the most steps in all over the most programs any core runs — what the cost model multiplies by
    that many programs (``compiler.tune.model.price``) to count that core's steps. (The average over that core's own
    programs overcounts where programs are dealt longest first: the core with the most steps runs fewer, longer
    programs than the most — a causal kernel on 7 or 24 cores was priced 11–20 % over its busiest core's
    instructions.)"""
    plan = kernel.plan
    traced = kernel.traced
    assert traced is not None
    if plan is None or not plan.parallel:
        n = float(traced.count(loop.var, env))
        return n, n
    # a launch's parallel axis is its loop variable (``pid``): a core's programs are its tile indices
    per_core = [[traced.count(loop.var, {**env, **dict(zip(plan.parallel, p))}) for p in c] for c in plan.assignment]
    programs = sum(len(c) for c in per_core)
    busiest = max(map(sum, per_core))
    return sum(map(sum, per_core)) / programs, busiest / max(1, max(map(len, per_core)))
