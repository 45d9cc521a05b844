"""The runs of Malek et al. 2021's memorisation game, trained together (App. B, Game 3; Tables 5 and 6).

Each run plants mislabelled canaries (:func:`ppaudit.attacks.memorization.make_canaries`) in
the target half of the image data, releases the labels with ALIBI or AGIBI at one ε
(:func:`ppaudit.experiments.labeldp.release.release_labels`) and fits the memorising MLP on
them; the adversary later reads the model's probabilities on the canaries
(:func:`ppaudit.experiments.labeldp.malek_tables.malek_table`). Table 5 needs, per privacy level,
one ALIBI game of ``num_canaries`` canaries and ``games`` games of ``canaries_per_game``;
Table 6 one AGIBI game of ``num_canaries``.

Every run keeps its own randomness — the generator
``job_generator(seed, "malek_memorization", algo, eps, run)`` draws its canaries, its
release and its model seed in that order — so a run's canaries and labels do not depend
on which other runs are trained with it. The models of all runs whose training sets have
one shape are trained as one stacked block (:func:`~ppaudit.experiments.labeldp.models.fit_released_block`,
:mod:`ppaudit.models.soft_mlp`): the same models as one at a time, up to floating-point
order, in a fraction of the time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..._validation import check_positive_int
from ...rng import job_generator
from .data import LabelDPData
from .release import parse_epsilon, release_labels
from .models import fit_released_block

__all__ = ["game_data", "memorization_runs", "run_memorization_games"]


def memorization_runs(levels: Mapping[str, Mapping[str, str]], games: int, num_canaries: int, canaries_per_game: int) -> list[tuple[str, str, str, int]]:
    """The runs of Malek Tables 5 and 6: ``(algo, ε text, run, number of canaries)``, each once.

    Per level (Malek et al. 2021, App. C Table 5 and App. D Table 6): ALIBI's single game
    ``n1000`` of ``num_canaries`` canaries, its ``games`` small games ``g0 …`` of
    ``canaries_per_game`` canaries, and AGIBI's single game. A run shared by two levels
    (same algorithm and ε) appears once.

    Args:
        levels: ``{level: {"alibi": ε text, "agibi": ε text}}`` (ε as in the file names).
        games: number of small games (≥ 1).
        num_canaries: canaries of the single game (≥ 1).
        canaries_per_game: canaries of each small game (≥ 1).

    Returns:
        The runs in level order.

    Raises:
        ValueError: for a count below 1 or a level without both algorithms.
    """
    for name, v in (("games", games), ("num_canaries", num_canaries), ("canaries_per_game", canaries_per_game)):
        if int(v) < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    runs: list[tuple[str, str, str, int]] = []
    for level, eps in levels.items():
        if not {"alibi", "agibi"} <= set(eps):
            raise ValueError(f"level {level!r} needs an 'alibi' and an 'agibi' epsilon, got {dict(eps)}")
        runs.append(("alibi", str(eps["alibi"]), "n1000", int(num_canaries)))
        runs += [("alibi", str(eps["alibi"]), f"g{i}", int(canaries_per_game)) for i in range(int(games))]
        runs.append(("agibi", str(eps["agibi"]), "n1000", int(num_canaries)))
    return list(dict.fromkeys(runs))


def game_data(data: LabelDPData, train_size: int | None) -> LabelDPData:
    """The game's data: the first ``train_size`` points of the target half (a uniform subset: the
    halves are drawn at random), everything else as is; ``None`` = ``data`` itself.

    Raises:
        ValueError: for a ``train_size`` below 20 or above the target half.
    """
    if train_size is None:
        return data
    n = int(train_size)
    if not 20 <= n <= len(data.y_target):
        raise ValueError(f"labeldp.malek.train_size must lie in [20, {len(data.y_target)}] (the image target half), got {train_size!r}")
    return replace(data, x_target=data.x_target[:n], y_target=data.y_target[:n], ood_prior=None if data.ood_prior is None else data.ood_prior[:n])


def run_memorization_games(data: LabelDPData, runs: Sequence[tuple], settings: dict, seed: int, blocks: int = 1,
                           workers: int = 1) -> list[dict]:
    """Plant canaries, release labels and fit the memorising model of every run (Malek et al. 2021, App. B, Game 3).

    Every run draws from its own ``job_generator(seed, "malek_memorization", algo, ε, run)``;
    the runs are split into ``blocks`` contiguous blocks, each trained as one stacked model
    (:func:`fit_released_block`), the blocks in up to ``workers`` processes (one torch thread
    each). A run's numbers depend on its block's composition (the batched products round
    differently: measured, 2 of 36 default runs change after 50 epochs when 36 → 2 × 18), not
    on ``workers``: the same ``blocks`` gives the same bytes on any number of processes.

    Args:
        data: the image dataset (:func:`~ppaudit.experiments.labeldp.data.load_labeldp_dataset`).
        runs: ``(algo, ε text, run, number of canaries)`` as from :func:`memorization_runs`;
            ``algo`` is ``"alibi"`` or ``"agibi"``.
        settings: the dataset's settings with ``delta``, ``model`` (the game's MLP) and the
            mechanism options (``alibi_prior``, ``agibi_calibration``).
        seed: the workflow seed.
        blocks: stacked blocks (≥ 1; at most one per run).
        workers: processes (≥ 1; at most one per block; 1 = in this process).

    Returns:
        Per run, the arrays of its ``.npz``: ``confidences`` (model probabilities on the
        canaries), ``canary_labels``, ``original_labels``, ``alternative_labels``,
        ``test_accuracy``, ``claimed_epsilon``, ``alibi_prior``, ``sigma``, ``agibi_calibration``.

    Raises:
        ValueError: for an algorithm other than ALIBI/AGIBI (and as ``make_canaries`` / ``release_labels``).
    """
    from ...attacks.memorization import make_canaries

    nb = min(check_positive_int(blocks, "blocks"), max(1, len(runs)))
    w = min(check_positive_int(workers, "workers"), nb)
    if nb > 1:
        parts = [[runs[i] for i in b] for b in np.array_split(np.arange(len(runs)), nb)]
        if w == 1:
            return [r for part in parts for r in run_memorization_games(data, part, settings, seed)]
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # spawn: a fresh interpreter per worker (no forked torch/OpenMP state)
        with ProcessPoolExecutor(max_workers=w, mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(run_memorization_games, data, part, settings, seed) for part in parts]
            return [r for f in futures for r in f.result()]
    releases, predict, seeds, meta = [], [], [], []
    for algo, eps, run, n_can in runs:
        if algo not in ("alibi", "agibi"):
            raise ValueError(f"the memorisation game releases labels with 'alibi' or 'agibi', got {algo!r}")
        rng = job_generator(seed, "malek_memorization", algo, eps, run)
        can = make_canaries(data.y_target, int(n_can), data.num_classes, rng)
        xtr, ytr, claimed, info = release_labels(data, algo, parse_epsilon(eps), settings, rng, labels=can.training_labels)
        releases.append((xtr, ytr, info))
        predict.append([data.x_target[can.indices], data.x_test])
        seeds.append(int(rng.integers(2**31 - 1)))
        meta.append((can, claimed, info))
    fits = fit_released_block(data, releases, predict, settings, seeds)
    out = []
    for (can, claimed, info), (probs_can, probs_test) in zip(meta, fits):
        out.append(dict(confidences=probs_can, canary_labels=can.canary_labels, original_labels=can.original_labels,
                        alternative_labels=can.alternative_labels, test_accuracy=float(np.mean(probs_test.argmax(1) == data.y_test)),
                        claimed_epsilon=claimed, alibi_prior=str(info.get("alibi_prior", "")), sigma=float(info.get("sigma", np.nan)),
                        agibi_calibration=str(info.get("agibi_calibration", ""))))  # fmt: skip
    return out
