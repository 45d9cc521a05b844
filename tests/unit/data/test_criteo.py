"""The Criteo 1TB Click Logs (ppaudit.data.criteo and the catalog's unpinned entry): the streaming
reader on real-format fixtures (tests/dataset_fixtures.py), the paper's 80 / 4 / 16 split, and the
download through a registry file served from 127.0.0.1 (no test touches the internet)."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from dataset_fixtures import sha256 as _sha  # tests/dataset_fixtures.py
from dataset_fixtures import write_criteo_day
from local_http import open_local as _open  # tests/local_http.py
from scipy import stats

from ppaudit import data
from ppaudit.data import (
    CRITEO_COLUMNS,
    ChecksumError,
    criteo_registry_entry,
    read_criteo_day,
    split_day,
)
from ppaudit.workflow.config_checks import check_dataset_registry


@pytest.fixture(scope="module")
def day_file(tmp_path_factory):
    """A 3,000-row day file and the frame the reader must return."""
    path = tmp_path_factory.mktemp("criteo") / "day_0.gz"
    return path, write_criteo_day(path, 3000, seed=7)


@pytest.fixture(scope="module")
def big_day_file(tmp_path_factory):
    """A 200,000-row day file (about 7 MB of gzip, 40 MB of text)."""
    path = tmp_path_factory.mktemp("criteo_big") / "day_1.gz"
    return path, write_criteo_day(path, 200_000, seed=11)


def _row_ids(frame: pd.DataFrame, expected: pd.DataFrame) -> np.ndarray:
    """Positions in ``expected`` of the rows of ``frame`` (rows identified by their hash)."""
    where = {h: i for i, h in enumerate(pd.util.hash_pandas_object(expected, index=False))}
    assert len(where) == len(expected)  # the fixture's rows are distinct
    return np.array([where[h] for h in pd.util.hash_pandas_object(frame, index=False)])


def _tsv(lines) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _line(label="0", ints=("1",) * 13, cats=("68fd1e64",) * 26) -> str:
    return "\t".join([label, *ints, *cats])


def test_first_rows_round_trip_with_real_format_and_dtypes(day_file):
    path, expected = day_file
    df = read_criteo_day(path)
    pd.testing.assert_frame_equal(df, expected)
    assert list(df.columns) == list(CRITEO_COLUMNS) == ["label", *[f"I{i}" for i in range(1, 14)], *[f"C{i}" for i in range(1, 27)]]
    assert df["label"].dtype == np.int64 and set(df["label"]) == {0, 1}
    assert all(df[f"I{i}"].dtype == np.float64 for i in range(1, 14))
    assert all(pd.api.types.is_string_dtype(df[f"C{i}"]) for i in range(1, 27))
    assert 0.01 < df["label"].mean() < 0.06  # about 3% clicks
    # the first max_rows rows, whatever the chunk size
    for chunk_rows in (1, 7, 100_000):
        pd.testing.assert_frame_equal(read_criteo_day(path, 123, chunk_rows=chunk_rows), expected.head(123))
    pd.testing.assert_frame_equal(read_criteo_day(path, 10_000), expected)  # fewer rows than asked: all of them


def test_reservoir_sample_is_a_deterministic_subset_in_file_order(day_file):
    path, expected = day_file
    a = read_criteo_day(path, 500, sample="reservoir", seed=3, chunk_rows=256)
    pd.testing.assert_frame_equal(a, read_criteo_day(path, 500, sample="reservoir", seed=3, chunk_rows=256))
    assert a.index.equals(pd.RangeIndex(500))
    ids = _row_ids(a, expected)
    assert len(set(ids)) == 500 and np.all(np.diff(ids) > 0)  # without replacement, in file order
    pd.testing.assert_frame_equal(a, expected.iloc[ids].reset_index(drop=True))
    assert ids.max() > 2500  # reaches the end of the file, unlike sample="first"
    other = _row_ids(read_criteo_day(path, 500, sample="reservoir", seed=4, chunk_rows=256), expected)
    assert not np.array_equal(ids, other)
    # a sample at least as large as the file is the whole file; max_rows=None reads every row
    pd.testing.assert_frame_equal(read_criteo_day(path, 5000, sample="reservoir", seed=0), expected)
    pd.testing.assert_frame_equal(read_criteo_day(path, sample="reservoir", seed=0), expected)


@pytest.mark.parametrize("chunk_rows, seeds", [(1, 600), (4, 1200)])
def test_reservoir_sample_is_uniform_over_subsets(tmp_path, chunk_rows, seeds):
    # 6 rows, samples of 2: each of the 15 subsets has probability 1/15 (chi-square over the seeds);
    # chunks of 4 put two replacement draws in one chunk (a slot drawn twice keeps the later row)
    path = tmp_path / "six.tsv"
    path.write_bytes(_tsv(_line(ints=(str(i),) + ("",) * 12) for i in range(6)))
    counts = dict.fromkeys(itertools.combinations(range(6), 2), 0)
    for seed in range(seeds):
        df = read_criteo_day(path, 2, sample="reservoir", seed=seed, chunk_rows=chunk_rows)
        counts[tuple(df["I1"].astype(int))] += 1  # in file order, so the tuple is sorted
    assert sum(counts.values()) == seeds
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3, counts


def test_missing_values_and_signed_counts(tmp_path):
    lines = [
        _line("1", ints=("", "-1", "0") + ("5",) * 10, cats=("",) + ("05db9164",) * 24 + ("",)),
        _line("0", ints=("",) * 13, cats=("",) * 26),
    ]
    path = tmp_path / "day_0.gz"
    path.write_bytes(gzip.compress(_tsv(lines)))
    df = read_criteo_day(path)
    assert df["label"].tolist() == [1, 0]
    assert math.isnan(df.loc[0, "I1"]) and df.loc[0, "I2"] == -1.0 and df.loc[0, "I3"] == 0.0 and df.loc[0, "I13"] == 5.0
    assert df.loc[0, "C1"] == "" and df.loc[0, "C2"] == "05db9164" and df.loc[0, "C26"] == ""
    assert df.loc[1, [f"I{i}" for i in range(1, 14)]].isna().all()
    assert (df.loc[1, [f"C{i}" for i in range(1, 27)]] == "").all()
    assert all(df[f"I{i}"].dtype == np.float64 for i in range(1, 14))


@pytest.mark.parametrize(
    "bad, match",
    [
        (_line() + "\textra", r"line 3: expected 40 tab-separated fields, got 41"),
        ("\t".join(_line().split("\t")[:39]), r"line 3: expected 40 tab-separated fields, got 39"),
        ("", r"line 3: expected 40 tab-separated fields, got 1"),
        (_line(label="2"), r"line 3: label must be 0 or 1, got '2'"),
        (_line(label=""), r"line 3: label must be 0 or 1, got ''"),
        (_line(ints=("1", "1", "1.5") + ("1",) * 10), r"line 3: I3 must be an integer or empty, got '1.5'"),
        (_line(ints=("abc",) + ("1",) * 12), r"line 3: I1 must be an integer or empty, got 'abc'"),
        (_line(ints=("1",) * 12 + ("-",)), r"line 3: I13 must be an integer or empty, got '-'"),
    ],
)
def test_malformed_line_is_named_with_file_line_and_value(tmp_path, bad, match):
    path = tmp_path / "day_5.gz"
    path.write_bytes(gzip.compress(_tsv([_line(), _line("1"), bad, _line()])))
    for chunk_rows in (2, 100):  # the bad line in the second chunk, or in the first
        with pytest.raises(ValueError, match="day_5.gz.*" + match):
            read_criteo_day(path, chunk_rows=chunk_rows)
        with pytest.raises(ValueError, match=match):
            read_criteo_day(path, 1, sample="reservoir", seed=0, chunk_rows=chunk_rows)  # every line is checked
    assert len(read_criteo_day(path, 2)) == 2  # rows before the bad line can be read


def test_plain_tsv_is_detected_by_its_magic_bytes(tmp_path, day_file):
    path, expected = day_file
    text = gzip.decompress(path.read_bytes())
    for name in ("day_0.tsv", "day_0.gz"):  # the extension does not matter
        plain = tmp_path / name
        plain.write_bytes(text)
        pd.testing.assert_frame_equal(read_criteo_day(plain, 200), expected.head(200))
        pd.testing.assert_frame_equal(read_criteo_day(plain, 200, sample="reservoir", seed=1),
                                      read_criteo_day(path, 200, sample="reservoir", seed=1))


def test_reader_streams_and_keeps_only_the_selected_rows(tmp_path, big_day_file):
    path, expected = big_day_file
    # "first" stops reading after its rows: a file cut in the middle reads fine ...
    body = path.read_bytes()
    cut = tmp_path / "day_1.gz"
    cut.write_bytes(body[: len(body) // 2])
    pd.testing.assert_frame_equal(read_criteo_day(cut, 10), expected.head(10))
    # ... and only a reader that goes on to its end sees the damage, after the rows it read
    with pytest.raises(ValueError, match=r"day_1.gz.* damaged gzip file after line \d+"):
        read_criteo_day(cut, 10, sample="reservoir", seed=0)
    # a reservoir of 10 over all 200,000 rows holds the sample and one chunk, never the whole day
    tracemalloc.start()
    try:
        small = read_criteo_day(path, 10, sample="reservoir", seed=0, chunk_rows=1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(small) == 10 and _row_ids(small, expected).max() > 100_000
    whole = expected.memory_usage(deep=True).sum()
    assert whole > 100e6 and peak < 16e6, (peak, whole)


def test_split_day_is_the_papers_80_4_16_split(day_file):
    _, expected = day_file
    df = expected.head(1000).assign(row=np.arange(1000))
    train, val, test = split_day(df, np.random.default_rng(0))
    assert (len(train), len(val), len(test)) == (800, 40, 160)
    ids = [set(part["row"]) for part in (train, val, test)]
    assert not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2]) and set.union(*ids) == set(range(1000))
    assert all(part.index.equals(pd.RangeIndex(len(part))) for part in (train, val, test))
    assert list(train["row"]) != sorted(train["row"])  # shuffled
    again = split_day(df, np.random.default_rng(0))
    assert all(a.equals(b) for a, b in zip((train, val, test), again))
    pd.testing.assert_frame_equal(train.drop(columns="row"), expected.iloc[train["row"]].reset_index(drop=True))
    assert [len(p) for p in split_day(df.head(3), np.random.default_rng(1), (0.5, 0.0, 0.5))] == [2, 0, 1]
    for bad in [(0.8, 0.2), (0.8, 0.1, 0.2), (1.2, -0.1, -0.1)]:
        with pytest.raises(ValueError, match="fractions must be three non-negative numbers summing to 1"):
            split_day(df, np.random.default_rng(0), bad)


def test_registry_entry_is_accepted_by_read_registry(tmp_path):
    digests = {1: "b" * 64, 0: "a" * 64}
    entry = criteo_registry_entry(digests)
    assert entry == {"kind": "criteo", "num_classes": 2, "files": [
        {"filename": "day_0.gz", "url": "https://sacriteopcail01.z16.web.core.windows.net/day_0.gz", "sha256": "a" * 64},
        {"filename": "day_1.gz", "url": "https://sacriteopcail01.z16.web.core.windows.net/day_1.gz", "sha256": "b" * 64},
    ]}
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"criteo": entry}))
    info = data.read_registry(path)["criteo"]
    assert info.kind == "criteo" and info.num_classes == 2 and info.homepage.startswith("https://ailab.criteo.com/")
    assert [(f.filename, f.sha256) for f in info.files] == [("day_0.gz", "a" * 64), ("day_1.gz", "b" * 64)]
    check_dataset_registry({"dataset_registry": str(path)})  # the workflow's config check accepts it
    # like every entry, a criteo file must pin a checksum
    del entry["files"][0]["sha256"]
    path.write_text(json.dumps({"criteo": entry}))
    with pytest.raises(ValueError, match="'criteo'.*must pin a sha256 or md5"):
        data.read_registry(path)
    for bad, match in [({}, "at least one day"), ({24: "a" * 64}, "0..23"), ({0: "A" * 64}, "64 lowercase hex")]:
        with pytest.raises(ValueError, match=match):
            criteo_registry_entry(bad)
    with pytest.raises(ValueError, match=r"\{day\}"):
        criteo_registry_entry({0: "a" * 64}, url="https://example.org/day_0.gz")


def test_download_through_a_registry_file_then_load_the_split(server, tmp_path, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    frames = {day: write_criteo_day(served / f"day_{day}.gz", 400, seed=day) for day in (0, 1)}
    for day in (0, 1):
        server.files[f"/criteo/day_{day}.gz"] = (served / f"day_{day}.gz").read_bytes()
    digests = {day: _sha(server.files[f"/criteo/day_{day}.gz"]) for day in (0, 1)}
    reg = tmp_path / "registry.json"
    reg.write_text(json.dumps({"criteo": criteo_registry_entry(digests, url=server.base + "/criteo/day_{day}.gz")}))
    monkeypatch.setenv(data.REGISTRY_ENV, str(reg))
    root = tmp_path / "dl"
    paths = data.download_dataset("criteo", root, backoff=0.0, timeout=5, opener=_open)
    assert paths == [root / "criteo" / "day_0.gz", root / "criteo" / "day_1.gz"]
    assert all(_sha(p.read_bytes()) == digests[d] for d, p in enumerate(paths))
    n = len(server.requests)
    data.download_dataset("criteo", root, backoff=0.0, timeout=5, opener=_open)
    assert len(server.requests) == n  # verified copies are reused
    days = data.load_criteo_split(root, rows_per_day=100, seed=0)
    assert list(days) == [0, 1]
    for day in (0, 1):
        pd.testing.assert_frame_equal(days[day], frames[day].head(100))
    sampled = data.load_criteo_split(root, rows_per_day=100, seed=0, sample="reservoir")
    assert not sampled[0].equals(days[0]) and len(sampled[1]) == 100
    pd.testing.assert_frame_equal(sampled[1], data.load_criteo_split(root, rows_per_day=100, seed=0, sample="reservoir")[1])
    with pytest.raises(FileNotFoundError, match="day_2.gz.*download_dataset\\('criteo'"):
        data.load_criteo_split(root, rows_per_day=100, seed=0, days=(2,))


def test_wrong_checksum_is_refused(server, tmp_path):
    body = gzip.compress(_tsv([_line()]))
    server.files["/criteo/day_0.gz"] = body + b"tampered"
    reg = tmp_path / "registry.json"
    reg.write_text(json.dumps({"criteo": criteo_registry_entry({0: _sha(body)}, url=server.base + "/criteo/day_{day}.gz")}))
    with pytest.raises(ChecksumError, match="checksum mismatch for day_0.gz"):
        data.download_dataset("criteo", tmp_path / "dl", registry=data.read_registry(reg), backoff=0.0, timeout=5, opener=_open)
    assert list((tmp_path / "dl" / "criteo").iterdir()) == []


def test_default_registry_refuses_criteo_and_says_how_to_pin_it(tmp_path, monkeypatch):
    monkeypatch.delenv(data.REGISTRY_ENV, raising=False)
    assert "criteo" not in data.DATASETS and data.UNPINNED_DATASETS["criteo"].files == ()
    assert data.UNPINNED_DATASETS["criteo"].kind == "criteo" and data.UNPINNED_DATASETS["criteo"].num_classes == 2
    for registry in (None, data.DATASETS, data.UNPINNED_DATASETS):
        with pytest.raises(ValueError, match="Criteo publishes no checksum") as err:
            data.download_dataset("criteo", tmp_path, registry=registry)
        msg = str(err.value)
        for part in ("dataset_registry", "day_0.gz", "day_1.gz", "sha256", "https://sacriteopcail01.z16.web.core.windows.net/day_0.gz",
                     "criteo_registry_entry", data.REGISTRY_ENV):
            assert part in msg, part
    assert not (tmp_path / "criteo").exists()  # nothing was fetched
