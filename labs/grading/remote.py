"""The grader's side of the runner: answers rebuilt from source in a fresh sandboxed process.

A function, class or kernel a notebook answered with arrives as source (``labs.grading.export``). The
grader hands it to a :class:`Runner` — a fresh process in the sandbox, which no student code touched
before — and grades through stand-ins: :class:`RemoteFunction` (calling it runs it there; the result
comes back as data), :class:`RemoteKernel` (``kernel[grid](...)``: the arrays it writes are copied back
into the grader's), a class whose instances live there (:func:`remote_class`). The graders, their
comparisons and the points stay in the grading process.
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import json
import os
import pickle
import select
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from isa import DsasimError
from labs.grading.codec import CodecError, decode
from labs.grading.sandbox import Sandbox

#: The largest reply read from the runner (bytes).
MAX_REPLY = 64 * 2**20


class OutOfTime(BaseException):
    """The notebook used up its time budget (a signal, like ``KeyboardInterrupt``, not an error)."""


class KernelDied(BaseException):
    """A sandboxed process died (``os._exit``, a segfault, a resource limit)."""


class Runner:
    """A fresh sandboxed process that rebuilds answers from their source and runs them on request."""

    def __init__(self, sandbox: Sandbox, work: Path, budget: Any) -> None:
        self.budget = budget  # what the calls' time counts against (``remaining``, ``used``)
        #: the objects the grader sent as arguments (the runner refers to them by index)
        self.sent: list[Any] = []
        argv = [os.path.realpath(os.sys.executable), "-S", str(sandbox.tools / "runner.py")]
        self.proc = subprocess.Popen(
            sandbox.command(work, argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, message: dict[str, Any]) -> Any:
        """Send ``message``; the decoded result (stand-ins for what stays there); raises what it raised."""
        if self.budget.remaining <= 0:
            raise OutOfTime
        data = json.dumps(message).encode()
        start = time.perf_counter()
        try:
            self.proc.stdin.write(struct.pack(">Q", len(data)) + data)
            self.proc.stdin.flush()
            reply = self._read()
        except (BrokenPipeError, OSError):
            raise KernelDied from None
        finally:
            self.budget.used += time.perf_counter() - start
        if "raised" in reply:
            name, text = str(reply["raised"]), str(reply.get("message", ""))
            if name == "NotImplementedError":
                raise NotImplementedError(text)
            if reply.get("dsasim"):
                raise DsasimError(text, hint=str(reply.get("hint") or "") or None)
            raise type(name, (Exception,), {})(text)
        try:
            result = decode(reply.get("result"), self._stand_in)
        except (CodecError, ValueError, TypeError, KeyError) as err:
            raise RuntimeError(f"the runner's reply is not data: {err}") from None
        self.after = reply.get("after")
        return result

    def _read_exact(self, n: int) -> bytes:
        out = b""
        fd = self.proc.stdout.fileno()
        while len(out) < n:
            left = self.budget.remaining - 0
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                self.close()
                self.budget.used = self.budget.budget
                raise OutOfTime
            chunk = os.read(fd, min(n - len(out), 1 << 20))
            if not chunk:
                raise KernelDied
            out += chunk
        return out

    def _read(self) -> dict[str, Any]:
        (n,) = struct.unpack(">Q", self._read_exact(8))
        if n > MAX_REPLY:
            self.close()
            raise RuntimeError(f"the runner replied with {n:,} bytes, more than {MAX_REPLY:,}")
        reply = json.loads(self._read_exact(n))
        if not isinstance(reply, dict):
            raise RuntimeError("the runner's reply is not an object")
        return reply

    def _stand_in(self, tagged: dict) -> Any:
        if "$sent" in tagged:  # one of the grader's own objects, sent earlier
            obj = self.sent[int(tagged["$sent"])]
            path = tagged.get("path") or []
            return getattr(obj, str(path[0]))[int(path[1])] if len(path) == 2 else obj
        if "$handle" not in tagged:
            raise CodecError(f"unexpected {next(iter(tagged))}")
        return stand_in(self, tagged)

    def _send(self, arg: Any) -> int:
        self.sent.append(arg)
        return len(self.sent) - 1

    def define(self, bundle: dict[str, Any], *, jit: bool = False) -> Any:
        return self.request({"op": "define", "bundle": bundle, "jit": jit})

    def call(self, handle: int, args: tuple, kwargs: dict, *, grid: Any = None, method: str | None = None) -> Any:
        message = {
            "op": "method" if method else "call",
            "handle": handle,
            "name": method,
            "args": _pickle((args, kwargs)),
            "tokens": [self._send(arg) for arg in args],
        }
        message["grid"] = None if grid is None else _pickle(grid)
        result = self.request(message)
        _copy_back(self.after, args, kwargs)
        return result


def _pickle(value: Any) -> str:
    return base64.b64encode(pickle.dumps(value, protocol=4)).decode("ascii")


def _copy_back(after: Any, args: tuple, kwargs: dict) -> None:
    """Write the arrays the call changed there into the grader's arrays (a kernel's outputs)."""
    if not isinstance(after, dict):
        return
    for key, data in [*after.get("args", []), *after.get("kwargs", [])]:
        target = args[key] if isinstance(key, int) and key < len(args) else kwargs.get(key)
        with contextlib.suppress(CodecError, ValueError, TypeError, KeyError):
            value = decode(data)
            if isinstance(target, np.ndarray) and target.flags.writeable and value.shape == target.shape:
                np.copyto(target, value, casting="unsafe")


def _signature(spec: Any) -> inspect.Signature | None:
    if not isinstance(spec, list):
        return None
    try:
        params = [
            inspect.Parameter(str(n), inspect._ParameterKind(int(k)), default=None if d else inspect.Parameter.empty)
            for n, k, d in spec
        ]
        return inspect.Signature(params)
    except (ValueError, TypeError):
        return None


def stand_in(runner: Runner, tagged: dict) -> Any:
    """What stands in the grader for the runner's object ``tagged`` describes."""
    handle = int(tagged["$handle"])
    if tagged.get("kernel"):
        return RemoteKernel(runner, handle, str(tagged.get("type")), tagged.get("signature"))
    if "class" in tagged:
        return remote_class(runner, handle, tagged)
    if tagged.get("callable"):
        return RemoteFunction(runner, handle, str(tagged.get("type")), tagged.get("signature"))
    return RemoteObject(runner, handle, str(tagged.get("type")))


