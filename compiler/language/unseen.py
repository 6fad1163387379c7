"""Where a program id could be used unseen: what stops a launch from stamping its programs.

A :class:`~compiler.language.pids.Pid` is an ``int`` whose answers are guards (``compiler.language.stamp``), but
CPython reads an ``int`` subclass's value directly, without asking it, where it indexes a list, a tuple, a string
or a ``range``. A kernel that could do that — it reaches a Python container (an argument, a global, a closure
cell, a constant bound to a name or subscripted, a list, set or dict it builds with items; an empty tuple, string or
range is no container here, as no index of it succeeds), builds one by a
comprehension, or calls a plain Python helper (whose ``range`` is the builtin) — is traced program by program:
nothing it computes is stamped. What this does not see — a container reached through an attribute, or a list
built empty and filled with numbers, indexed by a program id itself (not by ``pid % n`` or another answer, which
is a guard) — is left to the stamp's own check: a shape's first stamp is compared with a full trace.
"""

from __future__ import annotations

import builtins
import dis
import functools
import types
from collections.abc import Callable, Iterable

import numpy as np

from isa.fast import fast

#: values a program id may index without a hook
CONTAINERS = (list, tuple, dict, set, frozenset, range, str, bytes, bytearray, np.ndarray)
#: containers that cannot change: empty, every index of them fails whatever the program (a kernel's closure holding
#: ``pages=()``, a contiguous cache's empty block table)
FIXED = (tuple, frozenset, range, str, bytes)
#: opcodes that build a container (checked as a constant container is: is it subscripted or named?) ...
BUILDS = frozenset({"BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING"})
#: ... and the comprehensions' own (their result leaves their code: refused outright)
COMPREHENSIONS = frozenset({"LIST_APPEND", "SET_ADD", "MAP_ADD"})
#: modules whose functions are the language's or numeric libraries' own: they do their own bookkeeping
OWN = ("compiler.", "dsasim.", "numpy", "math", "builtins")


def unseen_use(fn: Callable, values: Iterable[object] = ()) -> str | None:
    """Why ``fn``, launched with argument ``values``, could use a program id where no guard sees it; None if it
    cannot."""
    for v in values:
        if isinstance(v, CONTAINERS) and not _array_argument(v) and not _empty(v):
            return f"an argument is a {type(v).__name__}"
    return _code_use(fn, set())


def _array_argument(v: object) -> bool:
    """A numpy array passed as a kernel argument is a pointer to GM, never indexed by the trace."""
    return isinstance(v, np.ndarray)


def _empty(v: object) -> bool:
    """An empty container that cannot change: indexing it fails in every program alike, and iterating it does
    nothing."""
    return isinstance(v, FIXED) and len(v) == 0  # type: ignore[arg-type]


def _code_use(fn: object, seen: set[int]) -> str | None:
    inner = getattr(fn, "fn", None)  # a ``@dsasim.jit`` function: its Python function
    if inner is not None and callable(inner):
        fn = inner
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return None
    seen.add(id(code))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            if isinstance(cell.cell_contents, CONTAINERS) and not _empty(cell.cell_contents):
                return "a closure holds a container"
        except ValueError:  # an empty cell
            continue
    scope = getattr(fn, "__globals__", {})
    for c in _codes(code):
        why = _ops_use(c, scope, seen)
        if why is not None:
            return why
    return None


def _codes(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for k in code.co_consts:
        if isinstance(k, types.CodeType):
            yield from _codes(k)


def _ops_use(code: types.CodeType, scope: dict, seen: set[int]) -> str | None:
    for why, name in _reads(code) if fast() else _read(code):
        if why is not None:
            return why
        v = scope[name] if name in scope else getattr(builtins, name, None)
        if isinstance(v, CONTAINERS) and not _empty(v):
            return f"global {name} is a container"
        helper = getattr(v, "fn", v)  # a ``@dsasim.jit`` helper: its Python function
        if isinstance(helper, types.FunctionType) and not (helper.__module__ or "").startswith(OWN):
            plain = helper is v and "range" in helper.__code__.co_names  # its range is the builtin
            why = _code_use(helper, seen) or (f"helper {name} uses the builtin range" if plain else None)
            if why is not None:
                return why
    return None


def _read(code: types.CodeType) -> tuple[tuple[str | None, str], ...]:
    """What ``code`` does that :func:`_ops_use` asks about, in order, up to the first use its bytecode alone
    refuses: ``(None, name)`` for each global it reads (its value is the launch's), ``(why, "")`` for that use."""
    ops = list(dis.get_instructions(code))
    found: list[tuple[str | None, str]] = []
    for i, ins in enumerate(ops):
        line = ins.positions.lineno if ins.positions else "?"
        if ins.opname in COMPREHENSIONS:
            return (*found, (f"line {line} is a comprehension", ""))
        built = ins.opname in BUILDS and not _named_empty(ops, i)
        if (built or (ins.opname == "LOAD_CONST" and isinstance(ins.argval, CONTAINERS))) and _indexed(ops, i):
            return (*found, (f"line {line} indexes or names a container", ""))
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            found.append((None, ins.argval))
    return tuple(found)


#: :func:`_read` of each code object (its bytecode does not change; a kernel is traced once per program and
#: phase, and disassembling it was a tenth of a naive attention's compile)
_reads = functools.lru_cache(maxsize=1024)(_read)


def _named_empty(ops: list[dis.Instruction], i: int) -> bool:
    """Whether ``ops[i]`` builds an empty container bound to a name (``rows = []``, ``rows, qs = [], []``: a
    kernel's lists of tiles, filled by ``append`` as it traces)."""
    if ops[i].opname not in BUILDS or ops[i].arg != 0:
        return False
    for nxt in ops[i + 1 :]:
        if nxt.opname.startswith("STORE_"):
            return True
        if not ((nxt.opname in BUILDS and nxt.arg == 0) or nxt.opname in ("BUILD_TUPLE", "UNPACK_SEQUENCE")):
            return False
    return False


def _indexed(ops: list[dis.Instruction], i: int) -> bool:
    """Whether the container ``ops[i]`` leaves on the stack is subscripted or bound to a name before it is
    consumed (or control jumps first: then say yes)."""
    level = depth = 1
    for ins in ops[i + 1 :]:
        if ins.opname == "BINARY_SUBSCR" and depth == level + 1:
            return True
        if ins.opname.startswith("STORE_") and depth == level:
            return True
        if "JUMP" in ins.opname or ins.opname in ("FOR_ITER", "RETURN_VALUE"):
            return True
        try:
            depth += dis.stack_effect(ins.opcode, ins.arg)
        except ValueError:
            return True
        if depth < level:
            return False
    return True
