"""Operands as the parser sees them, and ``Args``: typed access to them for instruction classes.

An instruction class reads its operands through ``Args`` (``args.addr("dst")``, ``args.view()``,
``args.options(ints={"src_stride": None})``) so that every mistake becomes an ``AsmSyntaxError`` with
the file, line, column, token and a hint — without each class writing its own error messages.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import NoReturn

from isa.records import record
from isa.types import DTYPE_NAMES, MAX_OPTION, SPACE_NAMES, Addr, DType, Pipe, Space

# ---------------------------------------------------------------------------------------- tokens


@record(slots=True)
class Token:
    kind: str  # ident | number | punct
    text: str
    col: int  # 1-based


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf\b|nan\b))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>->|[\[\],=])
    """,
    re.VERBOSE,
)


def tokenize(text: str, fail: Callable[..., NoReturn], first_col: int = 1) -> list[Token]:
    """Split operand text into tokens; columns count from ``first_col`` (the text's column in its
    line). ``fail(msg, col, token, hint)`` reports an error."""
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            fail("unexpected character", first_col + pos, text[pos], "operands are separated by commas")
        kind = m.lastgroup
        if kind == "number" and _WORD_CHAR.match(text, m.end()):
            # "12x", "0xZZ", "1.5.5": report the whole run, not the number it starts with.
            bad = _BAD_NUMBER.match(text, pos).group()
            fail("bad number", first_col + pos, bad, _NUMBER_HINT)
        if kind != "ws":
            out.append(Token(kind, m.group(), first_col + pos))
        pos = m.end()
    return out


_WORD_CHAR = re.compile(r"[A-Za-z0-9_.]")
_BAD_NUMBER = re.compile(r"[-+]?[A-Za-z0-9_.]+")
_NUMBER_HINT = "numbers are decimal (64, 1.5, -2, 1e-05, inf) or hexadecimal (0x0400)"
_OPERAND_HINT = "an operand is an address (ub[0x0400], x[0x0000]), a shape (f16[64,128]), a number, a word or key=value"


# -------------------------------------------------------------------------------------- operands


@record(slots=True)
class AddrOp:
    addr: Addr
    col: int
    text: str


@record(slots=True)
class ViewOp:
    dtype: DType
    shape: tuple[int, ...]
    col: int
    text: str


@record(slots=True)
class PairOp:
    src: Pipe
    dst: Pipe
    col: int
    text: str


@record(slots=True)
class NumOp:
    value: float | int
    col: int
    text: str


@record(slots=True)
class WordOp:
    word: str
    col: int
    text: str


@record(slots=True)
class KeyOp:
    key: str
    value: NumOp | WordOp
    col: int
    text: str


Operand = AddrOp | ViewOp | PairOp | NumOp | WordOp | KeyOp


def parse_number(text: str) -> float | int:
    t = text.lower().lstrip("+")
    if "x" in t:
        return int(t, 16)
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    return float(t)


def split_operands(tokens: list[Token], fail: Callable[..., NoReturn]) -> list[Operand]:
    """Group tokens into comma-separated operands (commas inside ``[...]`` do not split)."""
    groups: list[list[Token]] = [[]]
    commas: list[Token] = []  # commas[i] ends groups[i]
    depth = 0
    for tok in tokens:
        if tok.text == "[":
            depth += 1
        elif tok.text == "]":
            depth -= 1
        if tok.text == "," and depth == 0:
            groups.append([])
            commas.append(tok)
        else:
            groups[-1].append(tok)
    if groups == [[]]:
        return []
    for i, g in enumerate(groups):
        if not g:
            comma = commas[min(i, len(commas) - 1)]
            fail("empty operand", comma.col, ",", "remove the extra comma")
    return [_operand(g, fail) for g in groups]


def _source_text(g: list[Token]) -> str:
    """The operand as written (tokens re-joined with the spaces between them)."""
    out = g[0].text
    for prev, tok in itertools.pairwise(g):
        out += " " * (tok.col - prev.col - len(prev.text)) + tok.text
    return out


