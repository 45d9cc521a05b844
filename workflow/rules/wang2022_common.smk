# Wang et al. 2022 (vote-histogram leakage): config checks the schema cannot express,
# wildcard constraints and params helpers (targets: workflow/figures.yaml). No rules here.

import pandas as _wang_pd
from pathlib import Path as _WangPath

# Dataset key -> (loader name of ppaudit.data.load_dataset, figure title).
WANG_LOADERS = {
    "mnist": ("mnist", "MNIST"),
    "fashion_mnist": ("fashion-mnist", "Fashion-MNIST"),
    "svhn": ("svhn", "SVHN"),
}
# The two datasets of Figs. 3–7 and the findings (wang2022.figure_datasets): the embedded
# default replaces the paper's SVHN by Fashion-MNIST, config/paper.yaml uses SVHN.
WANG_DATASETS = {k: WANG_LOADERS[k] for k in config["wang2022"]["figure_datasets"]}
# Figures 6 and 7 of the paper: one per dataset, in that order.
WANG_SIGMA_FIGURES = dict(zip(("fig6", "fig7"), config["wang2022"]["figure_datasets"]))
# The papers' numbers live in one place; the findings compare each dataset with the row of
# the paper dataset it stands for (wang2022.datasets.<d>.paper_dataset).
WANG_PAPER_NUMBERS = str(_WangPath(workflow.basedir) / "workflow" / "data" / "paper_numbers.csv")


def _wang_check(config):
    w = config["wang2022"]
    if w["attack"]["budget_sigma"] <= 0:
        raise WorkflowError("Invalid configuration: wang2022.attack.budget_sigma must be > 0")
    for name in w["figure_datasets"]:
        if name not in w["datasets"]:
            raise WorkflowError(f"Invalid configuration: wang2022.figure_datasets names {name!r}, which wang2022.datasets lacks")
    if "svhn" in w["figure_datasets"] and w["histograms"]["data_source"] != "download":
        raise WorkflowError(
            "Invalid configuration: wang2022.figure_datasets includes svhn, which has no packaged copy: "
            "set wang2022.histograms.data_source = download (config/paper.yaml does)"
        )
    for name in w["figure_datasets"]:
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


def wang_solvers():
    """Solvers of the histogram attacks (wang2022.attack.solver: both → paper and ours)."""
    solver = wang_settings("attack")["solver"]
    return ["paper", "ours"] if solver == "both" else [solver]


def wang_paper_error(dataset):
    """(paper dataset, mean budget-attack error the paper states for it) for one of our
    datasets, from workflow/data/paper_numbers.csv (rows wang_budget_error_<mnist|svhn>)."""
    paper = wang_dataset(dataset)["paper_dataset"]
    table = _wang_pd.read_csv(WANG_PAPER_NUMBERS, dtype={"id": str})
    row = table[table["id"] == f"wang_budget_error_{paper.lower()}"]
    if len(row) != 1:
        raise WorkflowError(f"{WANG_PAPER_NUMBERS} needs exactly one row wang_budget_error_{paper.lower()}, found {len(row)}")
    return paper, float(row["paper_value"].iloc[0])


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
