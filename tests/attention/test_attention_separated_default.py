"""On a separated chip the step model prices each AIV's share of a step as the split makes it: a score tile's
queries divided between the AIVs (every query tile, one per Q block or several), or a Q block's tiles dealt
where a share would be narrower than the split divides (``compiler.passes.split.NARROWEST``)."""

from __future__ import annotations

from compiler.attention import Attention, AttentionSchedule
from compiler.passes.split import NARROWEST
from compiler.target import Target
from compiler.tune.steps import StepModel
from dsasim.api import compile_and_run
from dsasim.driver import chip_for


def test_the_default_q_block_on_edu_separated_is_the_fastest_measured():
    """``edu-separated`` at q=64,kv=64: the AIVs each take 32 of a tile's 64 queries whatever the Q block, so a
    block saves only the AIC's K/V loads, and one query tile per block runs fastest (S=512: 77,193 cycles against
    98,464 and 88,690 with blocks of 2 and 4). Pricing one tile per block as one AIV's work chose a block of 4."""
    op = Attention(1, 1, 512, 64, causal=False, precision="high")
    cycles = {}
    for qb in (None, 64, 128, 256):
        run = compile_and_run(op, AttentionSchedule("flash", 64, 64, cores=1, block_q=qb), "edu-separated",
                              timing_only=True)  # fmt: skip
        cycles[qb or "default"] = run.run.stats.cycles
        if qb is None:
            chosen = run.compiled.schedule.block_q
    assert cycles["default"] == cycles[chosen]
    assert cycles["default"] <= min(cycles.values())


def test_each_aiv_is_priced_on_its_share_of_a_divided_tile_and_on_whole_tiles_when_dealt():
    op = Attention(1, 1, 1024, 64, causal=False, precision="high")
    separated = StepModel(op, Target.of(chip_for("edu-separated", 1)))
    coupled = StepModel(op, Target.of(chip_for("edu", 1)))  # the same Vector unit, one per core
    for tile_q, divided in ((2 * NARROWEST, True), (48, False), (NARROWEST, False)):
        parts, whole = separated._flash_parts(tile_q, 64, 16), coupled._flash_parts(tile_q, 64, 16)
        assert parts.divided is divided
        if divided:  # each AIV: half the queries of every tile
            assert parts.vector < whole.vector
        else:  # dealt (a share narrower than the split divides): an AIV runs whole tiles
            assert parts.vector == whole.vector
