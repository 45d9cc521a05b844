"""Rule train_memorization_models: every run of Malek et al. 2021's memorisation game (App. B, Game 3), one npz each.

For each run ``(algo, ε, run, number of canaries)`` of ``params.runs``: plants mislabelled
canaries in the target half of the image data, releases the labels with ALIBI/AGIBI at ε,
fits the game's MLP (ALIBI's iterative prior when ``settings["alibi_prior"] == "iterative"``)
and saves its probabilities on the canaries — the runs trained as labeldp.malek.blocks stacked blocks
(:func:`ppaudit.experiments.labeldp.memorization.run_memorization_games`).
Inputs: ``data`` (prepare_labeldp_data, image). Output: ``canaries`` (one npz per run, in
the order of ``params.runs``). Params: runs, settings, model, blocks, delta, seed, train_size (the game's subset of the target half). Threads: processes, each training
stacked blocks of the runs (run_memorization_games ``blocks`` / ``workers``: same bytes for any threads).
"""

import io
import pickle

import _ppaudit_path
import numpy as np


def main(sm) -> None:
    log = _ppaudit_path.log_to_file(sm.log[0], "train_memorization_models")
    from ppaudit.experiments.labeldp.memorization import game_data, run_memorization_games
    from ppaudit.io import atomic_path

    p = sm.params
    outputs = list(sm.output.canaries)
    if len(outputs) != len(p.runs):
        raise ValueError(f"{len(p.runs)} runs but {len(outputs)} output files")
    data = game_data(pickle.loads(open(sm.input.data, "rb").read()), p.train_size)
    settings = dict(p.settings, delta=p.delta)
    if p.model is not None:  # the memorization game's own MLP (labeldp.malek.model)
        settings["model"] = dict(p.model)
    results = run_memorization_games(data, [tuple(r) for r in p.runs], settings, p.seed, blocks=p.blocks, workers=sm.threads)
    for (algo, eps, run, n_can), res, path in zip(p.runs, results, outputs):
        log.info("%s eps=%s run=%s (%d canaries): claimed %.3g, test accuracy %.4f", algo, eps, run, n_can, res["claimed_epsilon"], res["test_accuracy"])
        with atomic_path(path) as tmp:
            buf = io.BytesIO()
            np.savez_compressed(buf, **res)
            tmp.write_bytes(buf.getvalue())


# The worker processes (spawn) re-import this file as __mp_main__: they must not run the job.
if __name__ == "__main__":
    main(snakemake)  # noqa: F821
