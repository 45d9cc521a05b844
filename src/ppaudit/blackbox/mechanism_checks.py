"""Blame the right party (CONVENTIONS item 27): checks of a user's mechanism and its outputs.

A black-box audit calls code that ppaudit does not own. When that code is wrong — a signature
that cannot take ``(data, n, rng)``, an exception raised inside it, outputs that cannot be
counted — the message must say so and name the user's function, file and line, not print
"internal error … please report it" (kept for ppaudit's own bugs) and not hide the user's
traceback (:class:`MechanismError` is raised ``from`` the original exception, so ``--debug``
and any Python traceback show it).

* :func:`check_mechanism` — before any draw: callable, and callable as ``mechanism(data, n,
  rng)`` or ``mechanism(data, n)``; returns whether it takes the generator.
* :func:`call_mechanism` — one call; an exception inside it becomes a :class:`MechanismError`
  (``your mechanism rr_colours raised KeyError('x') at mymechs.py:12``).
* :func:`outputs_array` — the returned value as an array of ``n`` outputs, or a message naming
  the output type and the fix (a scalar; a dict or another unhashable value; ragged vectors).

Used by :func:`~ppaudit.blackbox.audit_mechanism` and :func:`~ppaudit.blackbox.search_mechanism`.
"""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from typing import Any, Callable

import numpy as np

__all__ = ["MechanismError", "check_mechanism", "call_mechanism", "outputs_array", "user_frame"]

_PROTOCOL = "mechanism(data, n, rng) -> n outputs (or mechanism(data, n))"
_FIX_VECTORS = ("return one hashable value per output (an int, a string, a tuple), or real / vector outputs with "
                "outputs='classifier' (search_mechanism; a ClassifierOutputs(features=...) turns any output into a "
                "fixed-length feature row)")


class MechanismError(ValueError):
    """The user's mechanism (or its module) raised, or returned something that cannot be audited.

    A ``ValueError`` so that callers treating bad input as the user's keep doing so; the
    original exception is its ``__cause__``.
    """


def _name(mechanism) -> str:
    return getattr(mechanism, "__qualname__", None) or getattr(mechanism, "__name__", None) or type(mechanism).__name__


def _ours(filename: str) -> bool:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the ppaudit package
    return os.path.abspath(filename).startswith(here + os.sep)


def _library(filename: str) -> bool:
    """A frame of the standard library or an installed package (not the user's code)."""
    f = os.path.abspath(filename)
    if "site-packages" in f or "dist-packages" in f or f.startswith("<frozen"):
        return True
    roots = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(f.startswith(os.path.join(r, "lib") + os.sep) for r in roots)


def user_frame(exc: BaseException) -> str | None:
    """``file.py:line`` of the innermost frame of ``exc``'s traceback that is the user's code.

    The user's code: not ppaudit, not the standard library, not an installed package. Falls back
    to the innermost frame outside ppaudit (a mechanism defined in an installed package).
    """
    frames = traceback.extract_tb(exc.__traceback__)
    outside = [f for f in frames if not _ours(f.filename)]
    user = [f for f in outside if not _library(f.filename)]
    pick = (user or outside or [None])[-1]
    if pick is None:
        return None
    return f"{os.path.basename(pick.filename)}:{pick.lineno}"


