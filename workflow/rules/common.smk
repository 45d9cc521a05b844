# Shared by every stage: config validation (at parse time, before any job) and the one
# config accessor get_config(*keys), the figure registry (workflow/figures.yaml), and one
# section per stage with its constants, input functions and params helpers. Every name is
# defined once, here, and never modified by another file, so the order of the include:
# lines does not matter. This file holds no rules (Snakemake's linter asks to keep
# functions and rules apart); the target rules generated from the registry are in the
# Snakefile. Checks that deserve a test live in ppaudit.workflow (config_checks, registry).
#
# Sections: config · figure registry · synthetic (Chadha Figs. 2, 6) · Chadha et al. 2024
# private prediction (shared by PATE/CaPC, PromptPATE, Private-kNN) · PATE/CaPC · Private-kNN
# · PromptPATE · Chadha appendix figures (Figs. 7–31, one rule) · label DP (observational
# paper, Malek et al. 2021) · Wang et al. 2022 · report (paper comparison).

import math
import os
from pathlib import Path

import jsonschema
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from ppaudit.experiments.chadha2024.private_knn_names import KNN_ADVERSARY_LABELS, KNN_ENCODER_MODALITY, KNN_MODALITY
from ppaudit.workflow import load_registry
from ppaudit.workflow.config_checks import (
    SYNTHETIC_EXPERIMENTS, apply_audit_defaults, check_config, config_value, labeldp_model_grid, validate_schema,
)
from ppaudit.workflow.job_server import start as start_job_server
from ppaudit.workflow.job_server import stop as stop_job_server
from ppaudit.workflow.scheduler_timers import cancel_pending_timers

# --- Config: validation and access -------------------------------------------------------


def _config_key(path):
    """Dotted name of a config entry from a jsonschema path (list indices as [i])."""
    name = ""
    for part in path:
        if isinstance(part, int):
            name += f"[{part}]"
        else:
            name += f".{part}" if name else str(part)
    return name or "<top level>"


