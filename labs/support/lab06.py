"""Lab 6 (FlashAttention): one head of attention run by its knobs, and the lab's measurements drawn.

The plots take the student's formulas (``gm_bytes``, ``causal_steps``) as arguments and draw them beside
what the simulator measured; nothing here grades.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
from IPython.display import display

from dsasim import Attention, AttentionSchedule, KernelRun, compile_and_run
from isa import Pipe


def run(seq: int, algorithm: str = "flash", *, causal: bool = False, chip: str = "edu", head_dim: int = 64,
        **knobs: int) -> KernelRun:  # fmt: skip
    """Compile and simulate one head of f16 attention, timing only (knobs: tile_q, tile_kv, depth, ...).

    This lab's flash reads K and V once per query tile, so a given ``tile_q`` is also its Q block
    (``block_q``: the built-in kernel can keep several query tiles in L1 and read K and V once for all of
    them — docs/attention.md)."""
    if algorithm == "flash" and "tile_q" in knobs:
        knobs.setdefault("block_q", knobs["tile_q"])
    op = Attention(1, 1, seq, head_dim, causal)
    return compile_and_run(op, AttentionSchedule(algorithm, **knobs), chip, timing_only=True)


def print_gm_table(measured_s: Sequence[int], measured: Mapping[str, Sequence[int]]) -> None:
    """Per sequence length (d = 64): the GM bytes naive and flash moved, their ratio, and FLOPs per GM byte."""
    print(f"{'S':>5} {'naive B':>12} {'flash B':>12} {'naive/flash':>12} {'FLOP/B naive':>13} {'FLOP/B flash':>13}")
    for i, S in enumerate(measured_s):
        n, f = measured["naive"][i], measured["flash"][i]
        flops = Attention(1, 1, S, 64).flops
        print(f"{S:5} {n:12,} {f:12,} {n / f:12.2f} {flops / n:13.1f} {flops / f:13.1f}")


def plot_gm_bytes(
    long_s: Sequence[int],
    measured_s: Sequence[int],
    measured: Mapping[str, Sequence[int]],
    held: Mapping[str, Sequence[int]],
    gm_bytes: Callable[[str, int, int, int], int],
) -> None:
    """Left: GM bytes moved by naive and flash (d = 64, tile_q = 64), ``gm_bytes`` (the student's formula)
    over ``long_s`` against the simulator's ``measured`` bytes; right: the GM bytes each ``held``."""
    _, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for a, color, marker in (("naive", "C3", "o"), ("flash", "C0", "s")):
        ax1.loglog(long_s, [gm_bytes(a, S, 64, 64) for S in long_s], "-", color=color, label=f"{a}, your formula")
        ax1.loglog(measured_s, measured[a], marker, color=color, label=f"{a}, simulator")
        ax2.loglog(long_s, held[a], marker + "-", color=color, label=a)
    ax1.loglog(long_s, [S * S * 2 for S in long_s], ":", color="grey", label="one S × S f16 matrix")
    ax1.set_title("GM bytes moved (d = 64, tile_q = 64, edu)")
    ax2.set_title("GM bytes held: q, k, v, o + workspaces")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(long_s, [str(S) for S in long_s])
        ax.set_xlabel("sequence length S")
        ax.set_ylabel("bytes")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    plt.show()


def print_flag_waits(deep: Mapping[int, KernelRun]) -> None:
    """The cycles of the depth-1 and depth-2 runs, and the Vector unit's and FIXPIPE's waits on each flag."""
    print(f"{'':22}{'depth 1':>10}{'depth 2':>10}")
    print(f"{'cycles':22}{deep[1].cycles:>10,}{deep[2].cycles:>10,}")
    for pipe in (Pipe.V, Pipe.FIX):
        stalls = [deep[depth].stats.cores[0][pipe].stalls for depth in (1, 2)]
        for cause in sorted(set(stalls[0]) | set(stalls[1])):
            if cause.startswith("flag:"):
                one, two = (s.get(cause, 0) for s in stalls)
                print(f"{pipe.label + ' waits ' + cause:22}{one:>10,}{two:>10,}")


def causal_fractions(sizes: Sequence[int], tile: int = 64) -> dict[str, list[float]]:
    """What a causal mask leaves of the work at each sequence length, measured (tiles ``tile × tile``,
    d = 64): flash's K and V bytes (GM bytes less q and o, read and written once either way) and cycles,
    and naive's cycles, each causal / no mask."""
    kept: dict[str, list[float]] = {"K and V bytes, flash": [], "cycles, flash": [], "cycles, naive": []}
    for S in sizes:
        full, masked = run(S, tile_q=tile, tile_kv=tile), run(S, causal=True, tile_q=tile, tile_kv=tile)
        qo = 2 * S * 64 * 2
        kept["K and V bytes, flash"].append((masked.stats.gm_bytes - qo) / (full.stats.gm_bytes - qo))
        kept["cycles, flash"].append(masked.cycles / full.cycles)
        naive_full = run(S, "naive", tile_q=tile, tile_kv=tile)
        naive_masked = run(S, "naive", causal=True, tile_q=tile, tile_kv=tile)
        kept["cycles, naive"].append(naive_masked.cycles / naive_full.cycles)
    return kept


def plot_causal(
    sizes: Sequence[int], kept: Mapping[str, Sequence[float]], causal_steps: Callable[[int, int, int], tuple[int, int]]
) -> None:
    """The fractions of ``causal_fractions`` against the steps ``causal_steps`` (the student's count)
    processes out of all ⌈S/64⌉² (tiles 64 × 64), up to S = 2048."""
    formula_s = list(range(64, 2049, 64))
    _, ax = plt.subplots(figsize=(7.5, 4.2))
    all_steps = [math.ceil(S / 64) ** 2 for S in formula_s]
    ax.plot(formula_s, [causal_steps(S, 64, 64)[0] / n for S, n in zip(formula_s, all_steps)], "-", color="grey",
            label="steps processed (your causal_steps)")  # fmt: skip
    for (label, values), marker in zip(kept.items(), ("s", "o", "^")):
        ax.plot(sizes, values, marker, label=f"{label} (simulator)", markersize=7)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log", base=2)
    ax.set_xticks([64, 128, 256, 512, 1024, 2048], ["64", "128", "256", "512", "1024", "2048"])
    ax.set_ylim(0, 1.15)
    ax.set_xlabel("sequence length S")
    ax.set_ylabel("causal / no mask")
    ax.set_title("what a causal mask leaves of the work (tiles 64×64, d = 64, edu)")
    ax.legend(fontsize=8, loc="lower left")
    plt.show()


def print_busiest(runs: Mapping[str, KernelRun]) -> None:
    """Per chip: cycles, GM bytes, and for each core (with its kind, AIC or AIV, on a separated chip) its
    busiest pipe and the busy cycles of its Vector unit and MTE2."""
    for name, r in runs.items():
        print(f"{name}: {r.cycles:,} cycles, {r.stats.gm_bytes:,} GM bytes")
        kinds = r.compiled.kinds
        for c, pipes in enumerate(r.stats.cores):
            busiest = max((p for p in pipes if p is not Pipe.S), key=lambda p: pipes[p].busy)
            kind = f" ({kinds[c]})" if c < len(kinds) else ""
            print(
                f"  core {c}{kind}: busiest {busiest.label} {pipes[busiest].busy:,} cycles; "
                f"VECTOR {pipes[Pipe.V].busy:,}, MTE2 {pipes[Pipe.MTE2].busy:,}"
            )


def print_busy(runs: Mapping[str, KernelRun]) -> None:
    """Per run: cycles, GM bytes, and the busy cycles of core 0's Cube, Vector unit and MTE2."""
    for name, r in runs.items():
        busy = {p.label: r.stats.cores[0][p].busy for p in (Pipe.CUBE, Pipe.V, Pipe.MTE2)}
        print(f"{name:>13}: {r.cycles:,} cycles, {r.stats.gm_bytes:,} GM bytes, busy {busy}")


def show_timelines(runs: Iterable[KernelRun], width: int) -> None:
    """Each run's timeline over ``width`` cycles from a third of its run (a figure returned inside a loop is
    not shown by itself: this displays each)."""
    for r in runs:
        lo = r.cycles // 3
        display(r.timeline(window=(lo, lo + width)))
