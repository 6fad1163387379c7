"""Attention on the DSA: the ``naive`` and ``flash`` schedules, on coupled and separated chips.

    from compiler.attention import Attention, AttentionSchedule, compile_attention
    from simulator import load_chip

    k = compile_attention(Attention(1, 1, 1024, 64, causal=True), AttentionSchedule("flash"), load_chip("edu"))
    print(k.show_passes())   # the plan and the start of the program

``dsasim.api.compile_and_run`` runs and checks it like any operator; ``dsasim run attention``.
See docs/attention.md.
"""

from compiler.lazy import exports

#: Each public name → the module it lives in, imported on first use (compiler.lazy).
__all__ = exports(
    __name__,
    {
        "ALGORITHMS": "compiler.attention.schedule",
        "PRECISIONS": "compiler.attention.op",
        "Attention": "compiler.attention.op",
        "AttentionPlan": "compiler.attention.compile",
        "AttentionSchedule": "compiler.attention.schedule",
        "DecodeAttention": "compiler.attention.decode",
        "as_attention_schedule": "compiler.attention.compile",
        "compile_attention": "compiler.attention.compile",
        "compile_decode_attention": "compiler.attention.decode",
        "default_attention_schedule": "compiler.attention.compile",
        "make_attention": "compiler.attention.op",
        "plan_attention": "compiler.attention.compile",
    },
)
