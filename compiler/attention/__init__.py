"""Attention on the DSA: the operator (``Attention``) and its tile-language kernels (decode attention has its own
package, ``compiler.decode_attention``).

    from compiler.attention import Attention, AttentionSchedule, compile_attention
    from simulator import load_chip

    k = compile_attention(Attention(1, 1, 1024, 64, causal=True), AttentionSchedule("flash"), load_chip("edu"))
    print(k.show_passes())   # the plan and the start of the program

``dsasim.api.compile_and_run`` runs and checks it like any operator; ``dsasim run attention``.
Its schedules are chosen by the attention family (``compiler.tune.attention``). See docs/attention.md.
"""

from compiler.lazy import exports

#: Each public name → the module it lives in, imported on first use (compiler.lazy).
__all__ = exports(
    __name__,
    {
        "ALGORITHMS": "compiler.tune.attention_schedule",
        "PRECISIONS": "compiler.attention.op",
        "Attention": "compiler.attention.op",
        "AttentionPlan": "compiler.tune.attention",
        "AttentionSchedule": "compiler.tune.attention_schedule",
        "as_attention_schedule": "compiler.tune.attention_schedule",
        "compile_attention": "compiler.attention.compile",
        "default_attention_schedule": "compiler.tune.attention",
        "plan_attention": "compiler.tune.attention",
    },
)
