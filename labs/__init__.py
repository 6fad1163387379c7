"""dsasim's Jupyter labs: sources, the notebook builder, and the ``check(...)`` helper.

The lab sources are ``labs/NN_topic.py`` files in jupytext's percent format, with solution regions
marked (see ``labs.notebooks``); ``make labs`` builds a student and a solution notebook from each into
``labs/build/``. Notebooks call ``labs.checks.check(exercise, answer)`` for feedback. docs/labs.md is
the guide for students and instructors.
"""

from pathlib import Path

#: The repository the labs live in (labs read the example kernels from it).
REPO = Path(__file__).resolve().parent.parent
#: Hand-written assembly kernels (``examples/*.s``).
EXAMPLES = REPO / "examples"
#: Kernels written for the labs' exercises (``labs/kernels/*.s``), such as lab 8's buggy one.
KERNELS = REPO / "labs" / "kernels"

__all__ = ["EXAMPLES", "KERNELS", "REPO"]
