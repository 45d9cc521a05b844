"""Classifiers trained on (soft) labels for the label-DP audits: the papers' image networks (issue 17, item 5) and the stand-ins.

:func:`fit_predict_soft` picks the dataset's model: :func:`torch_fit_predict_soft` when the model names an
architecture (below), else CatBoost on tabular data (:func:`catboost_fit_predict_soft`) and a one-hidden-layer
MLP otherwise (:func:`mlp_fit_predict_soft`, the embedded default's stand-in).

The label-DP papers train convolutional networks on CIFAR-10 with the labels a label-DP
mechanism released: one-hot labels (randomised response, LP-1ST; the observational paper
§6.3, "standard convolutional neural networks"), ALIBI's soft labels with its iterative
Bayesian prior (Malek et al. 2021, §5.2 and App. A Table 4: a Wide-ResNet trained by SGD
with momentum and weight decay), the PATE teachers and students (App. A Table 3). This
module is that training loop for the torch architectures of :func:`ppaudit.models.teachers.build_torch_model`
(``"wrn16-4"``, ``"lenet5"``, ``"mlp"``):

* soft-label cross-entropy ``−Σ_c t_c log softmax(f(x))_c`` (a hard label is its one-hot);
* ALIBI's iterative prior: ``soft_label_fn(probs)`` is called at the start of every epoch with
  the model's current class probabilities on the training images (evaluation mode), and its
  soft labels replace ``y_train`` (the ALIBI authors refresh the prior per mini-batch; here
  once per epoch, as the stand-in MLP of :func:`mlp_fit_predict_soft`);
* SGD with Nesterov momentum and weight decay (the papers' optimiser; ``optimizer: adam``
  as an alternative), a cosine learning-rate schedule, the standard CIFAR augmentation
  (random horizontal flip and a random shift by up to 4 pixels, zero fill) when ``augment``;
* images stored as ``uint8`` ``(n, C, H, W)`` (CIFAR-10 as published) are scaled to [0, 1]
  and standardised per channel with the training set's mean and standard deviation on the
  device, batch by batch, so a 50,000-image training set is never copied as float32 on the host;
* ``device`` (``"cpu"`` or ``"cuda"``) and ``deterministic`` kernels
  (:func:`ppaudit.models.determinism.deterministic_torch`): the same seed gives the same
  probabilities, on a GPU too. The seed fixes the initialisation, the shuffling and the
  augmentations (one ``torch.Generator`` on the CPU, so the draws do not depend on the device).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["TORCH_ARCHITECTURES", "catboost_fit_predict_soft", "fit_predict_soft", "mlp_fit_predict_soft", "torch_fit_predict_soft", "soft_targets", "channel_mean_std", "image_scale", "architecture_params", "flip_and_shift"]

#: Architectures of :func:`ppaudit.models.teachers.build_torch_model` this trainer accepts.
TORCH_ARCHITECTURES = ("wrn16-4", "lenet5", "mlp")


def soft_targets(y, k: int) -> np.ndarray:
    """``(n, k)`` float32 targets: soft labels as given (checked), hard labels one-hot."""
    y = np.asarray(y)
    if y.ndim == 2:
        if y.shape[1] != k:
            raise ValueError(f"soft labels must have {k} columns, got shape {y.shape}")
        return y.astype(np.float32)
    if y.size and (y.min() < 0 or y.max() >= k):
        raise ValueError(f"labels must lie in [0, {k}), got range [{y.min()}, {y.max()}]")
    out = np.zeros((y.size, k), dtype=np.float32)
    out[np.arange(y.size), y.astype(np.int64)] = 1.0
    return out


def image_scale(x) -> float:
    """255 for ``uint8`` images (scaled to [0, 1]), else 1."""
    return 255.0 if np.asarray(x).dtype == np.uint8 else 1.0


def channel_mean_std(x) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and standard deviation of ``(n, C, H, W)`` images on the [0, 1] scale,
    accumulated in chunks (no float copy of a 50,000-image set)."""
    x = np.asarray(x)
    scale = image_scale(x)
    sums, sq = np.zeros(x.shape[1]), np.zeros(x.shape[1])
    for a in range(0, x.shape[0], 4096):
        chunk = x[a : a + 4096].astype(np.float64) / scale
        sums += chunk.sum(axis=(0, 2, 3))
        sq += (chunk**2).sum(axis=(0, 2, 3))
    count = x.shape[0] * x.shape[2] * x.shape[3]
    mean = sums / count
    return mean, np.sqrt(np.maximum(sq / count - mean**2, 1e-12))


