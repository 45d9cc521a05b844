"""Audit stage of Private-kNN (Chadha et al. 2024, §6, Fig. 5; App. D.3, App. E.4 Figs. 25–31).

Pipeline (one dataset):

1. :func:`load_knn_inputs` — a seeded subset of the raw images or sentences;
   :func:`ppaudit.models.encoders.extract_features` turns them into embeddings.
2. :func:`ppaudit.adversaries.private_knn.knn_setup` — the natural queries, their exact neighbours
   and vote tables ``P_q``, ``P^k_q``.
3. :func:`ppaudit.adversaries.private_knn.craft_knn` — the five adversaries' canaries and per-query ``ν``.
4. :func:`audit_knn_crafted` — per (candidate, asked query): ``T`` Monte Carlo trials of the
   noisy argmax on ``H_S`` and ``H_S'`` of :class:`ppaudit.mechanisms.private_knn.KnnVoteModel` (exact counts
   from the certified enumeration when it fits, else simulated; :func:`audit_knn_model`),
   then per order

   * ``two_cut_cp`` — the 2-cut Clopper–Pearson lower bound (§4.2, App. B), as for PATE;
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
   reuse the PATE/CaPC stage: :func:`ppaudit.experiments.private_prediction.compose_candidates`
   and :func:`~ppaudit.experiments.private_prediction.summarize_candidates` (§4.2, §5.4).
   AdvQ candidates ask one query ``n_Q`` times; Pois-NatQ asks the ``n_Q`` natural queries
   once each. ε at ``δ = 1e-6`` via Thm 1 — an illustration for the lower bounds, as the
   paper says (§5.4).
6. :func:`knn_findings` — the paper's three claims (§6) checked on the numbers.

Randomness: each (candidate, query) audit draws from
``job_generator(seed, experiment, "audit", key, query)``; the same seed gives the same table
whatever subset of candidates a job runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import as_orders, check_positive_int, check_probability
from ..accounting import private_knn_rdp
from ..adversaries.private_knn import KNN_ADVERSARIES, KnnCrafted, KnnSetup, craft_knn
from ..audit import (
    ModelSource,
    audit_query,
    bonferroni_confidence,
    compose_candidates,
    epsilon_floor,
    summarize_candidates,
)
from ..data.text import load_rotten_tomatoes
from ..mechanisms.private_knn import (
    KnnVoteModel,
    enumerate_knn_output_distributions,
    knn_output_distributions,
)
from ..montecarlo import model_noisy_argmax_counts
from ..rng import job_generator
from ..vote_models import certified_mixture_rdp, mixture_rdp_estimate

__all__ = [
    "KNN_RDP_COLUMNS",
    "KNN_DATASETS",
    "KNN_MODALITY",
    "KNN_ENCODER_MODALITY",
    "KNN_PACKAGED_DATASETS",
    "PAPER_KNN_SETTINGS",
    "load_knn_inputs",
    "audit_knn_model",
    "audit_knn_crafted",
    "compose_knn",
    "summarize_knn",
    "run_knn_audits",
    "knn_findings",
    "select_knn_candidates",
    "knn_findings_table",
    "TEXT_DOWNLOAD_DATASETS",
]

#: The per-order columns of the per-query table that are composed over queries.
KNN_RDP_COLUMNS = ("two_cut_cp", "k_cut", "exact", "exact_lo", "exact_hi", "data_independent")

#: Datasets of the kNN audit: modality and number of classes.
KNN_DATASETS = {
    "fashion-mnist": ("image", 10),
    "mnist": ("image", 10),
    "cifar10": ("image", 10),
    "rotten-tomatoes": ("text", 2),
    "sst2": ("text", 2),
    "agnews": ("text", 4),
}

#: Modality (``"image"`` or ``"text"``) of every dataset of :data:`KNN_DATASETS`.
KNN_MODALITY = {name: modality for name, (modality, _) in KNN_DATASETS.items()}

#: Modality of every encoder of ``ppaudit.models.encoders.ENCODERS`` (App. D.3: ViT-L/16 for
#: images, RoBERTa-large for text; the offline defaults EfficientNet-Lite0 and all-MiniLM-L6-v2).
#: Kept here as data so that the workflow's config checks need not import torch.
KNN_ENCODER_MODALITY = {
    "efficientnet-lite0": "image",
    "vit-l16-in21k": "image",
    "all-minilm-l6-v2": "text",
    "roberta-large": "text",
}

#: Datasets of :data:`KNN_DATASETS` with an offline copy (``source="packaged"``); the others
#: are downloaded.
KNN_PACKAGED_DATASETS = ("fashion-mnist", "mnist", "rotten-tomatoes")

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
        from ..data import load_text_dataset

        if root is None:
            raise ValueError(f"{dataset} is downloaded: give root= (the download folder)")
        ttr, ytr, tte, yte = load_text_dataset(dataset, root)
        itr = _subset(len(ttr), num_train, rng, "num_train")
        ite = _subset(len(tte), num_test, rng, "num_test")
        return [ttr[i] for i in itr], ytr[itr], [tte[i] for i in ite], yte[ite]
    from ..data import load_dataset

    xtr, ytr, xte, yte = load_dataset(dataset, root, source=source)
    itr = _subset(xtr.shape[0], num_train, rng, "num_train")
    ite = _subset(xte.shape[0], num_test, rng, "num_test")
    return xtr[itr], ytr[itr], xte[ite], yte[ite]


# ----------------------------------------------------------------------------- audit


def audit_knn_model(
    model: KnnVoteModel,
    sigma: float,
    trials: int,
    orders,
    data_independent,
    confidence: float = 0.95,
    rng=None,
    count_mode: str = "auto",
    sample_trials: int | None = None,
    exact: str = "auto",
    exact_draws: int = 2000,
    max_tail_mass: float = 1e-11,
    max_support: int = 100_000,
    min_nu: float = 0.0,
    k_cut_method: str = "goodman",
    selection: str = "split",
    chunk_size: int | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Audit, exact RDP and theory for one query under the Private-kNN model (§4.2, §6).

    Two ways to the Monte Carlo counts, as in
    :func:`ppaudit.experiments.private_prediction.audit_vote_model`:

    * ``"exact"`` counts: the model's output laws are enumerated with a certified tail
      (:func:`ppaudit.mechanisms.private_knn.enumerate_knn_output_distributions`) and the counts of ``T`` runs
      are drawn as ``Multinomial(T, μ̂)`` — the law of ``T`` runs of the truncated model, at a
      cost independent of ``T`` (``T = 1e8`` as in the paper). The truncated model is within
      total variation ``τ`` of the full one per run, so the reported
      ``effective_confidence`` is ``confidence − 2·T·τ``.
    * ``"sample"``: ``sample_trials`` runs that each draw a histogram from the model
      (:func:`ppaudit.montecarlo.model_noisy_argmax_counts`).

    ``count_mode="auto"`` uses exact counts when the enumeration fits ``max_support``
    (always for two classes; for confident image queries) and sampling otherwise.

    Args:
        model: :class:`ppaudit.mechanisms.private_knn.KnnVoteModel` of the query and canary.
        sigma: noise standard deviation.
        trials: ``T`` with exact counts.
        orders: Rényi orders α > 1.
        data_independent: ``(len(orders),)`` per-query theory RDP
            (:func:`ppaudit.accounting.private_knn_rdp` with one query).
        confidence: of the lower bounds.
        rng: seed / ``SeedSequence`` / generator.
        count_mode: ``"auto"``, ``"exact"`` (fail if the enumeration is too large) or ``"sample"``.
        sample_trials: ``T`` when sampling (default: ``trials``).
        exact: the ``exact`` column from the certified enumeration (``"enumerate"``, with
            ``exact_lo``/``exact_hi``), the Monte Carlo mixture (``"average"``, with
            ``exact_se``), or ``"auto"`` (enumerate when it fits).
        exact_draws: base draws of the Monte Carlo mixture.
        max_tail_mass, max_support: budget of the enumeration.
        min_nu: skip the Monte Carlo (audit bounds 0) when ``ν < min_nu``.
        k_cut_method, selection, chunk_size, progress: as ``audit_vote_model``.

    Returns:
        One row per order: ``order``, :data:`KNN_RDP_COLUMNS`, ``exact_se``, and ``nu``,
        ``simulated``, ``count_mode`` (``"exact"``/``"sample"``/``"none"``), ``trials``,
        ``effective_confidence``, ``exact_method`` (``"enumerate"``/``"average"``/``"identical"``),
        ``tail_mass``, ``support_size``.
    """
    a = as_orders(orders)
    di = np.asarray(data_independent, dtype=np.float64)
    if di.shape != a.shape:
        raise ValueError(f"data_independent must have one value per order ({a.size}), got shape {di.shape}")
    mn = float(min_nu)
    if not (0.0 <= mn <= 1.0):
        raise ValueError(f"min_nu must be in [0, 1], got {min_nu!r}")
    # "sample" mode draws sample_trials runs (default trials), as the "auto" fallback does.
    t = check_positive_int(sample_trials, "sample_trials") if (count_mode == "sample" and sample_trials is not None) else trials
    r = audit_query(
        KnnModelSource(model), sigma, t, a, confidence, rng,
        count_mode=count_mode, sample_trials=sample_trials, exact=exact, exact_draws=exact_draws,
        max_tail_mass=max_tail_mass, max_support=max_support, k_cut_method=k_cut_method, selection=selection,
        simulate=model.nu >= mn, theory={"data_independent": di}, chunk_size=chunk_size, progress=progress,
    )
    r.meta["nu"] = model.nu
    return r.frame(KNN_RDP_COLUMNS + ("exact_se",), KNN_AUDIT_META)


