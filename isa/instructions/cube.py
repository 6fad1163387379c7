"""The Cube unit's one instruction: ``mmad``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from isa.errors import SourceLoc
from isa.instructions.base import Instruction, Memory, Write, check_space, opt
from isa.records import record
from isa.types import Addr, DType, Pipe, Region, Space

if TYPE_CHECKING:
    from isa.asm.operands import Args
    from isa.timing import ChipParams

#: Input type → accumulator type in L0C.
ACCUMULATOR = {DType.F16: DType.F32, DType.BF16: DType.F32, DType.I8: DType.I32}


@record(slots=True)
class Mmad(Instruction):
    """Matrix multiply-accumulate on the Cube: ``C (L0C) [+]= A (L0A) × B (L0B)``.

    Format: ``mmad l0c[OFF], l0a[OFF], l0b[OFF], DTYPE, m=M, k=K, n=N [, init]``

    Action: ``A`` is ``m × k`` and ``B`` is ``k × n`` elements of ``DTYPE`` (f16, bf16 or i8), dense
    and row-major; ``C`` is ``m × n``, dense, in the accumulator type (f32 for f16/bf16, i32 for i8).
    With ``init`` the product overwrites ``C``; without it, it is added to ``C``.

    Timing: ``startup + max(min_cycles, ⌈m/m0⌉·⌈k/k0⌉·⌈n/n0⌉)`` — one 16×16×16 fractal per cycle
    (k0 = 32 for i8: k0 is ``k0_bytes`` over the element size). The start-up is why small tiles run
    below peak.

    Notes: FLOPs = 2·m·k·n. Partial fractals cost a whole fractal, as on hardware.
    """

    MNEMONICS = ("mmad",)
    EXAMPLE = "mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=64, k=64, n=64, init"

    c: Addr
    a: Addr
    b: Addr
    dtype: DType
    m: int
    k: int
    n: int
    init: bool = False

    @property
    def pipe(self) -> Pipe:
        return Pipe.CUBE

    @property
    def acc_dtype(self) -> DType:
        return ACCUMULATOR.get(self.dtype, DType.F32)

    def operands(self) -> list[str]:
        return [
            str(self.c),
            str(self.a),
            str(self.b),
            self.dtype.value,
            f"m={self.m}",
            f"k={self.k}",
            f"n={self.n}",
            *opt("init", self.init),
        ]

    @classmethod
    def parse(cls, mnemonic: str, args: Args, loc: SourceLoc | None) -> Mmad:
        c = args.addr("result (L0C)", (Space.L0C,))
        a = args.addr("left matrix (L0A)", (Space.L0A,))
        b = args.addr("right matrix (L0B)", (Space.L0B,))
        dtype = args.dtype()
        o = args.options(ints={"m": None, "k": None, "n": None}, flags=("init",))
        for key in ("m", "k", "n"):
            if not o[key]:
                args.fail(f"mmad needs {key}=... (≥ 1)", args.col, mnemonic, "write m=64, k=64, n=64")
        return cls(c, a, b, dtype, o["m"], o["k"], o["n"], o["init"], loc=loc)

    def regions(self) -> tuple[Region, ...]:
        es, acc = self.dtype.itemsize, self.acc_dtype.itemsize
        out = [
            Region(self.a, 1, self.m * self.k * es, self.m * self.k * es, False),
            Region(self.b, 1, self.k * self.n * es, self.k * self.n * es, False),
        ]
        c_bytes = self.m * self.n * acc
        if not self.init:
            out.append(Region(self.c, 1, c_bytes, c_bytes, False))
        out.append(Region(self.c, 1, c_bytes, c_bytes, True))
        return tuple(out)

    def check(self, chip: ChipParams | None = None) -> None:
        check_space(self, "C", self.c, (Space.L0C,))
        check_space(self, "A", self.a, (Space.L0A,))
        check_space(self, "B", self.b, (Space.L0B,))
        if self.dtype not in ACCUMULATOR:
            raise self.fail(
                f"the Cube multiplies f16, bf16 or i8, not {self.dtype}", hint="cast the inputs first (v.cast)"
            )
        if min(self.m, self.k, self.n) < 1:
            raise self.fail("m, k and n must be ≥ 1", hint="e.g. m=64, k=64, n=64")

    def fractals(self, chip: ChipParams) -> int:
        cube = chip.cube
        k0 = max(1, cube.k0_bytes // self.dtype.itemsize)
        return -(-self.m // cube.m0) * -(-self.k // k0) * -(-self.n // cube.n0)

    def cost(self, chip: ChipParams) -> int:
        return chip.cube.startup + max(chip.cube.min_cycles, self.fractals(chip))

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n

    def execute(self, mem: Memory) -> list[Write]:
        regs = self.regions()
        a = mem.read(regs[0], self.dtype).reshape(self.m, self.k)
        b = mem.read(regs[1], self.dtype).reshape(self.k, self.n)
        acc = self.acc_dtype
        work = np.int64 if acc is DType.I32 else np.float32
        with np.errstate(all="ignore"):  # IEEE: inf·0 is NaN, overflow is inf — silently, as in hardware
            prod = a.astype(work) @ b.astype(work)
            if not self.init:
                prod = prod + mem.read(regs[2], acc).reshape(self.m, self.n).astype(work)
        return [(regs[-1], acc, prod.astype(acc.np).reshape(1, -1))]
