"""``python -m labs build ...`` (the notebooks, per-student variants) and ``python -m labs grade ...`` (a
class's submissions); ``dsasim labs ...`` runs the same. See docs/instructors.md."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from labs import notebooks
from labs.grading import cli as grading

#: How the commands name themselves in --help (``dsasim labs`` sets it when it forwards here).
PROG = os.environ.get("DSASIM_LABS_PROG", "python -m labs")
USAGE = f"""usage: {PROG} {{build,grade}} ...

  build   make the student notebooks (--solutions too; --variant-seed S, --student ID, --roster FILE)
  grade   grade a folder of submitted notebooks in a sandbox (--lab NN, --roster FILE, --out CSV,
          --gradescope PATH, --jobs N)

{PROG} COMMAND --help shows a command's options."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "build":
        return notebooks.main(args[1:], prog=f"{PROG} build")
    if args and args[0] == "grade":
        return grading.main(args[1:], prog=f"{PROG} grade")
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    print(USAGE, file=sys.stderr)
    if args:
        print(f"error: unknown command {args[0]!r}\n  hint: build or grade", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
