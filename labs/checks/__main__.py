"""``python -m labs.checks digest EXERCISE ANSWER``: the hash to paste into a conceptual question's grader;
``python -m labs.checks list [LAB]``: the registered exercises."""

from __future__ import annotations

import sys

from labs.checks.core import digest, exercises, lookup


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "digest":
        print(digest(argv[1], argv[2]))
        return 0
    if argv and argv[0] == "list":
        for lab in [int(a) for a in argv[1:]] or range(10):
            for ex in exercises(lab):
                print(f"{ex:6} {lookup(ex).what}")
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
