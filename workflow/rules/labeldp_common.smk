# Label-DP audits (observational paper, Malek et al. 2021 App. B–D): functions and checks
# (no rules; the rules are in labeldp.smk).

import math
from pathlib import Path as _LdPath

# The papers' numbers (one place, issue 12): the tables' `paper` columns are read from here.
LABELDP_PAPER_NUMBERS = str(_LdPath(workflow.basedir) / "workflow" / "data" / "paper_numbers.csv")

LABELDP_DATASETS = ("image", "tabular", "text")
LABELDP_ALGOS = ("lp_1st", "lp_1st_nc", "lp_1st_prior", "lp_1st_ood", "lp_2st", "alibi", "agibi", "pate")
# Mechanism options of the labeldp block that reach every training job with the dataset settings.
LABELDP_MECHANISM_KEYS = ("alibi_prior", "agibi_calibration", "pate_student", "fixmatch")
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
    "obs_table1": "Obs. Table 1 (image; Fashion-MNIST + MLP stand-in for CIFAR-10): observational LIA, best ε over c' sweep, δ = 1e-5",
    "obs_table2": "Obs. Table 2 (tabular; UCI Adult + CatBoost stand-in for Criteo): observational LIA, best ε over c' sweep, δ = 1e-5",
    "obs_table4": "Obs. Table 4 (image): test accuracy (%) of the label-DP models",
    "obs_table5": "Obs. Table 5 (tabular): test log-loss of the label-DP models",
    "obs_table6": "Obs. Table 6 (image): observational LIA at a fixed 1% of guesses, δ = 1e-5",
    "obs_table7": "Obs. Table 7 (text; Rotten Tomatoes + TF-IDF MLP stand-in for Twitter): LIA vs calibrated MIA vs RMIA at ε = ∞",
}


def labeldp():
    return config["labeldp"]


def _eps_name(e):
    """Config ε (number or "inf") -> wildcard text."""
    if isinstance(e, str) or math.isinf(float(e)):
        return "inf"
    return f"{float(e):g}"


def labeldp_dataset_settings(dataset):
    """The dataset's settings plus the mechanism options (ALIBI prior, AGIBI calibration, PATE student, FixMatch)."""
    return dict(labeldp()["datasets"][dataset], **{k: labeldp()[k] for k in LABELDP_MECHANISM_KEYS})


def labeldp_models(dataset):
    """(algo, eps) wildcard pairs of a dataset."""
    s = labeldp_dataset_settings(dataset)
    return [(a, _eps_name(e)) for a in s["algorithms"] for e in s["epsilons"]]


def labeldp_audit_files(dataset):
    return [f"results/labeldp/{dataset}/audits/{a}_eps{e}.csv" for a, e in labeldp_models(dataset)]


def labeldp_table_inputs(wildcards):
    return labeldp_audit_files(LABELDP_TABLE_DATASET[wildcards.table])


def malek_runs(table):
    """npz files of the memorization runs of Malek Table 5 or 6."""
    m = labeldp()["malek"]
    files = []
    for level in m["levels"].values():
        files.append(f"results/labeldp/malek/alibi_eps{_eps_name(level['alibi'])}_n1000.npz")
        if table == "malek_table5":
            files += [f"results/labeldp/malek/alibi_eps{_eps_name(level['alibi'])}_g{i}.npz" for i in range(m["games"])]
        else:
            files.append(f"results/labeldp/malek/agibi_eps{_eps_name(level['agibi'])}_n1000.npz")
    return files


def malek_levels():
    """{level: {alibi: ε text, agibi: ε text}} for the scripts."""
    return {k: {a: _eps_name(v[a]) for a in ("alibi", "agibi")} for k, v in labeldp()["malek"]["levels"].items()}


def malek_num_canaries(wildcards):
    m = labeldp()["malek"]
    return m["num_canaries"] if wildcards.run == "n1000" else m["canaries_per_game"]


def validate_labeldp(config):
    """Checks the schema cannot express; raise WorkflowError naming the key."""
    c = config["labeldp"]
    for name, s in c["datasets"].items():
        for a in s["algorithms"]:
            if a == "lp_1st_ood" and name != "image":
                raise WorkflowError(f"Invalid configuration: labeldp.datasets.{name}.algorithms has lp_1st_ood, which needs image data")
        for e in s["epsilons"]:
            if isinstance(e, str) and e != "inf":
                raise WorkflowError(f"Invalid configuration: labeldp.datasets.{name}.epsilons has {e!r}; use a number > 0 or \"inf\"")
        if name == "tabular" and s["model"].get("iterations") is None:
            raise WorkflowError("Invalid configuration: labeldp.datasets.tabular.model needs iterations (CatBoost)")
    if c["malek"]["num_canaries"] > c["datasets"]["image"]["train_size"] // 2:
        raise WorkflowError("Invalid configuration: labeldp.malek.num_canaries exceeds the target half of labeldp.datasets.image.train_size")
    if not {0.001, 0.01} <= set(c["synthetic_rr"]["guess_fractions"]):
        raise WorkflowError("Invalid configuration: labeldp.synthetic_rr.guess_fractions must contain 0.001 (Fig. 2) and 0.01 (Fig. 3)")


validate_labeldp(config)
