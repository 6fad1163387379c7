"""A larger fuzz campaign on the tile language, ``run-kernel`` and ``graph decoder-layer``, run on demand:

    PYTHONPATH=. python tests/fuzz/fuzz_surfaces.py --cases 400 --seed 1

Each case is drawn from a seeded generator: a kernel built from snippets (integer arithmetic, loops, tiles,
masks, helpers; many of them mistakes) launched from Python with random grids, arguments, constexprs and
launch keywords; the same kernels through ``dsasim run-kernel`` with random option values; and
``dsasim graph decoder-layer`` with random sizes. Every case runs in this process under an address-space
limit (4 GB, as ``prlimit --as=4000000000``) and a limit of 30 s of CPU time (not wall time: the machine may
be shared). A case passes when it returns, raises a
``DsasimError`` (Python) or exits 0/1/2 with ``error:`` on a 2 (CLI); a traceback, a hang or a blow-up is
printed with the case to replay it (``--only N``). The summary counts outcomes per surface.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from dsasim.cli import main as cli
from isa import DsasimError

LIMIT_SECONDS = 30
ADDRESS_SPACE = 4_000_000_000

#: Values a constexpr, a scalar argument or a launch keyword may take: sensible, edge and absurd.
VALUES = [0, 1, -1, 2, 3, 16, 17, 64, 256, 1024, 4096, 10**6, 2**30, 10**400, 1.5, float("nan"), float("inf"),
          -(2**31), "s", None, True, False, (), [4], np.int64(8), np.float32(2.0)]  # fmt: skip
SMALL = [1, 2, 3, 4, 16, 64, 100, 256]

#: Kernel bodies after ``offs``/``mask`` are made; ``A`` and ``B`` are constexprs, ``x`` a loaded tile.
SNIPPETS = [
    "q = BLOCK // A\n    tl.store(out_ptr + offs, x * q, mask=mask)",
    "q = pid % A\n    tl.store(out_ptr + offs, x + q, mask=mask)",
    "tl.store(out_ptr + offs, x * A, mask=mask)",
    "tl.store(out_ptr + offs, x / A, mask=mask)",
    "acc = tl.zeros((BLOCK,), dtype=tl.float32)\n    for i in range(A):\n        acc += x\n"
    "    tl.store(out_ptr + offs, acc, mask=mask)",
    "acc = tl.zeros((BLOCK,), dtype=tl.float32)\n    for i in range(A):\n        for j in range(B):\n"
    "            acc += tl.load(x_ptr + offs, mask=mask)\n    tl.store(out_ptr + offs, acc, mask=mask)",
    "t = tl.zeros((A, B), dtype=tl.float32)\n    tl.store(out_ptr + offs, x + tl.sum(t), mask=mask)",
    "r = tl.arange(A, B)\n    tl.store(out_ptr + offs, x, mask=mask)",
    "y = tl.load(x_ptr + offs * A, mask=mask)\n    tl.store(out_ptr + offs, y, mask=mask)",
    "tl.store(out_ptr + offs, x, mask=offs < A)",
    "y = tl.load(x_ptr + offs, mask=offs < A)\n    tl.store(out_ptr + offs, y)",
    "y = tl.load(x_ptr + offs, mask=offs < A, other=B)\n    tl.store(out_ptr + offs, y, mask=mask)",
    "tl.store(out_ptr + offs, helper(x, A), mask=mask)",
    "tl.store(out_ptr + offs, loop_helper(x), mask=mask)",
    "s = tl.sum(x, axis=A)\n    tl.store(out_ptr + offs, x + s, mask=mask)",
    "z = x[:, None] + x[None, :]\n    tl.store(out_ptr + offs, tl.sum(z, axis=1), mask=mask)",
    "tl.store(out_ptr + offs, tl.exp(x) * 10**A, mask=mask)",
    "tl.store(out_ptr + offs, x.to(tl.float16) + A, mask=mask)",
    "i = 0\n    while i < A:\n        i += 1\n        x = x + 1.0\n    tl.store(out_ptr + offs, x, mask=mask)",
    "tl.store(x_ptr + offs, x, mask=mask)",
    "tl.store(out_ptr + offs + A, x, mask=mask)",
]

KERNEL = """
import dsasim
import dsasim.language as tl


@dsasim.jit
def helper(v, k):
    return helper(v, k - 1) if k > 0 else v


@dsasim.jit
def loop_helper(v):
    return loop_helper(v)


