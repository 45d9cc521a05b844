"""Figures of Wang et al. 2022 (vote-histogram leakage). Each ``plot_*`` function returns
``(figure, DataFrame)``; the DataFrame holds every plotted number (written as the CSV). The
data shaping between a rule's inputs and a plot (consensus levels of Fig. 3, the two
variants of Fig. 1, the titles of Figs. 6/7) lives here too, so the scripts only read and
write files."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402
import pandas as pd  # noqa: E402

__all__ = [
    "consensus_levels",
    "error_per_sigma_title",
    "phd_consensus_summaries",
    "plot_consensus_distribution",
    "plot_budget_errors",
    "plot_error_vs_cost",
    "plot_error_per_sigma",
    "plot_phd_consensus",
    "plot_caching_defence",
    "pate_caching_epsilons",
]

LEVEL_COLOURS = {"low": "tab:red", "medium": "tab:orange", "high": "tab:green"}


def consensus_levels(histograms: Mapping[str, np.ndarray]) -> dict:
    """Fig. 3's data: per dataset the max vote share and consensus tertile of each histogram.

    Args:
        histograms: dataset title → vote histograms ``(K, C)`` of one PATE instantiation
            (rule train_wang_teachers).

    Returns:
        dataset title → ``(shares (K,), levels (K,) in {0, 1, 2})``: consensus as the top
        vote share and the equal-sized low/medium/high groups of Wang et al. 2022, §4.1
        (:func:`ppaudit.attacks.histogram.max_vote_share`,
        :func:`ppaudit.attacks.histogram.consensus_tertiles`), the input of
        :func:`plot_consensus_distribution`.

    Raises:
        ValueError: if ``histograms`` is empty, or (from the attacks module) on a histogram
            array that is not ``(K, C)`` with votes.
    """
    from ..attacks.histogram import consensus_tertiles, max_vote_share

    if not histograms:
        raise ValueError("consensus_levels needs at least one dataset, got none")
    return {title: (max_vote_share(h), consensus_tertiles(h)) for title, h in histograms.items()}


def phd_consensus_summaries(consensus: pd.DataFrame, threshold: float) -> dict:
    """Fig. 1's two variants: the PhD-detection rule on true and on reconstructed histograms.

    Args:
        consensus: rule attack_adult_histograms' table (columns ``phd``, ``consensus_true``,
            ``consensus_reconstructed``, ``sigma``, ``num_queries``).
        threshold: consensus below it is flagged as PhD (Wang et al. 2022, §2: 0.75).

    Returns:
        variant title → :func:`ppaudit.experiments.wang2022.adult.consensus_rule_summary`,
        direct access first, then the histograms reconstructed from the noisy answers (App. E),
        the input of :func:`plot_phd_consensus`.

    Raises:
        ValueError: naming the missing columns, or a ``threshold`` outside ``(0, 1]``.
    """
    from ..experiments.wang2022.adult import consensus_rule_summary

    missing = [c for c in ("phd", "consensus_true", "consensus_reconstructed", "sigma", "num_queries") if c not in consensus]
    if missing:
        raise ValueError(f"consensus table lacks column(s) {missing}")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    reconstructed = f"reconstructed from {consensus['num_queries'].iloc[0]} noisy answers (σ = {consensus['sigma'].iloc[0]:g})"
    return {
        "vote histograms (direct access)": consensus_rule_summary(consensus["consensus_true"], consensus["phd"], threshold),
        reconstructed: consensus_rule_summary(consensus["consensus_reconstructed"], consensus["phd"], threshold),
    }


def error_per_sigma_title(dataset_title: str, attacks: pd.DataFrame, num_queries: int) -> str:
    """Axes title of Fig. 6 or 7 (Wang et al. 2022, §4.2): dataset, histograms drawn, queries.

    Args:
        dataset_title: e.g. ``MNIST``.
        attacks: rule attack_wang_histograms' rows of the dataset (column ``label``: L1…H5).
        num_queries: queries of the query-limited attacker (wang2022.attack.num_queries).

    Returns:
        The title passed to :func:`plot_error_per_sigma`.

    Raises:
        ValueError: if ``attacks`` has no ``label`` column.
    """
    if "label" not in attacks:
        raise ValueError(f"attacks table lacks column 'label' (columns: {list(attacks.columns)})")
    return (
        f"{dataset_title}: error of the {attacks['label'].nunique()} L/M/H histograms with {num_queries} queries "
        "(bars) and privacy cost (red, right axis)"
    )


def plot_consensus_distribution(data: dict, bins: int = 20):
    """Fig. 3: histogram of max vote share per dataset; dashed lines at the tertile cuts.

    ``data``: dataset title → ``(shares (K,), levels (K,) in {0,1,2})``.
    """
    fig, axes = plt.subplots(1, len(data), figsize=(5 * len(data), 3.6), squeeze=False)
    rows = []
    edges = np.linspace(0, 1, bins + 1)
    for ax, (name, (shares, levels)) in zip(axes[0], data.items()):
        counts, _ = np.histogram(shares, bins=edges)
        ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="tab:blue", edgecolor="white")
        cuts = [float(np.max(shares[levels == 0])), float(np.max(shares[levels == 1]))]
        for q, c in zip(("33.3%", "66.7%"), cuts):
            ax.axvline(c, color="red", ls="--", lw=1.2)
            rows.append({"dataset": name, "kind": "tertile_cut", "quantile": q, "value": c, "bin_lo": np.nan, "bin_hi": np.nan, "count": np.nan})
        for lo, hi, n in zip(edges[:-1], edges[1:], counts):
            rows.append({"dataset": name, "kind": "bin", "quantile": "", "value": np.nan, "bin_lo": lo, "bin_hi": hi, "count": int(n)})
        for lev, lab in enumerate(("low", "medium", "high")):
            rows.append({"dataset": name, "kind": f"level_size_{lab}", "quantile": "", "value": int(np.sum(levels == lev)), "bin_lo": np.nan, "bin_hi": np.nan, "count": np.nan})
        ax.set_title(f"{name}: {len(shares)} histograms")
        ax.set_xlabel("consensus (top-agreed label share)")
        ax.set_ylabel("number of histograms")
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def _labels_colours(df):
    return list(df["label"]), [LEVEL_COLOURS.get(v, "grey") for v in df["level"]]


def _procedures(df: pd.DataFrame) -> list:
    """Solvers present (``procedure`` column: paper / ours), paper first; ``["ours"]`` for
    rows from before the column existed."""
    if "procedure" not in df:
        return ["ours"]
    present = list(dict.fromkeys(df["procedure"]))
    return [p for p in ("paper", "ours") if p in present] + [p for p in present if p not in ("paper", "ours")]


def _with_procedure(df: pd.DataFrame) -> pd.DataFrame:
    out = df if "procedure" in df else df.assign(procedure="ours")
    if "accountant" not in out:
        out = out.assign(accountant="gnmax")
    if "num_answered" not in out:
        out = out.assign(num_answered=out["num_queries"])
    return out


PROCEDURE_NAMES = {"paper": "paper's solver (Alg. 2 gradient descent)", "ours": "our solver (constrained Gauss–Newton)"}
PROCEDURE_HATCH = {"paper": "//", "ours": None}


def plot_budget_errors(data: dict):
    """Fig. 4: error per histogram of the budget-limited attacker, one panel per dataset,
    one bar per solver (``procedure``: paper hatched, ours solid) on the same answers.

    ``data``: dataset title → attack rows (those with ``attack == "budget"`` are plotted).
    """
    fig, axes = plt.subplots(1, len(data), figsize=(6.5 * len(data), 3.9), squeeze=False)
    out = []
    for ax, (name, df) in zip(axes[0], data.items()):
        df = _with_procedure(df[df["attack"] == "budget"])
        procs = _procedures(df)
        width = 0.8 / len(procs)
        labels = list(dict.fromkeys(df["label"]))
        means = []
        for j, proc in enumerate(procs):
            d = df[df["procedure"] == proc].set_index("label").reindex(labels).reset_index()
            _, colours = _labels_colours(d)
            x = np.arange(len(labels)) + (j - (len(procs) - 1) / 2) * width
            ax.bar(x, d["error"], width=width, color=colours, hatch=PROCEDURE_HATCH.get(proc), edgecolor="black", lw=0.3,
                   label=PROCEDURE_NAMES.get(proc, proc))
            means.append(f"{proc} {d['error'].mean():.3f}")
            out.append(d.assign(dataset=name)[["dataset", "procedure", "accountant", "label", "level", "sigma", "budget", "delta",
                                               "num_queries", "num_answered", "privacy_cost", "error"]])
        first = df[df["procedure"] == procs[0]].set_index("label").reindex(labels)
        for i, (m, a) in enumerate(zip(first["num_queries"], first["num_answered"])):
            ax.annotate(f"{int(m):,}/{int(a):,}", (i, float(df["error"].max())), ha="center", va="bottom", fontsize=5, rotation=90)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=8)
        budget, delta, sigma, acc = df["budget"].iloc[0], df["delta"].iloc[0], df["sigma"].iloc[0], df["accountant"].iloc[0]
        ax.set_title(f"{name}: budget ε = {budget:g} (δ = {delta:g}), σ = {sigma:g}, accountant {acc}\n"
                     f"mean error: {', '.join(means)}; numbers: queries submitted/answered", fontsize=9)
        ax.set_ylabel("error rate (normalised L1)")
        ax.set_ylim(0, 1.5 * float(df["error"].max()) + 1e-9)
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig, pd.concat(out, ignore_index=True)


def plot_error_vs_cost(data: dict):
    """Fig. 5: error vs privacy cost of the 10^4-query attacks (each histogram and σ), with
    the mean per (dataset, σ) as large markers; one panel per solver (``procedure``)."""
    frames = {name: _with_procedure(df[df["attack"] == "query_limit"]) for name, df in data.items()}
    procs = _procedures(pd.concat(frames.values(), ignore_index=True))
    fig, axes = plt.subplots(1, len(procs), figsize=(6 * len(procs), 4.4), squeeze=False)
    markers = ["o", "s", "^", "D"]
    out = []
    for ax, proc in zip(axes[0], procs):
        rows = []
        for (name, df), mk in zip(frames.items(), markers):
            df = df[df["procedure"] == proc]
            sigmas = sorted(df["sigma"].unique())
            cmap = plt.get_cmap("viridis", max(len(sigmas), 1))
            for j, s in enumerate(sigmas):
                d = df[df["sigma"] == s]
                ax.scatter(d["privacy_cost"], d["error"], s=12, marker=mk, color=cmap(j), alpha=0.45)
                ax.scatter(d["privacy_cost"].mean(), d["error"].mean(), s=90, marker=mk, color=cmap(j), edgecolor="black", label=f"{name}, σ = {s:g} (mean)")
                rows.append(d.assign(dataset=name, point="histogram")[["dataset", "procedure", "point", "label", "sigma", "privacy_cost", "error"]])
                rows.append(pd.DataFrame([{"dataset": name, "procedure": proc, "point": "mean", "label": "", "sigma": s,
                                           "privacy_cost": d["privacy_cost"].mean(), "error": d["error"].mean()}]))
        res = pd.concat(rows, ignore_index=True)
        pts = res[res["point"] == "histogram"]
        rho = pts[["privacy_cost", "error"]].corr(method="spearman").iloc[0, 1] if len(pts) > 1 else float("nan")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("privacy cost ε of the attack (10^4 queries)")
        ax.set_ylabel("error rate (normalised L1)")
        ax.set_title(f"{PROCEDURE_NAMES.get(proc, proc)}\nerror vs privacy cost (Spearman ρ = {rho:.2f})", fontsize=9)
        ax.legend(fontsize=6, ncol=2)
        out.append(res)
    fig.tight_layout()
    return fig, pd.concat(out, ignore_index=True)


def plot_error_per_sigma(df: pd.DataFrame, title: str):
    """Figs. 6/7: error per histogram and σ (bars) with 10^4 queries; privacy cost (red
    dots) on the right axis; one row of panels per solver (``procedure``)."""
    df = _with_procedure(df[df["attack"] == "query_limit"])
    procs = _procedures(df)
    sigmas = sorted(df["sigma"].unique())
    labels = list(dict.fromkeys(df["label"]))
    fig, axes = plt.subplots(len(procs), 1, figsize=(10, 3.6 * len(procs)), squeeze=False)
    width = 0.8 / len(sigmas)
    cmap = plt.get_cmap("Blues", len(sigmas) + 1)
    costs = df["privacy_cost"][df["privacy_cost"] > 0]
    for ax, proc in zip(axes[:, 0], procs):
        ax2 = ax.twinx()
        dp = df[df["procedure"] == proc]
        for j, s in enumerate(sigmas):
            d = dp[dp["sigma"] == s].set_index("label").reindex(labels)
            x = np.arange(len(labels)) + (j - (len(sigmas) - 1) / 2) * width
            ax.bar(x, d["error"], width=width, color=cmap(j + 1), label=f"σ = {s:g} (mean {d['error'].mean():.3f})")
            ax2.plot(x, d["privacy_cost"], "o", color="red", ms=3, label="privacy cost" if j == 0 else None)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_ylabel("error rate (normalised L1)")
        ax2.set_ylabel("privacy cost ε", color="red")
        ax2.set_yscale("log")
        ax.set_title(f"{title}\n{PROCEDURE_NAMES.get(proc, proc)}", fontsize=9)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.set_ylim(0, 1.35 * float(df["error"].max()) + 1e-9)
        if len(costs):
            ax2.set_ylim(costs.min() / 1.5, costs.max() * 4)  # headroom for the legend
        ax2.legend(h1 + h2, l1 + l2, fontsize=7, ncol=3, loc="upper left", framealpha=1.0)
    fig.tight_layout()
    cols = ["procedure", "accountant", "label", "level", "sigma", "num_queries", "num_answered", "delta", "error", "privacy_cost"]
    return fig, df[cols].reset_index(drop=True)


def plot_phd_consensus(summaries: dict, threshold: float):
    """Fig. 1: high vs low consensus counts of PhD / non-PhD test points, one panel per
    variant (true histograms; histograms reconstructed from noisy answers)."""
    fig, axes = plt.subplots(1, len(summaries), figsize=(5 * len(summaries), 3.6), squeeze=False)
    rows = []
    for ax, (name, s) in zip(axes[0], summaries.items()):
        groups = ["PhD", "non-PhD"]
        high = [s["phd_high"], s["nonphd_high"]]
        low = [s["phd_low"], s["nonphd_low"]]
        x = np.arange(2)
        ax.bar(x - 0.2, high, 0.4, label=f"high consensus (≥ {threshold:.0%})", color="tab:green")
        ax.bar(x + 0.2, low, 0.4, label=f"low consensus (< {threshold:.0%})", color="tab:red")
        ax.set_xticks(x, groups)
        ax.set_ylabel("test points (balanced set)")
        ax.set_title(f"{name}\nprecision of 'low consensus ⇒ PhD' = {s['precision']:.2f}", fontsize=10)
        ax.legend(fontsize=8)
        for g, hh, ll in zip(groups, high, low):
            rows.append({"variant": name, "group": g, "high_consensus": hh, "low_consensus": ll, "precision": s["precision"], "recall": s["recall"], "threshold": threshold})
    fig.tight_layout()
    return fig, pd.DataFrame(rows)


def pate_caching_epsilons(pate: pd.DataFrame) -> pd.DataFrame:
    """ε at δ per adversary and view of the fitted-model caching audit, for the candidate
    whose uncached transcript audit is largest (the worst case, as in Chadha et al. 2024
    §5.4), with the exact ε of one answer and of ``n_Q`` answers (the PATE/CaPC stage's
    exact RDP, composed over independent answers) for reference."""
    from ..accounting import rdp_to_dp

    rows = []
    for adv, d in pate.groupby("adversary", sort=False):
        no_cache = d[d["view"] == "no_cache"].groupby("candidate")["epsilon"].first()
        cand = int(no_cache.idxmax())
        c = d[d["candidate"] == cand]
        delta = float(c["delta"].iloc[0])
        n = int(c["num_repetitions"].iloc[0])
        labels = {"single_answer": "audit: 1 answer", "cache": f"audit: {n} answers, cached", "no_cache": f"audit: {n} answers, no cache"}
        for view, label in labels.items():
            rows.append({"adversary": adv, "candidate": cand, "query": int(c["query"].iloc[0]), "bar": label, "view": view,
                         "epsilon": float(c.loc[c["view"] == view, "epsilon"].iloc[0]), "num_repetitions": n})
        one = c[c["view"] == "single_answer"]
        for col, label in (("stage_exact_single", "exact: 1 answer"), ("stage_exact_composed", f"exact: {n} independent answers"),
                           ("stage_composed_audit", f"PATE/CaPC stage audit, no cache: {n} x 1 answer"),
                           ("stage_cached_audit", "PATE/CaPC stage audit, cached: 1 answer")):
            rows.append({"adversary": adv, "candidate": cand, "query": int(c["query"].iloc[0]), "bar": label, "view": col,
                         "epsilon": float(rdp_to_dp(one[col].to_numpy(), one["order"].to_numpy(), delta)), "num_repetitions": n})
    return pd.DataFrame(rows)


def plot_caching_defence(recon: pd.DataFrame, audits: pd.DataFrame, pate: pd.DataFrame | None = None, floor: float | None = None):
    """Defence (Wang §5): (a) error vs queries with/without answer caching; (b) the
    single-query 2-cut audit ``b(α)`` of Nat-AdvQ / Pois-AdvQ on a synthetic pair, with the
    no-cache curve ``n_Q · b(α)`` obtained *by composition* (not measured: the panel shows
    the composition rule, ``n_Q · b`` vs ``b``, by construction); (c) with ``pate`` (rows of
    :func:`ppaudit.experiments.wang2022.caching.caching_transcript_audit` on the PATE/CaPC stage's
    fitted models): ε of the repeated-query transcript audited with and without the cache,
    of one answer, and the exact references (:func:`pate_caching_epsilons`)."""
    ncols = 2 if pate is None else 3
    fig, axes = plt.subplots(1, ncols, figsize=(5.5 * ncols, 4 if pate is None else 5))
    a, b = axes[0], axes[1]
    for hi, d in recon.groupby("histogram"):
        colour = f"C{hi}"
        for cache, ls in ((False, "-"), (True, "--")):
            e = d[d["cache_answers"] == cache]
            a.errorbar(e["num_queries"], e["mean_error"], yerr=e["std_error"], ls=ls, color=colour, marker="o", ms=3, capsize=2, label=f"H{hi} = [{d['true'].iloc[0]}] {'cached' if cache else 'no cache'}")
        a.axhline(d["single_answer_error"].iloc[0], color=colour, ls=":", lw=1)
    a.set_xscale("log")
    a.set_xlabel("queries M of the same input")
    a.set_ylabel("reconstruction error (normalised L1)")
    a.set_title("(a) reconstruction; dotted: one-answer (no-information) level", fontsize=9)
    a.legend(fontsize=6, ncol=1)
    names = {"nat_advq": "Nat-AdvQ", "pois_advq": "Pois-AdvQ"}
    colours = {"nat_advq": "tab:blue", "pois_advq": "tab:orange"}
    for adv, d in audits.groupby("adversary"):
        n = int(d["num_repetitions"].iloc[0])
        b.plot(d["order"], d["audit_no_cache"], "-o", ms=3, color=colours[adv], label=f"{names[adv]}: n_Q · b(α), no cache, by composition (n_Q = {n})")
        b.plot(d["order"], d["audit_cache"], "--o", ms=3, color=colours[adv], label=f"{names[adv]}: b(α), cache (one 2-cut audit)")
        b.plot(d["order"], d["exact_no_cache"], ":", color=colours[adv], lw=1, label=f"{names[adv]} exact RDP × n_Q")
    b.set_xscale("log")
    b.set_yscale("log")
    b.xaxis.set_minor_formatter(NullFormatter())
    ticks = sorted(audits["order"].unique())
    b.set_xticks(ticks, [f"{t:g}" for t in ticks], fontsize=7)
    b.set_xlabel("order α")
    b.set_ylabel("RDP lower bound ε(α)")
    b.set_title("(b) by composition: n_Q · b(α) vs b(α) (not a measurement; see (c))", fontsize=9)
    b.legend(fontsize=6)
    parts = [recon.assign(panel="a_reconstruction"), audits.assign(panel="b_audit")]
    if pate is not None:
        c = axes[2]
        eps = pate_caching_epsilons(pate)
        bars = list(dict.fromkeys(eps["bar"]))
        advs = list(dict.fromkeys(eps["adversary"]))
        width = 0.8 / len(bars)
        for j, bar in enumerate(bars):
            vals = [float(eps.loc[(eps["adversary"] == adv) & (eps["bar"] == bar), "epsilon"].iloc[0]) for adv in advs]
            c.bar(np.arange(len(advs)) + (j - (len(bars) - 1) / 2) * width, vals, width, label=bar, color=f"C{j}",
                  hatch="//" if bar.startswith("exact") else None, alpha=0.6 if bar.startswith(("exact", "PATE")) else 1.0)
        if floor is not None:
            c.axhline(floor, color="grey", ls=":", lw=1, label=f"ε of a zero RDP curve ({floor:.3g})")
        names = {"nat-advq": "Nat-AdvQ", "pois-advq": "Pois-AdvQ"}
        c.set_xticks(np.arange(len(advs)), [f"{names.get(v, v)}\n(cand. {int(eps.loc[eps['adversary'] == v, 'candidate'].iloc[0])})" for v in advs], fontsize=8)
        c.set_yscale("log")
        c.set_ylabel(f"ε at δ = {float(pate['delta'].iloc[0]):g}")
        c.set_title(f"(c) {pate['algo'].iloc[0].upper()} fitted model, {pate['dataset'].iloc[0]}, σ = {float(pate['sigma'].iloc[0]):g}", fontsize=9)
        c.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
        parts.append(eps.assign(panel="c_fitted_model"))
    fig.tight_layout()
    return fig, pd.concat(parts, ignore_index=True)
