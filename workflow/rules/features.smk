# Feature extraction of the Private-kNN audit (Chadha et al. 2024, §6, App. D.3): a seeded
# subset of a dataset's train and test splits through a pretrained encoder, one .npy per
# (dataset, encoder, split). The library's cache (resources/features/{dataset}/{encoder}/,
# ppaudit.models.feature_cache.extract_features) keeps the features across reruns of this rule: a rerun
# with the same inputs and encoder configuration loads them instead of encoding again.
# Config: chadha2024.knn (get_config(*KNN, key)); the wildcard constraints KNN_WILDCARDS
# (from ppaudit.experiments.chadha2024.private_knn_names' KNN_MODALITY and KNN_ENCODER_MODALITY): the
# Private-kNN section of workflow/rules/common.smk.


rule extract_features:
    input:
        get_dataset_marker(*KNN),
    output:
        train="results/features/{dataset}/{encoder}/seed{seed}/train.npy",
        test="results/features/{dataset}/{encoder}/seed{seed}/test.npy",
        labels="results/features/{dataset}/{encoder}/seed{seed}/labels.npz",
    params:
        num_train=lambda wildcards: get_config(*KNN, "dataset_settings", wildcards.dataset, "num_train"),
        num_test=lambda wildcards: get_config(*KNN, "dataset_settings", wildcards.dataset, "num_test"),
        seed=lambda wildcards: int(wildcards.seed),
        source=get_config(*KNN, "source"),
        root="resources/datasets",
        cache_dir="resources/features",
        batch_size=get_config(*KNN, "batch_size"),
        device=get_config(*KNN, "device"),
    wildcard_constraints:
        dataset=KNN_WILDCARDS["dataset"],
        encoder=KNN_WILDCARDS["encoder"],
        seed=KNN_WILDCARDS["seed"],
    log:
        "logs/extract_features/{dataset}/{encoder}/seed{seed}.log",
    benchmark:
        "benchmarks/extract_features/{dataset}/{encoder}/seed{seed}.tsv"
    threads: get_config(*KNN, "threads")
    resources:
        mem_mb=lambda wildcards: 16000 if wildcards.encoder in ("vit-l16-in21k", "roberta-large") else 4000,
        runtime=lambda wildcards: 240 if wildcards.encoder in ("vit-l16-in21k", "roberta-large") else 30,
        gpu=lambda wildcards: 1 if wildcards.encoder in ("vit-l16-in21k", "roberta-large") else 0,
    conda:
        "../../envs/features.yaml"
    script:
        "../scripts/extract_features.py"
