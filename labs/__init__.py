"""dsasim's Jupyter labs: sources, the notebook builder, and the ``check(...)`` helper.

The lab sources are ``labs/NN_topic.py`` files in jupytext's percent format, with solution regions
marked (see ``labs.notebooks``); ``make labs`` builds a student and a solution notebook from each into
``labs/build/``. Notebooks call ``labs.checks.check(exercise, answer)`` for feedback. docs/labs.md is
the guide for students and instructors.
"""

import sys
from pathlib import Path

# The builder and the grader read and write notebooks with nbformat, which imports jsonschema, which on import
# builds rfc3987-syntax's Earley parser for the "iri" string format if that package is installed (jupyterlab's
# jupyter-events brings it): 1.5 s of every process that imports nbformat, a quarter of a graded notebook's. No
# notebook schema checks a string format (nor does nbformat use a format checker), so the labs' processes do
# without that one check: jsonschema skips a format whose package cannot be imported.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

#: The repository the labs live in (labs read the example kernels from it).
REPO = Path(__file__).resolve().parent.parent
#: Hand-written assembly kernels (``examples/*.s``).
EXAMPLES = REPO / "examples"
#: Kernels written for the labs' exercises (``labs/kernels/*.s``), such as lab 8's buggy one.
KERNELS = REPO / "labs" / "kernels"

__all__ = ["EXAMPLES", "KERNELS", "REPO"]
