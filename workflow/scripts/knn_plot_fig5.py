"""Snakemake script of rule plot_chadha_fig5 (Fig. 5, §6): worst-case ε at δ per dataset.

Left: data-independent theory and the 2-cut audit of every adversary; right: the Pois-NatQ
poisons from the test set, the train set and the embedding space. Input: ``summary`` (every
kNN summary). Params: floor, labels (adversary → legend label), title.
Output csv: panel, dataset, bar, adversary, column, epsilon (audit, exact and theory).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.knn import plot_knn_fig5  # noqa: E402

p = snakemake.params  # noqa: F821
labels = dict(p.labels)
s = pd.read_csv(snakemake.input.summary)  # noqa: F821
s = s[s["case"] == "worst"]
panels = {"left": list(labels), "right": ["pois-natq-test", "pois-natq-train", "pois-natq-embedding"]}
rows = []
for ds, g in s.groupby("dataset", sort=False):
    get = lambda adv, col: g.loc[(g["adversary"] == adv) & (g["column"] == col), "epsilon"]  # noqa: E731
    di = get(g["adversary"].iloc[0], "data_independent")
    rows.append({"panel": "left", "dataset": ds, "bar": "data-independent theory", "adversary": "", "column": "data_independent", "epsilon": float(di.iloc[0])})
    for panel, advs in panels.items():
        for adv in advs:
            for col in ("two_cut_cp", "exact"):
                v = get(adv, col)
                if len(v):
                    rows.append({"panel": panel, "dataset": ds, "bar": labels[adv], "adversary": adv, "column": col, "epsilon": float(v.iloc[0])})
table = pd.DataFrame(rows)
log.info("plotted:\n%s", table.to_string(index=False))
fig = plot_knn_fig5(table, p.title, floor=p.floor)
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(table, snakemake.output.csv)  # noqa: F821
