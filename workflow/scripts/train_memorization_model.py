"""Rule train_memorization_model (Malek et al. 2021, App. B, Game 3).

Plants ``num_canaries`` mislabelled canaries (:func:`ppaudit.attacks.memorization.make_canaries`)
in the target half of the image data, releases the labels with ALIBI/AGIBI at ``eps``, fits
the model (:func:`ppaudit.experiments.labeldp_data.fit_released`: ALIBI's iterative prior
when ``settings["alibi_prior"] == "iterative"``) and saves its probabilities on the canaries.
Output: ``canaries`` (npz).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], "train_memorization_model")  # noqa: F821

import io  # noqa: E402
import pickle  # noqa: E402

import numpy as np  # noqa: E402

from ppaudit.attacks.memorization import make_canaries  # noqa: E402
from ppaudit.experiments.labeldp_data import fit_released, parse_epsilon, release_labels  # noqa: E402
from ppaudit.io import atomic_path  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

p = snakemake.params  # noqa: F821
wc = snakemake.wildcards  # noqa: F821
data = pickle.loads(open(snakemake.input.data, "rb").read())  # noqa: F821
rng = job_generator(p.seed, "malek_memorization", wc.algo, wc.eps, wc.run)
n_can = int(p.num_canaries)
can = make_canaries(data.y_target, n_can, data.num_classes, rng)
settings = dict(p.settings, delta=p.delta)
if p.model is not None:  # the memorization game's own MLP (labeldp.malek.model)
    settings["model"] = dict(p.model)
xtr, ytr, claimed, info = release_labels(data, wc.algo, parse_epsilon(wc.eps), settings, rng, labels=can.training_labels)
probs_can, probs_test = fit_released(data, xtr, ytr, info, [data.x_target[can.indices], data.x_test], settings, int(rng.integers(2**31 - 1)))
acc = float(np.mean(probs_test.argmax(1) == data.y_test))
log.info("%s eps=%s run=%s: claimed %.3g, test accuracy %.4f, %s", wc.algo, wc.eps, wc.run, claimed, acc, {k: v for k, v in info.items() if not k.startswith("_")})
with atomic_path(snakemake.output.canaries) as tmp:  # noqa: F821
    buf = io.BytesIO()
    np.savez_compressed(buf, confidences=probs_can, canary_labels=can.canary_labels, original_labels=can.original_labels, alternative_labels=can.alternative_labels,
                        test_accuracy=acc, claimed_epsilon=claimed, alibi_prior=str(info.get("alibi_prior", "")), sigma=float(info.get("sigma", np.nan)),
                        agibi_calibration=str(info.get("agibi_calibration", "")))  # fmt: skip
    tmp.write_bytes(buf.getvalue())
