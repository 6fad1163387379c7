"""Render the ISA reference, ``docs/isa.md``, from the instruction definitions themselves.

Each instruction class's docstring has the sections ``Format:``, ``Action:``, ``Timing:`` and
``Notes:``; with its mnemonics, its ``EXAMPLE``, the vector module's shared timing rule and the copy
route table they make the reference, so the docs cannot drift from the code::

    python -m isa.docs --write     # regenerate docs/isa.md
    python -m isa.docs --check     # exit 1 (and say so) if docs/isa.md is stale
    python -m isa.docs             # print the reference

A test (``tests/test_isa_docs.py``) fails when the committed file differs from what this renders.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path

import isa.instructions.vector as vector_module
import isa.timing as timing_module
from isa.asm.parser import parse
from isa.instructions import COPY_ROUTES, FIXPIPE_ROUTES, INSTRUCTION_CLASSES, Copy, Instruction, SetFlag, WaitFlag
from isa.instructions.vector import VectorInstruction
from isa.program import TensorKind
from isa.timing import Transfer, route_label, route_name
from isa.types import PIPE_ALIASES, DType, Pipe, Space

SECTIONS = ("Format", "Action", "Timing", "Notes")
DEFAULT_PATH = Path(__file__).resolve().parent.parent / "docs" / "isa.md"
COMMAND = "python -m isa.docs --write"

#: A complete program, shown in the overview and run by the tests: y = relu(2·x) over 2 × 4 KiB.
EXAMPLE_PROGRAM = """\
; y = relu(2·x): load, scale, clamp, store — the pipes ordered by flags
.chip edu
.tensor x f16[2048] in
.tensor y f16[2048] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[16,128]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.muls      ub[0x1000], ub[0x0000], 2.0, f16[16,128]
    v.relu      ub[0x1000], ub[0x1000], f16[16,128]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x1000], f16[16,128]
    end
"""


class DocstringError(ValueError):
    """An instruction's docstring lacks a section the reference needs (a bug in ``isa``, not a user error)."""


def sections(cls: type[Instruction]) -> dict[str, str]:
    """``{"Summary": ..., "Format": ..., "Action": ..., "Timing": ..., "Notes": ...}`` from the docstring."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    parts = re.split(rf"^({'|'.join(SECTIONS)}):[ \t]*", doc, flags=re.MULTILINE)
    out = {"Summary": parts[0].strip()}
    for name, text in zip(parts[1::2], parts[2::2]):
        out[name] = text.strip()
    missing = [s for s in ("Summary", *SECTIONS) if not out.get(s)]
    if missing:
        raise DocstringError(f"{cls.__name__}'s docstring has no {', '.join(missing)} section")
    return out


def rst_to_md(text: str) -> str:
    """The little reStructuredText the docstrings use, as Markdown: ````x```` → ```x```, and a paragraph
    ending in ``::`` followed by an indented block → a fenced code block."""
    text = re.sub(r"``([^`]+?)``", r"`\1`", text)  # a span may run over a line break
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::"):
            out.append(line.rstrip()[:-1])
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            block: list[str] = []
            if i < len(lines) and lines[i].startswith((" ", "\t")):  # the RST way: an indented block
                while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                    block.append(lines[i])
                    i += 1
            else:  # a method docstring's block sits at the text's indentation: it runs to a blank line
                while i < len(lines) and lines[i].strip():
                    block.append(lines[i])
                    i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```", *inspect.cleandoc("\n".join(block)).splitlines(), "```", ""]
            continue
        out.append(line)
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _cell(text: str) -> str:
    return rst_to_md(" ".join(text.split())).replace("|", "\\|")


def pipe_of(cls: type[Instruction]) -> str:
    """Which queue the class's instructions wait in."""
    if cls is Copy:
        by_pipe: dict[Pipe, list[str]] = {}
        for (src, dst), pipe in COPY_ROUTES.items():
            by_pipe.setdefault(pipe, []).append(route_label(src, dst))
        return "; ".join(
            f"{p.label} for {', '.join(r)}" for p, r in sorted(by_pipe.items(), key=lambda kv: kv[0].value)
        )
    if issubclass(cls, SetFlag):
        return "SRC's queue"
    if issubclass(cls, WaitFlag):
        return "DST's queue" + (" (`s`: the scalar unit itself)" if cls is WaitFlag else "")
    return example_instruction(cls).pipe.label


def example_instruction(cls: type[Instruction]) -> Instruction:
    """The class's ``EXAMPLE`` parsed (GM tensors it names are declared for the purpose)."""
    names = set(re.findall(r"\b([A-Za-z_]\w*)\[", cls.EXAMPLE)) - {s.value for s in Space} - {d.value for d in DType}
    decls = "".join(f".tensor {n} f16[524288] inout\n" for n in sorted(names))
    (ins,) = parse(f"{decls}.core 0\n    {cls.EXAMPLE}\n", f"{cls.__name__}.EXAMPLE").cores[0]
    return ins


def _ops_table(cls: type[VectorInstruction]) -> list[str]:
    if len(cls.MNEMONICS) < 2 and not cls.DTYPES:
        return []
    rows = ["| op | data types |", "|---|---|"]
    for m in cls.MNEMONICS:
        op = m.split(".", 1)[1]
        rows.append(f"| `{m}` | {', '.join(d.value for d in cls.dtypes_for(op))} |")
    return ["", *rows]


