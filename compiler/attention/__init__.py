"""Attention on the DSA: the ``naive`` and ``flash`` schedules, on coupled and separated chips.

    from compiler.attention import Attention, AttentionSchedule, compile_attention
    from simulator import load_chip

    k = compile_attention(Attention(1, 1, 1024, 64, causal=True), AttentionSchedule("flash"), load_chip("edu"))
    print(k.show_passes())   # the plan and the start of the program

``dsasim.api.compile_and_run`` runs and checks it like any operator; ``dsasim run attention``.
See docs/attention.md.
"""

from compiler.attention.compile import (
    AttentionPlan,
    as_attention_schedule,
    compile_attention,
    default_attention_schedule,
    plan_attention,
)
from compiler.attention.decode import DecodeAttention, compile_decode_attention
from compiler.attention.op import PRECISIONS, Attention, make_attention
from compiler.attention.schedule import ALGORITHMS, AttentionSchedule

__all__ = [
    "ALGORITHMS",
    "PRECISIONS",
    "Attention",
    "AttentionPlan",
    "AttentionSchedule",
    "DecodeAttention",
    "as_attention_schedule",
    "compile_attention",
    "compile_decode_attention",
    "default_attention_schedule",
    "make_attention",
    "plan_attention",
]
