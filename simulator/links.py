"""The server around a chip: how many chips it holds, how they are linked, and the network between servers.

A preset's optional ``[links]`` table (``docs/many-chips.md``)::

    [links]
    topology = "full"       # "full": every pair of the server's chips has its own link; "ring": each chip
                            # is linked to its two neighbours only
    chips = 8               # chips per server
    bandwidth_gbps = 56.0   # GB/s (10⁹ bytes/s) one link carries in each direction
    latency_us = 1.5        # µs from a transfer's last byte leaving until its flag is seen at the peer
    dma_engines = 3         # transfers a chip streams at once (each on its own link)

    [links.network]         # optional: between servers (one port per chip)
    bandwidth_gbps = 25.0
    latency_us = 5.0

Bandwidths and latencies are converted to bytes and cycles at the chip's clock. The figures are the
server's, not one core's: a collective is driven by the chip's DMA engines, beside its cores
(``simulator.collective``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from isa import ConfigError
from isa.records import record

TOPOLOGIES = ("full", "ring")
_MAX_CHIPS = 1024


@record
class LinkSpec:
    """One kind of link: ``bandwidth`` bytes/cycle in each direction, ``latency`` cycles (α)."""

    kind: str  # "link" (inside a server) or "network" (between servers)
    bandwidth: float  # bytes/cycle
    latency: int  # cycles
    bandwidth_Bps: float  # bytes/s, as the preset gives it
    latency_s: float  # seconds, as the preset gives it


@record
class Links:
    """The server: ``chips`` chips in a ``topology``, linked by ``link``; servers joined by ``network``."""

    topology: str
    chips: int
    dma_engines: int
    link: LinkSpec
    network: LinkSpec | None = None

    def between(self, a: int, b: int) -> LinkSpec | None:
        """The link rank ``a`` sends to rank ``b`` over (ranks numbered server by server), or None when the
        two are not directly linked (a ring's non-neighbours; other servers without a network)."""
        if a == b:
            return None
        if a // self.chips != b // self.chips:
            return self.network
        if self.topology == "full":
            return self.link
        i, j, n = a % self.chips, b % self.chips, self.chips
        return self.link if (i - j) % n in (1, n - 1) else None

    def text(self) -> str:
        """One line for ``dsasim chips``."""
        s = (
            f"{self.chips} chips per server, {self.topology} topology, links of "
            f"{self.link.bandwidth_Bps / 1e9:g} GB/s and {self.link.latency_s * 1e6:g} µs, "
            f"{self.dma_engines} DMA engine{'s' if self.dma_engines > 1 else ''} per chip"
        )
        if self.network:
            s += f"; network {self.network.bandwidth_Bps / 1e9:g} GB/s, {self.network.latency_s * 1e6:g} µs"
        return s


def links_from_toml(data: Any, clock_ghz: float) -> Links:
    """Validate a preset's ``[links]`` table (every field checked, named ``links.FIELD``)."""
    t = _table(data, "links")
    topology = t.get("topology")
    if topology not in TOPOLOGIES:
        raise ConfigError(
            f"must be one of {', '.join(TOPOLOGIES)}, not {topology!r}",
            field="links.topology",
            hint='"full": every pair linked; "ring": neighbours only',
        )
    chips = _int(t, "links", "chips", 1, _MAX_CHIPS)
    engines = _int(t, "links", "dma_engines", 1, 64)
    link = _spec(t, "links", "link", clock_ghz)
    network = None
    if "network" in t:
        n = _table(t["network"], "links.network")
        network = _spec(n, "links.network", "network", clock_ghz)
        _done(n, "links.network", ("bandwidth_gbps", "latency_us"))
    _done(t, "links", ("topology", "chips", "dma_engines", "bandwidth_gbps", "latency_us", "network"))
    return Links(topology, chips, engines, link, network)


def _spec(t: Mapping[str, Any], where: str, kind: str, clock_ghz: float) -> LinkSpec:
    gbps = _number(t, where, "bandwidth_gbps", 0.001, 1e5)
    us = _number(t, where, "latency_us", 0.0, 1e5)
    return LinkSpec(kind, gbps / clock_ghz, math.ceil(us * 1e3 * clock_ghz), gbps * 1e9, us / 1e6)


def _table(v: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise ConfigError("must be a table", field=field, hint=f"write it as [{field}]")
    return v


def _number(t: Mapping[str, Any], where: str, key: str, lo: float, hi: float) -> float:
    if key not in t:
        raise ConfigError("is missing", field=f"{where}.{key}", hint="every field of [links] must be given")
    v = t[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi or v != v:
        raise ConfigError(
            f"{v!r} is not a number from {lo} to {hi}", field=f"{where}.{key}", hint=f"accepted range: {lo} to {hi}"
        )
    return float(v)


def _int(t: Mapping[str, Any], where: str, key: str, lo: int, hi: int) -> int:
    v = _number(t, where, key, lo, hi)
    if not isinstance(t[key], int):
        raise ConfigError(f"must be an integer, not {t[key]!r}", field=f"{where}.{key}", hint=f"e.g. {lo}")
    return int(v)


def _done(t: Mapping[str, Any], where: str, known: tuple[str, ...]) -> None:
    for k in t:
        if k not in known:
            raise ConfigError("is not a known field", field=f"{where}.{k}", hint="fields: " + ", ".join(known))
