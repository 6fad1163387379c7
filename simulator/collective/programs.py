"""Collectives as programs: what each chip's DMA engines and vector unit do, in order, with flags.

A rank's program is a few in-order queues: one per DMA engine (``Put``: copy a chunk of this chip's buffer
into a peer's over the link, then set a flag at the peer) and one for the vector unit (``Reduce``: add a
received chunk into the data, then set a local flag). A step waits for flags (``after``) exactly as a core's
pipe waits on ``wait_flag``; nothing else orders two queues. Flags are named by what they mean — ``("rs",
step, chunk)``: the chunk of reduce-scatter step ``step`` has landed — so every rank's program uses the same
names, and a rank receives from the peer ``k`` behind it the flags it sets on the peer ``k`` ahead.

Buffers per rank: ``data`` (the collective's input and output, ``nbytes`` = nccl-tests' size S for
all-reduce, S/N… see ``layout``) and ``recv`` (landing slots for chunks still to be reduced or, in an
all-to-all, the output). Data are float32 in the functional model (4-byte elements).

Algorithms (``N`` ranks, the data in ``N`` segments, each segment in chunks of at most ``chunk`` bytes):

- ``ring``: each rank sends only to the next. Reduce-scatter takes N−1 steps (send a segment, receive the
  previous rank's, add it in, send that on); all-gather N−1 more. Chunk ``j`` of step ``s`` leaves as soon as
  chunk ``j`` of step ``s−1`` has been added in: the steps pipeline chunk by chunk.
- ``mesh`` (direct, full mesh): each rank sends segment ``p`` straight to rank ``p`` (N−1 peers at once, over
  as many DMA engines as the chip has), adds the N−1 segments it receives, and sends its reduced segment to
  every peer. The engines take the puts in turn; all-gather of chunk ``j`` is queued after reduce-scatter of
  chunk ``j+1``, so the engines stream while the vector unit adds.
"""

from __future__ import annotations

import numpy as np

from isa import DsasimError
from isa.records import record

OPS = ("all-reduce", "reduce-scatter", "all-gather", "all-to-all", "send-recv")
ALGOS = ("ring", "mesh")
ELEMENT = 4  # bytes of one element in the functional model (float32)


@record
class Put:
    """DMA: ``nbytes`` from this rank's ``src_buf`` at ``src`` to rank ``rank + peer``'s ``dst_buf`` at ``dst``,
    once every local flag in ``after`` is set; sets ``flag`` at the peer when the bytes have landed."""

    peer: int
    src_buf: str
    src: int
    dst_buf: str
    dst: int
    nbytes: int
    flag: tuple
    after: tuple = ()


@record
class Reduce:
    """Vector unit: ``data[dst : dst+nbytes] += recv[src : src+nbytes]`` once ``after`` is set; then ``flag``."""

    dst: int
    src: int
    nbytes: int
    flag: tuple
    after: tuple = ()
    #: HBM streams per byte: two read, one written
    streams = 3
    verb = "add"

    def apply(self, buf: dict[str, np.ndarray]) -> None:
        d, s, k = self.dst // ELEMENT, self.src // ELEMENT, self.nbytes // ELEMENT
        buf["data"][d : d + k] += buf["recv"][s : s + k]


@record
class Copy(Reduce):
    """Vector unit: ``recv[dst : dst+nbytes] = data[src : src+nbytes]`` once ``after`` is set; then ``flag`` —
    the block a rank keeps for itself in an all-to-all, copied within its own HBM."""

    #: HBM streams per byte: one read, one written
    streams = 2
    verb = "copy"

    def apply(self, buf: dict[str, np.ndarray]) -> None:
        d, s, k = self.dst // ELEMENT, self.src // ELEMENT, self.nbytes // ELEMENT
        buf["recv"][d : d + k] = buf["data"][s : s + k]


@record
class RankProgram:
    engines: tuple[tuple[Put, ...], ...]
    reduces: tuple[Reduce, ...]  # the vector unit's queue (adds, and an all-to-all's own block: a Copy)

    @property
    def puts(self) -> int:
        return sum(len(e) for e in self.engines)


@record
class Collective:
    """Every rank's program, the buffer sizes, and whether every rank runs the same program up to a rotation
    of the ranks over the same kind of link (``symmetric``: then one rank may stand for all)."""

    op: str
    algo: str
    ranks: int
    nbytes: int  # nccl-tests' size S
    chunk: int
    data_bytes: int
    recv_bytes: int
    programs: tuple[RankProgram, ...]

    @property
    def puts(self) -> int:
        return sum(p.puts for p in self.programs)


