"""One student's notebook in its own sandboxed kernel (nbclient), under a time budget.

:class:`Session` runs cells one at a time, so the grader can take each exercise's answer right after its
cell ran, and counts the time the student's code takes against the notebook's budget. Running out raises
:class:`OutOfTime`, a dead kernel :class:`KernelDied`; both derive from ``BaseException`` so that no
grader's ``except Exception`` mistakes them for a wrong answer.

The kernel is started through the sandbox (``labs.grading.sandbox``): its own working folder (which
holds its connection file), limits, a clean environment whose ``labs`` is the student copy. The only
thing read from it is what the exporter (``labs.grading.export``) replies: data, never an object.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode

from labs.grading.codec import CodecError, decode
from labs.grading.export import MIME
from labs.grading.remote import KernelDied, OutOfTime
from labs.grading.sandbox import Sandbox

HELPER = "__dsasim_grading__"


class Missing:
    """An answer whose name the notebook never defined."""

    def __init__(self, message: str) -> None:
        self.message = message


class Raised(Exception):
    """The student's own code raised while its answer was evaluated."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name


class _SandboxedKernel(AsyncKernelManager):
    """A kernel manager that starts ``python -m ipykernel_launcher`` through the sandbox's jail."""

    sandbox: Sandbox
    work: Path

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        python = os.path.realpath(sys.executable)
        argv = [python, "-S", "-m", "ipykernel_launcher", "-f", self.connection_file, *(extra_arguments or [])]
        return self.sandbox.command(self.work, argv)


#: Times a kernel is started before its death is the grading's error: one that dies before it answers has run nothing
#: of the notebook (a busy machine: ``Kernel died before replying to kernel_info`` while another worker graded
#: beside it), so starting it again is fair.
STARTS = 2


class Session:
    """A kernel running one notebook; use as a context manager (the kernel is shut down on exit)."""

    def __init__(self, sandbox: Sandbox, work: Path, budget: float) -> None:
        self.budget = budget
        self.used = 0.0
        km = _SandboxedKernel(kernel_name="python3", connection_file=str(work / "kernel.json"))
        km.sandbox, km.work = sandbox, work
        self._km = km
        self._env = sandbox.env(work)
        self._client = NotebookClient(
            nbformat.v4.new_notebook(),
            km=km,
            allow_errors=True,
            timeout=60,
            resources={"metadata": {"path": str(work)}},
        )
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Session:
        # the kernel's own stderr (its start-up warnings, its death rattle) is noise in a grading log
        for attempt in range(STARTS):
            try:
                self._stack.enter_context(
                    self._client.setup_kernel(env=self._env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
                return self
            except RuntimeError as err:  # died before it answered: before the notebook's first cell ran
                if attempt == STARTS - 1 or "before replying" not in str(err):
                    raise
                self.__exit__()
                self._stack = contextlib.ExitStack()
        raise AssertionError("unreachable")

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self._stack.close()
        with contextlib.suppress(Exception):
            if self._km.has_kernel:
                run_sync(self._km.shutdown_kernel)(now=True)

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
        """Run ``code`` (a call of the exporter) unseen by the notebook; the data it replied with."""
        cell = self.run(nbformat.v4.new_code_cell(code), hidden=True)
        for out in cell.outputs:
            if out.output_type == "display_data" and MIME in out.get("data", {}):
                return read_reply(out["data"][MIME])
            if out.output_type == "error":
                return Raised("an error in the grading helper", f"{out.ename}: {out.evalue}"[:500])
        return Raised("no answer", "the kernel gave no answer to the grader")


def read_reply(reply: Any) -> Any:
    """What an exporter's reply says: the value as data (functions as their source bundles), a
    :class:`Missing` or a :class:`Raised`."""
    if not isinstance(reply, dict):
        return Raised("a malformed reply", type(reply).__name__)
    kind = reply.get("kind")
    if kind == "missing":
        return Missing(str(reply.get("message", ""))[:500])
    if kind == "raised":
        return Raised(str(reply.get("type", "Exception"))[:100], str(reply.get("message", ""))[:2000])
    if kind == "value":
        try:
            return decode(reply.get("data"), lambda tagged: Tagged(tagged))
        except (CodecError, ValueError, TypeError, KeyError, IndexError) as err:
            return Raised("an answer that is not data", str(err)[:500])
    return Raised("an answer that cannot be sent", str(reply.get("message", ""))[:2000])


class Tagged:
    """A stand-in the exporter sent (a function's source bundle, a module, an object's fields): it is
    rebuilt in the runner, never here."""

    def __init__(self, tagged: dict) -> None:
        self.tagged = tagged

    def __repr__(self) -> str:
        return f"<{next(iter(self.tagged), '?')} of the student's>"