def architecture_params(model: dict) -> dict:
    """The keys of ``model`` that shape its network (``hidden`` of the MLP, ``dropout`` of the
    WRN): those that :func:`ppaudit.models.teachers.build_torch_model` takes for ``model["arch"]``."""
    from .teachers import DEFAULT_PARAMS

    return {key: model[key] for key in ("hidden", "dropout") if key in model and key in DEFAULT_PARAMS[model["arch"]]}


def _check_model(model: dict) -> dict:
    arch = model.get("arch")
    if arch not in TORCH_ARCHITECTURES:
        raise ValueError(f"model arch must be one of {list(TORCH_ARCHITECTURES)}, got {arch!r}")
    out = {"epochs": 30, "lr": 0.05, "batch_size": 128, "weight_decay": 5e-4, "momentum": 0.9, "optimizer": "sgd", "augment": True,
           "device": "cpu", "deterministic": True, "hidden": 256, "dropout": 0.0, "torch_threads": 1, **model}
    for key in ("epochs", "batch_size"):
        if int(out[key]) < 1:
            raise ValueError(f"model {key} must be >= 1, got {out[key]!r}")
    if not float(out["lr"]) > 0:
        raise ValueError(f"model lr must be > 0, got {out['lr']!r}")
    if out["optimizer"] not in ("sgd", "adam"):
        raise ValueError(f"model optimizer must be 'sgd' or 'adam', got {out['optimizer']!r}")
    return out


def flip_and_shift(xb, gen, max_shift: int = 4):
    """Random horizontal flip and a random shift by up to ``max_shift`` pixels (zero fill), per image."""
    import torch

    n, _, h, w = xb.shape
    flip = torch.rand(n, generator=gen) < 0.5
    shifts = torch.randint(-max_shift, max_shift + 1, (n, 2), generator=gen)
    out = torch.where(flip.to(xb.device)[:, None, None, None], xb.flip(3), xb)
    padded = torch.nn.functional.pad(out, (max_shift, max_shift, max_shift, max_shift))
    rows = (torch.arange(h)[None, :] + max_shift - shifts[:, :1]).to(xb.device)  # (n, h)
    cols = (torch.arange(w)[None, :] + max_shift - shifts[:, 1:]).to(xb.device)  # (n, w)
    idx_n = torch.arange(n, device=xb.device)[:, None, None, None]
    idx_c = torch.arange(xb.shape[1], device=xb.device)[None, :, None, None]
    return padded[idx_n, idx_c, rows[:, None, :, None], cols[:, None, None, :]]


