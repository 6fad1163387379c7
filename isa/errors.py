"""The one exception hierarchy of dsasim.

Every mistake a user can make (bad assembly, a bad chip config, a schedule that does not fit, a
program that deadlocks or races) raises a subclass of :class:`DsasimError`. Each error says *what*
went wrong, *where*, and *how to fix it* (the ``hint``). The CLI prints ``error: <message>`` and
exits with status 2 for these; anything else is a bug in dsasim and keeps its traceback.

The hierarchy lives in ``isa`` because ``isa`` is the bottom layer: ``simulator`` and ``compiler``
both import it, so their errors can share one root.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from isa.records import record

P = ParamSpec("P")
R = TypeVar("R")


@record
class SourceLoc:
    """Where an instruction came from: an assembly file and line (1-based), or a generator's name."""

    file: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f":{self.col}" if self.col else "")


class DsasimError(Exception):
    """Root of every user-facing dsasim error.

    ``hint`` says what to change; ``str(err)`` gives the message followed by the hint.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


class AsmSyntaxError(DsasimError):
    """Assembly text that does not parse: carries ``file:line:col`` and the offending token."""

    def __init__(
        self, message: str, *, file: str, line: int, col: int, token: str = "", hint: str | None = None
    ) -> None:
        where = f"{file}:{line}:{col}"
        shown = f" (at {token!r})" if token else ""
        super().__init__(f"{where}: {message}{shown}", hint=hint)
        self.file, self.line, self.col, self.token = file, line, col, token


class ValidationError(DsasimError):
    """A well-formed program that breaks a rule of the ISA or the chip (route, bounds, alignment, ids)."""

    def __init__(self, message: str, *, loc: SourceLoc | None = None, hint: str | None = None) -> None:
        super().__init__(f"{loc}: {message}" if loc else message, hint=hint)
        self.loc = loc


class ConfigError(DsasimError):
    """A chip configuration with an unknown, missing or out-of-range field."""

    def __init__(self, message: str, *, field: str, hint: str | None = None) -> None:
        super().__init__(f"chip config field '{field}': {message}", hint=hint)
        self.field = field


class CapacityError(DsasimError):
    """Something does not fit: names the buffer, the bytes needed and available, and the knob."""

    def __init__(self, *, buffer: str, need: int, have: int, knob: str, what: str = "") -> None:
        what = f"{what} " if what else ""
        super().__init__(
            f"{what}needs {need} bytes of {buffer} but {buffer} holds {have} bytes",
            hint=f"lower {knob}",
        )
        self.buffer, self.need, self.have, self.knob = buffer, need, have, knob


class ResourceLimitError(DsasimError):
    """A problem too large to simulate here: more host memory, or more instructions, than a limit allows.

    Raised *before* anything is allocated or compiled; the message gives the estimate and the limit, the
    hint the option that raises the limit or the mode (``--timing-only``) that needs less."""


class SimulationError(DsasimError):
    """Something went wrong while a program ran (a bad access, a misused flag)."""


class MemoryAccessError(SimulationError):
    """A read of never-written bytes, or an access outside a buffer or tensor."""


class SyncError(SimulationError):
    """A misused flag, e.g. ``set_flag`` twice on the same event before its ``wait_flag``."""


class DeadlockError(SimulationError):
    """The program stopped with waits that can never be met; ``blocked`` lists them."""

    def __init__(self, message: str, *, blocked: list[str], hint: str | None = None) -> None:
        super().__init__(message + "".join(f"\n  blocked: {b}" for b in blocked), hint=hint)
        self.blocked = blocked


def debugging() -> bool:
    """``DSASIM_DEBUG=1``: print instructions as they issue; keep dsasim's own frames in a user error's traceback."""
    return os.environ.get("DSASIM_DEBUG", "") not in ("", "0")


def user_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """An entry point of the Python API (``compile_and_run``, ``simulate``, ``load_chip``...) whose user errors reach
    the caller as the CLI prints them: the message and its hint, under a traceback that ends at the caller's line and
    this function's, without the dozens of dsasim frames the mistake was found in (``DSASIM_DEBUG=1`` keeps them).
    Any other exception is a bug in dsasim and keeps its whole traceback."""

    @functools.wraps(fn)
    def entry(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except DsasimError as e:
            if debugging():
                raise
            raise e.with_traceback(None) from None

    return entry
