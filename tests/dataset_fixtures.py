"""Real-format fixtures of the paper's downloadable datasets, and a registry file that serves them.

The bytes are laid out exactly as the official hosts publish them (the layouts the readers of
``ppaudit.data`` check), with fewer images and learnable classes:

* MNIST / Fashion-MNIST: four gzipped idx files (``train-images-idx3-ubyte.gz`` ...);
* CIFAR-10: ``cifar-10-python.tar.gz`` with ``cifar-10-batches-py/data_batch_1..5``,
  ``test_batch`` (pickled dicts of ``b"data"`` (n, 3072) uint8 and ``b"labels"``) and
  ``batches.meta``;
* SVHN: ``train_32x32.mat`` / ``test_32x32.mat`` (``X`` (32, 32, 3, n), ``y`` 1–10, 10 = 0);
* SST-2 (GLUE zip), AG News (two CSVs), DBpedia (``dbpedia_csv.tar.gz``), TREC (two label
  files) with the real row counts (``ppaudit.data.TEXT_ROWS``).

Each image class is a fixed random template plus noise, so that teachers learn something.
:func:`write_registry` puts the fixtures on a :class:`local_http.LocalServer` and writes the
JSON registry (``ppaudit.data.read_registry``) that pins their SHA-256 values.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import pickle
import struct
import tarfile
import zipfile
from pathlib import Path

import numpy as np

from ppaudit.data import TEXT_ROWS, TREC_COARSE


def sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def idx_bytes(arr: np.ndarray) -> bytes:
    """An idx file (MNIST layout) of uint8 data, gzipped."""
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(struct.pack(">I", d) for d in arr.shape)
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz:
        gz.write(header + arr.astype(np.uint8).tobytes())
    return buf.getvalue()


def mat_bytes(x: np.ndarray, y: np.ndarray) -> bytes:
    """A MATLAB file with SVHN's arrays ``X`` and ``y``."""
    from scipy.io import savemat

    buf = io.BytesIO()
    savemat(buf, {"X": x.astype(np.uint8), "y": y.reshape(-1, 1).astype(np.uint8)})
    return buf.getvalue()


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    return buf.getvalue()


