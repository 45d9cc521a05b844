"""Malek et al. 2021, App. C Table 5 and App. D Table 6: ε_m intervals of the memorisation game, with the paper's numbers.

Each run of the memorisation game (Game 3 of App. B; rule ``train_memorization_models``)
leaves the model's probabilities on its mislabelled canaries. :func:`malek_table` turns the
runs of one table into its rows:

* **Table 5** (App. C) — ALIBI at each accuracy level: one game with N canaries (``1000``)
  against ``games`` games of N/``games`` canaries concatenated (``10x100``), and whether the
  two intervals overlap (``intervals_overlap``, per estimator: the paper's check).
* **Table 6** (App. D) — ALIBI against AGIBI at the paper's accuracy-matched ε pairs, with
  AGIBI's σ and calibration and the paper's test accuracy (``paper_accuracy``). The paper's
  accuracies are ALIBI's and AGIBI's on CIFAR-10 without canaries ("ALIBI performance from
  Table 1"); the game's model carries its N mislabelled canaries (1,000 of the game's
  ``train_size`` points: 20 % at the default 5,000, against 1,000 of 50,000 = 2 % in the paper).
  So an ALIBI row also gives ``test_accuracy_small_games``: the mean test accuracy of the same
  ε's ``games`` small games of Table 5 (N/``games`` canaries each, the paper's share at the
  default), and its ``stand_in_measure`` quotes it; AGIBI has no small games (NaN).

Every setting has one row per estimator of
:func:`ppaudit.experiments.labeldp_tables.memorization_rows` (``paper``: the authors'
estimator, ``procedure = paper``; ``ours_normal`` and ``ours_cp``: ``procedure = ours``), and
next to the interval the properties the game relies on: the model's test accuracy and the
memorisation rate of the mislabelled canaries (the share whose argmax is the canary label), also
as the text ``stand_in_measure`` that :mod:`ppaudit.experiments.paper_comparison` quotes beside a
row more than 2× from the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .tables import memorization_rows, paper_strings

__all__ = ["MALEK_TABLES", "malek_table"]

#: The two tables and the key columns that identify a setting in each.
MALEK_TABLES = {"malek_table5": ("level", "canaries"), "malek_table6": ("level", "algorithm")}


def _pooled(runs: Mapping[str, Mapping[str, Any]], names: Sequence[str], confidence: float) -> tuple[list[dict], dict]:
    """Estimator rows and the stand-in's properties of the canaries of ``names`` concatenated."""
    missing = [n for n in names if n not in runs]
    if missing:
        raise ValueError(f"memorisation runs {missing} are missing (have {sorted(runs)})")
    conf = np.concatenate([runs[n]["confidences"] for n in names])
    yc = np.concatenate([runs[n]["canary_labels"] for n in names])
    yo = np.concatenate([runs[n]["original_labels"] for n in names])
    ya = np.concatenate([runs[n]["alternative_labels"] for n in names])
    first = runs[names[0]]
    extra = dict(num_canaries=len(yc), canary_memorisation_rate=float(np.mean(conf.argmax(1) == yc)),
                 test_accuracy=float(np.mean([runs[x]["test_accuracy"] for x in names])),
                 alibi_prior=str(first["alibi_prior"]) if "alibi_prior" in first else "")  # fmt: skip
    return memorization_rows(conf, yc, yo, confidence, alternative_labels=ya), extra


