"""ALIBI's iterative prior, AGIBI's σ calibrations, LP-1ST noise correction, FixMatch (Malek et al. 2021; observational paper §6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import binomtest, laplace, norm

from ppaudit.models.soft_label import mlp_fit_predict_soft
from ppaudit.mechanisms.fixmatch import (
    affine_maps_augment,
    feature_noise_augment,
    fixmatch_fit_predict,
)
from ppaudit.mechanisms.labeldp import (
    agibi_posterior,
    agibi_sigma,
    alibi,
    alibi_posterior,
    lp_1st_noise_correction,
    rr_keep_probability,
    rr_noise_correction,
    rr_transition_matrix,
)


def _brute_force_posterior(noisy, prior, density):
    """p(y = c | o) ∝ prior_c · Π_j density(o_j − [j = c]), by explicit products."""
    n, k = noisy.shape
    out = np.zeros((n, k))
    for i in range(n):
        for c in range(k):
            e = np.zeros(k)
            e[c] = 1.0
            out[i, c] = prior[i, c] * np.prod(density(noisy[i] - e))
        out[i] /= out[i].sum()
    return out


def test_alibi_iterative_step_is_bayes_with_the_model_prior():
    rng = np.random.default_rng(0)
    eps, k, n = 2.0, 5, 40
    rel = alibi(rng.integers(0, k, n), eps, k, rng)
    model_probs = rng.dirichlet(
        np.ones(k), size=n
    )  # the model's current prediction = the prior
    lam = 2.0 / eps
    ref = _brute_force_posterior(
        rel.details["noisy"], model_probs, lambda v: laplace.pdf(v, scale=lam)
    )
    assert_allclose(
        alibi_posterior(rel.details["noisy"], eps, prior=model_probs), ref, rtol=1e-10
    )
    # the prior matters: the uniform-prior posterior differs
    assert not np.allclose(alibi_posterior(rel.details["noisy"], eps), ref, atol=1e-3)


def test_agibi_iterative_step_is_bayes_with_the_model_prior():
    rng = np.random.default_rng(1)
    sigma, k, n = 0.9, 4, 30
    noisy = np.eye(k)[rng.integers(0, k, n)] + rng.normal(0, sigma, (n, k))
    prior = rng.dirichlet(np.ones(k), size=n)
    ref = _brute_force_posterior(noisy, prior, lambda v: norm.pdf(v, scale=sigma))
    assert_allclose(agibi_posterior(noisy, sigma, prior=prior), ref, rtol=1e-10)


def test_training_loop_refreshes_the_prior_with_the_current_model_every_epoch():
    # lr = 0: the network never moves, so the prior handed to soft_label_fn at every epoch
    # must equal the model's predictions on the training points.
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 5)).astype(np.float32)
    seen = []

    def soft_label_fn(probs):
        seen.append(probs.copy())
        return np.full_like(probs, 1.0 / probs.shape[1])

    (pred,) = mlp_fit_predict_soft(
        x,
        np.zeros(60, int),
        [x],
        3,
        {"hidden": 8, "epochs": 4, "lr": 0.0, "batch_size": 16},
        0,
        soft_label_fn=soft_label_fn,
    )
    assert len(seen) == 4
    for p in seen:
        assert_allclose(p, pred, rtol=1e-5)
    # with learning, the prior changes between epochs (it is refreshed, not computed once)
    seen.clear()
    y = (x[:, 0] > 0).astype(int)
    mlp_fit_predict_soft(x, y, [x], 3, {"hidden": 8, "epochs": 3, "lr": 0.05, "batch_size": 16}, 0,
                         soft_label_fn=lambda p: (seen.append(p.copy()), np.eye(3)[y])[1])  # fmt: skip
    assert np.abs(seen[0] - seen[-1]).max() > 1e-3


@pytest.mark.parametrize(
    "eps,delta", [(1.0, 1e-5), (3.7, 1e-5), (19.0, 1e-5), (2.0, 1e-6)]
)
def test_agibi_sigma_rdp_meets_the_claim_and_is_above_the_analytic_sigma(eps, delta):
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    s_rdp = agibi_sigma(eps, delta, "rdp")
    s_an = agibi_sigma(eps, delta, "analytic")
    orders = [i / 10 for i in range(11, 1000)]

    def rdp_eps(s):
        a = RdpAccountant(orders)
        a.compose(dp_accounting.GaussianDpEvent(s / math.sqrt(2)))
        return a.get_epsilon(delta)

    assert rdp_eps(s_rdp) <= eps * (1 + 1e-9)
    assert rdp_eps(s_rdp * (1 - 1e-6)) > eps  # the smallest such σ
    # classic conversion of the same curve (the authors' opacus), closed form over the orders
    a = np.array(orders)
    classic = np.min(a / s_rdp**2 + np.log(1 / delta) / (a - 1))
    assert classic >= eps - 1e-9
    assert s_an < s_rdp  # the exact profile needs less noise than RDP
    with pytest.raises(ValueError, match="calibration"):
        agibi_sigma(eps, delta, "moments")


def test_noise_correction_inverts_the_rr_channel():
    rng = np.random.default_rng(3)
    for k, eps in ((2, 1.0), (5, 2.0)):
        t = rr_transition_matrix(eps, k)
        assert_allclose(t.sum(axis=1), 1.0)
        assert t[0, 0] == pytest.approx(rr_keep_probability(eps, k))
        p = rng.dirichlet(np.ones(k) * 3, size=50)
        assert_allclose(rr_noise_correction(p @ t, eps, k), p, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="noisy_label_probs"):
        rr_noise_correction(np.ones((3, 4)) / 4, 1.0, 3)


def test_lp_1st_noise_correction_release():
    # The release is k-ary RR: keep-rate q (binomial test), flips uniform; the correction of the
    # empirical noisy-label frequencies recovers the true class frequencies.
    rng = np.random.default_rng(4)
    k, eps, n = 3, 1.0, 60_000
    y = rng.choice(k, size=n, p=[0.6, 0.3, 0.1])
    rel = lp_1st_noise_correction(y, eps, k, rng)
    assert rel.mechanism == "lp_1st_nc" and rel.epsilon == eps and rel.delta == 0.0
    q = rr_keep_probability(eps, k)
    kept = int(np.sum(rel.labels == y))
    assert binomtest(kept, n, q).pvalue > 1e-3
    assert_allclose(rel.details["transition"], rr_transition_matrix(eps, k))
    freq = np.bincount(rel.labels, minlength=k) / n
    corrected = rr_noise_correction(freq[None, :], eps, k)[0]
    assert_allclose(corrected, [0.6, 0.3, 0.1], atol=0.015)
    assert not np.allclose(freq, [0.6, 0.3, 0.1], atol=0.05)  # uncorrected it is off


def test_fixmatch_student_learns_uses_pseudo_labels_and_is_seeded():
    rng = np.random.default_rng(5)
    centers = rng.normal(0, 3, (3, 6))
    yu = rng.integers(0, 3, 900)
    xu = (centers[yu] + rng.normal(0, 1, (900, 6))).astype(np.float32)
    lab = rng.choice(900, 30, replace=False)
    kw = dict(
        weak_augment=feature_noise_augment(0.05),
        strong_augment=feature_noise_augment(0.3, 0.2),
        hidden=16,
        steps=150,
        batch_size=16,
        mu=3,
        seed=7,
    )
    (p1,), hist = fixmatch_fit_predict(
        xu[lab], yu[lab], xu, [xu], 3, return_history=True, **kw
    )
    (p2,) = fixmatch_fit_predict(xu[lab], yu[lab], xu, [xu], 3, **kw)
    assert_allclose(p1, p2)  # same seed, same result
    assert np.mean(p1.argmax(1) == yu) > 0.9
    assert max(hist["mask_rate"]) > 0.1  # confident pseudo-labels were used
    with pytest.raises(ValueError, match="y_labeled"):
        fixmatch_fit_predict(xu[:5], np.array([0, 1, 2, 3, 0]), xu, [xu], 3, **kw)


def test_affine_maps_augment_identity_and_flip():
    import torch

    d = 4
    flip = np.eye(d)[::-1].astype(np.float32)
    aug = affine_maps_augment([(flip, np.ones(d, np.float32))])
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4)
    out = aug(x, torch.Generator().manual_seed(0)).numpy()
    assert_allclose(out, x.numpy()[:, ::-1] + 1)
    with pytest.raises(ValueError, match="maps"):
        affine_maps_augment([])


def test_pca_augment_maps_flip_and_shift_the_images():
    # Full-rank PCA of 4x4 images: the affine maps in feature space must equal projecting the
    # flipped / shifted images (reconstruction is exact at full rank).
    from sklearn.decomposition import PCA

    from ppaudit.experiments.labeldp.data import _pca_augment_maps

    rng = np.random.default_rng(6)
    imgs = rng.random((200, 4, 4))
    flat = imgs.reshape(200, -1)
    pca = PCA(n_components=16).fit(flat)
    scale = 2.0
    feats = pca.transform(flat) / scale
    maps = _pca_augment_maps(pca, scale, side=4, shifts=((0, 1),))
    assert len(maps) == 3
    identity, flip, shift = maps
    assert_allclose(feats @ identity[0] + identity[1], feats, atol=1e-6)
    flipped = pca.transform(imgs[..., ::-1].reshape(200, -1)) / scale
    assert_allclose(feats @ flip[0] + flip[1], flipped, atol=1e-4)
    shifted_imgs = np.zeros_like(imgs)
    shifted_imgs[..., 1:] = imgs[..., :-1]
    assert_allclose(feats @ shift[0] + shift[1], pca.transform(shifted_imgs.reshape(200, -1)) / scale, atol=1e-4)
    # Digits (flip=False): the identity, then the shifts only — the weak augmentation (first two
    # maps) shifts instead of mirroring.
    no_flip = _pca_augment_maps(pca, scale, side=4, shifts=((0, 1),), flip=False)
    assert len(no_flip) == 2
    assert_allclose(no_flip[1][0], shift[0])
    assert_allclose(no_flip[1][1], shift[1])


def test_image_stand_in_loads_mnist_or_fashion_mnist_and_names_a_bad_choice(monkeypatch):
    """``images``: MNIST digits (the default's) or Fashion-MNIST, the FixMatch maps without / with the flip;
    LP-1ST's out-of-domain prior: on MNIST the prior of a model trained on other digits (only when
    lp_1st_ood is among the algorithms), on Fashion-MNIST a view of the reference half."""
    import ppaudit.experiments.labeldp.data as D
    from ppaudit.data import load_dataset
    from ppaudit.experiments.labeldp.data import load_labeldp_dataset

    settings = {"train_size": 200, "test_size": 50, "pca_dim": 8}
    loaded = {}
    for images, maps in (("mnist", 5), ("fashion-mnist", 6)):
        data = loaded[images] = load_labeldp_dataset("image", dict(settings, images=images), np.random.default_rng(0))
        assert data.x_target.shape == (100, 8) and len(data.augment_maps) == maps and data.y_ref_ood is None
        assert data.ood_prior is None and (data.x_ref_ood is None) == (images == "mnist")
        if images == "fashion-mnist":
            assert data.x_ref_ood.shape == (100, 8)
        ytr = load_dataset(images, source="packaged")[1]
        assert set(np.unique(data.y_ref)) <= set(np.unique(ytr))
    monkeypatch.setattr(D, "OOD_PRIOR_PER_GLYPH", 2)
    with_ood = load_labeldp_dataset("image", dict(settings, images="mnist", algorithms=["lp_1st", "lp_1st_ood"]), np.random.default_rng(0))
    assert with_ood.ood_prior.shape == (100, 10) and np.allclose(with_ood.ood_prior.sum(axis=1), 1.0)
    # the prior is drawn after the split: the halves and features are those of the load without it
    assert with_ood.x_target.tobytes() == loaded["mnist"].x_target.tobytes()
    with pytest.raises(ValueError, match="unknown packaged images 'cifar'"):
        load_labeldp_dataset("image", dict(settings, images="cifar"), np.random.default_rng(0))


def test_lp_1st_ood_takes_the_dataset_s_out_of_domain_prior():
    """With ``ood_prior`` set (MNIST), LP-1ST's out-of-domain release is RRWithPrior on it: a
    one-hot prior on the true labels gives k* = 1 and every label right, at any ε; the Malek
    game's prefix of the target half keeps the matching rows. Without a prior or a view: an error."""
    from dataclasses import replace

    from dataset_fixtures import toy_labeldp_data
    from ppaudit.experiments.labeldp.memorization import game_data
    from ppaudit.experiments.labeldp.release import release_labels

    data = toy_labeldp_data()
    onehot = np.eye(data.num_classes)[data.y_target]
    _, labels, eps, info = release_labels(replace(data, ood_prior=onehot), "lp_1st_ood", 1.0, {"model": {}}, np.random.default_rng(0))
    assert np.array_equal(labels, data.y_target) and eps == 1.0 and info["mean_k_star"] == 1.0
    assert np.array_equal(game_data(replace(data, ood_prior=onehot), 40).ood_prior, onehot[:40])
    with pytest.raises(ValueError, match="lp_1st_ood needs an out-of-domain view or prior"):
        release_labels(data, "lp_1st_ood", 1.0, {"model": {}}, np.random.default_rng(0))


