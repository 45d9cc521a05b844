"""A witness that can be read and re-checked (issue 36 §5; CONVENTIONS item 24).

* :func:`interval_description` — a classifier's output set on 1-D real outputs said as intervals
  (``output <= 4.4``), not as a score threshold: the set ``{x : score(x) ≥ t}`` (or ``< t``) is
  located on a grid over the outputs drawn, each boundary refined by bisection (all at once) to
  ``2⁻⁴⁰`` of a grid step. Outside the range drawn the score is constant for gradient boosting (values beyond the last
  bin edge share its bin) and monotone for logistic regression, so the end intervals are extended
  to ±∞ as the classifier itself does.
* :func:`example_outputs` — a few outputs drawn inside and outside ``O`` (for any classifier set).
* :func:`recheck` — re-run the certified test of a witness on **fresh** draws: the set is fixed (it
  was chosen on other draws), so the two Clopper–Pearson intervals and the RDP / Eq. (1) ε tests of
  :func:`~ppaudit.blackbox.audit_counts` hold at the confidence given, with no correction (one
  fixed-set test). A witness saved with :meth:`SearchResult.save` (a pickle holding the fitted
  classifier) can be re-checked in a later session.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

__all__ = ["interval_description", "example_outputs", "format_examples", "recheck", "save_result", "load_result"]


def _inside(oset, x: np.ndarray) -> np.ndarray:
    return np.asarray(oset.contains(x), dtype=bool)


def interval_description(oset, sample: np.ndarray, grid: int = 2001) -> str | None:
    """``O`` as intervals of the output, for a classifier set on 1-D real outputs (else ``None``)."""
    x = np.asarray(sample)
    if oset.kind != "threshold" or x.ndim != 1 or x.dtype.kind != "f" or x.size < 2:
        return None
    lo, hi = float(np.min(x)), float(np.max(x))
    if not hi > lo:
        return None
    g = np.linspace(lo, hi, grid)
    ins = _inside(oset, g)
    flips = np.flatnonzero(ins[1:] != ins[:-1])
    a, b = g[flips].copy(), g[flips + 1].copy()
    state = ins[flips]
    for _ in range(40):  # all boundaries at once, one classifier call per halving: to 2^-40 of a grid step
        if not flips.size:
            break
        m = 0.5 * (a + b)
        same = _inside(oset, m) == state
        a, b = np.where(same, m, a), np.where(same, b, m)
    cuts = a.tolist()
    if not ins.any():
        return "no output in the range drawn"
    pieces, start = [], (-np.inf if ins[0] else None)
    state = bool(ins[0])
    for c in cuts:
        if state:
            pieces.append((start, c))
        else:
            start = c
        state = not state
    if state:
        pieces.append((start, np.inf))
    words = []
    for a, b in pieces:
        if a == -np.inf and b == np.inf:
            words.append("any output")
        elif a == -np.inf:
            words.append(f"output <= {b:.4g}")
        elif b == np.inf:
            words.append(f"output > {a:.4g}")
        else:
            words.append(f"{a:.4g} < output <= {b:.4g}")
    return " or ".join(words)


def example_outputs(oset, sample, k: int = 3) -> dict:
    """Up to ``k`` distinct outputs of ``sample`` inside ``O`` and ``k`` outside (as plain values)."""
    arr = np.asarray(sample) if not isinstance(sample, np.ndarray) else sample
    ins = _inside(oset, arr)
    out = {}
    for key, mask in (("inside", ins), ("outside", ~ins)):
        vals = []
        for v in arr[mask][:2000].tolist():
            v = tuple(v) if isinstance(v, list) else v
            if v not in vals:
                vals.append(v)
            if len(vals) == k:
                break
        out[key] = [list(v) if isinstance(v, tuple) else v for v in vals]
    return out


def format_examples(examples: dict) -> str:
    """``e.g. in O: 4.12, 4.07; not in O: 3.64, 1.47`` (reals to 4 significant digits)."""
    def one(v):
        if isinstance(v, float):
            return f"{v:.4g}"
        if isinstance(v, list):
            return "[" + ", ".join(one(u) for u in v[:8]) + (", ..." if len(v) > 8 else "") + "]"
        return repr(v)

    return (f"e.g. in O: {', '.join(one(v) for v in examples.get('inside', [])) or '(none drawn)'}; not in O: "
            f"{', '.join(one(v) for v in examples.get('outside', [])) or '(none drawn)'}")


def recheck(result, mechanism, trials: int, rng=None, confidence: float | None = None):
    """Re-run the certified test of ``result``'s witness on ``trials`` fresh draws per side.

    Returns a :class:`~ppaudit.blackbox.MechanismAudit` (two cells: in ``O`` / not in ``O``; the
    claim, orders and δ of the search; ``confidence`` default: the search's). Valid at that
    confidence on its own: ``O`` is fixed before these draws (module docstring).
    """
    from .._validation import check_positive_int
    from .mechanism import MechanismAudit, _draw, _generators, _takes_rng, audit_counts

    t = check_positive_int(trials, "trials")
    w = result.witness
    oset = w.output_set
    if oset.kind == "threshold" and oset.classifier is None:
        raise ValueError("this witness has no fitted classifier (read back from JSON?): load the result saved with "
                         "SearchResult.save(path) to re-check it")
    takes_rng = _takes_rng(mechanism)
    g0, g1, g2 = _generators(rng, 3)
    counts = []
    for data, g in ((w.dataset, g0), (w.neighbour, g1)):
        inside, done = 0, 0
        while done < t:
            m = min(1_000_000, t - done)
            inside += int(_inside(oset, _draw(mechanism, takes_rng, data, m, g)).sum())
            done += m
        counts.append(np.array([inside, t - inside], dtype=np.int64))
    conf = result.confidence if confidence is None else confidence
    base = audit_counts(counts[0], counts[1], result.orders, confidence=conf, claim=result.claim,
                        delta=result.audit.delta, rng=g2, outputs=["in O", "not in O"],
                        output_set=np.array([True, False]))
    return MechanismAudit(**base.__dict__, trials=t)


def save_result(result, path) -> Path:
    """Pickle ``result`` (with the fitted classifier of its witness) to ``path``.

    A ``features=`` function must be importable (defined at module level) to be pickled. Load only
    files you trust (:func:`load_result` unpickles).
    """
    path = Path(path)
    try:
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise ValueError(f"cannot save the search result to {str(path)!r}: {exc} (a features= function or model "
                         "must be defined at module level to be saved)") from exc
    path.write_bytes(data)
    return path


def load_result(path, expected: type):
    """The object of class ``expected`` (:class:`~ppaudit.blackbox.SearchResult`, passed by
    ``SearchResult.load``) saved by :func:`save_result` (a pickle: trusted files only)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"saved search result not found: {str(path)!r}")
    obj = pickle.loads(path.read_bytes())
    if not isinstance(obj, expected):
        raise ValueError(f"{str(path)!r} does not hold a {expected.__name__} (got {type(obj).__name__})")
    return obj