@dsasim.jit
def kernel(x_ptr, out_ptr, n, A: tl.constexpr, B: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    {body}
"""


def pick(rng: random.Random, good: list, bad: list, p: float = 0.75) -> object:
    """A good value with probability ``p`` (so that most cases reach past the first check), else a bad one."""
    return rng.choice(good if rng.random() < p else bad)


def load(path: Path) -> object:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def kernel_file(rng: random.Random, folder: Path, i: int) -> tuple[Path, str]:
    body = rng.choice(SNIPPETS)
    path = folder / f"k{i}.py"
    path.write_text(KERNEL.format(body=body))
    return path, body.split("\n")[0]


def array(rng: random.Random, n: int) -> object:
    kind = pick(rng, ["f32", "f32", "f16"], ["f64", "i32", "bool", "ro", "strided", "0d", "list", "short"], 0.85)
    a = np.random.default_rng(rng.randrange(1000)).standard_normal(n if kind != "short" else max(1, n // 3))
    if kind == "f16":
        return a.astype(np.float16)
    if kind in ("f64", "short"):
        return a
    if kind == "i32":
        return a.astype(np.int32)
    if kind == "bool":
        return a > 0
    if kind == "ro":
        a = a.astype(np.float32)
        a.flags.writeable = False
        return a
    if kind == "strided":
        return np.ones(2 * n, np.float32)[::2]
    if kind == "0d":
        return np.float32(1.0)
    if kind == "list":
        return [1.0] * n
    return a.astype(np.float32)


GOOD_GRIDS = [(1,), (2,), (4,), 3, (2, 2), lambda meta: (2,)]
BAD_GRIDS = [None, (0,), (-1,), (10**9,), (1000, 1000, 1000), (1.5,), (True,), "4", lambda meta: None, (1, 1, 1, 1),
             [2], (2**31, 2**31)]  # fmt: skip
BAD_LAUNCH = [{"cores": 0}, {"cores": -3}, {"cores": 10**9}, {"cores": 2.5}, {"num_stages": 0}, {"num_stages": 4},
              {"max_instructions": 0}, {"max_instructions": 1}, {"max_instructions": -5}, {"chip": "nope"},
              {"chip": 3}]  # fmt: skip
GOOD_LAUNCH = [{}, {"cores": 2}, {"num_stages": 1}, {"timing_only": True}, {"interpret": True}, {"check": True},
               {"sanitize": True}, {"max_instructions": 100}, {"chip": "edu-separated"}]  # fmt: skip


def python_case(rng: random.Random, folder: Path, i: int) -> tuple[str, Callable[[], object]]:
    path, first = kernel_file(rng, folder, i)
    grid = pick(rng, GOOD_GRIDS, BAD_GRIDS)
    size = rng.choice([64, 100, 1000, 4096])
    x, out = array(rng, size), array(rng, size)
    n = pick(rng, [size, size - 3, 1], [0, -1, 10**12, 1.5, "n"])
    consts = {k: pick(rng, SMALL, VALUES, 0.7) for k in ("A", "B")}
    consts["BLOCK"] = pick(rng, [16, 64, 128, 256], VALUES, 0.8)
    launch = pick(rng, GOOD_LAUNCH, BAD_LAUNCH)

    def run() -> object:
        module = load(path)
        return module.kernel[grid](x, out, n, **consts, **launch)

    text = f"python {first!r} grid={grid!r} n={n!r} consts={consts!r} launch={launch!r} x={type(x).__name__}"
    return text, run


def run_kernel_case(rng: random.Random, folder: Path, i: int) -> tuple[str, Callable[[], object]]:
    path, _ = kernel_file(rng, folder, i)
    n = rng.choice(SMALL)
    good = [f"f32[{n}]", f"f16[{n}]", f"bf16[{n}]"]
    bad = ["f32[500000000]", "f64[8]", "f32[0]", "f32[4x4]", "q", f"i32[{n}]", "f32[99999999999999999999]"]
    arrays = [pick(rng, good, bad, 0.85) for _ in range(2)]
    target = pick(rng, [f"{path}::kernel"], [f"{path}::nope", f"{path}", "nowhere.py::k", f"{path}::helper",
                                                f"{folder}::kernel"], 0.85)  # fmt: skip
    argv = ["run-kernel", target, "--grid", pick(rng, ["1", "2", "4", "2,2"], ["0", "-1", "1000000000", "x", ""])]
    argv += ["--args", *arrays, pick(rng, [str(n), str(n - 1)], ["nan", "1e400", "-1", "x", "1_000"])]
    for name in ("A", "B", "BLOCK"):
        value = pick(rng, ["1", "3", "16", "64"], ["0", "-1", "1073741824", "nan", "x", "", "True"], 0.8)
        argv += ["--const", f"{name}={value}"]
    argv += rng.choice([[], ["--const", "A=2"], ["--const", "num_stages=2"], ["--const", "chip=edu"],
                        ["--cores", rng.choice(["0", "-1", "2", "x"])], ["--seed", rng.choice(["-1", "0", "x"])],
                        ["--num-stages", rng.choice(["0", "2", "9"])], ["--timing-only"], ["--check"], ["--by-line"],
                        ["--json"], ["--sanitize"], ["--max-instructions", rng.choice(["0", "1", "50"])],
                        ["--trace", str(folder)], ["--timeline", "/nonexistent/t.png"]])  # fmt: skip
    return "cli " + " ".join(argv), lambda: _cli(argv)


DECODER_OPTIONS = {
    "--phase": (["decode", "prefill"], ["x"]),
    "--batch": (["1", "2", "4"], ["0", "-1", "1000000000", "x"]),
    "--seq": (["8", "16"], ["0", "-3", "100000000"]),
    "--context": (["8", "100"], ["0", "-1", "100000000"]),
    "--layers": (["2"], ["0", "-1"]),
    "--dtype": (["f16"], ["f64", "bf16"]),
    "--kv-chunks": (["1", "3"], ["0", "-2"]),
    "--kv-capacity": (["64", "64,128"], ["0", "x", "100000000000"]),
    "--batches": (["1,2"], ["0", "1,1000000000", "2,4"]),
    "--cores": (["2"], ["0", "-1"]),
    "--heads": (["4", "8"], ["0", "3"]),
    "--hidden": (["128"], ["0", "17"]),
    "--seed": (["3"], ["-1"]),
    "--max-instructions": (["2000000"], ["0", "-1"]),
}


def decoder_case(rng: random.Random, folder: Path, i: int) -> tuple[str, Callable[[], object]]:
    argv = ["graph", "decoder-layer", "--model", "tiny", "--timing-only"]
    for flag in rng.sample(sorted(DECODER_OPTIONS), rng.randint(1, 3)):
        good, bad = DECODER_OPTIONS[flag]
        argv += [flag, pick(rng, good, bad, 0.6)]
    return "cli " + " ".join(argv), lambda: _cli(argv)


def _cli(argv: list[str]) -> int:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli(argv)
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    text = err.getvalue()
    if rc not in (0, 1, 2) or "Traceback" in text or (rc == 2 and "error: " not in text):
        raise AssertionError(f"exit {rc}: {text[-1500:]}")
    return rc


class Hang(Exception):
    pass


def _alarm(*_: object) -> None:
    raise Hang(f"more than {LIMIT_SECONDS} s of CPU time")


SURFACES = {"python": python_case, "run-kernel": run_kernel_case, "decoder-layer": decoder_case}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", type=int, help="replay case N")
    p.add_argument("--surface", choices=tuple(SURFACES), action="append", help="only these surfaces")
    args = p.parse_args(argv)
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.signal(signal.SIGPROF, _alarm)
    surfaces = args.surface or list(SURFACES)
    seen: Counter[tuple[str, str]] = Counter()
    bad = 0
    slowest = (0.0, "")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            rng = random.Random(f"{args.seed}:{i}")
            surface = surfaces[i % len(surfaces)]
            text, run = SURFACES[surface](rng, Path(tmp), i)
            if args.only is not None and i != args.only:
                continue
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_PROF, LIMIT_SECONDS)
            try:
                result = run()
                outcome = f"exit {result}" if isinstance(result, int) else "ran"
            except DsasimError:
                outcome = "refused"
            except (Hang, AssertionError, MemoryError, RecursionError, Exception) as e:
                outcome = "FAIL"
                bad += 1
                detail = "".join(traceback.format_exception(e)[-6:])
                print(f"case {i} FAILED ({type(e).__name__}): {text}\n{detail}", file=sys.stderr)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            took = time.perf_counter() - t0
            slowest = max(slowest, (took, f"case {i}: {text}"))
            seen[(surface, outcome)] += 1
    for (surface, outcome), n in sorted(seen.items()):
        print(f"{surface:<14} {outcome:<8} {n:>5}")
    print(f"{sum(seen.values())} cases, {bad} failures; slowest {slowest[0]:.1f} s ({slowest[1][:160]})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