#: The metadata columns of :func:`audit_knn_model`, in order.
KNN_AUDIT_META = ("nu", "simulated", "count_mode", "trials", "effective_confidence", "exact_method", "tail_mass", "support_size")


@dataclass
class KnnModelSource(ModelSource):
    """Private-kNN's outputs for :func:`ppaudit.audit.audit_query` (Chadha et al. 2024, §6).

    Every trial draws ``H_S = Mult(k, P_q)`` (and ``H_S'`` with the poison's Bernoulli
    inclusion) from :class:`ppaudit.mechanisms.private_knn.KnnVoteModel`. The subsample is
    fresh per query, so repeated answers are independent: the per-query composition over
    queries is exact for Private-kNN (unlike PATE's shared histogram).

    Args:
        model: the :class:`~ppaudit.mechanisms.private_knn.KnnVoteModel` of one query and canary.
    """

    model: KnnVoteModel

    def theory(self, sigma, orders):
        raise ValueError("Private-kNN's theory is the subsampled Gaussian of the whole mechanism: pass theory={'data_independent': ...}")

    def enumerate(self, sigma, max_tail_mass, max_support):
        return enumerate_knn_output_distributions(self.model, sigma, max_tail_mass, max_support)

    def exact_rdp(self, enum, sigma, orders):
        return certified_mixture_rdp(enum, orders)

    def mixture_rdp(self, sigma, draws, rng, orders):
        return mixture_rdp_estimate(knn_output_distributions(self.model, sigma, draws, rng), orders)

    def exact_counts(self, enum, sigma, trials, gens):
        c0 = gens[0].multinomial(trials, enum.p).astype(np.int64)
        c1 = gens[1].multinomial(trials, enum.q).astype(np.int64)
        return c0, c1, enum.total_variation_bound()

    def sample_counts(self, sigma, trials, gens, chunk_size, progress):
        c = self.num_classes
        c0 = model_noisy_argmax_counts(self.model.sampler("S"), c, sigma, trials, gens[0], chunk_size=chunk_size, progress=progress)
        c1 = model_noisy_argmax_counts(self.model.sampler("S_prime"), c, sigma, trials, gens[1], chunk_size=chunk_size, progress=progress)
        return c0, c1


