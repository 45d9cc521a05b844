"""Snakemake script of rule train_adult_ensemble: PhD detection on UCI Adult (Wang §2).

Params: settings (wang2022.adult), root, seed. Output ``votes`` (CSV): one row per point of
the balanced test set with its PhD flag and the ensemble's votes for <=50K / >50K.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_adult_ensemble")  # noqa: F821

import pandas as pd  # noqa: E402

from ppaudit.data.adult import load_adult  # noqa: E402
from ppaudit.experiments.wang2022.adult import phd_detection_experiment  # noqa: E402
from ppaudit.io import write_csv  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
s = p.settings
df = load_adult(s["data_source"], root=p.root)
log.info("UCI Adult: %d rows, %.2f%% PhD, %.2f%% income > 50K", len(df), 100 * df["phd"].mean(), 100 * df["label"].mean())
res = phd_detection_experiment(
    df, job_generator(p.seed, "wang2022_adult", "ensemble"), num_partitions=s["num_partitions"],
    test_fraction=s["test_fraction"], n_estimators=s["n_estimators"], grid={"max_depth": list(s["max_depth"])},
    cv=s["cv_folds"], n_jobs=snakemake.threads,  # noqa: F821
)
log.info("train %d, test %d (%d PhD), balanced test %d", res.num_train, res.num_test, res.num_phd_test, len(res.phd))
out = pd.DataFrame({"row": res.test_index, "phd": res.phd, "votes_le50k": res.histograms[:, 0], "votes_gt50k": res.histograms[:, 1]})
write_csv(out, snakemake.output.votes)  # noqa: F821
