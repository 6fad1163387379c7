"""Make every picture in docs/analysis.md: ``.venv/bin/python docs/figures/make_figures.py``.

The CLI pictures are made by running exactly the commands the page shows (``COMMANDS``); the rest by the
Python calls the page shows. Run from the repository root; pass another folder to write elsewhere.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from dsasim.cli import main as dsasim  # noqa: E402
from simulator import simulate  # noqa: E402
from simulator.plots import roofline, save_figure  # noqa: E402

#: The CLI commands of docs/analysis.md, each with ``{out}`` for the figures folder.
COMMANDS = (
    "run-asm examples/vector_add_single.s --timeline {out}/timeline_single.png",
    "run-asm examples/vector_add_double.s --timeline {out}/timeline_double.png",
    "run-asm examples/vector_add_double.s --timeline {out}/timeline_window.png --window 600:1800",
    "run-asm examples/matmul_tile.s --timeline {out}/timeline_matmul.png --roofline {out}/roofline_matmul.png",
    "run-asm examples/two_core_scale.s --cores 2 --timeline {out}/timeline_two_core.png",
    "run-asm examples/vector_add_double.s --trace {out}/vector_add_double.trace.json",
    # tile pictures and sweeps of compiled operators
    "tiles matmul --shape 256x256x256 --tile m=64,n=64,k=64 --order m,n,k --step 5 -o {out}/tiles_mnk_step5.png",
    "tiles matmul --shape 256x256x256 --tile m=64,n=64,k=64 --order m,k,n --buffers c=1 --step 5 "
    "-o {out}/tiles_mkn_step5.png",
    "tiles matmul --shape 256x256x256 --tile m=64,n=64,k=64 --order m,k,n --buffers c=1 --core 0 "
    "-o {out}/tiles_mkn_core0.png",
    "tiles matmul --shape 256x256x256 --tile m=64,n=64,k=64 --cores 3 --parallel m,n -o {out}/tiles_cores.png",
    "tiles rmsnorm --shape 60x1000 --tile r=8 --cores 2 --core 1 --step 3 -o {out}/tiles_rmsnorm.png",
    "sweep matmul --shape 256x256x256 --vary tile_m=16,32,64,128 --vary buffers=1,2 --plot {out}/sweep_matmul.png",
    "sweep matmul --shape 256x256x256 --tile n=256 --vary tile_m=32,64,128 --vary buffers=1,2",
    "sweep matmul --shape 1024x1024x1024 --chip ascend910b-like --vary cores=1,2,4,8,16,24 "
    "--plot {out}/sweep_cores.png",
    "sweep add --vary shape=256x1024,512x1024,1024x1024 --vary tile_r=2,8,32 --metric gbps --plot {out}/sweep_add.png",
)


def python_figures(out: Path) -> None:
    """The pictures made from Python (several runs on one roofline; a chip other than edu)."""
    single = simulate("examples/vector_add_single.s")
    double = simulate("examples/vector_add_double.s")
    fig = roofline([single, double], labels=["vector add, 1 buffer", "vector add, 2 buffers"])
    save_figure(fig, out / "roofline_vector_add.png")
    big = simulate("examples/matmul_tile.s", chip="ascend910b-like")
    save_figure(big.roofline(), out / "roofline_matmul_910b.png")
    (out / "run_report.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>dsasim run</title>" + double._repr_html_() + "\n"
    )


def main(out: str | Path = "docs/figures") -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for command in COMMANDS:
        argv = shlex.split(command.format(out=out))
        if dsasim(argv) != 0:
            raise SystemExit(f"failed: dsasim {' '.join(argv)}")
    python_figures(out)


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    with open(os.devnull, "w") as quiet, __import__("contextlib").redirect_stdout(quiet):  # reports: not needed
        main(sys.argv[1] if len(sys.argv) > 1 else "docs/figures")
    print(f"wrote {len(COMMANDS)} CLI outputs and 3 Python figures", file=sys.stderr)
