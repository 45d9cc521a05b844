# Wang et al. 2022 (vote-histogram leakage): config checks the schema cannot express,
# wildcard constraints, params helpers and the list of figure targets. No rules here.

# Dataset wildcard -> (loader name of ppaudit.data.load_dataset, figure title).
WANG_DATASETS = {
    "mnist": ("mnist", "MNIST"),
    "fashion_mnist": ("fashion-mnist", "Fashion-MNIST"),
}
# Figures 6 and 7 of the paper: one per dataset (the paper's SVHN is replaced by Fashion-MNIST).
WANG_SIGMA_FIGURES = {"fig6": "mnist", "fig7": "fashion_mnist"}
WANG_FIGURES = ("fig1", "fig3", "fig4", "fig5", "fig6", "fig7", "defence_caching")


def _wang_check(config):
    w = config["wang2022"]
    if w["attack"]["budget_sigma"] <= 0:
        raise WorkflowError("Invalid configuration: wang2022.attack.budget_sigma must be > 0")
    for name in WANG_DATASETS:
        d = w["datasets"][name]
        test_size = d["test_size"]
        if test_size is not None and test_size < 3 * w["attack"]["per_level"]:
            raise WorkflowError(
                f"Invalid configuration: wang2022.datasets.{name}.test_size = {test_size} is smaller than "
                f"3 × wang2022.attack.per_level = {3 * w['attack']['per_level']} (five histograms per consensus level)"
            )
    for i, h in enumerate(w["defence"]["histograms"]):
        if len(h) < 2 or sum(h) <= 0:
            raise WorkflowError(f"Invalid configuration: wang2022.defence.histograms[{i}] needs ≥ 2 classes and a positive total")
    if len(w["defence"]["audit_histogram"]) < 2:
        raise WorkflowError("Invalid configuration: wang2022.defence.audit_histogram needs ≥ 2 classes")
    if sorted(w["defence"]["audit_histogram"], reverse=True)[1] < 1:
        raise WorkflowError(
            "Invalid configuration: wang2022.defence.audit_histogram needs ≥ 1 vote on its second class "
            "(Nat-AdvQ moves one vote from the second class to the top class)"
        )


_wang_check(config)


# Rule-level constraint of the {dataset} wildcard (other stages use {dataset} with other
# values, so no global constraint).
WANG_DATASET_PATTERN = "|".join(WANG_DATASETS)


def wang_settings(section):
    """One section of the wang2022 config (histograms, attack, adult, defence, datasets)."""
    return config["wang2022"][section]


def wang_dataset(dataset):
    """Per-dataset settings (train/test size, budget, δ) of wang2022.datasets.<dataset>."""
    return config["wang2022"]["datasets"][dataset]


def wang_report(fig, ext, subcategory):
    """report() wrapper of one output file of a Wang et al. 2022 figure target."""
    return report(
        f"results/figures/wang2022/{fig}.{ext}",
        caption=f"../report/wang_{fig}.rst",
        category="Wang et al. 2022",
        subcategory=subcategory,
        labels={"figure": subcategory, "file": {"pdf": "PDF", "png": "PNG", "csv": "CSV (plotted numbers)"}[ext]},
    )


def wang_figure_targets():
    """Every file of the Wang et al. 2022 targets (collected by the `all` target)."""
    return expand("results/figures/wang2022/{fig}.{ext}", fig=WANG_FIGURES, ext=("pdf", "png", "csv")) + [
        "results/tables/wang2022_findings.csv"
    ]


def wang_pate_defence_inputs():
    """Fits, candidates and composed audits of the PATE/CaPC stage's AdvQ adversaries on
    its panel dataset: the defence measured on fitted vote models (rule audit_wang_caching_pate)."""
    algo = wang_settings("defence")["pate"]["algo"]
    ds = pc_panel_dataset()
    prefix = pc_prefix(algo, ds)
    advs = ("nat-advq", "pois-advq")
    return {
        "fits": [f"results/fits/{prefix}/{adv}.npz" for adv in advs],
        "canaries": [f"results/canaries/{prefix}/{adv}.npz" for adv in advs],
        "rdp": [f"{pc_audit_dir(algo, ds, adv)}/rdp.csv" for adv in advs],
    }
