"""Derived features for the pilot's classifier family on integer outputs (#36 §1, CONVENTIONS item 23).

With ``outputs="auto"`` :func:`~ppaudit.blackbox.search_mechanism` counts integer outputs and
orders the cells by likelihood ratio on half the pilot. When the outputs take more distinct values
than the pilot can order (a sparse vector's answers packed into one integer, Lyu et al. 2017,
Alg. 1: 2^10 codes), most cells are seen a few times and the ordering is noise. A classifier on
derived features pools the cells: :func:`bit_features` writes each non-negative integer as its
binary digits (one feature per bit), so a logistic regression on them is a log-linear model of
the answers — the structure of a packed answer vector. The pilot scores this family beside the
counted ones and keeps the better (selection on pilot draws only: no confidence spent).

**Quantile bins for 1-D real outputs** (:func:`pilot_bins`, ours). For real outputs ``"auto"``
fits a classifier and keeps one threshold set ``O``, chosen for the order where the pilot predicts
the largest excess; the certified RDP bound at the other orders is that one set's 2-cut, weaker than
:func:`~ppaudit.blackbox.audit_mechanism` with ``discretize`` (whose split selection keeps one set
per order). The pilot therefore also cuts the outputs into ``DEFAULT_BINS`` quantile bins — the same
binning as ``discretize`` (:func:`.mechanism.quantile_edges`, :func:`.mechanism.bin_index`; edges
from the pooled first half of the pilot) — forms the likelihood-ratio prefixes of the bins (ordered
on the first half) and the ordinal thresholds of the bins, counts them on the second half, and keeps

* a main set (set or complement) with the largest predicted Eq. (1) ε bound: the verdict's ε test
  and the witness, and
* per order α the set with the largest predicted 2-cut bound; ``D`` = the number of distinct ones.

The bins family replaces the classifier unless the classifier's pilot score is higher by more than
``BINS_MARGIN`` (a rule on pilot scores only; a classifier on a 1-D output keeps a threshold set of
its score, which the bins approximate at ``1/DEFAULT_BINS`` resolution, but it can see structure
finer than the bins, e.g. a parity of integer outputs under small noise).
Certification counts the fresh draws per bin and certifies the main set as any other family
(:func:`~ppaudit.blackbox.audit_counts` on "in O" / "not in O"), then replaces the RDP bound by the
per-order one (:func:`per_order_rdp`): each of the ``D`` sets gets Clopper–Pearson intervals at
miscoverage ``β_rdp/(2D)`` per side, where ``β_rdp`` is the miscoverage the RDP test of this
certified pair is allotted (``β/(K·tests)``), so by a union bound all ``D`` sets' intervals hold
at once with probability ≥ ``1 − β_rdp`` and every order's bound is valid on that event. The edges,
the sets and ``D`` are functions of the pilot only, fixed before any certification draw, so the
number of certified tests ``K`` and the split of each test's level are fixed in advance and the
whole-search Bonferroni argument of :mod:`.search` holds unchanged (the same argument as the
split selection of :func:`ppaudit.audit.two_cut_lower_bound`, with the pilot as the selection part).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..audit.bounds import _bounds_for_sets, k_cut_lower_bound
from .mechanism import bin_index, quantile_edges

__all__ = ["ClassifierOutputs", "bit_features", "bits_needed", "many_values", "MANY_VALUES_FRACTION", "onehot_features", "levels_needed",
           "many_vectors", "ONEHOT_MAX_LEVELS", "DEFAULT_BINS", "real_1d",
           "pilot_bins", "per_order_rdp", "describe_bins", "BINS_MARGIN"]

#: Quantile bins of the pilot's bin family (``audit_mechanism(..., discretize=100)``'s resolution).
DEFAULT_BINS = 100
#: Pilot score (claim units, :func:`ppaudit.blackbox.pilot._score`) by which the classifier must
#: beat the bin family on 1-D reals to be kept: its one set cannot give per-order sets, which the
#: score (a maximum over the tests) does not see, and its pilot score is the best of up to 4000
#: thresholds (more winner's curse than the bins' 2·99 sets), so only a clear lead counts: half a
#: claim, where the score's "sure pass" region starts. (At 0.1 the issue's Gaussian count kept the
#: classifier in 1 of 7 seeds, pilot scores 0.28 vs 0.14, and certified RDP 0.15 at α = 1.5 where
#: the bins give 0.71.) No margin once the classifier's score is a sure pass (both are then scored
#: by their predicted ε bound): a parity of integer outputs under noise 0.001, finer than the bins,
#: keeps the classifier (ε ≥ 2.04 against the bins' 1.32).
BINS_MARGIN = 0.5

#: Distinct pilot values per pilot draw from which the cells are too many to order (then the
#: bit-feature classifier is tried too): at 1/20 a cell holds ≈ 20 pilot draws on average.
MANY_VALUES_FRACTION = 0.05


def bit_features(outputs, bits: int) -> np.ndarray:
    """Binary digits 0 … ``bits − 1`` of non-negative integer outputs, plus one feature "the output
    is ≥ 2^bits" (a value above the pilot's range): an ``(n, bits + 1)`` float array.

    ``bits`` is fixed on the pilot so every batch gets the same columns.

    Raises:
        ValueError: on outputs that are not non-negative integers (naming the first bad value).
    """
    x = np.asarray(outputs)
    if x.ndim != 1 or x.dtype.kind not in "iub":
        raise ValueError(f"bit_features needs a 1-D array of integers, got shape {x.shape} dtype {x.dtype}")
    x = x.astype(np.int64)
    if x.size and x.min() < 0:
        raise ValueError(f"bit_features needs non-negative integers, got {int(x.min())}")
    b = int(bits)
    low = (x[:, None] >> np.arange(b)) & 1
    return np.column_stack([low, x >= (1 << b)]).astype(np.float64)


def bits_needed(o0: np.ndarray, o1: np.ndarray) -> int:
    """Binary digits of the largest pilot output (at least 1)."""
    return max(1, int(max(o0.max(), o1.max())).bit_length())


def many_values(o0: np.ndarray, o1: np.ndarray, n: int) -> bool:
    """True iff the pilot outputs are 1-D non-negative integers with more than
    ``MANY_VALUES_FRACTION · n`` distinct values (too many cells for the pilot to order)."""
    if o0.ndim != 1 or o1.ndim != 1 or o0.dtype.kind not in "iub" or o1.dtype.kind not in "iub":
        return False
    both = np.concatenate([o0, o1])
    if both.size == 0 or both.min() < 0 or int(both.max()) >= 2**20:
        return False
    return np.unique(both).size > MANY_VALUES_FRACTION * n


#: Values per coordinate up to which vector outputs of small integers get the one-hot family.
ONEHOT_MAX_LEVELS = 16


def onehot_features(outputs, levels: int) -> np.ndarray:
    """One-hot of each coordinate of vector outputs of small non-negative integers, plus one feature per
    coordinate "the value is ≥ ``levels``" (above the pilot's range): an ``(n, k · (levels + 1))`` float
    array for ``n`` outputs of length ``k``. ``levels`` is fixed on the pilot so every batch gets the
    same columns (a vector of answers, e.g. sparse vector's ⊥/⊤ per query, read coordinate by coordinate).

    Raises:
        ValueError: on outputs that are not a 2-D array of non-negative integers (naming the bad value).
    """
    x = np.asarray(outputs)
    if x.ndim != 2 or x.dtype.kind not in "iub":
        raise ValueError(f"onehot_features needs a 2-D array of integers, got shape {x.shape} dtype {x.dtype}")
    x = x.astype(np.int64)
    if x.size and x.min() < 0:
        raise ValueError(f"onehot_features needs non-negative integers, got {int(x.min())}")
    lv = int(levels)
    hot = x[:, :, None] == np.arange(lv)
    return np.concatenate([hot, (x >= lv)[:, :, None]], axis=2).reshape(x.shape[0], -1).astype(np.float64)


def levels_needed(o0: np.ndarray, o1: np.ndarray) -> int:
    """Values per coordinate seen on the pilot (largest value + 1, at least 2)."""
    return max(2, int(max(o0.max(), o1.max())) + 1)


def many_vectors(o0: np.ndarray, o1: np.ndarray, n: int) -> bool:
    """True iff the pilot outputs are vectors (2-D arrays) of non-negative integers below
    :data:`ONEHOT_MAX_LEVELS` with more than ``MANY_VALUES_FRACTION · n`` distinct vectors (too many
    cells for the pilot to order; then the one-hot classifier is tried too)."""
    if o0.ndim != 2 or o1.ndim != 2 or o0.shape[1] != o1.shape[1] or o0.dtype.kind not in "iub" or o1.dtype.kind not in "iub":
        return False
    both = np.concatenate([o0, o1])
    if both.size == 0 or both.min() < 0 or int(both.max()) >= ONEHOT_MAX_LEVELS:
        return False
    return np.unique(both, axis=0).shape[0] > MANY_VALUES_FRACTION * n


def real_1d(o0: np.ndarray, o1: np.ndarray) -> bool:
    """True iff both pilot samples are 1-D arrays of finite reals (the bin family applies)."""
    return (o0.ndim == 1 and o1.ndim == 1 and o0.dtype.kind == "f" and o1.dtype.kind == "f"
            and bool(np.isfinite(o0).all()) and bool(np.isfinite(o1).all()))


def pilot_bins(o0: np.ndarray, o1: np.ndarray, n: int, score, predict, bins: int = DEFAULT_BINS):
    """The bin family on one pair's pilot (module docstring).

    Args:
        o0, o1: the ``n`` pilot outputs per side (1-D reals).
        score: ``score(k0, k1, m) -> (score_set, score_complement)`` (the search's pilot objective).
        predict: ``predict(k0, k1, m) -> (rdp, eps_set, eps_complement)``: predicted 2-cut bounds
            ``(candidates, orders)`` and Eq. (1) ε bounds of each set and its complement.
        bins: number of quantile bins.

    Returns:
        ``(edges, masks, order_set, main, complement, k0, k1, m, score)``: bin edges; ``masks`` the
        ``(D, bins)`` distinct per-order sets; ``order_set[j]`` the row of order ``j``; ``main`` the
        main set's mask (the best predicted ε bound); ``complement`` whether the main set is its
        complement; its pilot counts ``k0, k1`` of ``m`` draws per side; the family's pilot score
        (the best candidate's, comparable with the other families').
    """
    h = n // 2
    edges = quantile_edges(np.concatenate([o0[:h], o1[:h]]), bins)
    b = edges.size + 1
    i0, i1 = bin_index(edges, o0), bin_index(edges, o1)
    a0, a1 = np.bincount(i0[:h], minlength=b), np.bincount(i1[:h], minlength=b)
    r0, r1 = np.bincount(i0[h:], minlength=b), np.bincount(i1[h:], minlength=b)
    m = n - h
    with np.errstate(divide="ignore"):
        lr = np.log((a0 + 0.5) / (h + 0.5 * b)) - np.log((a1 + 0.5) / (h + 0.5 * b))
    tri = np.tri(b - 1, b, dtype=bool)  # row j: the first j + 1 positions
    lr_sets = np.zeros((b - 1, b), dtype=bool)
    lr_sets[:, np.argsort(-lr, kind="stable")] = tri
    masks = np.concatenate([lr_sets, tri])  # likelihood-ratio prefixes, then ordinal thresholds
    k0, k1 = masks.astype(np.int64) @ r0, masks.astype(np.int64) @ r1
    sc_s, sc_c = score(k0, k1, m)
    rdp, eps_s, eps_c = predict(k0, k1, m)
    j_s, j_c = int(np.argmax(eps_s)), int(np.argmax(eps_c))  # the main set serves the ε test
    comp = bool(eps_c[j_c] > eps_s[j_s])
    j = j_c if comp else j_s
    best = np.argmax(rdp, axis=0)  # per order (a set and its complement: same 2-cut)
    distinct, order_set = np.unique(best, return_inverse=True)
    return (edges, masks[distinct], order_set.ravel(), masks[j], comp, int(k0[j]), int(k1[j]), m,
            float(max(sc_s.max(), sc_c.max())))


def per_order_rdp(c0: np.ndarray, c1: np.ndarray, masks: np.ndarray, order_set: np.ndarray, orders,
                  rdp_confidence: float) -> np.ndarray:
    """Certified RDP lower bound per order from per-order sets fixed on the pilot (module docstring).

    ``c0, c1``: certification counts per bin; ``masks[order_set[j]]`` the set of order ``j``;
    ``rdp_confidence``: the RDP test's confidence, split over the ``D = len(masks)`` sets.
    """
    d = masks.shape[0]
    bound, _ = _bounds_for_sets(c0, c1, masks, np.asarray(orders, dtype=np.float64),
                                (1.0 - rdp_confidence) / (2.0 * d))
    return bound[order_set, np.arange(order_set.size)]


def describe_bins(mask: np.ndarray, edges: np.ndarray, complement: bool) -> str:
    """The bins of ``mask`` as a union of real intervals (contiguous bins merged)."""
    lo = np.r_[-np.inf, edges]
    hi = np.r_[edges, np.inf]
    sel = ~mask if complement else mask
    parts, j = [], 0
    while j < sel.size:
        if sel[j]:
            k = j
            while k + 1 < sel.size and sel[k + 1]:
                k += 1
            parts.append(f"[{lo[j]:.4g}, {hi[k]:.4g})")
            j = k + 1
        else:
            j += 1
    shown = " ∪ ".join(parts[:6]) + (f" ∪ … ({len(parts)} intervals)" if len(parts) > 6 else "")
    return f"output in {shown}"


def _one_openmp_thread():
    """Histogram gradient boosting with one OpenMP thread: parallelism comes from ``n_jobs`` over
    pairs, and on a loaded machine OpenMP's spinning threads slow a fit ~8× (measured on 2 cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="openmp")


@dataclass
class ClassifierOutputs:
    """How ``outputs="classifier"`` turns outputs into a score (DP-Sniper, Bichsel et al. 2021).

    Attributes:
        model: ``"hgb"`` (scikit-learn ``HistGradientBoostingClassifier``, the default of
            ``outputs="classifier"``), ``"logistic"`` (``LogisticRegression`` on the
            features), or an unfitted scikit-learn classifier with ``predict_proba`` (cloned
            per pair).
        features: ``features(outputs) -> (n, f) array``; default: the outputs as floats,
            one row per output (a scalar output is one feature).
    """

    model: Any = "hgb"
    features: Callable[[np.ndarray], np.ndarray] | None = None

    def _estimator(self, seed: int):
        try:
            from sklearn.base import clone
            from sklearn.ensemble import HistGradientBoostingClassifier
            from sklearn.linear_model import LogisticRegression
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler
        except ImportError:  # pragma: no cover - depends on the install
            raise ValueError("outputs='classifier' needs scikit-learn: pip install 'ppaudit[ml]'") from None
        if isinstance(self.model, str):
            if self.model == "hgb":
                return HistGradientBoostingClassifier(max_iter=100, random_state=seed)
            if self.model == "logistic":
                return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
            raise ValueError(f"ClassifierOutputs.model must be 'hgb', 'logistic' or an estimator, got {self.model!r}")
        if not hasattr(self.model, "predict_proba"):
            raise ValueError(f"ClassifierOutputs.model must have predict_proba, got {type(self.model).__name__}")
        return clone(self.model)

    def _threads(self):
        # only gradient boosting runs OpenMP; asking threadpoolctl costs ~6 ms a call
        if self.model == "hgb" or "HistGradientBoosting" in type(self.model).__name__:
            return _one_openmp_thread()
        import contextlib

        return contextlib.nullcontext()

    def fit(self, x, y, seed: int):
        est = self._estimator(seed)
        with self._threads():
            est.fit(x, y)
        return est

    def score(self, est, x) -> np.ndarray:
        """``P(neighbour | output)`` of the fitted estimator."""
        with self._threads():
            return est.predict_proba(x)[:, 1]

    def name(self) -> str:
        if isinstance(self.model, str):
            return {"hgb": "HistGradientBoostingClassifier", "logistic": "LogisticRegression"}.get(self.model, self.model)
        return type(self.model).__name__

    def featurize(self, outputs: np.ndarray) -> np.ndarray:
        x = self.features(outputs) if self.features is not None else outputs
        x = np.asarray(x, dtype=np.float64)
        x = x.reshape(x.shape[0], -1) if x.ndim != 1 else x[:, None]
        if x.shape[0] != len(outputs):
            raise ValueError(f"features must return one row per output, got {x.shape[0]} rows for {len(outputs)} outputs")
        if not np.all(np.isfinite(x)):
            raise ValueError("features of the mechanism's outputs must be finite (got NaN or inf)")
        return x