"""The generated blocks of the docs pages: rewritten in place, prose kept, a missing block refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.doc_blocks import replace_block, write_blocks

ROOT = Path(__file__).resolve().parent.parent
PAGE = "intro\n<!-- t:a -->\nold a\n<!-- /t -->\nmiddle\n<!-- t:b -->\nold b\n<!-- /t -->\nend\n"


def test_a_block_is_replaced_and_the_prose_kept():
    out = replace_block(PAGE, "t", "b", "new b")
    assert out == PAGE.replace("old b", "new b")


def test_a_missing_block_names_itself(tmp_path):
    with pytest.raises(SystemExit, match="no <!-- t:c --> block"):
        replace_block(PAGE, "t", "c", "x")
    doc = tmp_path / "p.md"
    doc.write_text(PAGE)
    with pytest.raises(SystemExit, match=r"p\.md: no <!-- t:c --> block"):
        write_blocks(doc, "t", {"a": "new a", "c": "x"})
    assert doc.read_text() == PAGE  # nothing written when a block is missing


@pytest.mark.parametrize(("doc", "tag"), [("docs/attention.md", "attention"), ("docs/language.md", "language")])
def test_rewriting_each_block_with_itself_changes_nothing(doc, tag):
    text = (ROOT / doc).read_text()
    out = text
    for name in re.findall(rf"<!-- {tag}:([\w-]+) -->\n", text):
        body = out.split(f"<!-- {tag}:{name} -->\n", 1)[1].split(f"<!-- /{tag} -->", 1)[0]
        out = replace_block(out, tag, name, body.removesuffix("\n"))
    assert out == text
