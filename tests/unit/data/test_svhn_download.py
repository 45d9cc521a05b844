"""SVHN downloader of ppaudit.data against a 127.0.0.1 HTTP server (no internet).

Fixture files are real-format MATLAB v5 ``.mat`` files (``X`` as (32, 32, 3, n) uint8, ``y``
as (n, 1) with labels 1–10, 10 = digit 0) written with scipy.io.savemat; the fixture
registry pins their MD5 (the kind of checksum the real entry pins) computed here.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dataset_fixtures import mat_bytes as _mat_bytes  # tests/dataset_fixtures.py
from local_http import open_local as _open  # noqa: E402 (tests/local_http.py)

from ppaudit import data
from ppaudit.data import ChecksumError, DatasetInfo, RemoteFile


def _md5(b: bytes) -> str:
    return hashlib.md5(b, usedforsecurity=False).hexdigest()


def _fixture(rng):
    arrays = {
        "train_32x32.mat": (rng.integers(0, 256, (32, 32, 3, 7)), np.array([1, 2, 10, 5, 10, 9, 3])),
        "test_32x32.mat": (rng.integers(0, 256, (32, 32, 3, 4)), np.array([10, 4, 6, 1])),
    }
    return arrays, {n: _mat_bytes(x, y) for n, (x, y) in arrays.items()}


def test_svhn_download_and_read_end_to_end(server, tmp_path):
    arrays, bodies = _fixture(np.random.default_rng(0))
    files = []
    for name, body in bodies.items():
        server.files["/housenumbers/" + name] = body
        # primary URL answers 404: the mirror (the real entry's https mirror) serves the file
        files.append(RemoteFile(name, f"{server.base}/gone/{name}", md5=_md5(body), mirrors=(f"{server.base}/housenumbers/{name}",)))
    server.fail_first["/housenumbers/test_32x32.mat"] = 1  # one transient 503, then success
    registry = {"svhn": DatasetInfo(files=tuple(files), kind="svhn")}
    xtr, ytr, xte, yte = data.load_dataset("svhn", tmp_path, source="download", registry=registry, backoff=0.0, timeout=5, opener=_open)
    assert xtr.shape == (7, 3, 32, 32) and xtr.dtype == np.float32 and xte.shape == (4, 3, 32, 32)
    x0, y0 = arrays["train_32x32.mat"]
    np.testing.assert_allclose(xtr * 255.0, np.transpose(x0, (3, 2, 0, 1)), atol=1e-4)
    np.testing.assert_array_equal(ytr, [1, 2, 0, 5, 0, 9, 3])  # 10 → 0
    np.testing.assert_array_equal(yte, [0, 4, 6, 1])
    assert ytr.dtype == np.int64
    assert sorted(p.name for p in (tmp_path / "svhn").iterdir()) == ["test_32x32.mat", "train_32x32.mat"]  # nothing partial
    assert server.requests.count("/housenumbers/test_32x32.mat") == 2
    # verified copies are reused without a request
    n = len(server.requests)
    data.load_dataset("svhn", tmp_path, source="download", registry=registry, backoff=0.0, timeout=5, opener=_open)
    assert len(server.requests) == n


def test_svhn_corrupted_body_is_refused_atomically(server, tmp_path):
    _, bodies = _fixture(np.random.default_rng(1))
    body = bodies["train_32x32.mat"]
    server.files["/train_32x32.mat"] = body[:-10] + b"0123456789"  # same size, wrong bytes
    remote = RemoteFile("train_32x32.mat", server.base + "/train_32x32.mat", md5=_md5(body))
    with pytest.raises(ChecksumError, match="md5"):
        data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open)
    assert list(tmp_path.iterdir()) == []


def test_svhn_registry_entry_pins_torchvision_md5s():
    info = data.DATASETS["svhn"]
    md5 = {f.filename: f.md5 for f in info.files}
    assert md5 == {"train_32x32.mat": "e26dedcc434d2e4c54c9b2d4a06d8373", "test_32x32.mat": "eb5a983be6a315427106f1b164d9cef3"}
    for f in info.files:
        assert f.url == "http://ufldl.stanford.edu/housenumbers/" + f.filename
        assert f.mirrors == ("https://ufldl.stanford.edu/housenumbers/" + f.filename,)
    assert "svhn" in data.DATASET_NAMES
    with pytest.raises(ValueError, match="no packaged"):
        data.load_dataset("svhn", source="packaged")


def test_load_svhn_rejects_bad_files(tmp_path):
    good = _mat_bytes(np.zeros((32, 32, 3, 2)), np.array([1, 2]))
    (tmp_path / "test_32x32.mat").write_bytes(good)
    with pytest.raises(FileNotFoundError, match="train_32x32.mat"):
        data.load_svhn(tmp_path)
    (tmp_path / "train_32x32.mat").write_bytes(_mat_bytes(np.zeros((32, 32, 3, 2)), np.array([0, 11])))
    with pytest.raises(ValueError, match="labels must lie in 1..10"):
        data.load_svhn(tmp_path)
    (tmp_path / "train_32x32.mat").write_bytes(_mat_bytes(np.zeros((28, 28, 3, 2)), np.array([1, 2])))
    with pytest.raises(ValueError, match="expected \\(32, 32, 3, n\\)"):
        data.load_svhn(tmp_path)
