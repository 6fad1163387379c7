"""``lower``'s instructions of one statement at the current loop indices (``compiler.passes.lower.Emitter``).

:class:`Statements` is the half of the emitter that reads no loop: given the indices the walk has reached (``env``)
and each buffer's instance (``inst``), it works out a tile's extents and start along each axis, a buffer's slot
address, and the instruction of a GM load or store, an on-chip move, an ``mmad`` or a vector program — each built
once (``made``) for all its repeats. The walk (loops, prefetch, rotation, programs overlapped) is the
:class:`~compiler.passes.lower.Emitter`'s; the cost model (``compiler.tune.model``) emits statements through it too.
"""

from __future__ import annotations

from compiler.ir import Buffer, Kernel, Load, Mmad, Move, Store, Vec
from compiler.passes.hoist import BLOCK_AXIS, PART_AXIS, PART_VAR, SUB_AXES
from compiler.passes.stamp import GmRef, Recorder
from isa import Addr, Copy, DType, Fixpipe, Instruction, Pipe, Space
from isa import Mmad as MmadIns


def _slot_addrs(b: Buffer) -> tuple[Addr, ...]:
    """Each slot's address of a buffer of one live tile (a temporary: one); ``()`` for another."""
    if b.temp or b.live != 1:
        return (Addr(b.space, b.offset),) if b.temp else ()
    return tuple(Addr(b.space, b.offset + d * b.slot_bytes) for d in range(b.depth))


