"""Many teachers trained at once: ``B`` torch teachers stacked into one model (issue 17, item 2).

PATE / CaPC train hundreds of small networks (Chadha et al. 2024, Alg. 1, App. D.1: LeNet-5
and WRN-16-4, Adam, lr 0.03, batch 16). One at a time, a GPU runs one 16-image batch per
kernel launch and sits mostly idle. Here a block of ``B`` teachers is one model:

* convolutions are grouped: the ``B`` teachers' ``(C_out, C_in, k, k)`` kernels are
  concatenated into one ``(B·C_out, C_in, k, k)`` kernel with ``groups=B``, acting on the
  activations in the layout ``(N, B·C, H, W)`` (teacher ``b`` owns channels
  ``b·C … (b+1)·C − 1``);
* linear layers are batched matrix products (``torch.baddbmm``) on ``(B, N, F)``;
* ReLU, max-pooling, padding and average pooling act per channel, so they need no change;
* BatchNorm is computed per teacher over that teacher's valid examples only (masked).

**Same per-teacher semantics as one at a time** (:func:`ppaudit.models.teachers.train_and_predict`):
each teacher is initialised by ``build_torch_model`` under its own ``torch.manual_seed``
(the same integer as the one-at-a-time path), shuffles its own data (its partition, plus
its canary) with its own ``torch.Generator`` (``randperm`` per epoch), takes mini-batches of
``batch_size`` of its own data, and is updated by Adam (the update of
``torch.optim.Adam``, elementwise, with its own step count). Partitions of different sizes
give ragged batches: at step ``s`` teacher ``b`` holds ``min(bs, n_b − s·bs)`` examples (padded
and masked out); a teacher without a batch at a step is not updated (its Adam state and
step count are unchanged), nor is a BatchNorm teacher with a single example (the
one-at-a-time path skips those batches too). The per-teacher loss is the mean cross-entropy
over its own batch; the block's loss is the sum over teachers, so each teacher's gradient is
that of its own loss (the parameters are disjoint).

**What differs**: only the floating-point order of the convolution and normalisation
reductions (grouped vs. plain kernels, masked vs. fused BatchNorm). On the CPU test sizes
the votes are identical and the parameters agree within 1e-4. How far rounding differences
grow is a property of the training, not of the batching: Adam's first step moves every
weight by ±lr whatever the size of its gradient, so a gradient that is zero up to rounding
(e.g. directions a following BatchNorm is invariant to) gets a random sign. Measured on the
CPU: one-at-a-time WRN-16-4 training at lr 0.03 on 40 random 3×32×32 images, run again with
the inputs moved by one ulp, agreed with itself on 100 %, 100 % and 0 % of 200 queries for
three teachers. ``bench/bench_gpu.py`` therefore prints, next to the block-vs-one-at-a-time
vote agreement, this one-ulp self-agreement as its reference. Dropout > 0 is not supported in a block (its random masks would need a per-teacher
stream), and raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["BATCHABLE_MODELS", "train_and_predict_block"]

#: Teacher models that can be trained in blocks.
BATCHABLE_MODELS = ("mlp", "lenet5", "wrn16-4")

_BN_EPS = 1e-5
_BN_MOMENTUM = 0.1


def _modules():
    """The batched layers (defined lazily: torch is imported only when a block is trained)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    from .architectures import _global_avg_pool_class

    class Ctx:
        """Per-forward state shared by the layers: the valid-example mask and the active teachers."""

        mask = None  # (N, B) float32, 1 for a valid example
        active = None  # (B,) bool: teachers updated at this step
        full = False  # every teacher has a full batch of valid examples at this step
        training = False

    class BConv2d(nn.Module):
        def __init__(self, convs):
            super().__init__()
            c0 = convs[0]
            self.b = len(convs)
            self.stride, self.padding = c0.stride, c0.padding
            self.weight = nn.Parameter(torch.cat([c.weight.detach() for c in convs]).clone())
            self.bias = None if c0.bias is None else nn.Parameter(torch.cat([c.bias.detach() for c in convs]).clone())

        def forward(self, x, ctx):
            return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, 1, self.b)

    class BLinear(nn.Module):
        def __init__(self, lins):
            super().__init__()
            self.weight = nn.Parameter(torch.stack([m.weight.detach().t() for m in lins]).clone())  # (B, in, out)
            self.bias = nn.Parameter(torch.stack([m.bias.detach() for m in lins]).unsqueeze(1).clone())  # (B, 1, out)

        def forward(self, x, ctx):  # (B, N, in)
            return torch.baddbmm(self.bias, x, self.weight)

    class BBatchNorm2d(nn.Module):
        def __init__(self, bns):
            super().__init__()
            self.b = len(bns)
            self.c = bns[0].num_features
            self.weight = nn.Parameter(torch.cat([m.weight.detach() for m in bns]).clone())
            self.bias = nn.Parameter(torch.cat([m.bias.detach() for m in bns]).clone())
            self.register_buffer("running_mean", torch.cat([m.running_mean for m in bns]).clone())
            self.register_buffer("running_var", torch.cat([m.running_var for m in bns]).clone())

        def forward(self, x, ctx):  # (N, B*C, H, W)
            h, w = x.shape[2], x.shape[3]
            if not ctx.training:
                return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, _BN_EPS)
            if ctx.full:
                # Every teacher holds a full batch: the per-channel statistics over (N, H, W)
                # of the (N, B·C, H, W) layout are each teacher's own, so torch's fused kernel
                # (the one-at-a-time kernel) computes exactly the per-teacher BatchNorm.
                return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, True, _BN_MOMENTUM, _BN_EPS)
            m = ctx.mask  # (N, B)
            mc = m.repeat_interleave(self.c, dim=1)[:, :, None, None]  # (N, B*C, 1, 1)
            cnt = (m.sum(0) * (h * w)).repeat_interleave(self.c)  # (B*C,) valid elements per channel
            denom = cnt.clamp(min=1.0)
            mean = (x * mc).sum(dim=(0, 2, 3)) / denom
            xc = x - mean[None, :, None, None]
            var = ((xc * xc) * mc).sum(dim=(0, 2, 3)) / denom
            y = xc * torch.rsqrt(var + _BN_EPS)[None, :, None, None]
            y = y * self.weight[None, :, None, None] + self.bias[None, :, None, None]
            with torch.no_grad():
                act = ctx.active.repeat_interleave(self.c)
                unbiased = var * cnt / (cnt - 1.0).clamp(min=1.0)
                self.running_mean.copy_(torch.where(act, (1 - _BN_MOMENTUM) * self.running_mean + _BN_MOMENTUM * mean, self.running_mean))
                self.running_var.copy_(torch.where(act, (1 - _BN_MOMENTUM) * self.running_var + _BN_MOMENTUM * unbiased, self.running_var))
            return y

    class BFlatten(nn.Module):
        def __init__(self, b):
            super().__init__()
            self.b = b

        def forward(self, x, ctx):  # (N, B*C, H, W) -> (B, N, C*H*W)
            n = x.shape[0]
            return x.reshape(n, self.b, -1).transpose(0, 1)

    class Plain(nn.Module):
        """A per-channel / elementwise layer, unchanged."""

        def __init__(self, mod):
            super().__init__()
            self.mod = mod

        def forward(self, x, ctx):
            return self.mod(x)

    class BSequential(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.layers = nn.ModuleList(layers)

        def forward(self, x, ctx):
            for layer in self.layers:
                x = layer(x, ctx)
            return x

    class BBlock(nn.Module):
        """Pre-activation WRN basic block (``_wide_resnet.Block``), batched."""

        def __init__(self, blocks):
            super().__init__()
            if isinstance(blocks[0].drop, nn.Dropout):
                raise ValueError(f"dropout={blocks[0].drop.p} is not supported when teachers are trained in blocks; use batch_teachers=0")
            self.bn1 = BBatchNorm2d([m.bn1 for m in blocks])
            self.conv1 = BConv2d([m.conv1 for m in blocks])
            self.bn2 = BBatchNorm2d([m.bn2 for m in blocks])
            self.conv2 = BConv2d([m.conv2 for m in blocks])
            self.short = None if blocks[0].short is None else BConv2d([m.short for m in blocks])

        def forward(self, x, ctx):
            o = F.relu(self.bn1(x, ctx))
            y = self.conv1(o, ctx)
            y = self.conv2(F.relu(self.bn2(y, ctx)), ctx)
            return y + (x if self.short is None else self.short(o, ctx))

    def stack(mods: Sequence[nn.Module]) -> nn.Module:
        first = mods[0]
        b = len(mods)
        if isinstance(first, nn.Sequential):
            return BSequential([stack([m[i] for m in mods]) for i in range(len(first))])
        if isinstance(first, nn.Conv2d):
            if first.groups != 1 or first.dilation != (1, 1) or first.padding_mode != "zeros":
                raise ValueError(f"cannot batch {first}")
            return BConv2d(mods)
        if isinstance(first, nn.Linear):
            return BLinear(mods)
        if isinstance(first, nn.BatchNorm2d):
            return BBatchNorm2d(mods)
        if isinstance(first, nn.Flatten):
            return BFlatten(b)
        if isinstance(first, nn.Dropout):
            raise ValueError(f"dropout={first.p} is not supported when teachers are trained in blocks; use batch_teachers=0")
        if isinstance(first, (nn.ReLU, nn.MaxPool2d, nn.ZeroPad2d, nn.AdaptiveAvgPool2d, nn.Identity, _global_avg_pool_class())):
            return Plain(first)
        if hasattr(first, "bn1") and hasattr(first, "conv2"):
            return BBlock(mods)
        raise ValueError(f"cannot batch layer {type(first).__name__}")

    return Ctx, stack


class _MaskedAdam:
    """``torch.optim.Adam`` (single-tensor update, L2 ``weight_decay``) with one step count per teacher.

    ``step(active)`` updates only the active teachers; the others keep their parameters,
    moments and step counts (as if their optimiser had not been called).
    """

    def __init__(self, params, b: int, teacher_dim, lr: float, weight_decay: float, betas=(0.9, 0.999), eps=1e-8):
        import torch

        self.params = list(params)
        self.b = b
        self.tdim = teacher_dim  # param -> (shape to view it as (B, ...))
        self.lr, self.wd, self.beta1, self.beta2, self.eps = lr, weight_decay, betas[0], betas[1], eps
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.steps = np.zeros(b, dtype=np.int64)

    def step(self, active: np.ndarray):
        import torch

        self.steps = self.steps + active.astype(np.int64)
        st = np.maximum(self.steps, 1).astype(np.float64)
        bc1 = 1.0 - self.beta1**st
        bc2_sqrt = np.sqrt(1.0 - self.beta2**st)
        dev = self.params[0].device
        step_size = torch.as_tensor(self.lr / bc1, dtype=torch.float32, device=dev)
        bc2s = torch.as_tensor(bc2_sqrt, dtype=torch.float32, device=dev)
        act = torch.as_tensor(active, device=dev)
        everyone = bool(np.all(active))
        neg_step = -step_size
        with torch.no_grad():
            for p, m, v in zip(self.params, self.exp_avg, self.exp_avg_sq):
                g = p.grad
                if g is None:
                    continue
                shape = self.tdim[id(p)]
                pv, gv, mv, vv = (t.view(shape) for t in (p, g, m, v))
                bshape = (self.b,) + (1,) * (len(shape) - 1)
                a = act.view(bshape)
                if self.wd:
                    gv = gv + self.wd * pv
                # the operations of torch.optim.Adam's single-tensor update, in its order
                m_new = torch.lerp(mv, gv, 1 - self.beta1)
                v_new = torch.addcmul(vv * self.beta2, gv, gv, value=1 - self.beta2)
                denom = (v_new.sqrt() / bc2s.view(bshape)).add_(self.eps)
                p_new = pv + neg_step.view(bshape) * (m_new / denom)
                if everyone:
                    mv.copy_(m_new)
                    vv.copy_(v_new)
                    pv.copy_(p_new)
                else:
                    mv.copy_(torch.where(a, m_new, mv))
                    vv.copy_(torch.where(a, v_new, vv))
                    pv.copy_(torch.where(a, p_new, pv))


def _teacher_view_shapes(net, b: int) -> dict:
    """For every stacked parameter, the shape that puts the teacher axis first."""
    out = {}
    for p in net.parameters():
        if p.dim() >= 1 and p.shape[0] == b and p.dim() == 3:  # BLinear weight (B, in, out) / bias (B, 1, out)
            out[id(p)] = tuple(p.shape)
        else:  # concatenated along dim 0: (B*C, ...)
            out[id(p)] = (b, p.shape[0] // b) + tuple(p.shape[1:])
    return out


def train_and_predict_block(
    model: str,
    datasets: Sequence[tuple[np.ndarray, np.ndarray]],
    x_query: np.ndarray,
    num_classes: int,
    seeds: Sequence[np.random.SeedSequence],
    params: Mapping[str, Any],
) -> np.ndarray:
    """Train ``B`` teachers at once (stacked model, module doc) and return their labels on the queries.

    The block counterpart of :func:`ppaudit.models.teachers.train_and_predict`: teacher ``b``
    is trained on ``datasets[b]`` with seed ``seeds[b]`` exactly as there, up to the
    floating-point order of the batched kernels (Chadha et al. 2024, Alg. 1 ``TRAINTEACHER``;
    App. D.1 hyper-parameters).

    Args:
        model: one of :data:`BATCHABLE_MODELS`.
        datasets: ``B`` pairs ``(x (n_b, c, h, w) float32, y (n_b,) int64)``; sizes may differ.
        x_query: ``(n_queries, c, h, w)``.
        num_classes: ``C``.
        seeds: ``B`` ``SeedSequence`` of the teachers' training randomness.
        params: the full hyper-parameters (``teachers._params`` output, with ``device``).

    Returns:
        ``(B, n_queries)`` int64 predicted labels.

    Raises:
        ValueError: for a model that cannot be batched, dropout > 0, empty or mismatched inputs.
    """
    import torch

    from .determinism import deterministic_torch

    if model not in BATCHABLE_MODELS:
        raise ValueError(f"model {model!r} cannot be trained in blocks; batchable: {list(BATCHABLE_MODELS)}")
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, int(params.get("torch_threads", 1))))
    try:
        with torch.random.fork_rng(devices=[]), deterministic_torch(bool(params.get("deterministic", False))):
            return _train_block(model, datasets, x_query, num_classes, seeds, params)
    finally:
        torch.set_num_threads(old_threads)


