"""The text assembly: exact round trip, every documented example, and readable syntax errors."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import EDU, programs

from isa import (
    INSTRUCTION_CLASSES,
    MNEMONICS,
    AsmSyntaxError,
    Barrier,
    Copy,
    DsasimError,
    Pipe,
    SetFlag,
    VScalar,
    format_program,
    parse,
    parse_file,
    validate,
)
from isa.instructions import COPY_ROUTES

# ------------------------------------------------------------------------------- round trip


@given(programs())
def test_parse_of_print_is_the_program(p):
    text = format_program(p)
    assert parse(text) == p, text
    assert format_program(parse(text)) == text  # the printed form is canonical


@given(programs())
def test_generated_programs_are_valid(p):
    validate(p, EDU, cores=3)  # the strategies promise valid programs; the other tests rely on it
    assert p.text() == format_program(p)


def _with_tensors(line: str) -> str:
    """A one-instruction program declaring every GM tensor ``line`` names (1 MiB each)."""
    names = sorted(set(re.findall(r"\b([A-Za-z_]\w*)\[", line)) - {"l1", "l0a", "l0b", "l0c", "ub", "f16", "f32"})
    names = [n for n in names if n not in ("bf16", "i8", "i32")]
    decls = "".join(f".tensor {n} f16[524288] inout\n" for n in names)
    return f".chip edu\n{decls}.core 0\n    {line}\n"


@pytest.mark.parametrize("cls", INSTRUCTION_CLASSES, ids=lambda c: c.__name__)
def test_every_example_parses_validates_and_prints_back(cls):
    assert cls.EXAMPLE, f"{cls.__name__} has no EXAMPLE"
    program = parse(_with_tensors(cls.EXAMPLE), f"{cls.__name__}.EXAMPLE")
    validate(program, EDU, cores=1)
    (ins,) = program.cores[0]
    assert type(ins) is cls
    assert ins.text() == cls.EXAMPLE  # the example is written in canonical form


def _catalog() -> list[str]:
    """One valid line per mnemonic: the class example with the mnemonic swapped, or per copy route."""
    lines = []
    for cls in INSTRUCTION_CLASSES:
        if cls is Copy:
            continue
        ex_mnemonic = cls.EXAMPLE.split()[0]
        for m in cls.MNEMONICS:
            lines.append(cls.EXAMPLE.replace(ex_mnemonic, m, 1))
    space_addr = {"gm": "t[0x0000]", "l1": "l1[0x0000]", "l0a": "l0a[0x0000]", "l0b": "l0b[0x0000]", "ub": "ub[0x0000]"}
    for (src, dst), pipe in COPY_ROUTES.items():
        lines.append(f"{pipe.value}.copy {space_addr[dst.value]}, {space_addr[src.value]}, f16[16,64]")
    return lines


def test_every_mnemonic_has_a_valid_line():
    lines = _catalog()
    seen = set()
    for line in lines:
        program = parse(_with_tensors(line))
        validate(program, EDU, cores=1)
        (ins,) = program.cores[0]
        seen.add(ins.mnemonic)
        assert parse(format_program(program)) == program
    assert seen == set(MNEMONICS)


def test_aliases_parse_to_canonical_names():
    p = parse(".core 0\n    set_flag vector -> fixpipe, 1\n    barrier m\n    barrier vec\n")
    assert p.cores[0] == (SetFlag(Pipe.V, Pipe.FIX, 1), Barrier(Pipe.CUBE), Barrier(Pipe.V))
    assert "set_flag    v -> fix, 1" in p.text()


def test_header_comments_round_trip_but_do_not_change_meaning():
    text = "; vector add\n;\n;  indented note; with a semicolon\n.chip edu\n.core 0\n    scalar 4 ; trailing\n"
    p = parse(text)
    assert p.comments == ("vector add", "", " indented note; with a semicolon")
    assert parse(p.text()).comments == p.comments
    assert p == parse(".chip edu\n.core 0\n    scalar 4\n")


def test_special_scalars_round_trip():
    p = parse(".core 0\n    v.dup ub[0x0000], -inf, f32[8]\n    v.muls ub[0x0000], ub[0x0000], nan, f32[8]\n")
    assert p.cores[0][0].scalar == -math.inf
    q = parse(p.text())
    assert isinstance(q.cores[0][1], VScalar) and math.isnan(q.cores[0][1].scalar)
    assert q.text() == p.text()


NAN_LINES = [
    "v.dup       ub[0x0000], nan, f32[64]",
    "v.muls      ub[0x4000], ub[0x0000], nan, f32[32,128]",
    "v.tril      ub[0x4000], ub[0x0000], nan, f32[64,64], diag=0",
    "v.iota      ub[0x0000], nan, nan, f32[64,128], row_step=nan",
    "v.cmps.gt   ub[0x8000], ub[0x0000], nan, f32[32,128]",
    "v.sels      ub[0xc000], ub[0x8000], ub[0x0000], nan, f32[32,128]",
    "s.ld        x[0x0008], f16, nan",
    "fixpipe     x[0x0000], l0c[0x0000], f32[64,64], to=f16, scale=nan",
]


@pytest.mark.parametrize("line", NAN_LINES, ids=lambda line: line.split()[0])
def test_a_nan_immediate_round_trips_to_an_equal_program(line):
    p = parse(_with_tensors(line))
    q = parse(p.text())
    assert q == p and hash(q.cores[0][0]) == hash(p.cores[0][0]), p.text()
    # built in Python, with NaN objects of its own: the same instruction
    ins = p.cores[0][0]
    nans = {f.name: float("nan") for f in dataclasses.fields(ins) if _is_nan(getattr(ins, f.name))}
    assert nans and dataclasses.replace(ins, **nans) == ins


def _is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def test_numbers_in_every_spelling():
    p = parse(".core 0\n    v.dup ub[0X0040], +1.5e1, f16[0x10]\n    scalar 0x20\n")
    dup, scalar = p.cores[0]
    assert (dup.dst.offset, dup.scalar, dup.shape, scalar.cycles) == (64, 15.0, (16,), 32)


def test_source_locations_are_recorded_but_not_compared():
    p = parse(".core 0\n\n    scalar 3\n", "k.s")
    (ins,) = p.cores[0]
    assert str(ins.loc) == "k.s:3"
    assert p == parse(".core 0\n    scalar 3\n", "other.s")


# ----------------------------------------------------------------------------- syntax errors

# (name, source, line, token, message fragment, hint fragment)
SYNTAX_ERRORS = [
    ("unknown mnemonic", ".core 0\n  v.addd ub[0x0000], ub[0x0000], ub[0x0000], f16[64]\n", 2, "v.addd",
     "unknown instruction", "did you mean v.add?"),
    ("unknown mnemonic, nothing close", ".core 0\n  xyzzy 3\n", 2, "xyzzy", "unknown instruction", "isa.md"),
    ("wrong pipe for the route", ".tensor x f16[64] in\n.core 0\n  mte3.copy ub[0x0000], x[0x0000], f16[64]\n", 3,
     "mte3.copy", "GM→UB is a mte2 route", "write mte2.copy"),
    ("no such route", ".tensor x f16[64] in\n.core 0\n  mte2.copy l0c[0x0000], x[0x0000], f16[64]\n", 3,
     "mte2.copy", "no copy route GM→L0C", "UB→GM on mte3"),
    ("missing operand", ".core 0\n  v.add ub[0x0000], ub[0x0000]\n", 2, "v.add",
     "missing its second source", "ub[0x0000]"),
    ("operand of the wrong kind", ".core 0\n  v.add ub[0x0000], ub[0x0000], f16[64]\n", 2, "f16[64]",
     "second source must be an address", "ub[0x0400]"),
    ("missing shape", ".core 0\n  v.abs ub[0x0000], ub[0x0000]\n", 2, "v.abs", "missing its shape", "f16[64,128]"),
    ("unknown option", ".core 0\n  v.add ub[0x0000], ub[0x0000], ub[0x0000], f16[64], stride=2\n", 2, "stride=2",
     "unexpected operand", "dst_stride, src0_stride, src1_stride"),
    ("option twice", ".core 0\n  v.abs ub[0x0000], ub[0x0000], f16[64], src_stride=64, src_stride=64\n", 2,
     "src_stride=64", "option given twice", "remove one"),
    ("flag with a value", ".core 0\n  mmad l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init=1\n", 2,
     "init=1", "init is a flag", "write just init"),
    ("bad number", ".core 0\n  scalar 12x\n", 2, "12x", "bad number", "hexadecimal"),
    ("bad hex number", ".core 0\n  v.dup ub[0xZZ], 1.0, f16[64]\n", 2, "0xZZ", "bad number", "0x0400"),
    ("two dots", ".core 0\n  v.muls ub[0x0000], ub[0x0000], 1.5.5, f16[64]\n", 2, "1.5.5", "bad number", "1.5"),
    ("not an integer", ".core 0\n  scalar 1.5\n", 2, "1.5", "must be an integer", "whole number"),
    ("negative offset", ".core 0\n  v.dup ub[-32], 1.0, f16[64]\n", 2, "-32", "non-negative integers", "ub[0x0400]"),
    ("three-dimensional shape", ".core 0\n  v.dup ub[0x0000], 1.0, f16[4,4,4]\n", 2, "f16[4,4,4]",
     "one or two positive sizes", "f16[64,128]"),
    ("missing comma", ".core 0\n  v.add ub[0x0000] ub[0x0040], ub[0x0000], f16[64]\n", 2, "ub",
     "missing comma", "separate operands"),
    ("empty operand", ".core 0\n  v.add ub[0x0000], , ub[0x0000], f16[64]\n", 2, ",", "empty operand",
     "remove the extra comma"),
    ("stray character", ".core 0\n  scalar $4\n", 2, "$", "unexpected character", "commas"),
    ("unknown pipe", ".core 0\n  set_flag mte4 -> v, 0\n", 2, "mte4", "unknown pipe", "mte1, mte2, mte3"),
    ("flag to itself", ".core 0\n  set_flag v -> v, 0\n", 2, "set_flag", "two different pipes", "mte2 -> v"),
    ("mmad without m", ".core 0\n  mmad l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, k=16, n=16\n", 2, "mmad",
     "needs m=", "m=64"),
    ("cast without to", ".core 0\n  v.cast ub[0x0000], ub[0x0000], f16[64]\n", 2, "v.cast", "needs to=DTYPE", "to=f32"),
    ("'gm' instead of a tensor", ".core 0\n  mte2.copy ub[0x0000], gm[0x0000], f16[64]\n", 2, "gm[0x0000]",
     "name the GM tensor", "x[0x0000]"),
    ("instruction before .core", ".tensor x f16[64] in\n  v.dup ub[0x0000], 1.0, f16[64]\n", 2, "v.dup",
     "before any .core", ".core 0"),
    ("tensor without kind", ".tensor x f16[64]\n.core 0\n", 1, "x f16[64]", "cannot read tensor declaration",
     ".tensor x f16[64,128] in"),
    ("tensor of unknown type", ".tensor x f17[64] in\n.core 0\n", 1, "f17[64]", "bad tensor type", "f16[64,128]"),
    ("tensor of unknown kind", ".tensor x f16[64] input\n.core 0\n", 1, "input", "bad tensor kind", "inout"),
    ("tensor named like a buffer", ".tensor ub f16[64] in\n.core 0\n", 1, "ub", "bad tensor name", "identifier"),
    ("empty tensor", ".tensor x f16[0] in\n.core 0\n", 1, "f16[0]", "sizes must be ≥ 1", "f16[64,128]"),
    ("tensor declared twice", ".tensor x f16[64] in\n.tensor x f16[64] out\n.core 0\n", 2, "x", "declared twice",
     "own name"),
    (".core out of order", ".core 1\n", 1, "1", "expected .core 0", "in order"),
    (".core repeated", ".core 0\n.core 0\n", 2, "0", "expected .core 1", "in order"),
    (".core not a number", ".core ²\n", 1, "²", "expected .core 0", "in order"),
    ("instruction after end", ".core 0\n  end\n  scalar 4\n", 3, "scalar", "after end", "remove it"),
    ("unknown directive", ".cores 0\n", 1, ".cores", "unknown directive", ".tensor"),
    ("bad chip name", ".chip ed u\n.core 0\n", 1, "ed u", ".chip takes a preset name", ".chip edu"),
    ("directive without its argument", ".chip\n.core 0\n", 1, "", ".chip takes a preset name", ".chip edu"),
    ("operand after end", ".core 0\n  end now\n", 2, "now", "unexpected operand", "no options"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "line", "token", "message", "hint"), [c[1:] for c in SYNTAX_ERRORS],
                         ids=[c[0] for c in SYNTAX_ERRORS])  # fmt: skip
def test_syntax_errors_point_at_the_token_with_a_hint(source, line, token, message, hint):
    with pytest.raises(AsmSyntaxError) as info:
        parse(source, "kernel.s")
    err = info.value
    assert (err.file, err.line, err.token) == ("kernel.s", line, token)
    text = source.splitlines()[line - 1]
    assert text[err.col - 1 :].startswith(token), f"column {err.col} does not point at {token!r} in {text!r}"
    assert str(err).startswith(f"kernel.s:{line}:{err.col}: ")
    assert message in str(err)
    assert err.hint and hint in err.hint


_VALID = """\
.chip edu
.tensor x f16[4096] in
.tensor y f16[4096] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[32,128], src_stride=128
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.muls      ub[0x2000], ub[0x0000], 0.5, f16[32,128]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x2000], f16[4096]
    end
