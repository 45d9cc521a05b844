"""Rule prepare_labeldp_data: load, featurise and split one label-DP dataset.

Params: settings (labeldp.datasets.<dataset>), seed. Output: ``data`` (pickle of a LabelDPData).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "prepare_labeldp_data")  # noqa: F821

import pickle  # noqa: E402

from ppaudit.experiments.labeldp.data import load_labeldp_dataset  # noqa: E402
from ppaudit.io import atomic_path  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

dataset = snakemake.wildcards.dataset  # noqa: F821
p = snakemake.params  # noqa: F821
data = load_labeldp_dataset(dataset, dict(p.settings), job_generator(p.seed, "labeldp_data", dataset))
log.info("%s: reference %d, target %d, test %d, classes %d", dataset, len(data.y_ref), len(data.y_target), len(data.y_test), data.num_classes)
with atomic_path(snakemake.output.data) as tmp:  # noqa: F821
    tmp.write_bytes(pickle.dumps(data))
