"""Build the student and solution notebooks from the lab sources (``make labs``).

A lab source is ``labs/NN_topic.py`` in jupytext's percent format (``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell). Solutions are marked, as in nbgrader:

- in a code cell, the lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION``. Such a cell is an
  *exercise*: it must call ``check("N.M", ...)`` once, where N is the lab's number. The student notebook
  replaces the region by ``raise NotImplementedError("Lab N.M")`` at the region's indentation;
- in a markdown cell, the lines between ``<!-- BEGIN SOLUTION -->`` and ``<!-- END SOLUTION -->`` — a
  model answer to a written question, replaced by a prompt in the student notebook.

The solution notebook keeps the regions and drops the marker lines; it is written only with
``--solutions`` (an instructor's build): a student's build has no solution notebook and no solution
cell. Built notebooks carry no outputs. A student notebook the student has changed since it was built is
kept, not overwritten, unless ``--force`` is given (the build records what it wrote in ``.built.json``).

    python -m labs.notebooks                 # every lab → labs/build/student/
    python -m labs.notebooks --solutions     # and labs/build/solution/ (instructors)
    python -m labs.notebooks 01 03 --out DIR # some labs, elsewhere
    python -m labs.notebooks --check         # validate the sources, write nothing
    python -m labs.notebooks 03 --variant-seed 7   # a variant → labs/build/variants/seed-7/
    python -m labs.notebooks --roster ids.txt      # one variant per student → labs/build/variants/ID/

A variant (``labs.checks.variants``) gives a student their own parameters: only labs that declare
parameters have them (``--roster`` without lab numbers builds those).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat
from nbformat import NotebookNode

from isa import DsasimError
from labs.checks import Variant, has_variants, seed_for, shuffled_exercises, variant
from labs.variant_cells import fill, inject, relabel_solution, shuffle_options

LABS_DIR = Path(__file__).resolve().parent
BUILD_DIR = LABS_DIR / "build"
SOURCE_RE = re.compile(r"^(\d\d)_([a-z0-9_]+)\.py$")

CODE_BEGIN = re.compile(r"^(\s*)###\s*BEGIN SOLUTION\s*$")
CODE_END = re.compile(r"^\s*###\s*END SOLUTION\s*$")
MD_BEGIN = re.compile(r"^\s*<!--\s*BEGIN SOLUTION\s*-->\s*$")
MD_END = re.compile(r"^\s*<!--\s*END SOLUTION\s*-->\s*$")
CHECK_CALL = re.compile(r"""\bcheck\(\s*["'](\d+)\.(\d+)["']""")
#: What a student sees in place of a model answer to a written question.
ANSWER_PROMPT = "**Your answer:** *(double-click this cell and write it here)*"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


class LabSourceError(DsasimError):
    """A lab source that cannot be built: unbalanced markers, an exercise without its check, ..."""


@dataclass(frozen=True)
class Lab:
    """One lab source: ``labs/01_roofline.py`` is lab 1, slug ``01_roofline``."""

    number: int
    slug: str
    source: Path

    @property
    def notebook_name(self) -> str:
        return f"{self.slug}.ipynb"


@dataclass
class Built:
    """The two notebooks of a lab, its exercises in order (``"1.1"``, ``"1.2"``...), and the variant they
    were built for (the defaults, unless a seed was given)."""

    lab: Lab
    student: NotebookNode
    solution: NotebookNode
    exercises: list[str]
    variant: Variant = field(default_factory=lambda: Variant(0))


def find_labs(labs_dir: Path = LABS_DIR, only: Sequence[str] = ()) -> list[Lab]:
    """The lab sources in ``labs_dir``, by number; ``only`` picks some by number (``"01"``, ``"1"``) or slug."""
    labs = []
    for path in sorted(labs_dir.glob("*.py")):
        m = SOURCE_RE.match(path.name)
        if m:
            labs.append(Lab(int(m.group(1)), path.stem, path))
    if only:
        wanted = {w.removesuffix(".py") for w in only}
        picked = [lab for lab in labs if {lab.slug, f"{lab.number:02d}", str(lab.number)} & wanted]
        unknown = sorted(
            w for w in wanted if not any({lab.slug, f"{lab.number:02d}", str(lab.number)} & {w} for lab in labs)
        )
        if unknown:
            raise LabSourceError(
                f"no lab {', '.join(unknown)} in {labs_dir}",
                hint=f"labs: {', '.join(lab.slug for lab in labs) or 'none'}",
            )
        labs = picked
    return labs


def build(lab: Lab, seed: int | None = None, student: str | None = None) -> Built:
    """Read ``lab``'s source and make its student and solution notebooks (in memory).

    With a ``seed`` (or a ``student`` id, whose seed is :func:`labs.checks.seed_for`), the notebooks are
    that student's variant: a cell after the one tagged ``parameters`` sets the variant's values and tells
    ``check`` to grade against them, ``{{name}}`` in the text shows them, and the options of the lab's
    shuffled choice questions appear in the variant's order. Without one, the defaults.
    """
    if seed is None and student is not None:
        seed = seed_for(student)
    if seed is not None and not has_variants(lab.number):
        with_variants = [f"{x.number:02d}" for x in find_labs(lab.source.parent) if has_variants(x.number)]
        raise LabSourceError(
            f"lab {lab.number:02d} has no variants", hint=f"labs with variants: {', '.join(with_variants) or 'none'}"
        )
    text = lab.source.read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="py:percent")
    lines = _cell_lines(text, len(nb.cells))
    choices = dict.fromkeys(shuffled_exercises(lab.number), "")
    params = variant(lab.number, seed).params
    student_nb, solution = _empty_notebook(lab), _empty_notebook(lab)
    exercises: list[str] = []
    for i, cell in enumerate(nb.cells):
        where = f"{_rel(lab.source)}:{lines[i]}" if lines else f"{_rel(lab.source)}, cell {i + 1}"
        tags = {"tags": list(cell.metadata["tags"])} if cell.metadata.get("tags") else {}
        if cell.cell_type == "code":
            stu, sol, ex = _code_cell(cell.source, lab, where)
            if ex:
                if ex in exercises:
                    raise LabSourceError(f"{where}: exercise {ex} appears twice", hint="number exercises N.1, N.2, ...")
                exercises.append(ex)
            meta = {"dsasim": {"exercise": ex}} if ex else {}
            if choices.get(ex):
                sol = relabel_solution(sol, choices[ex])
            student_nb.cells.append(nbformat.v4.new_code_cell(stu, metadata=meta | tags))
            solution.cells.append(nbformat.v4.new_code_cell(sol, metadata=meta | tags))
        elif cell.cell_type == "markdown":
            stu, sol, answered = _markdown_cell(fill(cell.source, params, where), where)
            meta = {"dsasim": {"answer": True}} if answered else {}
            stu, sol = shuffle_options(stu, sol, lab.number, seed, _next_exercise(nb.cells[i + 1 :]), choices)
            student_nb.cells.append(nbformat.v4.new_markdown_cell(stu, metadata=meta | tags))
            solution.cells.append(nbformat.v4.new_markdown_cell(sol, metadata=meta | tags))
        else:
            student_nb.cells.append(nbformat.v4.new_raw_cell(cell.source))
            solution.cells.append(nbformat.v4.new_raw_cell(cell.source))
    order = [int(e.split(".")[1]) for e in exercises]
    if order != sorted(order):
        raise LabSourceError(
            f"{_rel(lab.source)}: exercises appear in the order {', '.join(exercises)}",
            hint="number them in the order they appear",
        )
    the_variant = Variant(lab.number, seed, params, {ex: order for ex, order in choices.items() if order})
    for nb_out in (student_nb, solution):
        for i, cell in enumerate(nb_out.cells):
            cell["id"] = f"lab{lab.number:02d}-c{i:02d}"  # stable: an unchanged source rebuilds the same bytes
        if seed is not None:
            inject(nb_out, the_variant, student, where=_rel(lab.source))
        nbformat.validate(nb_out)
    return Built(lab, student_nb, solution, exercises, the_variant)


# ------------------------------------------------------------------------------------------- variants


def _next_exercise(cells: list) -> str | None:
    """The exercise of the first code cell among ``cells`` (the one a markdown cell introduces)."""
    code = next((c for c in cells if c.cell_type == "code"), None)
    m = CHECK_CALL.search(code.source) if code is not None else None
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _empty_notebook(lab: Lab) -> NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["dsasim"] = {"lab": lab.number, "source": f"labs/{lab.source.name}"}
    return nb


def _code_cell(source: str, lab: Lab, where: str) -> tuple[str, str, str | None]:
    """(student text, solution text, exercise id or None) of a code cell."""
    regions = _regions(source, CODE_BEGIN, CODE_END, where, "### BEGIN SOLUTION", "### END SOLUTION")
    if _regions(source, MD_BEGIN, MD_END, where, "<!-- BEGIN SOLUTION -->", "<!-- END SOLUTION -->"):
        raise LabSourceError(f"{where}: an HTML solution marker in a code cell", hint="use ### BEGIN SOLUTION")
    if not regions:
        return source, source, None
    if len(regions) > 1:
        raise LabSourceError(
            f"{where}: a code cell holds {len(regions)} solution regions",
            hint="one exercise per cell: split the cell",
        )
    calls = CHECK_CALL.findall(source)
    if len(calls) != 1:
        raise LabSourceError(
            f'{where}: an exercise cell must call check("{lab.number}.M", ...) exactly once (found {len(calls)})',
            hint="end the cell with check(...) so the student sees feedback and the student notebook fails here",
        )
    n, m = int(calls[0][0]), int(calls[0][1])
    if n != lab.number:
        raise LabSourceError(f'{where}: check("{n}.{m}") in lab {lab.number}', hint=f"number it {lab.number}.{m}")
    ex = f"{n}.{m}"
    lines = source.split("\n")
    (begin, end), indent = regions[0], CODE_BEGIN.match(lines[regions[0][0]]).group(1)
    if any(CHECK_CALL.search(line) for line in lines[begin:end]):
        raise LabSourceError(f"{where}: check(...) is inside the solution region", hint="put it after ### END SOLUTION")
    student = [*lines[:begin], f'{indent}raise NotImplementedError("Lab {ex}")', *lines[end + 1 :]]
    solution = [*lines[:begin], *lines[begin + 1 : end], *lines[end + 1 :]]
    return "\n".join(student), "\n".join(solution), ex


def _markdown_cell(source: str, where: str) -> tuple[str, str, bool]:
    if _regions(source, CODE_BEGIN, CODE_END, where, "### BEGIN SOLUTION", "### END SOLUTION"):
        raise LabSourceError(f"{where}: ### BEGIN SOLUTION in a markdown cell", hint="use <!-- BEGIN SOLUTION -->")
    regions = _regions(source, MD_BEGIN, MD_END, where, "<!-- BEGIN SOLUTION -->", "<!-- END SOLUTION -->")
    if not regions:
        return source, source, False
    lines = source.split("\n")
    student, solution, last = [], [], 0
    for begin, end in regions:
        student += [*lines[last:begin], ANSWER_PROMPT]
        solution += [*lines[last:begin], *lines[begin + 1 : end]]
        last = end + 1
    student += lines[last:]
    solution += lines[last:]
    return "\n".join(student), "\n".join(solution), True


def _regions(
    source: str, begin_re: re.Pattern, end_re: re.Pattern, where: str, b: str, e: str
) -> list[tuple[int, int]]:
    """(begin line, end line) of each marked region; unbalanced or nested markers are errors."""
    out, start = [], None
    for i, line in enumerate(source.split("\n")):
        if begin_re.match(line):
            if start is not None:
                raise LabSourceError(f"{where}: '{b}' inside another solution region", hint=f"close it with '{e}'")
            start = i
        elif end_re.match(line):
            if start is None:
                raise LabSourceError(f"{where}: '{e}' without '{b}'", hint=f"open the region with '{b}'")
            out.append((start, i))
            start = None
    if start is not None:
        raise LabSourceError(f"{where}: '{b}' is never closed", hint=f"add '{e}' after the solution")
    return out


def _cell_lines(text: str, ncells: int) -> list[int] | None:
    """The 1-based line of each cell's ``# %%`` marker, when they match jupytext's cells one to one."""
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.startswith("# %%")]
    return lines if len(lines) == ncells else None


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(LABS_DIR.parent))
    except ValueError:
        return str(path)


