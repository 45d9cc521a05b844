"""Rule train_memorization_models: every run of Malek et al. 2021's memorisation game (App. B, Game 3), one npz each.

For each run ``(algo, ε, run, number of canaries)`` of ``params.runs``: plants mislabelled
canaries in the target half of the image data, releases the labels with ALIBI/AGIBI at ε,
fits the game's MLP (ALIBI's iterative prior when ``settings["alibi_prior"] == "iterative"``)
and saves its probabilities on the canaries — all runs' models trained as one stacked block
(:func:`ppaudit.experiments.labeldp_memorization.run_memorization_games`).
Inputs: ``data`` (prepare_labeldp_data, image). Output: ``canaries`` (one npz per run, in
the order of ``params.runs``). Params: runs, settings, model, delta, seed.
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_memorization_models")  # noqa: F821

import io
import pickle

import numpy as np

from ppaudit.experiments.labeldp_memorization import run_memorization_games
from ppaudit.io import atomic_path

p = snakemake.params  # noqa: F821
outputs = list(snakemake.output.canaries)  # noqa: F821
if len(outputs) != len(p.runs):
    raise ValueError(f"{len(p.runs)} runs but {len(outputs)} output files")
data = pickle.loads(open(snakemake.input.data, "rb").read())  # noqa: F821
settings = dict(p.settings, delta=p.delta)
if p.model is not None:  # the memorization game's own MLP (labeldp.malek.model)
    settings["model"] = dict(p.model)
results = run_memorization_games(data, [tuple(r) for r in p.runs], settings, p.seed)
for (algo, eps, run, n_can), res, path in zip(p.runs, results, outputs):
    log.info("%s eps=%s run=%s (%d canaries): claimed %.3g, test accuracy %.4f", algo, eps, run, n_can, res["claimed_epsilon"], res["test_accuracy"])
    with atomic_path(path) as tmp:
        buf = io.BytesIO()
        np.savez_compressed(buf, **res)
        tmp.write_bytes(buf.getvalue())
