"""Data-dependent GNMax theory of a *random* histogram model (PATE / CaPC vote models).

Papernot et al. 2018's data-dependent RDP ``dd(H)`` (:func:`ppaudit.accounting.gnmax_rdp_data_dependent`)
bounds the privacy loss of one answer at a *fixed* histogram ``H``. Under a vote model
(Chadha et al. 2024, §5.1–5.2) the histogram is random, and the PATE/CaPC stage evaluates
``dd`` at the expected histogram, ``dd(E[H])`` — a plug-in, neither an average nor a bound.
This module reports, over the certified enumeration of the model's histograms
(``H = B + e_v``, :func:`ppaudit.vote_models.enumerate_output_distributions`):

* ``at_mean``: ``max(dd(E[H_S]), dd(E[H_S']))`` — what the figures have used so far;
* ``expected``: ``max(E_{H_S}[dd(H)], E_{H_S'}[dd(H)])`` over the retained histograms, with a
  certified upper end ``expected_hi`` that adds ``r · α/σ²`` for the pruned mass ``r``
  (``dd ≤`` the data-independent ``α/σ²``);
* ``maximum``: ``max dd(H)`` over the enumerated support of both laws (what a curator who
  does not know which histogram the training produced would have to account).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._unique_rows import unique_rows
from .._validation import as_orders, check_sigma
from ..accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent
from .enumeration import (
    DEFAULT_MAX_TAIL_MASS,
    EnumeratedOutput,
    enumerate_output_distributions,
)
from .model import NeighbouringVoteModel

__all__ = ["DataDependentTheory", "data_dependent_theory"]


@dataclass(frozen=True)
class DataDependentTheory:
    """Data-dependent theory of a random-histogram model (each ``(len(orders),)``).

    Attributes:
        orders: the orders α.
        at_mean: ``max(dd(E[H_S]), dd(E[H_S']))``.
        expected: ``max(E_S[dd(H)], E_S'[dd(H)])`` over the retained histograms
            (renormalised retained weights).
        expected_lo, expected_hi: certified bounds on ``max(E_S[dd], E_S'[dd])``.
        maximum: ``max dd(H)`` over the enumerated support.
        tail_mass: pruned mass ``r``.
        support_size: number of distinct histograms.
    """

    orders: np.ndarray
    at_mean: np.ndarray
    expected: np.ndarray
    expected_lo: np.ndarray
    expected_hi: np.ndarray
    maximum: np.ndarray
    tail_mass: float
    support_size: int


def data_dependent_theory(
    source: EnumeratedOutput | NeighbouringVoteModel,
    sigma: float,
    orders,
    max_tail_mass: float = DEFAULT_MAX_TAIL_MASS,
    max_support: int = 200_000,
) -> DataDependentTheory:
    """``dd(E[H])``, ``E_H[dd(H)]`` and ``max_H dd(H)`` of a vote model (module docstring).

    Args:
        source: an :class:`EnumeratedOutput` (its ``histograms`` are the base ``B``) or a
            :class:`NeighbouringVoteModel` (enumerated here).
        sigma: noise standard deviation, > 0.
        orders: orders α > 1.
        max_tail_mass, max_support: enumeration budget (model input only).

    Returns:
        A :class:`DataDependentTheory`.

    Raises:
        ValueError: on ``sigma <= 0``, orders ≤ 1, an unknown source, or a model too large to
            enumerate.
    """
    s = check_sigma(sigma)
    a = as_orders(orders)
    if isinstance(source, NeighbouringVoteModel):
        enum = enumerate_output_distributions(source, s, max_tail_mass, max_support)
        if enum is None:
            raise ValueError(f"the model's support exceeds max_support={max_support} at max_tail_mass={max_tail_mass}")
    elif isinstance(source, EnumeratedOutput):
        enum = source
    else:
        raise ValueError(f"source must be an EnumeratedOutput or a NeighbouringVoteModel, got {type(source).__name__}")  # noqa: TRY004 (conventions: ValueError)
    base, w = np.asarray(enum.histograms), np.asarray(enum.weights, dtype=np.float64)
    c = base.shape[1]
    cls = np.flatnonzero((enum.last > 0) | (enum.last_prime > 0))
    h = np.repeat(base[:, None, :], cls.size, axis=1)
    h[:, np.arange(cls.size), cls] += 1
    h = h.reshape(-1, c)
    ws = (w[:, None] * enum.last[cls][None, :]).ravel()
    wp = (w[:, None] * enum.last_prime[cls][None, :]).ravel()
    uniq, inv = unique_rows(h)
    inv = inv.reshape(-1)
    ws = np.bincount(inv, weights=ws, minlength=uniq.shape[0])
    wp = np.bincount(inv, weights=wp, minlength=uniq.shape[0])
    dd = np.atleast_2d(gnmax_rdp_data_dependent(uniq.astype(np.float64), s, a))  # (K, orders)
    r = float(enum.tail_mass)
    cap = gnmax_rdp_data_independent(s, a)
    exp_s, exp_p = ws @ dd, wp @ dd  # retained (sub-probability) expectations
    expected = np.maximum(exp_s / ws.sum(), exp_p / wp.sum())
    expected_lo = np.maximum(exp_s, exp_p)
    expected_hi = np.maximum(exp_s, exp_p) + r * cap
    mean_s = base.T @ w / w.sum() + enum.last
    mean_p = base.T @ w / w.sum() + enum.last_prime
    at_mean = np.maximum(gnmax_rdp_data_dependent(mean_s, s, a), gnmax_rdp_data_dependent(mean_p, s, a))
    return DataDependentTheory(a, at_mean, expected, expected_lo, expected_hi, dd.max(axis=0), r, int(uniq.shape[0]))
