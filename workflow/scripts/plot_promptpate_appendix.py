"""Rule plot_promptpate_appendix (Figs. 17–24, App. E.3): ε bars per dataset
(theory, exact, 2-cut and k-cut audits) for one PromptPATE adversary (Pois-NatQ: one of its
four prompts) and case, plus the composed RDP against the order on one dataset.

Inputs: ``variants`` (every PromptPATE audit summary, with ``variant``), ``rdp`` (composed
RDP per candidate of the panel dataset and adversary). Params: adversary, variant ("-" for
AdvQ), case, panel_dataset, floor, title, model, num_teachers, num_queries, sigma.
Output csv: panel (``bars`` or ``rdp``), dataset, bar / order, value (as Figs. 7–16).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.io import save_figure, write_csv  # noqa: E402
from ppaudit.plots.pate_capc import appendix_panels, plot_appendix_figure  # noqa: E402

p = snakemake.params  # noqa: F821
s = pd.read_csv(snakemake.input.variants, keep_default_na=False)  # noqa: F821
s = s[(s["adversary"] == p.adversary) & (s["variant"] == p.variant) & (s["case"] == p.case)]
if s.empty:
    raise ValueError(f"no {p.case}-case rows for adversary {p.adversary!r}, variant {p.variant!r} in {snakemake.input.variants}")  # noqa: F821
rdp = pd.read_csv(snakemake.input.rdp, keep_default_na=False)  # noqa: F821
bars, curve, which, plotted = appendix_panels(s, rdp[rdp["variant"] == p.variant], p.case, p.panel_dataset)
subtitle = f"composed RDP on {p.panel_dataset}, {which}\n{p.model}, k = {p.num_teachers}, n_Q = {p.num_queries}, σ = {p.sigma}"
fig = plot_appendix_figure(bars, curve, p.title, subtitle, floor=p.floor)
log.info("plotted:\n%s", plotted.to_string(index=False))
save_figure(fig, snakemake.output.pdf)  # noqa: F821
save_figure(fig, snakemake.output.png)  # noqa: F821
write_csv(plotted, snakemake.output.csv)  # noqa: F821
