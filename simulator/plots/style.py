"""The shared look of dsasim's pictures: sizes that read on a projector, one colour per kind of work.

Colours are fixed per kind, not assigned in order of appearance, so the same transfer or operation has the
same colour in every timeline and roofline a student compares: GM→L1 is always blue, ``mmad`` always red.
Figures are plain ``matplotlib.figure.Figure`` objects (no pyplot, no GUI backend): they render with Agg
when saved and show themselves in Jupyter through ``_repr_png_``.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from isa import DsasimError
from simulator.colors import (  # noqa: F401 -- the palette, re-exported for the figure modules
    CAUSE_COLORS,
    DRAINED_COLOR,
    MMAD_COLOR,
    PIPE_COLORS,
    ROUTE_COLORS,
    RUN_COLORS,
    VECTOR_COLORS,
    WAIT_COLOR,
    WAIT_EDGE,
    cause_color,
    instruction_kind,
    kind_color,
    kind_order,
)

#: Text sizes for a lecture hall; spines trimmed.
RC = {
    "font.size": 12,
    "axes.titlesize": 14,
    "axes.labelsize": 13,
    "legend.fontsize": 11,
    "xtick.labelsize": 11,
    "ytick.labelsize": 12,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 150,
}


class DsasimFigure(Figure):
    """A matplotlib Figure that shows itself in Jupyter as a PNG even without the inline backend."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()


@contextlib.contextmanager
def styled() -> Iterator[None]:
    """Draw inside this context so every text and line picks up :data:`RC`."""
    with matplotlib.rc_context(RC):
        yield


def new_figure(width: float, height: float) -> DsasimFigure:
    """A figure of ``width × height`` inches with constrained layout (call inside :func:`styled`)."""
    return DsasimFigure(figsize=(width, height), layout="constrained")


#: File types ``save_figure`` writes (matplotlib chooses the format by extension).
FORMATS = (".png", ".svg", ".pdf")


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (PNG, SVG or PDF by extension) and return the path."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise DsasimError(
            f"cannot write a picture to '{path}': unknown file type '{path.suffix or '(none)'}'",
            hint=f"use one of {', '.join(FORMATS)}",
        )
    if not path.parent.is_dir():
        raise DsasimError(f"cannot write '{path}': folder '{path.parent}' does not exist", hint="create it first")
    with styled():
        fig.savefig(path, bbox_inches="tight")
    return path