def layout(op: str, ranks: int, nbytes: int) -> tuple[int, int]:
    """(data bytes, recv bytes) per rank for nccl-tests' size ``nbytes`` (S): all-reduce, reduce-scatter,
    all-gather and all-to-all keep S in ``data`` (reduce-scatter's result is segment ``rank``, all-gather's
    input too), send-recv S; ``recv`` holds a slot per incoming step (or, all-to-all, the output)."""
    if op in ("all-reduce", "reduce-scatter"):
        return nbytes, _seg_max(nbytes, ranks) * max(ranks - 1, 0)
    if op == "all-gather":
        return nbytes, 0
    return nbytes, nbytes  # all-to-all, send-recv


def build(op: str, algo: str, ranks: int, nbytes: int, chunk: int, engines: int) -> Collective:
    """The programs of collective ``op`` by ``algo`` over ``ranks`` ranks, S = ``nbytes``, in chunks of at most
    ``chunk`` bytes, the puts spread over ``engines`` DMA engines per chip."""
    if op not in OPS:
        raise DsasimError(f"unknown collective {op!r}", hint="collectives: " + ", ".join(OPS))
    if algo not in ALGOS:
        raise DsasimError(f"unknown algorithm {algo!r}", hint="algorithms: ring, mesh")
    if op == "all-to-all" and algo == "ring":
        raise DsasimError("all-to-all is built as direct puts to every peer", hint="use --algo mesh")
    if nbytes < ELEMENT * ranks or nbytes % (ELEMENT * ranks):
        raise DsasimError(
            f"--bytes {nbytes} is not a multiple of {ELEMENT * ranks} ({ranks} ranks × {ELEMENT}-byte elements)",
            hint=f"e.g. --bytes {ELEMENT * ranks * 1024}",
        )
    if chunk < ELEMENT or chunk % ELEMENT:
        raise DsasimError(f"--chunk {chunk} must be a positive multiple of {ELEMENT} bytes", hint="e.g. --chunk 1M")
    make = {
        ("all-reduce", "ring"): _ring_all_reduce,
        ("reduce-scatter", "ring"): _ring_all_reduce,
        ("all-gather", "ring"): _ring_all_reduce,
        ("all-reduce", "mesh"): _mesh_all_reduce,
        ("reduce-scatter", "mesh"): _mesh_all_reduce,
        ("all-gather", "mesh"): _mesh_all_reduce,
        ("all-to-all", "mesh"): _all_to_all,
        ("send-recv", "ring"): _send_recv,
        ("send-recv", "mesh"): _send_recv,
    }[(op, algo)]
    data, recv = layout(op, ranks, nbytes)
    programs = tuple(make(op, r, ranks, nbytes, chunk, engines) for r in range(ranks))
    return Collective(op, algo, ranks, nbytes, chunk, data, recv, programs)


def segments(nbytes: int, ranks: int) -> list[tuple[int, int]]:
    """(offset, bytes) of the ``ranks`` segments of ``nbytes`` (whole elements, the first ones larger)."""
    elems = nbytes // ELEMENT
    base, extra = divmod(elems, ranks)
    out, off = [], 0
    for i in range(ranks):
        n = (base + (i < extra)) * ELEMENT
        out.append((off, n))
        off += n
    return out


def chunks(nbytes: int, chunk: int) -> list[tuple[int, int]]:
    """(offset, bytes) of ``nbytes`` cut into pieces of at most ``chunk`` bytes."""
    return [(o, min(chunk, nbytes - o)) for o in range(0, nbytes, chunk)] or [(0, 0)]


def _seg_max(nbytes: int, ranks: int) -> int:
    return max(n for _, n in segments(nbytes, ranks))


def _spread(puts: list[Put], engines: int) -> tuple[tuple[Put, ...], ...]:
    """Puts dealt to the engines in turn, each engine keeping their order."""
    return tuple(tuple(puts[e::engines]) for e in range(min(engines, max(len(puts), 1))))


