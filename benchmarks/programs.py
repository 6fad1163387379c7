"""Synthetic straight-line programs for the engine's speed benchmark.

``matmul_like(n)`` builds a program of at least ``n`` instructions with the instruction mix of a
double-buffered matmul inner loop (GM→L1 loads on MTE2, L1→L0 moves on MTE1, ``mmad`` on the Cube,
FIXPIPE write-back, and the ``set_flag``/``wait_flag`` pairs that order them), spread over the pipes of
one core. It is correct code (every hazard is flagged), so it also runs in functional mode.
"""

from __future__ import annotations

from isa import Addr, Copy, DType, Fixpipe, Mmad, Pipe, Program, SetFlag, Space, TensorDecl, TensorKind, WaitFlag

F16 = DType.F16


def matmul_like(n: int, tile: int = 64, k_steps: int = 8) -> Program:
    """C[t] = A[t] @ B[t] for independent 64×(64·k_steps) by (64·k_steps)×64 blocks, double-buffered."""
    kdim = tile * k_steps
    per_block = 13 * k_steps + 5
    nblocks = max(1, -(-n // per_block))
    a = TensorDecl("a", F16, (nblocks * tile, kdim), TensorKind.IN)
    b = TensorDecl("b", F16, (nblocks * kdim, tile), TensorKind.IN)
    c = TensorDecl("c", F16, (nblocks * tile, tile), TensorKind.OUT)
    tb = tile * tile * 2  # bytes of one f16 tile
    s: list = []
    # Prime the WAR flags: every buffer starts free.
    for ev in (0, 1):
        s.append(SetFlag(Pipe.MTE1, Pipe.MTE2, ev))
        s.append(SetFlag(Pipe.CUBE, Pipe.MTE1, ev))
    s.append(SetFlag(Pipe.FIX, Pipe.CUBE, 0))
    step = 0
    for blk in range(nblocks):
        s.append(WaitFlag(Pipe.FIX, Pipe.CUBE, 0))
        for k in range(k_steps):
            ev = step % 2
            l1a, l1b = Addr(Space.L1, ev * 2 * tb), Addr(Space.L1, ev * 2 * tb + tb)
            l0a, l0b = Addr(Space.L0A, ev * tb), Addr(Space.L0B, ev * tb)
            s.append(WaitFlag(Pipe.MTE1, Pipe.MTE2, ev))
            a_off = (blk * tile * kdim + k * tile) * 2
            b_off = (blk * kdim * tile + k * tile * tile) * 2
            s.append(Copy(l1a, Addr(Space.GM, a_off, "a"), F16, (tile, tile), src_stride=kdim))
            s.append(Copy(l1b, Addr(Space.GM, b_off, "b"), F16, (tile, tile)))
            s.append(SetFlag(Pipe.MTE2, Pipe.MTE1, ev))
            s.append(WaitFlag(Pipe.MTE2, Pipe.MTE1, ev))
            s.append(WaitFlag(Pipe.CUBE, Pipe.MTE1, ev))
            s.append(Copy(l0a, l1a, F16, (tile * tile,)))
            s.append(Copy(l0b, l1b, F16, (tile * tile,)))
            s.append(SetFlag(Pipe.MTE1, Pipe.MTE2, ev))
            s.append(SetFlag(Pipe.MTE1, Pipe.CUBE, ev))
            s.append(WaitFlag(Pipe.MTE1, Pipe.CUBE, ev))
            s.append(Mmad(Addr(Space.L0C, 0), l0a, l0b, F16, tile, tile, tile, init=(k == 0)))
            s.append(SetFlag(Pipe.CUBE, Pipe.MTE1, ev))
            step += 1
        s.append(SetFlag(Pipe.CUBE, Pipe.FIX, 0))
        s.append(WaitFlag(Pipe.CUBE, Pipe.FIX, 0))
        s.append(Fixpipe(Addr(Space.GM, blk * tb, "c"), Addr(Space.L0C, 0), DType.F32, (tile, tile), to=F16))
        s.append(SetFlag(Pipe.FIX, Pipe.CUBE, 0))
    s.append(WaitFlag(Pipe.FIX, Pipe.CUBE, 0))
    for ev in (0, 1):
        s.append(WaitFlag(Pipe.MTE1, Pipe.MTE2, ev))
        s.append(WaitFlag(Pipe.CUBE, Pipe.MTE1, ev))
    return Program((a, b, c), (tuple(s),), "edu")
