"""The teacher architectures and their hyper-parameters, and the seeds a teacher trains with.

Chadha et al. 2024, §5.1–5.2 and App. D.1: the models of :mod:`ppaudit.models.teachers`
(``logreg``, ``mlp``, ``lenet5``, ``wrn16-4``), their default hyper-parameters and the torch
modules of the three networks. Training one teacher at a time (:mod:`.teachers`) and a block
of them at once (:mod:`.batched`) both build on this module, which imports neither.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["DEFAULT_PARAMS", "TEACHER_MODELS", "build_torch_model"]

#: Teacher architectures :func:`train_teachers` trains (``logreg``, ``mlp``: CPU stand-ins; ``lenet5``, ``wrn16-4``: the paper's).
TEACHER_MODELS = ("logreg", "mlp", "lenet5", "wrn16-4")

#: Hyper-parameters per model; ``params`` passed by the caller override them.
DEFAULT_PARAMS: dict[str, dict[str, Any]] = {
    "logreg": {"C": 1.0, "max_iter": 300},
    "mlp": {"hidden": 128, "epochs": 30, "lr": 3e-3, "batch_size": 32, "weight_decay": 0.0},
    # Chadha et al. 2024, App. D.1: Adam, lr 0.03, batch 16 (epochs not stated).
    "lenet5": {"epochs": 10, "lr": 0.03, "batch_size": 16, "weight_decay": 0.0},
    "wrn16-4": {"epochs": 10, "lr": 0.03, "batch_size": 16, "weight_decay": 0.0, "dropout": 0.0},
}


#: Run-time options accepted next to the hyper-parameters: where and how teachers are
#: trained, not what they are (issue 17). ``device``: torch device; ``torch_threads``: CPU
#: threads per teacher; ``deterministic``: deterministic kernels
#: (:func:`ppaudit.models.determinism.deterministic_torch`); ``batch_teachers``: train blocks
#: of that many teachers at once (:mod:`ppaudit.models.batched`; 0 = one at a time).
_RUNTIME_KEYS = ("device", "torch_threads", "deterministic", "batch_teachers")


def _params(model: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    if model not in DEFAULT_PARAMS:
        raise ValueError(f"unknown teacher model {model!r}; choose one of {list(TEACHER_MODELS)}")
    out = dict(DEFAULT_PARAMS[model])
    for key, value in (params or {}).items():
        if key not in out and key not in _RUNTIME_KEYS:
            raise ValueError(f"unknown parameter {key!r} for teacher model {model!r}; known: {sorted(out)}")
        out[key] = value
    return out


def _int_seed(seq: np.random.SeedSequence, bits: int = 31) -> int:
    lo, hi = (int(v) for v in seq.generate_state(2, dtype=np.uint32))
    return (lo | (hi << 32)) % (1 << bits)


def _child_seed(seq: np.random.SeedSequence) -> np.random.SeedSequence:
    """The first child of ``seq`` (what ``seq.spawn(1)[0]`` gives on a fresh sequence).

    Built from ``seq``'s entropy and spawn key, so it does not depend on how many children
    ``seq`` has already spawned: training the same job twice (one at a time, then in a block)
    shuffles identically.
    """
    return np.random.SeedSequence(seq.entropy, spawn_key=tuple(seq.spawn_key) + (0,), pool_size=seq.pool_size)


def build_torch_model(model: str, input_shape: Sequence[int], num_classes: int, params: Mapping[str, Any] | None = None):
    """The torch module of a teacher (``"mlp"``, ``"lenet5"`` or ``"wrn16-4"``).

    Args:
        model: the name.
        input_shape: ``(channels, height, width)``.
        num_classes: ``C``.
        params: overrides of :data:`DEFAULT_PARAMS` (``hidden``, ``dropout``).
    """
    import torch
    from torch import nn

    p = _params(model, params)
    c, h, w = (int(v) for v in input_shape)
    if model == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, int(p["hidden"])), nn.ReLU(), nn.Linear(int(p["hidden"]), num_classes))
    if model == "lenet5":
        # LeNet-5 (LeCun et al. 1998): two conv/pool stages, then 120-84-C; inputs smaller
        # than 32×32 are padded so that the 5×5 convolutions fit.
        pad = max(0, (32 - min(h, w)) // 2)
        feat = nn.Sequential(
            nn.ZeroPad2d(pad), nn.Conv2d(c, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten()
        )
        with torch.no_grad():
            n_feat = feat(torch.zeros(1, c, h, w)).shape[1]
        return nn.Sequential(feat, nn.Linear(n_feat, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, num_classes))
    if model == "wrn16-4":
        return _wide_resnet(c, num_classes, depth=16, widen=4, dropout=float(p["dropout"]))
    raise ValueError(f"{model!r} is not a torch teacher; torch teachers are ['mlp', 'lenet5', 'wrn16-4']")


def _wide_resnet(in_channels: int, num_classes: int, depth: int, widen: int, dropout: float):
    """WRN-depth-widen (Zagoruyko & Komodakis 2016): pre-activation basic blocks."""
    from torch import nn

    GlobalAvgPool2d = _global_avg_pool_class()
    if (depth - 4) % 6:
        raise ValueError(f"WRN depth must be 6n+4, got {depth}")
    n = (depth - 4) // 6
    widths = [16, 16 * widen, 32 * widen, 64 * widen]

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.bn1 = nn.BatchNorm2d(cin)
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
            self.relu = nn.ReLU()
            self.short = None if (cin == cout and stride == 1) else nn.Conv2d(cin, cout, 1, stride, 0, bias=False)

        def forward(self, x):
            o = self.relu(self.bn1(x))
            y = self.conv1(o)
            y = self.conv2(self.drop(self.relu(self.bn2(y))))
            return y + (x if self.short is None else self.short(o))

    layers = [nn.Conv2d(in_channels, widths[0], 3, 1, 1, bias=False)]
    cin = widths[0]
    for g, stride in zip(range(3), (1, 2, 2)):
        for b in range(n):
            layers.append(Block(cin, widths[g + 1], stride if b == 0 else 1))
            cin = widths[g + 1]
    layers += [nn.BatchNorm2d(cin), nn.ReLU(), GlobalAvgPool2d(), nn.Flatten(), nn.Linear(cin, num_classes)]
    return nn.Sequential(*layers)


@functools.cache
def _global_avg_pool_class():
    """The ``GlobalAvgPool2d`` module class (created once, lazily: this module does not import torch)."""
    from torch import nn

    class GlobalAvgPool2d(nn.Module):
        """``x.mean((2, 3))`` keeping the dims: ``AdaptiveAvgPool2d(1)`` without its CUDA backward,
        which has no deterministic implementation (it raises under
        ``torch.use_deterministic_algorithms(True)``); no parameters, same function."""

        def forward(self, x):
            return x.mean(dim=(2, 3), keepdim=True)

    return GlobalAvgPool2d
