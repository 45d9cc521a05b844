"""Teachers trained in blocks (issue 17, item 2) and deterministic kernels (item 3), on the CPU.

Reference: one-at-a-time training, :func:`ppaudit.models.teachers.train_and_predict`
(Chadha et al. 2024, Alg. 1 ``TRAINTEACHER``; App. D.1: Adam, batch 16). A block must give
the same votes (agreement ≥ 99 % is what the issue accepts where float order differs; on
these sizes we measured 100 %).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ppaudit.models.batched import train_and_predict_block
from ppaudit.models.determinism import deterministic_torch
from ppaudit.models.teachers import (
    TeacherJob,
    _params,
    train_and_predict,
    train_teachers,
)


def _data(shape, sizes, nq, seed=0):
    rng = np.random.default_rng(seed)
    proto = rng.normal(size=(4,) + shape).astype(np.float32)

    def draw(n):
        y = rng.integers(0, 4, n)
        return (proto[y] + 0.8 * rng.normal(size=(n,) + shape)).astype(np.float32), y

    return [draw(n) for n in sizes], draw(nq)


def _compare(model, shape, sizes, overrides, nq=120):
    datasets, (xq, yq) = _data(shape, sizes, nq)
    seeds = [np.random.SeedSequence([7, i]) for i in range(len(sizes))]
    one = np.stack([train_and_predict(model, x, y, xq, 4, s, overrides) for (x, y), s in zip(datasets, seeds)])
    block = train_and_predict_block(model, datasets, xq, 4, seeds, _params(model, overrides))
    return one, block, yq


def test_lenet5_block_gives_the_one_at_a_time_votes():
    # ragged partitions: 37 = 2·16 + 5, 16 = one full batch, 23 = 16 + 7
    one, block, _ = _compare("lenet5", (1, 16, 16), [37, 16, 23], {"epochs": 2, "lr": 0.003})
    assert block.shape == one.shape == (3, 120)
    agreement = (one == block).mean()
    assert agreement >= 0.99, agreement
    assert len(np.unique(one)) > 1  # the teachers learnt something (not a constant vote)


def test_small_wrn_block_gives_the_one_at_a_time_votes():
    # 33 = 2·16 + 1: the single-example batch is skipped by BatchNorm teachers in both paths
    one, block, _ = _compare("wrn16-4", (3, 8, 8), [33, 16, 20], {"epochs": 2, "lr": 0.003})
    agreement = (one == block).mean()
    assert agreement >= 0.99, agreement
    assert len(np.unique(one)) > 1


def test_mlp_block_matches_and_a_different_seed_differs():
    one, block, _ = _compare("mlp", (1, 6, 6), [30, 12], {"epochs": 3, "hidden": 16})
    assert (one == block).mean() >= 0.99
    datasets, (xq, _) = _data((1, 6, 6), [30, 12], 120)
    other = train_and_predict_block("mlp", datasets, xq, 4, [np.random.SeedSequence([8, i]) for i in range(2)], _params("mlp", {"epochs": 3, "hidden": 16}))
    assert not np.array_equal(other, block)  # the seeds drive the block (planted change is seen)


def test_train_teachers_blocks_equal_one_at_a_time_with_canaries():
    datasets, (xq, _) = _data((1, 8, 8), [200], 60)
    x, y = datasets[0]
    cx, cy = x[:2] + 1.0, np.array([3, 1])
    rng = np.random.default_rng(1)
    jobs = [TeacherJob(np.sort(rng.choice(200, size=n, replace=False)), np.random.SeedSequence([3, i]), canary=(i % 2 if i < 3 else None)) for i, n in enumerate([20, 25, 18, 30, 22])]
    base = {"epochs": 2, "hidden": 16}
    seq = train_teachers("mlp", x, y, xq, jobs, 4, cx, cy, params=base)
    blk = train_teachers("mlp", x, y, xq, jobs, 4, cx, cy, params={**base, "batch_teachers": 2})
    assert blk.shape == (5, 60)
    assert (seq == blk).mean() >= 0.99
    # training the same jobs again gives the same bytes (the SeedSequences are not consumed)
    again = train_teachers("mlp", x, y, xq, jobs, 4, cx, cy, params={**base, "batch_teachers": 2})
    assert again.tobytes() == blk.tobytes()


def test_deterministic_runs_give_identical_votes():
    datasets, (xq, _) = _data((3, 8, 8), [17, 9], 40)
    seeds = [np.random.SeedSequence([5, i]) for i in range(2)]
    p = {"epochs": 1, "lr": 0.003, "deterministic": True}
    runs = [np.stack([train_and_predict("wrn16-4", x, y, xq, 4, s, p) for (x, y), s in zip(datasets, seeds)]) for _ in range(2)]
    assert runs[0].tobytes() == runs[1].tobytes()
    blocks = [train_and_predict_block("wrn16-4", datasets, xq, 4, seeds, _params("wrn16-4", p)) for _ in range(2)]
    assert blocks[0].tobytes() == blocks[1].tobytes()
    assert not torch.are_deterministic_algorithms_enabled()  # the switch is restored afterwards


def test_deterministic_switch_sets_and_restores_torch_state(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    before = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
    with deterministic_torch(True):
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
        import os

        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic) == before
    with pytest.raises(ValueError, match="enabled"), deterministic_torch("yes"):
        pass


def test_bad_block_inputs_raise():
    datasets, (xq, _) = _data((1, 6, 6), [10], 5)
    with pytest.raises(ValueError, match="logreg"):
        train_and_predict_block("logreg", datasets, xq, 4, [np.random.SeedSequence(1)], _params("logreg", {}))
    with pytest.raises(ValueError, match="seeds"):
        train_and_predict_block("mlp", datasets, xq, 4, [], _params("mlp", {}))
    with pytest.raises(ValueError, match="dropout"):
        train_and_predict_block("wrn16-4", [(np.zeros((4, 3, 8, 8), np.float32), np.arange(4) % 2)], np.zeros((2, 3, 8, 8), np.float32), 4, [np.random.SeedSequence(1)], _params("wrn16-4", {"dropout": 0.3}))
    with pytest.raises(ValueError, match="batch_teachers"):
        train_teachers("mlp", datasets[0][0], datasets[0][1], xq, [TeacherJob(np.arange(5), np.random.SeedSequence(1))], 4, params={"batch_teachers": -1})


def test_block_parameters_stay_close_to_one_at_a_time():
    """After training, every stacked parameter equals the one-at-a-time one up to float rounding."""
    from ppaudit.models.batched import _train_block
    from ppaudit.models.teachers import _fit_predict_torch

    datasets, (xq, _) = _data((1, 16, 16), [21, 16], 30)
    seeds = [np.random.SeedSequence([9, i]) for i in range(2)]
    p = _params("lenet5", {"epochs": 1, "lr": 0.003})
    _, net = _train_block("lenet5", datasets, xq, 4, seeds, p, return_net=True)
    stacked = [t.detach() for t in net.parameters()]
    for i, ((x, y), s) in enumerate(zip(datasets, seeds)):
        _, single = _fit_predict_torch("lenet5", x, y, xq, 4, s, p, return_net=True)
        ref = [t.detach() for t in single.parameters()]
        assert len(ref) == len(stacked)
        for a, r in zip(stacked, ref):
            mine = a[i].t() if a.dim() == 3 and a.shape[0] == 2 else a.reshape((2, -1) + tuple(a.shape[1:]))[i].reshape(r.shape)
            np.testing.assert_allclose(mine.reshape(r.shape).numpy(), r.numpy(), atol=1e-4, rtol=0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the GPU session)")
@pytest.mark.parametrize("block", [False, True], ids=["one-at-a-time", "block"])
def test_deterministic_wrn_votes_on_gpu_are_identical(block):
    """Issue 17, item 3: WRN-16-4 on 3×32×32, same seed twice on the GPU, identical votes."""
    datasets, (xq, _) = _data((3, 32, 32), [40, 37], 100)
    seeds = [np.random.SeedSequence([11, i]) for i in range(2)]
    p = {"epochs": 2, "device": "cuda", "deterministic": True}

    def run():
        if block:
            return train_and_predict_block("wrn16-4", datasets, xq, 4, seeds, _params("wrn16-4", p))
        return np.stack([train_and_predict("wrn16-4", x, y, xq, 4, s, p) for (x, y), s in zip(datasets, seeds)])

    assert run().tobytes() == run().tobytes()


def test_masked_batchnorm_equals_fused_batchnorm_on_full_batches():
    """The masked per-teacher BatchNorm (ragged steps) and torch's fused kernel (full steps) agree."""
    from ppaudit.models.batched import _modules

    Ctx, stack = _modules()
    g = torch.Generator().manual_seed(0)
    x = torch.randn((16, 2 * 3, 5, 5), generator=g) * 3 + 1

    def run(full, mask=None):
        bn = stack([torch.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)])
        ctx = Ctx()
        ctx.training, ctx.full = True, full
        ctx.mask = torch.ones((16, 2)) if mask is None else mask
        ctx.active = torch.tensor([True, True])
        return bn(x, ctx), bn.running_mean.clone(), bn.running_var.clone()

    fused, masked = run(True), run(False)
    for a, b in zip(fused, masked):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=2e-5, rtol=1e-5)
    # a teacher with 9 valid rows: its statistics are those of its 9 rows only
    m = torch.ones((16, 2))
    m[9:, 1] = 0
    y, _, _ = run(False, m)
    ref = torch.nn.functional.batch_norm(x[:9, 3:], None, None, training=True, eps=1e-5)
    np.testing.assert_allclose(y[:9, 3:].detach().numpy(), ref.numpy(), atol=2e-5)


