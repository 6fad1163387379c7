"""What the language gives up, in order, when a kernel's stages do not fit (``compiler.language.launch.fit``):
the compiler's own buffers go to one slot first, then a tile loaded once for a whole loop (its second slot
only prefetches the next program's tile); the tiles the loop loads keep their ``num_stages``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close

import dsasim
import dsasim.language as tl
from compiler.language.errors import TilesDoNotFit


@dsasim.jit
def scaled_tiles(x, y, o, N, R: tl.constexpr, C: tl.constexpr):
    """``o`` = each ``R``-row tile of ``y`` times the program's block of ``x`` (loaded once, before the loop)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, C)
    xs = tl.load(x + (pid * R + tl.arange(0, R))[:, None] * C + cols[None, :])
    for j in tl.range(0, N, R):
        ys = tl.load(y + (j + tl.arange(0, R))[:, None] * C + cols[None, :])
        tl.store(o + (pid * N + j + tl.arange(0, R))[:, None] * C + cols[None, :], xs * ys)


def run(rows: int, **launch):
    x = np.arange(4 * rows * 256, dtype=np.float32).reshape(4 * rows, 256) / 1000
    y = np.arange(8 * rows * 256, dtype=np.float32).reshape(8 * rows, 256) / 100
    o = np.zeros((4 * 8 * rows, 256), np.float32)
    r = scaled_tiles[(4,)](x, y, o, 8 * rows, R=rows, C=256, chip="edu", **launch)
    want = (x.reshape(4, 1, rows, 256) * y.reshape(1, 8, rows, 256)).reshape(o.shape)
    return o, want, r


def test_a_block_loaded_once_per_program_goes_to_one_slot_before_the_loops_tiles():
    out, want, r = run(28)  # x's block twice, y's tile twice and the product: 141.8 KiB of edu's 128 KiB of UB
    assert_close(out, want)
    slots = {b.name: b.depth for b in r.compiled.passes[1][1].buffers if not b.temp}
    assert slots == {"U0": 1, "U1": 2, "U2": 1}  # x's block, y's tile (num_stages=2), the product


def test_small_tiles_keep_every_stage():
    out, want, r = run(16)
    assert_close(out, want)
    assert all(b.depth == 2 for b in r.compiled.passes[1][1].buffers if not b.temp)


def test_tiles_too_big_for_one_slot_each_still_say_what_does_not_fit():
    with pytest.raises(TilesDoNotFit, match="of UB needed, 128 KiB available"):
        run(48)
