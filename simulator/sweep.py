"""Sweeps: one operator over every combination of schedule knobs (or shapes, or chips), side by side.

Seeded by Triton's ``do_bench``/``perf_report``: name the knobs to vary and their values, and every
combination is compiled and simulated (``simulator.api.compile_and_run``), then tabulated and plotted::

    from simulator.sweep import sweep

    r = sweep("matmul", "256x256x256", vary={"tile_m": [32, 64, 128], "buffers": [1, 2]})
    print(r.table())           # cycles, µs, TFLOP/s (2·M·N·K / time), GB/s of GM traffic, % of the roofline bound
    r.plot("tflops")           # a matplotlib Figure: one line per value of the other knobs
    r.to_json()                # everything, for scripts
    r.best().params            # {"tile_m": 64, "buffers": 2}

Knobs (``vary`` keys; knobs not varied come from ``schedule``, then from the compiler's defaults):

- ``tile_<axis>`` — ``tile_m``, ``tile_n``, ``tile_k``, ``tile_k0`` (matmul), ``tile_r`` (vector operators);
- ``buffers`` (every operand) and ``buffers_<operand>`` (``buffers_a``, ``buffers_c``, ``buffers_x``...);
- ``prefetch``, ``cores``, ``order`` (``"mkn"`` or ``("m", "k", "n")``), ``parallel`` (``"m"``, ``"mn"``);
- ``shape`` (``"256x256x256"``), ``chip`` (a preset name) and ``dtype`` (``"bf16"``).

A combination that cannot be compiled or run (it does not fit, a knob is out of range) becomes a row that
carries its error instead of a result; a key or value that cannot mean anything (``tile_q``,
``tile_m=abc``) is refused before anything runs. Runs are timing-only unless ``check=True``: the cycles
are the same (the simulator guarantees it), and a sweep is about time.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compiler import Op, Schedule, make_op
from compiler.schedule import operands, tile_knobs
from isa import DsasimError, DType
from simulator.config import Chip, load_chip

if TYPE_CHECKING:
    from simulator.plots.style import DsasimFigure

#: What a sweep can plot and rank by: name → (column title, higher is better).
METRICS = {
    "cycles": ("cycles", False),
    "tflops": ("TFLOP/s", True),
    "gbps": ("GB/s", True),
    "roofline": ("roofline", True),
}
#: A sweep with more combinations than this is refused unless ``max_runs`` is raised.
MAX_RUNS = 1000
_INT_KNOBS = ("prefetch", "cores", "buffers")
_AXES_KNOBS = ("order", "parallel")
_OTHER_KNOBS = ("shape", "chip", "dtype")


class SweepError(DsasimError):
    """A sweep that cannot be set up: an unknown knob, a value that cannot be read, too many runs."""


# ------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class SweepRow:
    """One combination: its knob values and what its run measured, or the error that stopped it."""

    params: dict[str, Any]
    op: Op | None = None
    chip: Chip | None = None
    schedule: Schedule | None = None  # as resolved by the compiler (defaults filled in)
    cycles: int | None = None
    seconds: float | None = None  # simulated time at the chip's clock
    gm_bytes: int | None = None
    roofline: float | None = None  # the run's roofline bound / its cycles (0..1)
    bound: str | None = None  # the resource that sets the bound: "cube", "GM", "gm_l1", ...
    check: bool | None = None  # outputs equal numpy's (None: not checked)
    error: str | None = None
    hint: str | None = None
    wall: float = 0.0  # seconds of real time the compile and run took

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def flops(self) -> int | None:
        """Useful arithmetic of the operator (2·M·N·K for a matmul; elements for vector operators)."""
        return self.op.flops if self.op is not None and self.ok else None

    @property
    def tflops(self) -> float | None:
        """Achieved TFLOP/s: useful FLOPs / simulated time."""
        return self.flops / self.seconds / 1e12 if self.ok and self.seconds else None

    @property
    def gbps(self) -> float | None:
        """Achieved GB/s of GM traffic (bytes read and written) / simulated time."""
        return self.gm_bytes / self.seconds / 1e9 if self.ok and self.seconds else None

    def metric(self, name: str) -> float | None:
        if name == "cycles":
            return self.cycles
        if name == "roofline":
            return None if self.roofline is None else 100 * self.roofline
        return getattr(self, name)

    def to_json(self) -> dict:
        return {
            "params": {k: json_value(v) for k, v in self.params.items()},
            "ok": self.ok,
            "cycles": self.cycles,
            "seconds": self.seconds,
            "flops": self.flops,
            "gm_bytes": self.gm_bytes,
            "tflops": self.tflops,
            "gbps": self.gbps,
            "roofline": self.roofline,
            "bound": self.bound,
            "check": self.check,
            "schedule": self.schedule.to_json() if self.schedule is not None else None,
            "error": self.error,
            "hint": self.hint,
        }


@dataclass
class SweepResult:
    """Every row of a sweep, in the order the combinations ran (the first knob varies slowest)."""

    op: str
    shape: str | None
    chip: str
    vary: dict[str, list[Any]]
    rows: list[SweepRow]
    timing_only: bool = True
    wall: float = 0.0
    unit: str = "cube"  # "cube" operators are judged in TFLOP/s, "vector" ones in GB/s
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def default_metric(self) -> str:
        return "tflops" if self.unit == "cube" else "gbps"

    def best(self, metric: str | None = None) -> SweepRow | None:
        """The row with the best ``metric`` (fewest cycles, most TFLOP/s...); None if every row failed."""
        metric = check_metric(metric or self.default_metric)
        ok = [r for r in self.rows if r.ok and r.metric(metric) is not None]
        if not ok:
            return None
        higher = METRICS[metric][1]
        return max(ok, key=lambda r: r.metric(metric) if higher else -r.metric(metric))

    def table(self, metric: str | None = None) -> str:
        """The table ``dsasim sweep`` prints."""
        from simulator.sweep_report import format_table

        return format_table(self, check_metric(metric or self.default_metric))

    def plot(self, metric: str | None = None, x: str | None = None) -> DsasimFigure:
        """``metric`` against knob ``x`` (default: the first varied), one line per value of the other knobs."""
        from simulator.plots.sweep import sweep_plot

        return sweep_plot(self, check_metric(metric or self.default_metric), x)

    def to_json(self, metric: str | None = None) -> dict:
        from simulator.sweep_report import fixed_knobs

        metric = check_metric(metric or self.default_metric)
        best = self.best(metric)
        return {
            "op": self.op,
            "shape": self.shape,
            "chip": self.chip,
            "timing_only": self.timing_only,
            "metric": metric,
            "vary": {k: [json_value(v) for v in vs] for k, vs in self.vary.items()},
            "fixed": fixed_knobs(self),
            "rows": [r.to_json() for r in self.rows],
            "best": next((i for i, r in enumerate(self.rows) if r is best), None),
            "wall_seconds": self.wall,
        }

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.table())}</pre>"


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise SweepError(f"unknown metric {metric!r}", hint=f"use one of {', '.join(METRICS)}")
    return metric


def json_value(v: Any) -> Any:
    """Knob values as JSON: axis tuples as ``"m,k,n"``, data types by name."""
    if isinstance(v, tuple) and all(isinstance(x, str) for x in v):
        return ",".join(v)
    if isinstance(v, tuple):
        return "x".join(map(str, v))
    if isinstance(v, DType):
        return v.value
    return v


# ---------------------------------------------------------------------------------- knob values


def known_knobs(op: Op) -> list[str]:
    """Every ``vary`` key ``op`` accepts."""
    tiles = [f"tile_{k}" for k in tile_knobs(op) if k not in op.whole_axes]
    return [*tiles, "buffers", *(f"buffers_{o}" for o in operands(op)), *_INT_KNOBS[:2], *_AXES_KNOBS, *_OTHER_KNOBS]


def parse_value(key: str, value: Any) -> Any:
    """One value of knob ``key`` from Python or from the command line (text)."""
    if key == "shape":  # as text: the operator checks it has the right number of sizes
        return "x".join(map(str, value)) if isinstance(value, tuple | list) else str(value).strip()
    if key == "chip":
        return value if isinstance(value, str) else getattr(value, "name", value)
    if key == "dtype":
        try:
            return value if isinstance(value, DType) else DType(str(value))
        except ValueError:
            names = ", ".join(d.value for d in DType)
            raise SweepError(f"dtype={value!r} is not a data type", hint=f"data types: {names}") from None
    if key in _AXES_KNOBS:
        if isinstance(value, tuple | list):
            return tuple(value)
        text = str(value).strip().replace(":", ",").replace("-", ",")
        return tuple(p.strip() for p in text.split(",") if p.strip()) if "," in text else tuple(text)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise SweepError(f"{key}={value!r} must be a whole number", hint=f"e.g. {key}=2")
    try:
        return int(value)
    except ValueError:
        raise SweepError(f"{key}={value!r} must be a whole number", hint=f"e.g. {key}=64") from None


def parse_vary(items: Sequence[str]) -> dict[str, list[str]]:
    """``["tile_m=32,64", "buffers=1,2"]`` (the CLI's ``--vary``) → ``{"tile_m": ["32", "64"], ...}``."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip()
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not eq or not key or not vals:
            raise SweepError(f"cannot read --vary {item!r}", hint="write KNOB=V1,V2,..., e.g. --vary tile_m=32,64,128")
        if key in out:
            raise SweepError(f"--vary {key} is given twice", hint=f"list every value once: --vary {key}=V1,V2,...")
        out[key] = vals
    return out


# ------------------------------------------------------------------------------------ the sweep


def sweep(
    op: str | Op,
    shape: str | tuple[int, ...] | None = None,
    *,
    vary: Mapping[str, Sequence[Any]] | None = None,
    schedule: Schedule | None = None,
    chip: str | Chip = "edu",
    check: bool = False,
    seed: int = 0,
    progress: bool | None = None,
    max_runs: int = MAX_RUNS,
    **op_options: Any,
) -> SweepResult:
    """Compile and run ``op`` for every combination of the ``vary`` knob values.

    ``op`` is an operator name (``"matmul"``, ``"softmax"``...; ``op_options`` go to ``compiler.make_op``:
    ``dtype``, ``bias``, ``act``, ``broadcast``, ``eps``, ``out_dtype``) with its ``shape``, or an ``Op``.
    Knobs not varied come from ``schedule`` (default: the compiler chooses). ``check=True`` runs with data
    and compares every output with numpy (slower); otherwise runs are timing-only, with the same cycles.
    ``progress`` draws a progress bar on stderr (default: when stderr is a terminal).
    """
    base = schedule or Schedule()
    values = {k: [parse_value(k, v) for v in vs] for k, vs in (vary or {}).items()}
    sample = _sample_op(op, shape, values, op_options)
    known = known_knobs(sample)
    for key, vs in values.items():
        if key not in known:
            import difflib

            close = difflib.get_close_matches(key, known, n=1)
            raise SweepError(
                f"{sample.name} has no knob {key!r} to vary",
                hint=f"did you mean {close[0]}?" if close else f"knobs: {', '.join(known)}",
            )
        if not vs:
            raise SweepError(f"no values to sweep for {key}", hint=f"give at least one: {key}=V1,V2,...")
    for name in values.get("chip", []):
        load_chip(name)  # an unknown preset is a typo, not a row
    if not isinstance(op, Op):  # so is a shape or type the operator cannot have
        for s, d in itertools.product(values.get("shape", [shape]), values.get("dtype", [None])):
            _make(op, s, d, op_options)
    total = 1
    for vs in values.values():
        total *= len(vs)
    if total > max_runs:
        raise SweepError(
            f"this sweep has {total:,} combinations, more than {max_runs:,}",
            hint="sweep fewer values per knob, or raise max_runs (--max-runs)",
        )
    chip_name = chip if isinstance(chip, str) else chip.name
    bar = Progress(total, sys.stderr.isatty() if progress is None else progress)
    rows: list[SweepRow] = []
    start = time.perf_counter()
    try:
        for i, combo in enumerate(itertools.product(*values.values())):
            params = dict(zip(values, combo))
            bar.update(i, ", ".join(f"{k}={json_value(v)}" for k, v in params.items()))
            rows.append(_run_one(op, shape, params, base, chip, check, seed, op_options))
    finally:
        bar.close()
    shape_text = sample.shape_text() if "shape" not in values else None
    return SweepResult(
        sample.name, shape_text, chip_name, values, rows, not check, time.perf_counter() - start, sample.unit
    )


def _sample_op(op: str | Op, shape: Any, values: dict[str, list[Any]], options: dict[str, Any]) -> Op:
    """The operator with the first shape and dtype swept (to know its axes and operands)."""
    if isinstance(op, Op):
        if shape is not None or "shape" in values or "dtype" in values or options:
            raise SweepError(
                f"{op.name}: an Op already has its shape and types",
                hint="pass the operator's name (e.g. sweep('matmul', '256x256x256', ...)) to sweep shapes or types",
            )
        return op
    first = values.get("shape", [shape])[0]
    if first is None:
        raise SweepError(f"{op}: no shape to run", hint="give a shape (--shape), or vary it: shape=256x256x256,...")
    return _make(op, first, values.get("dtype", [None])[0], options)


def _make(name: str, shape: Any, dtype: DType | None, options: dict[str, Any]) -> Op:
    opts = dict(options)
    if dtype is not None:
        opts["dtype"] = dtype
    return make_op(name, shape, **opts)


def apply(base: Schedule, params: Mapping[str, Any], op: Op) -> Schedule:
    """``base`` with the knobs of one combination set."""
    tile = dict(base.tile)
    buffers = dict(base.buffers)
    if "buffers" in params:
        buffers = dict.fromkeys(operands(op), params["buffers"])
    for key, v in params.items():
        if key.startswith("tile_"):
            tile[key[5:]] = v
        elif key.startswith("buffers_"):
            buffers[key[8:]] = v
    return Schedule(
        tile=tile,
        order=params.get("order", base.order),
        buffers=buffers,
        prefetch=params.get("prefetch", base.prefetch),
        cores=params.get("cores", base.cores),
        parallel=params.get("parallel", base.parallel),
        manual_sync=base.manual_sync,
    )


def _run_one(
    op: str | Op,
    shape: Any,
    params: dict[str, Any],
    base: Schedule,
    chip: str | Chip,
    check: bool,
    seed: int,
    options: dict[str, Any],
) -> SweepRow:
    from simulator.api import compile_and_run

    t0 = time.perf_counter()
    the_op: Op | None = None
    try:
        the_op = op if isinstance(op, Op) else _make(op, params.get("shape", shape), params.get("dtype"), options)
        r = compile_and_run(
            the_op, apply(base, params, the_op), params.get("chip", chip), timing_only=not check, check=check, seed=seed
        )
    except DsasimError as e:
        return SweepRow(params, the_op, error=e.message, hint=e.hint, wall=time.perf_counter() - t0)
    st = r.run.stats
    return SweepRow(
        params,
        the_op,
        r.run.chip,
        r.compiled.schedule,
        st.cycles,
        r.run.seconds,
        st.gm_bytes,
        st.roofline.fraction,
        st.roofline.bound_by,
        r.check.passed if r.check is not None else None,
        wall=time.perf_counter() - t0,
    )


# ------------------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress bar on stderr: ``[#####·····] 5/10  tile_m=64  1.2 s, ~1.2 s left``."""

    def __init__(self, total: int, enabled: bool, stream: Any = None, clock: Callable[[], float] = time.perf_counter):
        self.total, self.enabled = total, enabled and total > 1
        self.stream = stream or sys.stderr
        self.clock = clock
        self.start = clock()

    def update(self, done: int, label: str) -> None:
        """``done`` combinations finished; ``label`` is the one starting now."""
        if not self.enabled:
            return
        width = 20
        filled = width * done // self.total
        elapsed = self.clock() - self.start
        eta = f", ~{elapsed / done * (self.total - done):.1f} s left" if done else ""
        line = f"[{'#' * filled}{'·' * (width - filled)}] {done}/{self.total}  {label}  {elapsed:.1f} s{eta}"
        self.stream.write("\r" + line[:110].ljust(110))
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 110 + "\r")
            self.stream.flush()
