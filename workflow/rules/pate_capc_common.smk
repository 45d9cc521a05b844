# PATE and CaPC audits (Chadha et al. 2024, §5.1–5.2, §5.4, App. D.1, E.1–E.2): config
# checks, path helpers and the extensible input lists of Figs. 3/4 and of the findings
# table. Functions only (rules: workflow/rules/pate_capc.smk).
#
# Paths share the prefix P = {algo}/{dataset}/{model}/seed{seed}:
#   results/queries/{dataset}/seed{seed}.npz                  query set (test-set indices)
#   results/votes/P/votes_S.npz                               teachers of S, N_g instantiations
#   results/canaries/P/{adversary}.npz                        candidate canaries
#   results/votes/P/{adversary}/votes_S_prime.npz             canary-holding teacher
#   results/fits/P/{adversary}.npz                            P_q, P'_q (MLE)
#   results/audits/P/{adversary}/sigma{sigma}/per_query.csv   per-query RDP (audits, exact, theory)
#   results/audits/P/{adversary}/sigma{sigma}/{rdp,eps,summary}.csv  composed, ε at δ, worst/average
#   results/chadha2024/private_prediction/{algo}/summary.csv  every summary of one algorithm
#   results/tables/findings/{algo}.csv                        the paper's orderings, checked

PC_ALGOS = ("pate", "capc")
PC_ADVERSARIES = ("nat-advq", "pois-advq", "pois-natq")
PC_ADVERSARY_LABELS = {"nat-advq": "Nat-AdvQ", "pois-advq": "Pois-AdvQ", "pois-natq": "Pois-NatQ"}

# Appendix figures (App. E.1–E.2): figure -> (algorithm, adversary, case).
PC_APPENDIX_FIGURES = {
    "fig7": ("pate", "nat-advq", "worst"),
    "fig8": ("pate", "nat-advq", "average"),
    "fig9": ("pate", "pois-advq", "worst"),
    "fig10": ("pate", "pois-advq", "average"),
    "fig11": ("pate", "pois-natq", "worst"),
    "fig12": ("capc", "nat-advq", "worst"),
    "fig13": ("capc", "nat-advq", "average"),
    "fig14": ("capc", "pois-advq", "worst"),
    "fig15": ("capc", "pois-advq", "average"),
    "fig16": ("capc", "pois-natq", "worst"),
}


def pc_config():
    """The chadha2024.pate_capc section of the config."""
    return config["chadha2024"]["pate_capc"]


def _validate_pate_capc(cfg):
    known = cfg["dataset_settings"]
    for ds in cfg["datasets"]:
        if ds not in known:
            raise WorkflowError(f"Invalid configuration: chadha2024.pate_capc.datasets names {ds!r}, which has no entry in chadha2024.pate_capc.dataset_settings (have {sorted(known)})")
        if cfg["source"] == "packaged" and ds == "cifar10":
            raise WorkflowError("Invalid configuration: chadha2024.pate_capc.datasets holds 'cifar10', which has no packaged copy; set chadha2024.pate_capc.source: download")
        if cfg["source"] == "download" and ds == "digits":
            raise WorkflowError("Invalid configuration: chadha2024.pate_capc.datasets holds 'digits', which is packaged only; set chadha2024.pate_capc.source: packaged")
    panel = cfg["rdp_panel_dataset"]
    if panel and panel not in cfg["datasets"]:
        raise WorkflowError(f"Invalid configuration: chadha2024.pate_capc.rdp_panel_dataset {panel!r} is not in chadha2024.pate_capc.datasets {cfg['datasets']}")
    for adv, n in cfg["candidates"].items():
        if n > cfg["num_queries"]:
            raise WorkflowError(f"Invalid configuration: chadha2024.pate_capc.candidates.{adv} = {n} exceeds chadha2024.pate_capc.num_queries = {cfg['num_queries']}")
    if max(cfg["orders"]) < 32:
        raise WorkflowError(f"Invalid configuration: chadha2024.pate_capc.orders ends at {max(cfg['orders'])}; the ε of a zero RDP curve is set by the largest order, so include orders up to at least 32 (e.g. 256)")


_validate_pate_capc(pc_config())


def pc_dataset(dataset):
    """Teachers, σ and model of one dataset (chadha2024.pate_capc.dataset_settings)."""
    return pc_config()["dataset_settings"][dataset]


def pc_model(dataset):
    return pc_dataset(dataset)["model"]


def pc_sigma(dataset):
    """σ of a dataset as written in paths (sigma40, sigma2.5)."""
    return f"{float(pc_dataset(dataset)['sigma']):g}"


def pc_prefix(algo, dataset):
    """{algo}/{dataset}/{model}/seed{seed} for the configured model and seed."""
    return f"{algo}/{dataset}/{pc_model(dataset)}/seed{config['seed']}"


def pc_audit_dir(algo, dataset, adversary):
    return f"results/audits/{pc_prefix(algo, dataset)}/{adversary}/sigma{pc_sigma(dataset)}"


def pc_teacher_params(model):
    """Hyper-parameters of a teacher model (chadha2024.pate_capc.teacher_params.<model>)."""
    # Keys left at null take the library's default (ppaudit.models.teachers.DEFAULT_PARAMS).
    return {k: v for k, v in pc_config()["teacher_params"].get(model, {}).items() if v is not None}


def pc_dataset_inputs(wildcards):
    """The download marker of a dataset when the config downloads it, else nothing."""
    if pc_config()["source"] == "download":
        return [f"resources/datasets/{wildcards.dataset}/.verified"]
    return []


def pc_instantiations(algo):
    return pc_config()["num_instantiations"][algo]


def pc_algo_summaries(wildcards):
    """Every compose_audit summary of one algorithm (all datasets and adversaries)."""
    return [
        f"{pc_audit_dir(wildcards.algo, ds, adv)}/summary.csv"
        for ds in pc_config()["datasets"]
        for adv in PC_ADVERSARIES
    ]


def pc_panel_dataset():
    """Dataset of the RDP-vs-order panel of the appendix figures."""
    cfg = pc_config()
    return cfg["rdp_panel_dataset"] or cfg["datasets"][0]


def pc_epsilon_floor():
    """ε of an all-zero RDP curve at the configured orders and δ (an audit that found nothing)."""
    from ppaudit.audit import epsilon_floor

    return epsilon_floor(pc_config()["orders"], pc_config()["delta"])


# The panels of Figs. 3/4 (CHADHA_FIG34_SUMMARIES, chadha_fig34_summaries()) and the parts
# of the findings table (CHADHA_FINDINGS_PARTS, chadha_findings_parts()) are defined,
# complete, in workflow/rules/common.smk (no stage appends to them).


def pc_appendix_caption(fig):
    algo, adv, case = PC_APPENDIX_FIGURES[fig]
    return f"{'PATE' if algo == 'pate' else 'CaPC'}, {case} case for the {PC_ADVERSARY_LABELS[adv]} adversary"
