"""Rule tabulate_promptpate_findings: the paper's PromptPATE claims (§5.3–5.4)
and the teachers' classification quality, checked on the audit summaries and the votes
(``ppaudit.experiments.chadha2024.promptpate``)."""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.experiments.chadha2024.promptpate import promptpate_findings, teacher_statistics  # noqa: E402
from ppaudit.experiments.findings_causes import chadha_causes  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.mechanisms.promptpate import PromptPateVotes  # noqa: E402

p = snakemake.params  # noqa: F821
summary = pd.read_csv(snakemake.input.summary)  # noqa: F821
variants = pd.read_csv(snakemake.input.variants, keep_default_na=False)  # noqa: F821
others = {str(pd.read_csv(f)["algo"].iloc[0]): pd.read_csv(f) for f in snakemake.input.others}  # noqa: F821
teachers = {}
for ds, f in zip(p.datasets, snakemake.input.votes):  # noqa: F821
    v = PromptPateVotes.from_npz(f)
    teachers[ds] = {**teacher_statistics(v.query_labels, v.teacher_votes, v.num_classes), "calibration": v.meta.get("calibration", "none"),
                    "answers": v.meta.get("answers", "numbers")}
    log.info("%s teachers: %s", ds, teachers[ds])
table = promptpate_findings(summary, variants, others, p.floor, teachers)
table = chadha_causes(table)  # issue #34 §3: why a row does not hold, from this part's own numbers
log.info("findings (%d rows, %d hold):\n%s", len(table), int(table["holds"].sum()), table.to_string(index=False))
write_csv(table, snakemake.output.findings)  # noqa: F821
