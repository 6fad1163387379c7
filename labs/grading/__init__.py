"""Grading a class: run each submitted notebook in a sandboxed kernel, take its answers out as data,
grade them with the lab's graders outside it, and write one table (CSV) and Gradescope's ``results.json``.

    python -m labs grade submitted/ --lab 03 --roster ids.csv --out grades.csv --jobs 2

- ``batch``: find the notebooks, name the students (``roster``), grade them in parallel;
- ``grade``: one notebook — run, take each answer out, grade it here, flag what looks wrong;
- ``sandbox`` / ``jail``: the student copy of the packages, limits, hidden folders, cleanup;
- ``session``: the kernel (nbclient) under a time budget; ``export`` / ``codec``: answers as data;
- ``runner`` / ``remote``: functions and kernels rebuilt from their source in a fresh process;
- ``tamper``: signs that a notebook tried to change its own grading;
- ``report``: the CSV and Gradescope formats; ``cli``: the command.
"""

from labs.grading.batch import Task, collect, grade_folder, grade_task
from labs.grading.grade import grade_notebook
from labs.grading.report import gradescope, write_csv, write_gradescope
from labs.grading.result import ExerciseResult, GradingError, Submission, WrittenAnswer

__all__ = [
    "ExerciseResult",
    "GradingError",
    "Submission",
    "Task",
    "WrittenAnswer",
    "collect",
    "grade_folder",
    "grade_notebook",
    "grade_task",
    "gradescope",
    "write_csv",
    "write_gradescope",
]
