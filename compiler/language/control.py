"""Control flow on loaded data: ``if n > 0:``, ``for i in range(0, n, BLOCK)`` with ``n = tl.load(lens + pid)``.

The scalar unit decides such things on the chip: it reads the element (``s.ld``, through its data cache) and
branches, or counts the loop. A program here is a straight line of instructions — the path the scalar unit takes —
so the compiler reads the element at launch, from the input array, and writes the path for that value, with an
``s.ld`` where the scalar unit reads it (priced as a GM read it waits for; the run checks memory holds the value
the path was written for). A launch is traced anew, so new data is a new path.

What is known while tracing: a scalar ``tl.load`` from an input (``x_ptr + pid``, no mask or a true one), and
scalar arithmetic on such values (computed as the vector unit would: ``end - start``, ``tl.cdiv(n, BLOCK)``,
``n > 0``). A tile of loaded data is not (branch on one element: ``tl.load(p + i)``); nor is an array the kernel
also stores to — the scalar unit would read it before the stores land: refused with the line.

- ``range(start, stop, step)`` with a known value is a loop whose trip count differs from program to program, as a
  ``break`` at the start of a step already makes it; its ``s.ld`` go before the loop.
- ``if cond:`` / ``else:`` on a known value: the kernel's ``if`` statements are rewritten (:func:`branches`) into
  loops of one step or none (``for _ in then(cond):``), so every program runs the same statements — each branch's
  a loop of its own trip count. On Python values (constexprs, the program id) the rewrite runs the branch as
  Python does, recording nothing. An ``if`` that holds a ``break`` or ``continue`` of an outer loop stays an
  ``if``: on loaded data it is refused with its line. A top-level ``if cond: ... return`` makes the rest of the
  kernel its ``else``.
- ``while`` on loaded data, ``and``/``or``/``not`` of data conditions: refused with the line and what to write.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import types
from collections.abc import Callable, Iterator

import numpy as np

from compiler.language.core import LoopRec, Read, Rec, Tracer, drop, records, tracer
from compiler.language.errors import LanguageError, user_site
from compiler.language.tensor import Tensor
from compiler.memo import Memo

#: the names the rewritten ``if`` statements call (put in the kernel's globals by ``launch.trace``)
THEN, ELSE, COND = "__dsasim_then", "__dsasim_else", "__dsasim_cond"


def known(x: Tensor, what: str) -> tuple[float, tuple[Read, ...]]:
    """The value of scalar ``x`` and the input elements it comes from; refused when it is not known at launch."""
    t = tracer()
    reads = t.sources.get(x.vid, ())
    value = t.decide(x.vid, x.data, user_site()) if x.shape == () else None
    if value is None:
        raise LanguageError(
            f"{what} depends on loaded data the scalar unit cannot read"
            + (f" (a tile of {list(x.shape)}, not one element)" if x.shape != () else ""),
            hint="decide on one element loaded from an input array (n = tl.load(lens + pid)) and scalar arithmetic "
            "on it; choose per element with tl.where or a mask",
        )
    return value, reads


def bound(x: object, what: str) -> tuple[object, tuple[Read, ...]]:
    """A loop bound: itself, or the value of a known scalar tensor (an int) and its reads."""
    if not isinstance(x, Tensor):
        return x, ()
    if x.dtype.is_float:
        raise LanguageError(f"loop {what} {x!r} is a float tensor", hint="convert it: n.to(tl.int32)")
    value, reads = known(x, f"this loop's {what}")
    return int(value), reads


class Cond:
    """A condition on loaded data: its truth and the reads it was decided on (the ``then`` loop reads them)."""

    def __init__(self, value: bool, reads: tuple[Read, ...]) -> None:
        self.value = value
        self.reads = reads


def cond(test: object, has_return: bool = False, at: tuple[str, int] = ("", 0)) -> object:
    """The test of a rewritten ``if``: a Python value as it is, a scalar tensor as a :class:`Cond`. A Python value's
    answer is remembered per ``if``; one that went both ways across the programs or loop steps of a launch whose
    programs then differed (``if pid == 0: tl.store(...)``, ``if row < M:`` in a loop) is traced again as a branch:
    a :class:`Cond` too, a loop of one step or none on the chip."""
    if not isinstance(test, Tensor):
        t = tracer()
        if t.interpret or isinstance(test, np.ndarray):
            return test  # Python decides (an array's truth value is Python's error)
        if at in t.moving and not has_return:
            return Cond(bool(test), ())
        answers = t.answers.get(at)
        if answers is None:
            t.answers[at] = {bool(test)}
        else:
            answers.add(bool(test))
        return test
    if has_return and not tracer().interpret:
        raise LanguageError(
            "a return inside an if on loaded data: on the chip every program runs the same statements",
            hint="put the rest of the kernel under the if's else (or `if not ...:` around it)",
        )
    value, reads = known(test, "this if")
    return Cond(bool(value), reads)


def then(c: object) -> Iterator[None] | builtins.range:
    """The ``then`` branch: one step or none — a loop on the chip when ``c`` is data."""
    if not isinstance(c, Cond):
        return builtins.range(1 if c else 0)
    return _branch(c.value, c.reads)


def otherwise(c: object) -> Iterator[None] | builtins.range:
    """The ``else`` branch (its decision was read for the ``then`` loop just before)."""
    if not isinstance(c, Cond):
        return builtins.range(0 if c else 1)
    return _branch(not c.value, ())


def _branch(taken: bool, reads: tuple[Read, ...]) -> Iterator[None]:
    t = tracer()
    if t.interpret:
        return iter([None] if taken else [])
    return (None for _ in t.loop(builtins.range(1 if taken else 0), 1, user_site()))


def check_decisions(t: Tracer) -> None:
    """Refuse a decision on an array the kernel also stores to: the scalar unit reads it once, before the stores
    (the trace read the launch's values). Then each read stays at its first use in its program only (the scalar
    unit keeps the value in a register after that)."""
    if t.decisions:
        for body in t.programs:
            _first_uses(body, set())
    if t.decisions or t.asserted:
        _drop_unread(t)
    for reads, site in t.decisions:
        for r in reads:
            if r.arg.stored:
                raise LanguageError(
                    f"this decision reads {r.arg.name} (line {r.site.line}), which the kernel also stores to: the "
                    "scalar unit reads the value the array held at launch",
                    site=site,
                    hint="decide on an input the kernel does not write (pass the lengths or the table separately)",
                )


def _drop_unread(t: Tracer) -> None:
    """Drop the vector steps that nothing on the chip reads: steps on known scalars (``n > 0`` decided by the scalar
    unit; ``end - start`` only bounding a loop) — dead code once the decisions are the scalar unit's — and the
    conditions of ``tl.device_assert`` (checked when interpreted; the chip has no trap), with the steps that made
    only them. Decided per kernel line: every program runs the same statements."""
    while True:
        read = {v for body in t.programs for d in records(body) for v in d.ins}
        lines: dict[tuple, list[Rec]] = {}
        for body in t.programs:
            for d in records(body):
                if d.kind == "vec":
                    lines.setdefault(d.signature(), []).append(d)
        gone: set[int] = set()
        for sig, recs in lines.items():
            if all(d.out not in read and (d.out in t.sources or sig in t.asserted) for d in recs):
                gone.update(id(d) for d in recs)
                if sig in t.asserted:  # what only the condition read goes too, if nothing else reads it
                    made = (t.values[v].rec for d in recs for v in d.ins)
                    t.asserted.update(r.signature() for r in made if r is not None and r.kind == "vec")
        if not gone:
            return
        for body in t.programs:
            drop(body, gone)


def _first_uses(items: list, seen: set[Read]) -> None:
    for d in items:
        if isinstance(d, LoopRec) and d.reads and d.iters:
            first = next((r for r in records(d.iters[0]) if r.kind in ("load", "store")), None)
            if first is not None:  # read just before the loop's first transfer, which may be issued steps ahead
                first.reads, d.reads = tuple(dict.fromkeys((*d.reads, *first.reads))), ()
        if d.reads:
            d.reads = tuple(r for r in d.reads if r not in seen)
            seen.update(d.reads)
        if isinstance(d, LoopRec):
            for it in d.iters:
                _first_uses(it, seen)


# ----------------------------------------------------------------------------------- the rewrite


class _Branches(ast.NodeTransformer):
    """``if T: A else: B`` → ``c = cond(T); for _ in then(c): A; for _ in otherwise(c): B`` (module docs)."""

    def __init__(self, file: str) -> None:
        self.file = file  # with its line, the key of each if's answers (``cond``)
        self.n = 0
        self.depth = 0  # function definitions entered: only the kernel's own body is rewritten

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.depth += 1
        if self.depth == 1:
            node.body = _returns_to_else(node.body)
        self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if self.depth != 1 or _escapes(node):
            return node
        self.n += 1
        name = f"__dsasim_c{self.n}"
        has_return = any(isinstance(n, ast.Return) for s in node.body + node.orelse for n in ast.walk(s))
        call = ast.Call(
            ast.Name(COND, ast.Load()),
            [node.test, ast.Constant(has_return), ast.Constant((self.file, node.lineno))],
            [],
            lineno=node.lineno,
            col_offset=0,
        )
        out: list[ast.stmt] = [ast.Assign([ast.Name(name, ast.Store())], call, lineno=node.lineno)]
        for fn, body in ((THEN, node.body), (ELSE, node.orelse)):
            if body:
                it = ast.Call(ast.Name(fn, ast.Load()), [ast.Name(name, ast.Load())], [])
                out.append(ast.For(ast.Name("__dsasim_step", ast.Store()), it, body, [], lineno=node.lineno))
        for s in out:
            ast.copy_location(s, node)
            ast.fix_missing_locations(s)
        return out


def _escapes(node: ast.If) -> bool:
    """Whether a ``break``/``continue`` in ``node`` leaves a loop around it (a ``for`` would catch it)."""

    def walk(n: ast.AST) -> bool:
        if isinstance(n, ast.Break | ast.Continue):
            return True
        if isinstance(n, ast.For | ast.While | ast.FunctionDef | ast.Lambda):
            return False
        return any(walk(c) for c in ast.iter_child_nodes(n))

    return any(walk(s) for s in node.body + node.orelse)


def _returns_to_else(body: list[ast.stmt]) -> list[ast.stmt]:
    """``if T: A; return`` then ``R`` at the kernel's top level → ``if T: A`` ``else: R`` (the same in Python)."""
    for i, s in enumerate(body):
        if (
            isinstance(s, ast.If)
            and not s.orelse
            and s.body
            and isinstance(s.body[-1], ast.Return)
            and s.body[-1].value is None
            and i + 1 < len(body)
        ):
            kept = s.body[:-1] or [ast.copy_location(ast.Pass(), s.body[-1])]
            rest = _returns_to_else(body[i + 1 :])
            return [*body[:i], ast.copy_location(ast.If(s.test, kept, rest), s)]
    return body


