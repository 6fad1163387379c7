"""Drawing a tile picture (:class:`dsasim.plots.tiles.TilesData`): every tensor as its grid of tiles;
in Jupyter, a step slider over the pictures (``widget``).

All tensors share one canvas. A matmul is drawn the way it is taught: ``a`` left of ``c``, ``b`` above it,
so a row of tiles of ``a`` lines up with the row of ``c`` it feeds and a column of ``b`` with its column
(``bias`` under ``c``). Other operators put their tensors side by side (one under the other when they are
wide), a one-dimensional tensor as a thin strip (a column when it runs along the rows, like ``rowsum``'s
output). One axis has one length wherever it
appears; an axis shorter than a third of the longest is drawn at a third, so a 64×4096 problem stays
readable (the tile boundaries inside it keep their true proportions).
"""

from __future__ import annotations

from typing import Any

from matplotlib.collections import PatchCollection
from matplotlib.patches import Patch, Rectangle

from dsasim.plots.tiles import STATES, TensorGrid, TilesData, check_view, compiled_of, tiles_data
from isa.records import record
from simulator.plots.style import DsasimFigure, new_figure, styled

#: (face colour, hatch) per state: loads blue as in the timeline, stores green, outputs on chip orange.
STATE_STYLE = {
    "load": ("#1f77b4", ""),
    "reuse": ("#c6dbef", "///"),
    "compute": ("#fd8d3c", ""),
    "pending": ("#fdd0a2", "///"),
    "store": ("#2ca02c", ""),
    "done": ("#e0e0e0", ""),
    "read": ("#6baed6", ""),
    "written": ("#74c476", ""),
    "shared": ("#cccccc", "///"),
}
#: Outline colour of the tiles a step uses.
ACTIVE = {"load": "#08306b", "reuse": "#2171b5", "compute": "#a63603", "store": "#00441b"}
#: One colour per core (matplotlib's tab20, strong shades first), repeating after 20 cores.
CORE_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#7f7f7f",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#c7c7c7",
)  # fmt: skip
#: Axes shorter than this share of the longest are drawn at this share.
MIN_SHARE = 1 / 3
_UNIT = 10.0  # canvas length of the longest axis
_STRIP = 0.45  # thickness of a one-dimensional tensor
_GAP = 1.6
#: Tile boundaries are drawn up to this many tiles along a dimension (beyond, only the outline).
MAX_GRID_LINES = 128
_MAX_LABELS = 600


@record
class Box:
    """Where a tensor sits on the canvas: ``rows``/``cols`` are the dimension indices drawn down/across
    (None: one element thick)."""

    x: float
    y: float
    w: float
    h: float
    rows: int | None
    cols: int | None


def style_of(state: str) -> tuple[str, str]:
    """Face colour and hatch of a state (``core3`` → the fourth core colour)."""
    if state.startswith("core"):
        return CORE_COLORS[int(state[4:]) % len(CORE_COLORS)], ""
    return STATE_STYLE[state]


def layout(data: TilesData) -> dict[str, Box]:
    """Each tensor's box on the canvas (units: the longest axis is 10 long; y grows downwards)."""
    axes = data.op.axes()
    longest = max(axes.values())
    length = {a: _UNIT * max(MIN_SHARE, e / longest) for a, e in axes.items()}
    first = next(iter(axes))

    def size(g: TensorGrid) -> tuple[float, float, int | None, int | None]:
        if len(g.dims) >= 2:
            return length[g.dims[1]], length[g.dims[0]], 0, 1
        if g.dims[0] == first:  # runs along the rows: a column
            return _STRIP, length[g.dims[0]], 0, None
        return length[g.dims[0]], _STRIP, None, 0

    sizes = {g.name: size(g) for g in data.grids}
    names = set(sizes)
    boxes: dict[str, Box] = {}
    if {"a", "b", "c"} <= names and data.op.unit == "cube":
        hc, wa = sizes["c"][1], sizes["a"][0]
        boxes["c"] = Box(0, 0, *sizes["c"])
        boxes["a"] = Box(-_GAP - wa, 0, *sizes["a"])
        boxes["b"] = Box(0, -_GAP - sizes["b"][1], *sizes["b"])
        y = hc + _GAP
        for g in data.grids:
            if g.name not in boxes:
                boxes[g.name] = Box(0, y, *sizes[g.name])
                y += sizes[g.name][1] + _GAP
        return boxes
    main = [sizes[g.name] for g in data.grids if len(g.dims) >= 2]
    if main and main[0][0] > 1.5 * main[0][1]:  # wide tensors: one under the other
        y, last = 0.0, None
        for g in data.grids:
            w, h, r, c = sizes[g.name]
            if c is None and last is not None:  # a column (along the rows) goes right of its tensor
                boxes[g.name] = Box(last.x + last.w + _GAP, last.y, w, h, r, c)
                continue
            boxes[g.name] = last = Box(0, y, w, h, r, c)
            y += h + _GAP
        return boxes
    x = 0.0
    for g in data.grids:
        w, h, r, c = sizes[g.name]
        boxes[g.name] = Box(x, 0, w, h, r, c)
        x += w + _GAP
    return boxes


