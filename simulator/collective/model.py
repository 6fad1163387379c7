"""nccl-tests' figures and the α-β model of a collective.

nccl-tests (``doc/PERFORMANCE.md`` of NVIDIA/nccl-tests) reports, for a size S and a time t:
``algbw = S / t`` and ``busbw = algbw × factor`` with factor ``2(n−1)/n`` for all-reduce, ``(n−1)/n`` for
reduce-scatter, all-gather and all-to-all (S is then the whole array, n times one rank's part), and 1 for
send/recv — so busbw is the bandwidth each rank's busiest link saw and can be compared with the hardware's.

The α-β model prices a message of m bytes on a link at ``α + m/β`` (α the link's latency, β its bandwidth):

- ring: all-reduce ``2(n−1)·(α + S/(n·β))``; reduce-scatter and all-gather ``(n−1)·(α + S/(n·β))``;
- mesh (direct): a rank sends ``(n−1)`` segments of ``S/n`` over ``e = min(engines, n−1)`` links at once:
  reduce-scatter, all-gather and all-to-all ``α + (n−1)·S/(n·e·β)``, all-reduce twice that;
- send/recv ``α + S/β``.

Over several servers the slowest link used and the largest latency stand for β and α. The model leaves out
the reductions (the vector unit adds while the next chunk streams) and the pipeline's fill — the simulation
has both, which is what the comparison shows.
"""

from __future__ import annotations

from simulator.links import LinkSpec

FORMULAS = {
    ("all-reduce", "ring"): "2(n-1)·(α + S/(n·β))",
    ("reduce-scatter", "ring"): "(n-1)·(α + S/(n·β))",
    ("all-gather", "ring"): "(n-1)·(α + S/(n·β))",
    ("all-reduce", "mesh"): "2·(α + (n-1)·S/(n·e·β))",
    ("reduce-scatter", "mesh"): "α + (n-1)·S/(n·e·β)",
    ("all-gather", "mesh"): "α + (n-1)·S/(n·e·β)",
    ("all-to-all", "mesh"): "α + (n-1)·S/(n·e·β)",
    ("send-recv", "ring"): "α + S/β",
    ("send-recv", "mesh"): "α + S/β",
}


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw / algbw for ``op`` over ``n`` ranks."""
    if op == "all-reduce":
        return 2 * (n - 1) / n
    if op in ("reduce-scatter", "all-gather", "all-to-all"):
        return (n - 1) / n
    return 1.0


def alpha_beta(
    op: str, algo: str, n: int, nbytes: int, links: list[LinkSpec], engines: int
) -> tuple[float, float, float]:
    """(predicted seconds, α seconds, β bytes/s) of ``op`` by ``algo`` over the ``links`` it uses."""
    if n == 1 or not links:
        return 0.0, 0.0, 0.0
    alpha = max(link.latency_s for link in links)
    beta = min(link.bandwidth_Bps for link in links)
    s = float(nbytes)
    e = min(engines, n - 1)
    if op == "send-recv":
        t = alpha + s / beta
    elif algo == "ring":
        steps = 2 * (n - 1) if op == "all-reduce" else n - 1
        t = steps * (alpha + s / (n * beta))
    else:
        one = alpha + (n - 1) * s / (n * e * beta)
        t = 2 * one if op == "all-reduce" else one
    return t, alpha, beta
