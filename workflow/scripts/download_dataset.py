"""Rule download_dataset: the paper's dataset, checksums verified.

Params: ``root``. Output: ``marker`` (JSON list of the verified files) — written only
after every file of the dataset passed its checksum (ppaudit.data.download_dataset).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "download_dataset")  # noqa: F821

from ppaudit.data import download_dataset  # noqa: E402
from ppaudit.io import write_json  # noqa: E402

name = snakemake.wildcards.dataset  # noqa: F821
paths = download_dataset(name, snakemake.params.root)  # noqa: F821
log.info("verified %s", [str(p) for p in paths])
write_json({"dataset": name, "files": [str(p) for p in paths]}, snakemake.output.marker)  # noqa: F821
