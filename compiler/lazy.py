"""Re-exports a package loads on first use (PEP 562), so that importing one of its modules — or the package
for one name — does not import all the others.

A package's ``__init__`` lists its public names and the module each lives in, and calls :func:`exports`::

    __all__ = exports(__name__, {"MatMul": "compiler.ops", "compile": "compiler.compile"})

``from compiler import MatMul`` then imports ``compiler.ops`` only. A name that is also a submodule's (the
function ``compiler.tune.search`` in the module ``compiler.tune.search``) stays the name's value when that
submodule is first imported: the import system sets the package's attribute to the submodule, and the
package keeps the name's value instead, as an eager ``from ... import`` in ``__init__`` did.
"""

from __future__ import annotations

import importlib
import sys
import types


class LazyPackage(types.ModuleType):
    """A package whose public names are imported from their modules on first use (``SOURCES``)."""

    SOURCES: dict[str, str]

    def __getattr__(self, name: str) -> object:
        try:
            module = self.__dict__["SOURCES"][name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), name)
        self.__dict__[name] = value
        return value

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__dict__.get("SOURCES", ())})

    def __setattr__(self, name: str, value: object) -> None:
        module = self.__dict__.get("SOURCES", {}).get(name)
        if module is not None and isinstance(value, types.ModuleType) and value.__name__ == module:
            value = getattr(value, name)
        super().__setattr__(name, value)


def exports(package: str, sources: dict[str, str]) -> list[str]:
    """Make ``package`` (its ``__name__``) load each name of ``sources`` (name → module) on first use;
    returns the names, for ``__all__``."""
    module = sys.modules[package]
    module.__dict__["SOURCES"] = sources
    module.__class__ = LazyPackage
    return list(sources)
