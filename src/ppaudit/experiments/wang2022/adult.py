"""The PhD-detection attack of Wang et al. 2022 (§2, App. E) on UCI Adult.

Attack (:func:`phd_detection_experiment`): 80/20 random split, both education columns
removed from the features, the training part cut into ``num_partitions`` disjoint random
cells, one random forest per cell (a small grid search with k-fold CV, skipped when the grid
has a single setting; the paper's grid of App. D is not in the text we have, see
:data:`DEFAULT_RF_GRID`) predicting income > 50K.
The test set is balanced by keeping every PhD holder and as many randomly chosen
non-PhD holders. The attacker flags every test point whose vote consensus (max vote share)
is below ``threshold`` (75% in the paper) as a PhD holder; precision = share of flagged
points that are PhD holders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.adult import adult_features

__all__ = [
    "DEFAULT_RF_GRID",
    "train_partition_forests",
    "PhdDetection",
    "phd_detection_experiment",
    "consensus_rule_summary",
]

#: Random-forest grid searched per partition (small, for CPU; the paper's App. D grid is
#: not available): the tree depth; the number of trees is fixed.
DEFAULT_RF_GRID: dict[str, list] = {"max_depth": [4, 8, None]}


def _fit_forest(x, y, x_query, grid, n_estimators, cv, seed):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GridSearchCV

    rf = RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1)
    if len(np.unique(y)) < 2:
        return np.full(len(x_query), int(y[0]), dtype=np.int64)
    combos = int(np.prod([len(v) for v in grid.values()])) if grid else 1
    if combos == 1:  # nothing to search: fit the single setting directly (no CV)
        rf.set_params(**{k: v[0] for k, v in grid.items()})
        return rf.fit(x, y).predict(x_query).astype(np.int64)
    folds = int(min(cv, np.bincount(y).min()))
    if folds >= 2:
        search = GridSearchCV(rf, grid, cv=folds, n_jobs=1)
        search.fit(x, y)
        model = search.best_estimator_
    else:
        model = rf.fit(x, y)
    return model.predict(x_query).astype(np.int64)


def train_partition_forests(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    num_partitions: int,
    rng: np.random.Generator,
    n_estimators: int = 10,
    grid: Mapping[str, Sequence] | None = None,
    cv: int = 3,
    n_jobs: int = 1,
) -> np.ndarray:
    """One random forest per disjoint random partition; their labels on ``x_query``.

    Returns:
        ``(num_partitions, len(x_query))`` int64 votes.
    """
    from joblib import Parallel, delayed

    if num_partitions < 1 or num_partitions > len(x_train):
        raise ValueError(f"num_partitions must be in [1, {len(x_train)}], got {num_partitions}")
    grid = dict(DEFAULT_RF_GRID if grid is None else grid)
    perm = rng.permutation(len(x_train))
    cells = np.array_split(perm, num_partitions)
    seeds = rng.integers(0, 2**31 - 1, size=num_partitions)
    votes = Parallel(n_jobs=n_jobs)(
        delayed(_fit_forest)(x_train[c], y_train[c], x_query, grid, n_estimators, cv, int(s))
        for c, s in zip(cells, seeds)
    )
    return np.stack(votes)


@dataclass
class PhdDetection:
    """Votes of the ensemble on the balanced test set."""

    histograms: np.ndarray  # (n, 2) vote counts (income <=50K, >50K)
    phd: np.ndarray  # (n,) bool
    test_index: np.ndarray  # rows of the loaded DataFrame
    num_train: int
    num_test: int
    num_phd_test: int


def phd_detection_experiment(
    df: pd.DataFrame,
    rng: np.random.Generator,
    num_partitions: int = 250,
    test_fraction: float = 0.2,
    n_estimators: int = 10,
    grid: Mapping[str, Sequence] | None = None,
    cv: int = 3,
    n_jobs: int = 1,
) -> PhdDetection:
    """Wang et al. 2022, §2: the partition ensemble's vote histograms on the balanced test set."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    x, y, phd = adult_features(df), df["label"].to_numpy(), df["phd"].to_numpy()
    perm = rng.permutation(len(df))
    n_test = int(round(test_fraction * len(df)))
    test, train = perm[:n_test], perm[n_test:]
    phd_test = test[phd[test]]
    non_phd = test[~phd[test]]
    balanced = np.concatenate([phd_test, rng.choice(non_phd, size=len(phd_test), replace=False)])
    votes = train_partition_forests(
        x[train], y[train], x[balanced], num_partitions, rng, n_estimators=n_estimators, grid=grid, cv=cv, n_jobs=n_jobs
    )
    hist = np.stack([(votes == 0).sum(0), (votes == 1).sum(0)], axis=1).astype(np.int64)
    return PhdDetection(hist, phd[balanced], balanced, len(train), len(test), len(phd_test))


def consensus_rule_summary(consensus: np.ndarray, phd: np.ndarray, threshold: float = 0.75) -> dict:
    """The attack of §2: flag consensus < ``threshold`` as PhD; counts, precision, recall."""
    consensus, phd = np.asarray(consensus, float), np.asarray(phd, bool)
    low = consensus < threshold
    tp, fp = int(np.sum(low & phd)), int(np.sum(low & ~phd))
    return {
        "phd_low": tp,
        "phd_high": int(np.sum(~low & phd)),
        "nonphd_low": fp,
        "nonphd_high": int(np.sum(~low & ~phd)),
        "precision": tp / (tp + fp) if tp + fp else float("nan"),
        "recall": tp / int(phd.sum()) if phd.any() else float("nan"),
        "accuracy": float(np.mean(low == phd)),
    }