def traced(fn: Callable, code: types.CodeType | None = None, **names: object) -> Callable:
    """``fn`` as the tracer runs it: ``code`` (its own with the ``if`` statements rewritten: :func:`branches`) over
    its globals plus the rewrite's names and ``names`` (``range``: the chip's loops)."""
    scope = {**fn.__globals__, THEN: then, ELSE: otherwise, COND: cond, **names}
    body = branches(fn.__code__, fn) if code is None else code
    return types.FunctionType(body, scope, fn.__name__, fn.__defaults__, fn.__closure__)


#: rewritten code by the code it was made from (reading and parsing a kernel's source took 0.1 s a launch)
_REWRITTEN: Memo[types.CodeType] = Memo(256)


def branches(code: types.CodeType, fn: Callable) -> types.CodeType:
    """``fn``'s code with its ``if`` statements rewritten (module docs); its own code when its source cannot be
    read or it has free variables (a closure: then an ``if`` on data is refused at ``__bool__``)."""
    return _REWRITTEN.get(code, lambda: _rewrite(code, fn))


def _rewrite(code: types.CodeType, fn: Callable) -> types.CodeType:
    if code.co_freevars:
        return code
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return code
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return code
    ast.increment_lineno(tree, first - 1)
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef) or func.name != code.co_name:
        return code
    same = _code_of(tree, code)
    if (same.co_names, same.co_varnames, same.co_firstlineno) != (code.co_names, code.co_varnames, code.co_firstlineno):
        return code  # the file changed since the kernel was defined: run the code as it is
    rewriter = _Branches(code.co_filename)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    if not rewriter.n:
        return code
    return _code_of(tree, code)


def _code_of(tree: ast.Module, code: types.CodeType) -> types.CodeType:
    module = compile(tree, code.co_filename, "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name)