def audit_knn_crafted(
    crafted: KnnCrafted,
    sigma: float,
    trials: int,
    orders,
    seed: int,
    experiment: str,
    gamma: float,
    confidence: float = 0.95,
    candidates: Sequence[int] | None = None,
    bonferroni: bool = True,
    progress: bool = False,
    **audit_kwargs,
) -> pd.DataFrame:
    """Per-query audits of every candidate canary of a Private-kNN adversary.

    Args:
        crafted: :func:`ppaudit.adversaries.private_knn.craft_knn`.
        sigma, trials, orders, confidence: as :func:`audit_knn_model`.
        seed, experiment: root of the randomness (e.g. ``"knn-fashion-mnist"``).
        gamma: the subsampling rate (for the theory column).
        candidates: rows of ``crafted`` to audit (default: all; e.g. one shard per job).
        bonferroni: run every audit at ``1 − (1 − confidence)/N`` (``N`` audits) so that all
            hold simultaneously — the worst candidate and the Pois-NatQ sum then hold at
            ``confidence`` (default; ``False`` is the paper's uncorrected procedure). Columns
            ``multiplicity`` and ``confidence_per_audit`` record it.
        progress: tqdm bar over the audits.
        **audit_kwargs: :func:`audit_knn_model` options (``exact_draws``, ``min_nu``, …).

    Returns:
        Long table: ``adversary``, ``candidate``, ``key``, ``canary_index``, ``canary_label``,
        ``query``, ``repetitions`` + the columns of :func:`audit_knn_model`.
    """
    from tqdm.auto import tqdm

    a = as_orders(orders)
    theory = private_knn_rdp(gamma, sigma, a, 1)
    rows = range(crafted.num_candidates) if candidates is None else [int(i) for i in candidates]
    for i in rows:
        if not 0 <= i < crafted.num_candidates:
            raise ValueError(f"candidates must lie in [0, {crafted.num_candidates}), got {i}")
    pairs = [(i, j) for i in rows for j in range(crafted.audit_queries.shape[1])]
    conf = check_probability(confidence, "confidence")
    if bonferroni and pairs:
        conf = bonferroni_confidence(conf, len(pairs))
    keys = crafted.keys
    frames = []
    for i, j in tqdm(pairs, disable=not progress, desc=f"audit {crafted.adversary}", unit="query", mininterval=2.0):
        q = int(crafted.audit_queries[i, j])
        df = audit_knn_model(crafted.model(i, j), sigma, trials, a, theory, conf, rng=job_generator(seed, experiment, "audit", keys[i], q), **audit_kwargs)
        meta = {"adversary": crafted.adversary, "candidate": i, "key": keys[i], "canary_index": int(crafted.canary_index[i]),
                "canary_label": int(crafted.canary_label[i]), "query": q, "repetitions": int(crafted.repetitions[i, j])}
        for pos, (name, value) in enumerate(meta.items()):
            df.insert(pos, name, value)
        df["multiplicity"] = "bonferroni" if bonferroni else "none (paper)"
        df["confidence_per_audit"] = conf
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def compose_knn(per_query: pd.DataFrame, delta: float = 1e-6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compose one adversary's per-query RDP over its queries and convert to ε (§4.2, §5.4).

    :func:`ppaudit.experiments.private_prediction.compose_candidates` on
    :data:`KNN_RDP_COLUMNS`; the ``adversary`` column is carried over.
    """
    if per_query.empty:
        raise ValueError("per_query is empty: nothing to compose")
    advs = per_query["adversary"].unique() if "adversary" in per_query else []
    if len(advs) > 1:
        raise ValueError(f"compose one adversary at a time, got {list(advs)}")
    rdp, eps = compose_candidates(per_query, delta, columns=KNN_RDP_COLUMNS)
    if len(advs):
        rdp.insert(0, "adversary", advs[0])
        eps.insert(0, "adversary", advs[0])
    return rdp, eps


def summarize_knn(eps_by_adversary: Mapping[str, pd.DataFrame], dataset: str, worst_by: str = "two_cut_cp") -> pd.DataFrame:
    """Worst / max / average case per adversary (§5.4, App. E.4), one tidy table.

    Args:
        eps_by_adversary: adversary → ``eps`` table of :func:`compose_knn`.
        dataset: name written into the ``dataset`` column.
        worst_by: the column that picks the worst candidate (the audit, as in Figs. 25–31).

    Returns:
        Columns ``dataset``, ``adversary``, ``case`` (``worst``/``max``/``average``),
        ``column``, ``epsilon``, ``candidate``.
    """
    frames = []
    for adv, eps in eps_by_adversary.items():
        s = summarize_candidates(eps, worst_by=worst_by, columns=KNN_RDP_COLUMNS)
        s.insert(0, "adversary", adv)
        s.insert(0, "dataset", dataset)
        frames.append(s)
    if not frames:
        raise ValueError("eps_by_adversary is empty")
    return pd.concat(frames, ignore_index=True)


def run_knn_audits(
    setup: KnnSetup,
    sigma: float,
    orders,
    seed: int,
    dataset: str,
    trials: int = 10**8,
    sample_trials_advq: int = 10**6,
    sample_trials_natq: int = 10**5,
    advq_candidates: Sequence[int] | None = None,
    num_repetitions: int | None = None,
    adversaries: Sequence[str] = KNN_ADVERSARIES,
    delta: float = 1e-6,
    confidence: float = 0.95,
    natq_candidates: int = 1,
    s_grid=(20, 200, 1000),
    progress: bool = False,
    **audit_kwargs,
) -> dict[str, pd.DataFrame]:
    """All Private-kNN adversaries of one dataset, end to end (craft → audit → compose → summarise).

    The workflow runs these steps as separate jobs; this is the same computation in one
    call (small runs, tests). ``trials`` is ``T`` with exact counts; a query whose model is
    too large to enumerate is simulated with ``sample_trials_advq`` / ``sample_trials_natq``
    runs (:func:`audit_knn_model`).

    Returns:
        ``{"per_query", "rdp", "eps", "summary"}`` tidy tables (``adversary`` column in each).
    """
    per_query, rdps, epss = [], [], {}
    for adv in adversaries:
        crafted = craft_knn(adv, setup, num_repetitions, advq_candidates if adv.endswith("advq") else None, natq_candidates, s_grid)
        ts = sample_trials_advq if adv.endswith("advq") else sample_trials_natq
        pq = audit_knn_crafted(crafted, sigma, trials, orders, seed, f"knn-{dataset}", setup.gamma, confidence, progress=progress,
                               sample_trials=ts, **audit_kwargs)
        pq["expected_inclusions"] = pq["candidate"].map(dict(enumerate(crafted.expected_inclusions)))
        rdp, eps = compose_knn(pq, delta)
        eps["expected_inclusions"] = eps["candidate"].map(dict(enumerate(crafted.expected_inclusions)))
        per_query.append(pq)
        rdps.append(rdp)
        epss[adv] = eps
    summary = summarize_knn(epss, dataset)
    return {"per_query": pd.concat(per_query, ignore_index=True), "rdp": pd.concat(rdps, ignore_index=True),
            "eps": pd.concat(list(epss.values()), ignore_index=True), "summary": summary}


# ----------------------------------------------------------------------------- findings


def knn_findings(
    summary: pd.DataFrame,
    column: str = "two_cut_cp",
    case: str = "worst",
    theory_gap: float = 2.0,
    advq_ratio: float = 2.0,
    orders=None,
    delta: float = 1e-6,
) -> pd.DataFrame:
    """The paper's Private-kNN findings (§6, Fig. 5) checked on a :func:`summarize_knn` table.

    Per dataset, on the ``case`` ε of ``column`` (default: worst-case 2-cut audit):

    1. ``theory >> audits`` — the data-independent ε exceeds ``theory_gap`` × the largest
       audited ε of any adversary ("a big gap ... even for the strongest adversaries").
    2. ``advq similar`` — Nat-AdvQ and Pois-AdvQ within a factor ``advq_ratio`` of each other.
    3. ``advq > natq`` — both AdvQ adversaries above every Pois-NatQ adversary.
    4. ``embedding >= test/train`` — the embedding poison leaks at least as much as the best
       test or train poison (Fig. 5, right).

    A check whose adversaries are missing is reported with ``holds = NaN``.

    The ε of Thm 1 is not 0 for a zero RDP curve: ``min_α log(1 − 1/α) − (log δ + log α)/(α − 1)``
    over the orders used (e.g. 0.14 for orders up to 64 at ``δ = 1e-6``). With ``orders``
    given, this floor is reported in the ``floor`` column; audited values at the floor mean
    "no measurable leakage", and a strict comparison between two of them fails.

    Returns:
        Columns ``dataset``, ``finding``, ``holds`` (bool or NaN), ``lhs``, ``rhs``, ``floor``,
        ``detail``.
    """
    floor = float("nan")
    if orders is not None:
        floor = epsilon_floor(as_orders(orders), delta)
    need = {"dataset", "adversary", "case", "column", "epsilon"}
    if not need <= set(summary.columns):
        raise ValueError(f"summary must have columns {sorted(need)}, got {list(summary.columns)}")
    if column not in KNN_RDP_COLUMNS:
        raise ValueError(f"column must be one of {list(KNN_RDP_COLUMNS)}, got {column!r}")
    if case not in ("worst", "max", "average"):
        raise ValueError(f"case must be 'worst', 'max' or 'average', got {case!r}")
    for name, v in (("theory_gap", theory_gap), ("advq_ratio", advq_ratio)):
        if not (float(v) >= 1.0):
            raise ValueError(f"{name} must be >= 1, got {v!r}")
    rows = []
    for ds, grp in summary.groupby("dataset", sort=True):
        g = grp[grp["case"] == case]

        def eps(adv: str, col: str = column) -> float:
            v = g[(g["adversary"] == adv) & (g["column"] == col)]["epsilon"]
            return float(v.iloc[0]) if len(v) else float("nan")

        present = [a for a in KNN_ADVERSARIES if not np.isnan(eps(a))]
        audits = {a: eps(a) for a in present}
        theory = max((eps(a, "data_independent") for a in present), default=float("nan"))
        top = max(audits.values(), default=float("nan"))

        def row(finding, lhs, rhs, holds, detail):
            rows.append({"dataset": ds, "finding": finding, "holds": holds, "lhs": lhs, "rhs": rhs, "floor": floor, "detail": detail})

        ok = not (np.isnan(theory) or np.isnan(top))
        row("theory >> audits", theory, top, bool(theory > theory_gap * top) if ok else np.nan,
            f"data-independent eps {theory:.4g} vs largest audited eps {top:.4g} (needs > {theory_gap}x)")
        nat, poi = eps("nat-advq"), eps("pois-advq")
        ok = not (np.isnan(nat) or np.isnan(poi))
        lo, hi = (min(nat, poi), max(nat, poi)) if ok else (np.nan, np.nan)
        row("advq similar", nat, poi, bool(hi <= advq_ratio * lo) if ok and hi > 0 else (True if ok else np.nan),
            f"Nat-AdvQ {nat:.4g} vs Pois-AdvQ {poi:.4g} (within {advq_ratio}x)")
        natq = {a: audits[a] for a in present if a.startswith("pois-natq")}
        best_natq = max(natq.values(), default=float("nan"))
        ok = not (np.isnan(nat) or np.isnan(poi) or np.isnan(best_natq))
        row("advq > natq", min(nat, poi) if ok else np.nan, best_natq, bool(min(nat, poi) > best_natq) if ok else np.nan,
            f"min AdvQ {min(nat, poi) if ok else np.nan:.4g} vs max Pois-NatQ {best_natq:.4g} ({', '.join(f'{k}={v:.3g}' for k, v in natq.items())})")
        emb = eps("pois-natq-embedding")
        nat_pools = [eps("pois-natq-test"), eps("pois-natq-train")]
        nat_pools = [v for v in nat_pools if not np.isnan(v)]
        ok = not np.isnan(emb) and bool(nat_pools)
        best_pool = max(nat_pools) if nat_pools else float("nan")
        row("embedding >= test/train", emb, best_pool, bool(emb >= best_pool) if ok else np.nan,
            f"embedding poison {emb:.4g} vs best test/train poison {best_pool:.4g}")
    return pd.DataFrame(rows, columns=["dataset", "finding", "holds", "lhs", "rhs", "floor", "detail"])


# ----------------------------------------------------------------------------- workflow helpers


def select_knn_candidates(P, num_candidates: int | None, how: str = "margin") -> np.ndarray | None:
    """Query-set indices of the AdvQ candidate canaries (all when ``num_candidates`` is ``None``).

    The paper instantiates the AdvQ adversaries for every one of the ``n_Q`` queries and
    reports the worst (§5.4, §6). At the embedded scale fewer are affordable: ``"margin"``
    takes the queries whose vote distribution ``P_q`` has the smallest top-2 margin (one
    displaced vote moves the noisy argmax most there), ``"first"`` the first points of the
    (random) query set.

    Args:
        P: ``(n_Q, C)`` vote distributions of the queries (``KnnSetup.P``).
        num_candidates: how many (capped at ``n_Q``) or ``None`` for all.
        how: ``"margin"`` (ties by index) or ``"first"``.

    Returns:
        ``(n,)`` sorted int64 indices, or ``None`` (all queries).
    """
    p = np.asarray(P, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0:
        raise ValueError(f"P must be a non-empty (n_Q, C) array, got shape {p.shape}")
    if how not in ("margin", "first"):
        raise ValueError(f"how must be 'margin' or 'first', got {how!r}")
    if num_candidates is None:
        return None
    n = min(check_positive_int(num_candidates, "num_candidates"), p.shape[0])
    if how == "first":
        return np.arange(n, dtype=np.int64)
    top2 = -np.sort(-p, axis=1)[:, :2]
    margin = top2[:, 0] - top2[:, 1]
    return np.sort(np.lexsort((np.arange(p.shape[0]), margin))[:n]).astype(np.int64)


def knn_findings_table(summary: pd.DataFrame, floor: float, columns: Sequence[str] = ("two_cut_cp", "exact"), tol: float = 1e-9, **kwargs) -> pd.DataFrame:
    """The Private-kNN rows of the findings table (columns ``FINDINGS_COLUMNS`` of
    :mod:`ppaudit.experiments.pate_capc_findings`), worst case, ε at δ.

    * ``audit<=exact<=di`` per adversary: 2-cut audit ≤ exact ≤ data-independent theory
      (the exact ε is a Monte Carlo estimate where the model was not enumerated: ``audit ≤
      exact`` may then fail within its standard error);
    * the four claims of :func:`knn_findings` (``theory >> audits``, ``advq similar``,
      ``advq > natq``, ``embedding >= test/train``), once on the 2-cut audit and once on the
      exact ε (``columns``). A claim whose adversaries are missing is reported with
      ``holds = False`` and a note; nothing is dropped.

    ``at_floor`` marks rows whose compared values all sit at the zero-RDP ``floor`` (nothing
    detected): the comparison then says nothing.

    Args:
        summary: :func:`summarize_knn` tables of every dataset (columns ``dataset``,
            ``adversary``, ``case``, ``column``, ``epsilon``).
        floor: ε of an all-zero RDP curve (:func:`ppaudit.experiments.pate_capc_findings.epsilon_floor`).
        columns: the ε columns the four claims are checked on.
        tol: relative slack of the ≤ checks.
        **kwargs: :func:`knn_findings` options (``theory_gap``, ``advq_ratio``).
    """
    from .pate_capc_findings import FINDINGS_COLUMNS  # noqa: PLC0415  (the findings table's schema)

    le = lambda a, b: a <= b * (1 + tol) + tol  # noqa: E731
    at_floor = lambda vals: bool(np.all(np.asarray(vals, dtype=float) <= floor * (1 + 1e-9)))  # noqa: E731
    rows = []
    w = summary[summary["case"] == "worst"]
    for ds in sorted(summary["dataset"].unique()):
        for adv in [a for a in KNN_ADVERSARIES if a in set(w.loc[w["dataset"] == ds, "adversary"])]:
            g = w[(w["dataset"] == ds) & (w["adversary"] == adv)].set_index("column")["epsilon"]
            vals = [("audit", float(g.get("two_cut_cp", np.nan))), ("exact", float(g.get("exact", np.nan))), ("di", float(g.get("data_independent", np.nan)))]
            v = [x for _, x in vals]
            ok = bool(np.all(np.isfinite(v))) and le(v[0], v[1]) and le(v[1], v[2])
            rows.append({"dataset": ds, "algo": "knn", "finding": "audit<=exact<=di", "adversary": adv, "case": "worst",
                         "values": " ≤ ".join(f"{k}={x:.4g}" for k, x in vals), "holds": ok, "at_floor": at_floor(v[:1]), "note": ""})
        for col in columns:
            f = knn_findings(summary[summary["dataset"] == ds], column=col, case="worst", **kwargs)
            name = "audit" if col == "two_cut_cp" else col
            for r in f.itertuples():
                holds = r.holds
                missing = isinstance(holds, float) and np.isnan(holds)
                adv = {"theory >> audits": "all", "advq similar": "nat-advq+pois-advq", "advq > natq": "advq+pois-natq",
                       "embedding >= test/train": "pois-natq-embedding+test+train"}[r.finding]
                vals = [r.lhs, r.rhs]
                tie = (not missing and not bool(holds) and np.all(np.isfinite(vals))
                       and abs(r.lhs - r.rhs) <= 1e-3 * max(abs(r.lhs), abs(r.rhs)))
                rows.append({"dataset": ds, "algo": "knn", "finding": f"{r.finding} ({name})", "adversary": adv, "case": "worst",
                             "values": f"lhs={r.lhs:.4g} vs rhs={r.rhs:.4g}", "holds": False if missing else bool(holds),
                             "at_floor": at_floor(vals) if np.all(np.isfinite(vals)) else False,
                             "note": ("adversaries missing: not checked. " if missing else "")
                             + ("a tie within 0.1 % (at the zero-RDP floor, or within the Monte Carlo error of a mixture exact): fails the strict comparison. " if tie else "")
                             + str(r.detail)})
    return pd.DataFrame(rows, columns=list(FINDINGS_COLUMNS))


#: Paper-scale text datasets (App. D.3), downloaded with pinned checksums by
#: :func:`ppaudit.data.load_text_dataset` (SST-2 from GLUE, AG News from Zhang et al. 2015).
TEXT_DOWNLOAD_DATASETS = ("sst2", "agnews")