def _describe_config_error(error):
    """One clear sentence naming the offending config key and value."""
    key = _config_key(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(k for k in error.instance if k not in allowed)
        where = "" if key == "<top level>" else f"{key}."
        names = ", ".join(f"'{where}{k}'" for k in unknown)
        return f"unknown config key {names}; allowed keys at {key}: {', '.join(allowed)}"
    message = f"config key '{key}' has a bad value {error.instance!r}: {error.message}"
    if error.validator == "type" and error.validator_value == "integer" and isinstance(error.instance, str):
        message += " (YAML reads 1e8 as a string: write the integer 100000000)"
    description = error.schema.get("description")
    if description and error.validator != "enum":  # an enum message lists the allowed values
        message += f". Expected: {' '.join(str(description).split())}"
    return message


def _reject_non_finite(node, path=()):
    """Raise a WorkflowError naming the first NaN or infinite number in the config."""
    if isinstance(node, float) and not math.isfinite(node):
        raise WorkflowError(
            f"Invalid configuration: config key '{_config_key(path)}' has a bad value {node!r}: "
            "numbers must be finite (no .nan or .inf)"
        )
    if isinstance(node, dict):
        for key, value in node.items():
            _reject_non_finite(value, (*path, key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            _reject_non_finite(value, (*path, i))


def validate_config(config):
    """Validate ``config`` against workflow/schemas/config.schema.yaml and fill defaults.

    Raises a WorkflowError naming the key on the first schema violation, on a NaN or
    infinite number (YAML's .nan/.inf pass JSON Schema's bounds), and on the cross-key
    checks the schema cannot express (ppaudit.workflow.config_checks.check_config). In
    between, every chadha2024 mechanism section gets the shared audit settings it does not
    override (chadha2024.audit_defaults; ppaudit.workflow.config_checks.apply_audit_defaults),
    so get_config, params and scripts see the merged per-mechanism values.
    """
    _reject_non_finite(config)
    try:
        # = snakemake.utils.validate(config, schema, set_default=True), with libyaml's parse of the schema
        validate_schema(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
    except jsonschema.ValidationError as error:
        raise WorkflowError(f"Invalid configuration: {_describe_config_error(error)}") from None
    try:
        apply_audit_defaults(config)
        check_config(config)
    except ValueError as exc:
        raise WorkflowError(f"Invalid configuration: {exc}") from None


validate_config(config)

# The run's download registry (config key dataset_registry), exported to every job: the data
# loaders read it through ppaudit.data.active_registry.
if config.get("dataset_registry"):
    from ppaudit.data import REGISTRY_ENV

    os.environ[REGISTRY_ENV] = os.path.abspath(config["dataset_registry"])


def get_config(*keys):
    """The config entry at config[k1][k2]… — the one accessor of the workflow (CONVENTIONS 17).

    ``get_config("labeldp", "delta")``; in a rule with wildcards
    ``lambda wildcards: get_config("labeldp", "datasets", wildcards.dataset)``. A missing key
    stops the run naming it (ppaudit.workflow.config_checks.config_value).
    """
    try:
        return config_value(config, *keys)
    except ValueError as exc:
        raise WorkflowError(str(exc)) from None


def config_params(section, *keys):
    """Rule params read from one config section under their own names: ``{key: get_config(*section, key)}``.

    ``params: **config_params(PATE_CAPC, "orders", "delta")`` passes
    chadha2024.pate_capc.orders and .delta as ``snakemake.params.orders`` and ``.delta``.
    """
    return {key: get_config(*section, key) for key in keys}


# --- Synthetic histogram pairs (Chadha et al. 2024, Figs. 2 and 6) -------------------------
# SYNTHETIC_EXPERIMENTS (fig2, fig6) comes from ppaudit.workflow.config_checks.

# Figure-number label of each synthetic experiment, for titles and report labels.
SYNTHETIC_FIGURE_LABELS = {"fig2": "Fig. 2", "fig6": "Fig. 6"}


wildcard_constraints:
    experiment="|".join(SYNTHETIC_EXPERIMENTS),


def synthetic_figure_title(experiment):
    """Axes title of a synthetic figure (ppaudit.plots.titles.synthetic_title)."""
    from ppaudit.plots.titles import synthetic_title

    return synthetic_title(
        SYNTHETIC_FIGURE_LABELS[experiment],
        get_config("chadha2024", "synthetic", experiment),
        get_config("chadha2024", "synthetic"),
    )


# --- Figure registry -------------------------------------------------------------------
# One row per figure/table target (workflow/figures.yaml, validated by
# ppaudit.workflow.registry). The Snakefile generates the target rules and `rule all`
# from FIGURES; producing rules take their outputs from figure_outputs().

try:
    FIGURES = load_registry(Path(workflow.basedir) / "workflow" / "figures.yaml", root=workflow.basedir)
except ValueError as exc:
    raise WorkflowError(f"Invalid figure registry: {exc}") from None


def all_target_files():
    """Input of the default target `all`: the files of the config key `targets` (a slice's
    [chadha_fig3]), or of every registry target when it is null. An id that is not a target
    stops the parse, naming it."""
    try:
        return FIGURES.files_of(get_config("targets"))
    except ValueError as exc:
        raise WorkflowError(f"Invalid configuration: config key 'targets': {exc}") from None


ALL_TARGET_FILES = all_target_files()  # checked at parse time, before any job


def figure_outputs(rule_name):
    """Named outputs of a figure/table rule, as listed in workflow/figures.yaml.

    Use as ``output: **figure_outputs("plot_chadha_fig5")``. Outputs of rows with a caption
    are wrapped in ``report()`` with that caption (a Jinja template that may use the rule's
    wildcards and params), category, subcategory (a function of the wildcards when the rule's
    rows differ in it) and labels ``{figure|table: label, file: PDF|PNG|…}``.
    """
    try:
        specs = FIGURES.outputs_of(rule_name)
    except KeyError as exc:
        raise WorkflowError(f"workflow/figures.yaml: {exc.args[0]}") from None
    outputs = {}
    for name, spec in specs.items():
        if not spec.in_report:
            outputs[name] = spec.path
            continue
        outputs[name] = report(
            spec.path,
            caption=str(Path(workflow.basedir) / spec.caption),
            category=spec.category,
            subcategory=spec.subcategory,
            labels=dict(spec.labels),
        )
    return outputs


def figure_params(rule_name):
    """Params function of a figure/table rule: the ``params`` of the registry row a job's
    wildcards select (workflow/figures.yaml), e.g. ``params: figure=figure_params("plot_chadha_appendix")``."""

    def params(wildcards):
        try:
            return FIGURES.params_of(rule_name, wildcards)
        except KeyError as exc:
            raise WorkflowError(f"workflow/figures.yaml: {exc.args[0]}") from None

    return params


def figure_param(rule_name, key):
    """Input/params function: one param of the registry row a job's wildcards select,
    e.g. ``input: summary=figure_param("plot_chadha_appendix", "summary")``."""
    params = figure_params(rule_name)
    return lambda wildcards: params(wildcards)[key]


def figure_wildcard_pattern(rule_name, wildcard):
    """The values the registry rows of a rule give one of its wildcards, as a constraint ("fig7|fig8|…")."""
    return "|".join(FIGURES.wildcard_values(rule_name, wildcard))


def figure_target_files(target_id):
    """Every file of one registry target (its outputs and those of the targets it includes)."""
    return FIGURES.files(target_id)


def check_figure_registry():
    """Stop at parse time when a registry row names a rule that is missing or does not make its files.

    Called from the Snakefile after every rule file is included.
    """
    try:
        FIGURES.check_producers(
            [r.name for r in workflow.rules],
            lambda rule, path: workflow.get_rule(rule).is_producer(path),
        )
    except ValueError as exc:
        raise WorkflowError(f"Invalid figure registry (workflow/figures.yaml): {exc}") from None


# --- Chadha et al. 2024, private prediction: shared by PATE/CaPC, PromptPATE, Private-kNN ---
# Summaries: results/chadha2024/private_prediction/{algo}/summary.csv (one per algorithm,
# the columns of ppaudit.experiments.chadha2024.private_prediction); findings parts:
# results/tables/findings/{algo}.csv (columns of ppaudit.experiments.chadha2024.pate_capc_findings).

# The three adversaries of PATE, CaPC and PromptPATE (§4.1); Private-kNN has its own five
# (KNN_ADVERSARY_LABELS, from ppaudit.experiments.chadha2024.private_knn_names). Figure titles name them in workflow/figures.yaml.
ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq")


def algo_summary(algo):
    """Every audit summary of one algorithm (pate, capc, promptpate, knn), one CSV."""
    return f"results/chadha2024/private_prediction/{algo}/summary.csv"


def findings_part(algo):
    """The algorithm's part of the findings table results/tables/chadha2024_findings.csv."""
    return f"results/tables/findings/{algo}.csv"


# The panels of Figs. 3/4 and the parts of the findings table: complete here (no stage
# appends to them).
CHADHA_FIG34_SUMMARIES = tuple(algo_summary(a) for a in ("pate", "capc", "promptpate"))
# repeated_query_example: issue 13 §1's example (rule tabulate_repeated_query_example).
CHADHA_FINDINGS_PARTS = tuple(findings_part(a) for a in ("pate", "capc", "knn", "promptpate", "repeated_query_example"))


def chadha_fig34_summaries():
    """Summary CSVs drawn as panels of Figs. 3 and 4: those of chadha2024.fig34_algorithms (all by default)."""
    chosen = {algo_summary(a) for a in get_config("chadha2024", "fig34_algorithms")}
    return [s for s in CHADHA_FIG34_SUMMARIES if s in chosen]


def chadha_findings_parts():
    """Per-algorithm parts of the findings table."""
    return list(CHADHA_FINDINGS_PARTS)


def get_audit_summaries(wildcards):
    """Input function of collect_summaries: every composed audit summary of one algorithm
    (pate, capc: compose_audit; knn: compose_knn_audit), all datasets and adversaries."""
    if wildcards.algo == "knn":
        return [f"{knn_audit_dir(ds, adv)}/summary.csv" for ds in get_config(*KNN, "datasets") for adv in KNN_ADVERSARY_LABELS]
    return [
        f"{pate_capc_audit_dir(wildcards.algo, ds, adv)}/summary.csv"
        for ds in get_config(*PATE_CAPC, "datasets")
        for adv in ADVERSARIES
    ]


def epsilon_floor_of(*section):
    """ε of an all-zero RDP curve at the orders and δ of a config section (an audit that
    found nothing), e.g. ``epsilon_floor_of("chadha2024", "promptpate")``."""
    from ppaudit.audit import epsilon_floor

    return epsilon_floor(get_config(*section, "orders"), get_config(*section, "delta"))


def panel_dataset(*section):
    """Dataset of the RDP-vs-order panel of a section's appendix figures (rdp_panel_dataset,
    else its first dataset), e.g. ``panel_dataset("chadha2024", "promptpate")``."""
    return get_config(*section, "rdp_panel_dataset") or get_config(*section, "datasets")[0]


def get_dataset_marker(*section):
    """Input function: the download marker of an image dataset when the section's source is
    ``download`` (rule download_dataset), else nothing, e.g. ``get_dataset_marker("chadha2024", "knn")``."""

    def marker(wildcards):
        if get_config(*section, "source") == "download" and wildcards.dataset in ("mnist", "fashion-mnist", "cifar10"):
            return [f"resources/datasets/{wildcards.dataset}/.verified"]
        return []

    return marker


# --- PATE and CaPC (Chadha et al. 2024, §5.1–5.2, §5.4, App. D.1, E.1–E.2) -----------------
# Rules: workflow/rules/pate_capc.smk. Paths share the prefix P = {algo}/{dataset}/{model}/seed{seed}:
#   results/queries/{dataset}/seed{seed}.npz                  query set (test-set indices)
#   results/votes/P/votes_S.npz                               teachers of S, N_g instantiations
#   results/canaries/P/{adversary}.npz                        candidate canaries
#   results/votes/P/{adversary}/votes_S_prime.npz             canary-holding teacher
#   results/fits/P/{adversary}.npz                            P_q, P'_q (MLE)
#   results/audits/P/{adversary}/sigma{sigma}/per_query.csv   per-query RDP (audits, exact, theory)
#   results/audits/P/{adversary}/sigma{sigma}/{rdp,eps,summary}.csv  composed, ε at δ, worst/average
#   results/chadha2024/private_prediction/{algo}/summary.csv  every summary of one algorithm
#   results/tables/findings/{algo}.csv                        the paper's orderings, checked

PATE_CAPC = ("chadha2024", "pate_capc")  # its config section: get_config(*PATE_CAPC, key)
PATE_CAPC_ALGOS = ("pate", "capc")

# Rule-level wildcard constraints of the PATE/CaPC rules ({dataset} means other things elsewhere).
PATE_CAPC_WILDCARDS = dict(
    algo="|".join(PATE_CAPC_ALGOS),
    dataset="[a-z0-9-]+",
    model="logreg|mlp|lenet5|wrn16-4",
    seed=r"\d+",
    adversary="|".join(ADVERSARIES),
    sigma=r"[0-9.e+-]+",
)


def pate_capc_sigma(dataset):
    """σ of a dataset as written in paths (sigma40, sigma2.5)."""
    return f"{float(get_config(*PATE_CAPC, 'dataset_settings', dataset, 'sigma')):g}"


def pate_capc_prefix(algo, dataset):
    """{algo}/{dataset}/{model}/seed{seed} for the configured model and seed."""
    return f"{algo}/{dataset}/{get_config(*PATE_CAPC, 'dataset_settings', dataset, 'model')}/seed{get_config('seed')}"


def pate_capc_audit_dir(algo, dataset, adversary):
    return f"results/audits/{pate_capc_prefix(algo, dataset)}/{adversary}/sigma{pate_capc_sigma(dataset)}"


# resources.gpu of the two teacher-training rules (train_teachers, train_canary_teachers): the
# CNN teachers ask for one GPU, logreg and mlp none.
PATE_CAPC_GPU_MODELS = ("lenet5", "wrn16-4")


def get_teacher_gpu(wildcards):
    """resources.gpu of a teacher-training job: 1 for a model of PATE_CAPC_GPU_MODELS, else 0."""
    return 1 if wildcards.model in PATE_CAPC_GPU_MODELS else 0


def get_teacher_params(wildcards):
    """Teacher hyper-parameters of a rule's {model} (chadha2024.pate_capc.teacher_params.<model>;
    keys left at null take ppaudit.models.teachers.DEFAULT_PARAMS) plus the determinism and
    batching switches of the section."""
    params = get_config(*PATE_CAPC, "teacher_params").get(wildcards.model, {})
    return {
        **{k: v for k, v in params.items() if v is not None},
        "deterministic": get_config(*PATE_CAPC, "deterministic"),
        "batch_teachers": get_config(*PATE_CAPC, "batch_teachers"),
    }


# --- Private-kNN (Chadha et al. 2024, §6, App. D.3, E.4) -------------------------------------
# Rules: workflow/rules/features.smk (encoders), workflow/rules/knn.smk (audit). Dataset and
# encoder modalities: ppaudit.experiments.chadha2024.private_knn_names (KNN_MODALITY, KNN_ENCODER_MODALITY);
# adversaries and their labels: ppaudit.experiments.chadha2024.private_knn_names.KNN_ADVERSARY_LABELS.
# Paths share the prefix K = {dataset}/{encoder}/seed{seed}:
#   results/features/K/{train,test}.npy             encoder features (float32, one row per point)
#   results/features/K/labels.npz                   labels of the train / test subsets
#   resources/features/{dataset}/{encoder}/*.npy    the library's feature cache (reused across runs)
#   results/knn/K/setup.npz                         query set, exact neighbours, P_q and P^k_q
#   results/knn/K/crafted/{adversary}.npz           candidate canaries / poisons and their ν per query
#   results/knn/K/{adversary}/sigma{sigma}/per_query.csv        per-query RDP (audits, exact, theory)
#   results/knn/K/{adversary}/sigma{sigma}/{rdp,eps,summary}.csv  composed, ε at δ, worst/average
#   results/chadha2024/private_prediction/knn/summary.csv       every summary of the kNN audit
#   results/tables/findings/knn.csv                             the paper's claims (§6), checked

KNN = ("chadha2024", "knn")  # its config section: get_config(*KNN, key)

# Rule-level wildcard constraints of the feature and kNN rules.
KNN_WILDCARDS = dict(
    dataset="|".join(KNN_MODALITY),
    encoder="|".join(KNN_ENCODER_MODALITY),
    seed=r"\d+",
    adversary="|".join(KNN_ADVERSARY_LABELS),
    sigma=r"[0-9.e+-]+",
)


def knn_audit_device():
    """Monte Carlo device of audit_knn: chadha2024.knn.audit_device where the audit samples
    (nonenumerable: sample), else "cpu". The Rao–Blackwellised (paper.yaml) and exact-count
    audits run no sampler, so a GPU would sit idle (and device_scope("cuda") would demand one)."""
    return get_config(*KNN, "audit_device") if get_config(*KNN, "nonenumerable") == "sample" else "cpu"


def knn_audit_gpu(wildcards):
    """resources.gpu of audit_knn: 1 where it samples on CUDA (knn_audit_device), else 0."""
    return 1 if str(knn_audit_device()).startswith("cuda") else 0


def get_knn_advq_candidates(wildcards):
    """AdvQ candidates of a dataset: its own setting ("all" → None = every query), else the global one."""
    n = get_config(*KNN, "dataset_settings", wildcards.dataset, "advq_candidates")
    if n is None:
        return get_config(*KNN, "advq_candidates")
    return None if n == "all" else n


def knn_sigma(dataset):
    """σ as written in paths: the dataset's own, else the paper's per modality (App. D.3)."""
    s = get_config(*KNN, "dataset_settings", dataset, "sigma")
    if s is None:
        s = get_config(*KNN, "sigma", KNN_MODALITY[dataset])
    return f"{float(s):g}"


def knn_prefix(dataset):
    """{dataset}/{encoder}/seed{seed} for the configured encoder and seed."""
    return f"{dataset}/{get_config(*KNN, 'dataset_settings', dataset, 'encoder')}/seed{get_config('seed')}"


def knn_audit_dir(dataset, adversary):
    return f"results/knn/{knn_prefix(dataset)}/{adversary}/sigma{knn_sigma(dataset)}"


# --- PromptPATE (Chadha et al. 2024, §5.3–5.4, App. D.2, E.3) -----------------------------
# Rules: workflow/rules/prompts.smk. Paths (P = promptpate/{dataset}/{model_name}/seed{seed}):
#   resources/models/gemma3-270m-q4_k_m.gguf                    packaged GGUF (model: packaged)
#   resources/models/gemma3-270m-q4_k_m-hf/                     its safetensors conversion
#   resources/llm_cache/predictions.sqlite                      prediction cache (model, prompt)
#   results/votes/P/votes.npz                                   every teacher and canary vote
#   results/votes/P/teacher_accuracy.csv                        accuracy of teachers and plurality
#   results/audits/P/{adversary}/sigma{sigma}/per_query.csv     per-query RDP (audits, exact, theory)
#   results/audits/P/{adversary}/sigma{sigma}/{rdp,eps,summary}.csv  composed, ε at δ, worst/average
#   results/chadha2024/private_prediction/promptpate/summary.csv           Figs. 3/4 panel (PATE columns)
#   results/chadha2024/private_prediction/promptpate/summary_variants.csv  every Pois-NatQ variant
#   results/tables/findings/promptpate.csv                      the paper's PromptPATE claims, checked

PROMPTPATE = ("chadha2024", "promptpate")  # its config section: get_config(*PROMPTPATE, key)
PROMPTPATE_GGUF = "resources/models/gemma3-270m-q4_k_m.gguf"
PROMPTPATE_CONVERTED = "resources/models/gemma3-270m-q4_k_m-hf"
PROMPTPATE_CACHE = "resources/llm_cache/predictions.sqlite"
PROMPTPATE_SUMMARY = algo_summary("promptpate")
PROMPTPATE_SUMMARY_VARIANTS = "results/chadha2024/private_prediction/promptpate/summary_variants.csv"
PROMPTPATE_FINDINGS = findings_part("promptpate")

# Rule-level wildcard constraints of the PromptPATE rules ({dataset} means other things elsewhere).
PROMPTPATE_WILDCARDS = dict(
    dataset="rotten-tomatoes|sst2|agnews|dbpedia|trec",
    model=r"[A-Za-z0-9._-]+",
    seed=r"\d+",
    adversary="|".join(ADVERSARIES),
    sigma=r"[0-9.e+-]+",
)


def promptpate_sigma():
    """σ as written in paths (sigma5, sigma2.5)."""
    return f"{float(get_config(*PROMPTPATE, 'sigma')):g}"


def promptpate_prefix(dataset):
    """promptpate/{dataset}/{model_name}/seed{seed}."""
    return f"promptpate/{dataset}/{get_config(*PROMPTPATE, 'model_name')}/seed{get_config('seed')}"


def promptpate_audit_dir(dataset, adversary):
    return f"results/audits/{promptpate_prefix(dataset)}/{adversary}/sigma{promptpate_sigma()}"


def get_promptpate_model(wildcards):
    """The converted packaged model when model: packaged, else nothing (a folder or hub name)."""
    return [PROMPTPATE_CONVERTED] if get_config(*PROMPTPATE, "model") == "packaged" else []


def promptpate_model_source():
    """What load_causal_lm loads: the converted packaged folder, a local folder or a hub name."""
    model = get_config(*PROMPTPATE, "model")
    return PROMPTPATE_CONVERTED if model == "packaged" else model


def promptpate_uses_gpu():
    """1 (one GPU for prompt_teachers) for device: cuda or a hub model such as Mistral-7B, else 0
    (the packaged Gemma-3-270M and local folders run on CPU unless device says otherwise)."""
    device, model = get_config(*PROMPTPATE, "device"), get_config(*PROMPTPATE, "model")
    if device is not None:
        return 1 if device.startswith("cuda") else 0
    return 0 if model == "packaged" or os.path.isdir(model) else 1


def promptpate_audit_summaries():
    """Every audit_promptpate summary (all datasets and adversaries)."""
    return [f"{promptpate_audit_dir(ds, adv)}/summary.csv" for ds in get_config(*PROMPTPATE, "datasets") for adv in ADVERSARIES]


def promptpate_votes():
    """The votes of every PromptPATE dataset, in the order of chadha2024.promptpate.datasets."""
    return [f"results/votes/{promptpate_prefix(ds)}/votes.npz" for ds in get_config(*PROMPTPATE, "datasets")]



# --- Chadha et al. 2024, appendix figures (App. E.1–E.4, Figs. 7–31) -------------------------
# One rule, plot_chadha_appendix (workflow/rules/pate_capc.smk), for PATE/CaPC, PromptPATE and
# Private-kNN: each figure's mechanism, adversary, case, variant, summary file, NA handling,
# bar columns and title are the params of its row of workflow/figures.yaml; the config-derived
# inputs and params (the RDP curves of the panel dataset, the ε floor, the settings line) come
# from the mechanism's config section here.

# Config section of each mechanism of the appendix figures.
APPENDIX_SECTIONS = {"pate": PATE_CAPC, "capc": PATE_CAPC, "promptpate": PROMPTPATE, "knn": KNN}


def _check_appendix_rows():
    """Stop at parse time when an appendix figure row names an unknown mechanism."""
    for row in FIGURES.rows_of("plot_chadha_appendix"):
        if row.params.get("mechanism") not in APPENDIX_SECTIONS:
            raise WorkflowError(
                f"workflow/figures.yaml: target {row.id!r}: params.mechanism must be one of "
                f"{sorted(APPENDIX_SECTIONS)}, got {row.params.get('mechanism')!r}"
            )


_check_appendix_rows()


def appendix_section(wildcards):
    """Config section of the mechanism of an appendix figure, e.g. ("chadha2024", "knn")."""
    return APPENDIX_SECTIONS[figure_param("plot_chadha_appendix", "mechanism")(wildcards)]


def get_appendix_rdp(wildcards):
    """Input function of plot_chadha_appendix: the composed RDP curves of the figure's
    adversary on its mechanism's panel dataset."""
    figure = figure_params("plot_chadha_appendix")(wildcards)
    mechanism, adversary = figure["mechanism"], figure["adversary"]
    dataset = panel_dataset(*APPENDIX_SECTIONS[mechanism])
    if mechanism == "knn":
        return f"{knn_audit_dir(dataset, adversary)}/rdp.csv"
    if mechanism == "promptpate":
        return f"{promptpate_audit_dir(dataset, adversary)}/rdp.csv"
    return f"{pate_capc_audit_dir(mechanism, dataset, adversary)}/rdp.csv"


def appendix_setting(wildcards):
    """Settings printed under the RDP panel of an appendix figure (ppaudit.plots.appendix.setting_line):
    PromptPATE's model, k, n_Q and σ; none for PATE/CaPC and Private-kNN (they vary by dataset)."""
    if appendix_section(wildcards) != PROMPTPATE:
        return {}
    return {
        "model": get_config(*PROMPTPATE, "model_name"),
        "num_teachers": get_config(*PROMPTPATE, "num_teachers"),
        "num_queries": get_config(*PROMPTPATE, "num_queries"),
        "sigma": promptpate_sigma(),
    }


# --- Label DP (observational paper, Tables 1, 2, 4–7, Figs. 1–5; Malek et al. 2021, App. C–D) ---
# Rules: workflow/rules/labeldp.smk. Paths:
#   results/labeldp/{dataset}/data.pkl                    split + features
#   results/labeldp/{dataset}/reference.npz|json          M' (reference half, true labels)
#   results/labeldp/{dataset}/models.npz|json             every M (target half, label-DP labels)
#   results/labeldp/{dataset}/audits.csv                  LIA + calibrated MIA + RMIA of every M
#   results/labeldp/synthetic/{rr,tau_shift}[_summary].csv  RR audits on synthetic data
#   results/labeldp/malek/{algo}_eps{eps}_{run}.npz       memorisation-game canaries (one job, all runs)
#   results/tables/labeldp/{table}.csv|md                 tables (with the paper's numbers)
#   results/figures/labeldp/{fig}.pdf|png|csv             figures + plotted numbers

LABELDP_DATASETS = ("image", "tabular", "text")
# Mechanism options of the labeldp block that reach every training job with the dataset settings.
LABELDP_MECHANISM_KEYS = ("alibi_prior", "agibi_calibration", "pate_student", "fixmatch")
# Settings of the observational audit (rule audit_labeldp_models).
LABELDP_AUDIT_KEYS = ("repetitions", "t", "fixed_fraction", "delta", "confidence", "rmia_a")
LABELDP_TABLES = ("obs_table1", "obs_table2", "obs_table4", "obs_table5", "obs_table6", "obs_table7")
# Which dataset feeds each table.
LABELDP_TABLE_DATASET = {
    "obs_table1": "image",
    "obs_table4": "image",
    "obs_table6": "image",
    "obs_table2": "tabular",
    "obs_table5": "tabular",
    "obs_table7": "text",
}
LABELDP_TABLE_TITLES = {
    "obs_table1": "Obs. Table 1 (image; {image}): observational LIA, best ε over c' sweep, δ = 1e-5",
    "obs_table2": "Obs. Table 2 (tabular; {tabular}): observational LIA, best ε over c' sweep, δ = 1e-5",
    "obs_table4": "Obs. Table 4 (image): test accuracy (%) of the label-DP models",
    "obs_table5": "Obs. Table 5 (tabular): test log-loss of the label-DP models",
    "obs_table6": "Obs. Table 6 (image): observational LIA at a fixed 1% of guesses, δ = 1e-5",
    "obs_table7": "Obs. Table 7 (text; Rotten Tomatoes + TF-IDF MLP stand-in for Twitter): LIA vs calibrated MIA vs RMIA at ε = ∞",
}
# Obs. Figs. 1 and 5: the attacks drawn, the datasets and the title.
LABELDP_MIA_FIGURES = {
    "obs_fig1": (
        ("lia", "calibrated_mia"),
        ("image", "tabular"),
        "Obs. Fig. 1: observational LIA vs calibration MIA (image: {image_short}; tabular: {tabular_short})",
    ),
    "obs_fig5": (
        ("lia", "calibrated_mia", "rmia"),
        ("image",),
        "Obs. Fig. 5: LIA vs calibration MIA vs offline RMIA (image: {image_short})",
    ),
}
# Obs. Figs. 2 and 3: the guess fraction drawn (and its percentage in the title).
LABELDP_RR_FIGURES = {"obs_fig2": (0.001, "0.1"), "obs_fig3": (0.01, "1")}
MALEK_TITLES = {
    "malek_table5": "Malek Table 5: ε_m 95% CI of ALIBI, one game of N canaries vs ten games of N/10 ({malek})",
    "malek_table6": "Malek Table 6: ALIBI vs AGIBI ({malek}), ε_m 95% CI",
}



def labeldp_title(template):
    """A label-DP title with the data it was computed on: the offline stand-ins, or the papers'
    CIFAR-10 / Criteo when a dataset's source is download (fields {image}, {tabular},
    {image_short}, {tabular_short}, {malek})."""
    image, tabular = get_config("labeldp", "datasets", "image"), get_config("labeldp", "datasets", "tabular")
    cifar = image.get("source", "packaged") == "download"
    criteo = tabular.get("source", "packaged") == "download"
    net = str(image["model"].get("arch") or "").upper()
    images = {"mnist": "MNIST", "fashion-mnist": "Fashion-MNIST"}[image.get("images", "fashion-mnist")]
    return template.format(
        image=f"CIFAR-10 + {net}" if cifar else f"{images} + MLP stand-in for CIFAR-10",
        tabular="Criteo Day 0 / Day 1 + CatBoost" if criteo else "UCI Adult + CatBoost stand-in for Criteo",
        image_short=f"CIFAR-10 {net}" if cifar else f"{images} MLP",
        tabular_short="Criteo CatBoost" if criteo else "Adult CatBoost",
        malek=f"CIFAR-10 {net}" if cifar else f"{images} MLP stand-in",
    )


# Rule-level wildcard constraints of the label-DP rules ({dataset} means other things in
# other stages).
LABELDP_WILDCARDS = dict(
    dataset="|".join(LABELDP_DATASETS),
    table="|".join(LABELDP_TABLES),
    rrfig="|".join(LABELDP_RR_FIGURES),
    miafig="|".join(LABELDP_MIA_FIGURES),
    malektable="|".join(MALEK_TITLES),
)


def eps_name(e):
    """Config ε (number or "inf") -> wildcard text."""
    if isinstance(e, str) or math.isinf(float(e)):
        return "inf"
    return f"{float(e):g}"


def labeldp_settings(dataset):
    """The dataset's settings plus the mechanism options (ALIBI prior, AGIBI calibration, PATE student, FixMatch)."""
    return dict(get_config("labeldp", "datasets", dataset), **{k: get_config("labeldp", k) for k in LABELDP_MECHANISM_KEYS})


# The papers' data of a label-DP dataset with source: download (rule download_dataset).
LABELDP_DOWNLOADS = {"image": "cifar10", "tabular": "criteo"}


def _warn_unpinned_criteo():
    """Criteo publishes no checksum: with labeldp.datasets.tabular.source: download and no
    registry file pinning its days, the tabular label-DP targets stop at download_dataset
    (ppaudit.data.download_dataset says how to pin); say so at parse time, without stopping the
    targets that do not need it."""
    if get_config("labeldp", "datasets", "tabular").get("source", "packaged") != "download":
        return
    from ppaudit.data import active_registry

    if not getattr(active_registry().get("criteo"), "files", ()):
        logger.warning(
            "labeldp.datasets.tabular.source is download (Criteo), but no dataset_registry file pins Criteo's day_0.gz / "
            "day_1.gz (Criteo publishes no checksum): obs_table2, obs_table5 and obs_fig1 will stop at download_dataset[criteo]. "
            "Pin your trusted copy with ppaudit.data.criteo_registry_entry in the dataset_registry file."
        )


_warn_unpinned_criteo()


def labeldp_dataset_marker(wildcards):
    """Input function of prepare_labeldp_data: the download marker of the papers' data (CIFAR-10,
    Criteo) when the dataset's source is download, else nothing."""
    s = get_config("labeldp", "datasets", wildcards.dataset)
    if s.get("source", "packaged") == "download":
        return [f"resources/datasets/{LABELDP_DOWNLOADS[wildcards.dataset]}/.verified"]
    return []


def labeldp_models(dataset):
    """The target models of a dataset: [algo, ε text] for every (algorithm, ε) of its settings (algorithm_epsilons included)."""
    return [[a, eps_name(e)] for a, e in labeldp_model_grid(labeldp_settings(dataset))]


def labeldp_audit_files(dataset):
    """The audit CSV of a dataset (rows of every (algorithm, ε))."""
    return [f"results/labeldp/{dataset}/audits.csv"]


def get_labeldp_table_audits(wildcards):
    """Input function of tabulate_labeldp: the audits of the table's dataset."""
    return labeldp_audit_files(LABELDP_TABLE_DATASET[wildcards.table])


def get_labeldp_mia_audits(wildcards):
    """Input function of plot_labeldp_mia: the audits of the figure's datasets."""
    return [f for ds in LABELDP_MIA_FIGURES[wildcards.miafig][1] for f in labeldp_audit_files(ds)]


def labeldp_rr_title(fig):
    """Axes title of Obs. Fig. 2 or 3."""
    rr = get_config("labeldp", "synthetic_rr")
    return f"Obs. Fig. {fig[-1]}: auditing k-ary RR, {LABELDP_RR_FIGURES[fig][1]}% guesses, n = {rr['n']}, {rr['repetitions']} repetitions"


def get_malek_runs(wildcards):
    """Input function of tabulate_malek: npz files of the memorisation runs of Malek Table 5 or 6."""
    m = get_config("labeldp", "malek")
    files = []
    for level in m["levels"].values():
        files.append(malek_run_file("alibi", eps_name(level["alibi"]), "n1000"))
        # Table 6 reads the small games too: the ALIBI rows quote their accuracy (malek_tables.malek_table)
        files += [malek_run_file("alibi", eps_name(level["alibi"]), f"g{i}") for i in range(m["games"])]
        if wildcards.malektable == "malek_table6":
            files.append(malek_run_file("agibi", eps_name(level["agibi"]), "n1000"))
    return files


def malek_run_file(algo, eps, run):
    """The npz of one memorisation run (ε as wildcard text)."""
    return f"results/labeldp/malek/{algo}_eps{eps}_{run}.npz"


def malek_levels():
    """{level: {alibi: ε text, agibi: ε text}} for the scripts."""
    return {k: {a: eps_name(v[a]) for a in ("alibi", "agibi")} for k, v in get_config("labeldp", "malek", "levels").items()}


def malek_runs():
    """Every memorisation run of Malek Tables 5 and 6, once: [algo, ε text, run, canaries]
    (ppaudit.experiments.labeldp.memorization.memorization_runs; rule train_memorization_models)."""
    from ppaudit.experiments.labeldp.memorization import memorization_runs

    m = get_config("labeldp", "malek")
    return [list(r) for r in memorization_runs(malek_levels(), m["games"], m["num_canaries"], m["canaries_per_game"])]


# --- Wang et al. 2022, vote-histogram leakage (Figs. 1, 3–7; §5 answer caching) -------------
# Rules: workflow/rules/wang2022.smk (paths listed there).

# Dataset key -> (loader name of ppaudit.data.load_dataset, figure title).
WANG_LOADERS = {
    "mnist": ("mnist", "MNIST"),
    "fashion-mnist": ("fashion-mnist", "Fashion-MNIST"),
    "svhn": ("svhn", "SVHN"),
}
# The two datasets of Figs. 3–7 and the findings (wang2022.figure_datasets): the embedded
# default replaces the paper's SVHN by Fashion-MNIST, config/paper.yaml uses SVHN.
WANG_DATASETS = {k: WANG_LOADERS[k] for k in get_config("wang2022", "figure_datasets")}
# Figures 6 and 7 of the paper: one per dataset, in that order.
WANG_SIGMA_FIGURES = dict(zip(("fig6", "fig7"), get_config("wang2022", "figure_datasets")))
# Rule-level constraint of the {dataset} wildcard (other stages use {dataset} with other
# values, so no global constraint).
WANG_DATASET_PATTERN = "|".join(WANG_DATASETS)
# The adversaries whose fitted PATE/CaPC vote models the answer-caching defence is measured on.
WANG_DEFENCE_ADVERSARIES = ("nat-advq", "pois-advq")


def wang_solvers():
    """Solvers of the histogram attacks (wang2022.attack.solver: both → paper and ours)."""
    solver = get_config("wang2022", "attack", "solver")
    return ["paper", "ours"] if solver == "both" else [solver]


def wang_paper_error(dataset):
    """(paper dataset, mean budget-attack error the paper states for it) for one of our
    datasets: row wang_budget_error_<mnist|svhn> of PAPER_NUMBERS (Wang et al. 2022, §4.2)."""
    from ppaudit.experiments.paper_comparison import paper_value, read_paper_numbers

    paper = get_config("wang2022", "datasets", dataset, "paper_dataset")
    try:
        return paper, paper_value(read_paper_numbers(PAPER_NUMBERS), f"wang_budget_error_{paper.lower()}")
    except ValueError as exc:
        raise WorkflowError(f"{PAPER_NUMBERS}: {exc}") from None


def wang_pate_defence_inputs():
    """Fits, candidates and composed audits of the PATE/CaPC stage's AdvQ adversaries on
    its panel dataset: the defence measured on fitted vote models (rule audit_wang_caching_pate)."""
    algo = get_config("wang2022", "defence", "pate", "algo")
    ds = panel_dataset("chadha2024", "pate_capc")
    prefix = pate_capc_prefix(algo, ds)
    return {
        "fits": [f"results/fits/{prefix}/{adv}.npz" for adv in WANG_DEFENCE_ADVERSARIES],
        "canaries": [f"results/canaries/{prefix}/{adv}.npz" for adv in WANG_DEFENCE_ADVERSARIES],
        "rdp": [f"{pate_capc_audit_dir(algo, ds, adv)}/rdp.csv" for adv in WANG_DEFENCE_ADVERSARIES],
    }


# --- Report: the papers' numbers next to ours -------------------------------------------
# Rules: workflow/rules/report.smk.

# The curated list of numbers the papers state explicitly (see its header and
# ppaudit.experiments.paper_comparison): the one place of the papers' numbers, read by the
# paper comparison and by the label-DP tables' `paper` columns.
PAPER_NUMBERS = str(Path(workflow.basedir) / "workflow" / "data" / "paper_numbers.csv")


def get_paper_comparison_results(wildcards):
    """Input function of the paper comparison: the result files named in
    workflow/data/paper_numbers.csv that some rule of the workflow produces (read when the
    DAG is built, so rows of targets that do not exist are reported as "not computed")."""
    import pandas as pd

    table = pd.read_csv(PAPER_NUMBERS, dtype=str, keep_default_na=False)
    files = list(dict.fromkeys(f.strip() for f in table["result_file"] if f.strip()))
    return [f for f in files if any(r.is_producer(f) for r in workflow.rules if r.name != "paper_comparison")]