def _operand(g: list[Token], fail: Callable[..., NoReturn]) -> Operand:
    text = _source_text(g)
    first = g[0]
    for j, t in enumerate(g[:-1]):
        if t.text == "]":
            nxt = g[j + 1]
            fail("missing comma between operands", nxt.col, nxt.text, "separate operands with ', '")
    kinds = [t.kind if t.kind != "punct" else t.text for t in g]
    if kinds == ["number"]:
        return NumOp(parse_number(first.text), first.col, text)
    if kinds == ["ident"]:
        if first.text in ("inf", "nan"):
            return NumOp(float(first.text), first.col, text)
        return WordOp(first.text, first.col, text)
    if kinds == ["ident", "->", "ident"]:
        return PairOp(_pipe(g[0], fail), _pipe(g[2], fail), first.col, text)
    if len(g) == 3 and kinds[:2] == ["ident", "="] and kinds[2] in ("number", "ident"):
        val = g[2]
        value: NumOp | WordOp = (
            NumOp(parse_number(val.text), val.col, val.text)
            if val.kind == "number"
            else WordOp(val.text, val.col, val.text)
        )
        return KeyOp(first.text, value, first.col, text)
    if len(g) >= 4 and kinds[0] == "ident" and kinds[1] == "[" and kinds[-1] == "]":
        inner = g[2:-1]
        nums = inner[0::2]
        seps = inner[1::2]
        if any(t.kind != "number" for t in nums) or any(t.text != "," for t in seps):
            fail("expected numbers inside [...]", g[2].col, g[2].text, "write ub[0x0400] or f16[64,128]")
        values = [parse_number(t.text) for t in nums]
        if any(not isinstance(v, int) or v < 0 for v in values):
            fail(
                "expected non-negative integers inside [...]",
                g[2].col,
                g[2].text,
                "offsets and sizes are whole numbers ≥ 0, e.g. ub[0x0400] or f16[64,128]",
            )
        name = first.text
        if name in DTYPE_NAMES:
            if not 1 <= len(values) <= 2 or any(v < 1 for v in values):
                fail(
                    "a shape has one or two positive sizes",
                    first.col,
                    text,
                    "write f16[4096] or f16[64,128]",
                )
            return ViewOp(DType(name), tuple(values), first.col, text)
        if len(values) != 1:
            fail("an address takes one byte offset", first.col, text, "write ub[0x0400]")
        if name in SPACE_NAMES:
            return AddrOp(Addr(Space(name), values[0]), first.col, text)
        if name == "gm":
            fail("name the GM tensor, not 'gm'", first.col, text, "write x[0x0000] for tensor x")
        return AddrOp(Addr(Space.GM, values[0], name), first.col, text)
    fail("cannot read this operand", first.col, text, _OPERAND_HINT)


def _pipe(tok: Token, fail: Callable[..., NoReturn]) -> Pipe:
    try:
        return Pipe.parse(tok.text)
    except ValueError:
        names = ", ".join(p.value for p in Pipe)
        fail("unknown pipe", tok.col, tok.text, f"pipes are {names}")


# ------------------------------------------------------------------------------------------ Args


