"""Speed at the scale people run: this tree beside an older revision, cold, side by side in one run.

Each case is a command a user types, run as a new process with an empty cache folder (``DSASIM_CACHE``,
``HOME`` and ``XDG_CACHE_HOME`` pointing at a fresh temporary folder: a user's first run, with both trees'
modules compiled to bytecode beforehand, as an installed package's are), once on this tree
and once on the older revision, alternating, best of ``--repeat``. For each it prints wall seconds, CPU
seconds (what a loaded machine distorts least), peak memory of the process, and the ratio old/new; and it
checks that this tree gives the same cycles with ``DSASIM_FAST=0`` (every shortcut off) as without.

Cases (``--cases`` picks some by name):

- ``prefill1k``: ``dsasim graph decoder-layer --phase prefill --batch 1 --seq 1024 --model llama3-8b --chip
  ascend910b-like --timing-only --json``
- ``matmul4k``: ``dsasim run matmul --shape 4096x4096x4096 --chip ascend910b-like --timing-only --json``
- ``flash4k``: ``dsasim run attention --shape 1x1x4096x128 --schedule flash --chip ascend910b-like
  --timing-only --json``
- ``prefill2k``, ``prefill4k``: the prefill layer at 2,048 and 4,096 tokens (this tree only unless ``--old-too``:
  an older revision may take many minutes or refuse them).

The older revision is a git revision of this repository (``--old REV``, default ``e5c80fa``, the last before
this speed work), checked out into a temporary worktree and run with ``PYTHONPATH`` pointing at it, in the same
virtualenv; a revision with a compiled engine (``simulator/native.py``) runs it compiled, as its ``make bench`` would
(this tree's build copied in where the engine's text is the same, else built). ``--old none`` runs this tree only.

Run: ``.venv/bin/python benchmarks/bench_speed.py [--old REV] [--cases a,b] [--repeat R] [--json]``; the table
in docs/architecture.md ("Speed") was made by it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PREFILL = "graph decoder-layer --phase prefill --batch 1 --model llama3-8b --chip ascend910b-like --timing-only --json"
CASES = {
    "prefill1k": f"{PREFILL} --seq 1024",
    "matmul4k": "run matmul --shape 4096x4096x4096 --chip ascend910b-like --timing-only --json",
    "flash4k": "run attention --shape 1x1x4096x128 --schedule flash --chip ascend910b-like --timing-only --json",
    "prefill2k": f"{PREFILL} --seq 2048",  # within the default budget
    "prefill4k": f"{PREFILL} --seq 4096 --max-instructions 80000000",
}
#: Cases run on the older revision only with --old-too.
NEW_ONLY = ("prefill2k", "prefill4k")


#: the tree's packages, compiled to bytecode before any run (``compile_tree``)
PACKAGES = ("dsasim", "compiler", "simulator", "isa")


def compile_tree(tree: Path) -> None:
    """Compile ``tree``'s modules to bytecode once, as an installed package has them (pip and uv compile at
    install; an editable install's first import writes them): the runs time the command, not Python compiling
    the sources, which it would do on every run where ``PYTHONDONTWRITEBYTECODE`` is set."""
    dirs = [str(tree / p) for p in PACKAGES if (tree / p).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], check=True, capture_output=True)


def run_once(tree: Path, args: str, fast: bool = True, timeout: float = 1800) -> dict:
    """One cold run of ``dsasim ARGS`` on ``tree``: wall and CPU seconds, peak memory (bytes), cycles. Cold is
    a user's first run: the cache folder empty (its bytecode compiled, ``compile_tree``)."""
    home = tempfile.mkdtemp(prefix="dsasim-bench-home-")
    env = dict(os.environ, PYTHONPATH=str(tree), HOME=home, XDG_CACHE_HOME=home, DSASIM_CACHE=f"{home}/cache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["DSASIM_FAST"] = "1" if fast else "0"
    cmd = [sys.executable, "-m", "dsasim.cli", *args.split()]
    # The output goes to files, not pipes (nothing to drain while it runs), and the wait blocks until the command
    # ends: polling it, as this did, added up to the poll's 50 ms to every wall time.
    with open(f"{home}/out", "w+") as out_file, open(f"{home}/err", "w+") as err_file:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=out_file, stderr=err_file, text=True)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    shutil.rmtree(home, ignore_errors=True)
    ok = os.waitstatus_to_exitcode(status) == 0
    cycles = None
    if ok:
        try:
            cycles = json.loads(out).get("cycles")
        except json.JSONDecodeError:
            m = re.search(r'"cycles":\s*(\d+)', out)
            cycles = int(m.group(1)) if m else None
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_bytes": usage.ru_maxrss * 1024,
        "cycles": cycles,
        "ok": ok,
        "error": "" if ok else (err.strip().splitlines() or ["timed out"])[-1][:200],
    }


