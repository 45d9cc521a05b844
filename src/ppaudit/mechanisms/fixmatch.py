"""FixMatch student of PATE-FM (Malek et al. 2021, §4 and App. A; Sohn et al. 2020), on feature vectors.

PATE-FM's student is FixMatch: each step takes a batch of ``B`` labelled examples (here the
PATE queries answered by the teachers, with their noisy teacher labels) and ``μB``
unlabelled ones (the public features), and minimises

    L = CE(f(x_l), y_l) + λ_u · mean_u( [max p(weak(x_u)) ≥ τ] · CE(f(strong(x_u)), argmax p(weak(x_u))) )

— the pseudo-label of an unlabelled point is the model's own confident prediction on a
weakly augmented view (τ = 0.95), enforced on a strongly augmented view. Optimiser as in the
authors' code (label_dp_antipodes ``lib/fixmatch.py``, after kekmodel/FixMatch-pytorch):
SGD with Nesterov momentum, weight decay, a cosine schedule with linear warm-up
(``cos(7π/16 · progress)``), temperature 1. Not reproduced: the Wide-ResNet, EMA of the
weights and RandAugment — the stand-in data are feature vectors, so the model is the
one-hidden-layer MLP of the label-DP stand-ins and the augmentations act on features:

* :func:`affine_maps_augment` — a random member of a set of affine maps of the feature
  space, e.g. the images' horizontal flip and pixel shifts carried through the PCA
  projection (:func:`ppaudit.experiments.labeldp.data.load_labeldp_dataset` builds them
  for the image stand-in), plus optional feature noise / dropout;
* :func:`feature_noise_augment` — Gaussian feature noise and feature dropout (inverted
  scaling), for the tabular / TF-IDF stand-ins, where no geometric augmentation exists.

At the papers' scale (CIFAR-10 images, issue 17 item 5) the student is a convolutional network
(``net``, e.g. the WRN-16-4 of :func:`ppaudit.models.teachers.build_torch_model`) on
standardised ``(n, C, H, W)`` images, on ``device``, with :func:`image_augment`: FixMatch's
weak augmentation (random horizontal flip and a shift by up to 12.5 % of the side, i.e. 4
pixels on CIFAR) and, for the strong one, the same plus Cutout (DeVries & Taylor 2017, as in
FixMatch's strong branch) and pixel noise in place of RandAugment (not reproduced).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "Augment",
    "affine_maps_augment",
    "cosine_schedule_with_warmup",
    "feature_noise_augment",
    "fixmatch_fit_predict",
    "image_augment",
]

#: ``augment(x, generator) -> x'`` on a float32 torch tensor ``(B, d)``.
Augment = Callable[["object", "object"], "object"]


def feature_noise_augment(noise_std: float = 0.0, dropout: float = 0.0) -> Augment:
    """Gaussian feature noise of std ``noise_std`` and feature dropout with rate ``dropout`` (kept features scaled by 1/(1 − rate)).

    Args:
        noise_std: ≥ 0.
        dropout: in [0, 1).

    Returns:
        ``augment(x, generator)``.

    Raises:
        ValueError: on a negative std or a rate outside [0, 1).
    """
    s, p = float(noise_std), float(dropout)
    if not (s >= 0 and math.isfinite(s)):
        raise ValueError(f"noise_std must be >= 0, got {noise_std!r}")
    if not (0.0 <= p < 1.0):
        raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")

    def augment(x, gen):
        import torch

        out = x
        if p > 0:
            keep = (torch.rand(x.shape, generator=gen) >= p).to(x.dtype)
            out = out * keep / (1.0 - p)
        if s > 0:
            out = out + s * torch.randn(x.shape, generator=gen)
        return out

    return augment


def image_augment(max_shift: int = 4, cutout: int = 0, noise_std: float = 0.0) -> Augment:
    """Image augmentation on ``(B, C, H, W)`` tensors: a random horizontal flip and a random shift by
    up to ``max_shift`` pixels per image (zero fill), then a ``cutout × cutout`` zeroed square at a
    random place (``cutout > 0``) and Gaussian pixel noise (``noise_std > 0``). Random draws come
    from the CPU generator, so they do not depend on the device.

    Raises:
        ValueError: a negative shift, cutout or noise.
    """
    if int(max_shift) < 0 or int(cutout) < 0 or not (float(noise_std) >= 0 and math.isfinite(float(noise_std))):
        raise ValueError(f"max_shift, cutout and noise_std must be >= 0, got {max_shift!r}, {cutout!r}, {noise_std!r}")

    def augment(x, gen):
        import torch

        from ..models.soft_label import flip_and_shift

        out = flip_and_shift(x, gen, int(max_shift))
        n, _, h, w = out.shape
        if int(cutout) > 0:
            cy = torch.randint(0, h, (n,), generator=gen)
            cx = torch.randint(0, w, (n,), generator=gen)
            ys, xs = torch.arange(h)[None, :], torch.arange(w)[None, :]
            half = int(cutout) // 2
            inside_y = ((ys >= (cy[:, None] - half)) & (ys < (cy[:, None] - half + int(cutout))))[:, :, None]
            inside_x = ((xs >= (cx[:, None] - half)) & (xs < (cx[:, None] - half + int(cutout))))[:, None, :]
            out = out * (~(inside_y & inside_x)).to(out.dtype).to(out.device)[:, None]
        if float(noise_std) > 0:
            out = out + float(noise_std) * torch.randn(out.shape, generator=gen).to(out.device)
        return out

    return augment


def affine_maps_augment(
    maps: Sequence[tuple[np.ndarray, np.ndarray]],
    noise_std: float = 0.0,
    dropout: float = 0.0,
) -> Augment:
    """Apply one affine map ``x ↦ x A + b`` drawn uniformly per example from ``maps``, then :func:`feature_noise_augment`.

    Args:
        maps: list of ``(A (d, d), b (d,))``; include the identity to keep some examples as they are.
        noise_std, dropout: as in :func:`feature_noise_augment`.

    Returns:
        ``augment(x, generator)``.

    Raises:
        ValueError: on an empty list or mismatched shapes.
    """
    if len(maps) == 0:
        raise ValueError("maps must hold at least one (A, b) pair, got an empty list")
    d = np.asarray(maps[0][0]).shape[0]
    for a, b in maps:
        if np.shape(a) != (d, d) or np.shape(b) != (d,):
            raise ValueError(
                f"every map must be (A ({d}, {d}), b ({d},)), got {np.shape(a)} and {np.shape(b)}"
            )
    noise = feature_noise_augment(noise_std, dropout)
    a_stack = np.stack([np.asarray(a, dtype=np.float32) for a, _ in maps])
    b_stack = np.stack([np.asarray(b, dtype=np.float32) for _, b in maps])

    def augment(x, gen):
        import torch

        A, B = torch.as_tensor(a_stack), torch.as_tensor(b_stack)
        pick = torch.randint(0, A.shape[0], (x.shape[0],), generator=gen)
        out = torch.einsum("nd,nde->ne", x, A[pick]) + B[pick]
        return noise(out, gen)

    return augment


def cosine_schedule_with_warmup(
    step: int, warmup: int, total: int, num_cycles: float = 7.0 / 16.0
) -> float:
    """Learning-rate factor of the authors' FixMatch: linear warm-up, then ``max(0, cos(π · num_cycles · progress))``."""
    if step < warmup:
        return float(step) / float(max(1, warmup))
    progress = float(step - warmup) / float(max(1, total - warmup))
    return max(0.0, math.cos(math.pi * num_cycles * progress))


