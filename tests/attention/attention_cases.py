"""Hypothesis strategies for attention kernels: small shapes (tails included), both schedules, both
core modes, random valid knobs — on the ``edu`` chips, so a functional run takes a fraction of a second.

(Not called ``strategies.py``: pytest imports test helpers by file name, and ``tests/strategies.py`` has
that name.)
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from compiler.attention import Attention, AttentionSchedule

CHIPS = ("edu", "edu-separated")


@dataclass(frozen=True)
class Case:
    op: Attention
    schedule: AttentionSchedule
    chip: str

    def __str__(self) -> str:
        return (
            f"{self.op} {'causal ' if self.op.causal else ''}{self.op.precision} · {self.schedule.text()} · {self.chip}"
        )


@st.composite
def attention_cases(draw, chips: tuple[str, ...] = CHIPS) -> Case:
    """An attention of head dim 64 or 128 over 1–96 positions (either layout; one key head or as many as the
    query heads), with a schedule whose unset knobs the
    compiler chooses (``None``) or that sets them to small values."""
    heads = draw(st.integers(1, 2))
    op = Attention(
        draw(st.integers(1, 2)),
        heads,
        draw(st.integers(1, 96)),
        draw(st.sampled_from((64, 128))),
        causal=draw(st.booleans()),
        precision=draw(st.sampled_from(("fast", "high"))),
        kv_heads=draw(st.sampled_from((None, 1))),  # 1 of 2 heads: grouped-query attention
        layout=draw(st.sampled_from(("bhsd", "bshd"))),
    )
    algorithm = draw(st.sampled_from(("flash", "naive")))
    knobs = {}
    if draw(st.booleans()):
        knobs = {
            "tile_q": draw(st.sampled_from((16, 32, 48))),
            "tile_kv": draw(st.sampled_from((32, 48, 64))),
            "k0": draw(st.sampled_from((16, 32))),
            "depth": draw(st.integers(1, 2)),
        }
        if algorithm == "naive":
            knobs["rows"] = draw(st.sampled_from((1, 3, 8)))
        else:  # one to three query tiles per Q block
            knobs["block_q"] = knobs["tile_q"] * draw(st.integers(1, 3))
    schedule = AttentionSchedule(algorithm, cores=draw(st.integers(1, 3)), **knobs)
    return Case(op, schedule, draw(st.sampled_from(chips)))
