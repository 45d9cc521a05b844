"""Rule extract_features: encoder features of a seeded dataset subset
(Chadha et al. 2024, §6, App. D.3).

Params: num_train, num_test, seed, source, root, cache_dir, batch_size, device.
Outputs: ``train`` / ``test`` (``(n, d)`` float32 .npy), ``labels`` (.npz: y_train, y_test,
and the encoder configuration as JSON text).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from ppaudit.experiments.chadha2024.private_knn import load_knn_inputs  # noqa: E402
from ppaudit.models.encoders import get_encoder  # noqa: E402
from ppaudit.models.feature_cache import extract_features  # noqa: E402
from ppaudit.io import atomic_path  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
threads = int(snakemake.threads)  # noqa: F821
start = time.perf_counter()
xtr, ytr, xte, yte = load_knn_inputs(w.dataset, p.num_train, p.num_test, p.seed, source=p.source, root=p.root)
log.info("%s: %d train / %d test inputs (seed %d, source %s) in %.1f s", w.dataset, len(ytr), len(yte), p.seed, p.source, time.perf_counter() - start)
encoder = get_encoder(w.encoder, batch_size=p.batch_size, device=p.device)
feats = {}
for split, x in (("train", xtr), ("test", xte)):
    t = time.perf_counter()
    feats[split] = extract_features(encoder, x, cache_dir=p.cache_dir, dataset=w.dataset, split=f"{split}-seed{p.seed}", progress=True, threads=threads)
    log.info("%s features %s in %.1f s (%s)", split, feats[split].shape, time.perf_counter() - t, encoder.last_stats or "from the cache")
for split in ("train", "test"):
    with atomic_path(snakemake.output[split]) as tmp:  # noqa: F821
        with open(tmp, "wb") as fh:
            np.save(fh, feats[split])
with atomic_path(snakemake.output.labels) as tmp:  # noqa: F821
    with open(tmp, "wb") as fh:
        np.savez(fh, y_train=np.asarray(ytr, dtype=np.int64), y_test=np.asarray(yte, dtype=np.int64), encoder=json.dumps(encoder.config(), sort_keys=True))
log.info("done in %.1f s", time.perf_counter() - start)
