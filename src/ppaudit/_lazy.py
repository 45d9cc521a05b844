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

A package that re-exports every name of its modules (formerly ``from .m import *``) names only
the modules, in the order of the former star imports (:func:`attach_modules`): the names are its
modules' own ``__all__``, read from their source files at the first look-up (nothing is
imported for it; cached), so a name is never written twice. A package that
re-exports chosen names writes its table out (:func:`attach`).
``tests/unit/test_public_api.py`` checks that every table equals the modules' ``__all__`` and
that every name resolves to the module's own object.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
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


_ALL_LINE = re.compile(r"^__all__\b", re.MULTILINE)
_COMMENT = re.compile(r"#[^\n]*")
#: ``__all__ = [...]`` / ``(...)`` (or ``__all__: list[str] = [...]``) ending its line, comments
#: removed: group 1 is what the brackets hold.
_ALL_STATEMENT = re.compile(r"__all__[ \t]*(?::[^=\n]*)?=[ \t]*[\[(](.*?)[\])][ \t]*$", re.MULTILINE | re.DOTALL)
#: What a literal list of names may hold: quoted identifiers, commas and blanks.
_NAMES_ONLY = re.compile(r"""(?:\s|,|"\w+"|'\w+')*""")
_NAME = re.compile(r"""["'](\w+)["']""")


def static_all(package: str, module: str) -> tuple[str, ...]:
    """The ``__all__`` of ``package.module``, read from its source without importing it.

    The first top-level ``__all__ = [...]`` (or ``__all__: list[str] = [...]``) of the file is
    read when it is a literal list or tuple of quoted names (comments allowed), with regular
    expressions: no import at all, not even :mod:`ast` (a few ms per process). A module whose
    source is not at hand, or whose ``__all__`` is anything else (computed, concatenated), is
    imported and its ``__all__`` read. ``tests/unit/test_public_api.py`` checks the reading
    against the imported ``__all__`` of every package that uses it.

    Args:
        package: the package's ``__name__`` (already in ``sys.modules``).
        module: the sub-module's name relative to it (a module or a sub-package).
    """
    folder = os.path.dirname(sys.modules[package].__file__)  # os.path: pathlib costs an import here
    for path in (os.path.join(folder, f"{module}.py"), os.path.join(folder, module, "__init__.py")):
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            continue
        start = _ALL_LINE.search(text)
        found = None if start is None else _ALL_STATEMENT.match(_COMMENT.sub("", text[start.start():]))
        if found is not None and _NAMES_ONLY.fullmatch(found.group(1)):
            return tuple(_NAME.findall(found.group(1)))
        break
    return tuple(importlib.import_module(f"{package}.{module}").__all__)


def attach_modules(
    package: str,
    modules: Sequence[str],
    submodules: Sequence[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` of a package that re-exports every name of ``modules``.

    As :func:`attach` with the table ``{module: module.__all__}``, the ``__all__`` read by
    :func:`static_all` on the first look-up of any attribute the package has not cached yet (the
    package's ``__all__`` and ``_EXPORTS`` come from ``__getattr__`` too, so importing the
    package reads no file).

    Args:
        package: the package's ``__name__``.
        modules: the sub-modules (relative names) whose ``__all__`` the package re-exports, in
            the order of the former star imports: a name in two of them resolves to the later.
        submodules: further sub-modules that are attributes of the package but export nothing.
    """

    @functools.cache
    def table() -> tuple[dict[str, tuple[str, ...]], Callable[[str], Any], Callable[[], list[str]], list[str]]:
        exports = {module: static_all(package, module) for module in modules}
        public, getattr_, dir_ = attach(package, exports, submodules)
        return exports, getattr_, dir_, public

    def __getattr__(name: str) -> Any:
        if name in ("__all__", "_EXPORTS"):
            value = list(table()[3]) if name == "__all__" else dict(table()[0])
            setattr(sys.modules[package], name, value)  # later look-ups do not come here
            return value
        return table()[1](name)

    def __dir__() -> list[str]:
        return table()[2]()

    return __getattr__, __dir__


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


class _MovedModules:
    """Meta-path finder and loader of moved modules' old paths (:func:`alias_moved_modules`).

    An old path imports as the very module object of its new path: :meth:`exec_module` puts the
    new module in ``sys.modules`` under the old name, which the import system then returns (and
    binds in the parent package) instead of the empty module it created; the new module's
    ``__name__`` and ``__spec__`` stay its own.
    """

    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> Any:
        if fullname not in self.moved:
            return None
        from importlib.machinery import ModuleSpec  # noqa: PLC0415 (only when an old path is imported)

        return ModuleSpec(fullname, self)

    def create_module(self, spec: Any) -> None:
        return None  # the default (empty) module, replaced in exec_module

    def exec_module(self, module: Any) -> None:
        sys.modules[module.__name__] = importlib.import_module(self.moved[module.__name__])


def alias_moved_modules(package: str, moved: Mapping[str, str]) -> None:
    """Keep the old import paths of moved modules working: ``package.old`` is ``package.new``.

    For a module that moved inside ``package`` (issue 37: ``ppaudit.experiments.synthetic`` →
    ``ppaudit.experiments.chadha2024.synthetic``) and whose old path users were told about:
    ``import package.old`` and ``from package.old import name`` give the new module itself
    (same object, nothing copied), imported only then. No file is left at the old path, so the
    move stays a rename for git. The finder is consulted after the ordinary ones: a real module
    at an old path wins.

    Args:
        package: the package's ``__name__``.
        moved: old sub-module name → new one, both relative to ``package`` (``"synthetic"`` →
            ``"chadha2024.synthetic"``).
    """
    table = {f"{package}.{old}": f"{package}.{new}" for old, new in moved.items()}
    for finder in sys.meta_path:
        if isinstance(finder, _MovedModules):
            finder.moved.update(table)
            return
    sys.meta_path.append(_MovedModules(table))
