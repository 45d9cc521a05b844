# Private-kNN audits (Chadha et al. 2024, §6, App. D.3, App. E.4): config checks, path
# helpers of Fig. 5 and Figs. 25–31 (targets: workflow/figures.yaml). Functions only (rules:
# workflow/rules/features.smk for the encoders, workflow/rules/knn.smk for the audit).
#
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

KNN_ADVERSARY_NAMES = ("nat-advq", "pois-advq", "pois-natq-test", "pois-natq-train", "pois-natq-embedding")
KNN_ADVERSARY_LABELS = {
    "nat-advq": "Nat-AdvQ",
    "pois-advq": "Pois-AdvQ",
    "pois-natq-test": "Pois-NatQ (test)",
    "pois-natq-train": "Pois-NatQ (train)",
    "pois-natq-embedding": "Pois-NatQ (embedding)",
}
# Modality of every dataset the kNN audit knows (ppaudit.experiments.private_knn.KNN_DATASETS).
KNN_MODALITY = {
    "fashion-mnist": "image",
    "mnist": "image",
    "cifar10": "image",
    "rotten-tomatoes": "text",
    "sst2": "text",
    "agnews": "text",
}
KNN_ENCODER_MODALITY = {
    "efficientnet-lite0": "image",
    "vit-l16-in21k": "image",
    "all-minilm-l6-v2": "text",
    "roberta-large": "text",
}
# Datasets with an offline copy (source: packaged).
KNN_PACKAGED = ("fashion-mnist", "mnist", "rotten-tomatoes")

# Appendix figures (App. E.4): figure -> (adversary, case).
KNN_APPENDIX_FIGURES = {
    "fig25": ("nat-advq", "worst"),
    "fig26": ("nat-advq", "average"),
    "fig27": ("pois-advq", "worst"),
    "fig28": ("pois-advq", "average"),
    "fig29": ("pois-natq-embedding", "worst"),
    "fig30": ("pois-natq-train", "worst"),
    "fig31": ("pois-natq-test", "worst"),
}


def knn_config():
    """The chadha2024.knn section of the config."""
    return config["chadha2024"]["knn"]


def _validate_knn(cfg):
    where = "Invalid configuration: chadha2024.knn"
    known = cfg["dataset_settings"]
    for ds in cfg["datasets"]:
        if ds not in known:
            raise WorkflowError(f"{where}.datasets names {ds!r}, which has no entry in chadha2024.knn.dataset_settings (have {sorted(known)})")
        st = known[ds]
        if KNN_ENCODER_MODALITY[st["encoder"]] != KNN_MODALITY[ds]:
            raise WorkflowError(
                f"{where}.dataset_settings.{ds}.encoder is {st['encoder']!r}, a {KNN_ENCODER_MODALITY[st['encoder']]} encoder, "
                f"but {ds} is a {KNN_MODALITY[ds]} dataset"
            )
        if cfg["source"] == "packaged" and ds not in KNN_PACKAGED:
            raise WorkflowError(f"{where}.datasets holds {ds!r}, which has no packaged (offline) copy; set chadha2024.knn.source: download")
        if st["num_test"] is not None and cfg["num_queries"] > st["num_test"]:
            raise WorkflowError(f"{where}.num_queries = {cfg['num_queries']} exceeds chadha2024.knn.dataset_settings.{ds}.num_test = {st['num_test']}")
        if st["num_train"] is not None and st["num_train"] * cfg["gamma"] < 1.5 * cfg["k"]:
            raise WorkflowError(
                f"{where}.dataset_settings.{ds}.num_train = {st['num_train']} is too small for k = {cfg['k']} and "
                f"gamma = {cfg['gamma']} (the subsample must hold k points: need num_train·gamma ≥ 1.5·k)"
            )
    panel = cfg["rdp_panel_dataset"]
    if panel and panel not in cfg["datasets"]:
        raise WorkflowError(f"{where}.rdp_panel_dataset {panel!r} is not in chadha2024.knn.datasets {cfg['datasets']}")
    if cfg["advq_candidates"] is not None and cfg["advq_candidates"] > cfg["num_queries"]:
        raise WorkflowError(f"{where}.advq_candidates = {cfg['advq_candidates']} exceeds chadha2024.knn.num_queries = {cfg['num_queries']}")
    for ds in cfg["datasets"]:
        n = known[ds]["advq_candidates"]
        if isinstance(n, int) and n > cfg["num_queries"]:
            raise WorkflowError(f"{where}.dataset_settings.{ds}.advq_candidates = {n} exceeds chadha2024.knn.num_queries = {cfg['num_queries']}")
    if max(cfg["orders"]) < 32:
        raise WorkflowError(f"{where}.orders ends at {max(cfg['orders'])}; the ε of a zero RDP curve is set by the largest order, so include orders up to at least 32 (e.g. 256)")


_validate_knn(knn_config())


def knn_dataset(dataset):
    """Encoder, subset sizes and σ of one dataset (chadha2024.knn.dataset_settings)."""
    return knn_config()["dataset_settings"][dataset]


def knn_encoder(dataset):
    return knn_dataset(dataset)["encoder"]


def knn_advq_candidates(dataset):
    """AdvQ candidates of a dataset: its own setting ("all" → None = every query), else the global one."""
    n = knn_dataset(dataset)["advq_candidates"]
    if n is None:
        return knn_config()["advq_candidates"]
    return None if n == "all" else n


def knn_sigma(dataset):
    """σ as written in paths: the dataset's own, else the paper's per modality (App. D.3)."""
    s = knn_dataset(dataset)["sigma"]
    if s is None:
        s = knn_config()["sigma"][KNN_MODALITY[dataset]]
    return f"{float(s):g}"


def knn_prefix(dataset):
    """{dataset}/{encoder}/seed{seed} for the configured encoder and seed."""
    return f"{dataset}/{knn_encoder(dataset)}/seed{config['seed']}"


def knn_audit_dir(dataset, adversary):
    return f"results/knn/{knn_prefix(dataset)}/{adversary}/sigma{knn_sigma(dataset)}"


def knn_dataset_inputs(wildcards):
    """The download marker of an image dataset when the config downloads it, else nothing."""
    if knn_config()["source"] == "download" and wildcards.dataset in ("mnist", "fashion-mnist", "cifar10"):
        return [f"resources/datasets/{wildcards.dataset}/.verified"]
    return []


def knn_summaries(wildcards=None):
    """Every compose_knn_audit summary (all datasets and adversaries)."""
    return [f"{knn_audit_dir(ds, adv)}/summary.csv" for ds in knn_config()["datasets"] for adv in KNN_ADVERSARY_NAMES]


def knn_panel_dataset():
    """Dataset of the RDP-vs-order panel of Figs. 25–31."""
    cfg = knn_config()
    return cfg["rdp_panel_dataset"] or cfg["datasets"][0]


def knn_epsilon_floor():
    """ε of an all-zero RDP curve at the configured orders and δ (an audit that found nothing)."""
    from ppaudit.audit import epsilon_floor

    return epsilon_floor(knn_config()["orders"], knn_config()["delta"])


def knn_appendix_caption(fig):
    adv, case = KNN_APPENDIX_FIGURES[fig]
    return f"Private-kNN, {case} case for the {KNN_ADVERSARY_LABELS[adv]} adversary"


# The kNN part of the findings table is listed in CHADHA_FINDINGS_PARTS (common.smk).
