"""The runner: a fresh sandboxed process that rebuilds a student's functions from their source and runs them.

The grader (``labs.grading.remote``) starts it after the student's notebook ran, in a sandbox of its own
(``labs.grading.sandbox``), and sends it requests, one frame each (8-byte length, then JSON):

- ``{"op": "define", "bundle": B}``: execute a function's (class's, kernel's) source and the sources of
  the names it uses, in a namespace of their own; reply with a handle;
- ``{"op": "call", "handle": H, "args": PICKLE, "grid": PICKLE|null}``: call it (``fn[grid](...)`` for a
  kernel); reply with the result as data (:mod:`labs.grading.codec`; what is not data stays here, behind a
  new handle) and the arrays among the arguments after the call (a kernel writes its outputs in place);
- ``{"op": "getattr", "handle": H, "name": N}`` and ``{"op": "method", ...}``.

Requests come from the grader, which the runner trusts (arguments are pickles); replies are data only,
which the grader trusts no more than the student. No student code ran in this process before the
first request: what the notebook did to its own modules is not here.
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import json
import linecache
import os
import pickle
import struct
import sys
import types
from typing import Any

try:
    from labs.grading.codec import decode, encode
except ImportError:  # in the sandbox, beside codec.py
    from codec import decode, encode  # type: ignore[no-redef]

objects: list[Any] = []
_defined = 0
#: What the grader sent, by ``id`` here: (the grader's token, the path to it) — an argument, or an item of
#: one of its list attributes (a search space's candidates). A result that *is* one of them is sent back
#: as that reference, so that the grader gets its own object (graders compare candidates by identity).
received: dict[int, tuple[int, list]] = {}
_kept_alive: list[Any] = []


def signature(obj: Any) -> list | None:
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    return [[p.name, int(p.kind), p.default is not inspect.Parameter.empty] for p in params]


def remember(args: tuple, tokens: list) -> None:
    """Note the arguments the grader sent (and the items of their list attributes) under its tokens."""
    for arg, token in zip(args, tokens):
        if token is None or isinstance(arg, int | float | str | bytes | bool) or arg is None:
            continue
        _kept_alive.append(arg)
        received.setdefault(id(arg), (int(token), []))
        for name, value in list(getattr(arg, "__dict__", {}).items())[:32]:
            if isinstance(value, list | tuple) and len(value) <= 100_000:
                for j, item in enumerate(value):
                    received.setdefault(id(item), (int(token), [name, j]))


def keep(obj: Any) -> dict[str, Any]:
    """A handle for ``obj`` (it stays here), or a reference to the grader's own object it is."""
    if id(obj) in received:
        token, path = received[id(obj)]
        return {"$sent": token, "path": path}
    objects.append(obj)
    out: dict[str, Any] = {"$handle": len(objects) - 1, "type": type(obj).__name__, "callable": callable(obj)}
    if isinstance(obj, type):
        out["class"] = obj.__name__
        out["bases"] = [[b.__module__, b.__qualname__] for b in obj.__mro__[1:] if b is not object]
        out["methods"] = sorted(n for n in dir(obj) if not n.startswith("__") and callable(getattr(obj, n, None)))
    if callable(obj):
        out["signature"] = signature(obj)
    if getattr(obj, "launch", None) is not None and callable(getattr(obj, "fn", None)):
        out["kernel"] = True
    return out


def _resolve(tagged: dict, namespace: dict[str, Any]) -> Any:
    """A stand-in the exporter made: a module, an importable name, a bundle (defined here), an object."""
    tag = next(iter(tagged))
    if tag == "$module":
        return __import__(tagged["$module"], fromlist=["_"])
    if tag == "$ref":
        module, qualname = tagged["$ref"]
        if str(module).split(".")[0] == "labs":
            raise ValueError(f"{module}.{qualname} is the labs' own code, not an answer")
        obj = __import__(module, fromlist=["_"])
        for part in str(qualname).split("."):
            obj = getattr(obj, part)
        return obj
    if tag == "$code":
        return define(tagged["$code"], namespace, jit=bool(tagged.get("jit")))
    if tag == "$object":
        return types.SimpleNamespace(**{k: decode(v, lambda t: None) for k, v in tagged.get("fields", {}).items()})
    return None


def define(bundle: dict[str, Any], namespace: dict[str, Any] | None = None, *, jit: bool = False) -> Any:
    """Execute ``bundle``'s source (after its names) and return what it defines."""
    global _defined
    namespace = {"__name__": "__main__", "__builtins__": __builtins__} if namespace is None else namespace
    for name, value in bundle.get("deps", {}).items():
        if name not in namespace:
            with contextlib.suppress(Exception):  # a name that cannot be rebuilt stays undefined
                namespace[name] = decode(value, lambda t, ns=namespace: _resolve(t, ns))
    _defined += 1
    source = str(bundle["source"])
    filename = f"<answer {_defined}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # error lines, kernels
    exec(compile(source, filename, "exec"), namespace)
    obj = namespace[str(bundle["name"])]
    if jit and getattr(obj, "launch", None) is None:
        import dsasim

        obj = dsasim.jit(obj)
    return obj


def _raised(err: BaseException) -> dict[str, Any]:
    out = {"raised": type(err).__name__, "message": str(err)[:4000]}
    if hasattr(err, "hint") and hasattr(err, "message"):  # a DsasimError: the grader shows its message
        out |= {"dsasim": True, "message": str(err.message)[:4000], "hint": str(err.hint or "")[:2000]}
    return out


def _arrays(args: tuple, kwargs: dict) -> dict[str, Any]:
    import numpy as np

    pos = [[i, encode(a)] for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    kw = [[k, encode(a)] for k, a in kwargs.items() if isinstance(a, np.ndarray)]
    return {"args": pos, "kwargs": kw}


def handle(request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    try:
        if op == "define":
            return {"result": keep(define(request["bundle"], jit=bool(request.get("jit"))))}
        obj = objects[int(request["handle"])]
        if op == "getattr":
            return {"result": encode(getattr(obj, str(request["name"])), keep)}
        args, kwargs = pickle.loads(base64.b64decode(request["args"]))
        remember(args, list(request.get("tokens") or []))
        if op == "method":
            obj = getattr(obj, str(request["name"]))
        if request.get("grid") is not None:
            obj = obj[pickle.loads(base64.b64decode(request["grid"]))]
        result = obj(*args, **kwargs)
        return {"result": encode(result, keep), "after": _arrays(args, kwargs)}
    except BaseException as err:
        if isinstance(err, KeyboardInterrupt):
            raise
        return _raised(err)


def read_frame(stream: Any) -> dict[str, Any] | None:
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack(">Q", head)
    return json.loads(stream.read(n))


def write_frame(stream: Any, message: dict[str, Any]) -> None:
    data = json.dumps(message, allow_nan=False).encode()
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def main() -> None:
    # the protocol keeps the pipes; the student's prints go nowhere
    inp = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    while True:
        request = read_frame(inp)
        if request is None:
            return
        try:
            write_frame(out, handle(request))
        except (ValueError, TypeError) as err:  # e.g. a result that cannot be encoded
            write_frame(out, {"raised": type(err).__name__, "message": str(err)[:4000]})


if __name__ == "__main__":
    main()
