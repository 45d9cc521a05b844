"""The torch Monte Carlo backend of :mod:`ppaudit.montecarlo` (issue 17, item 1), tested on the CPU.

``device="torch-cpu"`` runs the same float32 torch code as ``device="cuda"`` on the CPU, so
these tests check the law of the GPU sampler without a GPU: chi-square goodness of fit at
1e6 trials against the exact output law (Chadha et al. 2024, Eq. (4),
:func:`ppaudit.noisy_argmax.class_probabilities`) and, for vote models, against the exact
enumeration :func:`ppaudit.vote_models.enumerate_output_distributions`.
"""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gof import gof_pvalue

from ppaudit.montecarlo import (
    DiscreteHistogramModel,
    model_noisy_argmax_counts,
    noisy_argmax_counts,
    noisy_argmax_counts_pair,
    torch_seed,
)
from ppaudit.noisy_argmax import class_probabilities
from ppaudit.vote_models import (
    capc_vote_model,
    enumerate_output_distributions,
    pate_vote_model,
)

TRIALS = 1_000_000
#: The torch path on the CPU always; on a GPU too where one is present (the GPU session).
DEVICES = ["torch-cpu"] + (["cuda"] if torch.cuda.is_available() else [])
H = np.array([14.0, 12.0, 10.0, 8.0, 6.0])
SIGMA = 2.0


@pytest.mark.parametrize("device", DEVICES)
def test_fixed_histogram_matches_exact_law(device):
    c = noisy_argmax_counts(H, SIGMA, TRIALS, rng=11, device=device)
    assert c.dtype == np.int64 and c.sum() == TRIALS
    assert gof_pvalue(c, class_probabilities(H, SIGMA)) > 1e-4


def test_chi_square_detects_a_planted_bias():
    """The check can fail: the same counts against the law of a histogram moved by 0.3 votes."""
    c = noisy_argmax_counts(H, SIGMA, TRIALS, rng=11, device="torch-cpu")
    assert gof_pvalue(c, class_probabilities(H + np.array([0.3, 0, 0, 0, 0]), SIGMA)) < 1e-6


def test_small_chunks_keep_the_law():
    c = noisy_argmax_counts(H, SIGMA, 300_000, rng=3, device="torch-cpu", chunk_size=777)
    assert c.sum() == 300_000
    assert gof_pvalue(c, class_probabilities(H, SIGMA)) > 1e-4


def test_pair_matches_exact_law_and_streams_are_independent():
    h1 = np.array([13.0, 13.0, 10.0, 8.0, 6.0])
    c0, c1 = noisy_argmax_counts_pair(H, h1, SIGMA, TRIALS, rng=5, device="torch-cpu")
    assert gof_pvalue(c0, class_probabilities(H, SIGMA)) > 1e-4
    assert gof_pvalue(c1, class_probabilities(h1, SIGMA)) > 1e-4
    d0, d1 = noisy_argmax_counts_pair(H, H, SIGMA, 10_000, rng=5, device="torch-cpu")
    assert not np.array_equal(d0, d1)


@pytest.mark.parametrize(
    "model",
    [
        pate_vote_model([0.5, 0.3, 0.2, 0.0, 0.0], [0.1, 0.1, 0.8, 0.0, 0.0], 30),
        capc_vote_model(
            np.array([[0.5, 0.5, 0, 0], [0.2, 0.3, 0.5, 0], [0, 1, 0, 0], [0.2, 0.3, 0.5, 0], [0.1, 0.1, 0.2, 0.6], [0, 0, 0, 1]]),
            [1.0, 0, 0, 0],
        ),
    ],
    ids=["pate", "capc"],
)
@pytest.mark.parametrize("device", DEVICES)
def test_vote_model_on_device_matches_enumerated_law(model, device):
    sigma = 1.5
    enum = enumerate_output_distributions(model, sigma, max_tail_mass=1e-12)
    assert enum is not None and enum.tail_mass < 1e-9
    for which, law in (("S", enum.p), ("S_prime", enum.q)):
        c = model_noisy_argmax_counts(model.sampler(which), model.num_classes, sigma, TRIALS, rng=21, device=device)
        assert c.sum() == TRIALS
        assert gof_pvalue(c, law) > 1e-4, which


def test_vote_model_torch_histograms_have_the_model_moments():
    """The device sampler of the histograms alone: mean and covariance of ``H_S'`` (closed form)."""
    model = pate_vote_model([0.5, 0.3, 0.2, 0.0], [0.0, 0.1, 0.1, 0.8], 40)
    g = torch.Generator().manual_seed(0)
    n = 200_000
    h = model.sample_torch(g, n, "S_prime").double().numpy()
    assert h.shape == (n, 4) and np.all(h.sum(axis=1) == 40) and np.all(h >= 0)
    cov = model.covariance("S_prime")
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(h.mean(axis=0) - model.mean("S_prime")) < 5 * se)
    np.testing.assert_allclose(np.cov(h.T), cov, atol=0.05)


def test_discrete_histogram_model_on_device_matches_its_law():
    dm = DiscreteHistogramModel(np.array([[5, 3, 1], [2, 6, 1], [4, 4, 4]]), np.array([0.5, 0.3, 0.2]))
    c = model_noisy_argmax_counts(dm, 3, 1.0, TRIALS, rng=8, device="torch-cpu")
    assert gof_pvalue(c, dm.output_distribution(1.0)) > 1e-4


