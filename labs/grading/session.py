"""One student's notebook in its own fresh kernel (nbclient), under a time budget, and the answers in it.

:class:`Session` runs cells one at a time, so the grader can take each exercise's answer right after its
cell ran, and counts the time the student's code takes — cells, and the calls the graders make into it —
against the notebook's budget. Running out raises :class:`OutOfTime`, a dead kernel :class:`KernelDied`;
both derive from ``BaseException`` so that no grader's ``except Exception`` mistakes them for a wrong
answer.

Answers that are plain data come back as values; the rest (functions defined in the notebook, objects of
the student's classes) stay in the kernel and are reached through :class:`RemoteFunction` and
:class:`RemoteObject`, whose calls run in the kernel and whose results come back the same way.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import pickle
import subprocess
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode

from labs.grading.wire import MIME, dumps, loads

HELPER = "__dsasim_grading__"


class OutOfTime(BaseException):
    """The notebook used up its time budget (a signal, like ``KeyboardInterrupt``, not an error)."""


class KernelDied(BaseException):
    """The student's kernel died (``os._exit``, a segfault, out of memory)."""


class Missing:
    """An answer whose name the notebook never defined."""

    def __init__(self, message: str) -> None:
        self.message = message


class Session:
    """A kernel running one notebook; use as a context manager (the kernel is shut down on exit)."""

    def __init__(self, cwd: Path, budget: float, kernel_name: str = "python3") -> None:
        self.budget = budget
        self.used = 0.0
        self._client = NotebookClient(
            nbformat.v4.new_notebook(),
            kernel_name=kernel_name,
            allow_errors=True,
            timeout=60,
            resources={"metadata": {"path": str(cwd)}},
        )
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Session:
        # the kernel's own stderr (its start-up warnings, its death rattle) is noise in a grading log
        self._stack.enter_context(self._client.setup_kernel(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self._stack.close()

    @property
    def remaining(self) -> float:
        return self.budget - self.used

    def run(self, cell: NotebookNode, *, hidden: bool = False) -> NotebookNode:
        """Execute ``cell`` (its outputs are replaced); the time it takes counts against the budget."""
        if self.remaining <= 0:
            raise OutOfTime
        self._client.timeout = max(1, math.ceil(self.remaining))
        self._client.nb.cells = [cell]  # nbclient keeps the cell it runs at its index in its notebook
        start = time.perf_counter()
        try:
            self._client.execute_cell(cell, 0, store_history=not hidden)
        except CellTimeoutError:
            self.used = self.budget
            raise OutOfTime from None
        except DeadKernelError:
            raise KernelDied from None
        finally:
            self.used += time.perf_counter() - start
        return cell

    def ask(self, code: str) -> Any:
        """Run ``code`` in the kernel, unseen by the notebook, and read the helper's reply."""
        cell = self.run(nbformat.v4.new_code_cell(code), hidden=True)
        for out in cell.outputs:
            if out.output_type == "display_data" and MIME in out.get("data", {}):
                return self.resolve(out["data"][MIME])
            if out.output_type == "error":
                raise RuntimeError(f"the grading helper failed in the kernel: {out.ename}: {out.evalue}")
        raise RuntimeError("the kernel gave no answer to the grader")

    def resolve(self, reply: dict[str, Any]) -> Any:
        """The value a reply stands for; raises what the student's code raised."""
        kind = reply.get("kind")
        if kind == "missing":
            return Missing(reply.get("message", ""))
        if kind == "raised":
            name, message = str(reply.get("type", "Exception")), str(reply.get("message", ""))
            if name == "NotImplementedError":
                raise NotImplementedError(message)
            raise type(name, (Exception,), {})(message)
        if kind in ("fingerprint", "verdict"):
            return reply
        if "pickle" in reply:
            with contextlib.suppress(
                pickle.UnpicklingError, ValueError, TypeError, EOFError, AttributeError, ImportError
            ):
                return loads(reply["pickle"])  # anything else stays in the kernel, behind a handle
        if reply.get("callable"):
            return RemoteFunction(self, int(reply["handle"]), str(reply.get("type")), reply.get("signature"))
        return RemoteObject(self, int(reply["handle"]), str(reply.get("type")))


_KINDS = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    inspect.Parameter.VAR_POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY,
    inspect.Parameter.VAR_KEYWORD,
)


def _signature(spec: list | None) -> inspect.Signature | None:
    if spec is None:
        return None
    params = []
    for name, kind, has_default in spec:
        default = None if has_default else inspect.Parameter.empty
        params.append(inspect.Parameter(name, _KINDS[kind], default=default))
    try:
        return inspect.Signature(params)
    except ValueError:
        return None


class RemoteObject:
    """An object that lives in the student's kernel; its attributes are fetched from there."""

    def __init__(self, session: Session, handle: int, type_name: str) -> None:
        self._session, self._handle, self._type = session, handle, type_name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._session.ask(f"{HELPER}.attribute({self._handle}, {name!r})")

    def __repr__(self) -> str:
        return f"<{self._type} in the student's kernel>"


class RemoteFunction(RemoteObject):
    """A function (or class) that lives in the student's kernel; calling it runs it there."""

    def __init__(self, session: Session, handle: int, type_name: str, signature: list | None) -> None:
        super().__init__(session, handle, type_name)
        self.__signature__ = _signature(signature)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._session.ask(f"{HELPER}.call({self._handle}, {dumps((args, kwargs))!r})")
