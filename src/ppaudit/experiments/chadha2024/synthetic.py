"""Audits of the noisy argmax on a fixed synthetic histogram pair (Chadha et al. 2024, Figs. 2 and 6).

One function computes every curve of those figures for one pair ``(H_S, H_S')``, through the
one per-query audit core :func:`ppaudit.audit.audit_query` with a
:class:`~ppaudit.audit.HistogramPairSource`:

* upper bounds: the exact RDP (Eq. (4) + Rényi divergence, both directions), the
  data-dependent bound of Papernot et al. (2018) (Prop. 7 + Thm 6) evaluated at each of the
  two histograms — each covers its own direction, so the pair's bound is the larger — and
  the data-independent ``α/σ²``;
* lower bounds from ``T`` trials on each histogram: 2-cut Clopper–Pearson, k-cut with
  Goodman and Sison–Glaz intervals, 2-cut and k-cut bootstrap (App. B).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...audit import LOWER_BOUNDS, HistogramPairSource, audit_query

__all__ = ["METHODS", "audit_histogram_pair"]

#: Column name -> legend label, in plotting order.
METHODS = {
    "data_independent": "Data-independent theory (α/σ²)",
    "data_dependent": "Data-dependent theory (Papernot et al. 2018)",
    "exact": "Exact RDP (Eq. 4)",
    "two_cut_cp": "2-cut audit (Clopper–Pearson)",
    "k_cut_goodman": "k-cut audit (Goodman)",
    "k_cut_sison_glaz": "k-cut audit (Sison–Glaz)",
    "two_cut_bootstrap": "2-cut bootstrap audit",
    "k_cut_bootstrap": "k-cut bootstrap audit",
}


def audit_histogram_pair(
    h0,
    h1,
    sigma: float,
    trials: int,
    orders,
    methods=tuple(METHODS),
    confidence: float = 0.95,
    mode: str = "exact",
    num_bootstrap: int = 1000,
    selection: str = "split",
    rng=None,
    progress: bool = False,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """All audits and bounds of one neighbouring histogram pair, per order.

    Args:
        h0, h1: the histograms ``H_S`` and ``H_S'`` (same length).
        sigma: noise standard deviation.
        trials: Monte Carlo trials per histogram.
        orders: orders α > 1.
        methods: subset of :data:`METHODS` to compute.
        confidence: confidence of every lower bound.
        mode: ``"exact"`` (counts from Multinomial(T, p), valid for fixed histograms) or
            ``"sample"`` (simulated noisy argmax).
        num_bootstrap: bootstrap replicates.
        selection: output-set search of the 2-cut audit (``"split"`` or ``"bonferroni"``).
        rng: seed, ``SeedSequence`` or generator.
        progress: progress bar for sampling.

    Returns:
        ``(table, counts0, counts1)``: a DataFrame with column ``order`` and one column per
        method, and the two count vectors.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown audit method(s) {unknown}; choose from {list(METHODS)}")
    if mode not in ("exact", "sample"):
        raise ValueError(f"mode must be 'exact' or 'sample', got {mode!r}")
    bounds = [m for m in methods if m in LOWER_BOUNDS]
    r = audit_query(HistogramPairSource(h0, h1), sigma, trials, orders, confidence, rng, lower_bounds=bounds,
                    count_mode=mode, exact="enumerate", selection=selection, num_bootstrap=num_bootstrap, progress=progress)
    return r.frame(list(methods)), r.counts0, r.counts1
