"""Sweeps: one operator over every combination of schedule knobs (or shapes, or chips), side by side.

Seeded by Triton's ``do_bench``/``perf_report``: name the knobs to vary and their values, and every
combination is compiled and simulated (``dsasim.api.compile_and_run``), then tabulated and plotted::

    from dsasim.sweep import sweep

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

import difflib
import html
import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from compiler import Op, Schedule, make_op
from compiler.schedule import knob_key, operands, tile_knobs
from dsasim.api import compile_and_run
from dsasim.budget import over_cores
from dsasim.progress import Progress
from dsasim.sweep_report import fixed_knobs, format_table
from dsasim.sweep_rows import SweepData, SweepError, SweepRow, check_metric, json_value
from isa import DsasimError, DType
from simulator.config import Chip, load_chip

if TYPE_CHECKING:
    from simulator.plots.style import DsasimFigure  # the type of plot(); matplotlib is loaded by plot() alone

#: A sweep with more combinations than this is refused unless ``max_runs`` is raised.
MAX_RUNS = 1000
_INT_KNOBS = ("prefetch", "cores", "buffers")
_AXES_KNOBS = ("order", "parallel")
_OTHER_KNOBS = ("shape", "chip", "dtype")


@dataclass
class SweepResult(SweepData):
    """A sweep's rows with their views: ``table()``, ``plot()``, ``to_json()``; ``print(result)`` shows the table."""

    def table(self, metric: str | None = None) -> str:
        """The table ``dsasim sweep`` prints."""
        return format_table(self, check_metric(metric or self.default_metric))

    def plot(self, metric: str | None = None, x: str | None = None) -> DsasimFigure:
        """``metric`` against knob ``x`` (default: the first varied), one line per value of the other knobs."""
        from dsasim.plots.sweep import sweep_plot  # matplotlib: loaded on the first picture only

        return sweep_plot(self, check_metric(metric or self.default_metric), x)

    def to_json(self, metric: str | None = None) -> dict:
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
        return f"<pre>{html.escape(self.table())}</pre>"


# ---------------------------------------------------------------------------------- knob values


def known_knobs(op: Op) -> list[str]:
    """Every ``vary`` key ``op`` accepts."""
    tiles = [f"tile_{k}" for k in tile_knobs(op) if k not in op.whole_axes]
    group = ("group_m",) if op.unit == "cube" else ()  # the grouped walk of a matmul's tiles over the cores
    return [*tiles, "buffers", *(f"buffers_{o}" for o in operands(op)), *_INT_KNOBS[:2], *group, *_AXES_KNOBS,
            *_OTHER_KNOBS]  # fmt: skip


def parse_value(key: str, value: Any) -> Any:
    """One value of knob ``key`` from Python or from the command line (text)."""
    if key == "shape":  # as text: the operator checks it has the right number of sizes
        return "x".join(map(str, value)) if isinstance(value, tuple | list) else str(value).strip()
    if key == "chip":
        return value if isinstance(value, str) else getattr(value, "name", value)
    if key == "dtype":
        try:
            return value if isinstance(value, DType) else DType.named(str(value))
        except ValueError as e:
            raise SweepError(f"dtype={value!r} is not a data type", hint=str(e)) from None
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
        key = knob_key(key)
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
    fit_cores: bool = False,
    **op_options: Any,
) -> SweepResult:
    """Compile and run ``op`` for every combination of the ``vary`` knob values.

    ``op`` is an operator name (``"matmul"``, ``"softmax"``...; ``op_options`` go to ``compiler.make_op``:
    ``dtype``, ``bias``, ``act``, ``broadcast``, ``eps``, ``out_dtype``) with its ``shape``, or an ``Op``.
    Knobs not varied come from ``schedule`` (default: the compiler chooses). ``check=True`` runs with data
    and compares every output with numpy (slower); otherwise runs are timing-only, with the same cycles.
    ``progress`` draws a progress bar on stderr (default: when stderr is a terminal). ``fit_cores``: the schedule's
    cores are the chip's, not asked for, so a combination with fewer parallel tiles runs on fewer cores
    (``dsasim.budget.over_cores``) unless ``cores`` is varied.
    """
    base = schedule or Schedule()
    values = {knob_key(k): [parse_value(knob_key(k), v) for v in vs] for k, vs in (vary or {}).items()}
    sample = _sample_op(op, shape, values, op_options)
    known = known_knobs(sample)
    for key, vs in values.items():
        if key not in known:
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
    bar = Progress(total, "sweep", enabled=progress)
    rows: list[SweepRow] = []
    start = time.perf_counter()
    try:
        for i, combo in enumerate(itertools.product(*values.values())):
            params = dict(zip(values, combo))
            bar.update(step=0 if i == 0 else 1, now=", ".join(f"{k}={json_value(v)}" for k, v in params.items()))
            rows.append(_run_one(op, shape, params, base, chip, check, seed, op_options, fit_cores))
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
        group_m=params.get("group_m", base.group_m),
        panel=base.panel,
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
    fit_cores: bool = False,
) -> SweepRow:
    t0 = time.perf_counter()
    the_op: Op | None = None
    try:
        the_op = op if isinstance(op, Op) else _make(op, params.get("shape", shape), params.get("dtype"), options)
        sched, on = apply(base, params, the_op), params.get("chip", chip)

        def run(s: Schedule) -> Any:
            return compile_and_run(the_op, s, on, timing_only=not check, check=check, seed=seed)

        fit = fit_cores and "cores" not in params and sched.cores > 1
        r = over_cores(sched.cores, lambda n: run(replace(sched, cores=n))) if fit else run(sched)
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