class RemoteObject:
    """An object that lives in the runner; its attributes are fetched from there."""

    def __init__(self, runner: Runner, handle: int, type_name: str) -> None:
        self._runner, self._handle, self._type = runner, handle, type_name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._runner.request({"op": "getattr", "handle": self._handle, "name": name})

    def __repr__(self) -> str:
        return f"<{self._type} of the student's>"


class RemoteFunction(RemoteObject):
    """A function of the student's, rebuilt in the runner; calling it runs it there."""

    def __init__(self, runner: Runner, handle: int, type_name: str, signature: Any) -> None:
        super().__init__(runner, handle, type_name)
        self.__signature__ = _signature(signature)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._runner.call(self._handle, args, kwargs)


class RemoteKernel(RemoteFunction):
    """A ``@dsasim.jit`` kernel of the student's: ``kernel[grid](arrays..., **constants)`` runs there."""

    def launch(self, *args: Any, **kwargs: Any) -> Any:
        return self._runner.call(self._handle, args, kwargs, method="launch")

    def __getitem__(self, grid: Any) -> Any:
        return lambda *args, **kwargs: self._runner.call(self._handle, args, kwargs, grid=grid)


def remote_class(runner: Runner, handle: int, tagged: dict) -> type:
    """A class standing for the student's class: a subclass of the same importable bases (so
    ``issubclass`` holds), whose instances are made in the runner and whose methods run there."""
    bases = []
    for module, qualname in tagged.get("bases", []):
        if str(module).split(".")[0] in ("isa", "compiler", "simulator", "dsasim"):
            with contextlib.suppress(ImportError, AttributeError):
                obj = __import__(module, fromlist=["_"])
                for part in str(qualname).split("."):
                    obj = getattr(obj, part)
                if isinstance(obj, type) and obj not in bases:
                    bases.append(obj)
    bases = [b for b in bases if not any(b is not o and issubclass(o, b) for o in bases)]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "_remote", runner.call(handle, args, kwargs))

    def __getattr__(self: Any, name: str) -> Any:
        if name.startswith("__") or name == "_remote":
            raise AttributeError(name)
        return getattr(object.__getattribute__(self, "_remote"), name)

    def forward(name: str) -> Any:
        return lambda self, *a, **k: runner.call(object.__getattribute__(self, "_remote")._handle, a, k, method=name)

    body: dict[str, Any] = {"__init__": __init__, "__getattr__": __getattr__, "__module__": "student"}
    for name in tagged.get("methods", []):
        if not str(name).startswith("__"):
            body[str(name)] = forward(str(name))
    try:
        return type(str(tagged["class"]), tuple(bases) or (object,), body)
    except TypeError:
        return type(str(tagged["class"]), (object,), body)
