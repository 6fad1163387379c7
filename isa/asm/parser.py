"""Read assembly text. Every error names ``file:line:col``, the token, and a hint."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import NoReturn

from isa.asm.operands import Args, split_operands, tokenize
from isa.errors import AsmSyntaxError, DsasimError, SourceLoc, user_errors
from isa.instructions import MNEMONICS, End, Instruction
from isa.program import Program, TensorDecl, TensorKind
from isa.types import DTYPE_NAMES, SPACE_NAMES, DType

RESERVED = DTYPE_NAMES | SPACE_NAMES | {"gm", "all", "inf", "nan"}
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TENSOR_RE = re.compile(r"(?P<dtype>\w+)\[(?P<dims>[0-9, ]+)\]\Z")


@user_errors
def parse_file(path: str | Path) -> Program:
    """Parse an assembly file; a missing or unreadable file is a ``DsasimError``."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise DsasimError(f"cannot read {p}: {e.strerror}", hint="check the path") from None
    except UnicodeDecodeError:
        raise DsasimError(f"{p} is not a text file", hint="pass an assembly (.s) file") from None
    return parse(text, str(p))


@user_errors
def parse(text: str, file: str = "<string>") -> Program:
    """Parse assembly text into a :class:`Program`."""
    chip: str | None = None
    chip_loc: SourceLoc | None = None
    tensors: list[TensorDecl] = []
    cores: list[list[Instruction]] = []
    comments: list[str] = []
    in_header = True

    for lineno, raw in enumerate(text.splitlines(), start=1):

        def fail(msg: str, col: int, token: str = "", hint: str | None = None, _line: int = lineno) -> NoReturn:
            raise AsmSyntaxError(msg, file=file, line=_line, col=col, token=token, hint=hint)

        code, _, comment = raw.partition(";")
        if not code.strip():
            if in_header and raw.strip().startswith(";"):
                comments.append(comment[1:] if comment.startswith(" ") else comment)
            continue
        in_header = False
        col = len(code) - len(code.lstrip()) + 1
        head, _, rest = code.strip().partition(" ")
        rest_col = col + len(head) + 1 + (len(rest) - len(rest.lstrip()))
        rest_col = min(rest_col, len(code) + 1)  # a directive with nothing after it: point at the line's end
        rest = rest.strip()

        if head.startswith("."):
            if head == ".chip":
                if not re.fullmatch(r"[A-Za-z0-9_.\-]+", rest):
                    fail(".chip takes a preset name", rest_col, rest, "e.g. .chip edu")
                chip, chip_loc = rest, SourceLoc(file, lineno)
            elif head == ".tensor":
                tensors.append(_tensor(rest, rest_col, tensors, fail, SourceLoc(file, lineno)))
            elif head == ".core":
                if not re.fullmatch(r"[0-9]+", rest) or int(rest) != len(cores):
                    fail(f"expected .core {len(cores)}", rest_col, rest, "number cores 0, 1, 2, ... in order")
                cores.append([])
            else:
                fail("unknown directive", col, head, "directives are .chip, .tensor and .core")
            continue

        if not cores:
            fail("instruction before any .core", col, head, "start the stream with .core 0")
        cls = MNEMONICS.get(head)
        if cls is None:
            # a mnemonic the word begins (a typo cut short: v.ad → v.add) first, then the closest by spelling
            close = sorted(m for m in MNEMONICS if m.startswith(head) and head) or difflib.get_close_matches(
                head, MNEMONICS, n=1
            )
            fail("unknown instruction", col, head, f"did you mean {close[0]}?" if close else "see docs/isa.md")
        if cores[-1] and isinstance(cores[-1][-1], End):
            fail("instruction after end", col, head, "remove it or the end before it")
        ops = split_operands(tokenize(rest, fail, rest_col), fail)
        cores[-1].append(cls.parse(head, Args(head, ops, fail, col), SourceLoc(file, lineno)))

    if not cores:  # nothing would run: said here, where the file is known, rather than by the run
        end = max(1, len(text.splitlines()))
        hint = "start each core's instructions with .core 0, .core 1, ..."
        raise AsmSyntaxError("the program has no .core section", file=file, line=end, col=1, hint=hint)
    return Program(tuple(tensors), tuple(tuple(c) for c in cores), chip, tuple(comments), chip_loc)


def _tensor(rest: str, col: int, tensors: list[TensorDecl], fail, loc: SourceLoc) -> TensorDecl:
    parts = rest.split()
    usage = ".tensor NAME DTYPE[SHAPE] in|out|inout|scratch, e.g. .tensor x f16[64,128] in"
    if len(parts) != 3:
        fail("cannot read tensor declaration", col, rest, usage)
    name, spec, kind = parts
    if not _NAME_RE.match(name) or name in RESERVED:
        fail("bad tensor name", col, name, "use an identifier that is not a dtype or buffer name")
    if any(t.name == name for t in tensors):
        fail("tensor declared twice", col, name, "give each tensor its own name")
    m = _TENSOR_RE.match(spec)
    if not m or m["dtype"] not in DTYPE_NAMES:
        fail("bad tensor type", col + len(name) + 1, spec, "write e.g. f16[64,128]")
    dims = tuple(int(d) for d in m["dims"].replace(" ", "").split(",") if d)
    if not dims or any(d < 1 for d in dims):
        fail("tensor sizes must be ≥ 1", col + len(name) + 1, spec, "write e.g. f16[64,128]")
    kinds = [k.value for k in TensorKind]
    if kind not in kinds:
        fail("bad tensor kind", col + len(name) + len(spec) + 2, kind, f"kinds are {', '.join(kinds)}")
    return TensorDecl(name, DType(m["dtype"]), dims, TensorKind(kind), loc=loc)
