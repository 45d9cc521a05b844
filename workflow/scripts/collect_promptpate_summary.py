"""Rule collect_promptpate_summary: the PromptPATE panel of Figs. 3/4.

``variants``: every audit summary (all datasets, adversaries and Pois-NatQ variants, with
the columns ``variant`` and ``best_variant``). ``summary``: the columns of the PATE/CaPC
summaries exactly, one row per (dataset, adversary, case, column): Nat-AdvQ and Pois-AdvQ
as audited; Pois-NatQ = the variant ``params.fig4_variant`` — ``best`` (default) is the
variant whose worst-case 2-cut audit leaks most (§5.3: "report the leakage due to the best
adversary for each dataset"); which one it was is in ``variants`` (``best_variant``) and
in the log.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import write_csv  # noqa: E402

COLUMNS = ["algo", "dataset", "model", "adversary", "sigma", "num_teachers", "trials", "num_queries", "source", "delta",
           "eps_floor", "case", "column", "epsilon", "candidate"]
variants = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in snakemake.input.summaries], ignore_index=True)  # noqa: F821
variants["best_variant"] = variants["best_variant"].fillna("")
fig4 = snakemake.params.fig4_variant  # noqa: F821
advq = variants[variants["adversary"] != "pois-natq"]
natq = variants[(variants["adversary"] == "pois-natq") & (variants["variant"] == fig4)]
summary = pd.concat([advq, natq], ignore_index=True)[COLUMNS]
dup = summary.duplicated(["dataset", "adversary", "case", "column"])
if dup.any():
    raise ValueError(f"more than one row per (dataset, adversary, case, column):\n{summary[dup]}")
for ds, g in natq.groupby("dataset"):
    log.info("%s: Pois-NatQ variant in Figs. 3/4 = %s (%s)", ds, fig4, ", ".join(sorted(set(g["best_variant"]) - {""})) or fig4)
log.info("summary (%d rows):\n%s", len(summary), summary[summary["case"] == "worst"].to_string(index=False))
write_csv(variants, snakemake.output.variants)  # noqa: F821
write_csv(summary, snakemake.output.summary)  # noqa: F821
