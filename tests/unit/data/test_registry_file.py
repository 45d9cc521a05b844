"""A registry file of one's own (ppaudit.data.read_registry / active_registry): the real download
path and readers on real-format fixtures served from 127.0.0.1 (tests/dataset_fixtures.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dataset_fixtures import IMAGE_DATASETS, write_registry
from ppaudit import data
from ppaudit.workflow.config_checks import check_dataset_registry


def test_registry_file_serves_every_image_dataset_through_the_real_loaders(server, tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    reg = write_registry(server, tmp_path / "registry.json", IMAGE_DATASETS, n_train=50, n_test=20)
    monkeypatch.setenv(data.REGISTRY_ENV, str(reg))
    assert data.active_registry()["cifar10"].files[0].url.startswith(server.base)
    assert data.active_registry()["sst2"] is data.DATASETS["sst2"]  # entries it does not name stay pinned
    shapes = {"mnist": (1, 28, 28), "fashion-mnist": (1, 28, 28), "cifar10": (3, 32, 32), "svhn": (3, 32, 32)}
    for name in IMAGE_DATASETS:
        xtr, ytr, xte, yte = data.load_dataset(name, tmp_path / "dl", source="download", backoff=0.0, timeout=5)
        assert xtr.shape == (50, *shapes[name]) and xte.shape == (20, *shapes[name]), name
        assert xtr.dtype == np.float32 and 0 <= xtr.min() and xtr.max() <= 1
        assert set(ytr) <= set(range(10)) and len(set(ytr)) == 10
    # a verified copy is reused: no further request
    n = len(server.requests)
    data.load_dataset("cifar10", tmp_path / "dl", source="download", backoff=0.0, timeout=5)
    assert len(server.requests) == n
    # without the variable, the pinned official entries are back
    monkeypatch.delenv(data.REGISTRY_ENV)
    assert data.active_registry() is data.DATASETS


@pytest.mark.parametrize(
    "content, match",
    [
        ("not json", "cannot be read as JSON"),
        ("[]", "must map dataset names"),
        (json.dumps({"imagenet": {"kind": "idx", "files": [{"filename": "a", "url": "http://x/a", "sha256": "0" * 64}]}}), "'imagenet': unknown dataset"),
        (json.dumps({"mnist": {"kind": "png", "files": []}}), "kind must be one of .* got 'png'"),
        (json.dumps({"mnist": {"kind": "idx", "files": []}}), "files must be a non-empty list"),
        (json.dumps({"mnist": {"kind": "idx", "files": [{"filename": "a", "url": "http://x/a"}]}}), "must pin a sha256 or md5"),
        (json.dumps({"mnist": {"kind": "idx", "files": [{"url": "http://x/a", "md5": "0" * 32}]}}), "needs filename and url"),
    ],
)
def test_bad_registry_files_are_refused_naming_the_entry(tmp_path, content, match):
    path = tmp_path / "reg.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        data.read_registry(path)
    # the workflow refuses it before any job, naming the config key
    with pytest.raises(ValueError, match="^dataset_registry: "):
        check_dataset_registry({"dataset_registry": str(path)})


def test_missing_registry_file_is_a_config_error(tmp_path):
    with pytest.raises(ValueError, match="dataset_registry: .*nowhere.json.* cannot be read"):
        check_dataset_registry({"dataset_registry": str(tmp_path / "nowhere.json")})
    check_dataset_registry({"dataset_registry": None})  # the default: nothing to check
