"""Typical wrong answers to lab 3 (double buffering), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

from isa import Space


def _stages_without_startup(chip, op, rows, cols):
    nbytes = rows * cols * 2
    return (nbytes / 64, nbytes / 256, nbytes / 64)


WRONG = {
    "3.1": [_stages_without_startup],
    "3.2": [
        lambda n, load, compute, store, lat, double: n * (load + compute + store) / (2 if double else 1),
        lambda n, load, compute, store, lat, double: (
            n * max(load, compute, store) if double else n * (load + compute + store)
        ),
        # the model from before DMA latency overlapped the next transfer: one tile per slowest stage
        lambda n, load, compute, store, lat, double: (
            load + compute + store + (n - 1) * max(load, compute, store) if double else n * (load + compute) + store
        ),
    ],
    "3.3": ["faster", "slower"],
    "3.4": [
        lambda chip, cols, operands, buffers: chip.capacity(Space.UB) // (buffers * cols * 2),  # operands forgotten
        lambda chip, cols, operands, buffers: chip.capacity(Space.UB) // (operands * buffers * cols),  # bytes: off by 2
        lambda chip, cols, operands, buffers: 262144 // (operands * buffers * cols * 2),  # a UB size, hard-coded
    ],
    "3.5": [1, 3],
    "3.6": ["a", "c"],
    "3.9": [1, 8],  # the tile that gains most; the largest tile tried
    "3.10": ["b", "c"],
}
