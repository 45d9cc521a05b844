"""Label release by a label-DP mechanism and the target model fitted on it (observational paper §6.2; Malek et al. 2021, App. A).

:func:`release_labels` runs one mechanism on the target half of a
:class:`~ppaudit.experiments.labeldp_data.LabelDPData`; :func:`fit_released` fits the target
model on the release (with the mechanism's own training: ALIBI's iterative prior, PATE-FM's
FixMatch student, LP-1ST's noise correction) and :func:`train_target_model` does both and
predicts the canaries and the test set. The models themselves are
:func:`ppaudit.models.soft_label.fit_predict_soft`.

Mechanisms (``algo``): ``lp_1st`` (RRWithPrior, uniform prior = plain RR), ``lp_1st_nc``
(LP-1ST with noise correction: the same RR release, the trained model's predictions mapped
back through the inverse RR channel, :func:`ppaudit.mechanisms.labeldp.rr_noise_correction`),
``lp_1st_prior`` (in-domain prior: a model fitted on ``prior_size`` labelled points of the
reference half), ``lp_1st_ood`` (out-of-domain prior — MNIST: the prior of a LeNet-5 trained on
printed and optical digits only, ``LabelDPData.ood_prior``; Fashion-MNIST and CIFAR-10: a model
fitted on ``prior_size`` left-right-flipped, noised images of the reference half — image data only), ``lp_2st``, ``alibi`` / ``agibi``
(with ``alibi_prior: iterative`` — the ALIBI authors' default — the soft labels are
recomputed at the start of every epoch with the model's current predictions as the prior;
``uniform``: one uniform-prior posterior; AGIBI's σ by ``agibi_calibration: rdp | analytic``),
``pate`` (PATE on ``pate_queries`` public feature vectors of the target half, σ calibrated by
``pate_calibration``: ``data_dependent`` — the paper's, Malek et al. 2021 after Papernot et
al. 2018: the data-dependent ε of the teachers' votes equals the requested ε, which is not a
DP guarantee by itself (:func:`pate_sigma_for_data_dependent_epsilon`) — or
``data_independent`` — ours, sound: the data-independent ε of GNMax equals it; the
claimed ε is the chosen one, the data-independent ε of the same release goes beside it
(``epsilon_data_independent``); the student is PATE-FM's
FixMatch student, :mod:`ppaudit.mechanisms.fixmatch`, on the MLP datasets when
``pate_student: fixmatch``, with every target-half feature vector as unlabelled data, and a
plain supervised student otherwise — CatBoost on the tabular stand-in; the teachers' model is
``model`` updated by ``teacher_model``, so that teachers of a few dozen points can be fitted
to them while the student keeps its own schedule). ε = ∞ means the true labels (no noise)
for every mechanism but PATE, whose ε = ∞ is the noise-free teacher plurality.
:func:`pate_label_quality` measures what the student learns from (ours: the teachers' and the
released answers' accuracy) and :func:`pate_label_reach` how far a point's own label reaches
the student (the channel the observational audit measures), which paper_comparison quotes
beside a row far from the paper. ``pate_student_smoothing`` (a public constant) label-smooths
the plain student's targets (:func:`smoothed_targets`, post-processing of the answers).
"""

from __future__ import annotations

import math

import numpy as np

from ...models.soft_label import fit_predict_soft
from .data import LabelDPData

__all__ = ["ALGORITHMS", "fit_released", "log_loss", "parse_epsilon", "pate_label_quality", "pate_label_reach", "smoothed_targets", "pate_epsilon_data_dependent", "pate_sigma_for_data_dependent_epsilon", "pate_sigma_for_epsilon", "pate_student_label", "release_labels", "train_target_model"]

#: The label-DP release algorithms that :func:`release_labels` implements.
ALGORITHMS = ("lp_1st", "lp_1st_nc", "lp_1st_prior", "lp_1st_ood", "lp_2st", "alibi", "agibi", "pate")


def _subset(x, idx):
    return x.iloc[idx].reset_index(drop=True) if hasattr(x, "iloc") else x[idx]


def parse_epsilon(text) -> float:
    """``"inf"`` → ∞, ``"2.1"`` → 2.1."""
    return math.inf if str(text) in ("inf", "infinity", "∞") else float(text)