# ------------------------------------------------------------------------------------------- writing


@dataclass
class WriteReport:
    written: list[Path]
    #: student notebooks left alone because the student changed them
    kept: list[Path]


def check_out(out: Path) -> None:
    """Refuse an output folder that cannot be one, before anything is built: it must be a folder (or not
    exist yet) and its parent an existing folder."""
    if out.exists() and not out.is_dir():
        raise LabSourceError(f"--out {out} is a file, not a folder", hint="give a folder for the notebooks")
    if not out.exists() and not out.parent.is_dir():
        what = "a file, not a folder" if out.parent.exists() else "missing"
        raise LabSourceError(f"--out {out}: its folder {out.parent} is {what}", hint=f"create {out.parent} first")


def write(
    built: Sequence[Built], out: Path = BUILD_DIR, *, force: bool = False, solutions: bool = False
) -> WriteReport:
    """Write ``out/student/*.ipynb`` (and ``out/solution/*.ipynb`` with ``solutions``); keep student
    notebooks changed since built."""
    report = WriteReport([], [])
    for kind in ("student", "solution") if solutions else ("student",):
        folder = out / kind
        folder.mkdir(parents=True, exist_ok=True)
        record_path = folder / ".built.json"
        record = json.loads(record_path.read_text()) if record_path.exists() else {}
        for b in built:
            path = folder / b.lab.notebook_name
            nb = b.student if kind == "student" else b.solution
            text = nbformat.writes(nb)
            if kind == "student" and path.exists() and not force:
                current = _digest(path.read_text(encoding="utf-8"))
                if current != record.get(path.name) and current != _digest(text):
                    report.kept.append(path)
                    continue
            path.write_text(text, encoding="utf-8")
            record[path.name] = _digest(text)
            report.written.append(path)
        record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return report


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def main(argv: Sequence[str] | None = None, prog: str = "python -m labs.notebooks") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("labs", nargs="*", help="lab numbers or slugs (default: all)")
    parser.add_argument("--out", type=Path, help="output folder (default: labs/build, or labs/build/variants/...)")
    parser.add_argument("--check", action="store_true", help="validate the sources only")
    parser.add_argument("--force", action="store_true", help="overwrite student notebooks even if changed")
    parser.add_argument(
        "--solutions", action="store_true", help="also write the solution notebooks (instructors; never hand out)"
    )
    v = parser.add_argument_group("per-student variants (labs with parameters only)")
    v.add_argument("--variant-seed", type=int, metavar="S", help="build the variant of seed S")
    v.add_argument("--student", metavar="ID", help="build the variant of student ID (its seed is a hash of ID)")
    v.add_argument("--roster", type=Path, metavar="FILE", help="build one variant per student id, one id a line")
    args = parser.parse_args(argv)
    try:
        targets = _targets(args)
        if args.out is not None:
            check_out(args.out)
        labs = find_labs(LABS_DIR, args.labs)
        if targets != [(None, None, args.out or BUILD_DIR)]:
            labs = [lab for lab in labs if has_variants(lab.number)] if not args.labs else labs
        for seed, student, out in targets:
            built = [build(lab, seed, student) for lab in labs]
            if args.check:
                for b in built:
                    print(f"{b.lab.slug}: {len(b.solution.cells)} cells, exercises {', '.join(b.exercises) or 'none'}")
                continue
            out.mkdir(parents=out != args.out, exist_ok=True)
            report = write(built, out, force=args.force, solutions=args.solutions)
            kinds = f"{_rel(out)}/student" + (f", {_rel(out)}/solution" if args.solutions else "")
            for b in built:
                print(f"{b.lab.slug}: {len(b.exercises)} exercises → {kinds}")
            for path in report.kept:
                print(f"kept {path}: you changed it since it was built (--force overwrites it)")
    except DsasimError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def _targets(args: argparse.Namespace) -> list[tuple[int | None, str | None, Path]]:
    """(seed, student, output folder) of each build the options ask for."""
    variants = BUILD_DIR / "variants"
    if args.roster is not None:
        try:
            ids = [line.strip() for line in args.roster.read_text(encoding="utf-8").splitlines() if line.strip()]
        except OSError as err:
            raise LabSourceError(f"cannot read {args.roster}: {err.strerror}", hint="one student id a line") from None
        bad = [i for i in ids if not re.fullmatch(r"[\w.@+-]+", i)]
        if bad or not ids:
            raise LabSourceError(
                f"{args.roster}: {'the id ' + repr(bad[0]) + ' is not' if bad else 'no student ids: ids are'} "
                "letters, digits and . _ @ + -",
                hint="one id a line, as the LMS exports them",
            )
        return [(None, i, (args.out or variants) / i) for i in ids]
    if args.student is not None:
        return [(None, args.student, args.out or variants / args.student)]
    if args.variant_seed is not None:
        return [(args.variant_seed, None, args.out or variants / f"seed-{args.variant_seed}")]
    return [(None, None, args.out or BUILD_DIR)]


if __name__ == "__main__":
    sys.exit(main())
