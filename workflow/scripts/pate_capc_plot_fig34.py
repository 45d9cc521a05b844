"""Snakemake script of rules plot_chadha_fig34 (Figs. 3 and 4): ε at δ, worst case, one panel
per algorithm.

Input: ``summaries`` — a list of per-algorithm summary CSVs (columns algo, dataset,
adversary, case, column, epsilon; PromptPATE adds its own to the list). Params:
``adversaries`` (Fig. 3: nat-advq, pois-advq; Fig. 4: pois-natq), ``floor``, ``title``.
Outputs: pdf, png, csv (algo, dataset, bar, adversary, column, epsilon).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.pate_capc import plot_leakage_panels  # noqa: E402

LABEL = {"nat-advq": "Nat-AdvQ", "pois-advq": "Pois-AdvQ", "pois-natq": "Pois-NatQ"}
p = snakemake.params  # noqa: F821
advs = list(p.adversaries)
rows = []
for path in snakemake.input.summaries:  # noqa: F821
    s = pd.read_csv(path)
    s = s[(s["case"] == "worst") & s["adversary"].isin(advs)]
    for (algo, ds), g in s.groupby(["algo", "dataset"], sort=False):
        get = lambda adv, col: g.loc[(g["adversary"] == adv) & (g["column"] == col), "epsilon"]  # noqa: E731
        di = get(advs[0], "data_independent")
        if len(di):
            rows.append({"algo": algo, "dataset": ds, "bar": "data-independent theory", "adversary": advs[0], "column": "data_independent", "epsilon": float(di.iloc[0])})
        tag = (lambda a: f" ({LABEL.get(a, a)})") if len(advs) > 1 else (lambda a: "")
        for col, name in (("data_dependent", "data-dependent theory"), ("exact", "exact")):
            for adv in advs:
                v = get(adv, col)
                if len(v):
                    rows.append({"algo": algo, "dataset": ds, "bar": name + tag(adv), "adversary": adv, "column": col, "epsilon": float(v.iloc[0])})
        for adv in advs:
            v = get(adv, "two_cut_cp")
            if len(v):
                rows.append({"algo": algo, "dataset": ds, "bar": f"2-cut audit {LABEL.get(adv, adv)}", "adversary": adv, "column": "two_cut_cp", "epsilon": float(v.iloc[0])})
table = pd.DataFrame(rows)
log.info("plotted:\n%s", table.to_string(index=False))
fig = plot_leakage_panels(table, p.title, floor=p.floor)
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(table, snakemake.output.csv)  # noqa: F821