def test_optdigits_in_mnist_frame_are_digits_an_mnist_prior_model_recognises():
    """LP-1ST's out-of-domain set for MNIST: UCI's 1,797 optical digits (scikit-learn) in MNIST's
    frame — centred by mass in 28×28, in [0, 1], every digit — and a model fitted on them alone
    labels MNIST digits far above chance (a useful out-of-domain prior, as the paper's)."""
    from scipy.ndimage import center_of_mass
    from sklearn.linear_model import LogisticRegression

    from ppaudit.data import load_dataset
    from ppaudit.experiments.labeldp.data import optdigits_in_mnist_frame

    x, y = optdigits_in_mnist_frame()
    assert x.shape == (1797, 28, 28) and x.dtype == np.float32 and y.shape == (1797,)
    assert set(np.unique(y)) == set(range(10)) and x.min() >= 0.0 and x.max() <= 1.0
    assert_allclose(center_of_mass(x[0]), (14.0, 14.0), atol=0.5)
    xm, ym = load_dataset("mnist", source="packaged")[2:]
    clf = LogisticRegression(C=1.0, max_iter=500).fit(x.reshape(len(x), -1), y)
    acc = float(np.mean(clf.predict(xm[:2000].reshape(2000, -1)) == ym[:2000]))
    assert acc > 0.4, acc


def test_malek_game_data_is_a_prefix_of_the_target_half():
    from dataset_fixtures import toy_labeldp_data
    from ppaudit.experiments.labeldp.memorization import game_data

    data = toy_labeldp_data()
    assert game_data(data, None) is data
    sub = game_data(data, 40)
    assert_allclose(sub.x_target, data.x_target[:40])
    assert np.array_equal(sub.y_target, data.y_target[:40])
    assert sub.x_test is data.x_test and len(data.y_target) == 150
    with pytest.raises(ValueError, match="labeldp.malek.train_size must lie in"):
        game_data(data, 151)
