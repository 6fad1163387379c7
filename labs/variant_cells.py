"""The parts of a lab notebook a per-student variant changes (``labs.notebooks.build`` calls these).

- :func:`fill`: ``{{name}}`` in a markdown cell shows the variant's value of the parameter ``name``;
- :func:`shuffle_options`: a shuffled choice question's lettered options ``- a. ...`` in the variant's order;
- :func:`inject`: a cell after the one tagged ``parameters`` (papermill's convention) that sets the
  variant's values, upper-cased (``cols`` → ``COLS``), and calls ``use_variant`` so that ``check`` grades
  against them.
"""

from __future__ import annotations

import re

import nbformat
from nbformat import NotebookNode

from labs.checks import Variant, shuffled
from labs.checks.variants import VariantError

PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
OPTION = re.compile(r"^(\s*[-*]\s+)([a-z])\.\s")
#: The tag of the cell holding a variant's values (papermill's name for it).
INJECTED_TAG = "injected-parameters"


def fill(source: str, params: dict, where: str) -> str:
    """``{{name}}`` in a markdown cell → the variant's value of the parameter ``name``."""

    def value(m: re.Match) -> str:
        if m.group(1) not in params:
            raise VariantError(
                f"{where}: {{{{{m.group(1)}}}}} names no parameter of this lab",
                hint=f"parameters: {', '.join(params) or 'none (declare them with @parameters in its graders)'}",
            )
        return str(params[m.group(1)])

    return PLACEHOLDER.sub(value, source)


def shuffle_options(stu: str, sol: str, lab: int, seed: int | None, ex: str | None, choices: dict) -> tuple[str, str]:
    """Show the lettered options ``- a. ...`` of a shuffled choice question in the variant's order."""
    if ex not in choices or seed is None:
        return stu, sol
    out = []
    for text in (stu, sol):
        lines = text.split("\n")
        starts = [i for i, line in enumerate(lines) if OPTION.match(line)]
        if not starts:
            return stu, sol
        letters = "".join(OPTION.match(lines[i]).group(2) for i in starts)
        if letters != "abcdefghijklmnopqrstuvwxyz"[: len(letters)]:
            return stu, sol
        ends = [*starts[1:], next((j for j in range(starts[-1] + 1, len(lines)) if not lines[j].startswith(" ")),
                                  len(lines))]  # fmt: skip
        blocks = {OPTION.match(lines[a]).group(2): lines[a:b] for a, b in zip(starts, ends)}
        order = choices[ex] = shuffled(lab, seed, ex, len(letters))
        # "- a. ...;" ... "- d. ...." reads as one sentence: keep its punctuation in place after shuffling
        ends_with = [blocks[x][-1].rstrip()[-1:] for x in letters]
        sentence = all(e == ";" for e in ends_with[:-1]) and ends_with[-1] == "."
        shown = []
        for i, (letter, original) in enumerate(zip(letters, order)):
            block = list(blocks[original])
            block[0] = OPTION.sub(lambda m, letter=letter: f"{m.group(1)}{letter}. ", block[0], count=1)
            if sentence:
                block[-1] = block[-1].rstrip()[:-1] + (";" if i < len(letters) - 1 else ".")
            shown += block
        out.append("\n".join([*lines[: starts[0]], *shown, *lines[ends[-1] :]]))
    return out[0], out[1]


def relabel_solution(solution: str, order: str) -> str:
    """A choice exercise's solution code with its one-letter answers (``"b"``) shown as the variant letters
    them (``order`` lists the lab's letters in the variant's order)."""
    return re.sub(
        r"""(["'])([a-z])\1""",
        lambda m: f"{m.group(1)}{chr(97 + order.index(m.group(2)))}{m.group(1)}" if m.group(2) in order else m.group(0),
        solution,
    )


def inject(nb: NotebookNode, v: Variant, student: str | None, where: str) -> None:
    """Put the variant's values in a cell right after the one tagged ``parameters`` (as papermill does)."""
    at = next((i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), None)
    if at is None:
        raise VariantError(f"{where}: no code cell is tagged parameters", hint='# %% tags=["parameters"]')
    assignments = [f"{name.upper()} = {value!r}" for name, value in v.params.items()]
    choices = f", choices={dict(v.choices)!r}" if v.choices else ""
    source = "\n".join(
        [
            f"# Your own variant of this lab (seed {v.seed}): these values replace the ones above.",
            "# Do not edit this cell: the graders use the same values.",
            "from labs.checks import use_variant",
            "",
            *assignments,
            f"use_variant({v.lab}, seed={v.seed}{choices})",
        ]
    )
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [INJECTED_TAG]})
    cell["id"] = f"lab{v.lab:02d}-variant"
    nb.cells.insert(at + 1, cell)
    nb.metadata["dsasim"]["variant"] = {"seed": v.seed, "student": student}
