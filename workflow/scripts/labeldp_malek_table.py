"""Snakemake script of rules tabulate_malek_table5 / tabulate_malek_table6 (Malek et al. 2021, App. C–D).

One row per (level, setting / algorithm, estimator): ``estimator`` ``paper`` (the authors'
memorization-game estimator, ``procedure = paper``), ``ours_normal`` (Kish effective size) and
``ours_cp`` (Clopper–Pearson, corrected for the choice of τ) — ``procedure = ours``; see
:func:`ppaudit.experiments.labeldp_tables.memorization_rows`. Next to the interval: the test
accuracy of the model and the paper's, and the memorisation rate of the mislabelled canaries
(the fraction whose argmax is the canary label), the property the game relies on.

Inputs: ``runs`` (npz of train_memorization_model), ``paper_numbers``
(workflow/data/paper_numbers.csv: the paper's interval ends and accuracies). Params: table ("malek_table5"/"malek_table6"),
levels ({level: {alibi: ε, agibi: ε}}), games, confidence. Outputs: csv, md.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_malek")  # noqa: F821

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.experiments.labeldp_tables import memorization_rows, paper_strings, read_paper_number_strings  # noqa: E402
from ppaudit.io import atomic_path, write_csv  # noqa: E402

p = snakemake.params  # noqa: F821
runs = {Path(f).stem: np.load(f) for f in snakemake.input.runs}  # noqa: F821


def ci(names):
    conf = np.concatenate([runs[n]["confidences"] for n in names])
    yc = np.concatenate([runs[n]["canary_labels"] for n in names])
    yo = np.concatenate([runs[n]["original_labels"] for n in names])
    ya = np.concatenate([runs[n]["alternative_labels"] for n in names])
    extra = dict(num_canaries=len(yc), canary_memorisation_rate=float(np.mean(conf.argmax(1) == yc)),
                 test_accuracy=float(np.mean([runs[x]["test_accuracy"] for x in names])),
                 alibi_prior=str(runs[names[0]]["alibi_prior"]) if "alibi_prior" in runs[names[0]] else "")  # fmt: skip
    return memorization_rows(conf, yc, yo, p.confidence, alternative_labels=ya), extra


rows = []
for level, eps in p.levels.items():
    if p.table == "malek_table5":
        for setting, names in (("1000", [f"alibi_eps{eps['alibi']}_n1000"]), ("10x100", [f"alibi_eps{eps['alibi']}_g{i}" for i in range(p.games)])):
            est_rows, extra = ci(names)
            for r in est_rows:
                rows.append(dict(level=level, algorithm="ALIBI", epsilon=float(eps["alibi"]), canaries=setting, **extra, **r))
    else:
        for algo in ("alibi", "agibi"):
            name = f"{algo}_eps{eps[algo]}_n1000"
            est_rows, extra = ci([name])
            sigma = float(runs[name]["sigma"]) if "sigma" in runs[name] else float("nan")
            cal = str(runs[name]["agibi_calibration"]) if "agibi_calibration" in runs[name] else ""
            for r in est_rows:
                rows.append(dict(level=level, algorithm=algo.upper(), epsilon=float(eps[algo]), **extra, sigma=sigma, agibi_calibration=cal, **r))
table = pd.DataFrame(rows)
table["test_accuracy_pct"] = 100 * table["test_accuracy"]
# The paper's numbers (workflow/data/paper_numbers.csv) point at the `paper` estimator's row of
# each setting; every estimator's row of that setting shows them.
numbers = read_paper_number_strings(snakemake.input.paper_numbers)  # noqa: F821
result_file = f"results/tables/labeldp/{p.table}.csv"
key = ["level", "canaries"] if p.table == "malek_table5" else ["level", "algorithm"]
first = table[table["estimator"] == "paper"]
lo = paper_strings(first, numbers, result_file, "epsilon_m_low")
hi = paper_strings(first, numbers, result_file, "epsilon_m_high")
acc = paper_strings(first, numbers, result_file, "test_accuracy_pct")
by_key = {tuple(first.loc[i, key]): (f"{lo[i]}–{hi[i]}" if lo[i] and hi[i] else "", acc[i]) for i in first.index}
table["paper"] = [by_key.get(tuple(r), ("", ""))[0] for r in table[key].itertuples(index=False)]
if p.table == "malek_table6":
    table["paper_accuracy"] = [by_key.get(tuple(r), ("", ""))[1] for r in table[key].itertuples(index=False)]
if p.table == "malek_table5":
    # Table 5's check: one game with N canaries and `games` games with N / games agree
    # (their intervals overlap), per estimator.
    table["intervals_overlap"] = False
    for _, g in table.groupby(["level", "estimator"], sort=False):
        a, b = g.iloc[0], g.iloc[1]
        table.loc[g.index, "intervals_overlap"] = bool(max(a.epsilon_m_low, b.epsilon_m_low) <= min(a.epsilon_m_high, b.epsilon_m_high))
    table["intervals_overlap"] = table["intervals_overlap"].astype(bool)
log.info("\n%s", table.to_string(index=False))
write_csv(table, snakemake.output.csv)  # noqa: F821
with atomic_path(snakemake.output.md) as tmp:  # noqa: F821
    tmp.write_text(f"# {p.title}\n\n" + table.to_markdown(index=False) + "\n")
