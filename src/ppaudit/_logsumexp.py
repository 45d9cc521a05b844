"""Row-wise log-sum-exp with the very numbers of ``scipy.special.logsumexp(a, axis=1)``, in one exp pass.

scipy (1.15+) evaluates, per row, ``log1p(Σ_{i ≠ i*} exp(a_i − a*) / m) + log(m) + a*`` with ``a*``
the row maximum, ``m`` the number of entries equal to it (those left out of the sum), and
replaces every non-finite result by ``log(Σ_i exp(a_i))``. It computes that fallback for the
whole array (a second ``exp`` pass) and goes through the array-API layer on every call, which
made it the largest cost of the transcript likelihoods (issue 30 §1). :func:`logsumexp_rows` does
the same elementwise operations and the same contiguous row sums (numpy's pairwise summation over
the last axis), so every row is bit for bit scipy's, and evaluates the fallback only for the rows
that need it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["logsumexp", "logsumexp_rows"]


def logsumexp_rows(a: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """``scipy.special.logsumexp(a, axis=1)`` for a real 2-D float64 array (module docstring).

    Args:
        a: ``(R, K)`` float64 (``±inf`` and NaN entries give scipy's results).
        overwrite: work in ``a`` itself (a C-contiguous float64 array the caller no longer
            needs): one temporary less.

    Returns:
        ``(R,)`` float64.

    Raises:
        ValueError: on an array that is not 2-D.
    """
    x = np.asarray(a)
    if x.ndim != 2:
        raise ValueError(f"a must be 2-D, got shape {np.shape(a)}")
    if not (overwrite and x.dtype == np.float64 and x.flags.c_contiguous and x.flags.writeable):
        x = np.array(x, dtype=np.float64, order="C")
    if x.shape[1] == 0:
        return np.full(x.shape[0], -np.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = x.max(axis=1, keepdims=True)
        bad = ~np.isfinite(top[:, 0])  # exactly the rows whose result is not finite: scipy's direct sum
        direct = np.log(np.exp(x[bad]).sum(axis=1)) if bad.any() else None
        # scipy: the entries equal to the maximum (m of them) are taken out of the sum, the rest
        # shifted by it; with a finite maximum x − top is 0 exactly at those entries only
        x -= top
        at_top = x == 0.0
        m = np.count_nonzero(at_top, axis=1).astype(np.float64)[:, None]
        np.exp(x, out=x)
        np.putmask(x, at_top, 0.0)  # exp(−inf − top) = 0 in scipy
        s = x.sum(axis=1, keepdims=True)
        s = np.where(s == 0, s, s / m)
        out = (np.log1p(s) + np.log(m) + top)[:, 0]
        if direct is not None:
            out[bad] = direct
    return out


def logsumexp(a, axis=None, keepdims: bool = False, **kwargs):
    """Drop-in for ``scipy.special.logsumexp`` with the same numbers: real 1-D arrays (``axis`` None,
    0 or −1) and 2-D arrays over their last axis go through :func:`logsumexp_rows` (no array-API
    overhead: the audits call it on small arrays hundreds of thousands of times); anything else
    (``b``, ``return_sign``, complex input, other axes, ``keepdims``) is scipy's own call.
    """
    x = np.asarray(a)
    if not kwargs and not keepdims and x.dtype.kind == "f" and x.dtype.itemsize == 8:
        if x.ndim == 1 and axis in (None, 0, -1):
            return logsumexp_rows(x[None, :])[0]
        if x.ndim == 2 and axis in (1, -1):
            return logsumexp_rows(x)
    from scipy.special import logsumexp as _scipy_logsumexp

    return _scipy_logsumexp(a, axis=axis, keepdims=keepdims, **kwargs)
