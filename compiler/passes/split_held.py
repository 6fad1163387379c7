"""What a hand-over copy's destination already holds (:func:`held`), for ``split``: such a copy moves nothing
across GM on a separated chip."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from isa import Instruction, Region, Space, VDup


def held(
    core: tuple[Instruction, ...],
    carries: Callable[[Instruction], bool],
    every: Sequence[tuple[Region, ...]] | None = None,
) -> set[int]:
    """The indices of the hand-over copies of ``core`` (``carries``) that write what their destination already
    holds. On the coupled core such a copy is cheap; split, it is a GM round trip — a store on one core, a load on
    the other (on a chip with an ND→NZ change, a load of the change's minimum time) — for bytes already there: the
    row of ones a FlashAttention step sums its probabilities with on the Cube (filled once per program, handed to
    each step's L1 operand slot).

    What a region holds is known by what made it, as long as nothing else writes over it: a ``v.dup`` of a value
    (the same value, type and shape: the same bytes wherever it is), or a hand-over copy (its destination holds
    what its source holds). Program order is the order of these accesses: the coupled program's flags order every
    write after the reads and writes of the same bytes before it, and before those after it. Where the Vector side
    consumes (Cube → Vector), the chains that share it among the AIVs are found after the drop, so a reader of the
    held bytes joins the chain of the load that brought them, on the same AIV. ``every``: each instruction's
    ``regions()``, where the caller has them."""
    known = _Known()
    out: set[int] = set()
    for i, ins in enumerate(core):
        regions = ins.regions() if every is None else every[i]
        handed = carries(ins)
        if handed:
            src = _key(r for r in regions if not r.write)
            dst = _key(r for r in regions if r.write)
            holds = known.get(src)
            if holds is not None and known.get(dst) == holds:
                out.add(i)
                continue
        if known:
            for w in regions:
                if w.write:
                    known.forget(w)
        if type(ins) is VDup:
            known.put(_key(r for r in regions if r.write), ("dup", ins.scalar, ins.dtype, ins.shape))
        elif handed:
            holds = known.get(src)
            if holds is None:
                holds = ("copy", i)
                known.put(src, holds)
            known.put(dst, holds)
    return out


class _Known(dict):
    """What regions hold (:func:`held`): a key (:func:`_key`) → what it holds, with the keys indexed by the memory
    (space and GM tensor) of their regions, so that a write looks only at the keys it may overlap."""

    def __init__(self) -> None:
        super().__init__()
        #: a memory → each key with regions in it → their extents there (start, end)
        self.at: dict[tuple[Space, str | None], dict[tuple[Region, ...], list[tuple[int, int]]]] = {}

    def put(self, key: tuple[Region, ...], holds: object) -> None:
        if key in self:
            self.drop(key)
        self[key] = holds
        for r in key:
            self.at.setdefault((r.addr.space, r.addr.tensor), {}).setdefault(key, []).append((r.start, r.end))

    def drop(self, key: tuple[Region, ...]) -> None:
        del self[key]
        for r in key:
            self.at[(r.addr.space, r.addr.tensor)].pop(key, None)

    def forget(self, w: Region) -> None:
        """Forget every key with a region that may share a byte with ``w`` (the same memory, or GM tensor, and
        overlapping extents)."""
        keys = self.at.get((w.addr.space, w.addr.tensor))
        if not keys:
            return
        start, end = w.start, w.end
        for key in [k for k, spans in keys.items() if any(a < end and start < b for a, b in spans)]:
            self.drop(key)


def _key(regions: Iterable[Region]) -> tuple[Region, ...]:
    """Regions as a key: their bytes, whether read or written (a single row's stride does not matter)."""
    return tuple(r._replace(write=False, stride=r.stride if r.rows > 1 else 0) for r in regions)