def test_cuda_blocks_are_trained_by_one_process_whatever_n_jobs(monkeypatch):
    """On a CUDA device a block fills the GPU: train_teachers trains the blocks in this process (n_jobs
    ignored) instead of one block per worker on the same device. A stand-in for the block trainer
    records where and how it is called (loky workers would not see it and fail without CUDA)."""
    import os

    from ppaudit.models import batched

    calls = []

    def fake_block(model, datasets, x_query, num_classes, seeds, params):
        calls.append((os.getpid(), len(datasets), params["device"]))
        return np.zeros((len(datasets), len(x_query)), dtype=np.int64)

    monkeypatch.setattr(batched, "train_and_predict_block", fake_block)
    datasets, (xq, _) = _data((1, 8, 8), [40], 5)
    x, y = datasets[0]
    jobs = [TeacherJob(np.arange(8 * i, 8 * i + 8), np.random.SeedSequence([1, i])) for i in range(5)]
    out = train_teachers("mlp", x, y, xq, jobs, 4, params={"epochs": 1, "batch_teachers": 2, "device": "cuda"}, n_jobs=4)
    assert out.shape == (5, 5)
    assert calls == [(os.getpid(), 2, "cuda"), (os.getpid(), 2, "cuda"), (os.getpid(), 1, "cuda")]


def test_deterministic_switch_does_not_load_the_compiler():
    """The switch sets the kernels' flag without importing torch._inductor (1.5 s per job), in a fresh process."""
    import subprocess
    import sys

    code = (
        "import sys, torch\n"
        "from ppaudit.models.determinism import deterministic_torch\n"
        "with deterministic_torch(True):\n"
        "    assert torch.are_deterministic_algorithms_enabled()\n"
        "    assert not torch.is_deterministic_algorithms_warn_only_enabled()\n"
        "assert not torch.are_deterministic_algorithms_enabled()\n"
        "print('torch._inductor' in sys.modules)\n"
        "import torch._inductor.config as ic\n"  # once the compiler is loaded, it is told too
        "with deterministic_torch(True):\n"
        "    assert torch.are_deterministic_algorithms_enabled() and ic.deterministic\n"
        "assert not ic.deterministic\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
