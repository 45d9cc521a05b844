"""Rule tabulate_labeldp_findings (target labeldp_findings): the observational paper's three claims as numbers + booleans.

Inputs: ``rr`` (RR summary), ``tau`` (τ-shift summary), ``audits`` (image audit CSVs),
``malek`` (Malek Table 6 CSV: memorisation rate and accuracy of the game's MLP),
``paper_numbers`` (workflow/data/paper_numbers.csv).
Params: settings (tight_tolerance, mia_tolerance). Output: ``csv``, with the ``cause`` of every claim that fails
(:func:`ppaudit.experiments.findings_causes.labeldp_causes`).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "tabulate_labeldp_findings")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.labeldp.tables import findings, read_paper_number_strings  # noqa: E402
from ppaudit.experiments.findings_causes import labeldp_causes, require_causes  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

audits = pd.concat([pd.read_csv(f) for f in snakemake.input.audits], ignore_index=True)  # noqa: F821
df = findings(pd.read_csv(snakemake.input.rr), pd.read_csv(snakemake.input.tau), audits, dict(snakemake.params.settings), pd.read_csv(snakemake.input.malek),
              read_paper_number_strings(snakemake.input.paper_numbers))  # noqa: F821
df = labeldp_causes(df)  # issue #34 §3: why a claim fails
require_causes(df, "labeldp findings")
log.info("\n%s", df.to_string(index=False))
write_csv(df, snakemake.output.csv)  # noqa: F821
