"""Small instruction builders shared by the attention kernels: row folds, shapes, L0 slices."""

from __future__ import annotations

from isa import Addr, DType, Instruction, VBinary, VUnary

F16, F32 = DType.F16, DType.F32


def shape(rows: int, cols: int) -> tuple[int, ...]:
    """An instruction's view: ``(cols,)`` for one row, else ``(rows, cols)``."""
    return (rows, cols) if rows > 1 else (cols,)


def stride(rows: int, pitch: int, cols: int) -> int | None:
    """A row stride operand: ``None`` when the rows are dense (or there is one row)."""
    return pitch if rows > 1 and pitch != cols else None


def pitch(cols: int, dtype: DType, align: int = 32) -> int:
    """Row pitch in elements: ``cols`` rounded up so that every row starts ``align``-byte aligned (UB)."""
    per = max(1, align // dtype.itemsize)
    return -(-cols // per) * per


def at(addr: Addr, nbytes: int) -> Addr:
    return Addr(addr.space, addr.offset + nbytes, addr.tensor)


def slices(extent: int, step: int) -> list[tuple[int, int]]:
    """``(start, size)`` of the L0 steps over ``extent`` elements (the last may be smaller)."""
    return [(i, min(step, extent - i)) for i in range(0, extent, step)]


def fold_rows(
    op: str, src: Addr, scratch: Addr, rows: int, cols: int, row_pitch: int, dtype: DType
) -> tuple[list[Instruction], Addr]:
    """Reduce a ``rows × cols`` tile (rows ``row_pitch`` elements apart) over its rows with two-source
    ``v.max``/``v.add``: the first fold writes the pairwise result into ``scratch`` (the source is kept),
    the next ones fold ``scratch`` in place, halving the rows each time. Returns the instructions and
    the address of the one-row result (``src`` itself when there is a single row).

    This is the reduction of a transposed score tile: keys run down the rows, so per-query statistics
    come out as one row, which later broadcasts with a stride-0 operand. Each fold is one dense
    instruction over half the remaining rows — cheaper than a per-row ``v.rowmax`` on 910B-class chips.
    """
    if rows == 1:
        return [], src
    es = dtype.itemsize
    out: list[Instruction] = []
    w, base = rows, src
    while w > 1:
        h = (w + 1) // 2
        pairs = w - h
        dst = scratch
        out.append(
            VBinary(
                op,
                dst,
                base,
                at(base, h * row_pitch * es),
                dtype,
                shape(pairs, cols),
                stride(pairs, row_pitch, cols),
                stride(pairs, row_pitch, cols),
                stride(pairs, row_pitch, cols),
            )
        )
        if base is src and h > pairs:  # an odd row count: carry the middle row over into the scratch
            out.append(
                VUnary("copy", at(scratch, pairs * row_pitch * es), at(src, pairs * row_pitch * es), dtype, (cols,))
            )
        w, base = h, scratch
    return out, scratch


def broadcast_op(
    op: str, tile: Addr, row: Addr, rep: Addr, rows: int, cols: int, row_pitch: int, dtype: DType, per: int
) -> list[Instruction]:
    """``tile[r, :] = tile[r, :] OP row`` for every row (``OP`` a two-source op, ``row`` one row of
    ``cols``), cheaply.

    A stride-0 operand broadcasts one row, but a repeat then covers only that row: for rows narrower
    than ``per`` bytes (one repeat) most of each repeat is wasted. When the tile is dense, copy ``row``
    ``k = per // row bytes`` times into ``rep`` (one small instruction) and treat ``k`` rows of the tile
    as one row of ``k·cols``: each repeat is full again.
    """
    es = dtype.itemsize
    k = per // (cols * es) if row_pitch == cols else 1
    k = min(k, rows)
    if k < 2:
        s = stride(rows, row_pitch, cols)
        return [VBinary(op, tile, tile, row, dtype, shape(rows, cols), s, s, 0 if rows > 1 else None)]
    out: list[Instruction] = [VUnary("copy", rep, row, dtype, (k, cols), None, 0)]
    whole, rest = divmod(rows, k)
    out.append(VBinary(op, tile, tile, rep, dtype, shape(whole, k * cols), None, None, 0 if whole > 1 else None))
    if rest:
        tail = at(tile, whole * k * cols * es)
        out.append(VBinary(op, tail, tail, rep, dtype, shape(rest, cols), None, None, 0 if rest > 1 else None))
    return out
