"""Graders of lab 4, memory reuse. Oracles: the GM memory planner (``compiler.graph.memory``: its
lifetimes, its plans' timelines and peaks, ``max_batch``) and the compiler's ``buffer`` pass, which
places a fused kernel's UB temporaries by lifetime."""

from __future__ import annotations

import itertools
from typing import Any

from compiler import Schedule
from dsasim import ALIGN, Graph, build, compile_op, fuse, lifetimes, max_batch, plan_memory
from labs.checks.core import Grader, exercise
from simulator import load_chip

MIB = 1 << 20

#: (graph, builder parameters, fused): element-wise chains, convolutions with a residual block, attention
#: heads writing views of one tensor, fused kernels with several outputs.
GRAPHS = (
    ("mlp", {"batch": 8, "hidden": 64}, False),
    ("mlp", {"batch": 64}, True),
    ("cnn", {"batch": 2, "image": 16}, False),
    ("cnn", {"batch": 4}, True),
    ("transformer-block", {"batch": 1, "seq": 32, "hidden": 64, "heads": 2}, False),
    ("transformer-block", {"batch": 2, "seq": 64, "hidden": 128, "heads": 4}, False),
    ("transformer-block", {"batch": 2, "seq": 64, "hidden": 128, "heads": 4}, True),
    ("layernorm", {"rows": 64, "cols": 1024}, False),
)


def _graph(name: str, params: dict, fused: bool) -> Graph:
    g = build(name, **params)
    return fuse(g) if fused else g


def _label(name: str, params: dict, fused: bool) -> str:
    args = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"build({name!r}, {args})" + (", fused" if fused else "")


def _graphs():
    for name, params, fused in GRAPHS:
        yield _graph(name, params, fused), _label(name, params, fused)