def render_class(cls: type[Instruction]) -> str:
    s = sections(cls)
    anchor = cls.__name__.lower()
    lines = [
        f'<a id="{anchor}"></a>',
        f"### {' '.join(f'`{m}`' for m in cls.MNEMONICS)}",
        "",
        rst_to_md(s["Summary"]),
        "",
        "| | |",
        "|---|---|",
        f"| format | {_cell(s['Format'])} |",
        f"| pipe | {pipe_of(cls)} |",
        f"| class | `isa.{cls.__name__}` |",
    ]
    if issubclass(cls, VectorInstruction):
        lines += _ops_table(cls)
    for name in ("Action", "Timing", "Notes"):
        lines += ["", f"**{name}.** {rst_to_md(s[name])}"]
    lines += ["", "Example:", "", "```asm", cls.EXAMPLE, "```", ""]
    return "\n".join(lines)


def _routes() -> list[str]:
    rows = ["| route | pipe | instruction | path in a chip preset |", "|---|---|---|---|"]
    for (src, dst), pipe in COPY_ROUTES.items():
        rows.append(
            f"| {route_label(src, dst)} | {pipe.label} | `{pipe.value}.copy` | `paths.{route_name(src, dst)}` |"
        )
    for src, dst in FIXPIPE_ROUTES:
        rows.append(f"| {route_label(src, dst)} | FIXPIPE | `fixpipe` | `paths.{route_name(src, dst)}` |")
    return rows


def _types() -> list[str]:
    rows = ["| type | bytes | numpy |", "|---|---|---|"]
    rows += [f"| `{d.value}` | {d.itemsize} | `{d.np}` |" for d in DType]
    return rows


def _pipes() -> list[str]:
    aliases: dict[str, list[str]] = {}
    for alias, name in PIPE_ALIASES.items():
        aliases.setdefault(name, []).append(f"`{alias}`")
    rows = ["| pipe | name in reports | also accepted |", "|---|---|---|"]
    rows += [f"| `{p.value}` | {p.label} | {', '.join(aliases.get(p.value, [])) or '-'} |" for p in Pipe]
    return rows


def render() -> str:
    """The whole reference, as Markdown."""
    index = ["| instructions | pipe | what it does |", "|---|---|---|"]
    for cls in INSTRUCTION_CLASSES:
        summary = _cell(sections(cls)["Summary"].split("\n\n")[0])
        mnemonics = ", ".join(f"`{m}`" for m in cls.MNEMONICS)
        index.append(f"| [{mnemonics}](#{cls.__name__.lower()}) | {pipe_of(cls)} | {summary} |")
    kinds = ", ".join(f"`{k.value}`" for k in TensorKind)
    parts = [
        "# dsasim ISA reference",
        "",
        f"<!-- Generated from isa/instructions/*.py by `{COMMAND}`; do not edit by hand. -->",
        "",
        "Every instruction is one frozen dataclass in `isa/instructions/`, holding its fields, text form, "
        "checks, numpy meaning and timing rule; this page is rendered from those definitions (their "
        "docstrings' Format / Action / Timing / Notes sections and their examples), so it cannot drift "
        f"from the code. Regenerate it with `{COMMAND}`.",
        "",
        "## Programs",
        "",
        "A program is text, one statement per line; `;` starts a comment. The directives are `.chip NAME` "
        "(the preset the program was written for), `.tensor NAME DTYPE[SHAPE] KIND` (a named tensor in "
        f"global memory, KIND one of {kinds}), and `.core N` (the start of core N's instruction stream, "
        "numbered from 0 in order). Operands are separated by commas:",
        "",
        "- an on-chip address is a buffer and a byte offset, `ub[0x0400]` (buffers: "
        + ", ".join(f"`{s.value}`" for s in Space if s is not Space.GM)
        + "); a GM address names a tensor and a byte offset inside it, `x[0x0400]`;",
        "- a view is a data type and a shape of one or two sizes, `f16[4096]` or `f16[64,128]` "
        "(rows × columns); strides are in elements;",
        "- a flag's pipes are written `SRC -> DST`; options are `key=value` or bare flags such as `init`.",
        "",
        "A complete program (`dsasim run-asm` runs such a file):",
        "",
        "```asm",
        EXAMPLE_PROGRAM.rstrip(),
        "```",
        "",
        "The printed form is canonical: `isa.parse(program.text()) == program` for every program.",
        "",
        "Data types:",
        "",
        *_types(),
        "",
        "Pipes (the scalar unit `s` issues every instruction into the others' in-order queues):",
        "",
        *_pipes(),
        "",
        "## Instructions",
        "",
        *index,
        "",
        "## Data movement: routes and the transfer rule",
        "",
        "Each copy route belongs to one pipe, and each is a path with its own parameters in the chip preset:",
        "",
        *_routes(),
        "",
        rst_to_md(inspect.cleandoc(timing_module.__doc__ or "").split("\n", 1)[1]),
        "",
        rst_to_md(inspect.cleandoc(Transfer.cycles.__doc__ or "")),
        "",
        rst_to_md(inspect.cleandoc(Transfer.floor_cycles.__doc__ or "")) if hasattr(Transfer, "floor_cycles") else "",
        "",
        "## Vector instructions: the shared rule",
        "",
        rst_to_md(inspect.cleandoc(vector_module.__doc__ or "")),
        "",
        "## Reference",
        "",
        *(render_class(cls) for cls in INSTRUCTION_CLASSES),
    ]
    text = "\n".join(parts)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m isa.docs", description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="write the reference to docs/isa.md (or --out)")
    p.add_argument("--check", action="store_true", help="exit 1 if the file differs from what would be written")
    p.add_argument("--out", type=Path, default=DEFAULT_PATH, help="the file to write or check")
    args = p.parse_args(argv)
    text = render()
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if args.write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