def test_sampler_without_torch_twin_is_drawn_by_numpy_and_copied():
    def sampler(rng, n):
        return np.tile(H, (n, 1))

    c = model_noisy_argmax_counts(sampler, 5, SIGMA, 300_000, rng=4, device="torch-cpu")
    assert gof_pvalue(c, class_probabilities(H, SIGMA)) > 1e-4


@pytest.mark.parametrize("device", DEVICES)
def test_same_seed_same_bytes_and_seed_matters(device):
    model = pate_vote_model([0.5, 0.3, 0.2], [0.1, 0.1, 0.8], 25)
    a = model_noisy_argmax_counts(model.sampler("S"), 3, 2.0, 50_000, rng=np.random.SeedSequence(9), device=device, chunk_size=4096)
    b = model_noisy_argmax_counts(model.sampler("S"), 3, 2.0, 50_000, rng=np.random.SeedSequence(9), device=device, chunk_size=4096)
    c = model_noisy_argmax_counts(model.sampler("S"), 3, 2.0, 50_000, rng=np.random.SeedSequence(10), device=device, chunk_size=4096)
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a, c)
    f1 = noisy_argmax_counts(H, SIGMA, 50_000, rng=2, device=device)
    f2 = noisy_argmax_counts(H, SIGMA, 50_000, rng=2, device=device)
    assert f1.tobytes() == f2.tobytes()


def test_torch_seed_is_deterministic_in_the_seed_sequence():
    assert torch_seed(np.random.SeedSequence(1)) == torch_seed(np.random.SeedSequence(1))
    assert torch_seed(np.random.SeedSequence(1)) != torch_seed(np.random.SeedSequence(2))
    assert 0 <= torch_seed(3) < 2**63


def test_exact_mode_is_invariant_to_device_and_chunking():
    a = noisy_argmax_counts(H, SIGMA, 10**8, rng=1, mode="exact")
    b = noisy_argmax_counts(H, SIGMA, 10**8, rng=1, mode="exact", device="torch-cpu", chunk_size=3)
    assert a.tobytes() == b.tobytes()


def test_numpy_path_is_unchanged():
    """``device="cpu"`` (the default) keeps the numpy sampler byte for byte.

    Reference counts: produced by the numpy-only ``ppaudit.montecarlo`` of the commit before
    the torch backend (``git show HEAD:src/ppaudit/montecarlo.py``, 2026-11-24), same calls.
    The vote-model line was re-pinned in issue 29: its histograms now come from the
    inverse-CDF tables (:mod:`ppaudit.vote_models.tables`: this ``Mult(49, P)`` has 1,275
    histograms, so it is one block table) instead of ``Generator.multinomial``, another random
    stream of the same law (the law is checked by
    the chi-square tests here and in ``tests/unit/vote_models/test_tables.py``); the noise
    and argmax code it runs through is the fixed-histogram code pinned above.
    """
    assert noisy_argmax_counts([14, 12, 10, 8, 6], 2.0, 100_000, rng=7).tolist() == [72530, 22166, 4688, 580, 36]
    assert noisy_argmax_counts([14, 12, 10, 8, 6], 2.0, 100_000, rng=7, device="cpu").tolist() == [72530, 22166, 4688, 580, 36]
    c0, c1 = noisy_argmax_counts_pair([14, 12, 10, 8, 6], [13, 13, 10, 8, 6], 2.0, 100_000, rng=7, chunk_size=999, device="cpu")
    assert c0.tolist() == [72640, 22141, 4575, 601, 43] and c1.tolist() == [46964, 46849, 5473, 656, 58]
    model = pate_vote_model([0.5, 0.3, 0.2, 0, 0], [0.1, 0.1, 0.8, 0, 0], 50)
    assert model_noisy_argmax_counts(model.sampler("S_prime"), 5, 2.0, 100_000, rng=7).tolist() == [91855, 7303, 842, 0, 0]


@pytest.mark.parametrize("device", ["gpu", "tpu:0", "cuda:x", 7, "meta"])
def test_bad_device_raises(device):
    with pytest.raises(ValueError, match="device"):
        noisy_argmax_counts(H, SIGMA, 10, rng=1, device=device)
    with pytest.raises(ValueError, match="device"):
        model_noisy_argmax_counts(lambda r, n: np.tile(H, (n, 1)), 5, SIGMA, 10, rng=1, device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_gpu_raises():
    with pytest.raises(ValueError, match="no CUDA device"):
        noisy_argmax_counts(H, SIGMA, 10, rng=1, device="cuda")


def test_importing_montecarlo_does_not_import_torch():
    code = "import sys, ppaudit.montecarlo; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_device_scope_sets_the_default_and_explicit_device_wins():
    from ppaudit.montecarlo import current_device, device_scope

    ref_torch = noisy_argmax_counts(H, SIGMA, 20_000, rng=6, device="torch-cpu")
    ref_numpy = noisy_argmax_counts(H, SIGMA, 20_000, rng=6)
    assert not np.array_equal(ref_torch, ref_numpy)  # the two paths are different streams
    with device_scope("torch-cpu"):
        assert current_device() == "torch-cpu"
        assert noisy_argmax_counts(H, SIGMA, 20_000, rng=6).tobytes() == ref_torch.tobytes()
        assert noisy_argmax_counts(H, SIGMA, 20_000, rng=6, device="cpu").tobytes() == ref_numpy.tobytes()
    assert current_device() == "cpu"
    assert noisy_argmax_counts(H, SIGMA, 20_000, rng=6).tobytes() == ref_numpy.tobytes()
    with pytest.raises(ValueError, match="device"), device_scope("tpu"):
        pass
    assert current_device() == "cpu"
