"""Errors of the tile language, each naming the kernel's source line.

A kernel is ordinary Python traced with concrete launch values, so the line a mistake comes from is the
innermost stack frame that is not part of ``compiler.language`` (or of ``dsasim``'s launcher): that is
what :func:`user_site` finds. Every recorded operation keeps its :class:`Site`, so later stages (access
analysis, placement, capacity checks) can name the line too.
"""

from __future__ import annotations

import linecache
import os
import sys

from isa import DsasimError
from isa.records import record

_HERE = os.path.dirname(os.path.abspath(__file__))
#: Source files whose frames are the language's machinery, never the user's kernel.
_INTERNAL = (_HERE,)
_STDLIB = os.path.dirname(os.path.abspath(os.__file__))


@record
class Site:
    """A line of a kernel's source: file, line number, and the line's text."""

    file: str
    line: int

    @property
    def text(self) -> str:
        return linecache.getline(self.file, self.line).strip()

    @property
    def short(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


#: ``is_internal`` by file name: every traced operation asks it for each frame above it, and a kernel has few files.
_KNOWN: dict[str, bool] = {}


def internal_path(path: str) -> None:
    """Treat frames of ``path``'s directory as machinery (``dsasim.jit`` registers itself)."""
    global _INTERNAL
    d = os.path.dirname(os.path.abspath(path))
    if d not in _INTERNAL:
        _INTERNAL = (*_INTERNAL, d)
        _KNOWN.clear()


def is_internal(path: str) -> bool:
    """Whether ``path`` is a file of the language's machinery (or of the Python runtime), not the user's."""
    known = _KNOWN.get(path)
    if known is None:
        full = os.path.abspath(path)
        known = _KNOWN[path] = full.startswith((*_INTERNAL, _STDLIB)) or f"{os.sep}site-packages{os.sep}" in full
    return known


def user_site() -> Site:
    """The innermost frame outside the language's machinery: the kernel line being traced."""
    f = sys._getframe(1)
    while f is not None:
        if not is_internal(f.f_code.co_filename):
            return Site(f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return Site("<kernel>", 0)


class LanguageError(DsasimError):
    """A kernel the tile language cannot compile: what, at which line, and how to change it."""

    def __init__(self, message: str, *, site: Site | None = None, hint: str | None = None) -> None:
        site = site or user_site()
        text = site.text
        # a mistake of the launch itself (an argument, the grid: ``<launch>``, line 0) names its argument, not a line
        where = "" if site.line == 0 else f"{site.short}: " + (f"`{text}`: " if text else "")
        super().__init__(where + message, hint=hint)
        self.site = site
        #: the message without its kernel line: for callers that say where in their own terms
        self.reason = message


class ProgramsDiffer(LanguageError):
    """Programs (or loop steps) that record different operations at one statement; ``moving``: the ``if`` statements
    on values known while tracing (the program id, a loop variable) that went both ways, which a launch then traces
    again as branches (loops of one step or none: ``compiler.language.control``)."""

    def __init__(
        self, message: str, *, site: Site | None = None, hint: str | None = None, moving: frozenset = frozenset()
    ):
        super().__init__(message, site=site, hint=hint)
        self.moving = moving


class TooManyEventIds(LanguageError):
    """A kernel that needs more event ids on one pipe pair than the chip has: its flags' (each stage of a tile handed
    between two pipes takes one), or on a separated chip its hand-overs' between the Cube and the Vector cores."""


class CannotSplit(LanguageError):
    """A kernel a separated chip's split (``compiler.passes.split``) cannot divide between the Cube and the Vector
    cores: the Cube side meets the Vector side other than through GM."""


class TilesDoNotFit(LanguageError):
    """A kernel whose tiles do not fit a buffer of the chip (the compiler may retry with fewer tiles of its own):
    ``buffer`` (its space's label), the bytes it would ``need`` and ``have``, and ``parts`` (its largest tiles, by
    kernel line)."""

    def __init__(
        self, message: str, *, site: Site | None = None, hint: str | None = None, buffer: str = "", need: int = 0,
        have: int = 0, parts: str = "",
    ) -> None:  # fmt: skip
        super().__init__(message, site=site, hint=hint)
        self.buffer, self.need, self.have, self.parts = buffer, need, have, parts
