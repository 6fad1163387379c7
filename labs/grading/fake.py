"""A made-up class of submissions, to try a grading setup (and time it) before the real one.

    python -m labs.grading.fake fake-class/ --lab 03 -n 50      # then: python -m labs grade fake-class/ --lab 03

Student ``student007`` gets their own variant (when the lab has variants) and hands in the solution with a
random number of its exercises done (the rest left as the student notebook has them), chosen by ``--seed``.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from labs.checks import has_variants
from labs.notebooks import Built, LabSourceError, build, find_labs


def exercise_cell(nb: NotebookNode, exercise: str) -> int:
    """The index of exercise ``exercise``'s cell in ``nb``."""
    for i, cell in enumerate(nb.cells):
        if cell.metadata.get("dsasim", {}).get("exercise") == exercise:
            return i
    raise KeyError(exercise)


def done_up_to(built: Built, k: int) -> NotebookNode:
    """The student notebook with its first ``k`` exercises solved (the solution's cells), the rest not."""
    nb = copy.deepcopy(built.student)
    for ex in built.exercises[:k]:
        i = exercise_cell(nb, ex)
        nb.cells[i].source = built.solution.cells[i].source
    return nb


def make_class(lab: int, out: Path, n: int, seed: int = 0) -> list[Path]:
    """Write ``n`` submissions of lab ``lab`` to ``out/studentNNN.ipynb``; the paths written."""
    the_lab = find_labs(only=[f"{lab:02d}"])[0]
    rng = random.Random(seed)
    variants = has_variants(lab)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        student = f"student{i:03d}"
        built = build(the_lab, student=student) if variants else build(the_lab)
        k = len(built.exercises) if rng.random() < 0.6 else rng.randrange(len(built.exercises))
        path = out / f"{student}.ipynb"
        nbformat.write(done_up_to(built, k), path)
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m labs.grading.fake", description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path, help="folder to write the notebooks to")
    p.add_argument("--lab", required=True, metavar="NN")
    p.add_argument("-n", type=int, default=50, help="how many students (default: 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random choices")
    args = p.parse_args(argv)
    try:
        paths = make_class(int(args.lab), args.out, args.n, args.seed)
    except (LabSourceError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{len(paths)} submissions of lab {int(args.lab):02d} → {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
