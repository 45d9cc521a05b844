r"""LLM prompt teachers for PromptPATE (Chadha et al. 2024, §5.3, App. D.2).

A PromptPATE *teacher* is a one-shot prompt: the task description, the teacher's single
training example with its label, then the query (§5.3: "For each teacher, the prompt
consists of the task description and an example"). Its vote is the answer of a pretrained
language model sampled at temperature 0. This module holds

1. the prompt templates of App. D.2 for SST-2 (also used for Rotten Tomatoes), AG News,
   DBpedia and TREC, and the adversarial prompts of App. D.2 (:class:`TaskTemplate`,
   :func:`teacher_prompt`, :func:`all_same_prompt`);
2. the answer grammar (:class:`AnswerGrammar`) and a scorer that computes the temperature-0
   answer of a causal LM *restricted to the valid labels*, batched over queries, with the
   key/value cache of the prompt part shared by a batch computed once and expanded over
   the batch (:class:`PromptScorer`);
3. an on-disk cache of predictions keyed by (model id, answer grammar, SHA-256 of the full
   prompt text) (:class:`PredictionCache`), so reruns and shared prompts cost nothing;
4. loading of the model through ``transformers.AutoModelForCausalLM``: the packaged
   Gemma-3-270M GGUF (``gguf_file=``, converted once to safetensors because parsing its
   262k-token vocabulary from GGUF takes minutes on 2 cores), a local model folder, or a
   hub name such as ``mistralai/Mistral-7B-Instruct-v0.2`` (the paper's model) loaded
   offline from the local Hugging Face cache, with a clear :class:`ModelUnavailableError`
   when its weights are not there (:func:`load_causal_lm`).

Temperature 0 and the valid answers
-----------------------------------
Sampling at temperature 0 is greedy decoding: at every step the token with the largest
logit. Labels are the digit strings ``"0" … "C-1"`` (App. D.2: "Your output should only be
a number from 0,1,2,3"), and the one-shot example shows the answer format
``"Answer: 1\n"``. The valid answers are therefore the token sequences of
``" " + label + "\n"`` after the prompt's final ``"Answer:"``. We decode greedily
*restricted to the valid answers*: at each step only tokens that continue some valid answer
are allowed (a token trie), and among them the one with the largest logit is taken. This is
exactly what ``model.generate(do_sample=False)`` with a ``prefix_allowed_tokens_fn``
logits processor built from the same trie produces (tested in ``tests/unit/models/test_llm.py``):

* a step with a single allowed token (e.g. the space ``"▁"`` that Gemma emits before a
  digit, or the ``"\n"`` that ends a label) is forced and does not change the answer;
* a step with several allowed tokens is a decision. When every label is one digit (SST-2,
  Rotten Tomatoes, AG News, TREC) there is exactly one decision and the prediction is
  *the label whose answer token the model scores highest after the prompt*. With
  DBpedia's 14 labels and a tokenizer that splits digits (Gemma, Mistral), ``"1"`` is
  followed by a second decision between ``"\n"`` (label 1) and ``"0"``–``"3"``
  (labels 10–13), as greedy decoding would make it. The terminating ``"\n"`` keeps the
  answers prefix-free, so "1" and "13" are distinguishable.

Ties are broken towards the smaller token id, as ``argmax`` in ``generate`` does.

An answer that *unrestricted* greedy decoding would not parse as a label (e.g. the model
would rather start a sentence) is mapped by the restriction to the allowed token it scores
highest. That is the usual reading of "the model's answer" for a classifier built from an
LM, but it is a choice: we record for every prompt whether the unrestricted greedy token
left the grammar at a step we evaluate (``off_grammar``), and report the rate. The steps
evaluated are every step up to the last decision (the ``"\n"`` after the final digit is
not evaluated: the label is already fixed there), so the flag is conservative at a
DBpedia ``"1"``: there any non-digit token would end the label as well.

Prefix sharing
--------------
The prompts of one teacher differ only in the query. For a batch of prompts we tokenize
the *full* prompt texts (the reference a plain forward pass sees), take the longest common
token prefix (at most the shortest prompt minus one token), run it once with ``use_cache``
and expand its key/value cache over the batch; the per-prompt remainders are left-padded
*between* the shared prefix and the remainder (a 2-D attention mask with zeros there, and
explicit position ids that skip the padding), so the last real token of every row sits at
the end and the logits of the decision steps are read with ``logits_to_keep``. With
``prefix_reuse=False`` only the first token (``<bos>``) is shared, i.e. every prompt is
evaluated in full; this is the baseline of ``bench/bench_llm.py``. Sliding-window attention
(Gemma 3: 512 tokens) counts padded positions, so when a padded row could reach the window
the rows are evaluated one by one (still on the shared prefix) — the scorer is then exactly
the plain forward pass again. Prompts that share no token at all (no BOS) are likewise
evaluated one by one.

Modules: :mod:`.templates` (App. D.2 prompts), :mod:`.grammar` (label token sequences),
:mod:`.cache` (SQLite predictions), :mod:`.scorer` (label-restricted scoring), :mod:`.teacher` (the
teacher callable, contextual calibration), :mod:`.loading` (GGUF assembly/conversion, model loading).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppaudit._lazy import attach_modules

# Each public name is loaded from its module on first access (PEP 562), so importing one
# module does not import its siblings' dependencies (issue 30). The names are these modules'
# own __all__ (read from their source on first use: ppaudit._lazy.attach_modules), in this order.
__getattr__, __dir__ = attach_modules(
    __name__,
    (
        "templates", "grammar", "cache", "scorer", "teacher", "loading",
    ),
)

if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from .templates import *  # noqa: F403
    from .grammar import *  # noqa: F403
    from .cache import *  # noqa: F403
    from .scorer import *  # noqa: F403
    from .teacher import *  # noqa: F403
    from .loading import *  # noqa: F403
    from . import cache, grammar, loading, scorer, teacher, templates
