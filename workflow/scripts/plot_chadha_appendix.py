"""Snakemake script of rule plot_chadha_appendix (Figs. 7–31, App. E.1–E.4): ε bars per dataset
(theory, exact, 2-cut and k-cut audits) for one mechanism, adversary and case, plus the composed
RDP against the order on one dataset.

PATE/CaPC (Figs. 7–16), PromptPATE (17–24) and Private-kNN (25–31) alike: what differs between
the figures comes from their rows of workflow/figures.yaml (``params.figure``: mechanism,
adversary, variant, case, summary, keep_default_na, columns, title) and is passed to
ppaudit.plots.appendix.appendix_figure.

Inputs: ``summary`` (the row's summary CSV), ``rdp`` (composed RDP per candidate of the panel
dataset). Params: figure, panel_dataset, floor, setting.
Output csv: panel (``bars`` or ``rdp``), dataset, bar, order, value.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.plots.style import write_figure_outputs  # noqa: E402
from ppaudit.plots.appendix import appendix_figure  # noqa: E402

p = snakemake.params  # noqa: F821
f = p.figure
summary = pd.read_csv(snakemake.input.summary, keep_default_na=f["keep_default_na"])  # noqa: F821
rdp = pd.read_csv(snakemake.input.rdp, keep_default_na=f["keep_default_na"])  # noqa: F821
fig, plotted = appendix_figure(
    summary, rdp, adversary=f["adversary"], case=f["case"], panel_dataset=p.panel_dataset, title=f["title"],
    variant=f["variant"], columns=f["columns"], setting=p.setting, floor=p.floor,
)  # fmt: skip
log.info("plotted:\n%s", plotted.to_string(index=False))
write_figure_outputs(fig, plotted, snakemake.output)  # noqa: F821