def fixmatch_fit_predict(
    x_labeled,
    y_labeled,
    x_unlabeled,
    x_predict: list,
    num_classes: int,
    *,
    weak_augment: Augment,
    strong_augment: Augment,
    hidden: int = 256,
    steps: int = 300,
    batch_size: int = 64,
    mu: int = 7,
    threshold: float = 0.95,
    lambda_u: float = 1.0,
    lr: float = 0.03,
    momentum: float = 0.9,
    weight_decay: float = 5e-4,
    warmup: int = 0,
    seed: int = 0,
    return_history: bool = False,
    net_factory: Callable[[], object] | None = None,
    device: str = "cpu",
):
    """Train the FixMatch student (Sohn et al. 2020, Eq. (4); Malek et al. 2021, App. A) and predict.

    Args:
        x_labeled: ``(n_l, d)`` labelled features (answered PATE queries).
        y_labeled: ``(n_l,)`` their (noisy teacher) labels.
        x_unlabeled: ``(n_u, d)`` unlabelled public features.
        x_predict: list of arrays to predict.
        num_classes: C.
        weak_augment, strong_augment: feature augmentations (:data:`Augment`).
        hidden: MLP hidden units.
        steps: optimisation steps (the short schedule of the embedded default; the paper
            trains for 2^20 steps).
        batch_size: labelled batch B.
        mu: unlabelled-to-labelled batch ratio μ (7).
        threshold: pseudo-label confidence τ (0.95).
        lambda_u: weight of the unlabelled loss (1).
        lr, momentum, weight_decay, warmup: SGD (Nesterov) and the cosine schedule.
        seed: torch seed (same seed → same result).
        return_history: also return ``{"mask_rate": [...], "loss_u": [...]}`` per step.
        net_factory: ``() -> torch.nn.Module``, the student network (built here, after
            ``torch.manual_seed(seed)``), e.g. a CNN on ``(n, C, H, W)`` images; default the
            one-hidden-layer MLP of ``hidden`` units on ``(n, d)`` features.
        device: torch device of the training (the augmentations must accept tensors there:
            :func:`image_augment` does).

    Returns:
        List of ``(len(x), C)`` probability arrays (and the history if asked).

    Raises:
        ValueError: on empty inputs, labels outside [0, C) or bad hyper-parameters.
    """
    import torch

    xl = np.asarray(x_labeled, dtype=np.float32)
    yl = np.asarray(y_labeled).astype(np.int64)
    xu = np.asarray(x_unlabeled, dtype=np.float32)
    k = int(num_classes)
    if xl.ndim < 2 or (net_factory is None and xl.ndim != 2) or xl.shape[0] == 0 or yl.shape != (xl.shape[0],):
        raise ValueError(
            f"x_labeled must be (n, d) (or images with a net) with n >= 1 and y_labeled (n,), got {xl.shape} and {yl.shape}"
        )
    if xu.ndim != xl.ndim or xu.shape[0] == 0 or xu.shape[1:] != xl.shape[1:]:
        raise ValueError(
            f"x_unlabeled must be (n_u, {', '.join(map(str, xl.shape[1:]))}) with n_u >= 1, got {xu.shape}"
        )
    if np.any(yl < 0) or np.any(yl >= k):
        raise ValueError(
            f"y_labeled must be in [0, {k}), got {yl[(yl < 0) | (yl >= k)][:5]}"
        )
    for name, v in (
        ("steps", steps),
        ("batch_size", batch_size),
        ("mu", mu),
        ("hidden", hidden),
    ):
        if int(v) < 1:
            raise ValueError(f"{name} must be >= 1, got {v!r}")
    if not (0.0 < float(threshold) <= 1.0):
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    dev = torch.device(device)
    Xl, Yl, Xu = torch.as_tensor(xl).to(dev), torch.as_tensor(yl).to(dev), torch.as_tensor(xu).to(dev)
    if net_factory is None:
        net = torch.nn.Sequential(
            torch.nn.Linear(xl.shape[1], int(hidden)),
            torch.nn.ReLU(),
            torch.nn.Linear(int(hidden), k),
        )
    else:
        net = net_factory().to(dev)
        net.train()
    decay = [p for n, p in net.named_parameters() if "bias" not in n]
    no_decay = [p for n, p in net.named_parameters() if "bias" in n]
    opt = torch.optim.SGD([{"params": decay, "weight_decay": float(weight_decay)}, {"params": no_decay, "weight_decay": 0.0}],
                          lr=float(lr), momentum=float(momentum), nesterov=float(momentum) > 0)  # fmt: skip
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: cosine_schedule_with_warmup(s, int(warmup), int(steps))
    )
    B, U = int(batch_size), int(batch_size) * int(mu)
    history = {"mask_rate": [], "loss_u": []}
    for _ in range(int(steps)):
        il = torch.randint(0, Xl.shape[0], (B,), generator=gen).to(dev)
        iu = torch.randint(0, Xu.shape[0], (U,), generator=gen).to(dev)
        xb, yb, ub = Xl[il], Yl[il], Xu[iu]
        logits_x = net(weak_augment(xb, gen))
        with torch.no_grad():
            pseudo = torch.softmax(net(weak_augment(ub, gen)), dim=1)
            conf, target_u = pseudo.max(dim=1)
            mask = (conf >= float(threshold)).float()
        logits_s = net(strong_augment(ub, gen))
        loss_x = torch.nn.functional.cross_entropy(logits_x, yb)
        loss_u = (
            torch.nn.functional.cross_entropy(logits_s, target_u, reduction="none")
            * mask
        ).mean()
        loss = loss_x + float(lambda_u) * loss_u
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if return_history:
            history["mask_rate"].append(float(mask.mean()))
            history["loss_u"].append(float(loss_u.detach()))
    with torch.no_grad():
        if net_factory is None:  # the feature MLP: every array in one product
            out = [
                torch.softmax(net(torch.as_tensor(np.asarray(a, dtype=np.float32))), dim=1)
                .numpy()
                .astype(np.float64)
                for a in x_predict
            ]
        else:  # a network of one's own (BatchNorm in evaluation mode), in chunks on the device
            net.eval()
            out = [
                np.concatenate([torch.softmax(net(torch.as_tensor(np.asarray(a[s:s + 1024], dtype=np.float32)).to(dev)), dim=1)
                                .cpu().numpy().astype(np.float64) for s in range(0, len(a), 1024)] or [np.empty((0, k))])
                for a in x_predict
            ]
    return (out, history) if return_history else out