"""


@given(st.data())
def test_damaged_text_gives_a_syntax_error_or_a_program_never_a_crash(data):
    """Delete, insert or replace characters anywhere: the parser answers with a program or with an
    ``AsmSyntaxError`` that points inside the text and carries a hint — never another exception."""
    text = _VALID
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 6)))
        junk = data.draw(st.text(alphabet="ub[]0x,=->.; ab\n1f6_-+e\t²", max_size=4))
        text = text[:i] + junk + text[j:]
    try:
        p = parse(text, "damaged.s")
    except AsmSyntaxError as err:
        lines = text.splitlines()
        assert 1 <= err.line <= len(lines)
        assert 1 <= err.col <= len(lines[err.line - 1]) + 1
        assert err.hint, f"no hint for: {err}"
    else:
        assert parse(format_program(p)) == p


def test_parse_file_reports_unreadable_files_as_user_errors(tmp_path):
    with pytest.raises(DsasimError, match="cannot read") as info:
        parse_file(tmp_path / "missing.s")
    assert info.value.hint
    binary = tmp_path / "kernel.s"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(DsasimError, match="not a text file"):
        parse_file(binary)
    good = tmp_path / "ok.s"
    good.write_text(_VALID)
    assert parse_file(good) == parse(_VALID)
    assert str(parse_file(good).cores[0][0].loc) == f"{good}:5"