def pate_sigma_for_epsilon(epsilon: float, num_queries: int, delta: float, sigma_threshold: float | None = None) -> float:
    """σ of GNMax such that ``num_queries`` answers cost ε (data-independent RDP α/σ² per query).

    With Confident-GNMax (``sigma_threshold`` = σ₁), every query also pays the threshold
    check ``α/(2σ₁²)`` (Papernot et al. 2018, data-independent), and σ is chosen as if every
    query were answered (an upper bound on the cost). Raises ValueError when the checks
    alone exceed ε.
    """
    from ...accounting import gnmax_rdp_data_independent, rdp_to_dp
    from ...mechanisms.labeldp import DEFAULT_ORDERS

    check = 0.0 if sigma_threshold is None else DEFAULT_ORDERS / (2.0 * float(sigma_threshold) ** 2) * num_queries

    def eps_of(s):
        return float(rdp_to_dp(gnmax_rdp_data_independent(s, DEFAULT_ORDERS) * num_queries + check, DEFAULT_ORDERS, delta))

    if sigma_threshold is not None and float(rdp_to_dp(check + 1e-12, DEFAULT_ORDERS, delta)) >= epsilon:
        raise ValueError(f"pate_sigma_threshold={sigma_threshold}: the {num_queries} threshold checks alone cost more than epsilon={epsilon}")
    lo, hi = 1e-3, 1e5
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        if eps_of(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return hi


#: PATE's σ calibrations (``labeldp.datasets.*.pate_calibration``): the paper's (data-dependent ε) and ours (data-independent).
PATE_CALIBRATIONS = {"data_dependent": "paper", "data_independent": "ours"}


def pate_epsilon_data_dependent(votes, sigma: float, delta: float, threshold: float | None = None, sigma_threshold: float | None = None) -> float:
    """Data-dependent ε of PATE's release of ``votes`` at GNMax noise σ (Papernot et al. 2018), the ε Malek et al. 2021 state for PATE-FM.

    Plain GNMax (``threshold`` None, every query answered): the data-dependent RDP of every
    query (:func:`ppaudit.accounting.gnmax_rdp_data_dependent`, Prop. 7 + Thm 6), summed —
    the ε :func:`ppaudit.mechanisms.labeldp.pate_label_dp` reports. Confident-GNMax: the
    expected cost of the authors' ``analysis.py``, :func:`ppaudit.accounting.confident_gnmax_rdp`
    (data-dependent threshold check + Pr[answered] · GNMax), summed. Converted to (ε, δ) by
    :func:`ppaudit.accounting.rdp_to_dp` on the PATE orders.

    The result is a function of the private votes: not a DP guarantee by itself (the papers
    release it without the smooth-sensitivity step of Papernot et al. 2018, §4.3).
    """
    from ...accounting import confident_gnmax_rdp, gnmax_rdp_data_dependent, rdp_to_dp
    from ...mechanisms.labeldp import DEFAULT_ORDERS

    if threshold is None:
        rdp = gnmax_rdp_data_dependent(votes, sigma, DEFAULT_ORDERS)
    else:
        rdp = confident_gnmax_rdp(votes, threshold, sigma_threshold, sigma, DEFAULT_ORDERS)
    return float(rdp_to_dp(np.atleast_2d(rdp).sum(axis=0), DEFAULT_ORDERS, delta))


def pate_sigma_for_data_dependent_epsilon(epsilon: float, votes, delta: float, threshold: float | None = None,
                                          sigma_threshold: float | None = None) -> float:
    """The paper's calibration of GNMax's σ (σ₂ of Malek et al. 2021, App. A Table 3): the
    smallest σ whose data-dependent ε on the teachers' ``votes`` (:func:`pate_epsilon_data_dependent`)
    is at most ``epsilon``.

    Malek et al. state PATE-FM's ε as Papernot et al. 2018's data-dependent ε of the answered
    queries, whose RDP is not monotone in σ (a smaller σ lowers the cost of a confident
    query); σ is scanned from below on a geometric grid (0.1 … 10⁵, 10 points a decade) and the
    first crossing refined by 40 geometric bisection steps. The votes are private, so the
    calibrated σ and its ε are not a DP guarantee by themselves (ours beside it:
    :func:`pate_sigma_for_epsilon`, data-independent, sound).

    Raises:
        ValueError: for ε not finite and positive, or when no σ on the grid reaches ε (e.g.
            the threshold checks alone cost more).
    """
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    v = np.atleast_2d(np.asarray(votes))

    def eps_of(s):
        return pate_epsilon_data_dependent(v, s, delta, threshold, sigma_threshold)

    grid = np.geomspace(0.1, 1e5, 61)
    hit = next((i for i, s in enumerate(grid) if eps_of(s) <= epsilon), None)
    if hit is None:
        raise ValueError(f"no GNMax sigma up to {grid[-1]:g} has data-dependent epsilon <= {epsilon} "
                         f"(pate_threshold={threshold}, pate_sigma_threshold={sigma_threshold}: the checks alone may cost more)")  # fmt: skip
    if hit == 0:
        return float(grid[0])
    lo, hi = float(grid[hit - 1]), float(grid[hit])
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        if eps_of(mid) <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def release_labels(data: LabelDPData, algo: str, epsilon: float, settings: dict, rng: np.random.Generator, labels=None):
    """Run one label-DP mechanism on the target half (labels default to ``data.y_target``).

    Returns ``(train_x, train_y, claimed_epsilon, info)``: the examples and (hard or soft)
    labels the target model is fitted on, the ε the mechanism claims, and extras.
    """
    from ...mechanisms import labeldp as L

    k = data.num_classes
    y = data.y_target if labels is None else np.asarray(labels)
    model, seed = settings["model"], int(rng.integers(2**31 - 1))
    fp = lambda xtr, ytr, xp: fit_predict_soft(data.name, xtr, ytr, [xp], k, model, seed)[0]  # noqa: E731
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown label-DP algorithm {algo!r}; choose one of {list(ALGORITHMS)}")
    if math.isinf(epsilon) and algo != "pate":
        return data.x_target, y, math.inf, {}
    if algo == "lp_1st":
        rel = L.lp_1st(y, epsilon, k, rng)
        return data.x_target, rel.labels, rel.epsilon, {"mean_k_star": float(np.mean(rel.details["k_star"]))}
    if algo == "lp_1st_nc":
        rel = L.lp_1st_noise_correction(y, epsilon, k, rng)
        e = rel.epsilon
        return data.x_target, rel.labels, e, {"_correction": lambda probs: L.rr_noise_correction(probs, e, k), "procedure_note": "noise correction"}
    if algo in ("lp_1st_prior", "lp_1st_ood"):
        if algo == "lp_1st_ood" and data.ood_prior is not None:
            prior = np.asarray(data.ood_prior, dtype=np.float64)  # a model trained elsewhere (MNIST)
        else:
            if algo == "lp_1st_ood":
                if data.x_ref_ood is None:
                    raise ValueError(f"lp_1st_ood needs an out-of-domain view or prior, which the {data.name} dataset was loaded without "
                                     "(MNIST images: load them with lp_1st_ood among the settings' algorithms)")
                xp, yp = data.x_ref_ood, (data.y_ref if data.y_ref_ood is None else data.y_ref_ood)
            else:
                xp, yp = data.x_ref, data.y_ref
            sub = rng.permutation(len(yp))[: int(settings["prior_size"])]
            prior = fp(_subset(xp, sub), yp[sub], data.x_target)
        prior = np.clip(prior, 1e-6, None)
        prior /= prior.sum(axis=1, keepdims=True)
        rel = L.lp_1st(y, epsilon, k, rng, prior=prior)
        return data.x_target, rel.labels, rel.epsilon, {"mean_k_star": float(np.mean(rel.details["k_star"]))}
    if algo == "lp_2st":
        rel = L.lp_2st(data.x_target if not hasattr(data.x_target, "iloc") else np.arange(len(y))[:, None], y, epsilon, k, _lp2_fp(data, fp), rng)
        return data.x_target, rel.labels, rel.epsilon, {}
    iterative = settings.get("alibi_prior", "iterative") == "iterative" and data.name != "tabular"
    if algo == "alibi":
        rel = L.alibi(y, epsilon, k, rng)
        info = {"alibi_prior": "iterative" if iterative else "uniform"}
        if iterative:
            noisy = rel.details["noisy"]
            info["_soft_label_fn"] = lambda probs: L.alibi_posterior(noisy, epsilon, prior=_floor_prior(probs))
        return data.x_target, rel.soft_labels, rel.epsilon, info
    if algo == "agibi":
        cal = settings.get("agibi_calibration", "rdp")
        rel = L.agibi(y, epsilon, k, rng, delta=float(settings["delta"]), calibration=cal)
        sig = float(rel.details.get("sigma", np.nan))
        info = {"sigma": sig, "agibi_calibration": cal, "alibi_prior": "iterative" if iterative else "uniform"}
        if iterative:
            noisy = rel.details["noisy"]
            info["_soft_label_fn"] = lambda probs: L.agibi_posterior(noisy, sig, prior=_floor_prior(probs))
        return data.x_target, rel.soft_labels, rel.epsilon, info
    # PATE: teachers on disjoint parts of the target half vote on public feature vectors
    # (features are public under label DP); the student is fitted on the answered ones.
    # Confident-GNMax (PATE-FM, Malek et al. 2021 App. A Table 3: threshold T, σ₁) when
    # pate_threshold / pate_sigma_threshold are set; plain GNMax otherwise.
    nq = min(int(settings["pate_queries"]), len(y))
    delta = float(settings["delta"])
    thr, s1 = settings.get("pate_threshold"), settings.get("pate_sigma_threshold")
    if (thr is None) != (s1 is None):
        raise ValueError(f"pate_threshold and pate_sigma_threshold go together, got {thr!r} and {s1!r}")
    calib = settings.get("pate_calibration", "data_independent")
    if calib not in PATE_CALIBRATIONS:
        raise ValueError(f"unknown pate_calibration {calib!r}; choose one of {list(PATE_CALIBRATIONS)}")
    if math.isinf(epsilon):
        sigma = 1e-6
    elif calib == "data_dependent":  # the paper's: σ from the teachers' votes (not a DP guarantee by itself)
        def sigma(votes):
            return pate_sigma_for_data_dependent_epsilon(epsilon, votes, delta, None if thr is None else float(thr), None if s1 is None else float(s1))
    else:
        sigma = pate_sigma_for_epsilon(epsilon, nq, delta, s1)
    q = rng.permutation(len(y))[:nq]
    idx_all = np.arange(len(y))[:, None]
    overrides = {key: v for key, v in (settings.get("teacher_model") or {}).items() if v is not None}  # null: the model's
    spreading = {key: overrides.pop(key) for key in ("kind", "neighbors", "alpha") if key in overrides}
    teacher_model = dict(model, **overrides)

    def teacher_fp(xi, yi, xq):
        return fit_predict_soft(data.name, _subset(data.x_target, xi[:, 0]), yi, [_subset(data.x_target, xq[:, 0])], k, teacher_model, seed)[0]

    def teachers_block(xis, yis, xq):
        """The teachers as stacked MLPs of one training-set size each (:func:`ppaudit.models.soft_mlp.soft_mlp_fit_predict_block`):
        the models of ``teacher_fp`` up to the batched products' rounding, in a fraction of the time."""
        from ...models.soft_mlp import soft_mlp_fit_predict_block

        xp = [_subset(data.x_target, xq[:, 0])]
        out: list = [None] * len(xis)
        sizes: dict[int, list[int]] = {}
        for i, xi in enumerate(xis):
            sizes.setdefault(len(xi), []).append(i)
        for idx in sizes.values():
            fits = soft_mlp_fit_predict_block([_subset(data.x_target, xis[i][:, 0]) for i in idx], [yis[i] for i in idx], [xp] * len(idx), k,
                                              teacher_model, [seed] * len(idx))  # fmt: skip
            for i, probs in zip(idx, fits):
                out[i] = probs[0]
        return out

    def spreading_block(xis, yis, xq):
        """Label-spreading teachers (PATE-FM's semi-supervised teachers on the CPU): each spreads its
        part's labels over the k-NN graph of all public target-half features (:mod:`ppaudit.models.label_spreading`)."""
        from ...models.label_spreading import label_spreading_block

        return label_spreading_block(data.x_target, [xi[:, 0] for xi in xis], yis, xq[:, 0], k, neighbors=int(spreading.get("neighbors", 10)),
                                     alpha=float(spreading.get("alpha", 0.99)), iterations=int(overrides.get("iterations", 30)))  # fmt: skip

    if thr is not None and math.isinf(epsilon):
        thr = s1 = None  # ε = ∞: no noise, every query answered
    if spreading.get("kind") == "label_spreading":
        if not _mlp_features(data, teacher_model):
            raise ValueError(f"teacher_model.kind label_spreading needs feature vectors (image or text with the MLP), not the {data.name} dataset's model")
        block = spreading_block
    else:
        block = teachers_block if _mlp_features(data, teacher_model) else None
    rel = L.pate_label_dp(idx_all, y, idx_all[q], k, int(settings["pate_teachers"]), sigma, teacher_fp, rng, delta=delta,
                          threshold=None if thr is None else float(thr), sigma_threshold=None if s1 is None else float(s1),
                          teachers_fit_predict_proba=block)  # fmt: skip
    ans = rel.details["answered"]
    if not np.any(ans):
        raise ValueError(f"Confident-GNMax answered no query (pate_threshold={thr}); lower the threshold")
    sigma = float(rel.details["sigma"])
    student = pate_student_label(data.name, settings)
    smoothing = float(settings.get("pate_student_smoothing") or 0.0)
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"pate_student_smoothing must lie in [0, 1), got {smoothing!r}")
    if smoothing and student == "fixmatch":
        raise ValueError("pate_student_smoothing applies to the plain student only (pate_student: plain, or the tabular stand-in); FixMatch takes hard labels")
    info = {"pate_sigma": sigma, "pate_calibration": calib, "pate_answered": int(ans.sum()), "epsilon_data_independent": rel.details["epsilon_data_independent"],
            "pate_student": student, "pate_student_smoothing": smoothing, **pate_label_quality(rel.details["votes"], y[q], rel.labels, ans),
            **pate_label_reach(rel.details["teacher_votes"], rel.details["teacher_assignment"][q], y[q], len(y))}  # fmt: skip
    if info["pate_student"] == "fixmatch":
        info["_unlabeled"] = data.x_target  # public features of the target half
    if math.isinf(epsilon):
        claimed = math.inf
    elif calib == "data_dependent":  # the paper's ε (data-dependent), the sound one beside it in info
        claimed = pate_epsilon_data_dependent(rel.details["votes"], sigma, delta, None if thr is None else float(thr), None if s1 is None else float(s1))
    else:
        claimed = float(rel.details["epsilon_data_independent"])
    labels = rel.labels[ans] if not smoothing else smoothed_targets(rel.labels[ans], k, smoothing)
    return _subset(data.x_target, q[ans]), labels, claimed, info


