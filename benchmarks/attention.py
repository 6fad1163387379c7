"""Attention on the DSA: naive vs flash, coupled vs separated cores — the measurements of docs/attention.md.

Every number is measured here, on ``ascend910b-like`` (one head, head dim 128, one core unless a table
says otherwise), by compiling with the default schedules and simulating timing-only (which gives the
cycles of a functional run; the tests check that for every schedule on both kinds of chip)::

    .venv/bin/python benchmarks/attention.py            # print the tables (about ten minutes)
    .venv/bin/python benchmarks/attention.py --write    # also rewrite them and the figures in docs/
    .venv/bin/python benchmarks/attention.py --check    # exit 1 if the attention targets below are missed

The attention targets, at S=4096, D=128: flash reaches ≥ 80% of its bound max(cube time, vector time,
memory time) — each the busy cycles its instructions need at the chip's rates, memory the bytes of
the busiest GM path at its peak or MTE2's own load time, whichever is longer — and takes ≥ 2× fewer
cycles than naive.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.doc_blocks import write_blocks  # noqa: E402
from compiler import BufferCapacityError, ScheduleError  # noqa: E402
from compiler.attention import Attention, AttentionSchedule, plan_attention  # noqa: E402
from dsasim.api import KernelRun, compile_and_run  # noqa: E402
from isa import Pipe  # noqa: E402
from simulator import load_chip  # noqa: E402

DOC = ROOT / "docs" / "attention.md"
FIGURES = ROOT / "docs" / "attention-figures"
CHIP = "ascend910b-like"
D = 128


def run(s: int, algorithm: str, chip: str = CHIP, **kw: object) -> KernelRun:
    causal = bool(kw.pop("causal", False))
    precision = str(kw.pop("precision", "fast"))
    op = Attention(1, 1, s, D, causal, precision)
    return compile_and_run(op, AttentionSchedule(algorithm, **kw), chip, timing_only=True)


@dataclass
class Table:
    name: str
    header: tuple[str, ...]
    rows: list[tuple]
    command: str

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines) + f"\n\nOne row of it: `{self.command}`"


def _mb(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def _k(n: float) -> str:
    return f"{n:,.0f}"


# ------------------------------------------------------------------------------------------ bounds


@dataclass(frozen=True)
class Bound:
    """The bound of one run: each resource's work at its own rate, on the busiest core."""

    cube: int
    vector: int
    memory: float
    memory_by: str

    @property
    def cycles(self) -> float:
        return max(self.cube, self.vector, self.memory)

    @property
    def by(self) -> str:
        return max((("Cube", self.cube), ("Vector", self.vector), (self.memory_by, self.memory)), key=lambda kv: kv[1])[
            0
        ]


def bound(r: KernelRun) -> Bound:
    """Cube and Vector: the busy cycles of their instructions (each at its timing rule); memory: the bytes
    of the busiest GM path (or all of GM) at its peak, per core, or the load queue's own time (MTE2's transfers
    at the engine's rule — start-up, bursts, ND→NZ — as the simulator's roofline counts it), whichever is
    longer: the term the run's roofline and diagnosis name when loads bound it."""
    cube = max(pipes[Pipe.CUBE].busy for pipes in r.stats.cores)
    vector = max(pipes[Pipe.V].busy for pipes in r.stats.cores)
    bounds = r.stats.roofline.bounds
    paths = {k: v for k, v in bounds.items() if k == "GM" or "gm" in k.split("_") or k == "mte2"}
    by, memory = max(paths.items(), key=lambda kv: kv[1])
    label = {"GM": "GM", "mte2": "MTE2"}.get(by) or r.chip.paths[by].label
    return Bound(cube, vector, memory, label)


# -------------------------------------------------------------------------------------------- tables


def traffic() -> Table:
    """GM bytes moved and GM bytes held, naive vs flash, as the sequence grows (formula = measured)."""
    chip = load_chip(CHIP)
    rows = []
    for s in (256, 512, 1024, 2048, 4096, 8192):
        n = plan_attention(Attention(1, 1, s, D), AttentionSchedule("naive"), chip)
        f = plan_attention(Attention(1, 1, s, D), AttentionSchedule("flash"), chip)
        rows.append((s, _mb(n.traffic.total), _mb(f.traffic.total), f"{n.traffic.total / f.traffic.total:.2f}×",
                     _mb(n.peak_gm_bytes), _mb(f.peak_gm_bytes)))  # fmt: skip
    header = ("S", "naive: GM bytes moved", "flash: GM bytes moved", "naive / flash", "naive: GM held",
              "flash: GM held")  # fmt: skip
    return Table("traffic", header, rows, f"dsasim compile attention --shape 1x1x4096x{D} --chip {CHIP} --traffic")


#: the Q block table: per chip, the tiles that stay fixed while ``block_q`` grows (tile_q, tile_kv, k0)
QBLOCK_TILES = {"edu": (32, 192, 16), CHIP: (32, 320, 32)}
QBLOCK_S = 4096