def class_images(rng: np.random.Generator, n: int, shape: tuple[int, ...], num_classes: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``n`` uint8 images of ``shape``: class template (fixed by the generator) plus noise, balanced labels."""
    templates = rng.random((num_classes, *shape))
    y = np.arange(n) % num_classes
    rng.shuffle(y)
    x = 0.65 * templates[y] + 0.35 * rng.random((n, *shape))
    return np.round(255 * x).astype(np.uint8), y.astype(np.uint8)


def idx_dataset(rng, n_train: int, n_test: int) -> dict[str, bytes]:
    x, y = class_images(rng, n_train + n_test, (28, 28))
    return {
        "train-images-idx3-ubyte.gz": idx_bytes(x[:n_train]), "train-labels-idx1-ubyte.gz": idx_bytes(y[:n_train]),
        "t10k-images-idx3-ubyte.gz": idx_bytes(x[n_train:]), "t10k-labels-idx1-ubyte.gz": idx_bytes(y[n_train:]),
    }


def cifar10_archive(rng, n_train: int, n_test: int) -> dict[str, bytes]:
    """``cifar-10-python.tar.gz``: ``n_train`` images over the five training batches."""
    x, y = class_images(rng, n_train + n_test, (3, 32, 32))
    flat = x.reshape(len(x), -1)
    members = {}
    for i, part in enumerate(np.array_split(np.arange(n_train), 5), start=1):
        members[f"cifar-10-batches-py/data_batch_{i}"] = pickle.dumps(
            {b"batch_label": f"training batch {i} of 5".encode(), b"labels": y[part].tolist(), b"data": flat[part]})
    test = np.arange(n_train, n_train + n_test)
    members["cifar-10-batches-py/test_batch"] = pickle.dumps({b"batch_label": b"testing batch 1 of 1", b"labels": y[test].tolist(), b"data": flat[test]})
    members["cifar-10-batches-py/batches.meta"] = pickle.dumps({b"label_names": [b"c%d" % c for c in range(10)], b"num_vis": 3072})
    return {"cifar-10-python.tar.gz": _tar_gz(members)}


def svhn_files(rng, n_train: int, n_test: int) -> dict[str, bytes]:
    x, y = class_images(rng, n_train + n_test, (32, 32, 3))
    x = np.moveaxis(x, 0, -1)  # (32, 32, 3, n)
    y = np.where(y == 0, 10, y)  # SVHN writes the digit 0 as label 10
    return {"train_32x32.mat": mat_bytes(x[..., :n_train], y[:n_train]), "test_32x32.mat": mat_bytes(x[..., n_train:], y[n_train:])}


_WORDS = {2: ("bad", "good"), 4: ("world", "sports", "business", "science"),
          6: ("abbreviation", "thing", "description", "person", "place", "number")}


def _sentence(i: int, label: int, num_classes: int) -> str:
    word = _WORDS.get(num_classes, tuple(f"topic{c}" for c in range(num_classes)))[label]
    return f"item {i} is about {word}"


def sst2_zip() -> dict[str, bytes]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for split in ("train", "dev"):
            n = TEXT_ROWS[("sst2", split)]
            zf.writestr(f"SST-2/{split}.tsv", "sentence\tlabel\n" + "".join(f"{_sentence(i, i % 3 > 0, 2)} \t{int(i % 3 > 0)}\n" for i in range(n)))
        zf.writestr("SST-2/test.tsv", "index\tsentence\n" + "".join(f"{i}\ttest {i}\n" for i in range(1821)))
    return {"SST-2.zip": buf.getvalue()}


def agnews_csvs() -> dict[str, bytes]:
    return {f"{split}.csv": "".join(f'"{1 + i % 4}","Title {i}","{_sentence(i, i % 4, 4)}\\nsecond line"\n'
                                    for i in range(TEXT_ROWS[("agnews", split)])).encode() for split in ("train", "test")}


def dbpedia_archive() -> dict[str, bytes]:
    members = {"dbpedia_csv/classes.txt": "".join(f"Class{c}\n" for c in range(14)).encode()}
    for split in ("train", "test"):
        members[f"dbpedia_csv/{split}.csv"] = "".join(
            f'{1 + i % 14},"Name {i}"," {_sentence(i, i % 14, 14)}"\n' for i in range(TEXT_ROWS[("dbpedia", split)])).encode()
    return {"dbpedia_csv.tar.gz": _tar_gz(members)}


def trec_files() -> dict[str, bytes]:
    out = {}
    for split, name in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        out[name] = "".join(f"{TREC_COARSE[i % 6]}:x {_sentence(i, i % 6, 6)} caf\xe9 ?\n" for i in range(TEXT_ROWS[("trec", split)])).encode("latin-1")
    return out


#: kind and builder of every fixture dataset (image builders take ``rng, n_train, n_test``).
FIXTURES = {
    "mnist": ("idx", idx_dataset), "fashion-mnist": ("idx", idx_dataset), "cifar10": ("cifar10", cifar10_archive),
    "svhn": ("svhn", svhn_files), "sst2": ("sst2", sst2_zip), "agnews": ("agnews", agnews_csvs),
    "dbpedia": ("dbpedia", dbpedia_archive), "trec": ("trec", trec_files),
}
IMAGE_DATASETS = ("mnist", "fashion-mnist", "cifar10", "svhn")


def write_registry(server, path: Path, datasets, *, n_train: int = 400, n_test: int = 100, seed: int = 0) -> Path:
    """Serve the fixtures of ``datasets`` from ``server`` and write their registry JSON to ``path``."""
    registry = {}
    for k, name in enumerate(datasets):
        kind, build = FIXTURES[name]
        files = build(np.random.default_rng([seed, k]), n_train, n_test) if name in IMAGE_DATASETS else build()
        entry = []
        for filename, body in files.items():
            server.files[f"/{name}/{filename}"] = body
            entry.append({"filename": filename, "url": f"{server.base}/{name}/{filename}", "sha256": sha256(body)})
        registry[name] = {"kind": kind, "files": entry}
    path.write_text(json.dumps(registry, indent=1))
    return path


def write_criteo_day(path: Path, rows: int, seed: int, positive_rate: float = 0.03):
    """A Criteo 1TB Click Logs day file (gzipped TSV, ``day_N.gz`` layout) of ``rows`` lines.

    Every line has the 40 tab-separated fields ``label, I1..I13, C1..C26`` of the real files:
    labels with about ``positive_rate`` clicks, I-fields small non-negative counts (geometric,
    10–40% empty per column), C-fields 8-hex-digit hashes from a Zipf-like vocabulary per column
    (0–30% empty). Returns the frame ``ppaudit.data.read_criteo_day`` must produce (label int64,
    I float64 with NaN, C str with "").
    """
    import pandas as pd

    from ppaudit.data import CRITEO_CAT_COLUMNS, CRITEO_INT_COLUMNS

    rng = np.random.default_rng(seed)
    label = (rng.random(rows) < positive_rate).astype(np.int64)
    fields = [label.astype(str).astype(object)]
    frame = {"label": label}
    for name in CRITEO_INT_COLUMNS:
        value = rng.geometric(rng.uniform(0.05, 0.5), rows) - 1
        missing = rng.random(rows) < rng.uniform(0.1, 0.4)
        text = value.astype(str).astype(object)
        text[missing] = ""
        fields.append(text)
        frame[name] = np.where(missing, np.nan, value.astype(np.float64))
    for name in CRITEO_CAT_COLUMNS:
        vocab = np.array([f"{h:08x}" for h in rng.integers(0, 2**32, int(rng.integers(3, 500)))], dtype=object)
        text = vocab[(rng.zipf(1.3, rows) - 1) % len(vocab)]
        text[rng.random(rows) < rng.uniform(0.0, 0.3)] = ""
        fields.append(text)
        frame[name] = pd.Series(text, dtype=str)
    body = "".join("\t".join(line) + "\n" for line in zip(*fields)).encode()
    with gzip.GzipFile(Path(path), mode="wb", mtime=0, compresslevel=1) as gz:
        gz.write(body)
    return pd.DataFrame(frame)


def toy_labeldp_data(seed=0, n=150, d=6, k=4):
    """A small image-kind :class:`~ppaudit.experiments.labeldp.data.LabelDPData`: ``k`` Gaussian
    clusters in ``d`` dimensions, ``n`` points each for the reference half, the target half and the test set."""
    import numpy as np

    from ppaudit.experiments.labeldp.data import LabelDPData

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d)) * 2
    y = rng.integers(0, k, 3 * n)
    x = (centres[y] + rng.normal(size=(3 * n, d))).astype(np.float32)
    return LabelDPData("image", k, x[:n], y[:n], x[n : 2 * n], y[n : 2 * n], x[2 * n :], y[2 * n :])
