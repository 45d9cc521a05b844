"""Audits of the noisy argmax on a fixed synthetic histogram pair (Chadha et al. 2024, Figs. 2 and 6).

One function computes every curve of those figures for one pair ``(H_S, H_S')``:

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

from .._validation import as_histograms, as_orders, check_positive_int, check_probability, check_sigma
from ..accounting import gnmax_rdp_data_dependent, gnmax_rdp_data_independent
from ..audit import (
    k_cut_bootstrap_lower_bound,
    k_cut_lower_bound,
    two_cut_bootstrap_lower_bound,
    two_cut_lower_bound,
)
from ..divergence import exact_rdp
from ..montecarlo import noisy_argmax_counts_pair, spawn_generators

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
    s = check_sigma(sigma)
    a = as_orders(orders)
    t = check_positive_int(trials, "trials")
    check_probability(confidence, "confidence")
    x0, _ = as_histograms(h0, "h0")
    x1, _ = as_histograms(h1, "h1")
    if x0.shape != x1.shape or x0.shape[0] != 1:
        raise ValueError(f"h0 and h1 must be 1-D of the same length, got {np.shape(h0)} and {np.shape(h1)}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown audit method(s) {unknown}; choose from {list(METHODS)}")
    g_counts, g_split, g_boot2, g_bootk = spawn_generators(rng, 4)
    c0, c1 = noisy_argmax_counts_pair(x0[0], x1[0], s, t, rng=g_counts, mode=mode, progress=progress)
    table = {"order": a}
    for m in methods:
        if m == "data_independent":
            table[m] = gnmax_rdp_data_independent(s, a)
        elif m == "data_dependent":
            table[m] = np.maximum(gnmax_rdp_data_dependent(x0[0], s, a), gnmax_rdp_data_dependent(x1[0], s, a))
        elif m == "exact":
            table[m] = exact_rdp(x0[0], x1[0], s, a)
        elif m == "two_cut_cp":
            table[m] = two_cut_lower_bound(c0, c1, a, confidence, selection=selection, rng=g_split).lower_bound
        elif m == "k_cut_goodman":
            table[m] = k_cut_lower_bound(c0, c1, a, confidence, method="goodman")
        elif m == "k_cut_sison_glaz":
            table[m] = k_cut_lower_bound(c0, c1, a, confidence, method="sison-glaz")
        elif m == "two_cut_bootstrap":
            table[m] = two_cut_bootstrap_lower_bound(c0, c1, a, confidence, num_bootstrap, rng=g_boot2)
        elif m == "k_cut_bootstrap":
            table[m] = k_cut_bootstrap_lower_bound(c0, c1, a, confidence, num_bootstrap, rng=g_bootk)
    return pd.DataFrame(table), c0, c1