def malek_table(
    runs: Mapping[str, Mapping[str, Any]],
    table: str,
    levels: Mapping[str, Mapping[str, str]],
    games: int,
    confidence: float,
    paper_numbers: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Rows of Malek et al. 2021 Table 5 (App. C) or Table 6 (App. D) from memorisation runs.

    Args:
        runs: ``{run name: arrays}`` with run names ``{algo}_eps{ε}_n1000`` (one game) and
            ``alibi_eps{ε}_g{i}`` (Table 5's small games); each holds ``confidences``
            (``(N, C)`` probabilities on the canaries), ``canary_labels``,
            ``original_labels``, ``alternative_labels``, ``test_accuracy`` and optionally
            ``alibi_prior``, ``sigma``, ``agibi_calibration`` (an ``np.load`` of the run's
            ``.npz`` works).
        table: ``malek_table5`` or ``malek_table6``.
        levels: ``{level: {"alibi": ε text, "agibi": ε text}}`` (ε as written in run names).
        games: number of small games of Table 5.
        confidence: confidence of the ε_m intervals.
        paper_numbers: ``workflow/data/paper_numbers.csv`` as strings
            (:func:`ppaudit.experiments.labeldp_tables.read_paper_number_strings`); the
            paper's interval (column ``paper``, ``"lo–hi"``) and, for Table 6, test accuracy
            (``paper_accuracy``) are looked up at the ``paper`` estimator's row of each
            setting and shown on every estimator's row of it.

    Returns:
        One row per (level, setting, estimator); Table 5 adds ``intervals_overlap``.

    Raises:
        ValueError: for an unknown ``table`` or a missing run.
    """
    if table not in MALEK_TABLES:
        raise ValueError(f"table must be one of {sorted(MALEK_TABLES)}, got {table!r}")
    rows = []
    for level, eps in levels.items():
        if table == "malek_table5":
            settings = (("1000", [f"alibi_eps{eps['alibi']}_n1000"]), ("10x100", [f"alibi_eps{eps['alibi']}_g{i}" for i in range(games)]))
            for setting, names in settings:
                est_rows, extra = _pooled(runs, names, confidence)
                for r in est_rows:
                    rows.append(dict(level=level, algorithm="ALIBI", epsilon=float(eps["alibi"]), canaries=setting, **extra, **r))
        else:
            for algo in ("alibi", "agibi"):
                name = f"{algo}_eps{eps[algo]}_n1000"
                est_rows, extra = _pooled(runs, [name], confidence)
                sigma = float(runs[name]["sigma"]) if "sigma" in runs[name] else float("nan")
                cal = str(runs[name]["agibi_calibration"]) if "agibi_calibration" in runs[name] else ""
                small = [f"alibi_eps{eps['alibi']}_g{i}" for i in range(games)] if algo == "alibi" else []
                have = bool(small) and all(x in runs for x in small)
                small_acc = float(np.mean([runs[x]["test_accuracy"] for x in small])) if have else float("nan")
                small_n = len(runs[small[0]]["canary_labels"]) if have else 0
                for r in est_rows:
                    rows.append(dict(level=level, algorithm=algo.upper(), epsilon=float(eps[algo]), **extra, sigma=sigma, agibi_calibration=cal,
                                     test_accuracy_small_games=small_acc, small_game_canaries=small_n, **r))  # fmt: skip
    out = pd.DataFrame(rows)
    out["test_accuracy_pct"] = 100 * out["test_accuracy"]
    # what the stand-in's game measured (paper_comparison quotes it beside a row far from the paper)
    # Table 6's ALIBI rows add the same model with a tenth of the canaries (Table 5's small games): how much
    # of the accuracy gap the canaries themselves cost (1,000 among the game's points, the paper's 2 %).
    out["stand_in_measure"] = [f"memorisation-game model: test accuracy {100 * r.test_accuracy:.1f} %, mislabelled canaries memorised "
                               f"{100 * r.canary_memorisation_rate:.0f} % (argmax = canary label, {int(r.num_canaries)} canaries); "
                               f"{int(r.num_correct)} of {int(r.num_guesses)} guesses right at the chosen threshold"
                               + (f"; with {r.small_game_canaries} canaries per game ({games} games, Table 5) the same MLP reaches "
                                  f"{100 * r.test_accuracy_small_games:.1f} % test accuracy"
                                  if table == "malek_table6" and np.isfinite(r.test_accuracy_small_games) else "")
                               for r in out.itertuples()]  # fmt: skip
    result_file = f"results/tables/labeldp/{table}.csv"
    key = list(MALEK_TABLES[table])
    first = out[out["estimator"] == "paper"]
    lo = paper_strings(first, paper_numbers, result_file, "epsilon_m_low")
    hi = paper_strings(first, paper_numbers, result_file, "epsilon_m_high")
    acc = paper_strings(first, paper_numbers, result_file, "test_accuracy_pct")
    by_key = {tuple(first.loc[i, key]): (f"{lo[i]}–{hi[i]}" if lo[i] and hi[i] else "", acc[i]) for i in first.index}
    out["paper"] = [by_key.get(tuple(r), ("", ""))[0] for r in out[key].itertuples(index=False)]
    if table == "malek_table6":
        out["paper_accuracy"] = [by_key.get(tuple(r), ("", ""))[1] for r in out[key].itertuples(index=False)]
    else:
        # Table 5's check: one game with N canaries and `games` games with N / games agree
        # (their intervals overlap), per estimator.
        out["intervals_overlap"] = False
        for _, g in out.groupby(["level", "estimator"], sort=False):
            a, b = g.iloc[0], g.iloc[1]
            out.loc[g.index, "intervals_overlap"] = bool(max(a.epsilon_m_low, b.epsilon_m_low) <= min(a.epsilon_m_high, b.epsilon_m_high))
        out["intervals_overlap"] = out["intervals_overlap"].astype(bool)
    return out