def check_mechanism(mechanism: Callable[..., Any]) -> bool:
    """Check that ``mechanism`` can be called as ``mechanism(data, n, rng)`` or ``(data, n)``.

    Returns ``True`` when it takes the generator (three positional parameters or ``*args``).
    Raises :class:`MechanismError` naming the function and what is wrong with its signature.
    A callable whose signature Python cannot read (some builtins) is assumed to take the
    generator.
    """
    if not callable(mechanism):
        raise MechanismError(f"mechanism must be callable as {_PROTOCOL}, got {type(mechanism).__name__} "
                             f"{mechanism!r:.60}")
    try:
        sig = inspect.signature(mechanism)
    except (TypeError, ValueError):
        return True
    params = list(sig.parameters.values())
    star = any(p.kind == p.VAR_POSITIONAL for p in params)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    kw_required = [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    name = f"{_name(mechanism)}{sig}"
    if kw_required:
        raise MechanismError(f"mechanism {name} has required keyword-only parameter(s) {', '.join(kw_required)}; "
                             f"it is called as {_PROTOCOL}: give them defaults or wrap it (functools.partial)")
    if len(required) > 3:
        raise MechanismError(f"mechanism {name} needs {len(required)} arguments; it is called as {_PROTOCOL}: "
                             "give the extra parameters defaults or wrap it (functools.partial)")
    if not star and len(positional) < 2:
        raise MechanismError(f"mechanism {name} takes {len(positional)} positional argument(s); it is called as "
                             f"{_PROTOCOL}: it must take the input and the number of draws n")
    return star or len(positional) >= 3


def call_mechanism(mechanism, takes_rng: bool, data, n: int, gen: np.random.Generator):
    """``mechanism(data, n, gen)`` (or ``(data, n)``); an exception inside it is the mechanism's.

    Raises :class:`MechanismError` ``from`` the original exception: ``your mechanism NAME raised
    KeyError('x') at mymechs.py:12``.
    """
    try:
        return mechanism(data, n, gen) if takes_rng else mechanism(data, n)
    except Exception as exc:  # noqa: BLE001 - whatever the user's code raises is the user's
        where = user_frame(exc)
        raise MechanismError(f"your mechanism {_name(mechanism)} raised {exc!r}"
                             + (f" at {where}" if where else "")
                             + f" when called with data={_short(data)}, n={n}") from exc


def _short(x, limit: int = 60) -> str:
    if isinstance(x, np.ndarray):
        x = x.tolist()
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def outputs_array(out, n: int) -> np.ndarray:
    """The mechanism's return value ``out`` as an array of ``n`` outputs (one per row).

    Integers → an int array; a numeric array → itself; a list of equal-length number vectors
    (lists or arrays) → an ``(n, d)`` array; other hashable values (strings, tuples) → an object
    array. Raises :class:`MechanismError` naming the type and the fix for a scalar or another
    non-sequence, the wrong count, unhashable outputs (dicts, sets) and ragged real vectors
    (variable-length lists of integers or strings, e.g. the indices a sparse vector answered, are
    countable as tuples and kept).
    """
    if isinstance(out, np.ndarray):
        if out.ndim == 0:
            raise MechanismError(f"the mechanism must return {n} outputs (an array or a list), returned a 0-d "
                                 f"array {out!r:.60}: draw n outputs per call, e.g. rng.laplace(0, b, size=n)")
        arr = out
    else:
        if isinstance(out, (str, bytes, dict)) or not hasattr(out, "__iter__") and not hasattr(out, "__getitem__"):
            raise MechanismError(f"the mechanism must return {n} outputs (an array or a list), returned "
                                 f"{type(out).__name__} {_short(out)}: draw n outputs per call "
                                 "(e.g. rng.laplace(0, b, size=n), or [one_draw() for _ in range(n)])")
        try:
            items = list(out)
        except TypeError:
            raise MechanismError(f"the mechanism must return {n} outputs (an array or a list), returned "
                                 f"{type(out).__name__} {_short(out)}") from None
        arr = np.asarray(items) if items and all(isinstance(x, (int, np.integer)) for x in items[:64]) else None
        if arr is None or arr.ndim != 1 or arr.dtype.kind not in "iub":
            arr = np.empty(len(items), dtype=object)  # hashable values (tuples, strings) kept as they are
            for i, x in enumerate(items):
                arr[i] = x
    if arr.ndim == 0 or arr.shape[0] != n:
        raise MechanismError(f"the mechanism must return {n} outputs, returned shape {np.shape(arr)}")
    if arr.dtype == object and arr.size:
        arr = _object_outputs(arr, n)
    return arr


def _object_outputs(arr: np.ndarray, n: int) -> np.ndarray:
    vec = [x for x in arr[:1000].tolist() if isinstance(x, (list, np.ndarray))]
    if vec:
        lengths = sorted({len(np.ravel(x)) for x in arr.tolist() if isinstance(x, (list, np.ndarray))})
        real = any(isinstance(x, np.ndarray) or any(isinstance(u, (float, np.floating)) for u in x) for x in vec[:100])
        if len(lengths) > 1 and real:  # variable-length integer / string lists stay countable (as tuples)
            shown = ", ".join(map(str, lengths[:6])) + (", ..." if len(lengths) > 6 else "")
            raise MechanismError(f"the mechanism returned ragged vector outputs (lengths {shown}); every output must "
                                 "have the same length: pad them, or return one hashable value per output (a tuple) "
                                 "to count them, or give ClassifierOutputs(features=...) a fixed-length feature row")
        if all(isinstance(x, np.ndarray) for x in arr.tolist()):  # lists stay lists (counted as tuples)
            try:
                num = np.asarray([np.ravel(x) for x in arr.tolist()])
            except (ValueError, TypeError):
                num = None
            if num is not None and num.dtype.kind in "iubf" and num.shape[0] == n:
                return num
    for x in arr[:1000].tolist():
        try:
            hash(x if not isinstance(x, list) else tuple(x))
        except TypeError:
            raise MechanismError(f"the mechanism returned outputs of type {type(x).__name__} ({_short(x)}), which "
                                 f"cannot be counted (unhashable): {_FIX_VECTORS}") from None
    return arr
