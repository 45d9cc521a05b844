"""PATE for label DP: GNMax / Confident-GNMax aggregation and the teacher–student release
(Papernot et al. 2017/2018; Malek et al. 2021, §4 and App. A).

Teachers fitted on disjoint labelled subsets vote on query points, the votes are aggregated
by GNMax (optionally Confident-GNMax with a noisy threshold), and the privacy cost of the
answered queries is the data-dependent RDP of :func:`ppaudit.accounting.gnmax_rdp_data_dependent`,
converted with :func:`ppaudit.accounting.rdp_to_dp`. A student with a pluggable model is
fitted on the answered queries; PATE-FM's FixMatch student (semi-supervised, with
unlabelled data) is :func:`ppaudit.mechanisms.fixmatch.fixmatch_fit_predict`, wired in by
:func:`ppaudit.experiments.labeldp.release.fit_released`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import check_positive_int, check_probability, check_sigma
from ...accounting import (
    gnmax_rdp_data_dependent,
    gnmax_rdp_data_independent,
    rdp_to_dp,
)
from .release import (
    FitPredictProba,
    LabelRelease,
    _check_labels,
    _check_num_classes,
    _check_rng,
)

__all__ = ["DEFAULT_ORDERS", "gnmax_aggregate", "pate_label_dp"]

#: Rényi orders for the PATE accounting.
DEFAULT_ORDERS = np.unique(np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11.0, 101.0), np.geomspace(100.0, 1000.0, 21)]))


def gnmax_aggregate(votes, sigma, rng: np.random.Generator, threshold: float | None = None, sigma_threshold: float | None = None):
    """GNMax and Confident-GNMax aggregation (Papernot et al. 2018, §4.1 and Alg. 1).

    GNMax answers ``argmax_c (n_c + N(0, σ²))``. With a ``threshold`` T, a query is answered
    only if ``max_c n_c + N(0, σ₁²) ≥ T`` (Confident-GNMax).

    Args:
        votes: ``(Q, C)`` teacher vote histograms.
        sigma: σ of GNMax (σ₂ in Malek et al. 2021, Table 3).
        rng: numpy Generator.
        threshold: T, or ``None`` to answer every query.
        sigma_threshold: σ₁ of the threshold check (required with ``threshold``).

    Returns:
        ``(answers, answered)``: noisy argmax per query (−1 where not answered) and the mask.
    """
    s = check_sigma(sigma)
    h = np.asarray(votes, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] < 2 or np.any(h < 0):
        raise ValueError(f"votes must be non-negative counts of shape (Q, C), got shape {h.shape}")
    gen = _check_rng(rng)
    if threshold is None:
        answered = np.ones(h.shape[0], dtype=bool)
    else:
        s1 = check_sigma(sigma_threshold, "sigma_threshold")
        answered = h.max(axis=1) + gen.normal(0.0, s1, size=h.shape[0]) >= float(threshold)
    noisy = h + gen.normal(0.0, s, size=h.shape)
    answers = np.where(answered, np.argmax(noisy, axis=1), -1)
    return answers, answered


def pate_label_dp(
    features,
    labels,
    query_features,
    num_classes,
    num_teachers: int,
    sigma: float,
    teacher_fit_predict_proba: FitPredictProba,
    rng: np.random.Generator,
    delta: float = 1e-5,
    orders=DEFAULT_ORDERS,
    threshold: float | None = None,
    sigma_threshold: float | None = None,
    student_fit_predict_proba: FitPredictProba | None = None,
    predict_features=None,
    teachers_fit_predict_proba=None,
) -> LabelRelease:
    """PATE for label DP (Malek et al. 2021, §4; Papernot et al. 2018) with a plain student.

    1. Split the labelled examples uniformly at random into ``num_teachers`` disjoint parts.
    2. Teacher t is ``teacher_fit_predict_proba`` on part t; its vote on each query is the
       argmax of its probabilities.
    3. Aggregate the vote histograms with (Confident-)GNMax (:func:`gnmax_aggregate`).
    4. Privacy: changing one label changes one teacher's vote, i.e. two counts by one, on
       every query. Claimed ε (``epsilon``): the data-dependent RDP of GNMax at each answered
       query's histogram (:func:`ppaudit.accounting.gnmax_rdp_data_dependent`), summed, plus
       — with a threshold — the data-independent RDP ``α/(2σ₁²)`` of every threshold check
       (a Gaussian mechanism on the max count, sensitivity 1), converted by
       :func:`ppaudit.accounting.rdp_to_dp` (Balle et al. 2020). The data-independent ε
       (``α/σ²`` per answered query) is reported in ``details``. As in the papers, the
       data-dependent ε is itself a function of the data and is reported without the
       smooth-sensitivity release step.
    5. If ``student_fit_predict_proba`` is given, fit it on the answered queries and their
       noisy labels and predict ``predict_features`` (default: the queries). This is the
       plain supervised PATE student (PATE-FM's FixMatch student needs the unlabelled
       data too: :mod:`ppaudit.mechanisms.fixmatch`).

    Args:
        features: ``(n, d)`` labelled features (the private labels' examples).
        labels: ``(n,)`` private labels.
        query_features: ``(Q, d)`` public points to label.
        num_classes: C.
        num_teachers: number of teachers (≤ n).
        sigma: GNMax noise σ, or a callable ``votes -> σ`` applied to the ``(Q, C)`` vote
            histograms before aggregation (e.g. :func:`ppaudit.experiments.labeldp.release.pate_sigma_for_data_dependent_epsilon`,
            the paper's calibration to a data-dependent ε; a σ chosen from the private votes
            is not covered by a DP guarantee by itself). The σ used is ``details["sigma"]``.
        teacher_fit_predict_proba: model of the teachers.
        rng: numpy Generator.
        delta: δ of the claimed guarantee.
        orders: Rényi orders for the accounting.
        threshold, sigma_threshold: Confident-GNMax parameters (T, σ₁), or ``None``.
        student_fit_predict_proba: model of the student, or ``None``.
        predict_features: points on which the student predicts (default ``query_features``).
        teachers_fit_predict_proba: optional block form of the teachers' model,
            ``fn(list of x parts, list of y parts, query_features) -> list of (Q, C)`` probabilities,
            one per part in teacher order (e.g. stacked MLPs trained at once); used instead of
            calling ``teacher_fit_predict_proba`` once per teacher.

    Returns:
        :class:`LabelRelease` with ``labels`` the answers (−1 where unanswered), ``epsilon``
        the data-dependent ε, ``delta``, and ``details`` holding ``votes``, ``teacher_votes``
        (``(num_teachers, Q)``: each teacher's vote, the class its model ranks first), ``answered``,
        ``teacher_assignment``, ``sigma``, ``epsilon_data_independent``, ``rdp``, ``orders`` and
        ``student_proba``.
    """
    k = _check_num_classes(num_classes)
    y = _check_labels(labels, k)
    x = np.asarray(features)
    xq = np.asarray(query_features)
    if x.shape[0] != y.size:
        raise ValueError(f"features must have {y.size} rows (one per label), got {x.shape[0]}")
    t = check_positive_int(num_teachers, "num_teachers")
    if t > y.size:
        raise ValueError(f"num_teachers must be <= the number of labelled examples {y.size}, got {num_teachers}")
    s = None if callable(sigma) else check_sigma(sigma)
    d = check_probability(delta, "delta")
    gen = _check_rng(rng)
    if threshold is not None and sigma_threshold is None:
        raise ValueError("threshold needs sigma_threshold (the noise of the threshold check), got None")
    assignment = gen.permutation(y.size) % t
    votes = np.zeros((xq.shape[0], k), dtype=np.int64)
    parts = [np.flatnonzero(assignment == teacher) for teacher in range(t)]
    if teachers_fit_predict_proba is not None:
        probas = list(teachers_fit_predict_proba([x[p] for p in parts], [y[p] for p in parts], xq))
        if len(probas) != t:
            raise ValueError(f"teachers_fit_predict_proba must return one array per teacher ({t}), got {len(probas)}")
    else:
        probas = (teacher_fit_predict_proba(x[p], y[p], xq) for p in parts)
    teacher_votes = np.zeros((t, xq.shape[0]), dtype=np.int64)
    for i, proba in enumerate(probas):
        proba = np.asarray(proba)
        if proba.shape != (xq.shape[0], k):
            raise ValueError(f"teacher_fit_predict_proba must return shape ({xq.shape[0]}, {k}), got {proba.shape}")
        teacher_votes[i] = np.argmax(proba, axis=1)
        votes[np.arange(xq.shape[0]), teacher_votes[i]] += 1
    if s is None:
        s = check_sigma(sigma(votes))
    answers, answered = gnmax_aggregate(votes, s, gen, threshold, sigma_threshold)
    a = np.asarray(orders, dtype=np.float64)
    rdp = np.zeros(a.size)
    if np.any(answered):
        rdp += gnmax_rdp_data_dependent(votes[answered], s, a).sum(axis=0)
    rdp_di = gnmax_rdp_data_independent(s, a) * int(answered.sum())
    if threshold is not None:
        check = a / (2.0 * float(sigma_threshold) ** 2) * votes.shape[0]
        rdp = rdp + check
        rdp_di = rdp_di + check
    eps = float(rdp_to_dp(rdp, a, d))
    eps_di = float(rdp_to_dp(rdp_di, a, d))
    student = None
    if student_fit_predict_proba is not None:
        if not np.any(answered):
            raise ValueError("no query was answered; the student has no training data")
        xp = xq if predict_features is None else np.asarray(predict_features)
        student = np.asarray(student_fit_predict_proba(xq[answered], answers[answered], xp))
        if student.shape != (xp.shape[0], k):
            raise ValueError(f"student_fit_predict_proba must return shape ({xp.shape[0]}, {k}), got {student.shape}")
    details = {
        "votes": votes,
        "teacher_votes": teacher_votes,
        "answered": answered,
        "teacher_assignment": assignment,
        "sigma": s,
        "epsilon_data_independent": eps_di,
        "rdp": rdp,
        "orders": a,
        "student_proba": student,
    }
    return LabelRelease("pate", eps, d, answers, details=details)
