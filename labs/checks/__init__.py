"""``check(exercise, answer)``: honest, typed feedback on a lab exercise.

    from labs.checks import check
    check("1.2", ridge_point)      # ✓ Lab 1.2 passed (4 cases)  — or CheckFailed naming the case

Graders live in ``labs/checks/labNN.py``, one module per lab; ``labs.checks.core`` holds the machinery
(see its docstring for the rules every grader keeps). ``python -m labs.checks digest 1.6 b`` prints the
hash a conceptual question's grader compares with. ``labs.checks.variants`` gives each student their own
parameters (``use_variant``), and ``exercise(..., points=N)`` what an exercise scores in a graded class.
"""

from labs.checks.core import CheckFailed, Exercise, Grader, check, digest, exercise, exercises, grade, lookup
from labs.checks.variants import (
    Variant,
    has_variants,
    parameters,
    seed_for,
    shuffled,
    shuffled_exercises,
    use_variant,
    variant,
)

__all__ = [
    "CheckFailed",
    "Exercise",
    "Grader",
    "Variant",
    "check",
    "digest",
    "exercise",
    "exercises",
    "grade",
    "has_variants",
    "lookup",
    "parameters",
    "seed_for",
    "shuffled",
    "shuffled_exercises",
    "use_variant",
    "variant",
]
