"""Private-prediction and label-DP mechanisms: how each one turns data into answers, and
the parametric laws of its outputs that the audits sample from.

* :mod:`.private_knn` — Private-kNN (Zhu et al. 2020; Chadha et al. 2024, §5.3, §6).
* :mod:`.promptpate` — PromptPATE with LLM prompt teachers (Chadha et al. 2024, §5.4, App. D.2).
* :mod:`.labeldp` — label-DP training mechanisms (RR, LP-1ST/2ST, ALIBI, PATE-FM), a
  sub-package with one module per mechanism; its public names are also attributes of this
  package (loaded on first use).

* :mod:`.pate_capc` — PATE's and CaPC's training phase: the teachers' votes on ``S`` and the
  canary-holding teacher with its twin (Chadha et al. 2024, Alg. 1, §5.1–5.2).

PATE and CaPC vote models live in :mod:`ppaudit.vote_models`, their teacher models in
:mod:`ppaudit.models.teachers`. Import the sub-module you need.
"""


def __getattr__(name: str):
    """The label-DP mechanisms' public names (``ppaudit.mechanisms.lp_1st`` …), imported on first use."""
    import importlib

    labeldp = importlib.import_module(".labeldp", __name__)
    if name in labeldp.__all__:
        return getattr(labeldp, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
