"""Snakemake script of rule compute_gnmax_worst_case: the worst-case exact RDP of the
Gaussian noisy argmax for every configured (k, C, σ) (Chadha et al. 2024, §7 future work).

Params: ``settings`` (list of ``{name, num_teachers, num_classes, sigma}``), ``orders``,
``max_exhaustive_pairs``, ``grid_per_sigma``. Output: ``table`` (CSV, one row per setting and
order: :meth:`ppaudit.accounting.WorstCaseRDP.to_frame` plus ``setting`` and ``method``; the
run time goes to the log only, so the same config gives the same bytes).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import time  # noqa: E402

import pandas as pd  # noqa: E402

from ppaudit.accounting import gnmax_rdp_worst_case  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402

params = snakemake.params  # noqa: F821
frames = []
for setting in params.settings:
    start = time.perf_counter()
    result = gnmax_rdp_worst_case(
        setting["num_teachers"],
        setting["num_classes"],
        setting["sigma"],
        params.orders,
        max_exhaustive_pairs=params.max_exhaustive_pairs,
        grid_per_sigma=params.grid_per_sigma,
    )
    seconds = time.perf_counter() - start
    frame = result.to_frame()
    frame.insert(0, "setting", setting["name"])
    frame["method"] = result.method  # the time goes to the log only: same config, same bytes
    frames.append(frame)
    log.info("%s: %.1f s, %s", setting["name"], seconds, result.method)
write_csv(pd.concat(frames, ignore_index=True), snakemake.output.table)  # noqa: F821
log.info("wrote %s", snakemake.output.table)  # noqa: F821
