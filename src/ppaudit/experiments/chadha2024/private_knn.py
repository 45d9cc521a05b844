"""Private-kNN stage (Chadha et al. 2024, §6, Fig. 5; App. D.3, App. E.4 Figs. 25–31): inputs and constants.

The stage is split by concept; every public name stays importable from this module:

* this module — datasets, encoders, the paper's settings and :func:`load_knn_inputs`;
* :mod:`ppaudit.experiments.chadha2024.private_knn_audit` — per-query audits (counts, Rao–Blackwellised
  bounds, the paper's procedure), composition and summaries;
* :mod:`ppaudit.experiments.chadha2024.private_knn_findings` — the paper's claims (§6) checked on the
  numbers, and the AdvQ candidate selection.

Pipeline (one dataset):

1. :func:`load_knn_inputs` — a seeded subset of the raw images or sentences;
   :func:`ppaudit.models.feature_cache.extract_features` turns them into embeddings.
2. :func:`ppaudit.adversaries.private_knn.knn_setup` — the natural queries, their exact neighbours
   and vote tables ``P_q``, ``P^k_q``.
3. :func:`ppaudit.adversaries.private_knn.craft_knn` — the five adversaries' canaries and per-query ``ν``.
4. :func:`audit_knn_crafted` — per (candidate, asked query) an audit of the noisy argmax on
   ``H_S`` and ``H_S'`` of :class:`ppaudit.mechanisms.private_knn.KnnVoteModel`
   (:func:`audit_knn_model`; column ``audit_method``): exact counts of ``T`` runs from the
   certified enumeration when it fits (``exact-enumerated``), else — Fashion-MNIST's ten
   classes — Rao–Blackwellised Monte Carlo with empirical Bernstein bounds
   (``rao-blackwellised``, :func:`ppaudit.audit.rao_blackwell_two_cut`) or ``T`` simulated
   runs (``sampled``, ``nonenumerable="sample"``); then per order

   * ``two_cut_cp`` — the sound 2-cut lower bound (procedure: ours; Clopper–Pearson on
     counts as in §4.2, App. B, or the empirical Bernstein bound on Rao–Blackwellised draws);
   * ``two_cut_paper`` — the paper's procedure: the same where the law was enumerated or
     sampled; where the law is a Monte Carlo estimate, ``T`` counts drawn from it as if it
     were exact (its estimation error ignored — not a valid bound);
   * ``k_cut`` — the k-cut lower bound with simultaneous intervals (App. B);
   * ``exact`` — Rényi divergence between the model's two output distributions: certified
     enumeration (``exact_lo ≤ true ≤ exact_hi``,
     :func:`ppaudit.mechanisms.private_knn.enumerate_knn_output_distributions`) or Monte Carlo over
     ``Mult(k, P_q)`` with the Bernoulli and the displaced vote summed out exactly
     (:func:`ppaudit.mechanisms.private_knn.knn_output_distributions`; standard error ``exact_se``);
   * ``data_independent`` — the Poisson-subsampled Gaussian RDP per query
     (:func:`ppaudit.accounting.private_knn_rdp`, ``dp_accounting``), the paper's only
     theory baseline for Private-kNN (App. D.3).

   Queries whose poison inclusion probability is below ``min_nu`` are not simulated: the
   output laws differ by at most ``ν`` in total variation, far below what ``T`` trials
   resolve, and their audit lower bound is reported as 0 (always valid); ``exact`` and
   ``data_independent`` are still computed. Identical models (``ν = 0`` or a displaced
   vote that always has the poison's label) are 0 throughout except ``data_independent``.
5. Composition over the distinguisher's queries and the worst/average case over candidates
   reuse the PATE/CaPC stage: :func:`ppaudit.experiments.chadha2024.private_prediction.compose_candidates`
   and :func:`~ppaudit.experiments.chadha2024.private_prediction.summarize_candidates` (§4.2, §5.4).
   AdvQ candidates ask one query ``n_Q`` times; Pois-NatQ asks the ``n_Q`` natural queries
   once each. ε at ``δ = 1e-6`` via Thm 1 — "the RDP audit on the ε scale", an illustration
   for the lower bounds, as the paper says (§5.4), not a valid ε lower bound; beside it
   ``valid_eps_lower``: a valid ε lower bound at δ of the candidate's transcript — the larger
   of the best query's binomial transcript bound (its repeated answers) and the composition of
   every answer's event bounds over all queries (``valid_eps_lower_composed``,
   :func:`ppaudit.audit.composed_event_epsilon`; what makes Pois-NatQ's bound use all of its
   natural queries) and, opt-in (``transcript_event``; config chadha2024.knn.transcript_event_audit),
   for Rao–Blackwellised Pois-NatQ candidates, the whole transcript audited
   at once with the pairing kept (``valid_eps_lower_transcript``,
   :func:`ppaudit.audit.rao_blackwell_transcript_event`: off zero where every per-answer shift is
   smaller than its interval). Private-kNN draws a fresh
   subsample per answer, so repeated answers are independent and the per-query composition is
   the transcript's (unlike PATE's shared histogram, issue 13 §1).
6. :func:`knn_findings` — the paper's three claims (§6) checked on the numbers.

Confidence (issue 13 §3, issue 27 §1): by default every audit of one adversary runs at
``1 − (1 − confidence)/N`` with ``N`` = every audit that is run (:func:`knn_audit_count`, the
same counter as PATE / CaPC: per (candidate, query) the 2-cut, the k-cut and the per-query ε
bound, :data:`KNN_COUNT_BOUNDS`, plus each whole-transcript audit), so that all of them hold at
once; summary.csv's ``simultaneous_confidence`` (:func:`knn_audit_provenance`) is that union
bound, over ``num_audits`` audits, and Fig. 5's footer prints it.

Randomness: each (candidate, query) audit draws from
``job_generator(seed, experiment, "audit", key, query)``; the same seed gives the same table
whatever subset of candidates a job runs.
"""

