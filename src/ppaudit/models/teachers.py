"""Teacher models of PATE and CaPC, and training many of them in parallel.

Chadha et al. 2024, Alg. 1 (training phase), §5.1–5.2 and App. D.1.

Models, chosen by name (:data:`TEACHER_MODELS`):

* ``"logreg"`` — scikit-learn multinomial logistic regression on the pixels (L-BFGS; no
  training randomness). The fast CPU model of the embedded default.
* ``"mlp"`` — a small torch MLP (one hidden layer), Adam; training randomness from the
  initialisation and the batch order.
* ``"lenet5"`` — LeNet-5 (LeCun et al. 1998), the paper's MNIST teacher.
* ``"wrn16-4"`` — Wide ResNet 16-4 (Zagoruyko & Komodakis 2016), the paper's teacher for
  Fashion-MNIST and CIFAR-10.

The paper trains its networks with Adam, learning rate 0.03, batch size 16 (App. D.1); it
does not state the number of epochs, so ``epochs`` is a parameter (default 10 for the
paper's networks). Those are the defaults of ``"lenet5"`` and ``"wrn16-4"``.

Which teachers are trained, on which cells and with which seeds (PATE's and CaPC's
training phase, the canary-holding teacher and its twin) is
:mod:`ppaudit.mechanisms.pate_capc`; this module trains the jobs it is given.

Determinism: a teacher's predictions depend only on its data, its seed and its parameters,
not on ``n_jobs`` or on the order in which jobs finish. ``params["deterministic"]``
adds deterministic torch kernels (:mod:`ppaudit.models.determinism`), which a GPU needs for
the same votes on two runs; the WRN's global average pooling is a ``mean`` for that reason
(``AdaptiveAvgPool2d``'s CUDA backward has no deterministic implementation).

Many at once (issue 17): ``params["batch_teachers"] = B > 0`` trains torch teachers ``B``
at a time as one stacked model (:mod:`ppaudit.models.batched`: grouped convolutions,
batched linear layers, masked BatchNorm and a per-teacher Adam), with each teacher's own
data, seed, shuffling and optimiser as here; only the floating-point order differs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_positive_int
from .architectures import (
    DEFAULT_PARAMS,
    TEACHER_MODELS,
    _child_seed,
    _int_seed,
    _params,
    build_torch_model,
)

__all__ = [
    "DEFAULT_PARAMS",
    "TEACHER_MODELS",
    "TeacherJob",
    "build_torch_model",
    "train_and_predict",
    "train_teachers",
]

# ----------------------------------------------------------------------------- models


def _fit_predict_logreg(x, y, xq, num_classes, seed, p):
    from sklearn.linear_model import LogisticRegression

    classes = np.unique(y)
    if classes.size == 1:
        return np.full(xq.shape[0], classes[0], dtype=np.int64)
    clf = LogisticRegression(C=float(p["C"]), max_iter=int(p["max_iter"]), random_state=_int_seed(seed))
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x.reshape(x.shape[0], -1), y)
    return clf.predict(xq.reshape(xq.shape[0], -1)).astype(np.int64)


def _fit_predict_torch(model, x, y, xq, num_classes, seed, p, return_net=False):
    import torch

    from .determinism import deterministic_torch

    threads = int(p.get("torch_threads", 1))
    device = torch.device(p.get("device", "cpu"))
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, threads))
    try:
        with torch.random.fork_rng(devices=[]), deterministic_torch(bool(p.get("deterministic", False))):
            torch.manual_seed(_int_seed(seed, 63))
            net = build_torch_model(model, x.shape[1:], num_classes, p).to(device)
            opt = torch.optim.Adam(net.parameters(), lr=float(p["lr"]), weight_decay=float(p["weight_decay"]))
            loss_fn = torch.nn.CrossEntropyLoss()
            xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(device)
            yt = torch.from_numpy(np.asarray(y, dtype=np.int64)).to(device)
            gen = torch.Generator().manual_seed(_int_seed(_child_seed(seed), 63))
            bs = int(p["batch_size"])
            net.train()
            for _ in range(int(p["epochs"])):
                perm = torch.randperm(xt.shape[0], generator=gen).to(device)
                for a in range(0, xt.shape[0], bs):
                    idx = perm[a : a + bs]
                    if idx.numel() < 2 and any(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules()):
                        continue  # BatchNorm cannot train on a single example
                    opt.zero_grad(set_to_none=True)
                    loss = loss_fn(net(xt[idx]), yt[idx])
                    loss.backward()
                    opt.step()
            net.eval()
            preds = []
            with torch.no_grad():
                xqt = torch.from_numpy(np.ascontiguousarray(xq, dtype=np.float32))
                for a in range(0, xqt.shape[0], 1024):
                    preds.append(net(xqt[a : a + 1024].to(device)).argmax(dim=1).cpu().numpy())
    finally:
        torch.set_num_threads(old_threads)
    votes = np.concatenate(preds).astype(np.int64) if preds else np.empty(0, dtype=np.int64)
    return (votes, net) if return_net else votes


def train_and_predict(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    num_classes: int,
    seed: np.random.SeedSequence | int,
    params: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """Train one teacher (Alg. 1, ``TRAINTEACHER``) and return its labels on the queries.

    Args:
        model: one of :data:`TEACHER_MODELS`.
        x_train: ``(n, channels, h, w)`` float32 images of the teacher's partition.
        y_train: ``(n,)`` labels in ``0..C-1``.
        x_query: ``(n_queries, channels, h, w)``.
        num_classes: ``C``.
        seed: ``SeedSequence`` (or int) of this teacher's training randomness.
        params: overrides of :data:`DEFAULT_PARAMS` (plus ``device``, ``torch_threads``).

    Returns:
        ``(n_queries,)`` int64 predicted labels.
    """
    p = _params(model, params)
    c = check_positive_int(num_classes, "num_classes", minimum=2)
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    x = np.asarray(x_train, dtype=np.float32)
    y = np.asarray(y_train, dtype=np.int64)
    if x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(f"x_train and y_train must hold the same positive number of points, got {x.shape[0]} and {y.shape[0]}")
    if y.min() < 0 or y.max() >= c:
        raise ValueError(f"labels must lie in [0, {c}), got range [{y.min()}, {y.max()}]")
    from threadpoolctl import threadpool_limits

    # One BLAS thread per teacher: teachers run in parallel over cores instead, and
    # multi-threaded BLAS on these small problems is many times slower (measured: 4.4 s vs
    # 0.15 s for one logistic regression on 240 Fashion-MNIST images with 2 threads).
    with threadpool_limits(limits=max(1, int(p.get("torch_threads", 1)))):
        if model == "logreg":
            return _fit_predict_logreg(x, y, np.asarray(x_query, dtype=np.float32), c, seq, p)
        return _fit_predict_torch(model, x, y, np.asarray(x_query, dtype=np.float32), c, seq, p)


# ----------------------------------------------------------------------------- parallel


@dataclass(frozen=True)
class TeacherJob:
    """One teacher to train: its training indices, an optional canary, and its seed."""

    indices: np.ndarray
    seed: np.random.SeedSequence
    canary: int | None = None  # row of (canary_x, canary_y) added to the data


def _job_data(x_train, y_train, job, canary_x, canary_y):
    x = x_train[job.indices]
    y = y_train[job.indices]
    if job.canary is not None:
        x = np.concatenate([x, canary_x[job.canary : job.canary + 1]])
        y = np.concatenate([y, canary_y[job.canary : job.canary + 1]])
    return x, y


def _run_chunk_at(start, model, data, x_query, num_classes, params):
    return start, [train_and_predict(model, x, y, x_query, num_classes, seed, params) for x, y, seed in data]


def _run_block_at(start, model, data, x_query, num_classes, params):
    """Train the teachers of ``data`` in blocks of ``params["batch_teachers"]`` (:mod:`.batched`)."""
    from threadpoolctl import threadpool_limits

    from .batched import train_and_predict_block

    p = _params(model, params)
    size = int(p["batch_teachers"])
    out = []
    with threadpool_limits(limits=max(1, int(p.get("torch_threads", 1)))):
        for a in range(0, len(data), size):
            block = data[a : a + size]
            votes = train_and_predict_block(model, [(x, y) for x, y, _ in block], x_query, num_classes, [sd for _, _, sd in block], p)
            out.extend(list(votes))
    return start, out


def train_teachers(
    model: str,
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_query: np.ndarray,
    jobs: Sequence[TeacherJob],
    num_classes: int,
    canary_x: np.ndarray | None = None,
    canary_y: np.ndarray | None = None,
    params: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    desc: str = "teachers",
) -> np.ndarray:
    """Train one teacher per job, in parallel over cores, and collect their predictions.

    Jobs are grouped into chunks (about four per worker); a chunk ships only its own
    teachers' data (``n/k`` points each) to the worker, never the whole training set. The
    results are put back in job order, so the output is the same for every ``n_jobs``.

    With ``params["batch_teachers"] = B > 0`` (torch models; issue 17) the teachers are
    trained ``B`` at a time as one stacked model (:func:`ppaudit.models.batched.train_and_predict_block`),
    each with the same data, seed, shuffling and optimiser as one at a time; a worker trains
    whole blocks (chunks are multiples of ``B``), so the votes do not depend on ``n_jobs``.
    On a CUDA device blocks are trained by this one process whatever ``n_jobs``: a block
    already fills the GPU, and each worker process would hold its own block on the same device
    (measured on the CPU, a WRN-16-4 teacher's training step at batch 16 holds ≈ 114 MiB, so a
    block of 250 holds ≈ 28 GiB; four workers would exceed an 80 GB GPU) and time-share it.

    Args:
        model: one of :data:`TEACHER_MODELS`.
        x_train, y_train: the full training set ``S``.
        x_query: the query points ``(n_queries, ...)``.
        jobs: the teachers to train.
        num_classes: ``C``.
        canary_x, canary_y: canary points referenced by ``job.canary``.
        params: model hyper-parameters.
        n_jobs: worker processes (``1``: in this process; ``-1``: all cores).
        progress: tqdm progress bar over teachers.
        desc: label of the progress bar.

    Returns:
        ``(len(jobs), n_queries)`` int64 predictions.
    """
    from tqdm.auto import tqdm

    p = _params(model, params)
    block = int(p.get("batch_teachers", 0) or 0)
    if block < 0:
        raise ValueError(f"batch_teachers must be >= 0, got {block}")
    if block and model == "logreg":
        block = 0  # no training randomness or torch model: nothing to stack
    jobs = list(jobs)
    nq = int(np.asarray(x_query).shape[0])
    if not jobs:
        return np.empty((0, nq), dtype=np.int64)
    if any(j.canary is not None for j in jobs) and (canary_x is None or canary_y is None):
        raise ValueError("jobs reference canaries but canary_x / canary_y were not given")
    n_workers = n_jobs if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    if block and str(p.get("device", "cpu")).startswith("cuda"):
        n_workers = 1  # one process drives the GPU, one block at a time (docstring)
    out = np.empty((len(jobs), nq), dtype=np.int64)
    bar = tqdm(total=len(jobs), disable=not progress, desc=desc, unit="teacher", mininterval=2.0)
    if block:
        run = _run_block_at
        size = block * max(1, math.ceil(len(jobs) / (block * n_workers)))
    else:
        run = _run_chunk_at
        size = max(1, math.ceil(len(jobs) / (4 * n_workers)))
    if block and n_workers == 1:
        with bar:
            for a in range(0, len(jobs), block):
                data = [(*_job_data(x_train, y_train, j, canary_x, canary_y), j.seed) for j in jobs[a : a + block]]
                _, preds = run(a, model, data, x_query, num_classes, params)
                out[a : a + len(preds)] = np.stack(preds)
                bar.update(len(preds))
        return out
    if n_workers == 1:
        with bar:
            for i, job in enumerate(jobs):
                x, y = _job_data(x_train, y_train, job, canary_x, canary_y)
                out[i] = train_and_predict(model, x, y, x_query, num_classes, job.seed, params)
                bar.update(1)
        return out
    from joblib import Parallel, delayed

    starts = list(range(0, len(jobs), size))
    par = Parallel(n_jobs=n_workers, return_as="generator_unordered", backend="loky", max_nbytes=None)
    # Each task carries only its teachers' own data (about n/k points each), not all of S.
    calls = (
        delayed(run)(
            a, model, [(*_job_data(x_train, y_train, j, canary_x, canary_y), j.seed) for j in jobs[a : a + size]], x_query, num_classes, params
        )
        for a in starts
    )
    with bar:
        for a, preds in par(calls):
            out[a : a + len(preds)] = np.stack(preds)
            bar.update(len(preds))
    return out
