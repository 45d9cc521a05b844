"""PromptPATE: the mechanism, its adversaries and its audit (Chadha et al. 2024, §5.3–5.4, App. D.2, E.3).

PromptPATE (Duan et al. 2023) is PATE with one-shot prompts as teachers: teacher ``t``'s
prompt holds the task description and one training example ``(x_t, y_t)``; its vote on a
query is the temperature-0 answer of the LLM (§5.3). The votes of ``k`` teachers form the
histogram ``H_S(q)`` and the answer is the Gaussian noisy argmax. Everything before the
noise is deterministic, so the histograms of ``S`` and of a neighbour ``S'`` are *exact*
(§5.3: "we don't need to make a parametric assumption") and the audit uses the exact-count
Monte Carlo mode (:func:`ppaudit.montecarlo.noisy_argmax_counts_pair` with
``mode="exact"``).

Pipeline (one function per stage, so that the LLM stage and the audit are separate jobs):

1. :func:`sample_setup` — ``k`` teacher examples drawn from the training set and ``n_Q``
   queries from the test set (App. D.2: 200 and 200).
2. :func:`collect_votes` — every LLM call: the ``k × n_Q`` teacher votes, then the
   adversaries' prompts (they depend on the votes), returned as :class:`PromptPateVotes`.
3. :func:`audit_votes` — neighbouring histograms, per-query audits (2-cut Clopper–Pearson,
   k-cut), exact RDP (Eq. 4), data-dependent and data-independent theory, composition over
   the query sequence and ε at ``δ`` (reusing
   :func:`ppaudit.experiments.chadha2024.private_prediction.compose_candidates` and
   :func:`~ppaudit.experiments.chadha2024.private_prediction.summarize_candidates`), worst and average
   case (§5.4, App. E.3).

The adversaries (§5.3, App. D.2), and our careful readings where the paper leaves a choice:

* **Nat-AdvQ** — one teacher's example is swapped for the test query ``q`` with its true
  label (the canary prompt is the teacher prompt with example ``(x_q, y_q)``); ``q`` is
  asked ``n_Q`` times. Every query of the query set is a candidate (§5.4: "we instantiate
  both Nat-AdvQ and Pois-AdvQ for n_Q different queries").
* **Pois-AdvQ** — the same with a wrong label: the label the most teachers vote for after
  the true one (§5.1's "second most commonly produced label", read as "most voted label
  other than the true label" since a poison must be mislabelled; ties → smaller label).
* **Pois-NatQ** — one poisoned teacher, asked the ``n_Q`` natural queries once each, with
  the four prompts of App. D.2:

  - *Confident*: the query on which the most teachers agree (largest top count; ties
    broken at random with the job's seed), mislabelled as above;
  - *Unconfident*: the query with the smallest gap between its top two counts (ties at
    random), mislabelled as above;
  - *All same*: "please output the Answer c" — one candidate per target label ``c``
    (the paper shows ``c = 1``; the adversary may pick any, so all are tried and the
    worst case is reported);
  - *Mapping*: a wrong class→number mapping in the task description, with "for each
    label, the class which is most often the class with second highest votes" — for each
    true class ``c``, over the queries of class ``c`` whose second-highest count is
    positive, the most frequent second-highest class (ties → smaller class; if there is
    none, over all queries of class ``c``; if the class has no query, ``(c + 1) mod C``).
    The one example of the prompt is the Confident query with its mapped true label.

Which teacher the canary replaces. ``S'`` swaps one teacher's example for the canary, so
``H_S'(q) = H_S(q) − e_{v_t(q)} + e_{v'(q)}`` for the replaced teacher ``t`` (its vote
``v_t``) and the canary prompt's vote ``v'``. DP is a worst case over neighbours, and the
adversary knows the (deterministic) votes, so it replaces the teacher that maximises the
exact leakage: for AdvQ the vote class ``v ≠ v'`` (then the lowest-index teacher with that
vote) maximising ε of the ``n_Q``-fold composed exact RDP (§5.4: "adding a correctly
labelled query to the prompt of a teacher which initially misclassified the query" is the
case ``v ≠ v' = y_q``); for Pois-NatQ the teacher maximising ε of the exact RDP composed over
the natural queries. The choice uses only the exact histograms, never the Monte Carlo
counts, so the audit's confidence is untouched. If no teacher can change the histogram
(every vote already equals ``v'``) the pair is identical and every bound is 0.

Example:
    >>> import numpy as np
    >>> h = np.array([150, 50])
    >>> swap_vote(h, 0, 1).tolist()
    [149, 51]

Modules: :mod:`.setup` (data, teacher examples, queries), :mod:`.votes` (the LLM stage),
:mod:`.neighbours` (which teacher the canary replaces), :mod:`.audit`, :mod:`.canaries` (the
adversaries' prompts, re-exported by :mod:`ppaudit.adversaries.promptpate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(__name__, ("setup", "votes", "neighbours", "audit"))

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .setup import *  # noqa: F403
    from .votes import *  # noqa: F403
    from .neighbours import *  # noqa: F403
    from .audit import *  # noqa: F403
    from . import audit, neighbours, setup, votes