from __future__ import annotations

import os

import numpy as np

from ..._validation import check_positive_int, check_probability
from ...data.text import load_rotten_tomatoes
from ...rng import job_generator

__all__ = [
    "KNN_RDP_COLUMNS",
    "KNN_DATASETS",
    "KNN_MODALITY",
    "KNN_ENCODER_MODALITY",
    "KNN_PACKAGED_DATASETS",
    "PAPER_KNN_SETTINGS",
    "load_knn_inputs",
    "KnnModelSource",
    "KNN_AUDIT_META",
    "audit_knn_model",
    "audit_knn_crafted",
    "compose_knn",
    "summarize_knn",
    "run_knn_audits",
    "knn_audit_provenance",
    "knn_audit_count",
    "knn_candidate_audits",
    "KNN_COUNT_BOUNDS",
    "knn_findings",
    "select_knn_candidates",
    "knn_findings_table",
    "TEXT_DOWNLOAD_DATASETS",
]

from .private_knn_names import KNN_DATASETS, KNN_ENCODER_MODALITY, KNN_MODALITY, KNN_PACKAGED_DATASETS  # noqa: E402 (re-exported)

#: App. D.3 hyper-parameters (k, γ, σ per modality, n_Q).
PAPER_KNN_SETTINGS = {"k": 200, "gamma": 0.2, "sigma": {"image": 30.0, "text": 20.0}, "num_queries": 1000, "delta": 1e-6}


# ----------------------------------------------------------------------------- data


def _subset(n: int, size: int | None, rng: np.random.Generator, name: str) -> np.ndarray:
    if size is None:
        return np.arange(n)
    s = check_positive_int(size, name)
    if s > n:
        raise ValueError(f"{name} = {s} exceeds the {n} available points")
    return np.sort(rng.choice(n, size=s, replace=False))


