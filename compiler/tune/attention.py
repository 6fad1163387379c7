"""The attention family: the search space of an ``AttentionSchedule`` (``compiler.attention``).

Attention is written by its own kernel generators, not the loop-nest passes, so its knobs are the
fields of its schedule, with the choices its compiler already considers (``compiler.attention.defaults``):

=============  ==============================================================================
knob           choices
=============  ==============================================================================
algorithm      ``flash``, ``naive`` (unless pinned)
tile.q         query rows per tile (16 … 256, at most the sequence rounded up to 16)
q_tiles        ``flash`` only: query tiles per Q block (``block_q = q_tiles · tile_q``; 1 … 8)
tile.kv        keys per tile (32 … 512, likewise)
tile.k0        the L0 step (16 … 128)
depth          1 … 4 tiles in flight between the Cube and the Vector unit
tile.r         ``naive`` only: score rows per softmax tile (1 … 32)
=============  ==============================================================================

A candidate is valid when the kernel generator accepts its buffers (the same layout code that emits
it, so it compiles); the model is the attention compiler's own estimate (each step's busiest unit,
``compiler.attention.defaults.estimate``). ``tile.r`` is dropped for ``flash``, so its candidates are
distinct, and ``q_tiles`` likewise for ``naive``. There is no instruction budget here: the estimate does not
count instructions.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from compiler.attention.defaults import (
    K0,
    MAX_Q_TILES,
    ROWS,
    TILE_KV,
    TILE_Q,
    FlashFits,
    default_attention_schedule,
    estimate,
)
from compiler.attention.naive import naive_misfit
from compiler.attention.schedule import ALGORITHMS, MAX_DEPTH, AttentionSchedule, check
from compiler.ops import Op
from compiler.target import Target
from compiler.tune.errors import TuneError
from compiler.tune.model import Prediction
from compiler.tune.types import REFUSED, Family, Knob, reason


class AttentionFamily(Family):
    name = "attention"

    def __init__(self, op: Op, target: Target, fixed: Any) -> None:
        if fixed is None:
            fixed = AttentionSchedule(algorithm=None)
        if not isinstance(fixed, AttentionSchedule):
            raise TuneError(
                f"attention takes an AttentionSchedule, not {type(fixed).__name__}",
                hint="pin --schedule, --tile q=..,kv=..,k0=.., --depth or --cores",
            )
        if fixed.algorithm is not None:
            check(fixed)
        super().__init__(op, target, fixed)
        self.vpc = target.vector_per_cube
        self.fits = FlashFits(op, target)  # a refusal covers the larger candidates after it

    def baseline(self) -> Any:
        return self.fixed.replace(algorithm=self.fixed.algorithm or "flash")  # the compiler's default algorithm

    def best(self) -> AttentionSchedule:
        """The compiler's default (``compiler.attention.defaults``): the pinned knobs, the fastest fitting rest."""
        return default_attention_schedule(self.op, self.target, self.baseline(), self.vpc)

    def knobs(self) -> tuple[Knob, ...]:
        f, cap = self.fixed, -(-self.op.seq // 16) * 16
        out = []
        if f.algorithm is None:
            out.append(Knob("algorithm", ALGORITHMS))
        if f.tile_q is None:
            out.append(Knob("tile.q", tuple(t for t in TILE_Q if t <= max(16, cap))))
        if f.block_q is None and f.algorithm != "naive":
            out.append(Knob("q_tiles", tuple(range(1, MAX_Q_TILES + 1))))
        if f.tile_kv is None:
            out.append(Knob("tile.kv", tuple(t for t in TILE_KV if t <= max(32, cap))))
        if f.k0 is None:
            out.append(Knob("tile.k0", K0))
        if f.depth is None:
            out.append(Knob("depth", tuple(range(1, MAX_DEPTH + 1))))
        if f.rows is None and f.algorithm != "flash":
            out.append(Knob("tile.r", ROWS))
        return tuple(out)

    def values_of(self, schedule: Any) -> dict[str, object]:
        return {
            "algorithm": schedule.algorithm,
            "tile.q": schedule.tile_q,
            "q_tiles": schedule.q_tiles if schedule.algorithm == "flash" else None,
            "tile.kv": schedule.tile_kv,
            "tile.k0": schedule.k0,
            "depth": schedule.depth,
            "tile.r": schedule.rows,
        }

    def canonical(self, values: Mapping[str, object]) -> Any:
        s = self._schedule(values)
        why = self.fits.why(s) if s.algorithm == "flash" else naive_misfit(self.op, s, self.target)
        if why is not None:  # its buffers, stages or event ids
            raise why
        return s

    def _schedule(self, values: Mapping[str, object]) -> AttentionSchedule:
        """The schedule ``values`` stand for, checked by its rules but not yet for fit (a compile)."""
        f = self.fixed
        algorithm = values.get("algorithm") or f.algorithm
        rows = (values.get("tile.r") or f.rows) if algorithm == "naive" else None
        tile_q = values.get("tile.q") or f.tile_q
        block_q = f.block_q or (tile_q * int(values.get("q_tiles") or 1) if tile_q else None)
        s = f.replace(
            algorithm=algorithm,
            tile_q=tile_q,
            block_q=block_q if algorithm == "flash" else None,
            tile_kv=values.get("tile.kv") or f.tile_kv,
            k0=values.get("tile.k0") or f.k0,
            depth=values.get("depth") or f.depth,
            rows=rows,
        )
        check(s)
        return s

    def enumerate(self, pruned: Counter, max_instructions: int) -> Iterator[tuple[Any, Any, Prediction]]:
        """Every distinct schedule, priced by the step model, then asked whether it fits (a compile of a short
        kernel each) best first: the :data:`FIT_CHECKED` best that fit are the candidates, the rest pruned as
        predicted slower — the fit checks, not the model, are what a space costs."""
        knobs = self.knobs()
        seen: dict = {}
        for combo in itertools.product(*(k.choices for k in knobs)):
            values = dict(zip((k.name for k in knobs), combo))
            if (values.get("algorithm") or self.fixed.algorithm) == "flash" and values.get("tile.r") not in (None, 1):
                continue  # rows mean nothing to flash: one representative (r=1 or none) stands for all
            if (values.get("algorithm") or self.fixed.algorithm) == "naive" and values.get("q_tiles") not in (None, 1):
                continue  # nor Q blocks to naive
            try:
                s = self._schedule(values)
            except REFUSED as e:
                pruned[reason(e)] += 1
                continue
            if s not in seen:
                seen[s] = float(estimate(self.op, s, self.target, self.vpc))
        kept = 0
        for s, cycles in sorted(seen.items(), key=lambda kv: (kv[1], kv[0].text())):
            if kept >= FIT_CHECKED:
                pruned[f"are predicted slower than the {FIT_CHECKED} best that fit"] += 1
                continue
            why = self.fits.why(s) if s.algorithm == "flash" else naive_misfit(self.op, s, self.target)
            if why is not None:
                pruned[reason(why)] += 1
                continue
            kept += 1
            yield s, None, Prediction(cycles, 0, {}, 0, 0.0, "model", 0.0)


#: candidates of an attention space checked for fit, best predicted first (each check compiles a short kernel)
FIT_CHECKED = 256


def schedule_from_json(d: dict) -> Any:
    """The inverse of ``AttentionSchedule.to_json``."""
    t = d.get("tile", {})
    return AttentionSchedule(d["algorithm"], t.get("q"), t.get("kv"), t.get("k0"), d.get("depth"), t.get("r"),
                             d.get("cores", 1), t.get("qb"))  # fmt: skip
