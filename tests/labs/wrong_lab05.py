"""Typical wrong answers to lab 5 (fusion); merged into ``WRONG`` of tests/labs/test_lab_checks.py."""

from __future__ import annotations


def _chain_bytes(name, rows, cols, fused, *, x_twice=True, gamma=True, stats=True):
    """Exercise 5.1, with a term that can be forgotten: x read a second time, gamma, the per-row tensors."""
    tile, row = 2 * rows * cols, 2 * rows if stats else 0
    g = 2 * cols if gamma else 0
    again = tile if x_twice else 0
    if name == "rmsnorm":
        if fused:
            return 2 * tile + g
        return 2 * tile + (tile + row) + 4 * row + (again + row + tile) + (tile + g + tile)
    if fused:
        return 2 * tile
    return (tile + row) + (again + row + tile) + 2 * tile + (tile + row) + (tile + row + tile)


def _gm_time_paths_only(chip, read, write, cores):
    return max(read / (cores * chip.paths["gm_ub"].bandwidth), write / (cores * chip.paths["ub_gm"].bandwidth))


def _gm_time_in_turn(chip, read, write, cores):
    """Loads, then stores: no overlap."""
    paths = read / (cores * chip.paths["gm_ub"].bandwidth) + write / (cores * chip.paths["ub_gm"].bandwidth)
    return max(paths, (read + write) / chip.gm_bandwidth)


WRONG = {
    "5.1": [
        lambda name, rows, cols, fused: _chain_bytes(name, rows, cols, fused, x_twice=False),
        lambda name, rows, cols, fused: _chain_bytes(name, rows, cols, fused, gamma=False),
        lambda name, rows, cols, fused: _chain_bytes(name, rows, cols, fused, stats=False),
    ],
    "5.2": [
        _gm_time_paths_only,
        lambda chip, read, write, cores: (read + write) / chip.gm_bandwidth,
        _gm_time_in_turn,
    ],
    "5.3": [
        lambda vector, memory: sum(vector) + memory,  # no overlap
        lambda vector, memory: memory,  # only the bytes
        lambda vector, memory: max(max(vector), memory),  # as if the kernels' vector work overlapped
    ],
    "5.4": ["a", "c", "d"],
    "5.5": [["a", "b", "c", "g"], ["a", "g"], ["a", "b", "g", "h"]],
    "5.6": ["a", "c"],
}

# Hard-coded answers: right for at most one case, so the other cases must catch them.
WRONG["5.1"].append(lambda name, rows, cols, fused: 4 * rows * cols if fused else 16 * rows * cols)
WRONG["5.2"].append(lambda chip, read, write, cores: (read + write) / 128)  # edu's GM bandwidth, hard-coded