def load_knn_inputs(
    dataset: str,
    num_train: int | None,
    num_test: int | None,
    seed: int,
    source: str = "packaged",
    root: str | os.PathLike | None = None,
    test_fraction: float = 0.2,
):
    """Raw inputs of the kNN audit: a seeded random subset of the training and test splits.

    Images come from :func:`ppaudit.data.load_dataset` (float ``[0, 1]``, ``(n, C, H, W)``);
    Rotten Tomatoes (:func:`ppaudit.data.load_rotten_tomatoes`, duplicates dropped) is first split into train/test with a
    stratified split of ``test_fraction`` (fixed seed 0), then subsampled like the images.

    Args:
        dataset: a key of :data:`KNN_DATASETS`.
        num_train, num_test: subset sizes (``None``: all).
        seed: subset seed (``job_generator(seed, "knn-subset", dataset)``).
        source, root: passed to :func:`ppaudit.data.load_dataset` for image datasets; ``root``
            is also the download folder of SST-2 / AG News (:func:`ppaudit.data.load_text_dataset`:
            pinned MD5s, atomic, retries; SST-2's test pool is a 5 % hold-out of its training split).
        test_fraction: Rotten Tomatoes test share.

    Returns:
        ``(x_train, y_train, x_test, y_test)``; text as lists of strings.
    """
    if dataset not in KNN_DATASETS:
        raise ValueError(f"dataset must be one of {sorted(KNN_DATASETS)}, got {dataset!r}")
    rng = job_generator(seed, "knn-subset", dataset)
    if dataset == "rotten-tomatoes":
        from sklearn.model_selection import train_test_split

        frac = check_probability(test_fraction, "test_fraction")
        texts, labels = load_rotten_tomatoes("full", deduplicate=True)
        idx_tr, idx_te = train_test_split(np.arange(len(texts)), test_size=frac, stratify=labels, random_state=0)
        itr = idx_tr[_subset(idx_tr.size, num_train, rng, "num_train")]
        ite = idx_te[_subset(idx_te.size, num_test, rng, "num_test")]
        return [texts[i] for i in itr], labels[itr], [texts[i] for i in ite], labels[ite]
    if dataset in TEXT_DOWNLOAD_DATASETS:  # paper-scale text (App. D.3): download only
        from ...data import load_text_dataset

        if root is None:
            raise ValueError(f"{dataset} is downloaded: give root= (the download folder)")
        ttr, ytr, tte, yte = load_text_dataset(dataset, root)
        itr = _subset(len(ttr), num_train, rng, "num_train")
        ite = _subset(len(tte), num_test, rng, "num_test")
        return [ttr[i] for i in itr], ytr[itr], [tte[i] for i in ite], yte[ite]
    from ...data import load_dataset

    xtr, ytr, xte, yte = load_dataset(dataset, root, source=source)
    itr = _subset(xtr.shape[0], num_train, rng, "num_train")
    ite = _subset(xte.shape[0], num_test, rng, "num_test")
    return xtr[itr], ytr[itr], xte[ite], yte[ite]


#: Paper-scale text datasets (App. D.3), downloaded with pinned checksums by
#: :func:`ppaudit.data.load_text_dataset` (SST-2 from GLUE, AG News from Zhang et al. 2015).
TEXT_DOWNLOAD_DATASETS = ("sst2", "agnews")


# re-exports of the audit and findings modules (imported last: they use the constants above)
from .private_knn_audit import (  # noqa: E402
    KNN_AUDIT_META,
    KNN_COUNT_BOUNDS,
    KNN_RDP_COLUMNS,
    KnnModelSource,
    audit_knn_crafted,
    audit_knn_model,
    compose_knn,
    knn_audit_count,
    knn_audit_provenance,
    knn_candidate_audits,
    run_knn_audits,
    summarize_knn,
)
from .private_knn_findings import knn_findings, knn_findings_table, select_knn_candidates  # noqa: E402
