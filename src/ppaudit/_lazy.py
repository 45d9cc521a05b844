"""Lazy re-exports for the sub-packages' ``__init__`` (PEP 562 module ``__getattr__``).

A sub-package re-exports the public names of its modules (``from ppaudit.audit import
two_cut_lower_bound``), but importing one module should not import its siblings and their
dependencies: every workflow job is a fresh process, and ``from .bounds import *`` for every
sibling made each job pay for scipy.stats, dp_accounting, statsmodels, … whether it used them
or not (issue 30). :func:`attach` gives a package a ``__getattr__`` that imports the module of
a name on first access and caches the value in the package namespace, so

* ``from ppaudit.audit import two_cut_lower_bound`` imports ``ppaudit.audit.bounds`` only;
* ``ppaudit.audit.bounds`` (the sub-module as an attribute) still works;
* ``from ppaudit.audit import *`` and ``ppaudit.audit.__all__`` are what they were.

The table of names is written out in each ``__init__`` (module → its ``__all__``, in the order
of the former star imports); ``tests/unit/test_public_api.py`` checks that it equals every
module's ``__all__`` and that every name resolves to the module's own object.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def attach(
    package: str,
    exports: Mapping[str, Sequence[str]],
    submodules: Sequence[str] = (),
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` of a package that re-exports lazily.

    Args:
        package: the package's ``__name__``.
        exports: sub-module name (relative, e.g. ``"bounds"``) → the public names it defines,
            in the order of ``__all__``. A name listed under two modules resolves to the later
            one, as a later ``from .x import *`` overwrote an earlier one.
        submodules: further sub-modules that are attributes of the package but export nothing
            (every key of ``exports`` is one already).

    Returns:
        ``(__all__, __getattr__, __dir__)`` to assign in the package's namespace.
    """
    where: dict[str, str] = {}
    for module, names in exports.items():
        for name in names:
            where[name] = module
    modules = frozenset(exports) | frozenset(submodules)
    public = list(dict.fromkeys(name for names in exports.values() for name in names))

    def __getattr__(name: str) -> Any:
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        elif name in modules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)  # later look-ups do not come here
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public) | modules)

    return public, __getattr__, __dir__


class LazyImport:
    """A stand-in for ``module`` (or ``module.attr``) that imports it on first use.

    For a heavy dependency that a module needs in some functions only, without touching their
    bodies: ``binom = LazyImport("scipy.stats", "binom")`` at module level instead of
    ``from scipy.stats import binom``; ``binom.logpmf(...)`` then imports scipy.stats at the
    first call and forwards to the very same object, so the numbers are those of the eager
    import. Attribute access and calls are forwarded; ``isinstance``/identity checks on the
    stand-in itself are not (use :meth:`load` for the real object).
    """

    __slots__ = ("_module", "_attr", "_obj")

    def __init__(self, module: str, attr: str | None = None) -> None:
        self._module = module
        self._attr = attr
        self._obj: Any = None

    def load(self) -> Any:
        """The real module or attribute (imported on the first call)."""
        obj = self._obj
        if obj is None:
            obj = importlib.import_module(self._module)
            if self._attr is not None:
                obj = getattr(obj, self._attr)
            self._obj = obj
        return obj

    def __getattr__(self, name: str) -> Any:
        return getattr(self.load(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __repr__(self) -> str:
        target = self._module + (f".{self._attr}" if self._attr else "")
        state = "loaded" if self._obj is not None else "not loaded yet"
        return f"<LazyImport {target} ({state})>"
