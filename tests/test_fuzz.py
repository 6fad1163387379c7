"""Fuzzing the front door as a careless user or an attacker would: mutated assembly, mutated chip presets and
random command lines. Whatever goes in, ``dsasim`` must answer with exit status 0, 1 (a check or the
sanitizer failed) or 2 (a user mistake, with ``error:`` and a hint) — never a traceback — within a bounded
time and memory. Seeded (the ``ci`` hypothesis profile derandomizes) and bounded: about 30 s in all.
"""

from __future__ import annotations

import os
import resource
import time
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsasim.cli import main

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
PRESET = (ROOT / "simulator" / "presets" / "edu.toml").read_text()

#: Seconds one command may take, and host memory (max RSS growth) the whole fuzz may add.
TIME_LIMIT = 20.0
MEMORY_LIMIT = 2 * 2**30

#: Examples per test: 25 in the suite; ``DSASIM_FUZZ_EXAMPLES=2000`` for a longer hunt.
EXAMPLES_PER_TEST = int(os.environ.get("DSASIM_FUZZ_EXAMPLES", "25"))
FUZZ = settings(
    max_examples=EXAMPLES_PER_TEST, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
#: Exit statuses seen, by test: printed with ``-s`` to see that the fuzz reaches past the parser.
SEEN: dict[str, dict[int, int]] = {}


def run_cli(capsys, argv: list[str]) -> tuple[int, str]:
    """``dsasim ARGV`` in this process: its exit status and everything it printed; fails on a traceback
    (any exception but ``SystemExit``), a status other than 0/1/2, or a slow answer."""
    t0 = time.perf_counter()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse: usage errors, --help, --version
        rc = e.code
    elapsed = time.perf_counter() - t0
    out, err = capsys.readouterr()
    text = out + err
    assert rc in (0, 1, 2), (argv, rc, text[-2000:])
    assert "Traceback" not in text, (argv, text[-2000:])
    if rc == 2:
        assert "error: " in err or "usage:" in err, (argv, err)
    assert elapsed < TIME_LIMIT, (argv, f"{elapsed:.1f} s")
    counts = SEEN.setdefault(str(argv[0]) if argv else "", {})
    counts[rc] = counts.get(rc, 0) + 1
    return rc, text


@pytest.fixture(scope="module", autouse=True)
def bounded_memory():
    """The whole fuzz must not grow this process by more than MEMORY_LIMIT (max RSS, KiB on Linux)."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    yield
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    print(f"\nfuzz: exit statuses by command {SEEN}; max RSS grew {grown / 2**20:,.0f} MiB")
    assert grown < MEMORY_LIMIT, f"the fuzz grew the process by {grown / 2**30:.1f} GiB"


# ------------------------------------------------------------------------------- assembly

EXAMPLE_NAMES = ("vector_add_double.s", "matmul_tile.s", "two_core_scale.s")
SOURCES = [(EXAMPLES / n).read_text().splitlines() for n in EXAMPLE_NAMES]
LINES = [line for source in SOURCES for line in source if line.strip() and not line.lstrip().startswith(";")]
NUMBERS = st.sampled_from(
    ["0", "1", "-1", "16", "0x100", "0xffffffff", "4000000000", "99999999999999999999", "2**40", "1e9", "nan", "-0"]
)
TOKENS = st.sampled_from(["f16", "f32", "i8", "bf16", "ub", "gm", "l1", "->", ",", "[", "]", "core=", "diag=", "x"])


@st.composite
def mutated_line(draw) -> str:
    line = draw(st.sampled_from(LINES))
    words = line.replace(",", " , ").split()
    for _ in range(draw(st.integers(0, 3))):
        if not words:
            break
        i = draw(st.integers(0, max(0, len(words) - 1)))
        what = draw(st.sampled_from(["number", "token", "drop", "dup"]))
        if what == "number":
            words[i] = draw(NUMBERS)
        elif what == "token":
            words.insert(i, draw(TOKENS))
        elif what == "drop" and words:
            words.pop(i)
        elif words:
            words.insert(i, words[i])
    return " ".join(words)


@st.composite
def program(draw) -> str:
    """One of the examples with up to three lines mutated, dropped or swapped in from another, and maybe a
    tensor of a random (often absurd) size."""
    lines = list(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["mutate", "drop", "swap"]))
        if how == "mutate":
            lines[i] = draw(mutated_line())
        elif how == "drop":
            lines.pop(i)
        else:
            lines[i] = draw(st.sampled_from(LINES))
    if draw(st.booleans()):
        size = draw(st.sampled_from(["64", "8192", "100000000", "4000000000", "0", "-5", "2**40"]))
        lines.insert(1, f".tensor big f32[{size}] scratch")
    return "\n".join(lines) + "\n"


@FUZZ
@given(text=program(), sanitize=st.booleans(), timing=st.booleans())
def test_fuzzed_assembly(capsys, tmp_path_factory, text, sanitize, timing):
    path = tmp_path_factory.mktemp("asm") / "fuzz.s"
    path.write_text(text)
    argv = ["run-asm", path, *(["--sanitize"] if sanitize else []), *(["--timing-only"] if timing else [])]
    run_cli(capsys, argv)


# ------------------------------------------------------------------------------- chip presets

FIELDS = [
    line.split("=")[0].strip()
    for line in PRESET.splitlines()
    if "=" in line and not line.lstrip().startswith(("#", "[")) and "{" not in line
]
VALUES = st.sampled_from(
    ["0", "-1", "1", "3", "17179869184", "1e308", "nan", "inf", '"x"', "true", "[1, 2]", "{ a = 1 }", "2"]
)


@FUZZ
@given(
    field=st.sampled_from(FIELDS),
    value=VALUES,
    buffer=st.sampled_from(["l1", "l0a", "l0b", "l0c", "ub"]),
    size=st.sampled_from(["0", "512", "4096", "67108864", "67108865", "17179869184", "-1"]),
    raw=st.sampled_from([None, b"\xff\xfe\x00", b"", b"[[[", b"name = 1\n" * 3]),
)
def test_fuzzed_presets(capsys, tmp_path_factory, field, value, buffer, size, raw):
    lines = []
    done = False
    for line in PRESET.splitlines():
        key = line.split("=")[0].strip()
        if not done and key == field and "{" not in line:
            line, done = f"{key} = {value}", True
        elif key == buffer and "size" in line:
            line = f"{key} = {{ size = {size}, align = 32 }}"
        lines.append(line)
    path = tmp_path_factory.mktemp("chip") / "chip.toml"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(lines) + "\n")
        tomllib.loads(path.read_text())  # the mutation keeps TOML valid; the values are what is fuzzed
    run_cli(capsys, ["run-asm", EXAMPLES / "vector_add_single.s", "--chip", path])


# ------------------------------------------------------------------------------- command lines

DIMS = st.sampled_from(["0", "1", "3", "16", "17", "64", "100", "256", "-2", "1000000", "99999999999", "x", ""])
#: Shapes each operator accepts, so that fuzzed options reach the compiler and the simulator.
SHAPES = {
    "matmul": ["64x64x64", "100x70x90", "16x16x16"], "attention": ["1x2x64x32", "1x1x128x64"],
    "conv2d": ["1x16x8x8x16x3x3"],
}  # fmt: skip
OPS = st.sampled_from(["matmul", "add", "mul", "relu", "exp", "gelu", "softmax", "rmsnorm", "layernorm",
                       "attention", "conv2d", "rowsum", "nope", ""])  # fmt: skip
OPTIONS = st.sampled_from([
    [], ["--timing-only"], ["--tile", "m=16,n=16,k=16"], ["--tile", "r=0"], ["--tile", "q"], ["--buffers", "4"],
    ["--buffers", "0"], ["--prefetch", "-1"], ["--prefetch", "5"], ["--cores", "0"], ["--cores", "3"],
    ["--order", "k,m,n"], ["--order", "z"], ["--eps", "nan"], ["--eps", "-1"], ["--eps", "1e-5"], ["--dtype", "f32"],
    ["--dtype", "q7"], ["--out-dtype", "f32"], ["--bias"], ["--act", "relu"], ["--broadcast"], ["--causal"],
    ["--chip", "nope"], ["--chip", "ascend910b-like"], ["--seed", "-1"], ["--json"], ["--sanitize"],
    ["--manual-sync"], ["--parallel", "c"], ["--window", "5:1"], ["--max-instructions", "0"],
])  # fmt: skip
COMMANDS = st.sampled_from(["run", "compile", "tiles", "sweep", "rnu", "chips", "--version", ""])


@FUZZ
@given(
    command=COMMANDS,
    op=OPS,
    dims=st.lists(DIMS, min_size=1, max_size=4),
    valid=st.integers(0, 3),
    options=st.lists(OPTIONS, max_size=3),
)
def test_fuzzed_command_lines(capsys, command, op, dims, valid, options):
    argv = [command] if command else []
    if command in ("run", "compile", "tiles", "sweep"):
        shapes = SHAPES.get(op, ["64x256", "8x1000", "1x16"])
        shape = "x".join(dims) if valid == 0 else shapes[valid % len(shapes)]  # three in four are valid
        argv += [op, "--shape", shape]
        if command == "sweep":
            argv += ["--vary", "tile_m=16,32", "--no-progress"]
        else:
            argv += ["--max-instructions", "20000"]  # the budget bounds the time a fuzzed shape may take
    for o in options:
        if o == ["--max-instructions", "0"] and command not in ("run", "compile", "tiles"):
            continue
        argv += o
    run_cli(capsys, argv)