def _ring_all_reduce(op: str, r: int, n: int, nbytes: int, chunk: int, engines: int) -> RankProgram:
    """Ring: reduce-scatter (rank r ends with segment r summed), then all-gather (each rank's segment r
    passed round). ``op`` selects the phases."""
    seg = segments(nbytes, n)
    slot = _seg_max(nbytes, n)
    cuts = chunks(slot, chunk)
    puts: list[Put] = []
    reduces: list[Reduce] = []
    rs = op in ("all-reduce", "reduce-scatter")
    ag = op in ("all-reduce", "all-gather")
    if rs:
        for s in range(n - 1):
            send_off, send_n = seg[(r - s - 1) % n]
            red_off, red_n = seg[(r - s - 2) % n]
            for j, (o, c) in enumerate(cuts):
                if o < send_n:
                    after = (("red", s - 1, j),) if s else ()
                    puts.append(
                        Put(1, "data", send_off + o, "recv", s * slot + o, min(c, send_n - o), ("rs", s, j), after)
                    )
                if o < red_n:
                    reduces.append(Reduce(red_off + o, s * slot + o, min(c, red_n - o), ("red", s, j), (("rs", s, j),)))
    if ag:
        for s in range(n - 1):
            off, size = seg[(r - s) % n]
            for j, (o, c) in enumerate(cuts):
                if o >= size:
                    continue
                if s:
                    after = (("ag", s - 1, j),)
                elif rs:
                    after = (("red", n - 2, j),)
                else:
                    after = ()
                puts.append(Put(1, "data", off + o, "data", off + o, min(c, size - o), ("ag", s, j), after))
    return RankProgram((tuple(puts),) if puts else (), tuple(reduces))


def _mesh_all_reduce(op: str, r: int, n: int, nbytes: int, chunk: int, engines: int) -> RankProgram:
    """Direct: segment p goes straight to rank p; each rank adds the N−1 it receives, then sends its
    summed segment to every peer. All-gather of chunk j is queued after reduce-scatter of chunk j+1."""
    seg = segments(nbytes, n)
    slot = _seg_max(nbytes, n)
    cuts = chunks(slot, chunk)
    rs = op in ("all-reduce", "reduce-scatter")
    ag = op in ("all-reduce", "all-gather")
    own_off, own_n = seg[r]
    rs_puts: list[list[Put]] = []
    ag_puts: list[list[Put]] = []
    reduces: list[Reduce] = []
    for j, (o, c) in enumerate(cuts):
        batch_rs, batch_ag = [], []
        for k in range(1, n):
            p_off, p_n = seg[(r + k) % n]
            if rs and o < p_n:
                batch_rs.append(Put(k, "data", p_off + o, "recv", (k - 1) * slot + o, min(c, p_n - o), ("rs", k, j)))
            if ag and o < own_n:
                after = (("red", n - 1, j),) if rs else ()
                batch_ag.append(
                    Put(k, "data", own_off + o, "data", own_off + o, min(c, own_n - o), ("ag", k, j), after)
                )
        rs_puts.append(batch_rs)
        ag_puts.append(batch_ag)
        if rs and o < own_n:
            for k in range(1, n):
                after = (("rs", k, j),) + ((("red", k - 1, j),) if k > 1 else ())
                reduces.append(Reduce(own_off + o, (k - 1) * slot + o, min(c, own_n - o), ("red", k, j), after))
    order: list[Put] = []
    for j in range(len(cuts)):
        order += rs_puts[j]
        if j:
            order += ag_puts[j - 1]
    order += ag_puts[-1]
    return RankProgram(_spread(order, engines), tuple(reduces))


def _all_to_all(op: str, r: int, n: int, nbytes: int, chunk: int, engines: int) -> RankProgram:
    """Block ``p`` of rank r's data goes to block ``r`` of rank p's recv (its own block: a local copy, beside
    the puts)."""
    seg = segments(nbytes, n)
    puts = []
    for j, (o, c) in enumerate(chunks(_seg_max(nbytes, n), chunk)):
        for k in range(1, n):
            p = (r + k) % n
            off, size = seg[p]
            if o < size:
                puts.append(Put(k, "data", off + o, "recv", seg[r][0] + o, min(c, size - o), ("a2a", k, j)))
    own_off, own_n = seg[r]
    return RankProgram(_spread(puts, engines), (Copy(own_off, own_off, own_n, ("a2a", 0)),))


def _send_recv(op: str, r: int, n: int, nbytes: int, chunk: int, engines: int) -> RankProgram:
    """Every rank sends its data to the next rank's recv and receives the previous rank's (nccl-tests'
    sendrecv), chunk after chunk on one engine."""
    puts = [Put(1, "data", o, "recv", o, c, ("sr", j)) for j, (o, c) in enumerate(chunks(nbytes, chunk))]
    return RankProgram((tuple(puts),), ())
