"""Consensus levels of vote histograms (Wang et al. 2022, §4.1, Fig. 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import as_histograms, check_positive_int
from .querying import SeedLike, _generator

__all__ = [
    "max_vote_share",
    "consensus_tertiles",
    "select_consensus_histograms",
]

# --------------------------------------------------------------------------------------
# Consensus levels (Wang §4.1, Fig. 3)
# --------------------------------------------------------------------------------------


def max_vote_share(histograms) -> np.ndarray | float:
    """Consensus of a histogram: its maximum count over its total (Wang §4.1, Fig. 3).

    The paper defines consensus as "its maximum value" and plots it as the "top-agreed label
    percentage"; the share (max / total) is the same ordering for a fixed number of teachers
    and stays comparable across ensembles.

    Returns:
        A float in ``[1/C, 1]`` for one histogram, or a ``(K,)`` array.

    Raises:
        ValueError: on a bad histogram or one with no vote.
    """
    h, squeeze = as_histograms(histograms, "histograms")
    total = h.sum(axis=1)
    if np.any(total <= 0):
        bad = np.nonzero(total <= 0)[0]
        raise ValueError(f"histograms must have at least one vote, got empty histogram(s) at rows {bad[:10]}")
    share = h.max(axis=1) / total
    return float(share[0]) if squeeze else share


def consensus_tertiles(histograms, rng: SeedLike | None = None) -> np.ndarray:
    """Split histograms into three equal-sized consensus levels (Wang §4.1, Fig. 3).

    "We [...] divide each dataset into three equal-sized groups corresponding to high
    consensus, medium consensus, and low consensus" — the dashed lines of Fig. 3 are the
    33.3% and 66.7% quantiles of the max vote share. Consensus values tie massively (e.g.
    every unanimous MNIST histogram has share 1), so thresholds at the quantiles cannot give
    equal groups; we take the stated equal sizes as the definition: histograms are ranked by
    max vote share and the ranks are cut into three groups of sizes differing by at most
    one (``numpy.array_split``). Ties across a cut are broken by a seeded random order when
    ``rng`` is given, by index otherwise.

    Args:
        histograms: ``(K, C)`` histograms, ``K ≥ 3``.
        rng: optional seeded generator for the tie-break.

    Returns:
        ``(K,)`` int array: 0 = low, 1 = medium, 2 = high consensus.

    Raises:
        ValueError: on bad histograms or fewer than three of them.
    """
    h, squeeze = as_histograms(histograms, "histograms")
    if squeeze or h.shape[0] < 3:
        raise ValueError(f"histograms must be (K, C) with K >= 3, got shape {np.shape(histograms)}")
    share = max_vote_share(h)
    k = share.size
    tie = _generator(rng).permutation(k) if rng is not None else np.arange(k)
    order = np.lexsort((tie, share))
    levels = np.empty(k, dtype=np.int64)
    for level, idx in enumerate(np.array_split(order, 3)):
        levels[idx] = level
    return levels


def select_consensus_histograms(histograms, rng: SeedLike, per_level: int = 5) -> pd.DataFrame:
    """Pick ``per_level`` histograms at random from each consensus level (Wang §4.1, Figs. 4, 6, 7).

    "We sample five histograms randomly from each group": levels from
    :func:`consensus_tertiles` (ties broken with the same generator), then ``per_level``
    distinct histograms per level drawn with ``rng``; within a level the picks are numbered
    by increasing max vote share (then index), giving the labels ``L1–L5, M1–M5, H1–H5``.

    Args:
        histograms: ``(K, C)`` histograms.
        rng: seeded generator, seed or ``SeedSequence`` (reproducible selection).
        per_level: histograms per level, ≥ 1.

    Returns:
        DataFrame with columns ``label``, ``level`` (``low``/``medium``/``high``),
        ``index`` (row in ``histograms``) and ``max_vote_share``, in L, M, H order.

    Raises:
        ValueError: if a level has fewer than ``per_level`` histograms.
    """
    gen = _generator(rng)
    k = check_positive_int(per_level, "per_level")
    levels = consensus_tertiles(histograms, gen)
    share = max_vote_share(histograms)
    rows = []
    for level, (name, prefix) in enumerate((("low", "L"), ("medium", "M"), ("high", "H"))):
        members = np.nonzero(levels == level)[0]
        if members.size < k:
            raise ValueError(f"per_level={per_level} exceeds the {members.size} histograms of the {name}-consensus level")
        picks = gen.choice(members, size=k, replace=False)
        picks = picks[np.lexsort((picks, share[picks]))]
        for j, idx in enumerate(picks, start=1):
            rows.append({"label": f"{prefix}{j}", "level": name, "index": int(idx), "max_vote_share": float(share[idx])})
    return pd.DataFrame(rows, columns=["label", "level", "index", "max_vote_share"])
