"""A flash schedule's predicted cycles (``compiler.tune.model.predict``) from a short trace.

Tracing and compiling the flash kernel over its whole grid takes 0.2–40 s of CPU (a causal kernel's Q blocks each
run their own number of key steps, so each is traced apart). Every program has the same statements and tiles; only
the key loop's trip count differs, and :func:`compiler.attention.flash_lang.key_steps` gives it by formula. So the
kernel of one head over a short sequence with the whole one's tails (``compiler.tune.attention_fit.short_sync``),
priced as the whole launch (``compiler.tune.model.on_grid``: its programs dealt to the cores as the launch deals
them, their trip counts, the arrays' whole sizes), is the whole kernel's prediction
(``tests/tune/test_tune_attention_price.py`` checks them equal), for 0.04–0.6 s.
"""

from __future__ import annotations

import math

from compiler.attention.flash_lang import key_steps
from compiler.attention.op import Attention
from compiler.target import Target
from compiler.tune.attention_fit import short_sync
from compiler.tune.attention_schedule import AttentionSchedule
from compiler.tune.model import Grid, Prediction, aheads, on_grid, predict


def flash_prediction(op: Attention, schedule: AttentionSchedule, target: Target) -> Prediction:
    """The model's prediction of ``op`` under a resolved flash ``schedule`` on ``target`` (raises if it does not
    fit), from a short kernel of one head (``short_sync``)."""
    kernel, ops = short_sync(op, schedule, target)
    assert len(ops[1]) == 1, "the flash kernel has one key loop"
    blocks = -(-op.seq // schedule.block_q)
    last = len(kernel.traced.nest.t.programs) - 1  # type: ignore[union-attr]  # the short kernel's last Q block

    def trips(var: str, program: int) -> int:
        return key_steps(op, schedule, program)

    def like(program: int) -> int:  # the last Q block has the short kernel's last one's query tiles
        return last if program % blocks == blocks - 1 else 0

    sizes = {t.name: math.prod(t.shape) for t in op.tensors()}
    grid = Grid((blocks, op.heads, op.batch), schedule.cores, trips, like, sizes, ops)
    whole = on_grid(kernel, grid)
    return predict(whole, None, aheads(whole))
