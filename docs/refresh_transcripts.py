"""Re-measure the command transcripts of the README and the docs pages after the model changes.

A page shows ``$ dsasim …`` commands, each followed by a selection of the lines it prints (the tests check
that every line shown is still printed). This script runs each command again and replaces every shown line
that is no longer printed with the printed line most like it (the same row with its new numbers), so a
page keeps its selection and its prose while its numbers follow the model. Review the diff: a line whose
meaning changed (a different verdict, not only different numbers) needs its prose checked too.

    .venv/bin/python docs/refresh_transcripts.py            # every page; prints what changed
    .venv/bin/python docs/refresh_transcripts.py README.md docs/compiler.md
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dsasim.cli import main as cli  # noqa: E402

#: ``$ dsasim …`` (docs pages, console blocks) or ``$ .venv/bin/dsasim …`` (the README)
COMMAND = re.compile(r"^\$ (?:\.venv/bin/)?(dsasim .*)$")


def run(command: str) -> list[str]:
    argv = shlex.split(command.partition("  #")[0])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli(argv[1:])
        except SystemExit as e:  # argparse errors
            code = e.code
    return (out.getvalue() + err.getvalue()).splitlines() if code else out.getvalue().splitlines()


def refresh_block(lines: list[str]) -> tuple[list[str], int]:
    """A code block's lines with each command's shown output re-measured; and how many lines changed."""
    result: list[str] = []
    changed = 0
    printed: list[str] = []
    used: set[int] = set()
    for line in lines:
        m = COMMAND.match(line)
        if m:
            printed, used = run(m.group(1)), set()
            result.append(line)
            continue
        if not printed or not line.strip() or line in printed:
            if line in printed:
                used.add(printed.index(line))
            result.append(line)
            continue
        candidates = [
            (difflib.SequenceMatcher(None, line, p).ratio(), i) for i, p in enumerate(printed) if i not in used
        ]
        ratio, best = max(candidates, default=(0.0, -1))
        if ratio >= 0.5:
            used.add(best)
            result.append(printed[best])
            changed += 1
        else:
            print(f"  no line like {line!r} any more: left as it was", file=sys.stderr)
            result.append(line)
    return result, changed


def refresh(path: Path) -> int:
    text = path.read_text()
    parts = re.split(r"(```[a-z]*\n.*?```)", text, flags=re.S)
    total = 0
    for k, part in enumerate(parts):
        if part.startswith("```") and any(COMMAND.match(line) for line in part.splitlines()[1:]):
            head, *body = part[:-3].split("\n")
            new, n = refresh_block(body)
            parts[k] = "\n".join([head, *new]) + "```"
            total += n
    if total:
        path.write_text("".join(parts))
    return total


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    os.environ.setdefault("COLUMNS", "100")
    pages = [Path(a) for a in argv] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        n = refresh(page)
        print(f"{page.relative_to(ROOT) if page.is_absolute() else page}: {n} line(s) re-measured")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
