"""Typical wrong answers to lab 8 (hand-written assembly), merged into WRONG of tests/labs/test_lab_checks.py."""

from __future__ import annotations

import math


def single_buffered_exp(n_tiles: int, tile: int, *, byte_offsets: bool = True, waits: bool = True) -> str:
    """Lab 8's single-buffered kernel; ``byte_offsets=False`` uses element offsets (a classic slip),
    ``waits=False`` drops the 'buffer free' waits (a race)."""
    size = math.ceil(tile * 2 / 32) * 32
    lines = [".chip edu", f".tensor x f16[{n_tiles * tile}] in", f".tensor y f16[{n_tiles * tile}] out", ".core 0"]
    for i in range(n_tiles):
        off = i * tile * (2 if byte_offsets else 1)
        last = i == n_tiles - 1
        if i and waits:
            lines.append("wait_flag v -> mte2, 0")
        lines += [f"mte2.copy ub[0x0], x[{off:#x}], f16[{tile}]", "set_flag mte2 -> v, 0", "wait_flag mte2 -> v, 0"]
        if i and waits:
            lines.append("wait_flag mte3 -> v, 0")
        lines.append(f"v.exp ub[{size:#x}], ub[0x0], f16[{tile}]")
        if not last and waits:
            lines.append("set_flag v -> mte2, 0")
        lines += [
            "set_flag v -> mte3, 0",
            "wait_flag v -> mte3, 0",
            f"mte3.copy y[{off:#x}], ub[{size:#x}], f16[{tile}]",
        ]
        if not last and waits:
            lines.append("set_flag mte3 -> v, 0")
    return "\n".join(lines) + "\n"


def double_buffered_exp(n_tiles: int, tile: int, *, event=lambda b: b) -> str:
    """Exercise 8.1's kernel; ``event`` maps a buffer set to its event id (``lambda b: 0``: one id for both
    sets, which the text forbids and which is right only by timing)."""
    size = math.ceil(tile * 2 / 32) * 32
    x, y = (0, size), (2 * size, 3 * size)
    lines = [".chip edu", f".tensor x f16[{n_tiles * tile}] in", f".tensor y f16[{n_tiles * tile}] out", ".core 0"]
    for i in range(n_tiles):
        b, off, again = i % 2, i * tile * 2, i + 2 < n_tiles
        e = event(b)
        if i >= 2:
            lines.append(f"wait_flag v -> mte2, {e}")
        lines += [f"mte2.copy ub[{x[b]:#x}], x[{off:#x}], f16[{tile}]", f"set_flag mte2 -> v, {e}"]
        lines.append(f"wait_flag mte2 -> v, {e}")
        if i >= 2:
            lines.append(f"wait_flag mte3 -> v, {e}")
        lines.append(f"v.exp ub[{y[b]:#x}], ub[{x[b]:#x}], f16[{tile}]")
        if again:
            lines.append(f"set_flag v -> mte2, {e}")
        lines += [
            f"set_flag v -> mte3, {e}",
            f"wait_flag v -> mte3, {e}",
            f"mte3.copy y[{off:#x}], ub[{y[b]:#x}], f16[{tile}]",
        ]
        if again:
            lines.append(f"set_flag mte3 -> v, {e}")
    return "\n".join(lines) + "\n"


def _fix_first_race_only(text: str) -> str:
    """Moves the first early 'loaded' flag after its tile's load of w, as the first race suggests, and stops."""
    out, pending, done = [], None, False
    for line in text.splitlines():
        if not done and line.strip().startswith("set_flag    mte2 -> v") and out and "x[" in out[-1]:
            pending = line
            continue
        out.append(line)
        if pending is not None and "w[" in line:
            out.append(pending)
            pending, done = None, True
    return "\n".join(out) + "\n"


def _free_the_buffers_later(text: str) -> str:
    """Moves each 'buffers free' flag (v -> mte2) after the tile's v.exp: the wrong flag."""
    out, pending = [], None
    for line in text.splitlines():
        if line.strip().startswith("set_flag    v -> mte2") and out and "v.mul" in out[-1]:
            pending = line
            continue
        out.append(line)
        if pending is not None and line.split()[:1] == ["v.exp"]:
            out.append(pending)
            pending = None
    return "\n".join(out) + "\n"


WRONG = {
    "8.1": [
        single_buffered_exp,  # right, but not double-buffered: too slow
        lambda n, t: single_buffered_exp(n, t, byte_offsets=False),
        lambda n, t: single_buffered_exp(n, t, waits=False),
        lambda n, t: "mte2.copy ub[0x0], x",
        lambda n, t: double_buffered_exp(n, t, event=lambda b: 0),  # one event id for both buffer sets
    ],
    "8.4": ["WAR", "WAW"],
    "8.5": [
        lambda text: text,
        lambda text: "\n".join(x for x in text.splitlines() if "set_flag" not in x),
        _fix_first_race_only,
        _free_the_buffers_later,
    ],
}
