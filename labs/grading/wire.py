"""What crosses between a student's kernel and the grading process, and how it is read safely.

The grading process never executes student code. It asks the kernel for an answer (or to call one), and
the kernel replies with one ``display_data`` message of the MIME type :data:`MIME`, a JSON object:

- ``{"kind": "value", "pickle": B64, "handle": N, ...}`` — a value, pickled; read back with
  :func:`loads`, a restricted unpickler that builds only plain data (numbers, strings, containers, numpy
  arrays) and the classes of dsasim's own packages. Anything else (a function defined in the notebook, an
  object of a class the student wrote) stays in the kernel and is reached through its ``handle``;
- ``{"kind": "raised", "type": NAME, "message": TEXT}`` — the student's code raised;
- ``{"kind": "missing", "message": TEXT}`` — the answer's name is not defined.

Arguments go the other way as an ordinary pickle (the kernel trusts the grader, not the reverse).
"""

from __future__ import annotations

import base64
import io
import pickle
from typing import Any

#: The MIME type of the kernel's replies (never shown: the grader reads it from the cell's outputs).
MIME = "application/vnd.dsasim.grading+json"

_BUILTINS = frozenset(
    [
        "int",
        "float",
        "complex",
        "bool",
        "str",
        "bytes",
        "bytearray",
        "tuple",
        "list",
        "dict",
        "set",
        "frozenset",
        "slice",
        "range",
        "object",
    ]
)
_NUMPY = frozenset(
    {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
    }
)
_OURS = ("isa", "compiler", "simulator", "dsasim")


class Refused(pickle.UnpicklingError):
    """A pickle that names something the grader will not build."""


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if (module, name) in _NUMPY or (module == "copyreg" and name in ("__newobj__", "_reconstructor")):
            return super().find_class(module, name)
        if module.split(".")[0] in _OURS:
            found = super().find_class(module, name)
            if isinstance(found, type):  # a class of ours: data, never a function to call
                return found
        raise Refused(f"{module}.{name}")


def loads(payload: str) -> Any:
    """The value of a base64 pickle made in a kernel, built only from plain data and dsasim's classes;
    :class:`Refused` for anything else."""
    return _SafeUnpickler(io.BytesIO(base64.b64decode(payload))).load()


def dumps(value: Any) -> str:
    """A base64 pickle of ``value`` (protocol 4: numpy arrays travel without out-of-band buffers)."""
    return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")
