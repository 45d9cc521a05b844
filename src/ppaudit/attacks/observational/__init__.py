"""Observational label-inference audit and MIA baselines (observational-auditing paper, §5–6, App. C, E).

Modules: :mod:`.guess_audit` (the shared one-run audit of guessing games: guess counts, ε over the
``c'`` sweep, :func:`audit_scores`), :mod:`.label_inference` (Algorithm 2) and :mod:`.mia`
(the MIA baselines); their public names are re-exported here.

Label inference in one run (Algorithm 2, label case of §5):

1. the target model ``M`` is trained on ``D⁰ = ((x_i, y⁰_i))`` (``y⁰`` the training labels,
   i.e. the inputs of the label-DP mechanism);
2. the challenger draws ``b_i ~ Bernoulli(1/2)`` and a counterfactual label
   ``y¹_i ~ Multinoulli(M'(x_i))`` from a reference model ``M'`` fitted on disjoint data
   (§6.2), and shows the adversary ``y^{b_i}_i``;
3. the adversary scores (§6.2)

       s(x, y) = s₁ · s₂ᵗ,   s₁ = M(x)[y] − M'(x)[y],   s₂ = 1 − M'(x)[y],   t = 2,

   guesses ``b' = 0`` ("training label") when ``s > 0`` and ``b' = 1`` otherwise, on the
   ``c'`` samples with the largest ``|s|`` (abstaining on the rest);
4. the counts ``(c', c)`` go through the one-run f-DP audit
   (:func:`ppaudit.attacks.one_run.epsilon_gdp_family`, Theorem 5, μ-GDP family — the paper's
   report, which assumes a Gaussian trade-off curve).

The paper sweeps ``c' ∈ {1 %, 2 %, …, 100 %}`` of the ``m`` canaries and reports the highest ε
at 95 % confidence (Table 1–2), or fixes ``c' = 1 %`` (App. E, Table 6); each is averaged
over 100 repetitions of the game with fresh counterfactual labels (mean ± std). Note that
when ``y¹ = y⁰`` the shown label is the same under both bits, so such samples are coin flips
for any adversary; ``s₂`` steers the guesses away from them.

MIA baselines through the same audit (§6.5, App. E): canaries are members (training
points of ``M``) or non-members with probability 1/2 each; the adversary guesses "member"
when its score exceeds a centre and abstains on all but the ``c'`` largest ``|score − centre|``:

* calibrated loss (Watson et al. 2022): ``score = ℓ(M'(x), y) − ℓ(M(x), y)`` (the paper's
  "difference in the loss between the target model and the reference model", signed so that
  a larger score means "member"), centre 0;
* offline RMIA with ``M'`` as the single (OUT) reference model (Zarifzadeh et al. 2024):
  ``LR(x) = Pr(x | θ) / Pr(x)`` with ``Pr(x) = ½((1 + a) Pr(x | θ') + (1 − a))`` (their offline
  approximation) and ``score(x) = Pr_z[LR(x)/LR(z) ≥ γ]`` over a population ``z`` of
  non-members (:func:`rmia_offline_audit_scores`); centre ½.

Every attack is run on the same number of canaries per repetition (§6.2: the test-set
size), the LIA on a fresh random subset of its candidates (``num_canaries``).

Models enter as predicted-probability arrays, so everything is testable on synthetic data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(__name__, ("guess_audit", "label_inference", "mia"))

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .guess_audit import *  # noqa: F403
    from .label_inference import *  # noqa: F403
    from .mia import *  # noqa: F403
    from . import guess_audit, label_inference, mia
