"""Grading a class: run each submitted notebook in a fresh kernel, grade its answers with the lab's
graders outside it, and write one table (CSV) and Gradescope's ``results.json``.

    python -m labs grade submitted/ --lab 03 --out grades.csv --jobs 2

- ``batch``: find the notebooks and grade them in parallel (the tuner's executors);
- ``grade``: one notebook — run, take each answer, grade it here, flag what looks wrong;
- ``session``: the kernel (nbclient) under a time budget, and the student's functions called inside it;
- ``wire`` / ``inkernel``: what crosses between the kernel and the grader, and the helper in the kernel;
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
