"""Decode attention on the DSA: the operators (``DecodeAttention``, ``PagedDecodeAttention``) and their kernel.

    from compiler import compile
    from compiler.decode_attention import DecodeAttention
    from simulator import load_chip

    k = compile(DecodeAttention(batch=4, heads=32, kv_heads=8, keys=1025, head_dim=128), None, load_chip("edu"))
    print(k.show_passes())   # one kernel over the 32 (sequence, key head) problems

A decoder layer's decode step builds it (``compiler.graph.llm``); ``dsasim.api.compile_and_run`` runs and checks it
like any operator. Its schedule (an ``AttentionSchedule``: ``tile_kv``, ``depth``, ``cores``) is chosen by decode
attention's family (``compiler.tune.decode.DecodeFamily``). See docs/llm.md, *Decode attention as one kernel*.
"""

from compiler.lazy import exports

#: Each public name → the module it lives in, imported on first use (compiler.lazy).
__all__ = exports(
    __name__,
    {
        "KV_DTYPES": "compiler.decode_attention.op",
        "DecodeAttention": "compiler.decode_attention.op",
        "PagedDecodeAttention": "compiler.decode_attention.op",
        "compile_decode_attention": "compiler.decode_attention.compile",
        "launch_decode": "compiler.decode_attention.kernel",
    },
)
