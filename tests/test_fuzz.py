"""Fuzzing the front door as a careless user or an attacker would: mutated assembly, mutated chip presets and
random command lines. Whatever goes in, ``dsasim`` must answer with exit status 0, 1 (a check or the
sanitizer failed) or 2 (a user mistake, with ``error:`` and a hint) — never a traceback — within a bounded
time and memory. Seeded (the ``ci`` hypothesis profile derandomizes) and bounded: about 30 s in all.
"""

from __future__ import annotations

import errno
import importlib.util
import io
import os
import resource
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.language.limits import DEFAULT_STEPS
from dsasim.cli import main
from isa import DsasimError

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


# ------------------------------------------------------------------------------- the tile language

KERNELS = """
import sys
import dsasim
import dsasim.language as tl


@dsasim.jit
def add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@dsasim.jit
def divide(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    q = BLOCK // (n - n)
    tl.store(out_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


@dsasim.jit
def again(v):
    return again(v)


@dsasim.jit
def recursive(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, again(tl.load(x_ptr + offs)))


@dsasim.jit
def huge(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 10**400)


@dsasim.jit
def loop(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(n):
        acc += tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, acc)


@dsasim.jit
def copy_masked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n))
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    """The kernels above as a module, its file, and a file that calls sys.exit(0) when imported."""
    folder = tmp_path_factory.mktemp("kernels")
    path = folder / "fuzz_kernels.py"
    path.write_text(KERNELS)
    (folder / "exits.py").write_text("import sys\nsys.exit(0)\n")
    (folder / "kernel.txt").write_text(KERNELS)
    spec = importlib.util.spec_from_file_location("fuzz_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, folder


X, OUT = np.ones(1024, np.float32), np.zeros(1024, np.float32)


@pytest.mark.parametrize(
    ("kernel", "grid", "n", "launch", "needle"),
    [
        ("add", (10**9,), 1024, {}, "1,000,000,000 programs, more than the instruction budget"),
        ("add", (1000, 1000, 1000), 1024, {}, "1,000,000,000 programs"),
        ("add", (97,), 1024, {"max_instructions": 200}, "about 291 instructions, more than the budget of 200"),
        ("loop", (1,), DEFAULT_STEPS, {}, f"the loop runs {DEFAULT_STEPS:,} iterations"),  # the budget's own count
        ("loop", (1,), 2 * DEFAULT_STEPS // 5, {}, "of about 3 traced operations each"),
        ("divide", (1,), 1024, {}, "ZeroDivisionError"),
        ("recursive", (1,), 1024, {}, "cannot call itself"),
        ("huge", (1,), 1024, {}, "OverflowError"),
        ("add", None, 1024, {}, "grid None must be 1 to 3 positive integers"),
        ("add", (True,), 1024, {}, "positive integers"),
        ("add", (1,), 1024, {"cores": -3}, "cores=-3 must be a positive integer"),
        ("add", (1,), 1024, {"cores": 0}, "cores=0"),
        ("add", (1,), 1024, {"BLOCK": 2**30}, "more than the 16,777,216"),
    ],
)
def test_launch_mistakes_are_refused_before_the_work(kernels, kernel, grid, n, launch, needle):
    """Each mistake of a Python launch is a DsasimError naming the limit, within a few seconds."""
    module, _ = kernels
    launch = {"BLOCK": 1024, **launch}
    t0 = time.perf_counter()
    with pytest.raises(DsasimError) as e:
        getattr(module, kernel)[grid](X, OUT.copy(), n, timing_only=True, **launch)
    assert needle in str(e.value), str(e.value)
    assert time.perf_counter() - t0 < TIME_LIMIT


def test_a_read_only_output_is_refused_before_the_run(kernels):
    out = OUT.copy()
    out.flags.writeable = False
    with pytest.raises(DsasimError, match="read-only"):
        kernels[0].add[(1,)](X, out, 1024, BLOCK=1024)


@pytest.mark.parametrize(("grid", "n", "cores"), [(1, 100, 1), (8, 2000, 1), (4, 700, 2)])
def test_masked_load_without_other_reads_0_compiled_as_interpreted(kernels, grid, n, cores):
    """Masked-off lanes stored without the mask: 0 in the interpreter and on the chip, even where an earlier
    program on the same core left data in that buffer."""
    x = np.arange(2048, dtype=np.float32) + 1
    out = np.full(2048, 7, np.float32)
    run = kernels[0].copy_masked[(grid,)](x, out, n, BLOCK=256, cores=cores, check=True)
    expected = np.where(np.arange(2048) < n, x, 0)
    expected[grid * 256 :] = 7
    assert run.check.passed and np.array_equal(out, expected)


def run_kernel(folder: Path, target: str, *options: str) -> list[str]:
    return ["run-kernel", f"{folder}/{target}", "--grid", "1", "--args", "f32[1024]", "f32[1024]", "1024", *options]


@pytest.mark.parametrize(
    ("target", "options", "needle"),
    [
        ("fuzz_kernels.py::add", ["--const", "BLOCK=16", "--const", "BLOCK=32"], "given twice"),
        ("fuzz_kernels.py::add", ["--const", "BLOCK=1024", "--const", "chip=edu"], "use --chip"),
        ("fuzz_kernels.py::add", ["--const", "BLOCK=1073741824"], "more than the 16,777,216"),
        ("fuzz_kernels.py::add", ["--const", "BLOCK=1024", "--cores", "0"], "give an integer 1 or more"),
        ("fuzz_kernels.py::add", ["--const", "BLOCK=1024", "--seed", "-1"], "seed -1"),
        ("fuzz_kernels.py::add", ["--const", "BLOCK=1024", "--max-instructions", "0"], "integer 1 or more"),
        ("fuzz_kernels.py::add", ["--const", "BLOCK=1024", "--trace", "/nonexistent/t.json"], "does not exist"),
        ("kernel.txt::add", ["--const", "BLOCK=1024"], "not a Python file"),
        ("exits.py::add", [], "called sys.exit(0) while it was imported"),
    ],
)
def test_run_kernel_mistakes(capsys, kernels, target, options, needle):
    rc, text = run_cli(capsys, run_kernel(kernels[1], target, *options))
    assert rc == 2 and needle in text, text


def test_run_kernel_refuses_arrays_beyond_gm_before_allocating(capsys, kernels):
    argv = run_kernel(kernels[1], "fuzz_kernels.py::add", "--const", "BLOCK=1024")
    argv[argv.index("f32[1024]")] = "f32[500000000]"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rc, text = run_cli(capsys, argv)
    assert rc == 2 and "bytes of GM" in text, text
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 500_000  # KiB: nothing drawn


def test_const_num_stages_is_the_launch_depth(capsys):
    """The shipped softmax has a num_stages constexpr: --const num_stages=N sets it (the launch's --num-stages)."""
    argv = ["run-kernel", EXAMPLES / "kernels" / "softmax.py::softmax_kernel", "--grid", "4", "--args", "f32[4x256]",
            "f32[4x256]", "256", "256", "4", "256", "--const", "BLOCK_SIZE=256", "--const", "num_stages=1",
            "--timing-only"]  # fmt: skip
    rc, text = run_cli(capsys, argv)
    assert rc == 0, text
    rc, text = run_cli(capsys, [*argv, "--num-stages", "2"])
    assert rc == 2 and "disagree" in text, text


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--phase", "decode", "--batch", "1000000000"], "of GM for its input, weights and KV cache"),
        (["--phase", "prefill", "--batch", "64", "--seq", "100000000"], "of GM"),
        (["--batch", "0"], "--batch 0 must be at least 1"),
        (["--phase", "prefill", "--seq", "0"], "--seq 0 must be at least 1"),
        (["--phase", "decode", "--seq", "12"], "--seq is prefill's"),
        (["--phase", "prefill", "--context", "12"], "--context is decode's"),
        (["--layers", "0"], "--layers 0 must be at least 1"),
        (["--layers", "4"], "--layers counts the layers sharing GM in --kv-capacity"),
        (["--dtype", "f64"], "runs in f16"),
        (["--kv-capacity", "64", "--batch", "3"], "--batch does not apply"),
        (["--max-instructions", "0"], "integer 1 or more"),
    ],
)
def test_decoder_layer_mistakes(capsys, options, needle):
    rc, text = run_cli(capsys, ["graph", "decoder-layer", "--model", "tiny", "--timing-only", *options])
    assert rc == 2 and needle in text, text


def test_a_report_that_cannot_be_written_is_an_error(capsys, monkeypatch):
    """stdout on a full disk: ``error:`` and exit 2, not an OSError traceback."""

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def fileno(self) -> int:
            raise io.UnsupportedOperation

    monkeypatch.setattr(sys, "stdout", Full())
    rc = main(["chips"])
    assert rc == 2
    assert "No space left on device" in capsys.readouterr().err
