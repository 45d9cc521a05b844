"""Many soft-label MLPs trained at once: the label-DP stand-in models stacked into one (issue 16, item 1).

The label-DP audits fit the same small MLP (one hidden ReLU layer, soft-label cross-entropy,
Adam; :func:`ppaudit.models.soft_label.mlp_fit_predict_soft`) many times on
training sets of one size: the 36 runs of Malek et al. 2021's memorisation game (App. B,
Game 3; Tables 5 and 6) differ only in their labels, ε and seed. One at a time, each
mini-batch step is a few tiny matrix products and the time goes into per-step overhead.
Here ``B`` models are one model: the linear layers are batched matrix products on
``(B, batch, features)`` (:mod:`ppaudit.models.batched`'s ``BLinear``, reused), and one
``torch.optim.Adam`` (its fused kernel) updates the stacked parameters.

**Same per-model semantics as one at a time.** Model ``b`` is initialised under its own
``torch.manual_seed(seeds[b])`` by the same ``nn.Sequential`` as the one-at-a-time path,
shuffles its own data with its own ``torch.Generator`` seeded with ``seeds[b]``
(``randperm`` per epoch), takes the same mini-batches of its own data, and refreshes its
own soft labels at the start of every epoch with ``soft_label_fns[b]`` (ALIBI's iterative
prior) from its own current predictions. Adam is elementwise, every model has the same
number of steps (equal training-set sizes are required), so the stacked update is each
model's own update. The block's loss is the sum of the models' mean losses, so each
model's gradient is that of its own loss (the parameters are disjoint).

**What differs**: only the floating-point order of the batched matrix products and of
the fused Adam kernel (the same update as ``torch.optim.Adam``'s default loop, rounded in
another order). Training
amplifies rounding differences, so a stacked model's predictions agree with the
one-at-a-time model's closely after a few steps (tested) and statistically after many.
Same seeds and inputs → same bytes (one torch thread, as the one-at-a-time path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .soft_label import soft_targets

__all__ = ["soft_mlp_fit_predict_block"]


def soft_mlp_fit_predict_block(
    x_train: Sequence[np.ndarray],
    y_train: Sequence[np.ndarray],
    x_predict: Sequence[Sequence[np.ndarray]],
    num_classes: int,
    model: dict,
    seeds: Sequence[int],
    soft_label_fns: Sequence[Callable[[np.ndarray], np.ndarray] | None] | None = None,
) -> list[list[np.ndarray]]:
    """Train ``B`` soft-label MLPs at once and predict each one's arrays (module doc).

    The block counterpart of :func:`ppaudit.models.soft_label.mlp_fit_predict_soft`:
    model ``b`` is that function's model for ``(x_train[b], y_train[b], x_predict[b],
    seeds[b], soft_label_fns[b])``, up to the floating-point order of the batched products
    (Malek et al. 2021, §5.2: ALIBI's soft labels and iterative Bayesian prior; observational
    paper §6.2: the stand-in target models).

    Args:
        x_train: ``B`` feature arrays ``(n, d)``, all with the same ``n`` and ``d``.
        y_train: ``B`` hard ``(n,)`` or soft ``(n, C)`` label arrays.
        x_predict: for each model, the list of arrays ``(m_j, d)`` to predict.
        num_classes: ``C`` ≥ 2.
        model: ``hidden``, ``epochs``, ``lr``, ``batch_size`` (as the one-at-a-time path).
        seeds: ``B`` integer torch seeds.
        soft_label_fns: ``None`` or, per model, ``None`` or ``fn(probs (n, C) float64) -> (n, C)``
            called at the start of every epoch with that model's current probabilities on its
            training features (its ``y_train`` is then ignored).

    Returns:
        For each model, the float64 class probabilities on each array of its ``x_predict``.

    Raises:
        ValueError: for an empty block, mismatched lengths, training sets of different
            shapes, labels outside ``[0, C)``, or a non-positive hidden size, epoch count,
            learning rate or batch size.
    """
    import torch

    from .batched import _modules

    b = len(x_train)
    if b == 0:
        raise ValueError("soft_mlp_fit_predict_block needs at least one model, got 0")
    fns = [None] * b if soft_label_fns is None else list(soft_label_fns)
    if not (len(y_train) == len(x_predict) == len(seeds) == len(fns) == b):
        raise ValueError(f"x_train, y_train, x_predict, seeds and soft_label_fns need one entry per model ({b}), got "
                         f"{len(y_train)}, {len(x_predict)}, {len(seeds)}, {len(fns)}")  # fmt: skip
    k = int(num_classes)
    if k < 2:
        raise ValueError(f"num_classes must be >= 2, got {num_classes}")
    hidden, epochs, lr, bs = int(model["hidden"]), int(model["epochs"]), float(model["lr"]), int(model["batch_size"])
    for name, v in (("hidden", hidden), ("epochs", epochs), ("lr", lr), ("batch_size", bs)):
        if not v > 0:
            raise ValueError(f"model[{name!r}] must be > 0, got {model[name]!r}")
    xs = [np.asarray(x, dtype=np.float32) for x in x_train]
    if any(x.ndim != 2 or x.shape != xs[0].shape for x in xs):
        raise ValueError(f"every training set must have the same shape (n, d), got {sorted({x.shape for x in xs})}")
    n, d = xs[0].shape
    ts = [soft_targets(y, k) for y in y_train]
    if any(t.shape[0] != n for t in ts):
        raise ValueError(f"every y_train must have {n} rows, got {[t.shape[0] for t in ts]}")

    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        nets = []
        for s in seeds:
            torch.manual_seed(int(s))
            nets.append(torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, k)))
        _, stack = _modules()
        net = stack(nets)
        del nets
        lin1, lin2 = net.layers[0], net.layers[2]
        opt = torch.optim.Adam(net.parameters(), lr=lr, fused=True)  # one kernel per step: same update, other rounding
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        x = torch.from_numpy(np.stack(xs))  # (B, n, d)
        t = torch.from_numpy(np.stack(ts))  # (B, n, C)
        rows = torch.arange(b)[:, None]

        def forward_one(i: int, a: torch.Tensor) -> torch.Tensor:
            h = torch.relu(torch.addmm(lin1.bias[i], a, lin1.weight[i]))
            return torch.addmm(lin2.bias[i], h, lin2.weight[i])

        for _ in range(epochs):
            if any(fn is not None for fn in fns):
                with torch.no_grad():
                    for i, fn in enumerate(fns):
                        if fn is not None:
                            current = torch.softmax(forward_one(i, x[i]), dim=1).numpy().astype(np.float64)
                            t[i] = torch.as_tensor(np.asarray(fn(current), dtype=np.float32))
            perm = torch.stack([torch.randperm(n, generator=g) for g in gens])  # (B, n)
            for s in range(0, n, bs):
                idx = perm[:, s : s + bs]
                logits = net(x[rows, idx], None)  # (B, batch, C)
                loss = -(t[rows, idx] * torch.log_softmax(logits, dim=2)).sum(dim=2).mean(dim=1).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            return [[torch.softmax(forward_one(i, torch.as_tensor(np.asarray(a, dtype=np.float32))), dim=1).numpy().astype(np.float64)
                     for a in x_predict[i]] for i in range(b)]  # fmt: skip
    finally:
        torch.set_num_threads(old_threads)