def torch_fit_predict_soft(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_predict: Sequence[np.ndarray],
    num_classes: int,
    model: dict,
    seed: int,
    soft_label_fn: Callable[[np.ndarray], np.ndarray] | None = None,
) -> list[np.ndarray]:
    """Train one torch classifier on (soft) labels and return its class probabilities (module doc).

    Args:
        x_train: ``(n, C, H, W)`` images, ``uint8`` (scaled to [0, 1]) or float.
        y_train: ``(n,)`` hard or ``(n, num_classes)`` soft labels.
        x_predict: arrays of images like ``x_train`` to predict.
        num_classes: ``C`` ≥ 2.
        model: ``arch`` (one of :data:`TORCH_ARCHITECTURES`), ``epochs``, ``lr``,
            ``batch_size``, ``weight_decay``, ``momentum``, ``optimizer`` (``sgd`` / ``adam``),
            ``augment``, ``device``, ``deterministic``, ``torch_threads`` (CPU threads; default 1)
            (+ ``hidden``, ``dropout`` of the architecture).
        seed: integer seed of the initialisation, shuffling and augmentation.
        soft_label_fn: ALIBI's iterative prior, ``fn(probs (n, C) float64) -> (n, C)`` soft
            labels, called at the start of every epoch (``y_train`` is then ignored).

    Returns:
        ``(m_j, num_classes)`` float64 probabilities for each array of ``x_predict``.

    Raises:
        ValueError: bad shapes, labels or hyper-parameters (naming them).
    """
    import torch

    from .determinism import deterministic_torch
    from .teachers import build_torch_model

    p = _check_model(dict(model))
    x = np.asarray(x_train)
    if x.ndim != 4 or x.shape[0] < 2:
        raise ValueError(f"x_train must be (n >= 2, channels, height, width) images, got shape {x.shape}")
    k = int(num_classes)
    targets = soft_targets(y_train, k)
    if targets.shape[0] != x.shape[0]:
        raise ValueError(f"y_train has {targets.shape[0]} labels for {x.shape[0]} images")
    for j, a in enumerate(x_predict):
        if np.ndim(a) != 4 or tuple(np.shape(a)[1:]) != x.shape[1:]:
            raise ValueError(f"x_predict[{j}] must be images of shape (m, {', '.join(map(str, x.shape[1:]))}), got {np.shape(a)}")
    device = torch.device(p["device"])
    scale = image_scale(x)
    mean, std = channel_mean_std(x)  # per-channel standardisation from the training images
    mean_t = torch.as_tensor(mean, dtype=torch.float32, device=device)[None, :, None, None]
    std_t = torch.as_tensor(std, dtype=torch.float32, device=device)[None, :, None, None]

    def batch(a, idx):
        xb = torch.from_numpy(np.ascontiguousarray(a[idx])).to(device).float() / scale
        return (xb - mean_t) / std_t

    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, int(p["torch_threads"])))
    try:
        with torch.random.fork_rng(devices=[]), deterministic_torch(bool(p["deterministic"])):
            torch.manual_seed(int(seed))
            net = build_torch_model(p["arch"], x.shape[1:], k, architecture_params(p)).to(device)
            if p["optimizer"] == "sgd":
                opt = torch.optim.SGD(net.parameters(), lr=float(p["lr"]), momentum=float(p["momentum"]), nesterov=float(p["momentum"]) > 0,
                                      weight_decay=float(p["weight_decay"]))
            else:
                opt = torch.optim.Adam(net.parameters(), lr=float(p["lr"]), weight_decay=float(p["weight_decay"]))
            bs, epochs = int(p["batch_size"]), int(p["epochs"])
            steps = epochs * math.ceil(x.shape[0] / bs)
            sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1.0 + math.cos(math.pi * min(s, steps) / steps)))
            gen = torch.Generator().manual_seed(int(seed))
            t_all = torch.as_tensor(targets)

            def predict(a) -> np.ndarray:
                net.eval()
                out = []
                with torch.no_grad():
                    for s in range(0, len(a), 1024):
                        out.append(torch.softmax(net(batch(a, slice(s, s + 1024))), dim=1).double().cpu().numpy())
                net.train()
                return np.concatenate(out) if out else np.empty((0, k))

            net.train()
            has_bn = any(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())
            for _ in range(epochs):
                if soft_label_fn is not None:
                    t_all = torch.as_tensor(np.asarray(soft_label_fn(predict(x)), dtype=np.float32))
                perm = torch.randperm(x.shape[0], generator=gen).numpy()
                for s in range(0, x.shape[0], bs):
                    idx = np.sort(perm[s : s + bs])
                    if idx.size < 2 and has_bn:
                        continue  # BatchNorm cannot train on one image
                    xb = batch(x, idx)
                    if p["augment"]:
                        xb = flip_and_shift(xb, gen)
                    tb = t_all[idx].to(device)
                    loss = -(tb * torch.log_softmax(net(xb), dim=1)).sum(dim=1).mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
                    sched.step()
            return [predict(np.asarray(a)) for a in x_predict]
    finally:
        torch.set_num_threads(old_threads)


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
    import pandas as pd
    from catboost import CatBoostClassifier

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
        return torch_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed, soft_label_fn=soft_label_fn)
    if dataset == "tabular":
        return catboost_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed)
    return mlp_fit_predict_soft(x_train, y_train, x_predict, num_classes, model, seed, soft_label_fn=soft_label_fn)