def smoothed_targets(answers: np.ndarray, num_classes: int, smoothing: float) -> np.ndarray:
    """The PATE student's soft targets: the released answers one-hot, label-smoothed,
    ``(1 − a)·onehot + a/C`` (Szegedy et al. 2016, §7; Müller et al. 2019 on its calibration).

    A function of the released answers and a public constant ``a`` only, so post-processing:
    the mechanism's ε is unchanged. Why: at ε = ∞ the answers are the noise-free teacher
    plurality, a deterministic function of x (the tabular teachers are unanimous on most
    queries), so a student fitted to them hard learns P(answer | x) ∈ {0, 1} and is
    overconfident against the true labels (the issue-34 measurement: 84 % right at 96 % mean
    confidence, test log-loss 0.58); smoothing caps its confidence near 1 − a/2.

    Raises:
        ValueError: for ``smoothing`` outside [0, 1) or answers outside [0, C).
    """
    a = np.asarray(answers)
    if not 0.0 <= float(smoothing) < 1.0:
        raise ValueError(f"smoothing must lie in [0, 1), got {smoothing!r}")
    if a.ndim != 1 or (a.size and (a.min() < 0 or a.max() >= num_classes)):
        raise ValueError(f"answers must be a vector of classes in [0, {num_classes}), got shape {a.shape}")
    out = np.full((a.size, int(num_classes)), float(smoothing) / num_classes)
    out[np.arange(a.size), a.astype(np.int64)] += 1.0 - float(smoothing)
    return out


