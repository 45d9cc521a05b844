# Dataset downloads (Chadha et al. 2024, App. D; the label-DP papers' CIFAR-10 and Criteo
# day_0/day_1, whose checksums come from the dataset_registry file): MNIST, Fashion-MNIST and CIFAR-10 from
# their canonical sources with pinned checksums, retries and atomic placement
# (ppaudit.data.download_dataset); the marker resources/datasets/{dataset}/.verified is the
# input of the stages that read a downloaded dataset (config source: download). The paper's
# text datasets (SST-2, AG News, DBpedia, TREC) are fetched the same way by the stages that
# read them (ppaudit.data.load_text_dataset). The embedded default needs none of this.

import os


rule download_dataset:
    output:
        marker="resources/datasets/{dataset}/.verified",
    params:
        root=lambda wildcards, output: os.path.dirname(os.path.dirname(output.marker)),
    wildcard_constraints:
        dataset="mnist|fashion-mnist|cifar10|criteo",
    log:
        "logs/download_dataset/{dataset}.log",
    resources:
        mem_mb=2000,
        runtime=60,
    retries: 2
    conda:
        "../../envs/teachers.yaml"
    script:
        "../scripts/download_dataset.py"
