"""The rotary embedding as one kernel (``compiler.vecops.Rope``): numpy on any shape, the very roundings of
the element-wise formulation, and a decode layer with one kernel per rotation and none to append the key."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Schedule
from compiler.graph import build
from compiler.graph.llm import rope_tables
from compiler.ops import Elementwise, OpError
from compiler.vecops import Rope
from dsasim.api import compile_and_run


@settings(max_examples=10, deadline=None)
@given(
    rows=st.integers(1, 12),
    heads=st.integers(1, 4),
    d=st.sampled_from([32, 64, 128]),
    r=st.one_of(st.none(), st.integers(1, 5)),
    cores=st.sampled_from([1, 2]),
)
def test_rope_matches_numpy(rows, heads, d, r, cores):
    tile = {"r": r} if r is not None else {}
    sched = Schedule(tile=tile, cores=min(cores, -(-rows // (r or 1))))
    res = compile_and_run(Rope(rows, heads * d, d), sched, "edu", seed=rows * 100 + d, sanitize=True)
    assert res.check.passed, (rows, heads, d, r, res.check)
    assert "no races" in str(res.run.sanitizer)


def test_rope_is_llamas_rotate_half_rounded_as_three_elementwise_ops():
    tokens, heads, d = 3, 2, 32
    rng = np.random.default_rng(7)
    x = rng.standard_normal((tokens, heads * d)).astype(np.float16)
    cos, sin = (t.astype(np.float16) for t in rope_tables(np.array([5, 6, 9]), heads, d))
    got = Rope(tokens, heads * d, d).reference({"x": x, "cos": cos, "sin": sin})["z"]
    # LLaMA: x·cos + rotate_half(x)·sin with rotate_half(x) = [-x2, x1] and the tables' [cos, cos], [sin, sin]
    # — here the sign is in the table ([-sin, sin]), so the swap has none.
    xh = x.reshape(tokens * heads, d)
    swapped = np.concatenate([xh[:, d // 2 :], xh[:, : d // 2]], axis=1)
    mul = Elementwise("mul", tokens * heads, d)
    add = Elementwise("add", tokens * heads, d)
    xc = mul.reference({"x": xh, "y": cos})["z"]
    xs = mul.reference({"x": swapped, "y": sin})["z"]
    want = add.reference({"x": xc, "y": xs})["z"]
    np.testing.assert_array_equal(got.reshape(tokens * heads, d), want)


def test_a_decode_layer_rotates_in_one_kernel_each_and_appends_k_in_place():
    g = build("decoder-layer", phase="decode", batch=2, context=8, hidden=128, heads=4, kv_heads=2, head_dim=32,
              ffn_dim=256)  # fmt: skip
    ropes = [n for n in g.nodes if isinstance(n.op, Rope)]
    assert [n.name for n in ropes] == ["q_rope", "k_rope"]
    assert ropes[1].ref("z").tensor == "k_cache"  # k's rotation is the append
    assert not any("append" in n.name or "swap" in n.name for n in g.nodes)


def test_heads_must_split_the_row_into_aligned_halves():
    with pytest.raises(OpError, match="whole heads"):
        Rope(1, 100, 64)
    with pytest.raises(OpError, match="32-byte"):
        Rope(1, 96, 24)