class Statements:
    """A statement's instructions at the current loop indices (the state is the emitter's: see its ``__init__``)."""

    k: Kernel
    record: Recorder | None
    env: dict[str, int]
    inst: dict[str, int]
    bufs: dict[str, Buffer]
    slots: dict[str, tuple[Addr, ...]]
    axes: dict
    tiling: dict[str, tuple[str, int, int]]
    tensors: dict
    views: dict[tuple, tuple]
    loads: dict[int, tuple[str, ...]]
    counts: dict[str, int]
    made: dict[tuple, Instruction]

    # -- extents and addresses -----------------------------------------------------------------
    def _sub_count(self) -> int:
        k = self.axes["k"]
        return -(-k.size(self.env.get("ko", 0)) // self.axes["k0"].tile)

    def ext(self, dim: str | None) -> int:
        """Elements along ``dim`` in the current tile (tails included)."""
        if dim is None:
            return 1
        if dim == "k0":
            k0 = self.axes["k0"].tile
            return min(k0, self.ext("k") - self.env.get("ki", 0) * k0)
        if dim == PART_AXIS:  # rows of the m tile's current part
            return min(self.axes[dim].tile, self.ext("m") - self.env.get(PART_VAR, 0) * self.axes[dim].tile)
        var, tile, extent = self.tiling[dim]  # as Axis.size
        return min(tile, extent - self.env.get(var, 0) * tile)

    def start(self, dim: str) -> int:
        """First element along ``dim`` of the current tile (of a part: the tile's start plus the part's)."""
        if dim == PART_AXIS:
            return self.start("m") + self.env.get(PART_VAR, 0) * self.axes[PART_AXIS].tile
        return self.axes[dim].start(self.env.get(f"{dim}o", 0))

    def addr(self, name: str) -> Addr:
        slots = self.slots.get(name)
        if slots is None:
            slots = self.slots[name] = _slot_addrs(self.bufs[name])
        if slots:  # one live tile: its instance's slot (most buffers; asked ~10⁶ times)
            return slots[self.inst.get(name, 0) % len(slots)]
        b: Buffer = self.bufs[name]
        slot = (self.inst.get(name, 0) % b.depth) * b.live
        if b.live > 1:
            local = 0
            for v in b.live_vars:
                local = local * self.counts[v] + self.env[v]
            slot += local
        return Addr(b.space, b.offset + slot * b.slot_bytes)

    def tile_vars(self, s: Load) -> tuple[str, ...]:
        """The loop variables :meth:`gm_tile` reads for the load ``s``: each dim's (a part's: the m tile's too)."""
        got = self.loads.get(id(s))
        if got is None:
            view = self.bufs[s.buf].dims
            dims = [next((v for v in view if v and SUB_AXES.get(v) == d), d) for d in self.tensors[s.tensor].dims]
            got = tuple(v for d in dims for v in (("mo", PART_VAR) if d == PART_AXIS else (f"{d}o",)))
            self.loads[id(s)] = got
        return got

    def gm_tile(self, tensor: str, view: tuple[str | None, ...] = ()) -> tuple[Addr, int, int, int | None]:
        """(address, rows, cols, row stride or None) of the current tile of a GM tensor, as a buffer of dims
        ``view`` stages it (a k block, an output tile's part: ``SUB_AXES``)."""
        t = self.tensors[tensor]
        dims = self.views.get(at := (tensor, view))
        if dims is None:
            dims = self.views[at] = tuple(next((v for v in view if v and SUB_AXES.get(v) == d), d) for d in t.dims)
        starts = [self.start(d) for d in dims]
        sizes = [self.ext(d) for d in dims]
        if len(t.shape) == 1:
            return Addr(Space.GM, starts[0] * t.dtype.itemsize, tensor), 1, sizes[0], None
        width = t.shape[1]
        offset = (starts[0] * width + starts[1]) * t.dtype.itemsize
        stride = width if sizes[1] < width and sizes[0] > 1 else None
        return Addr(Space.GM, offset, tensor), sizes[0], sizes[1], stride

    # -- statements -----------------------------------------------------------------------------
    def load(self, s: Load) -> Instruction | GmRef:
        """A GM tile into its buffer. Into L1 it is a Cube operand: on a chip whose Cube takes its operands
        in the NZ layout (``nd2nz`` in the chip's parameters) the load changes the layout on the way."""
        dst = self.addr(s.buf)
        ins = self.gm(s, dst)
        return ins if self.record is None else self.record(ins, s, self.env, dst)

    def gm(self, s: Load | Store, local: Addr) -> Instruction:
        """The load of ``s`` into ``local`` or its store from ``local``, at the current loop indices."""
        if type(s) is Store:
            return self.store_from(s, local)
        src, rows, cols, stride = self.gm_tile(s.tensor, self.bufs[s.buf].dims)
        dtype = self.tensors[s.tensor].dtype
        nz = local.space is Space.L1 and getattr(self.k.target.params, "nd2nz", None) is not None
        key = ("load", local, src, dtype, rows, cols, stride, nz)
        ins = self.made.get(key)
        if ins is None:
            ins = self.made[key] = Copy(local, src, dtype, _shape(rows, cols), src_stride=stride, nd2nz=nz)
        return ins

    def copy(
        self,
        dst: Addr,
        src: Addr,
        dtype: DType,
        shape: tuple[int, ...],
        stride: int | None = None,
        transpose: bool = False,
    ) -> Instruction:
        """The on-chip ``Copy``, made once (``made``) for all its repeats."""
        key = ("copy", dst, src, dtype, shape, stride, transpose)
        ins = self.made.get(key)
        if ins is None:
            ins = self.made[key] = Copy(dst, src, dtype, shape, src_stride=stride, transpose=transpose)
        return ins

    def move(self, s: Move) -> Instruction:
        dst, src = self.bufs[s.buf], self.bufs[s.src]
        if s.pipe is Pipe.FIX:  # L0C → UB: the accumulator (or a part of its rows), cast on the fly
            rows, cols = (self.ext(d) for d in (dst.dims if dst.dims[0] == PART_AXIS else src.dims))
            to = dst.dtype if dst.dtype is not src.dtype else None
            at, frm = self.addr(s.buf), self.addr(s.src)
            if dst.dims[0] == PART_AXIS:  # rows of a row-major [m × n] accumulator
                skip = self.env.get(PART_VAR, 0) * self.axes[PART_AXIS].tile * cols * src.dtype.itemsize
                frm = Addr(frm.space, frm.offset + skip)
            key = ("fixpipe", at, frm, src.dtype, rows, cols, to)
            ins = self.made.get(key)
            if ins is None:
                ins = self.made[key] = Fixpipe(at, frm, src.dtype, _shape(rows, cols), to=to)
            return ins
        rows, cols = self.ext(dst.dims[0]), self.ext(dst.dims[1])
        base = self.addr(s.src)
        es = src.dtype.itemsize
        block = BLOCK_AXIS in src.dims  # kin: elements along k from the L1 tile's (or k block's) start
        kin = self.env[s.sub] * self.axes["k0"].tile if s.sub else 0
        kin += self.start("k") - self.start(BLOCK_AXIS) if block else 0
        if src.dims in (("n", "k"), ("n", BLOCK_AXIS)):  # trans_b: columns of a row-major [n × k] tile, transposed
            width = self.ext(src.dims[1])
            at = Addr(base.space, base.offset + kin * es)
            stride = width if rows < width and cols > 1 else None
            return self.copy(self.addr(s.buf), at, src.dtype, _shape(cols, rows), stride, transpose=True)
        if dst.dims[1] == "k0" and (s.sub or block):  # columns kin.. of a row-major [m × k] tile
            width = self.ext(src.dims[1])
            at = Addr(base.space, base.offset + kin * es)
            stride = width if cols < width and rows > 1 else None
            return self.copy(self.addr(s.buf), at, src.dtype, _shape(rows, cols), stride)
        if dst.dims[0] == "k0" and (s.sub or block):  # rows kin.. of a row-major [k × n] tile
            at = Addr(base.space, base.offset + kin * cols * es)
            return self.copy(self.addr(s.buf), at, src.dtype, _shape(rows, cols))
        if dst.dims[0] is None:  # a vector of a full buffer (the ones of the bias update)
            return self.copy(self.addr(s.buf), base, src.dtype, (dst.cols,))
        return self.copy(self.addr(s.buf), base, src.dtype, _shape(rows, cols))

    def mmad(self, s: Mmad) -> Instruction:
        m, n = self.ext("m"), self.ext("n")
        if s.init == "always":  # C0 = ones · biasᵀ
            init, k = True, 1
        else:
            k = self.ext("k0")
            init = s.init == "first" and self.env.get("ko", 0) == 0 and self.env.get("ki", 0) == 0
        dtype = self.bufs[s.a].dtype
        acc, a, b = self.addr(s.acc), self.addr(s.a), self.addr(s.b)
        key = ("mmad", acc, a, b, dtype, m, k, n, init)
        ins = self.made.get(key)
        if ins is None:
            ins = self.made[key] = MmadIns(acc, a, b, dtype, m, k, n, init=init)
        return ins

    def vec(self, s: Vec) -> list[Instruction]:
        prog = self.k.programs[s.prog]
        addr: dict[str, Addr] = {}
        rows = cols = None
        for value, buf in (*zip(prog.ins, s.ins), *zip(prog.outs, s.outs)):
            addr[value] = self.addr(buf)
            b, v = self.bufs[buf], prog.value(value)
            if v.shape == "tile" and rows is None:
                rows, cols = self.ext(b.dims[0]), self.ext(b.dims[1])
            elif v.shape == "rows" and rows is None:
                rows, cols = self.ext(b.dims[1]), 1
            elif v.shape == "row" and cols is None:
                cols = self.ext(b.dims[1])
        for v in prog.temps:
            addr[v.name] = self.addr(f"{s.prog}.{v.name}")
        return prog.emit(rows or 1, cols or 1, addr, self.k.target)

    def store(self, s: Store) -> Instruction | GmRef:
        src = self.addr(s.buf)
        ins = self.store_from(s, src)
        return ins if self.record is None else self.record(ins, s, self.env, src)

    def store_from(self, s: Store, src: Addr) -> Instruction:
        dst, rows, cols, stride = self.gm_tile(s.tensor, self.bufs[s.buf].dims)
        dtype, shape = self.bufs[s.buf].dtype, _shape(rows, cols)
        if s.pipe is Pipe.FIX:
            return Fixpipe(dst, src, dtype, shape, to=s.to, relu=s.relu, dst_stride=stride)
        return Copy(dst, src, dtype, shape, dst_stride=stride)


def _shape(rows: int, cols: int) -> tuple[int, ...]:
    return (rows, cols) if rows > 1 else (cols,)