def _tile_rect(g: TensorGrid, box: Box, index: tuple[int, ...]) -> tuple[float, float, float, float]:
    """(x, y, w, h) of one tile on the canvas."""

    def span(dim: int | None, length: float) -> tuple[float, float]:
        if dim is None:
            return 0.0, length
        e = g.edges[dim]
        scale = length / e[-1]
        return e[index[dim]] * scale, (e[index[dim] + 1] - e[index[dim]]) * scale

    x, w = span(box.cols, box.w)
    y, h = span(box.rows, box.h)
    return box.x + x, box.y + y, w, h


def draw_tiles(data: TilesData, *, title: str | None = None) -> DsasimFigure:
    """The picture of ``data``: tensors as tile grids, marked tiles coloured by state, a legend below."""
    boxes = layout(data)
    x0 = min(b.x for b in boxes.values())
    x1 = max(b.x + b.w for b in boxes.values())
    y0 = min(b.y for b in boxes.values()) - (1.4 if data.notes else 0.9)  # room for the captions
    y1 = max(b.y + b.h for b in boxes.values()) + 0.2
    width, height = x1 - x0, y1 - y0
    scale = min(11.0 / width, 7.0 / height)  # inches per canvas unit
    states = [*STATES, *sorted({m.state for m in data.marks if m.state.startswith("core")}, key=_core)]
    used = {m.state for m in data.marks}
    with styled():
        fig = new_figure(max(6.0, width * scale + 0.4), height * scale + 1.9)
        ax = fig.subplots()
        by_state: dict[str, list[Rectangle]] = {}
        grids = {g.name: g for g in data.grids}
        for m in data.marks:
            by_state.setdefault(m.state, []).append(
                Rectangle(*_split(_tile_rect(grids[m.tensor], boxes[m.tensor], m.index)))
            )
        for state, rects in by_state.items():
            fc, hatch = style_of(state)
            ax.add_collection(
                PatchCollection(rects, facecolor=fc, edgecolor="#555555", linewidth=0, hatch=hatch or None)
            )
        labels = [m for m in data.marks if m.label]
        for g in data.grids:
            _draw_grid(ax, g, boxes[g.name], data.notes.get(g.name, ""))
        for m in data.marks:  # the step's own tiles get an outline, so a thin tail tile still shows
            if m.state in ACTIVE:
                xy, w, h = _split(_tile_rect(grids[m.tensor], boxes[m.tensor], m.index))
                ax.add_patch(Rectangle(xy, w, h, fill=False, edgecolor=ACTIVE[m.state], lw=2.5, zorder=4))
        labelled = set()
        if len(labels) <= _MAX_LABELS:
            for m in labels:
                x, y, w, h = _tile_rect(grids[m.tensor], boxes[m.tensor], m.index)
                if w * scale >= 0.1 + 0.075 * len(m.label) and h * scale >= 0.2:
                    labelled.add(m.state)
                    dark = m.state in ("load", "store") or (m.state.startswith("core") and int(m.state[4:]) % 20 < 10)
                    ax.text(x + w / 2, y + h / 2, m.label, ha="center", va="center", fontsize=9,
                            color="white" if dark else "#222222")  # fmt: skip
        ax.set_xlim(x0 - 0.1, x1 + 0.1)
        ax.set_ylim(y1, y0)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title((title or data.title) + "\n" + data.subtitle, loc="left", fontsize=13)
        handles = [Patch(facecolor=style_of(s)[0], hatch=style_of(s)[1], edgecolor="#555555", lw=0.5,
                         label=_legend_label(s, s in labelled)) for s in states if s in used]  # fmt: skip
        ntiles = sum(_count(g) for g in data.grids)
        if len(data.marks) < ntiles and data.view != "cores":
            handles.append(Patch(facecolor="white", edgecolor="#555555", lw=0.5, label="not used (yet)"))
        if handles:
            fig.legend(handles=handles, loc="outside lower center", ncols=min(3, len(handles)), frameon=False)
    return fig


