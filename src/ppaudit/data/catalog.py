"""The catalog of downloadable datasets (MNIST, Fashion-MNIST, CIFAR-10, SVHN, SST-2, AG News, DBpedia, TREC) with pinned checksums.

Datasets whose hosts publish no checksum (the Criteo 1TB Click Logs) are listed apart, in
:data:`UNPINNED_DATASETS`, without files: they are downloaded only through a registry file of
one's own that pins the checksums of a trusted copy (:func:`read_registry`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping

from .criteo import CRITEO_URL
from .download import DatasetInfo, RemoteFile, download_file

__all__ = [
    "DATASETS",
    "UNPINNED_DATASETS",
    "download_dataset",
    "DATASET_NAMES",
    "REGISTRY_ENV",
    "read_registry",
    "active_registry",
]

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

#: Datasets whose hosts publish no checksum: no files here, so nothing is ever downloaded unpinned.
#: A registry file of one's own (:func:`read_registry`) names their files with the checksums of a
#: trusted copy; :func:`download_dataset` explains how when it has none.
UNPINNED_DATASETS: dict[str, DatasetInfo] = {
    # The observational audit of label DP: M' on Day 0, the target model on Day 1 (ppaudit.data.criteo).
    "criteo": DatasetInfo(
        files=(),
        kind="criteo",
        num_classes=2,
        homepage="https://ailab.criteo.com/download-criteo-1tb-click-logs-dataset/",
        notes="Criteo 1TB Click Logs, day_0.gz .. day_23.gz (each about 14 GiB of gzipped TSV) at "
        + CRITEO_URL + "; Criteo publishes no checksum, so the files must be pinned by a registry file.",
        extra={"url": CRITEO_URL},
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

#: Environment variable naming a JSON registry file whose entries replace those of
#: :data:`DATASETS` (the workflow sets it from the config key ``dataset_registry``).
REGISTRY_ENV = "PPAUDIT_DATASET_REGISTRY"

#: File layouts the loaders read (``DatasetInfo.kind``).
_KINDS = ("idx", "cifar10", "svhn", "sst2", "agnews", "dbpedia", "trec", "criteo")


def read_registry(path: str | os.PathLike) -> dict[str, DatasetInfo]:
    """A registry of one's own from a JSON file: mirrors or fixtures of the paper's datasets.

    The file maps dataset names of :data:`DATASETS` or :data:`UNPINNED_DATASETS` to ``{"kind": ..., "num_classes": ...,
    "files": [{"filename": ..., "url": ..., "sha256": ..., "md5": ..., "mirrors": [...]}]}``
    (``num_classes``, ``mirrors`` and one of the two checksums optional). Every file must pin
    a checksum (:class:`RemoteFile`), so a mirror is held to the bytes its registry pins. The
    workflow's CI test serves real-format fixtures of MNIST, Fashion-MNIST, CIFAR-10, SVHN and
    the text datasets from 127.0.0.1 through such a file; a site mirror works the same way.
    It is also the only way to download a dataset of :data:`UNPINNED_DATASETS` (Criteo:
    :func:`ppaudit.data.criteo_registry_entry` writes its entry).

    Raises:
        ValueError: naming the file and the bad entry (unknown dataset or kind, missing
            files, a file without a checksum, not JSON).
    """
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"dataset registry {str(path)!r} cannot be read as JSON: {exc}") from None
    if not isinstance(raw, dict) or not raw:
        raise ValueError(f"dataset registry {str(path)!r} must map dataset names to entries, got {type(raw).__name__}")
    known = {**DATASETS, **UNPINNED_DATASETS}
    out = {}
    for name, entry in raw.items():
        where = f"dataset registry {str(path)!r}, entry {name!r}"
        if name not in known:
            raise ValueError(f"{where}: unknown dataset; known datasets are {sorted(known)}")
        if not isinstance(entry, dict) or entry.get("kind") not in _KINDS:
            kind = entry.get("kind") if isinstance(entry, dict) else entry
            raise ValueError(f"{where}: kind must be one of {list(_KINDS)}, got {kind!r}")
        files = entry.get("files")
        if not isinstance(files, list) or not files:
            raise ValueError(f"{where}: files must be a non-empty list, got {files!r}")
        try:
            remotes = tuple(
                RemoteFile(f["filename"], f["url"], sha256=f.get("sha256"), md5=f.get("md5"), mirrors=tuple(f.get("mirrors", ())))
                for f in files
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{where}: every file needs filename and url ({exc!r})") from None
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        out[name] = DatasetInfo(files=remotes, kind=entry["kind"], num_classes=int(entry.get("num_classes", known[name].num_classes)),
                                homepage=known[name].homepage, notes=f"from the registry file {path}")
    return out


def _unpinned_message(name: str) -> str:
    """How to download a dataset of :data:`UNPINNED_DATASETS` (only Criteo so far)."""
    info = UNPINNED_DATASETS[name]
    example = {name: {"kind": info.kind, "num_classes": info.num_classes, "files": [
        {"filename": f"day_{d}.gz", "url": CRITEO_URL.format(day=d), "sha256": f"<sha256 of your trusted day_{d}.gz>"} for d in (0, 1)
    ]}}
    return (
        f"dataset {name!r} (Criteo 1TB Click Logs) cannot be downloaded as pinned: Criteo publishes no checksum for "
        f"its day files ({CRITEO_URL}, see {info.homepage}), and ppaudit never downloads an unpinned file. "
        "Pin your own: compute the sha256 of a trusted copy of day_0.gz and day_1.gz (sha256sum day_0.gz day_1.gz), "
        f"write a dataset registry JSON file {json.dumps(example)} "
        "(ppaudit.data.criteo_registry_entry({0: sha_day0, 1: sha_day1}) builds the entry) and name it in the "
        f"config key dataset_registry (or the environment variable {REGISTRY_ENV})."
    )


def active_registry() -> dict[str, DatasetInfo]:
    """:data:`DATASETS`, with the entries of the file named by ``$PPAUDIT_DATASET_REGISTRY`` in
    place of its own where that variable is set (see :func:`read_registry`)."""
    path = os.environ.get(REGISTRY_ENV)
    return {**DATASETS, **read_registry(path)} if path else DATASETS


def download_dataset(
    name: str,
    root: str | os.PathLike,
    registry: Mapping[str, DatasetInfo] | None = None,
    **kwargs,
) -> list[Path]:
    """Download every file of dataset ``name`` into ``root/name`` (see :func:`download_file`).

    Args:
        name: key of ``registry``.
        root: parent folder of the dataset folders.
        registry: a registry of one's own (tests); default :func:`active_registry`
            (:data:`DATASETS` unless ``$PPAUDIT_DATASET_REGISTRY`` names a file).
        **kwargs: passed to :func:`download_file` (``retries``, ``backoff``, ``timeout``, ``opener``).

    Returns:
        The paths of the verified files.

    Raises:
        ValueError: ``name`` is not in the registry, or is a dataset of
            :data:`UNPINNED_DATASETS` that the registry gives no files (the message says how
            to pin them with a registry file).
    """
    reg = active_registry() if registry is None else registry
    if name in UNPINNED_DATASETS and (name not in reg or not reg[name].files):
        raise ValueError(_unpinned_message(name))
    if name not in reg:
        raise ValueError(f"unknown dataset {name!r}; downloadable datasets are {sorted(reg)}")
    folder = Path(root) / name
    return [download_file(f, folder, **kwargs) for f in reg[name].files]
