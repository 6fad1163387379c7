"""The example kernels (``examples/kernels``) are importable by name in these tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "examples" / "kernels"))
