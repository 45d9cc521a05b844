"""Label DP at the papers' scale, in small (issue 17 item 5): CIFAR-10 images (real-format
archive downloaded from 127.0.0.1 with its pinned checksum) through every image mechanism of
the observational paper's Table 1 and Malek et al.'s games, with a torch network
(ppaudit.models.soft_label) — PATE-FM's teachers and FixMatch student included."""

from __future__ import annotations

import numpy as np
import pytest
from dataset_fixtures import write_registry
from local_http import LocalServer

from ppaudit.data import REGISTRY_ENV
from ppaudit.experiments.labeldp.data import load_labeldp_dataset
from ppaudit.experiments.labeldp.release import train_target_model
from ppaudit.experiments.labeldp.models import fit_released_block, train_reference_model

SETTINGS = {
    "source": "download", "train_size": 96, "test_size": 32, "prior_size": 12, "pate_queries": 8, "pate_teachers": 2,
    # as the schema fills it: the stand-in MLP's keys and dropout ride along (lenet5 has neither)
    "model": {"arch": "lenet5", "epochs": 1, "lr": 0.05, "batch_size": 16, "device": "cpu", "hidden": 256, "dropout": 0.0,
              "iterations": 200, "depth": 6},
    "delta": 1e-5, "alibi_prior": "iterative", "pate_student": "fixmatch",
    "fixmatch": {"steps": 2, "batch_size": 4, "mu": 2},
}


@pytest.fixture(scope="module")
def cifar(tmp_path_factory):
    root = tmp_path_factory.mktemp("cifar")
    with LocalServer() as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv(REGISTRY_ENV, str(write_registry(server, root / "registry.json", ["cifar10"], n_train=120, n_test=40)))
        mp.setenv("no_proxy", "127.0.0.1,localhost")
        data = load_labeldp_dataset("image", {**SETTINGS, "root": str(root / "datasets")}, np.random.default_rng(0))
    return data


def test_cifar10_images_are_split_as_the_paper_does(cifar):
    assert cifar.x_ref.dtype == np.uint8 and cifar.x_ref.shape == (48, 3, 32, 32) and cifar.x_target.shape == (48, 3, 32, 32)
    assert cifar.x_test.shape == (32, 3, 32, 32) and cifar.x_ref_ood.shape == cifar.x_ref.shape and cifar.num_classes == 10
    assert cifar.augment_maps is None
    # the out-of-domain view is the mirrored reference half, with pixel noise
    diff = cifar.x_ref_ood.astype(float) - cifar.x_ref[..., ::-1].astype(float)
    assert 10 < np.abs(diff).mean() < 60


@pytest.mark.parametrize("algo, eps", [("lp_1st_prior", 1.0), ("lp_1st_ood", 10.0), ("alibi", 1.0), ("pate", 10.0), ("pate", float("inf"))])
def test_every_image_mechanism_trains_the_network(cifar, algo, eps):
    out = train_target_model(cifar, algo, eps, SETTINGS, np.random.default_rng(1))
    assert out["target_probs"].shape == (48, 10) and out["test_probs"].shape == (32, 10)
    assert np.allclose(out["test_probs"].sum(1), 1.0) and 0.0 <= out["test_accuracy"] <= 1.0
    if algo == "pate":
        assert out["pate_student"] == "fixmatch" and out["pate_answered"] >= 1
    again = train_target_model(cifar, algo, eps, SETTINGS, np.random.default_rng(1))
    assert again["test_probs"].tobytes() == out["test_probs"].tobytes()  # same seed, same bytes


def test_reference_model_and_the_game_block_take_the_network(cifar):
    ref = train_reference_model(cifar, SETTINGS, np.random.default_rng(2))
    assert ref["target_probs"].shape == (48, 10)
    xtr, ytr = cifar.x_target, np.eye(10)[cifar.y_target]
    fits = fit_released_block(cifar, [(xtr, ytr, {}), (xtr, ytr, {})], [[cifar.x_test], [cifar.x_test]], SETTINGS, [3, 3])
    assert fits[0][0].tobytes() == fits[1][0].tobytes()  # images are fitted one at a time (not the stacked MLP)
