# PromptPATE audits (Chadha et al. 2024, §5.3–5.4, App. D.2, E.3): config checks, path
# helpers, the PromptPATE panel of Figs. 3/4 and the PromptPATE part of the findings table.
# Functions and constants only (rules: workflow/rules/prompts.smk). Included after
# pate_capc_common.smk, whose lists CHADHA_FIG34_SUMMARIES and CHADHA_FINDINGS_PARTS it
# extends.
#
# Paths (P = promptpate/{dataset}/{model_name}/seed{seed}):
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

import os

PP_ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq")
PP_GGUF = "resources/models/gemma3-270m-q4_k_m.gguf"
PP_CONVERTED = "resources/models/gemma3-270m-q4_k_m-hf"
PP_CACHE = "resources/llm_cache/predictions.sqlite"
PP_SUMMARY = "results/chadha2024/private_prediction/promptpate/summary.csv"
PP_SUMMARY_VARIANTS = "results/chadha2024/private_prediction/promptpate/summary_variants.csv"
PP_FINDINGS = "results/tables/findings/promptpate.csv"
PP_NATQ_LABELS = {"confident": "Confident", "unconfident": "Unconfident", "all-same": "All same", "mapping": "Mapping"}

# Appendix figures (App. E.3): figure -> (adversary, Pois-NatQ variant or "-", case).
PP_APPENDIX_FIGURES = {
    "fig17": ("nat-advq", "-", "worst"),
    "fig18": ("nat-advq", "-", "average"),
    "fig19": ("pois-advq", "-", "worst"),
    "fig20": ("pois-advq", "-", "average"),
    "fig21": ("pois-natq", "confident", "worst"),
    "fig22": ("pois-natq", "unconfident", "worst"),
    "fig23": ("pois-natq", "all-same", "worst"),
    "fig24": ("pois-natq", "mapping", "worst"),
}


def pp_config():
    """The chadha2024.promptpate section of the config."""
    return config["chadha2024"]["promptpate"]


def _validate_promptpate(cfg):
    panel = cfg["rdp_panel_dataset"]
    if panel and panel not in cfg["datasets"]:
        raise WorkflowError(f"Invalid configuration: chadha2024.promptpate.rdp_panel_dataset {panel!r} is not in chadha2024.promptpate.datasets {cfg['datasets']}")
    if max(cfg["orders"]) < 32:
        raise WorkflowError(f"Invalid configuration: chadha2024.promptpate.orders ends at {max(cfg['orders'])}; the ε of a zero RDP curve is set by the largest order, so include orders up to at least 32 (e.g. 256)")
    fig4 = cfg["fig4_variant"]
    if fig4 != "best" and fig4 not in cfg["natq_variants"]:
        raise WorkflowError(f"Invalid configuration: chadha2024.promptpate.fig4_variant {fig4!r} is not in chadha2024.promptpate.natq_variants {cfg['natq_variants']}")


_validate_promptpate(pp_config())


def pp_sigma():
    """σ as written in paths (sigma5, sigma2.5)."""
    return f"{float(pp_config()['sigma']):g}"


def pp_prefix(dataset):
    """promptpate/{dataset}/{model_name}/seed{seed}."""
    return f"promptpate/{dataset}/{pp_config()['model_name']}/seed{config['seed']}"


def pp_audit_dir(dataset, adversary):
    return f"results/audits/{pp_prefix(dataset)}/{adversary}/sigma{pp_sigma()}"


def pp_model_inputs(wildcards):
    """The converted packaged model when model: packaged, else nothing (a folder or hub name)."""
    return [PP_CONVERTED] if pp_config()["model"] == "packaged" else []


def pp_model_source():
    """What load_causal_lm loads: the converted packaged folder, a local folder or a hub name."""
    return PP_CONVERTED if pp_config()["model"] == "packaged" else pp_config()["model"]


def pp_uses_gpu():
    """1 (one GPU for prompt_teachers) for device: cuda or a hub model such as Mistral-7B, else 0
    (the packaged Gemma-3-270M and local folders run on CPU unless device says otherwise)."""
    cfg = pp_config()
    if cfg["device"] is not None:
        return 1 if cfg["device"].startswith("cuda") else 0
    return 0 if cfg["model"] == "packaged" or os.path.isdir(cfg["model"]) else 1


def pp_all_audit_summaries():
    return [f"{pp_audit_dir(ds, adv)}/summary.csv" for ds in pp_config()["datasets"] for adv in PP_ADVERSARIES]


def pp_panel_dataset():
    """Dataset of the RDP-vs-order panel of Figs. 17–24."""
    cfg = pp_config()
    return cfg["rdp_panel_dataset"] or cfg["datasets"][0]


def pp_epsilon_floor():
    """ε of an all-zero RDP curve at the PromptPATE orders and δ."""
    from ppaudit.experiments.pate_capc_findings import epsilon_floor

    return epsilon_floor(pp_config()["orders"], pp_config()["delta"])


def pp_appendix_caption(fig):
    adv, variant, case = PP_APPENDIX_FIGURES[fig]
    if adv == "pois-natq":
        return f"PromptPATE, Pois-NatQ {PP_NATQ_LABELS[variant]} adversary"
    return f"PromptPATE, {case} case for the {PC_ADVERSARY_LABELS[adv]} adversary"


# Figs. 3/4 get the PromptPATE panel; the findings table gets the PromptPATE part.
CHADHA_FIG34_SUMMARIES.append(PP_SUMMARY)
CHADHA_FINDINGS_PARTS.append(PP_FINDINGS)


def chadha_promptpate_targets():
    """Every file of the PromptPATE appendix figures (Figs. 17–24) and the PromptPATE summary.

    Figs. 3/4 and the findings table (with their PromptPATE panel / part, which need the
    PATE/CaPC summaries too) are targets of chadha_pate_capc_targets().
    """
    return expand("results/figures/chadha2024/{fig}.{ext}", fig=list(PP_APPENDIX_FIGURES), ext=("pdf", "png", "csv")) + [
        PP_SUMMARY,
        PP_SUMMARY_VARIANTS,
    ]
