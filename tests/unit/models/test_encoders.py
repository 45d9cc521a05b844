"""Feature encoders and the feature cache (Chadha et al. 2024, §6, App. D.3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ppaudit.models import encoders as F
from ppaudit.models import feature_cache as C


class CountingEncoder(F.Encoder):
    """A stand-in encoder: features = per-image mean and max; counts its forward passes."""

    name = "counting"
    modality = "image"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.calls = 0
        self.loads = 0

    def _load(self):
        self.loads += 1

    def _check_inputs(self, inputs):
        return F._as_images(inputs)

    def _encode_batch(self, batch):
        self.calls += 1
        flat = batch.reshape(batch.shape[0], -1)
        return np.stack([flat.mean(1), flat.max(1)], axis=1)


def _images(n=10, seed=0):
    return np.random.default_rng(seed).random((n, 1, 8, 8)).astype(np.float32)


def test_cache_reuse_does_not_recompute(tmp_path):
    x = _images()
    enc = CountingEncoder(batch_size=4)
    a = C.extract_features(enc, x, cache_dir=tmp_path, dataset="toy", split="train")
    assert enc.calls == 3 and a.shape == (10, 2) and a.dtype == np.float32
    path = C.feature_cache_path(tmp_path, "toy", "counting", "train")
    assert path.is_file() and path.with_suffix(".json").is_file()
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["input_sha256"] == C.input_fingerprint(x) and meta["shape"] == [10, 2]
    fresh = CountingEncoder(batch_size=4)
    b = C.extract_features(fresh, x, cache_dir=tmp_path, dataset="toy", split="train")
    assert fresh.calls == 0 and fresh.loads == 0  # reused: the model is never loaded
    np.testing.assert_array_equal(a, b)
    # another split, changed inputs or another config are new cache entries / recomputed
    C.extract_features(fresh, x, cache_dir=tmp_path, dataset="toy", split="test")
    assert fresh.calls == 3 and C.feature_cache_path(tmp_path, "toy", "counting", "test").is_file()
    x2 = x.copy()
    x2[0, 0, 0, 0] = 0.5 if x2[0, 0, 0, 0] != 0.5 else 0.25
    c = C.extract_features(fresh, x2, cache_dir=tmp_path, dataset="toy", split="train")
    assert fresh.calls == 6 and not np.array_equal(c, a)
    assert not list(tmp_path.rglob("*.tmp*"))  # atomic writes leave no temporary files


def test_encode_keeps_input_order_and_batches():
    x = _images(7, 1)
    enc = CountingEncoder(batch_size=3)
    out = enc.encode(x)
    np.testing.assert_allclose(out[:, 0], x.reshape(7, -1).mean(1), rtol=1e-6)
    assert enc.calls == 3 and enc.last_stats["items"] == 7 and enc.last_stats["per_second"] > 0


def test_efficientnet_lite0_loads_offline_and_extracts():
    from ppaudit.data import load_dataset

    x = load_dataset("fashion-mnist", source="packaged")[2][:2]  # two test images, (2, 1, 28, 28)
    enc = F.get_encoder("efficientnet-lite0", batch_size=2)
    a = enc.encode(x)
    assert a.shape == (2, 1280) and np.all(np.isfinite(a)) and np.all(a >= 0)  # ReLU6 then average pool
    assert not np.allclose(a[0], a[1])
    b = enc.encode(x[::-1].copy())
    np.testing.assert_allclose(b[::-1], a, rtol=1e-5, atol=1e-5)
    plain = F.EfficientNetLite0Encoder(fold_batchnorm=False, batch_size=2).encode(x)
    np.testing.assert_allclose(a, plain, rtol=1e-3, atol=1e-4)  # batch-norm folding is exact algebra


def test_efficientnet_padding_fold_gives_the_same_features():
    """The folded "same" padding and the in-place ReLU6 (issue 30) change no value: the unfolded
    network on the same images (measured bitwise identical on the embedded default's 4,000 images;
    here within float rounding, whatever kernels this machine picks)."""
    import torch

    from ppaudit.data import load_dataset

    x = load_dataset("fashion-mnist", source="packaged")[2][:3]
    folded = F.EfficientNetLite0Encoder(batch_size=3)
    a = folded.encode(x)
    b = F.EfficientNetLite0Encoder(fold_padding=False, batch_size=3).encode(x)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    pads = [m for m in folded._model.modules() if hasattr(m, "static_padding")]
    assert pads and all(not isinstance(m.static_padding, torch.nn.ZeroPad2d) for m in pads)


@pytest.mark.parametrize(("size", "kernel", "stride"), [(224, 3, 2), (112, 5, 2), (56, 3, 1), (28, 5, 1), (15, 3, 2)])
def test_fold_same_padding_is_tf_same_padding(size, kernel, stride):
    """A convolution after an asymmetric ZeroPad2d (TF "same") equals the folded one: its own
    padding plus leading zero taps (Conv2dStaticSamePadding of efficientnet-lite-pytorch)."""
    import torch
    from efficientnet_lite_pytorch.utils import Conv2dStaticSamePadding

    torch.manual_seed(0)
    conv = Conv2dStaticSamePadding(4, 6, kernel, stride=stride, image_size=size, bias=True).eval()
    x = torch.randn(2, 4, size, size)
    assert isinstance(conv.static_padding, torch.nn.ZeroPad2d)
    with torch.no_grad():
        want = conv(x)
        assert F._fold_same_padding(conv) == 1
        got = conv(x)
    assert isinstance(conv.static_padding, torch.nn.Identity)
    assert got.shape == want.shape == (2, 6, -(-size // stride), -(-size // stride))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_minilm_loads_offline_and_extracts():
    enc = F.get_encoder("all-minilm-l6-v2", batch_size=2)
    s = ["A warm, funny and moving film.", "Dull.", "An utterly tedious, joyless two hours.", "A delight from start to finish."]
    a = enc.encode(s)
    assert a.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    b = enc.encode(s[::-1])
    np.testing.assert_allclose(b[::-1], a, atol=1e-5)  # length-sorted batching restores the input order
    assert enc.config()["pooling"] == "mean" and enc.config()["normalize"] is True


@pytest.mark.parametrize("name,default", [("vit-l16-in21k", "efficientnet-lite0"), ("roberta-large", "all-minilm-l6-v2")])
def test_paper_encoders_raise_clear_error_offline(name, default, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty cache
    enc = F.get_encoder(name, local_files_only=True)
    with pytest.raises(F.EncoderUnavailableError) as info:
        enc.load()
    msg = str(info.value)
    assert name in msg and default in msg and ("vit-large-patch16-224-in21k" in msg or "roberta-large" in msg)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: F.get_encoder("resnet"), "unknown encoder 'resnet'"),
        (lambda: CountingEncoder().encode(np.full((2, 1, 4, 4), 2.0, dtype=np.float32)), r"values in \[0, 1\]"),
        (lambda: CountingEncoder().encode(np.zeros((2, 4), dtype=np.float32)), "images must have shape"),
        (lambda: F.SentenceEncoder("all-minilm-l6-v2").encode("one string"), "list of strings"),
        (lambda: F.SentenceEncoder("bert"), "name must be one of"),
        (lambda: F.EfficientNetLite0Encoder(normalization="zca"), "normalization must be"),
        (lambda: C.extract_features(CountingEncoder(), _images(), cache_dir="x"), "dataset and split"),
        (lambda: C.feature_cache_path("c", "a/b", "e", "s"), "dataset must be a non-empty name"),
        (lambda: CountingEncoder(batch_size=0), "batch_size must be"),
    ],
)
def test_bad_inputs_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
