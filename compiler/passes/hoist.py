"""Pass 3, ``hoist``: stage every operand through on-chip buffers, each load at the outermost loop
level where its tile index changes (Halide: ``compute_at``/``store_at``; TVM: ``cache_read``,
``cache_write``).

rewrite (matmul, order m,n,k)::

    for mo in 0..2:                              for mo in 0..2:
      for no in 0..2:                              for no in 0..2:
        for ko in 0..4:                              alloc C0
          for ki in 0..2:               ==>          for ko in 0..4:
            c[mo,no] += a[mo,ko] · b[ko,no]            alloc A1, B1
                                                       A1 ← mte2 a[mo,ko]
                                                       B1 ← mte2 b[ko,no]
                                                       for ki in 0..2:
                                                         alloc A0, B0
                                                         A0 ← mte1 A1[ki]
                                                         B0 ← mte1 B1[ki]
                                                         C0 += cube A0 @ B0
                                                     c[mo,no] ← fix C0

A load sits in the body of the innermost loop whose variable indexes it: loops inside that body do not
change the tile, so it stays resident and is reused. With order ``m,k,n`` the load of ``a[mo,ko]``
moves out of the ``no`` loop (a is read from GM once), while ``b`` is re-read for every ``mo``: the
order trades traffic between operands. An accumulator lives from its first k step to its last; if a
loop indexing it is inside the k loop, every tile of that loop must stay live in L0C at once (``live``),
and the write-back moves after the k loop.

``alloc X`` marks where a new instance of buffer X begins: instances rotate through X's slots (see
``buffer``). Vector operators stage ``x`` in UB, run their tile program (``Vec``), and store from UB;
operands indexed by no loop (gamma, beta) are loaded once per core, before every loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from compiler.ir import Alloc, Buffer, Compute, Kernel, Load, Loop, Mmad, Move, Parallel, Stmt, Store, Vec, replace
from compiler.ops import MatMul, Op
from compiler.plan import Axis
from compiler.programs import cast_row, epilogue_acc_dtype, matmul_epilogue, ones, tile_program
from compiler.schedule import BLOCK_K_TILES
from isa import DType, Pipe, Space

F32 = DType.F32
I32 = DType.I32


@dataclass
class _Level:
    """One loop level of the nest (level 0: the top of a core's program)."""

    node: Loop | Parallel | None
    axes: tuple[str, ...]
    pre: list[Stmt] = field(default_factory=list)
    post: list[Stmt] = field(default_factory=list)
    alloc: list[str] = field(default_factory=list)

    @property
    def key(self) -> str | None:
        if isinstance(self.node, Loop):
            return self.node.var
        if isinstance(self.node, Parallel):
            return ",".join(self.node.vars)
        return None


def _levels(body: tuple) -> tuple[list[_Level], Compute]:
    levels = [_Level(None, ())]
    node = body[0]
    while isinstance(node, Loop | Parallel):
        levels.append(_Level(node, node.axes if isinstance(node, Parallel) else (node.axis,)))
        node = node.body[0]
    return levels, node


def _pos(levels: list[_Level], axes: set[str], upto: int | None = None) -> int:
    """Innermost level (≤ ``upto``) iterating one of ``axes``; 0 (the top) if none does."""
    last = len(levels) - 1 if upto is None else upto
    return max((i for i in range(last + 1) if set(levels[i].axes) & axes), default=0)


def _build(levels: list[_Level]) -> tuple[Stmt, ...]:
    inner: tuple[Stmt, ...] = ()
    for i in range(len(levels) - 1, -1, -1):
        lv = levels[i]
        alloc = (Alloc(tuple(lv.alloc)),) if lv.alloc else ()
        body = (*alloc, *lv.pre, *inner, *lv.post)
        if lv.node is None:
            return body
        inner = (replace(lv.node, body=body),)
    return inner


def hoist(kernel: Kernel, panel: str | None = None, block: str | None = None) -> Kernel:
    """Stage operands in buffers; loads at the outermost level where their tile changes. ``panel`` (matmul:
    ``"a"`` or ``"b"``) keeps that operand's whole k panel in L1 where its other tile index changes;
    ``block`` (matmul: ``"a"`` or ``"b"``, without a panel) loads that operand's L1 tile ``BLOCK_K_TILES`` k
    tiles wide (:func:`block_k`)."""
    if kernel.stage != "order":
        raise ValueError(f"hoist expects an ordered kernel, got stage {kernel.stage!r}")
    op = kernel.op
    if splits_k(kernel, panel, block):
        kernel = block_k(kernel)
    else:
        block = None
    panel = panel if keeps_panel(kernel, panel) else None
    part = None
    if isinstance(op, MatMul):
        part = epilogue_rows(kernel, op)
        if part is not None:
            kernel = kernel.with_(axes=(*kernel.axes, Axis(PART_AXIS, kernel.axis("m").tile, part)))
    levels, _ = _levels(kernel.body)
    if isinstance(op, MatMul):
        buffers, programs = _hoist_matmul(kernel, op, levels, panel, block if _blocked(kernel) else None, part)
    else:
        buffers, programs = _hoist_vector(kernel, op, levels)
    return kernel.with_(body=_build(levels), buffers=tuple(buffers), programs=programs, stage="hoist")


#: Axes that tile another axis's tiles (``k``'s blocks, the parts of an ``m`` tile): their parent axis.
#: A GM tile along one of them is a block or part of the parent's range (``lower``, ``compiler.traffic``).
SUB_AXES = {"kb": "k", "mp": "m"}
#: Matmul's k blocks: the axis ``kb`` (``BLOCK_K_TILES`` k tiles each) and its tile loop variable.
BLOCK_AXIS, BLOCK_VAR = "kb", "kbo"
#: The parts of an output tile that go through UB one after the other: the axis ``mp`` and its loop variable.
PART_AXIS, PART_VAR = "mp", "mpo"


def block_k(kernel: Kernel) -> Kernel:
    """Split the k tile loop into blocks of ``BLOCK_K_TILES`` tiles (an operand loaded a block at a time).

    rewrite (k in 4 tiles, blocks of 2)::

        for ko in 0..4:                  for kbo in 0..2:            # kb: blocks of 2 k tiles
          <k step ko>         ==>          for ko in 2·kbo..+2:      # block: ko is still the k tile
                                             <k step ko>

    The inner loop (``kind="block"``) keeps ``ko`` the k tile's index, so everything that reads k tiles
    is unchanged; ``lower`` runs it ``min(BLOCK_K_TILES, k tiles left)`` times. A k of one tile is left
    as it is."""
    k = kernel.axis("k")
    if k.count < 2:
        return kernel
    width = BLOCK_K_TILES * k.tile

    def split(body: tuple) -> tuple:
        out = []
        for s in body:
            if isinstance(s, Loop) and s.axis == "k" and s.kind == "tile":
                inner = Loop(s.var, "k", BLOCK_K_TILES, s.body, kind="block")
                out.append(Loop(BLOCK_VAR, BLOCK_AXIS, -(-k.count // BLOCK_K_TILES), (inner,)))
            elif isinstance(s, Loop | Parallel):
                out.append(replace(s, body=split(s.body)))
            else:
                out.append(s)
        return tuple(out)

    axes = (*kernel.axes, Axis(BLOCK_AXIS, k.extent, width, True))
    return kernel.with_(body=split(kernel.body), axes=axes)


def _outside_k(kernel: Kernel, operand: str) -> bool:
    """Whether the loop over ``operand``'s other axis's tiles (m for a, n for b) runs outside the k loop: then its
    L1 tile (a k panel, a k block) serves several k steps; otherwise it is loaded at every k step anyway."""
    other, k_loop = "m" if operand == "a" else "n", False
    node = kernel.body[0]
    while isinstance(node, Loop | Parallel):
        if k_loop and other in (node.axes if isinstance(node, Parallel) else (node.axis,)):
            return False
        k_loop = k_loop or (isinstance(node, Loop) and node.axis == "k")
        node = node.body[0]
    return k_loop


def keeps_panel(kernel: Kernel, panel: str | None) -> bool:
    """Whether ``hoist(kernel, panel)`` keeps ``panel``'s whole k panel in L1 (a matmul's ``"a"`` or ``"b"``, the
    loop changing it outside the k loop); otherwise it stages that operand as without a panel. Cheap: the tuner
    asks it before hoisting a variant that would be the same kernel as without."""
    return isinstance(kernel.op, MatMul) and panel in ("a", "b") and _outside_k(kernel, panel)


def splits_k(kernel: Kernel, panel: str | None, block: str | None) -> bool:
    """Whether ``hoist(kernel, panel, block)`` loads ``block``'s L1 tile a k block at a time (:func:`block_k`): a
    matmul without a panel, k of two tiles or more, and the block reused (the loop changing it outside the k
    loop); otherwise the k loop is left whole."""
    return (
        isinstance(kernel.op, MatMul)
        and block in ("a", "b")
        and panel in (None, "none")
        and kernel.axis("k").count >= 2
        and _outside_k(kernel, block)
    )


def _blocked(kernel: Kernel) -> bool:
    return any(a.name == BLOCK_AXIS for a in kernel.axes)


def ub_epilogue(op: MatMul) -> bool:
    """Whether a matmul's epilogue runs on the Vector unit, through UB (SiLU, GELU, a gate, a residual);
    otherwise FIXPIPE writes the accumulator to GM itself (with its cast and ReLU)."""
    return op.act in ("gelu", "silu") or op.residual or op.gate


def epilogue_rows(kernel: Kernel, op: MatMul) -> int | None:
    """Rows per part of a matmul's UB epilogue (SiLU, GELU, a residual), or None for the whole tile at once.

    The epilogue takes the accumulator tile through UB (``CUB``), the residual tile (``R``) and the result
    (``Y``), with the vector program's temporaries. An output tile whose epilogue does not fit UB even
    single-buffered goes through in parts: ``16·2^j`` rows (a part's first row stays aligned in L0C), the
    most whose parts fit double-buffered (at least 16). A tile that fits whole is left whole."""
    if not ub_epilogue(op):
        return None
    tm, tn = kernel.axis("m").tile, kernel.axis("n").tile
    acc = epilogue_acc_dtype(op.act, op.out_dtype)
    prog = matmul_epilogue(op.act, op.residual, acc, op.out_dtype, op.gate)
    staged = tn * (acc.itemsize + op.out_dtype.itemsize * (1 + op.residual + op.gate))  # bytes per row, one slot each
    temps = tn * sum(v.dtype.itemsize for v in prog.temps)
    ub = kernel.target.capacity[Space.UB]
    if tm * (staged + temps) <= ub:
        return None
    rows = 16  # a part starts 16·2^j rows into the accumulator: the L0C alignment of any tile width
    while rows * 2 < tm and rows * 2 * (2 * staged + temps) <= ub:
        rows *= 2
    return rows if rows < tm else None


# ----------------------------------------------------------------------------------- matmul


def _hoist_matmul(
    kernel: Kernel,
    op: MatMul,
    levels: list[_Level],
    panel: str | None,
    block: str | None = None,
    part: int | None = None,
) -> tuple[list[Buffer], dict]:
    dt = op.dtype
    bufs: list[Buffer] = []
    programs: dict = {}

    def buf(name: str, space: Space, dtype: DType, dims, prod: Pipe, cons: Pipe, operand: str, knobs, at: int, **kw):
        bufs.append(Buffer(name, space, dtype, dims, prod, cons, operand, levels[at].key, knobs=knobs, **kw))
        levels[at].alloc.append(name)

    inner = len(levels) - 1
    # a and b: GM → L1 (MTE2) at the level of their tile, L1 → L0 (MTE1) at the L0 step. Every load
    # of a level comes before its moves, so buffers loaded together are consumed together.
    moves: list[tuple[int, Move]] = []
    k_at = next((i for i, lv in enumerate(levels) if isinstance(lv.node, Loop) and lv.node.axis == "k"), None)
    for name, dims, l0, l1 in (("a", ("m", "k"), Space.L0A, "A"), ("b", ("k", "n"), Space.L0B, "B")):
        # b of a trans_b matmul sits in L1 as [n, k]; MTE1 transposes it into L0B.
        stored = op.tensor(name).dims
        if panel == name:  # kept (``keeps_panel``)
            k_loop = levels[k_at].node
            # The L1 block is the operand's whole k panel: its k tiles all stay live in L1, loaded where its
            # other tile index changes, and every loop between there and the k loop reuses them.
            p1 = _pos(levels, set(dims) - {"k"})
            kw = {"live": k_loop.count, "live_vars": (k_loop.var,)}
            buf(f"{l1}1", Space.L1, dt, stored, Pipe.MTE2, Pipe.MTE1, name, (*_knobs(stored), "panel"), p1, **kw)
            # (kind "panel": it loads the panel's tiles ahead of the tile steps that use them; not a tile loop)
            levels[p1].pre.append(Loop(k_loop.var, "k", k_loop.count, (Load(f"{l1}1", name),), kind="panel"))
        elif block == name:
            # The L1 tile spans a block of k tiles: loaded once per block, read by each k step of it.
            wide = tuple(BLOCK_AXIS if d == "k" else d for d in stored)
            p1 = _pos(levels, set(wide) - {"k"})
            buf(f"{l1}1", Space.L1, dt, wide, Pipe.MTE2, Pipe.MTE1, name, (*_knobs(stored), "block"), p1)
            levels[p1].pre.append(Load(f"{l1}1", name))
        else:
            p1 = _pos(levels, set(dims))
            buf(f"{l1}1", Space.L1, dt, stored, Pipe.MTE2, Pipe.MTE1, name, _knobs(stored), p1)
            levels[p1].pre.append(Load(f"{l1}1", name))
        d0 = tuple("k0" if d == "k" else d for d in dims)
        p0 = _pos(levels, {*dims, "k0"})
        buf(f"{l1}0", l0, dt, d0, Pipe.MTE1, Pipe.CUBE, name, _knobs(d0), p0)
        sub = levels[p0].key if levels[p0].axes == ("k0",) else None
        moves.append((p0, Move(f"{l1}0", f"{l1}1", Pipe.MTE1, sub)))
    for p0, mv in moves:
        levels[p0].pre.append(mv)

    # c: the accumulator lives in L0C from its first k step to its last (i32 for an int8 matmul, as mmad sums).
    k_level = next((i for i, lv in enumerate(levels) if {"k", BLOCK_AXIS} & set(lv.axes)), None)
    c_levels = [i for i, lv in enumerate(levels) if set(lv.axes) & {"m", "n"}]
    live_levels = [i for i in c_levels if k_level is not None and i > k_level]
    pc = k_level - 1 if live_levels else _pos(levels, {"m", "n"}, upto=k_level if k_level is not None else inner)
    live_loops = [levels[i].node for i in live_levels]
    live = math.prod(lp.count for lp in live_loops)
    acc = I32 if op.dtype is DType.I8 else F32
    buf(
        "C0", Space.L0C, acc, ("m", "n"), Pipe.CUBE, Pipe.FIX, "c", ("tile_m", "tile_n"), pc,
        live=live, live_vars=tuple(lp.var for lp in live_loops),
    )  # fmt: skip
    init: list[Stmt] = []
    if op.bias:
        # Bias as a rank-1 update, C0 = ones · biasᵀ (k = 1), the role of DaVinci's BiasTable.
        programs["ones"] = ones(dt)
        levels[0].pre += [
            Vec("ones", ("ONES_UB",), ()),
            Move("ONES_L1", "ONES_UB", Pipe.MTE3),
            Move("ONES0", "ONES_L1", Pipe.MTE1),
        ]
        for name, space, prod, cons in (
            ("ONES_UB", Space.UB, Pipe.V, Pipe.MTE3),
            ("ONES_L1", Space.L1, Pipe.MTE3, Pipe.MTE1),
            ("ONES0", Space.L0A, Pipe.MTE1, Pipe.CUBE),
        ):
            buf(name, space, dt, (None, "m"), prod, cons, "bias", ("tile_m",), 0)
        if "n" in {lp.axis for lp in live_loops}:
            init.append(_alloc_here(bufs, "BIAS0", levels[pc].key, dt))
            init.append(Load("BIAS0", "bias"))
        else:
            pb = _pos(levels, {"n"}, upto=pc)
            buf("BIAS0", Space.L0B, dt, (None, "n"), Pipe.MTE2, Pipe.CUBE, "bias", ("tile_n",), pb)
            levels[pb].pre.append(Load("BIAS0", "bias"))
        init.append(Mmad("C0", "ONES0", "BIAS0", init="always"))
    store: list[Stmt]
    if ub_epilogue(op):
        # The epilogue goes through UB: FIXPIPE → UB, a vector program (act, · gate, + residual), MTE3 → GM.
        acc = epilogue_acc_dtype(op.act, op.out_dtype)  # FIXPIPE casts on its way to UB
        epi = matmul_epilogue(op.act, op.residual, acc, op.out_dtype, op.gate)
        programs[epi.name] = epi
        res = (("G",) if op.gate else ()) + (("R",) if op.residual else ())
        store = [
            Alloc(("CUB", *res, "Y")),
            Move("CUB", "C0", Pipe.FIX),
            *(Load(name, name.lower()) for name in res),
            Vec(epi.name, ("Y",), ("CUB", *res)),
            Store("c", "Y", Pipe.MTE3),
        ]
        key = live_loops[-1].var if live_loops else levels[pc].key
        rows, own = "m", "c"
        if part is not None:
            # The tile goes through UB in parts of ``part`` rows, each double-buffered whatever c's depth:
            # FIXPIPE copies the next part while the Vector unit works on this one.
            store = [Loop(PART_VAR, PART_AXIS, -(-kernel.axis("m").tile // part), tuple(store), kind="part")]
            key, rows, own = PART_VAR, PART_AXIS, ""
        knobs = ("tile_m", "tile_n")
        bufs.append(Buffer("CUB", Space.UB, acc, (rows, "n"), Pipe.FIX, Pipe.V, own, key, knobs=knobs))
        for name in res:  # the gate and the residual: one tile per output tile (or part)
            bufs.append(
                Buffer(name, Space.UB, op.out_dtype, (rows, "n"), Pipe.MTE2, Pipe.V, name.lower(), key, knobs=knobs)
            )
        bufs.append(Buffer("Y", Space.UB, op.out_dtype, (rows, "n"), Pipe.V, Pipe.MTE3, own, key, knobs=knobs))
    else:
        to = op.out_dtype if op.out_dtype is not F32 else None
        store = [Store("c", "C0", Pipe.FIX, to=to, relu=op.act == "relu")]
    if live_loops:
        init_nest, store_nest = _nest(live_loops, tuple(init)), _nest(live_loops, tuple(store))
        levels[pc].pre += list(init_nest)
        levels[pc].post = list(store_nest) + levels[pc].post
    else:
        levels[pc].pre += init
    # The main product comes after the bias initialisation when both sit at the innermost level.
    levels[inner].pre.append(Mmad("C0", "A0", "B0", init="never" if op.bias else "first"))
    if not live_loops:
        if store and isinstance(store[0], Alloc):
            levels[pc].alloc += list(store[0].bufs)
            store = store[1:]
        levels[pc].post = store + levels[pc].post
    return bufs, programs


def _alloc_here(bufs: list[Buffer], name: str, key: str | None, dt: DType) -> Alloc:
    bufs.append(Buffer(name, Space.L0B, dt, (None, "n"), Pipe.MTE2, Pipe.CUBE, "bias", key, knobs=("tile_n",)))
    return Alloc((name,))


def _nest(loops: list[Loop], body: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """Re-iterate the live accumulator tiles (for their bias initialisation or their write-back)."""
    if not body:
        return ()
    for lp in reversed(loops):
        body = (Loop(lp.var, lp.axis, lp.count, body),)
    return body


def _knobs(dims: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple(f"tile_{d}" for d in dims if d)


# ----------------------------------------------------------------------------------- vector


#: GM tensor → the UB buffer that stages it (tile-program inputs use the same names).
_BUF = {"x": "X", "y": "Y", "z": "Z", "gamma": "G", "beta": "B"}


def _hoist_vector(kernel: Kernel, op: Op, levels: list[_Level]) -> tuple[list[Buffer], dict]:
    prog = tile_program(op)
    programs: dict = {op.name: prog}
    bufs: list[Buffer] = []
    inner = len(levels) - 1
    bound: dict[str, str] = {}  # program input value → buffer
    casts: dict[int, list[Vec]] = {}  # per level: gamma/beta casts, after every load of that level
    for t in op.inputs:
        name = _BUF.get(t.name, t.name.upper())
        dims = (t.dims[0], t.dims[1]) if len(t.dims) == 2 else (None, t.dims[0])
        p = _pos(levels, set(t.dims))
        bufs.append(Buffer(name, Space.UB, t.dtype, dims, Pipe.MTE2, Pipe.V, t.name, levels[p].key, knobs=_knobs(dims)))
        levels[p].alloc.append(name)
        levels[p].pre.append(Load(name, t.name))
        bound[name] = name
        if t.name in ("gamma", "beta") and f"{name}F" in prog.ins:
            # The row programs take gamma/beta in f32: cast once, where they are loaded.
            f32 = f"{name}F"
            if t.dtype is F32:
                bound[f32] = name
            else:
                programs[f"{t.name}_f32"] = cast_row(t.dtype)
                bufs.append(Buffer(f32, Space.UB, F32, dims, Pipe.V, Pipe.V, t.name, levels[p].key, knobs=_knobs(dims)))
                levels[p].alloc.append(f32)
                casts.setdefault(p, []).append(Vec(f"{t.name}_f32", (f32,), (name,)))
                bound[f32] = f32
    for p, vecs in casts.items():
        levels[p].pre += vecs
    onames = []
    for out in op.outputs:  # several for a fused kernel whose intermediates are also used elsewhere
        oname = _BUF.get(out.name, out.name.upper())
        odims = (out.dims[0], out.dims[1]) if len(out.dims) == 2 else (None, out.dims[0])
        key = levels[inner].key
        bufs.append(Buffer(oname, Space.UB, out.dtype, odims, Pipe.V, Pipe.MTE3, out.name, key, knobs=_knobs(odims)))
        levels[inner].alloc.append(oname)
        onames.append((oname, out.name))
    ins = tuple(bound[i] for i in prog.ins)
    levels[inner].pre.append(Vec(op.name, tuple(o for o, _ in onames), ins))
    levels[inner].pre += [Store(t, o, Pipe.MTE3) for o, t in onames]
    return bufs, programs
