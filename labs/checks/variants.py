"""Per-student variants of a lab: its parameters (shapes, tile sizes) and the order of its choices,
derived from a seed, so that each student's numbers — and answers — are their own.

A lab that has variants declares its parameters next to its graders::

    @parameters(3, rows=256, cols=1024)          # the defaults: the notebook everyone gets without a seed
    def _variant(rng: random.Random) -> dict:    # a student's values, drawn from rng (seeded)
        return {"rows": rng.choice((256, 512)), "cols": rng.choice((512, 768, 1024))}

and its graders read ``g.params["cols"]``. ``python -m labs build --variant-seed S`` (or ``--roster``)
writes the student's values into the notebook (``labs.notebooks``), in a cell that also calls
:func:`use_variant` so that ``check(...)`` grades against them; a lettered-choice question's options are
shuffled per student, and :meth:`Variant.original` maps the letter a student picked back to the lab's
own. Without a seed nothing changes: the defaults, the options in their written order.
"""

from __future__ import annotations

import hashlib
import importlib
import random
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from isa import DsasimError

#: lab → (defaults, draw, lettered-choice exercises whose options a variant shuffles)
_PARAMETERS: dict[int, tuple[dict[str, Any], Callable[[random.Random], dict[str, Any]], tuple[str, ...]]] = {}
_ACTIVE: dict[int, Variant] = {}


class VariantError(DsasimError):
    """A lab's variant cannot be built: a placeholder naming no parameter, no parameters cell, ..."""


@dataclass(frozen=True)
class Variant:
    """One student's version of lab ``lab``: its ``params`` and, per lettered-choice exercise, the lab's
    letters in the order the student's notebook shows them (``{"3.6": "cadb"}``: option a shows c's text)."""

    lab: int
    seed: int | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    choices: Mapping[str, str] = field(default_factory=dict)

    def original(self, exercise: str, letter: str) -> str:
        """The lab's letter for the option shown as ``letter`` in exercise ``exercise``."""
        order = self.choices.get(exercise, "")
        i = string.ascii_lowercase.find(letter) if len(letter) == 1 else -1
        return order[i] if 0 <= i < len(order) else letter


def parameters(
    lab: int, *, choices: tuple[str, ...] = (), **defaults: Any
) -> Callable[[Callable[[random.Random], dict]], Callable]:
    """Declare lab ``lab``'s parameters: ``defaults``, and the decorated function drawing a variant's.
    ``choices`` names the lettered-choice exercises whose options a variant shuffles (their graders must
    compare with :meth:`Grader.hashed`, which maps the letter back)."""

    def register(draw: Callable[[random.Random], dict]) -> Callable[[random.Random], dict]:
        _PARAMETERS[lab] = (dict(defaults), draw, tuple(choices))
        return draw

    return register


def load_graders(lab: int) -> None:
    """Import lab ``lab``'s graders (``labs/checks/labNN.py``, which declare its parameters), if it has any."""
    name = f"labs.checks.lab{lab:02d}"
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name != name:
            raise


def has_variants(lab: int) -> bool:
    """Whether lab ``lab`` declares parameters a seed can vary."""
    load_graders(lab)
    return lab in _PARAMETERS


def shuffled_exercises(lab: int) -> tuple[str, ...]:
    """The exercises of lab ``lab`` whose options a variant shuffles."""
    load_graders(lab)
    return _PARAMETERS[lab][2] if lab in _PARAMETERS else ()


def seed_for(student: str) -> int:
    """The variant seed of a student id (stable across machines and Python versions)."""
    return int(hashlib.sha256(f"dsasim-variant:{student.strip().lower()}".encode()).hexdigest()[:8], 16)


def shuffled(lab: int, seed: int | None, exercise: str, n: int) -> str:
    """The first ``n`` letters in the order a variant shows them (in order without a seed)."""
    letters = list(string.ascii_lowercase[:n])
    if seed is not None:
        random.Random(f"lab{lab}:{seed}:{exercise}").shuffle(letters)
    return "".join(letters)


def variant(lab: int, seed: int | None = None, choices: Mapping[str, str] | None = None) -> Variant:
    """Lab ``lab``'s variant for ``seed`` (None: the defaults)."""
    load_graders(lab)
    defaults, draw, _ = _PARAMETERS.get(lab, ({}, lambda rng: {}, ()))
    params = dict(defaults)
    if seed is not None:
        drawn = draw(random.Random(f"lab{lab}:{seed}"))
        unknown = sorted(set(drawn) - set(defaults))
        if unknown:
            raise VariantError(f"lab {lab}'s variant draws {', '.join(unknown)}, which have no default",
                              hint="give every parameter a default in @parameters(...)")  # fmt: skip
        params.update(drawn)
    return Variant(lab, seed, params, dict(choices or {}))


def use_variant(lab: int, seed: int | None = None, choices: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Grade lab ``lab`` against ``seed``'s variant from now on (the first cell of a student's variant
    notebook calls it); returns its parameters."""
    _ACTIVE[lab] = variant(lab, seed, choices)
    return dict(_ACTIVE[lab].params)


def active_variant(lab: int) -> Variant:
    """The variant ``check(...)`` grades lab ``lab`` against (the defaults unless :func:`use_variant` ran)."""
    return _ACTIVE.get(lab) or variant(lab)