def _train_block(model, datasets, x_query, num_classes, seeds, params, return_net=False):
    import torch

    from .architectures import _child_seed, _int_seed, build_torch_model

    if model not in BATCHABLE_MODELS:
        raise ValueError(f"model {model!r} cannot be trained in blocks; batchable: {list(BATCHABLE_MODELS)}")
    b = len(datasets)
    if b == 0 or len(seeds) != b:
        raise ValueError(f"need as many seeds as datasets (>= 1), got {len(seeds)} seeds and {b} datasets")
    device = torch.device(params.get("device", "cpu"))
    Ctx, stack = _modules()
    xq = np.ascontiguousarray(x_query, dtype=np.float32)
    shape = tuple(np.asarray(datasets[0][0]).shape[1:])
    # Initialise every teacher as the one-at-a-time path does, then stack them.
    nets = []
    for seq in seeds:
        torch.manual_seed(_int_seed(seq, 63))
        nets.append(build_torch_model(model, shape, num_classes, params))
    net = stack(nets).to(device)
    del nets
    has_bn = any(isinstance(m, torch.nn.BatchNorm2d) for m in build_torch_model(model, shape, num_classes, params).modules())
    opt = _MaskedAdam(net.parameters(), b, _teacher_view_shapes(net, b), float(params["lr"]), float(params["weight_decay"]))
    sizes = np.array([len(y) for _, y in datasets], dtype=np.int64)
    if np.any(sizes == 0):
        raise ValueError(f"every teacher needs at least one training point, got sizes {sizes.tolist()}")
    for i, (x, y) in enumerate(datasets):
        if tuple(np.shape(x)) != (len(y),) + shape:
            raise ValueError(f"datasets[{i}] must hold images of shape {(len(y),) + shape}, got {tuple(np.shape(x))}")
        if len(y) and (np.min(y) < 0 or np.max(y) >= num_classes):
            raise ValueError(f"labels of datasets[{i}] must lie in [0, {num_classes}), got range [{np.min(y)}, {np.max(y)}]")
    nmax = int(sizes.max())
    xs = np.zeros((b, nmax) + shape, dtype=np.float32)
    ys = np.zeros((b, nmax), dtype=np.int64)
    for i, (x, y) in enumerate(datasets):
        xs[i, : len(y)] = x
        ys[i, : len(y)] = y
    xt = torch.from_numpy(xs).to(device)
    yt = torch.from_numpy(ys).to(device)
    gens = [torch.Generator().manual_seed(_int_seed(_child_seed(seq), 63)) for seq in seeds]
    bs = int(params["batch_size"])
    steps = -(-nmax // bs)
    ctx = Ctx()
    rows = torch.arange(b, device=device)[:, None]
    net.train()
    ctx.training = True
    for _ in range(int(params["epochs"])):
        perms = torch.zeros((b, steps * bs), dtype=torch.int64)
        valid = torch.zeros((b, steps * bs), dtype=torch.bool)
        for i, g in enumerate(gens):
            perms[i, : sizes[i]] = torch.randperm(int(sizes[i]), generator=g)
            valid[i, : sizes[i]] = True
        perms, valid = perms.to(device), valid.to(device)
        counts = np.minimum(bs, np.maximum(0, sizes[:, None] - np.arange(steps)[None, :] * bs))  # (B, steps)
        for s in range(steps):
            active = counts[:, s] >= (2 if has_bn else 1)
            if not active.any():
                continue
            idx = perms[:, s * bs : (s + 1) * bs]  # (B, bs)
            act_t = torch.as_tensor(active, device=device)
            m = (valid[:, s * bs : (s + 1) * bs] & act_t[:, None]).to(torch.float32)  # (B, bs)
            xb = xt[rows, idx]  # (B, bs, c, h, w)
            yb = yt[rows, idx]
            ctx.mask = m.t().contiguous()
            ctx.active = act_t
            ctx.full = bool(np.all(counts[:, s] == bs))
            x_in = xb.transpose(0, 1).reshape((bs, b * shape[0]) + shape[1:])
            logits = net(x_in, ctx)  # (B, bs, C)
            ce = torch.nn.functional.cross_entropy(logits.reshape(b * bs, -1), yb.reshape(-1), reduction="none").view(b, bs)
            loss = ((ce * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)).sum()
            for p in net.parameters():
                p.grad = None
            loss.backward()
            opt.step(active)
    net.eval()
    ctx.training = False
    per_chunk = max(1, min(1024, 4096 // b))
    preds = []
    with torch.no_grad():
        xqt = torch.from_numpy(xq)
        for a in range(0, xqt.shape[0], per_chunk):
            chunk = xqt[a : a + per_chunk].to(device)
            x_in = chunk.repeat(1, b, *([1] * (chunk.dim() - 2)))
            preds.append(net(x_in, ctx).argmax(dim=2).cpu().numpy())  # (B, n)
    votes = np.concatenate(preds, axis=1).astype(np.int64) if preds else np.empty((b, 0), dtype=np.int64)
    return (votes, net) if return_net else votes