def pate_label_reach(teacher_votes: np.ndarray, query_teacher: np.ndarray, y_true: np.ndarray, num_points: int) -> dict:
    """How far a labelled point's own label reaches the PATE student (ours, a diagnostic of the
    observational audit's target; it reads the private labels and votes and is never released).

    The observational label-inference attack (observational paper Alg. 2, §6.2) scores each
    canary of the target half by how much better the target model fits its label than M'. A
    PATE student sees a point's label only through the teacher whose part holds the point:
    most directly where the point is itself a query, the teacher voted its own training label
    there, and that vote decides the noise-free plurality (flipping it changes the plurality).

    Args:
        teacher_votes: ``(T, Q)`` votes per teacher (``details["teacher_votes"]`` of
            :func:`ppaudit.mechanisms.labeldp.pate_label_dp`).
        query_teacher: ``(Q,)`` the teacher whose part holds each query (queries drawn from the
            labelled points).
        y_true: the queries' true labels.
        num_points: labelled points the queries were drawn from (the target half).

    Returns:
        ``pate_query_share`` (Q / num_points: the share of canaries that are queries, in
        expectation), ``pate_own_teacher_agreement`` (the query's own teacher votes its training
        label), ``pate_other_teacher_agreement`` (the other teachers vote it, mean) and
        ``pate_pivotal_share`` (queries where the own teacher's vote decides the plurality).

    Raises:
        ValueError: for mismatched shapes or a teacher index out of range.
    """
    tv, own, y = np.asarray(teacher_votes), np.asarray(query_teacher), np.asarray(y_true)
    if tv.ndim != 2 or not (tv.shape[1] == own.size == y.size) or own.size == 0:
        raise ValueError(f"teacher_votes {tv.shape}, query_teacher {own.shape} and y_true {y.shape} must share the query axis (Q >= 1)")
    t, nq = tv.shape
    if own.min() < 0 or own.max() >= t:
        raise ValueError(f"query_teacher must lie in [0, {t}), got range [{own.min()}, {own.max()}]")
    if int(num_points) < nq:
        raise ValueError(f"num_points ({num_points}) must be >= the number of queries ({nq})")
    cols = np.arange(nq)
    k = int(max(tv.max(), y.max())) + 1
    votes = np.zeros((nq, k), dtype=np.int64)
    np.add.at(votes, (np.repeat(cols, t), tv.T.ravel()), 1)
    own_vote = tv[own, cols]
    right = tv == y[None, :]
    plural = votes.argmax(axis=1)
    pivotal = np.zeros(nq, dtype=bool)
    for c in range(k):  # the own vote moved to class c
        moved = votes.copy()
        moved[cols, own_vote] -= 1
        moved[cols, c] += 1
        pivotal |= moved.argmax(axis=1) != plural
    return {
        "pate_query_share": nq / int(num_points),
        "pate_own_teacher_agreement": float(np.mean(right[own, cols])),
        "pate_other_teacher_agreement": float(np.mean((right.sum(axis=0) - right[own, cols]) / max(t - 1, 1))),
        "pate_pivotal_share": float(np.mean(pivotal)),
    }


