"""``check(exercise, answer)``: honest, typed feedback on a lab exercise.

    from labs.checks import check
    check("1.2", ridge_point)      # ✓ Lab 1.2 passed (4 cases)  — or CheckFailed naming the case

Graders live in ``labs/checks/labNN.py``, one module per lab; ``labs.checks.core`` holds the machinery
(see its docstring for the rules every grader keeps). ``python -m labs.checks digest 1.6 b`` prints the
hash a conceptual question's grader compares with.
"""

from labs.checks.core import CheckFailed, Grader, check, digest, exercise, exercises, grade, lookup

__all__ = ["CheckFailed", "Grader", "check", "digest", "exercise", "exercises", "grade", "lookup"]
