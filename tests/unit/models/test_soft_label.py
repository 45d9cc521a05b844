"""The soft-label image trainer of the label-DP audits at paper scale
(ppaudit.models.soft_label): it learns, soft labels and ALIBI's iterative prior are used,
the same seed gives the same bytes, and bad input is refused by name."""

import numpy as np
import pytest

from ppaudit.models.soft_label import flip_and_shift, soft_targets, torch_fit_predict_soft

SMALL = {"arch": "lenet5", "epochs": 8, "lr": 0.05, "batch_size": 32, "augment": False, "weight_decay": 0.0}


def _images(n, seed, k=3):
    """uint8 CIFAR-shaped images whose class sets the mean of one channel."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    x = rng.integers(0, 120, size=(n, 3, 16, 16)).astype(np.int64)
    x[np.arange(n), y % 3] += 100
    return np.clip(x, 0, 255).astype(np.uint8), y


def test_learns_a_separable_task_and_returns_probabilities():
    x, y = _images(300, 0)
    xt, yt = _images(200, 1)
    (probs,) = torch_fit_predict_soft(x, y, [xt], 3, SMALL, seed=3)
    assert probs.shape == (200, 3) and np.allclose(probs.sum(1), 1.0)
    assert np.mean(probs.argmax(1) == yt) > 0.9


def test_same_seed_same_bytes_and_another_seed_differs():
    x, y = _images(120, 2)
    a = torch_fit_predict_soft(x, y, [x[:20]], 3, {**SMALL, "epochs": 2, "augment": True}, seed=5)[0]
    b = torch_fit_predict_soft(x, y, [x[:20]], 3, {**SMALL, "epochs": 2, "augment": True}, seed=5)[0]
    c = torch_fit_predict_soft(x, y, [x[:20]], 3, {**SMALL, "epochs": 2, "augment": True}, seed=6)[0]
    assert a.tobytes() == b.tobytes() and not np.array_equal(a, c)


def test_soft_labels_and_the_iterative_prior_are_the_targets():
    x, y = _images(200, 3)
    # soft labels that all say class 2: the model follows them, not y
    soft = np.tile([0.0, 0.1, 0.9], (200, 1))
    (p,) = torch_fit_predict_soft(x, soft, [x], 3, SMALL, seed=0)
    assert np.mean(p.argmax(1) == 2) > 0.95
    calls = []

    def prior_fn(probs):
        calls.append(probs.shape)
        return np.tile([0.9, 0.05, 0.05], (probs.shape[0], 1))

    (p,) = torch_fit_predict_soft(x, y, [x], 3, {**SMALL, "epochs": 3}, seed=0, soft_label_fn=prior_fn)
    assert calls == [(200, 3)] * 3 and np.mean(p.argmax(1) == 0) > 0.95


def test_augment_flips_and_shifts_within_the_image():
    import torch

    xb = torch.arange(2 * 1 * 4 * 4, dtype=torch.float32).reshape(2, 1, 4, 4)
    out = flip_and_shift(xb, torch.Generator().manual_seed(0), max_shift=1)
    assert out.shape == xb.shape
    for i in range(2):  # every output pixel is 0 (fill) or a pixel of the (possibly flipped) input
        vals = set(out[i].flatten().tolist()) - {0.0}
        assert vals <= set(xb[i].flatten().tolist())


@pytest.mark.parametrize(
    "x, y, model, match",
    [
        (np.zeros((4, 16, 16), np.uint8), np.zeros(4, int), SMALL, "x_train must be"),
        (np.zeros((4, 3, 16, 16), np.uint8), np.zeros(3, int), SMALL, "3 labels for 4 images"),
        (np.zeros((4, 3, 16, 16), np.uint8), np.array([0, 1, 2, 3]), SMALL, "labels must lie in"),
        (np.zeros((4, 3, 16, 16), np.uint8), np.zeros(4, int), {**SMALL, "arch": "resnet"}, "arch must be one of"),
        (np.zeros((4, 3, 16, 16), np.uint8), np.zeros(4, int), {**SMALL, "optimizer": "rmsprop"}, "optimizer must be"),
    ],
)
def test_bad_input_is_refused_by_name(x, y, model, match):
    with pytest.raises(ValueError, match=match):
        torch_fit_predict_soft(x, y, [x], 3, model, seed=0)


def test_soft_targets_one_hot():
    assert soft_targets(np.array([2, 0]), 3).tolist() == [[0, 0, 1], [1, 0, 0]]


def test_channel_statistics_match_numpy_on_the_unit_scale():
    from ppaudit.models.soft_label import channel_mean_std

    x, _ = _images(5000, 4)  # more than one 4096-image chunk
    mean, std = channel_mean_std(x)
    ref = x.astype(np.float64) / 255.0
    np.testing.assert_allclose(mean, ref.mean(axis=(0, 2, 3)), rtol=1e-10)
    np.testing.assert_allclose(std, ref.std(axis=(0, 2, 3)), rtol=1e-8)