def pate_label_quality(votes: np.ndarray, y_true: np.ndarray, labels: np.ndarray, answered: np.ndarray) -> dict:
    """What the PATE student learns from (ours, a diagnostic measured on the release; no privacy cost is
    claimed for it, it reads the true labels and is never published as a label).

    Args:
        votes: ``(queries, k)`` teacher vote counts (``details["votes"]`` of
            :func:`ppaudit.mechanisms.labeldp.pate_label_dp`).
        y_true: the queries' true labels.
        labels: the released answers (−1 where unanswered).
        answered: the answered mask.

    Returns:
        ``pate_teacher_accuracy`` (mean share of teachers voting the true label),
        ``pate_plurality_accuracy`` (noise-free plurality vote = true label),
        ``pate_label_accuracy`` (released answer = true label, over the answered queries) and
        ``pate_consensus`` (mean share of the plurality vote), each in [0, 1].

    Raises:
        ValueError: for mismatched shapes.
    """
    votes, y_true = np.asarray(votes), np.asarray(y_true)
    labels, answered = np.asarray(labels), np.asarray(answered, dtype=bool)
    if votes.ndim != 2 or not (votes.shape[0] == y_true.size == labels.size == answered.size):
        raise ValueError(f"votes {votes.shape}, y_true {y_true.shape}, labels {labels.shape} and answered {answered.shape} must share one length")
    teachers = votes.sum(axis=1)
    rows = np.arange(y_true.size)
    return {
        "pate_teacher_accuracy": float(np.mean(votes[rows, y_true] / teachers)),
        "pate_plurality_accuracy": float(np.mean(votes.argmax(axis=1) == y_true)),
        "pate_label_accuracy": float(np.mean(labels[answered] == y_true[answered])) if answered.any() else float("nan"),
        "pate_consensus": float(np.mean(votes.max(axis=1) / teachers)),
    }


