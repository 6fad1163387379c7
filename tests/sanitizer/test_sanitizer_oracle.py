"""The sanitizer against an independent oracle, on random racy programs.

The oracle builds the happens-before graph explicitly — program order on each pipe and on the scalar
unit, the scalar unit's issue order, ``barrier`` (every instruction issued to the pipe before it),
and each flag hand-over the run actually made (``Run.flags``) — and takes reachability. Two accesses
to overlapping bytes, one a write, on different pipes and unreachable from each other, race.

The sanitizer keeps each pipe's latest access per byte, so it names, for each racing pair, at least
one of the two instructions together with the latest racing access of the other pipe. The properties:

- **precise**: every pair it reports is conflicting and unordered in the oracle;
- **complete**: every racing pair has a reported race that contains one of its two instructions,
  with the other pipe, on the same buffer.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from isa import Addr, Barrier, Copy, DType, Pipe, Program, SetFlag, Space, TensorDecl, TensorKind, VScalar, WaitFlag
from simulator import load_chip, simulate

EDU = load_chip("edu")
F16 = DType.F16
X = TensorDecl("x", F16, (1024,), TensorKind.IN)
Y = TensorDecl("y", F16, (1024,), TensorKind.OUT)
PIPES = (Pipe.MTE2, Pipe.V, Pipe.MTE3)


@st.composite
def data_instruction(draw):
    """A 256-byte access in UB at one of 7 overlapping slots, or in GM ``x``/``y``."""
    slot = Addr(Space.UB, 0x80 * draw(st.integers(0, 6)))
    gm = 0x80 * draw(st.integers(0, 14))
    kind = draw(st.sampled_from(("load", "load_y", "vec", "store")))
    if kind == "load":
        return Copy(slot, Addr(Space.GM, gm, "x"), F16, (128,))
    if kind == "load_y":  # reads what MTE3 stores: GM races between MTE3 and MTE2
        return Copy(slot, Addr(Space.GM, gm, "y"), F16, (128,))
    if kind == "store":
        return Copy(Addr(Space.GM, gm, "y"), slot, F16, (128,))
    src = Addr(Space.UB, 0x80 * draw(st.integers(0, 6)))
    return VScalar("adds", slot, src, 1.0, F16, (128,))


@st.composite
def racy_programs(draw):
    """A few data instructions on MTE2, VECTOR and MTE3 with random, deadlock-free ordering: each flag
    key is used once and set before it is waited for; barriers and scalar-unit flags mixed in."""
    body = draw(st.lists(data_instruction(), min_size=2, max_size=9))
    n = len(body)
    before: dict[int, list] = {i: [] for i in range(n + 1)}  # sync inserted before body[i]
    after: dict[int, list] = {i: [] for i in range(n)}
    used: dict[tuple[Pipe, Pipe], int] = {}
    for _ in range(draw(st.integers(0, 10))):
        i = draw(st.integers(0, n - 1))
        j = draw(st.integers(i + 1, n))
        how = draw(st.sampled_from(("flag", "flag", "barrier", "barrier all", "to scalar", "from scalar")))
        src = body[i].pipe
        dst = body[j].pipe if j < n else draw(st.sampled_from(PIPES))
        if how == "barrier":
            before[j].append(Barrier(src))
        elif how == "barrier all":
            before[j].append(Barrier(None))
        else:
            if how == "to scalar":
                dst = Pipe.S
            elif how == "from scalar":
                src = Pipe.S
            if src is dst:
                continue
            ev = used.get((src, dst), 0)
            if ev >= EDU.event_ids:
                continue
            used[(src, dst)] = ev + 1
            after[i].append(SetFlag(src, dst, ev))
            before[j].append(WaitFlag(src, dst, ev))
    stream = []
    for i, ins in enumerate(body):
        stream += before[i]
        stream.append(ins)
        stream += after[i]
    stream += before[n]
    return Program((X, Y), (tuple(stream),), "edu")


def happens_before(program: Program, flags) -> list[int]:
    """Bitmask per instruction: the instructions that happen before it (transitive closure)."""
    stream = program.cores[0]
    n = len(stream)
    preds: list[set[int]] = [set() for _ in range(n)]
    last: dict[Pipe, int] = {}
    last_s = None
    for k, ins in enumerate(stream):
        p = ins.pipe
        if p in last:
            preds[k].add(last[p])  # program order on the pipe (the scalar unit included)
        if p is not Pipe.S and last_s is not None:
            preds[k].add(last_s)  # issued after the scalar unit's previous instruction
        if type(ins) is Barrier:
            for q, j in last.items():
                if q is not Pipe.S and (ins.target is None or q is ins.target):
                    preds[k].add(j)
        last[p] = k
        if p is Pipe.S:
            last_s = k
    for f in flags:
        preds[f.wait_index].add(f.set_index)
    before = [0] * n
    for k in range(n):  # every edge goes forward in program order
        for j in preds[k]:
            before[k] |= before[j] | (1 << j)
    return before


def conflicts(program: Program):
    """(i, j, buffer) for every two data instructions on different pipes touching the same bytes, one writing."""
    stream = program.cores[0]
    acc = []
    for i, ins in enumerate(stream):
        for reg in ins.regions():
            buf = reg.addr.where if reg.addr.space is Space.GM else "UB of core 0"
            acc.append((i, ins.pipe, buf, reg.write, reg.start, reg.end))
    out = set()
    for a in acc:
        for b in acc:
            if a[0] < b[0] and a[1] is not b[1] and a[2] == b[2] and (a[3] or b[3]) and a[4] < b[5] and b[4] < a[5]:
                out.add((a[0], b[0], a[2]))
    return out


@given(racy_programs())
def test_races_match_an_explicit_happens_before_graph(program):
    run = simulate(program, sanitize=True)
    report = run.sanitizer
    assert run.stats.cores[0][Pipe.S].instructions == len(program.cores[0])  # no deadlock by construction
    before = happens_before(program, run.flags)
    racing = {(i, j, buf) for i, j, buf in conflicts(program) if not (before[j] >> i) & 1}
    reported = {(min(a.index, b.index), max(a.index, b.index), f.buffer) for f in report.races for a, b in [f.instrs]}
    assert reported <= racing, f"false positives: {reported - racing}\n{program.text()}\n{report.format()}"
    stream = program.cores[0]
    for i, j, buf in racing:
        pi, pj = stream[i].pipe, stream[j].pipe
        hit = any(
            b == buf and ({a, c} & {i, j}) and {stream[a].pipe, stream[c].pipe} == {pi, pj} for a, c, b in reported
        )
        assert hit, f"race {i}-{j} on {buf} not reported\n{program.text()}\n{report.format()}"
