"""The tuner's error: a ``DsasimError``, so the CLI prints it as ``error: …`` with its hint."""

from __future__ import annotations

from isa import DsasimError


class TuneError(DsasimError):
    """A tuning request that cannot be served: nothing fits, a bad strategy or budget, a bad database."""
