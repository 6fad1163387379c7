"""The figures of docs/many-chips.md: a ring all-reduce's timeline, bus bandwidth over the size (ring and
mesh) against the α-β model, and a tensor-parallel layer's compute beside its all-reduces.

    .venv/bin/python benchmarks/many_chips.py          # writes docs/many-chips-figures/*.png
"""

from __future__ import annotations

from pathlib import Path

from dsasim.llm import MODELS
from dsasim.tp import run_tp_layer
from simulator.collective import simulate_collective
from simulator.collective.plot import sweep_figure
from simulator.config import load_chip
from simulator.plots import save_figure

OUT = Path(__file__).resolve().parent.parent / "docs" / "many-chips-figures"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    edu, b910 = load_chip("edu"), load_chip("ascend910b-like")
    ring = simulate_collective("all-reduce", edu, chips=4, nbytes=1 << 20, algo="ring", chunk=64 << 10, once=False)
    print("wrote", save_figure(ring.timeline(), OUT / "ring_timeline.png"))
    for algo in ("ring", "mesh"):
        rows = [
            simulate_collective(
                "all-reduce", b910, chips=8, nbytes=size, algo=algo, chunk=min(1 << 20, size // 8)
            ).to_json()
            for size in (1 << s for s in range(16, 29, 2))
        ]
        fig = sweep_figure(rows, f"all-reduce ({algo}), 8 chips of ascend910b-like")
        print("wrote", save_figure(fig, OUT / f"sweep_{algo}.png"))
    tp = run_tp_layer("prefill", 1, tp=8, seq=256, chip=b910, timing_only=True, chunks=4, **MODELS["llama3-8b"])
    print(tp.text())
    print("wrote", save_figure(tp.timeline(), OUT / "tp_timeline.png"))


if __name__ == "__main__":
    main()
