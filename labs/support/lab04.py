"""Lab 4 (memory reuse): the pictures of GM and UB bytes, and the deep MLP of section 4.

Each plot takes what the notebook computed — the student's lifetimes, live bytes, offsets and batches —
and draws it; nothing here plans or grades.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Patch, Rectangle

from dsasim import Graph, GraphBuilder
from isa import DType

KiB, MiB = 1 << 10, 1 << 20
#: The colour of a tensor's box in the arena picture, by its kind.
KIND_COLORS = {"input": "C0", "weight": "#9e9e9e", "const": "#bdbdbd", "activation": "C1"}
#: The transformer block's phases (first and last node), shaded in the live-bytes picture.
PHASES = ((7, 14, "Q·Kᵀ\nheads"), (15, 20, "softmax"), (21, 28, "P·V\nheads"), (37, 42, "FFN"))


def plot_live_bytes(graph: Graph, live: Sequence[int], naive: int, weights: int) -> None:
    """The bytes live at each step of the transformer block (bytes), against the naive sum and the weights."""
    steps = np.arange(-1, len(graph.nodes) + 1)
    _, ax = plt.subplots(figsize=(9, 3.8))
    ax.step(steps, np.array(live) / KiB, where="mid", color="C2", linewidth=2, label="live at this step")
    ax.axhline(naive / KiB, color="C3", linestyle="--", label="naive: the sum of all tensors")
    ax.axhline(weights / KiB, color="grey", linestyle=":", label="weights alone")
    for first, last, text in PHASES:
        ax.axvspan(first - 0.5, last + 0.5, color="#eeeeee", zorder=0)
        ax.text((first + last) / 2, naive / KiB * 0.06, text, ha="center", va="bottom", fontsize=8)
    ax.set_xlabel("step (node index; -1: before the first kernel)")
    ax.set_ylabel("KiB")
    ax.set_ylim(0, naive / KiB * 1.12)
    ax.set_title("transformer block, batch 2 × 64 tokens, hidden 128: GM bytes needed at each step")
    ax.legend(loc="upper left", ncols=3, fontsize=8)
    plt.show()


def plot_arena(
    graph: Graph,
    offsets: Mapping[str, int],
    life: Mapping[str, tuple[int, int]],
    aligned: Callable[[Graph, str], int],
    live_peak: int,
    title: str,
) -> int:
    """One box per tensor, from its first to its last step (``life``) at its offset, ``aligned(graph, name)``
    bytes high; lines at the arena's peak and at ``live_peak``. Returns the arena's peak (bytes)."""
    peak = max(offsets[n] + aligned(graph, n) for n in offsets)
    _, ax = plt.subplots(figsize=(9, 4.8))
    for name, off in offsets.items():
        first, last = life[name]
        box = Rectangle((first - 0.5, off / KiB), last - first + 1, aligned(graph, name) / KiB)
        box.set(facecolor=KIND_COLORS[graph.tensor(name).kind], edgecolor="white", linewidth=0.6)
        ax.add_patch(box)
    ax.set_xlim(-1.5, len(graph.nodes) + 0.5)
    ax.set_xlabel("step")
    ax.set_ylabel("arena offset (KiB)")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(0, peak / KiB * 1.25)
    for y, color, text, va in ((peak, "black", "your peak", "bottom"), (live_peak, "C2", "largest live set", "top")):
        ax.axhline(y / KiB, color=color, linestyle="--", linewidth=1)
        ax.text(-1.3, y / KiB, text, va=va, fontsize=8, color=color)
    kinds = [k for k in KIND_COLORS if any(t.kind == k for t in graph.tensors)]
    ax.legend([Patch(facecolor=KIND_COLORS[k]) for k in kinds], kinds, loc="upper right", ncols=3, fontsize=8)
    plt.show()
    return peak


def plot_largest_batch(caps: Sequence[int], batches: Mapping[tuple[str, str], Sequence[int]]) -> None:
    """The largest batch against GM capacity (MiB), one panel per network, ``batches[net, policy]``."""
    nets = list(dict.fromkeys(net for net, _ in batches))
    _, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, net in zip(axes, nets):
        for p, style in (("naive", "o-C3"), ("reuse", "s-C2")):
            ax.plot(caps, batches[net, p], style[:2], color=style[2:], label=p)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(lambda v, _: f"{v:g}")
        ax.set_xticks(caps, [f"{c} MiB" for c in caps])
        ax.set_xlabel("GM capacity")
        ax.set_ylabel("largest batch")
        ax.set_title(net)
        ax.legend()
    plt.tight_layout()
    plt.show()


def deep_mlp(layers: int = 4, batch: int = 64, width: int = 256, dtype: DType = DType.F16) -> Graph:
    """An MLP of ``layers`` linear layers, each a matmul, a bias add and a GELU, ``width`` features wide;
    ``graph.rebuild(batch=b)`` rebuilds it at another batch."""
    b = GraphBuilder(dtype)
    x = b.tensor("x", (batch, width), "input")
    for i in range(layers):
        x = b.unary(f"l{i}.act", "gelu", b.linear(f"l{i}", x, width, bias=True))
    params = {"layers": layers, "batch": batch, "width": width, "dtype": dtype}
    return b.graph("deep-mlp", (x,), params, deep_mlp)


def plot_depth(depths: Sequence[int], act: Mapping[str, Sequence[float]], gain: Sequence[float]) -> None:
    """Left: GM for all but the weights (KiB) per policy against depth; right: the batch gain of reuse."""
    _, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax1.plot(depths, act["naive"], "o-", color="C3", label="naive")
    ax1.plot(depths, act["reuse"], "s-", color="C2", label="reuse")
    ax1.set_xlabel("layers")
    ax1.set_ylabel("KiB")
    ax1.set_title("GM for everything but the weights, batch 64")
    ax1.legend()
    ax2.plot(depths, gain, "d-", color="C0")
    ax2.set_xlabel("layers")
    ax2.set_ylabel("largest batch, reuse / naive")
    ax2.set_title("batch gain of reuse in 16 MiB of GM")
    ax2.set_ylim(0, max(gain) * 1.1)
    plt.tight_layout()
    plt.show()


#: Section 5's two cases: the fused kernel's temporaries sharing UB by lifetime, or each its own space.
SHARING = ("shared", "unshared")


def show_ub_sharing(
    rows_list: Sequence[int],
    temps: Mapping[str, Sequence[int]],
    need: Mapping[str, Sequence[int]],
    cycles: Mapping[str, Sequence[int | None]],
    ub_capacity: int,
    unfused_cycles: int,
) -> None:
    """Section 5's table and plots, shared against unshared temporaries, per tile of ``rows``: the
    temporaries' bytes, the UB the kernel needs (bytes) and its cycles (None: it does not fit); the table
    ends with the unfused graph's cycles. The plots: UB bytes stacked (staged tiles, temporaries) against
    UB's capacity, and the cycles of the tiles that fit."""
    print(f"UB holds {ub_capacity:,} B")
    print(f"{'rows':>4} | {'temporaries, B':^21} | {'UB needed, B':^21} | {'cycles':^21}")
    print(f"{'':>4} | " + " | ".join(f"{'shared':>10} {'unshared':>10}" for _ in range(3)))
    for i, r in enumerate(rows_list):
        cells = [f"{temps[s][i]:>10,}" for s in SHARING] + [f"{need[s][i]:>10,}" for s in SHARING]
        cells += [f"{cycles[s][i]:>10,}" if cycles[s][i] else f"{'no fit':>10}" for s in SHARING]
        print(f"{r:>4} | {' '.join(cells[:2])} | {' '.join(cells[2:4])} | {' '.join(cells[4:])}")
    print(f"unfused, six kernels: {unfused_cycles:,} cycles")

    _, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8))
    x = np.arange(len(rows_list))
    for j, (s, color) in enumerate((("shared", "C0"), ("unshared", "C1"))):
        staged = np.array(need[s]) - np.array(temps[s])
        ax1.bar(x + (j - 0.5) * 0.38, staged / KiB, 0.38, color="#bdbdbd", label="staged tiles" if j == 0 else None)
        ax1.bar(x + (j - 0.5) * 0.38, np.array(temps[s]) / KiB, 0.38, bottom=staged / KiB, color=color,
                label=f"temporaries, {s}")  # fmt: skip
    ax1.axhline(ub_capacity / KiB, color="black", linestyle="--", linewidth=1)
    ax1.text(-0.6, ub_capacity / KiB, " UB capacity", va="bottom", fontsize=8)
    ax1.set_xticks(x, [str(r) for r in rows_list])
    ax1.set_xlabel("rows per tile (× 1024 f16)")
    ax1.set_ylabel("KiB of UB")
    ax1.set_title("UB needed, 2 buffers per operand (left bar shared, right not)", fontsize=10)
    ax1.legend(loc="upper left", fontsize=8)
    for s, style in (("shared", "o-C0"), ("unshared", "s--C1")):
        fit = [(r, c) for r, c in zip(rows_list, cycles[s]) if c is not None]
        ax2.plot([r for r, _ in fit], [c / 1e3 for _, c in fit], style[:-2], color=style[-2:], label=f"UB {s}")
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(rows_list, [str(r) for r in rows_list])
    ax2.set_xlim(1.6, 20)
    ax2.set_ylim(0, max(c for c in cycles["shared"] if c) / 1e3 * 1.15)
    ax2.set_xlabel("rows per tile (× 1024 f16); missing points do not fit")
    ax2.set_ylabel("thousand cycles")
    ax2.set_title("fused RMSNorm 128×1024 on edu", fontsize=10)
    ax2.legend(loc="lower left")
    plt.tight_layout()
    plt.show()
