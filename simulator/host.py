"""What the host machine can give a run: the memory this process may still allocate, checked before a
functional run allocates its buffers (``simulator.memory``) or a budget check admits it (``dsasim.budget``)."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from isa import ResourceLimitError

_BIG = 2**48


def host_memory_bytes() -> int:
    """Bytes this process may still allocate: the machine's available memory (``MemAvailable``, else all
    physical memory), capped by the address-space limit (``ulimit -v``) when one is set."""
    have = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                have = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if not have:
        try:
            have = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            have = _BIG
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            have = min(have, soft)
    except (ValueError, OSError):
        pass
    return have


def check_host_memory(need: int, what: str, hint: str) -> None:
    """Refuse, before allocating, ``need`` bytes of host memory for ``what`` when the host has less."""
    have = host_memory_bytes()
    if need > have:
        raise ResourceLimitError(
            f"{what} needs {need / 2**30:,.1f} GiB of host memory but only {have / 2**30:,.1f} GiB is available",
            hint=hint,
        )