class Args:
    """Positional operands are taken in order; then ``options`` reads ``key=value`` and flags."""

    def __init__(self, mnemonic: str, ops: list[Operand], fail: Callable[..., NoReturn], col: int) -> None:
        self.mnemonic = mnemonic
        self.ops = ops
        self.fail = fail
        self.col = col
        self.i = 0

    def _next(self, what: str, example: str) -> Operand:
        if self.i >= len(self.ops) or isinstance(self.ops[self.i], KeyOp):
            self.fail(f"{self.mnemonic} is missing its {what}", self.col, self.mnemonic, f"e.g. {example}")
        op = self.ops[self.i]
        self.i += 1
        return op

    def addr(self, what: str, spaces: tuple[Space, ...] | None = None) -> Addr:
        op = self._next(what, "ub[0x0000]")
        if not isinstance(op, AddrOp):
            self.fail(f"{what} must be an address", op.col, op.text, "write ub[0x0400] or x[0x0000]")
        if spaces is not None and op.addr.space not in spaces:
            allowed = " or ".join(s.label for s in spaces)
            self.fail(
                f"{what} of {self.mnemonic} must be in {allowed}", op.col, op.text, f"e.g. {spaces[0].value}[0x0000]"
            )
        return op.addr

    def view(self, what: str = "shape") -> tuple[DType, tuple[int, ...]]:
        op = self._next(what, "f16[64,128]")
        if not isinstance(op, ViewOp):
            self.fail(f"{what} must be a typed shape", op.col, op.text, "write f16[64,128]")
        return op.dtype, op.shape

    def dtype(self, what: str = "dtype") -> DType:
        op = self._next(what, "f16")
        if not isinstance(op, WordOp) or op.word not in DTYPE_NAMES:
            self.fail(f"{what} must be a data type", op.col, op.text, _dtype_hint())
        return DType(op.word)

    def pair(self) -> tuple[Pipe, Pipe]:
        op = self._next("pipes", "mte2 -> v")
        if not isinstance(op, PairOp):
            self.fail("expected SRC -> DST pipes", op.col, op.text, "write mte2 -> v")
        return op.src, op.dst

    def word(self, what: str, choices: tuple[str, ...]) -> str:
        op = self._next(what, choices[0])
        if not isinstance(op, WordOp) or op.word not in choices:
            self.fail(f"{what} must be one of {', '.join(choices)}", op.col, op.text, f"e.g. {choices[0]}")
        return op.word

    def integer(self, what: str, lo: int = 0) -> int:
        op = self._next(what, "8")
        if not isinstance(op, NumOp) or not isinstance(op.value, int) or op.value < lo:
            self.fail(f"{what} must be an integer ≥ {lo}", op.col, op.text, f"write a whole number, e.g. {max(lo, 8)}")
        return op.value

    def number(self, what: str) -> float:
        op = self._next(what, "1.5")
        if not isinstance(op, NumOp):
            self.fail(f"{what} must be a number", op.col, op.text, "write 1.5, -2, inf or 1e-05")
        return float(op.value)

    def options(
        self,
        ints: dict[str, int | None] | None = None,
        flags: tuple[str, ...] = (),
        dtypes: dict[str, DType | None] | None = None,
        signed: dict[str, int | None] | None = None,
        floats: dict[str, float | None] | None = None,
        words: dict[str, tuple[str, ...]] | None = None,
    ) -> dict[str, object]:
        """Read the trailing ``key=value`` options and bare flags; unknown ones are errors.

        ``ints`` take integers ≥ 0, ``signed`` any integer, ``floats`` any number (read as a float), ``words``
        one of their choices (the first is the default)."""
        ints, dtypes, signed, floats = ints or {}, dtypes or {}, signed or {}, floats or {}
        words = words or {}
        out: dict[str, object] = {**ints, **dtypes, **signed, **floats, **dict.fromkeys(flags, False)}
        out |= {k: v[0] for k, v in words.items()}
        seen: set[str] = set()
        known = [*ints, *signed, *floats, *dtypes, *words, *flags]
        for op in self.ops[self.i :]:
            key = op.key if isinstance(op, KeyOp) else op.word if isinstance(op, WordOp) else None
            if key is None or key not in known:
                hint = f"{self.mnemonic} takes {', '.join(known)}" if known else f"{self.mnemonic} takes no options"
                self.fail("unexpected operand", op.col, op.text, hint)
            if key in seen:
                self.fail("option given twice", op.col, op.text, "remove one of them")
            seen.add(key)
            if key in flags:
                if not isinstance(op, WordOp):
                    self.fail(f"{key} is a flag and takes no value", op.col, op.text, f"write just {key}")
                out[key] = True
            elif isinstance(op, WordOp):
                self.fail(f"{key} needs a value", op.col, op.text, f"write {key}=...")
            elif key in ints:
                v = op.value
                if not isinstance(v, NumOp) or not isinstance(v.value, int) or v.value < 0:
                    self.fail(f"{key} must be a non-negative integer", v.col, v.text, f"write e.g. {key}=64")
                out[key] = self._bounded(key, v)
            elif key in signed:
                v = op.value
                if not isinstance(v, NumOp) or not isinstance(v.value, int):
                    self.fail(f"{key} must be an integer", v.col, v.text, f"write e.g. {key}=-16")
                out[key] = self._bounded(key, v)
            elif key in floats:
                v = op.value
                if not isinstance(v, NumOp):
                    self.fail(f"{key} must be a number", v.col, v.text, f"write e.g. {key}=0.125")
                out[key] = float(v.value)
            elif key in words:
                v = op.value
                if not isinstance(v, WordOp) or v.word not in words[key]:
                    self.fail(
                        f"{key} must be one of {', '.join(words[key])}", v.col, v.text, f"e.g. {key}={words[key][0]}"
                    )
                out[key] = v.word
            else:
                v = op.value
                if not isinstance(v, WordOp) or v.word not in DTYPE_NAMES:
                    self.fail(f"{key} must be a data type", v.col, v.text, _dtype_hint())
                out[key] = DType(v.word)
        self.i = len(self.ops)
        return out

    def done(self) -> None:
        self.options()

    def _bounded(self, key: str, v: NumOp) -> int:
        """An integer option within ±MAX_OPTION: no stride, offset or diagonal is larger, and numpy's
        64-bit integers must never overflow on one."""
        if abs(int(v.value)) > MAX_OPTION:
            self.fail(f"{key}={v.value} is out of range", v.col, v.text, f"|{key}| is at most 2**40 = {MAX_OPTION}")
        return int(v.value)


def _dtype_hint() -> str:
    return "data types are " + ", ".join(d.value for d in DType)
