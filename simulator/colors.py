"""One colour per kind of work, with no matplotlib import (the HTML report and the Perfetto trace use them too).

Colours are fixed per kind, not assigned in order of appearance, so the same transfer or operation has the
same colour in every timeline and roofline a student compares: GM→L1 is always blue, ``mmad`` always red.
"""

from __future__ import annotations

from isa import Copy, Fixpipe, Instruction, Mmad, SetFlag, WaitFlag
from isa.timing import route_label

#: DMA and FIXPIPE paths by route label: loads blue, L1→L0 orange, FIXPIPE purple, stores green.
ROUTE_COLORS = {
    "GM→L1": "#1f77b4",
    "GM→UB": "#4a98d3",
    "GM→L0A": "#08519c",
    "GM→L0B": "#6baed6",
    "L1→L0A": "#ff7f0e",
    "L1→L0B": "#fdae6b",
    "L0C→GM": "#9467bd",
    "L0C→UB": "#b39ddb",
    "L0C→L1": "#6a51a3",
    "UB→GM": "#2ca02c",
    "UB→L1": "#98df8a",
}
MMAD_COLOR = "#d62728"
#: One colour per pipe (its busy time in utilisation bars), matching the kinds of work it does.
PIPE_COLORS = {
    "s": "#7f7f7f",
    "mte2": "#1f77b4",
    "mte1": "#ff7f0e",
    "cube": "#d62728",
    "fix": "#9467bd",
    "v": "#e377c2",
    "mte3": "#2ca02c",
}
#: Vector operations: fixed colours per mnemonic, from a palette distinct from the paths above.
_VECTOR_PALETTE = ("#e377c2", "#bcbd22", "#17becf", "#8c564b", "#f7b6d2", "#dbdb8d", "#9edae5", "#c49c94")
_VECTOR_OPS = ("add", "sub", "mul", "div", "max", "min", "abs", "exp", "ln", "sqrt", "rsqrt", "recip", "relu", "copy")
_VECTOR_OPS += ("adds", "muls", "maxs", "mins", "dup", "cast", "rowsum", "rowmax", "rowbcast")
_VECTOR_OPS += ("tril", "triu", "transpose")
_VECTOR_OPS += ("cmp.lt", "cmp.le", "cmp.gt", "cmp.ge", "cmp.eq", "cmp.ne", "cmps.lt", "cmps.le", "cmps.gt")
_VECTOR_OPS += ("cmps.ge", "cmps.eq", "cmps.ne", "sel", "sels", "iota")
VECTOR_COLORS = {f"v.{op}": _VECTOR_PALETTE[i % len(_VECTOR_PALETTE)] for i, op in enumerate(_VECTOR_OPS)}
WAIT_COLOR = "#e6e6e6"
WAIT_EDGE = "#8c8c8c"
#: Idle causes (the notebook's utilisation bars).
CAUSE_COLORS = {"issue": "#fdd0a2", "flag": "#c6dbef", "bandwidth": "#fcbba1", "queue": "#dadaeb", "barrier": "#bcbddc"}
CAUSE_COLORS["xflag"] = CAUSE_COLORS["flag"]  # a wait for another core's flag
DRAINED_COLOR = "#f4f4f4"
#: One colour per run in plots that compare runs (ColorBrewer Dark2).
RUN_COLORS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")


def instruction_kind(ins: Instruction) -> str:
    """What an instruction does, for colours and trace categories: ``GM→L1``, ``mmad``, ``v.add``, ``wait_flag``."""
    if isinstance(ins, Copy | Fixpipe):
        return route_label(ins.src.space, ins.dst.space)
    if isinstance(ins, Mmad):
        return "mmad"
    if isinstance(ins, WaitFlag):
        return "wait_flag"
    if isinstance(ins, SetFlag):
        return "set_flag"
    return ins.mnemonic


def kind_color(kind: str) -> str:
    """The fixed colour of an instruction kind (grey for anything unknown)."""
    if kind in ROUTE_COLORS:
        return ROUTE_COLORS[kind]
    if kind == "mmad":
        return MMAD_COLOR
    if kind == "wait_flag":
        return WAIT_COLOR
    return VECTOR_COLORS.get(kind, "#7f7f7f")


def kind_order(kind: str) -> tuple[int, str]:
    """Legend order: loads, on-chip moves, mmad, FIXPIPE, vector, stores, waits."""
    routes = list(ROUTE_COLORS)
    if kind in routes:
        rank = {"UB→GM": 6, "UB→L1": 6}.get(kind, 3 if kind.startswith("L0C") else 1 if kind.startswith("L1") else 0)
        return (rank, f"{routes.index(kind):02d}")
    if kind == "mmad":
        return (2, kind)
    if kind.startswith("v."):
        return (4, kind)
    return (9, kind)


def cause_color(cause: str) -> str:
    """Colour of an idle cause: ``flag:mte2`` → the flag colour."""
    if cause == "drained":
        return DRAINED_COLOR
    return CAUSE_COLORS.get(cause.partition(":")[0], "#dddddd")
