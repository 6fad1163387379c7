"""Rewrite a generated block of a docs page: the text between ``<!-- TAG:NAME -->`` and ``<!-- /TAG -->``.

Benchmarks that measure what a page shows (``benchmarks/attention.py``, ``benchmarks/cube_vector.py``)
write their tables through :func:`write_blocks`, so the page keeps its prose and only the numbers move.
"""

from __future__ import annotations

from pathlib import Path


def replace_block(text: str, tag: str, name: str, body: str) -> str:
    """``text`` with the block ``<!-- tag:name -->`` … ``<!-- /tag -->`` holding ``body``; SystemExit if absent."""
    start, end = f"<!-- {tag}:{name} -->\n", f"<!-- /{tag} -->"
    if start not in text:
        raise SystemExit(f"no {start.strip()} block")
    head, rest = text.split(start, 1)
    if end not in rest:
        raise SystemExit(f"the {start.strip()} block has no {end}")
    _, tail = rest.split(end, 1)
    return head + start + body + "\n" + end + tail


def write_blocks(doc: Path, tag: str, blocks: dict[str, str]) -> None:
    """Rewrite every named block of ``doc`` (``{name: markdown}``) in one write."""
    text = doc.read_text()
    for name, body in blocks.items():
        try:
            text = replace_block(text, tag, name, body)
        except SystemExit as e:
            raise SystemExit(f"{doc}: {e}") from None
    doc.write_text(text)