def _size(graph: Graph, name: str) -> int:
    return -(-graph.tensor(name).nbytes // ALIGN) * ALIGN


def _dict(g: Grader, value: Any, case: str, what: str) -> dict:
    if not isinstance(value, dict):
        g.fail(
            f"{case} gave {type(value).__name__} {value!r:.60}; it should be a dict {what}",
            hint="return a dict with one entry per tensor of the graph",
        )
    return value


def _same_tensors(g: Grader, got: dict, graph: Graph, case: str) -> None:
    names = {t.name for t in graph.tensors}
    missing = sorted(names - set(got))
    extra = sorted(set(got) - names, key=str)
    if missing:
        kinds = sorted({graph.tensor(n).kind for n in missing})
        g.fail(
            f"{case} has no entry for {len(missing)} tensor(s), e.g. {missing[0]!r} (kinds: {', '.join(kinds)})",
            hint="every tensor of graph.tensors has a lifetime: inputs, weights and constants too",
        )
    if extra:
        g.fail(f"{case} has entries for {extra[0]!r}, which is no tensor of the graph", hint="key by tensor name")


@exercise("4.1", "tensor_lifetimes(graph) → {tensor name: (first step, last step)}")
def _lifetimes(g: Grader, fn: Any) -> None:
    g.function(fn, "tensor_lifetimes", 1)
    for graph, label in _graphs():
        case = f"tensor_lifetimes({label})"
        got = _dict(g, g.call(fn, graph, case=case), case, "{name: (first, last)}")
        _same_tensors(g, got, graph, case)
        want = lifetimes(graph)
        end = len(graph.nodes)
        for t in graph.tensors:
            span = got[t.name]
            if not isinstance(span, tuple | list) or len(span) != 2:
                g.fail(f"{case}[{t.name!r}] is {span!r:.40}; it should be a pair (first, last)", hint="a 2-tuple")
            first, last = (g.number(v, f"{case}[{t.name!r}]", integer=True) for v in span)
            if (first, last) == want[t.name]:
                continue
            readers = [i for i, n in enumerate(graph.nodes) if t.name in n.reads]
            writers = [i for i, n in enumerate(graph.nodes) if t.name in n.writes]
            if t.kind != "activation" and first != -1:
                hint = f"a {t.kind} is in GM before the first node runs: first = -1"
            elif t.kind in ("weight", "const") or t.name in graph.outputs:
                hint = f"weights, constants and the graph's outputs are kept after the last node: last = {end}"
            elif first != want[t.name][0] and len(writers) > 1:
                hint = "several nodes write this tensor (each its own view): first is the earliest writer"
            elif first != want[t.name][0]:
                hint = "first is the node that writes the tensor"
            elif len(readers) > 1:
                hint = "several nodes read this tensor: last is the latest of them"
            else:
                hint = "last is the last node that reads (or writes) the tensor"
            g.fail(f"{case}[{t.name!r}] is ({int(first)}, {int(last)}), which is not right", hint=hint)
        g.ok(case)


@exercise("4.2", "live_bytes(graph) → bytes live at each step -1, 0, …, len(graph.nodes) (sizes rounded to 512)")
def _live(g: Grader, fn: Any) -> None:
    g.function(fn, "live_bytes", 1)
    for graph, label in _graphs():
        case = f"live_bytes({label})"
        got = g.call(fn, graph, case=case)
        n = len(graph.nodes)
        if isinstance(got, str) or not hasattr(got, "__len__"):
            g.fail(f"{case} gave {type(got).__name__} {got!r:.60}; it should be a list of numbers", hint="a list")
        if len(got) != n + 2:
            g.fail(
                f"{case} gave {len(got)} values for a graph of {n} nodes; it should give {n} + 2",
                hint="one value per step: -1 (before the first node), 0 … n-1 (the nodes), n (after the last)",
            )
        arr = g.array(got, (n + 2,), case)
        want = [live for _, live, _ in plan_memory(graph, "reuse", inplace=False).timeline()]
        exact = [sum(graph.tensor(name).nbytes for name, (a, b) in lifetimes(graph).items() if a <= s <= b)
                 for s in range(-1, n + 1)]  # fmt: skip
        hint = (
            f"round each tensor's bytes up to a multiple of ALIGN = {ALIGN} before adding"
            if list(arr) == exact
            else "a tensor is live at step s when first ≤ s ≤ last (both ends count)"
        )
        g.all_close(arr, want, case, rtol=0, hint=hint)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@exercise("4.3", "best_fit(graph) → {tensor name: offset in bytes}, placed by best fit without in-place reuse")
def _best_fit(g: Grader, fn: Any) -> None:
    g.function(fn, "best_fit", 1)
    for graph, label in _graphs():
        case = f"best_fit({label})"
        got = _dict(g, g.call(fn, graph, case=case), case, "{name: offset}")
        _same_tensors(g, got, graph, case)
        offsets = {k: int(g.number(v, f"{case}[{k!r}]", integer=True, unit="bytes")) for k, v in got.items()}
        bad = [k for k, v in offsets.items() if v < 0]
        if bad:
            g.fail(f"{case} puts {bad[0]!r} at a negative offset", hint="offsets count bytes from the arena's start")
        life = lifetimes(graph)
        block = {k: (o, o + _size(graph, k)) for k, o in offsets.items()}
        for a, b in itertools.combinations(sorted(block, key=lambda k: block[k]), 2):
            if block[b][0] >= block[a][1]:
                continue
            both = max(life[a][0], life[b][0]), min(life[a][1], life[b][1])
            if both[0] <= both[1] and _overlap(block[a], block[b]):
                g.fail(
                    f"{case}: {a!r} and {b!r} are both live at step {both[0]} but share bytes",
                    hint="place a node's outputs first, then free what dies at that node: a kernel must not write "
                    "over what it reads",
                )
        peak = max(end for _, end in block.values())
        want = plan_memory(graph, "reuse", inplace=False).peak
        if peak == sum(_size(graph, t.name) for t in graph.tensors) and peak != want:
            hint = "no block is ever reused: free every tensor after the node at its last step"
        elif peak > want:
            hint = (
                "the smallest hole that holds the tensor (the lowest on a tie); merge a freed block with the holes "
                "beside it; with no hole large enough, start at the hole touching the top, if there is one"
            )
        else:
            hint = (
                "your plan is valid and even smaller, but it is not best fit: take the smallest hole that holds "
                "the tensor, not the first"
            )
        g.close(peak, want, f"{case}: the arena's size (highest offset + size)", hint=hint)


@exercise("4.4", "'a', 'b', 'c' or 'd': why an element-wise output may take its input's block, a matmul's not")
def _inplace(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "9a432f7f66361df3abcc",
        hint="think about how many times each kernel reads each tile of its input, and when",
    )


#: (graph, builder parameters, capacity in bytes or (batch, policy) of a plan whose peak is the capacity)
BATCH_CASES = (
    ("mlp", {"hidden": 64}, MIB),
    ("cnn", {"image": 16}, 2 * MIB),
    ("transformer-block", {"seq": 32, "hidden": 64, "heads": 2}, MIB),
    ("mlp", {}, MIB // 2),  # its weights alone are 1 MiB
    ("cnn", {"image": 16}, (5, "reuse")),  # exactly the peak at batch 5
    ("cnn", {"image": 16}, (7, "naive")),
)


@exercise("4.5", "largest_batch(graph, capacity, policy) → the largest batch whose plan fits capacity bytes")
def _largest_batch(g: Grader, fn: Any) -> None:
    g.function(fn, "largest_batch", 3)
    for name, params, cap in BATCH_CASES:
        graph = build(name, batch=1, **params)
        if isinstance(cap, tuple):
            cap = plan_memory(graph.rebuild(batch=cap[0]), cap[1]).peak
        for policy in ("naive", "reuse"):
            args = ", ".join(f"{k}={v}" for k, v in params.items())
            case = f"largest_batch(build({name!r}, batch=1{', ' if args else ''}{args}), {cap:,}, {policy!r})"
            got = g.number(g.call(fn, graph, cap, policy, case=case), case, integer=True)
            want = max_batch(graph, cap, policy)
            other = "reuse" if policy == "naive" else "naive"
            if want == 0:
                hint = "when not even batch 1 fits, the answer is 0"
            elif got != want and got == max_batch(graph, cap, other):
                hint = f"that is the largest batch under {other!r}: plan with the policy you are given"
            elif got > want:
                hint = "the plan of that batch does not fit: keep the largest batch whose peak ≤ capacity"
            else:
                hint = "a batch fits when plan_memory(graph.rebuild(batch=b), policy).peak ≤ capacity (≤, not <)"
            g.close(got, want, case, hint=hint)


@exercise("4.6", "'a', 'b', 'c' or 'd': why reuse gains more on a deeper network")
def _deeper(g: Grader, answer: Any) -> None:
    g.hashed(
        g.choice(answer, ("a", "b", "c", "d")),
        "13269ea3fcdda7e48b87",
        hint="compare how the naive sum and the live set grow with the number of layers",
    )


#: (chip, graph, rows, cols, tile rows, UB shared by lifetime)
UB_CASES = (
    ("edu", "rmsnorm", 64, 1024, 2, True),
    ("edu", "rmsnorm", 64, 1024, 2, False),
    ("edu", "rmsnorm", 128, 1024, 8, True),
    ("edu", "rmsnorm", 64, 1024, 1, False),  # one row: a per-row value is one element
    ("edu", "softmax", 64, 1024, 4, True),
    ("edu", "softmax", 64, 1024, 4, False),
    ("edu", "layernorm", 64, 1024, 4, True),
    ("edu", "layernorm", 64, 2048, 2, False),
    ("ascend910b-like", "rmsnorm", 64, 768, 16, True),
    ("ascend910b-like", "softmax", 64, 4096, 2, False),
    ("ascend910b-like", "layernorm", 128, 1024, 8, True),
    ("ascend910b-like", "softmax", 32, 2048, 1, True),
)


def _ub_temps(op: Any, chip_name: str, rows: int) -> int:
    """The UB bytes the buffer pass gives the kernel's temporaries at a tile of ``rows`` rows."""
    compiled = compile_op(op, Schedule(tile={"r": rows, "c": op.cols}), load_chip(chip_name))
    temps = [b for b in compiled.kernel.buffers if b.temp]
    return max(b.offset + b.slot_bytes for b in temps) - min(b.offset for b in temps)


@exercise("4.7", "temp_bytes(op, rows, chip) → UB bytes of a fused kernel's temporaries at a tile of rows rows")
def _temp_bytes(g: Grader, fn: Any) -> None:
    g.function(fn, "temp_bytes", 3)
    for chip_name, name, rows, cols, r, share in UB_CASES:
        op = fuse(build(name, rows=rows, cols=cols), share=share).nodes[0].op
        case = f"temp_bytes(<fused {name} {rows}x{cols}, share={share}>, {r}, {chip_name})"
        got = g.number(g.call(fn, op, r, load_chip(chip_name), case=case), case, integer=True, unit="bytes")
        g.close(
            got,
            _ub_temps(op, chip_name, r),
            case,
            hint="only prog.temps; a 'tile' value is rows × cols elements, 'rows' one per row, 'row' one per column, "
            "each rounded up to the UB alignment; the most bytes live at one op"
            + ("" if share else " (with share=False every temporary lives through the whole program)"),
        )
