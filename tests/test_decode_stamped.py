"""The decoder takes a stamped core's work over from its template (``isa.program.Stamped``): the same numbers, decoded
streams, counts (in the same order) and kinds as decoding every stream whole."""

from __future__ import annotations

import pickle

import pytest

from compiler import Schedule, compile
from compiler.ops import MatMul
from isa import Program
from isa.program import Stamped
from simulator import load_chip
from simulator.engine.decode import Decoder


def decoded(program: Program, chip: object) -> Decoder:
    d = Decoder(chip)
    d.program(program)
    return d


@pytest.mark.parametrize(
    ("chip", "shape", "cores"),
    [("ascend910b-like", (1000, 768, 256), 24), ("edu", (512, 384, 128), 4), ("ascend910b-like", (96, 2048, 64), 8)],
)
def test_a_stamped_stream_decodes_as_it_would_whole(chip: str, shape: tuple[int, int, int], cores: int) -> None:
    target = load_chip(chip, cores=cores)
    program = compile(MatMul(*shape), Schedule(cores=cores), target).program
    stamped = [c for c, s in enumerate(program.cores) if type(s) is Stamped]
    assert stamped, "the compiler stamped no core: nothing checked"
    whole = Program(program.tensors, tuple(tuple(s) for s in program.cores), program.chip)
    fast, slow = decoded(program, target), decoded(whole, target)
    assert fast._numbers == slow._numbers
    assert [d for d, _ in fast.cores] == [d for d, _ in slow.cores]
    assert [list(c.items()) for c in fast.counts()] == [list(c.items()) for c in slow.counts()]
    assert [fast.kinds(c) for c in range(program.ncores)] == [slow.kinds(c) for c in range(program.ncores)]
    assert all(fast._stamps[c] is not None for c in stamped) and not any(slow._stamps)


def test_a_stamped_stream_is_a_tuple_and_pickles_as_one() -> None:
    s = Stamped(["b", "y"], ("a", "y"), (0,))
    assert s == ("b", "y") and hash(s) == hash(("b", "y"))
    back = pickle.loads(pickle.dumps(s))
    assert back == s and type(back) is tuple
