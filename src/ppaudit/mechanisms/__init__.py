"""Private-prediction and label-DP mechanisms: how each one turns data into answers, and
the parametric laws of its outputs that the audits sample from.

* :mod:`.private_knn` — Private-kNN (Zhu et al. 2020; Chadha et al. 2024, §5.3, §6).
* :mod:`.promptpate` — PromptPATE with LLM prompt teachers (Chadha et al. 2024, §5.4, App. D.2).
* :mod:`.labeldp` — label-DP training mechanisms (RR, LP-1ST/2ST, ALIBI, PATE-FM).

PATE and CaPC vote models live in :mod:`ppaudit.vote_models`, their teachers in
:mod:`ppaudit.models.teachers`. Import the sub-module you need.
"""
