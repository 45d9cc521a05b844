"""Snakemake script of rules tabulate_malek_table5 / tabulate_malek_table6 (Malek et al. 2021, App. C–D).

Columns ``ours`` / ``epsilon_m_*``: the paper's normal interval at the best τ; ``ours_cp`` /
``cp_*``: the exact Clopper–Pearson interval corrected for the choice of τ.

Inputs: ``runs`` (npz of train_memorization_model). Params: table ("malek_table5"/"malek_table6"),
levels ({level: {alibi: ε, agibi: ε}}), games, confidence. Outputs: csv, md.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_malek")  # noqa: F821

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ppaudit.experiments.labeldp_tables import MALEK_T5, MALEK_T6, memorization_row  # noqa: E402
from ppaudit.io import atomic_path, write_csv  # noqa: E402

p = snakemake.params  # noqa: F821
runs = {Path(f).stem: np.load(f) for f in snakemake.input.runs}  # noqa: F821


def ci(names):
    conf = np.concatenate([runs[n]["confidences"] for n in names])
    yc = np.concatenate([runs[n]["canary_labels"] for n in names])
    yo = np.concatenate([runs[n]["original_labels"] for n in names])
    ya = np.concatenate([runs[n]["alternative_labels"] for n in names])
    return memorization_row(conf, yc, yo, p.confidence, alternative_labels=ya), len(yc)


rows = []
for level, eps in p.levels.items():
    if p.table == "malek_table5":
        for setting, names in (("1000", [f"alibi_eps{eps['alibi']}_n1000"]), ("10x100", [f"alibi_eps{eps['alibi']}_g{i}" for i in range(p.games)])):
            r, n = ci(names)
            rows.append(dict(level=level, algorithm="ALIBI", epsilon=float(eps["alibi"]), canaries=setting, num_canaries=n,
                             test_accuracy=float(np.mean([runs[x]["test_accuracy"] for x in names])),
                             ours=f"{r['epsilon_m_low']:.1f}–{r['epsilon_m_high']:.1f}", ours_cp=f"{r['cp_epsilon_m_low']:.1f}–{r['cp_epsilon_m_high']:.1f}", paper=MALEK_T5[(level, setting)], **r))  # fmt: skip
    else:
        for algo in ("alibi", "agibi"):
            name = f"{algo}_eps{eps[algo]}_n1000"
            r, n = ci([name])
            pa = MALEK_T6[(level, algo)]
            rows.append(dict(level=level, algorithm=algo.upper(), epsilon=float(eps[algo]), num_canaries=n,
                             test_accuracy=float(runs[name]["test_accuracy"]), ours=f"{r['epsilon_m_low']:.1f}–{r['epsilon_m_high']:.1f}",
                             ours_cp=f"{r['cp_epsilon_m_low']:.1f}–{r['cp_epsilon_m_high']:.1f}",
                             paper_accuracy=pa[0], paper_epsilon=pa[1], paper=pa[2], **r))  # fmt: skip
table = pd.DataFrame(rows)
if p.table == "malek_table5":
    # Table 5's check: one game with N canaries and `games` games with N / games agree
    # (their normal intervals overlap; so do the Clopper–Pearson ones).
    for level, g in table.groupby("level", sort=False):
        a, b = g.iloc[0], g.iloc[1]
        table.loc[g.index, "intervals_overlap"] = bool(max(a.epsilon_m_low, b.epsilon_m_low) <= min(a.epsilon_m_high, b.epsilon_m_high))
        table.loc[g.index, "cp_intervals_overlap"] = bool(max(a.cp_epsilon_m_low, b.cp_epsilon_m_low) <= min(a.cp_epsilon_m_high, b.cp_epsilon_m_high))
log.info("\n%s", table.to_string(index=False))
write_csv(table, snakemake.output.csv)  # noqa: F821
with atomic_path(snakemake.output.md) as tmp:  # noqa: F821
    tmp.write_text(f"# {p.title}\n\n" + table.to_markdown(index=False) + "\n")
