"""Print a kernel as readable pseudo-code: a header, its buffers and events, then the loop nest.

The format is for people (``dsasim compile --show-passes``, docs, golden tests), not for parsing.
"""

from __future__ import annotations

from compiler.ir import Alloc, Compute, Flag, Kernel, Load, Loop, Mmad, Move, Parallel, Stmt, Store, Vec
from isa import DType

INDENT = "  "
COMMENT_COL = 44


def format_kernel(kernel: Kernel) -> str:
    op = kernel.op
    lines = [f"kernel {op.name} {op.shape_text()} on {kernel.target.name}: {op.describe()}"]
    lines.append("  " + " · ".join(f"{t} {'out' if t.output else 'in'}" for t in op.tensors()))
    if kernel.stage not in ("spec",):
        lines.append("  schedule: " + kernel.schedule.text())
    if kernel.buffers:
        lines.append("buffers:")
        width = max(len(b.name) for b in kernel.buffers) + 2
        lines += [f"  {b.describe(width)}".rstrip() for b in kernel.buffers]
    if kernel.groups:
        lines.append("events (ids per pipe pair):")
        width = max(len(g.name) for g in kernel.groups) + 2
        for g in kernel.groups:
            ready = f"{g.producer.value}→{g.consumer.value} ready {','.join(str(i) for i in g.ready_ids)}"
            free = f"{g.consumer.value}→{g.producer.value} free {','.join(str(i) for i in g.free_ids)}"
            lines.append(f"  {g.name:<{width}}{ready:<22}{free:<22}reuse after {g.gap}")
    lines.append("")
    lines += _body(kernel, kernel.body, 0)
    progs = [(n, p) for n, p in kernel.programs.items()]
    if progs and kernel.stage != "spec":
        lines.append("")
        lines.append("tile programs (vector unit, per tile):")
        for name, p in progs:
            sig = f"{', '.join(p.outs)} = {name}({', '.join(p.ins)})"
            lines.append(f"  {sig}:")
            lines += [f"    {o.text()}" for o in p.ops]
    return "\n".join(lines) + "\n"


def _with_comment(text: str, comment: str) -> str:
    if not comment:
        return text
    return f"{text:<{COMMENT_COL}}# {comment}" if len(text) < COMMENT_COL else f"{text}  # {comment}"


def _body(kernel: Kernel, body: tuple[Stmt, ...], depth: int) -> list[str]:
    pad = INDENT * depth
    out: list[str] = []
    for s in body:
        if isinstance(s, Loop):
            out.append(_with_comment(f"{pad}for {s.var} in 0..{s.count}:", _loop_comment(kernel, s)))
            out += _body(kernel, s.body, depth + 1)
        elif isinstance(s, Parallel):
            total = 1
            for c in s.counts:
                total *= c
            shares = sorted({len(a) for a in kernel.plan.assignment}) if kernel.plan else []
            per = "-".join(str(x) for x in (shares[0], shares[-1]) if x) if shares else "?"
            per = str(shares[0]) if len(shares) == 1 else per
            head = f"{pad}parallel ({', '.join(s.vars)}) over {len(kernel.plan.assignment)} cores:"
            out.append(_with_comment(head, f"{total} {'×'.join(s.axes)} tiles, {per} per core"))
            out += _body(kernel, s.body, depth + 1)
        else:
            out.append(pad + _stmt(kernel, s))
    return out


def _loop_comment(kernel: Kernel, s: Loop) -> str:
    if s.kind == "elem":
        return ""
    if s.kind == "sub":
        k0 = kernel.axis("k0")
        return f"k0: L0 steps of {k0.tile} in each k tile"
    return kernel.axis(s.axis).describe()


def _index(kernel: Kernel, tensor: str) -> str:
    t = kernel.op.tensor(tensor)
    parts = [f"{d}o" if kernel.axis(d).count > 1 else ":" for d in t.dims]
    return f"{tensor}[{','.join(parts)}]"


def _stmt(kernel: Kernel, s: Stmt) -> str:
    if isinstance(s, Compute):
        return s.text
    if isinstance(s, Alloc):
        return "alloc " + ", ".join(s.bufs)
    if isinstance(s, Load):
        ahead = f"  ahead {s.ahead}" if s.ahead else ""
        return f"{s.buf} ← {s.pipe.value} {_index(kernel, s.tensor)}{ahead}"
    if isinstance(s, Move):
        dst = kernel.buffer(s.buf)
        part = ""
        if s.sub:
            part = f"[:,{s.sub}]" if dst.dims[1] == "k0" else f"[{s.sub},:]"
        ahead = f"  ahead {s.ahead}" if s.ahead else ""
        return f"{s.buf} ← {s.pipe.value} {s.src}{part}{ahead}"
    if isinstance(s, Mmad):
        if s.init == "always":
            return _with_comment(f"{s.acc} = cube {s.a} @ {s.b}", "bias: rank-1 update, k=1")
        if s.init == "first":
            return _with_comment(f"{s.acc} += cube {s.a} @ {s.b}", "= at the first k step")
        return f"{s.acc} += cube {s.a} @ {s.b}"
    if isinstance(s, Vec):
        return f"{', '.join(s.outs)} = v.{s.prog}({', '.join(s.ins)})"
    if isinstance(s, Store):
        extras = []
        if s.to is not None:
            extras.append(f"{DType.F32}→{s.to}")
        if s.relu:
            extras.append("relu")
        tail = f" ({', '.join(extras)})" if extras else ""
        return f"{_index(kernel, s.tensor)} ← {s.pipe.value} {s.buf}{tail}"
    if isinstance(s, Flag):
        verb = "set " if s.set else "wait"
        return f"{verb} {s.src.value}→{s.dst.value} {s.group}.{s.role}"
    return repr(s)