def _split(r: tuple[float, float, float, float]) -> tuple[tuple[float, float], float, float]:
    return (r[0], r[1]), r[2], r[3]


def _core(state: str) -> int:
    return int(state[4:])


def _count(g: TensorGrid) -> int:
    n = 1
    for c in g.counts:
        n *= c
    return n


def _legend_label(state: str, labelled: bool) -> str:
    """The legend text of a state; what a tile's label means only when some tile shows one."""
    if state.startswith("core"):
        return f"core {state[4:]}"
    return STATES[state] if labelled else STATES[state].split(" (")[0]


def _draw_grid(ax, g: TensorGrid, box: Box, note: str = "") -> None:
    """The tensor's outline, its tile boundaries (when not too dense) and its caption."""
    ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, fill=False, edgecolor="#222222", lw=1.2, zorder=3))
    segments = []
    if box.cols is not None and g.counts[box.cols] <= MAX_GRID_LINES:
        e = g.edges[box.cols]
        segments += [((box.x + v * box.w / e[-1],) * 2, (box.y, box.y + box.h)) for v in e[1:-1]]
    if box.rows is not None and g.counts[box.rows] <= MAX_GRID_LINES:
        e = g.edges[box.rows]
        segments += [((box.x, box.x + box.w), (box.y + v * box.h / e[-1],) * 2) for v in e[1:-1]]
    for xs, ys in segments:
        ax.plot(xs, ys, color="#888888", lw=0.6, zorder=2)
    role = "out" if g.output else "in"
    caption = f"{g.name}[{','.join(g.dims)}]  {g.dtype} {'×'.join(map(str, g.shape))}  ({role})"
    ax.text(box.x, box.y - 0.15, caption + (f"\n{note}" if note else ""), ha="left", va="bottom", fontsize=11)


def widget(kernel: object, core: int = 0) -> Any:
    """``simulator.plots.tiles_widget``: the slider, or the picture of step 0 without ipywidgets."""
    import html
    import warnings

    compiled = compiled_of(kernel)
    check_view(compiled.plan, None, core)
    try:
        import ipywidgets as w
    except ImportError:
        warnings.warn(
            "ipywidgets is not installed, so there is no step slider: showing step 0. "
            "Install it (pip install ipywidgets) or call dsasim.plots.tiles(kernel, step=N).",
            stacklevel=2,
        )
        return draw_tiles(tiles_data(compiled, 0, core))
    plan = compiled.plan
    slider = w.IntSlider(value=0, min=0, max=plan.nsteps(core) - 1, description="step", continuous_update=False)
    picker = w.Dropdown(options=list(range(plan.ncores)), value=core, description="core")
    image = w.Image(format="png")
    caption = w.HTML()
    pngs: dict[tuple[int, int], tuple[bytes, str]] = {}

    def show(_change: object = None) -> None:
        key = (picker.value, min(slider.value, plan.nsteps(picker.value) - 1))
        if key not in pngs:
            data = tiles_data(compiled, key[1], key[0])
            pngs[key] = (draw_tiles(data)._repr_png_(), data.text())
        image.value, text = pngs[key]
        caption.value = f"<pre style='font-size:11px'>{html.escape(text)}</pre>"

    def new_core(_change: object) -> None:
        slider.max = plan.nsteps(picker.value) - 1
        show()

    slider.observe(show, names="value")
    picker.observe(new_core, names="value")
    show()
    controls = [slider, picker] if plan.ncores > 1 else [slider]
    return w.VBox([w.HBox(controls), image, caption])


# ------------------------------------------------------------------------------------- pictures


def tiles(kernel: object, step: int | None = None, core: int | None = None, *, title: str | None = None):
    """Draw :func:`tiles_data` (a matplotlib Figure; it shows itself in a notebook)."""
    return draw_tiles(tiles_data(kernel, step, core), title=title)


def tiles_widget(kernel: object, core: int = 0) -> Any:
    """In Jupyter: a step slider (and a core picker on multi-core kernels) over the step pictures.

    Needs ``ipywidgets`` (``pip install ipywidgets``, part of dsasim's ``labs`` extra). Without it, this
    warns and returns the picture of step 0 instead, so a notebook still runs.
    """
    return widget(kernel, core)
