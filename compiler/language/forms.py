"""A traced program's *form* — everything its instructions depend on but its loads' and stores' GM offsets — and its
*family's* form, which leaves out the parameters of its ``where`` records too (part of ``emit.Traced``).

``lower`` stamps a tile-language kernel's cores by these (``compiler.passes.stamp``). Cores whose programs have the
same forms, in order, lower to the same instructions up to the GM offsets; cores whose programs are of the same
families lower to the same instructions up to the GM offsets and the vector statements that read a ``where`` — a
causal FlashAttention's Q blocks of one trip count differ only where the diagonal cuts their last key tile::

    core 0: Q blocks 4, 8, 16, …    (head 0: trip count 2, 3, 5, …; the diagonal at row 0 of its tile)
    core 1: Q blocks 5, 9, 17, …    (the same trip counts; the diagonal 64 rows further)

so the second is the first with its loads, stores and masked vector statements made again (``masked``).
"""

from __future__ import annotations

from compiler.ir import Vec
from compiler.language.core import Rec


class _Apart(Exception):
    """A program that cannot be compared with others (``Traced.program_form``)."""


class Forms:
    """The program and family forms of :class:`~compiler.language.emit.Traced` (a mixin: it holds the tables)."""

    def program_form(self, pid: int) -> int | None:
        """A number for everything program ``pid``'s instructions depend on but the GM offsets of its loads and
        stores: per record in program order its :meth:`form` (a load's or store's without its GM offsets), and
        each loop's trip count. Two programs of one form lower to the same instructions but the GM addresses of
        their loads and stores (``compiler.passes.stamp``: a tile-language kernel's cores of one form are
        stamped). None: not comparable (a record that cannot be numbered, or one the scalar unit reads GM for).
        A program stamped at the trace is its original's copy but for value ids and GM offsets, through every pass
        since (``compiler.language.stamp.originals``), so it has its original's form, not walked again."""
        return self._form_of(pid, self.program_forms, "program", False)  # type: ignore[attr-defined]

    def family_form(self, pid: int) -> int | None:
        """:meth:`program_form` without the parameters of the ``where`` records (their diagonals and bounds): two
        programs of one family lower to the same instructions but their loads and stores and the statements that
        read a ``where`` (:meth:`masked`); the values those records make keep their forms in their readers'."""
        return self._form_of(pid, self.family_forms, "family", True)  # type: ignore[attr-defined]

    def _form_of(self, pid: int, known: dict[int, int | None], kind: str, loose: bool) -> int | None:
        got = known.get(pid, self)
        if got is self:
            original = self.like.get(pid)  # type: ignore[attr-defined]
            if original is not None:
                got = known[pid] = self._form_of(original, known, kind, loose)
                return got
            try:
                whole = (kind, self._program(self.nest.t.programs[pid], loose))  # type: ignore[attr-defined]
                got = self.numbers.setdefault(whole, len(self.numbers))  # type: ignore[attr-defined]
            except _Apart:
                got = None
            known[pid] = got
        return got  # type: ignore[return-value]

    def _program(self, items: list, loose: bool = False) -> tuple:
        out: list = []
        for d in items:
            if type(d) is not Rec:  # a loop: its line, and each step's records
                if d.reads:
                    raise _Apart
                out.append((d.site, tuple(self._program(it, loose) for it in d.iters)))
                continue
            if d.reads:
                raise _Apart
            if d.kind == "load" or d.kind == "store":
                _, rows, cols, stride, pieces = d.params
                moved = (rows, cols, stride, tuple(p[:4] for p in pieces))
                whole = self._whole(d, moved)  # type: ignore[attr-defined]
                if d.kind == "store":  # a FIXPIPE store reads its accumulator's type and scale
                    whole += (self._value(self._source(d.ins[0])),)  # type: ignore[attr-defined]
                f = self._number(whole)  # type: ignore[attr-defined]
            elif loose and d.kind == "vec" and d.op == "where":
                f = self._number(self._whole(d, None))  # type: ignore[attr-defined]
            else:
                f = self.form(d)  # type: ignore[attr-defined]
            if f is None:
                raise _Apart
            out.append(f)
        return tuple(out)

    def masked(self, stmt: object) -> bool:
        """Whether ``stmt``'s instructions are made from a ``where`` record (a vector segment with one among its
        operations or fills; a copy for the Cube or out of L0C read by one): what differs between the programs of
        one family besides GM offsets (:meth:`family_form`)."""
        site = stmt.site  # type: ignore[attr-defined]
        got = self.masks.get(site)  # type: ignore[attr-defined]
        if got is None:
            got = self.masks[site] = self._masked(stmt)  # type: ignore[attr-defined]
        return got

    def _masked(self, stmt: object) -> bool:
        site = stmt.site  # type: ignore[attr-defined]
        if self.alias:  # as built (``compiler.language.reuse``): its tables are keyed by the buffers it was built with
            stmt = self.original[site]  # type: ignore[attr-defined]
        statics = self.statics  # type: ignore[attr-defined]
        if isinstance(stmt, Vec):
            sids = self.vec_parts(site)[1]  # type: ignore[attr-defined]
            return any(statics[s].rec.kind == "vec" and statics[s].rec.op == "where" for s in sids)
        if site.startswith("fix:"):
            reader = self.built.fixes[stmt.buf][1]  # type: ignore[attr-defined]
        elif site.startswith("l1:"):
            reader = self.built.staged[stmt.buf][1]  # type: ignore[attr-defined]
        else:
            return False
        return reader.rec.kind == "vec" and reader.rec.op == "where"