def qblock(measure: bool = True) -> Table:
    """GM bytes against the Q block size at S=4096, one core: K and V are read once per Q block, so the
    traffic falls as the block grows, until L1, UB or the event ids run out. ``measure``: also simulate each
    row for its cycles (timing-only; about a minute), else leave them out (what the docs test compares)."""
    rows = []
    op = Attention(1, 1, QBLOCK_S, D)
    for name, (tq, tk, k0) in QBLOCK_TILES.items():
        chip = load_chip(name)
        naive = plan_attention(op, AttentionSchedule("naive"), chip).traffic.total
        default = plan_attention(op, AttentionSchedule("flash"), chip).schedule
        fixed = [AttentionSchedule("flash", tq, tk, k0, 2, block_q=q * tq) for q in range(1, 9)]
        for label, sched in [("", s) for s in fixed] + [("default: ", default)]:
            try:
                plan = plan_attention(op, sched, chip)
            except (BufferCapacityError, ScheduleError):
                continue  # larger blocks do not fit either
            total = plan.traffic.total
            cycles = _k(run(QBLOCK_S, "flash", name, **_knobs(sched)).cycles) if measure else "-"
            rows.append((name, label + sched.text().split(" · ")[1], sched.block_q, -(-QBLOCK_S // sched.block_q),
                         _mb(total), f"{total / naive:.2f}", cycles))  # fmt: skip
    header = ("chip", "flash tiles", "block_q", "K/V reads", "GM bytes moved", "of naive's", "cycles")
    cmd = f"dsasim run attention --shape 1x1x{QBLOCK_S}x{D} --chip edu --tile q=32,qb=128,kv=192,k0=16 --timing-only"
    return Table("qblock", header, rows, cmd)


def _knobs(s: AttentionSchedule) -> dict:
    return {"tile_q": s.tile_q, "block_q": s.block_q, "tile_kv": s.tile_kv, "k0": s.k0, "depth": s.depth}


def cycles() -> tuple[Table, dict]:
    rows, runs = [], {}
    for s in (512, 1024, 2048, 4096):
        n, f = run(s, "naive"), run(s, "flash")
        runs[s] = (n, f)
        b = bound(f)
        share = f"{100 * b.cycles / f.cycles:.1f}% ({b.by})"
        intensity = f"{f.stats.roofline.intensity:.0f} / {n.stats.roofline.intensity:.0f}"
        fraction = f"{100 * f.stats.roofline.fraction:.0f}% / {100 * n.stats.roofline.fraction:.0f}%"
        rows.append((s, _k(n.cycles), _k(f.cycles), f"{n.cycles / f.cycles:.2f}×", share, intensity, fraction))
    header = ("S", "naive cycles", "flash cycles", "speed-up", "flash: % of its bound (by)",
              "FLOP per GM byte (flash / naive)", "% of roofline bound (flash / naive)")  # fmt: skip
    cmd = f"dsasim run attention --shape 1x1x4096x{D} --chip {CHIP} --schedule naive --timing-only"
    return Table("cycles", header, rows, cmd), runs


def target(runs: dict) -> tuple[Table, dict]:
    """The attention benchmark, with every term of the bound."""
    n, f = runs[4096]
    rows, data = [], {}
    for label, r in (("naive", n), ("flash", f), ("flash, precision high", run(4096, "flash", precision="high")),
                     ("naive, precision high", run(4096, "naive", precision="high"))):  # fmt: skip
        b = bound(r)
        memory, share = f"{_k(b.memory)} ({b.memory_by})", f"{100 * b.cycles / r.cycles:.1f}%"
        rows.append((label, r.schedule.text(), _k(r.cycles), _k(b.cube), _k(b.vector), memory, share))
        data[label] = (r.cycles, b)
    header = ("S=4096, D=128", "schedule (default)", "cycles", "Cube busy", "Vector busy", "memory", "bound / cycles")
    cmd = f"dsasim run attention --shape 1x1x4096x{D} --chip {CHIP} --timing-only"
    return Table("target", header, rows, cmd), data


def variants(runs: dict) -> Table:
    """Knobs at S=4096: the mask, the depth, the cores."""
    f = runs[4096][1]
    rows = [("flash (default)", f.schedule.text(), _k(f.cycles), _mb(f.stats.gm_bytes), _busiest(f))]
    s = f.schedule
    for label, r in (
        ("flash, causal", run(4096, "flash", causal=True)),
        ("naive, causal", run(4096, "naive", causal=True)),
        ("flash, --depth 1", run(4096, "flash", **{**_knobs(s), "depth": 1})),
        ("flash, 4 cores", run(4096, "flash", cores=4)),
    ):
        rows.append((label, r.schedule.text(), _k(r.cycles), _mb(r.stats.gm_bytes), _busiest(r)))
    header = ("S=4096, D=128", "schedule", "cycles", "GM bytes moved", "busiest unit")
    cmd = f"dsasim run attention --shape 1x1x4096x{D} --chip {CHIP} --causal --timing-only"
    return Table("variants", header, rows, cmd)


def modes(runs: dict) -> tuple[Table, dict]:
    """Coupled (one core has both units) vs separated (1 AIC + 2 AIV through GM)."""
    rows, out = [], {}
    sep = f"{CHIP}-separated"
    n, f = runs[4096]
    for label, r in (("coupled, naive", n), ("coupled, flash", f), ("separated, naive", run(4096, "naive", sep)),
                     ("separated, flash", run(4096, "flash", sep))):  # fmt: skip
        rows.append((label, r.schedule.text(), _k(r.cycles), _mb(r.stats.gm_bytes), _busiest(r)))
        out[label] = r
    header = ("S=4096, D=128, one AI core", "schedule", "cycles", "GM bytes moved", "busiest unit")
    cmd = f"dsasim run attention --shape 1x1x4096x{D} --chip {sep} --timing-only"
    return Table("modes", header, rows, cmd), out


def _busiest(r: KernelRun) -> str:
    best = max(
        ((c, p, ps.busy) for c, pipes in enumerate(r.stats.cores) for p, ps in pipes.items() if p is not Pipe.S),
        key=lambda t: t[2],
    )
    c, p, busy = best
    kind = r.run.core_kinds[c] if r.run.core_kinds and r.run.core_kinds[c] else ""
    where = f"{kind} " if kind else ""
    return f"{where}{p.label} {100 * busy / r.cycles:.0f}%"


# ------------------------------------------------------------------------------------------ figures


def figures(runs: dict, mode_runs: dict) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from simulator.plots import save_figure
    from simulator.plots.style import new_figure, styled

    FIGURES.mkdir(exist_ok=True)
    out = []
    chip = load_chip(CHIP)
    ss = (256, 512, 1024, 2048, 4096, 8192)
    plans = {
        a: [plan_attention(Attention(1, 1, s, D), AttentionSchedule(a), chip) for s in ss] for a in ("naive", "flash")
    }
    with styled():
        fig = new_figure(10, 4.2)
        ax1, ax2 = fig.subplots(1, 2)
        for a, style in (("naive", "o-"), ("flash", "s-")):
            ax1.loglog(ss, [p.traffic.total for p in plans[a]], style, label=a)
            ax2.loglog(ss, [p.peak_gm_bytes for p in plans[a]], style, label=a)
        ax1.set_title("GM bytes moved")
        ax2.set_title("GM bytes held (q, k, v, o + workspaces)")
        for ax in (ax1, ax2):
            ax.set_xlabel("sequence length S")
            ax.set_ylabel("bytes")
            ax.grid(alpha=0.3, which="both")
            ax.legend()
        out.append(save_figure(fig, FIGURES / "traffic.png"))
        plt.close(fig)
    from simulator.plots import roofline

    n, f = runs[4096]
    fig = roofline([n.run, f.run], ["naive S=4096", "flash S=4096"], title=f"attention 1x1x4096x{D} on {CHIP}")
    out.append(save_figure(fig, FIGURES / "roofline.png"))
    plt.close(fig)
    # the overlap: a few steps of flash at S=1024, depth 2 and depth 1
    for name, r, width in (
        ("timeline_depth2", run(1024, "flash", tile_q=64, block_q=64, tile_kv=256, k0=32, depth=2), 5000),
        ("timeline_depth1", run(1024, "flash", tile_q=64, block_q=64, tile_kv=256, k0=32, depth=1), 5000),
        ("timeline_separated", run(1024, "flash", f"{CHIP}-separated"), 5000),
    ):
        lo = r.cycles // 3
        title = f"flash, depth {r.schedule.depth}, {r.chip.name}: cycles {lo:,}–{lo + width:,} of {r.cycles:,}"
        fig = r.timeline(window=(lo, lo + width), title=title)
        out.append(save_figure(fig, FIGURES / f"{name}.png"))
        plt.close(fig)
    return out


# -------------------------------------------------------------------------------------------- driver


def write(tables: list[Table], doc: Path = DOC) -> None:
    write_blocks(doc, "attention", {t.name: t.markdown() for t in tables})


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite the tables and figures of docs/attention.md")
    p.add_argument("--check", action="store_true", help="exit 1 if the attention performance targets are missed")
    args = p.parse_args()
    t_traffic = traffic()
    t_qblock = qblock()
    t_cycles, runs = cycles()
    t_target, data = target(runs)
    t_variants = variants(runs)
    t_modes, mode_runs = modes(runs)
    tables = [t_traffic, t_qblock, t_cycles, t_target, t_variants, t_modes]
    for t in tables:
        print(f"## {t.name}\n\n{t.markdown()}\n")
    naive, (fc, fb) = data["naive"][0], data["flash"]
    share, speedup = fb.cycles / fc, naive / fc
    print(f"target: flash at {100 * share:.1f}% of its bound (≥ 80%), {speedup:.2f}× fewer cycles than naive (≥ 2×)")
    if args.write:
        write(tables)
        for path in figures(runs, mode_runs):
            print(f"wrote {path.relative_to(ROOT)}")
        print(f"wrote {DOC.relative_to(ROOT)}")
    if args.check and (share < 0.8 or speedup < 2.0):
        print("error: the attention performance targets are missed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
