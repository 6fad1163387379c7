"""docs/isa.md is generated from the instruction definitions and must be up to date; every class
documents every section; the examples shown there really run."""

from __future__ import annotations

import difflib
import re

import numpy as np
import pytest
from helpers import assert_close

import isa.docs
from isa import INSTRUCTION_CLASSES, MNEMONICS, DType, parse
from isa.docs import COMMAND, DEFAULT_PATH, EXAMPLE_PROGRAM, DocstringError, render, rst_to_md, sections
from isa.instructions import COPY_ROUTES, FIXPIPE_ROUTES
from isa.timing import route_label
from simulator import simulate


def test_docs_isa_md_is_up_to_date():
    current = DEFAULT_PATH.read_text() if DEFAULT_PATH.exists() else ""
    fresh = render()
    if current != fresh:
        diff = "".join(
            list(difflib.unified_diff(current.splitlines(True), fresh.splitlines(True), "docs/isa.md", "rendered"))[:60]
        )
        pytest.fail(f"docs/isa.md is stale: run `.venv/bin/{COMMAND}` and commit the result\n{diff}")


def test_check_mode_reports_a_stale_file(tmp_path, capsys):
    out = tmp_path / "isa.md"
    assert isa.docs.main(["--check", "--out", str(out)]) == 1
    assert COMMAND in capsys.readouterr().err
    assert isa.docs.main(["--write", "--out", str(out)]) == 0
    assert out.read_text() == render()
    assert isa.docs.main(["--check", "--out", str(out)]) == 0


@pytest.mark.parametrize("cls", INSTRUCTION_CLASSES, ids=lambda c: c.__name__)
def test_every_class_documents_every_section(cls):
    s = sections(cls)
    for name in ("Summary", "Format", "Action", "Timing", "Notes"):
        assert len(s[name]) > 3, f"{cls.__name__}: {name} is empty"
    head = s["Format"].strip("`").split()[0]
    generic = head.endswith((".OP", ".COND", ".copy"))
    assert head in cls.MNEMONICS or generic, f"{cls.__name__}: Format starts with {head!r}"


def test_the_reference_covers_every_mnemonic_route_and_type():
    text = DEFAULT_PATH.read_text()
    for m in MNEMONICS:
        assert f"`{m}`" in text, m
    for src, dst in (*COPY_ROUTES, *FIXPIPE_ROUTES):
        assert f"| {route_label(src, dst)} |" in text
    for d in DType:
        assert f"| `{d.value}` |" in text
    for cls in INSTRUCTION_CLASSES:
        assert f"```asm\n{cls.EXAMPLE}\n```" in text
        assert f'<a id="{cls.__name__.lower()}"></a>' in text
    anchors = set(re.findall(r'<a id="(\w+)"></a>', text))
    links = set(re.findall(r"\]\(#(\w+)\)", text))
    assert links <= anchors, f"broken links: {links - anchors}"


def test_the_example_program_in_the_reference_runs_and_computes_relu_2x():
    run = simulate(parse(EXAMPLE_PROGRAM))
    x = run.inputs["x"].astype(np.float32)
    assert_close(run.outputs["y"], np.maximum(2 * x, 0).astype(np.float16), DType.F16, ulps=0)
    assert EXAMPLE_PROGRAM.rstrip() in DEFAULT_PATH.read_text()


def test_a_missing_section_is_reported_by_name():
    class NoTiming:
        """Summary.

        Format: ``x``

        Action: y.

        Notes: z.
        """

    with pytest.raises(DocstringError, match="NoTiming's docstring has no Timing section"):
        sections(NoTiming)


def test_rst_literal_blocks_become_fenced_code():
    assert rst_to_md("The rule::\n\n    a = b\n    c = d\n\nafter ``x``.") == (
        "The rule:\n\n```\na = b\nc = d\n```\n\nafter `x`."
    )
    assert rst_to_md("Inline::\n\nk = 1\n\nnext") == "Inline:\n\n```\nk = 1\n```\n\nnext"


def test_an_inline_literal_over_a_line_break_becomes_one_code_span():
    assert rst_to_md("where ``src COND\nscalar`` holds (for ``i32``)") == "where `src COND\nscalar` holds (for `i32`)"
    prose = re.sub(r"```.*?```", "", render(), flags=re.S)  # outside the fenced blocks
    assert "``" not in prose, prose[prose.index("``") - 80 : prose.index("``") + 80]
