"""A dot whose operand the Vector unit made (a cast int8 tile), its result through the Vector unit into a
second dot, in a loop: the records stay in the order they depend on each other (the int8 KV cache's decode
kernel, ``compiler.decode_attention``)."""

from __future__ import annotations

import numpy as np

import dsasim
from compiler import language as tl


@dsasim.jit
def cast_then_two_dots(A, B, C, N: tl.constexpr, T: tl.constexpr):
    o = tl.arange(0, N)
    a = tl.load(A + o[:, None] * N + o[None, :])
    acc = tl.zeros([N, N], dtype=tl.float32)
    for i in tl.range(0, T):
        b = tl.load(B + i * N * N + o[:, None] * N + o[None, :]).to(tl.float16)
        p = tl.exp(tl.dot(a, b))
        acc = tl.dot(p.to(tl.float16), a, acc)
    tl.store(C + o[:, None] * N + o[None, :], acc)


def test_a_cast_tile_feeds_a_dot_whose_result_feeds_another():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((16, 16)) * 0.05).astype(np.float16)
    b = rng.integers(-3, 4, (3, 16, 16)).astype(np.int8)
    c = np.zeros((16, 16), np.float32)
    cast_then_two_dots[(1,)](a, b, c, N=16, T=3)
    a32 = a.astype(np.float32)
    want = sum(np.exp(a32 @ b[i].astype(np.float32)).astype(np.float16).astype(np.float32) @ a32 for i in range(3))
    np.testing.assert_allclose(c, want, rtol=2e-3, atol=2e-3)