def best(runs: list[dict]) -> dict:
    good = [r for r in runs if r["ok"]] or runs
    return min(good, key=lambda r: r["cpu_s"])


def checkout(rev: str) -> Path:
    """A temporary worktree of ``rev`` (removed by :func:`remove`)."""
    where = Path(tempfile.mkdtemp(prefix="dsasim-old-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev], check=True,
                   capture_output=True)  # fmt: skip
    return where


def build_native(tree: Path) -> None:
    """Build ``tree``'s compiled engine (``make native``) when it has one, as its ``make bench`` would: an older
    revision run on its pure engine would be timed slower than it is. This tree's builds are copied in first: a
    build is keyed by the compiled modules' text, so one of the same text is used as it is, with nothing rebuilt."""
    if tree == ROOT or not (tree / "simulator" / "native.py").is_file():
        return
    ours = ROOT / "build" / "native"
    if ours.is_dir():
        shutil.copytree(ours, tree / "build" / "native", dirs_exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(tree))
    build = "import simulator.native; simulator.native.main()"  # what its Makefile runs
    subprocess.run([sys.executable, "-c", build], cwd=tree, env=env, check=True, capture_output=True)


def remove(where: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", default="e5c80fa", help="git revision to compare with ('none': this tree only)")
    ap.add_argument("--cases", default="prefill1k,matmul4k,flash4k", help=f"comma-separated, of {', '.join(CASES)}")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each (best CPU time kept)")
    ap.add_argument("--old-too", action="store_true", help="run the 2k/4k prefill on the old revision as well")
    ap.add_argument("--no-exact", action="store_true", help="skip the DSASIM_FAST=0 run of each case")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    names = [c for c in a.cases.split(",") if c]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown[0]!r}: one of {', '.join(CASES)}")
    old = None if a.old == "none" else checkout(a.old)
    rows = []
    try:
        for tree in (ROOT, old):
            if tree is not None:
                build_native(tree)
                compile_tree(tree)
        for name in names:
            new_runs, old_runs = [], []
            for _ in range(a.repeat):
                new_runs.append(run_once(ROOT, CASES[name]))
                if old is not None and (name not in NEW_ONLY or a.old_too):
                    old_runs.append(run_once(old, CASES[name]))
            row = {"case": name, "command": f"dsasim {CASES[name]}", "new": best(new_runs)}
            if old_runs:
                row["old"] = best(old_runs)
                if row["old"]["ok"] and row["new"]["ok"]:
                    row["speedup_wall"] = row["old"]["wall_s"] / row["new"]["wall_s"]
                    row["speedup_cpu"] = row["old"]["cpu_s"] / row["new"]["cpu_s"]
            if not a.no_exact:
                slow = run_once(ROOT, CASES[name], fast=False)
                row["fast_off"] = slow
                row["exact"] = slow["ok"] and slow["cycles"] == row["new"]["cycles"]
            rows.append(row)
            if not a.json:
                print(_line(row), flush=True)
    finally:
        if old is not None:
            remove(old)
    meta = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "python": platform.python_version(),
            "old": a.old, "load": os.getloadavg()}  # fmt: skip
    if a.json:
        print(json.dumps({"meta": meta, "rows": rows}, indent=2))
    else:
        print(f"({meta['machine']}, Python {meta['python']}, load {meta['load'][0]:.1f}; old = {a.old})")
    exact = all(r.get("exact", True) for r in rows)
    return 0 if exact and all(r["new"]["ok"] for r in rows) else 1


def _line(row: dict) -> str:
    new = row["new"]
    text = f"{row['case']:<10} new {_fmt(new)}"
    if "old" in row:
        text += f" | old {_fmt(row['old'])}"
        if "speedup_cpu" in row:
            text += f" | ×{row['speedup_wall']:.2f} wall, ×{row['speedup_cpu']:.2f} CPU"
    if "exact" in row:
        text += " | DSASIM_FAST=0: " + ("same cycles" if row["exact"] else f"DIFFERENT ({row['fast_off']['cycles']})")
    return text


def _fmt(r: dict) -> str:
    if not r["ok"]:
        return f"failed ({r['error']})"
    mib = r["peak_bytes"] / 2**20
    return f"{r['wall_s']:7.2f} s wall {r['cpu_s']:7.2f} s CPU {mib:6.0f} MiB {r['cycles']:,} cycles"


if __name__ == "__main__":
    sys.exit(main())