def _mlp_features(data: LabelDPData, model: dict) -> bool:
    """Whether ``model`` on ``data`` is the soft-label MLP on feature vectors (not CatBoost, not a torch network on images)."""
    return data.name != "tabular" and not model.get("arch") and not hasattr(data.x_target, "iloc") and np.ndim(data.x_target) == 2


def _floor_prior(probs: np.ndarray) -> np.ndarray:
    """The model's probabilities as a prior, floored at 1e-6 and renormalised (no −∞ in the log-prior)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-6, None)
    return p / p.sum(axis=1, keepdims=True)


def pate_student_label(dataset: str, settings: dict) -> str:
    """``"fixmatch"`` (PATE-FM) on the MLP datasets when ``settings["pate_student"] == "fixmatch"`` (default), else ``"plain"``."""
    return "fixmatch" if settings.get("pate_student", "fixmatch") == "fixmatch" and dataset != "tabular" else "plain"


def _fixmatch_augments(data: LabelDPData, fm: dict):
    from ...mechanisms.fixmatch import affine_maps_augment, feature_noise_augment

    wn, sn, sd = float(fm.get("weak_noise", 0.05)), float(fm.get("strong_noise", 0.3)), float(fm.get("strong_dropout", 0.2))
    if getattr(data, "augment_maps", None):  # absent from data.pkl files written before it existed
        # weak: identity or the first other map — the horizontal flip, or for digits (no flip) a
        # 2-pixel shift (FixMatch's flip-and-shift; SVHN's weak one translates only); strong: all
        return affine_maps_augment(data.augment_maps[:2], wn), affine_maps_augment(data.augment_maps, sn, sd)
    return feature_noise_augment(wn), feature_noise_augment(sn, sd)


#: FixMatch's strong augmentation on images: Cutout of half the side (Sohn et al. 2020 use a
#: 16-pixel Cutout on CIFAR's 32) after the flip and 4-pixel shift of the weak one.
_CUTOUT_FRACTION = 0.5


def _fixmatch_images(data: LabelDPData, xtr, ytr, x_unlabeled, x_predict: list, settings: dict, seed: int) -> list[np.ndarray]:
    """PATE-FM's FixMatch student on images (Malek et al. 2021, App. A): the network of
    ``settings["model"]["arch"]`` on per-channel standardised images (statistics of the public
    unlabelled images), :func:`ppaudit.mechanisms.fixmatch.image_augment` weak (flip, 4-pixel
    shift) and strong (+ Cutout, pixel noise ``fixmatch.strong_noise``), on ``model.device``, with
    deterministic kernels unless ``model.deterministic`` is false."""
    import torch

    from ...mechanisms.fixmatch import fixmatch_fit_predict, image_augment
    from ...models.determinism import deterministic_torch
    from ...models.soft_label import architecture_params, channel_mean_std, image_scale
    from ...models.teachers import build_torch_model

    fm, model = dict(settings.get("fixmatch", {})), settings["model"]
    xu = np.asarray(x_unlabeled)
    scale = image_scale(xu)
    mean, std = (v.astype(np.float32)[None, :, None, None] for v in channel_mean_std(xu))
    norm = lambda a: ((np.asarray(a, dtype=np.float32) / scale - mean) / np.maximum(std, 1e-6)).astype(np.float32)  # noqa: E731
    side = int(xu.shape[-1])
    weak = image_augment(max_shift=side // 8)
    strong = image_augment(max_shift=side // 8, cutout=int(side * _CUTOUT_FRACTION), noise_std=float(fm.get("strong_noise", 0.3)))
    keys = ("steps", "batch_size", "mu", "threshold", "lambda_u", "lr", "momentum", "weight_decay", "warmup")
    shape = xu.shape[1:]

    def factory() -> torch.nn.Module:
        return build_torch_model(model["arch"], shape, data.num_classes, architecture_params(model))

    with deterministic_torch(bool(model.get("deterministic", True))):  # the same bytes on a GPU
        return fixmatch_fit_predict(norm(xtr), ytr, norm(xu), [norm(a) for a in x_predict], data.num_classes, weak_augment=weak,
                                    strong_augment=strong, seed=seed, net_factory=factory, device=str(model.get("device", "cpu")),
                                    **{kk: fm[kk] for kk in keys if kk in fm})  # fmt: skip


def fit_released(data: LabelDPData, xtr, ytr, info: dict, x_predict: list, settings: dict, seed: int) -> list[np.ndarray]:
    """Fit the target model on a release of :func:`release_labels` and predict ``x_predict``.

    Handles the mechanism-specific training: ALIBI/AGIBI's iterative prior (``_soft_label_fn``),
    PATE-FM's FixMatch student (``_unlabeled``; hyper-parameters ``settings["fixmatch"]``)
    and LP-1ST's noise correction of the predictions (``_correction``).
    """
    k = data.num_classes
    if "_unlabeled" in info and settings["model"].get("arch"):
        out = _fixmatch_images(data, xtr, ytr, info["_unlabeled"], x_predict, settings, seed)
    elif "_unlabeled" in info:
        from ...mechanisms.fixmatch import fixmatch_fit_predict

        fm = dict(settings.get("fixmatch", {}))
        weak, strong = _fixmatch_augments(data, fm)
        keys = ("steps", "batch_size", "mu", "threshold", "lambda_u", "lr", "momentum", "weight_decay", "warmup")
        out = fixmatch_fit_predict(xtr, ytr, info["_unlabeled"], x_predict, k, weak_augment=weak, strong_augment=strong,
                                   hidden=int(settings["model"]["hidden"]), seed=seed, **{kk: fm[kk] for kk in keys if kk in fm})  # fmt: skip
    else:
        out = fit_predict_soft(data.name, xtr, ytr, x_predict, k, settings["model"], seed, soft_label_fn=info.get("_soft_label_fn"))
    if "_correction" in info:
        out = [info["_correction"](o) for o in out]
    return out


def _lp2_fp(data, fp):
    if not hasattr(data.x_target, "iloc"):
        return fp

    def via_index(xi, yi, xp):
        return fp(_subset(data.x_target, xi[:, 0]), yi, _subset(data.x_target, xp[:, 0]))

    return via_index


def log_loss(probs: np.ndarray, y: np.ndarray, eps: float = 1e-12) -> float:
    """Mean negative log-probability of the true labels ``y`` under ``probs`` (n × C), clipped at ``eps``."""
    return float(-np.mean(np.log(np.maximum(probs[np.arange(y.size), y], eps))))


def train_target_model(data: LabelDPData, algo: str, epsilon: float, settings: dict, rng: np.random.Generator) -> dict:
    """Release labels with ``algo`` at ``epsilon``, fit the target model, predict the canaries and the test set.

    Returns a dict of arrays/numbers: ``target_probs`` (on the target half), ``test_probs``,
    ``claimed_epsilon``, ``test_accuracy``, ``test_log_loss`` and the mechanism's extras.
    """
    xtr, ytr, claimed, info = release_labels(data, algo, epsilon, settings, rng)
    seed = int(rng.integers(2**31 - 1))
    target_probs, test_probs = fit_released(data, xtr, ytr, info, [data.x_target, data.x_test], settings, seed)
    return dict(
        {kk: v for kk, v in info.items() if not kk.startswith("_")},
        target_probs=target_probs,
        test_probs=test_probs,
        claimed_epsilon=float(claimed),
        test_accuracy=float(np.mean(test_probs.argmax(axis=1) == data.y_test)),
        test_log_loss=log_loss(test_probs, data.y_test),
        train_size=int(len(ytr) if np.ndim(ytr) == 1 else ytr.shape[0]),
    )
