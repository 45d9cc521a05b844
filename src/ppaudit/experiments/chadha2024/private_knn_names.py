"""Names of the Private-kNN stage (Chadha et al. 2024, §6, App. D.3): its datasets, encoders and
adversaries, as plain data.

The workflow reads them when it parses (wildcard constraints, config checks), so this module
imports nothing: ``ppaudit.experiments.chadha2024.private_knn`` and ``ppaudit.plots.knn`` re-export them.
"""

from __future__ import annotations

__all__ = ["KNN_DATASETS", "KNN_MODALITY", "KNN_ENCODER_MODALITY", "KNN_PACKAGED_DATASETS", "KNN_ADVERSARY_LABELS"]

#: Datasets of the kNN audit: modality and number of classes.
KNN_DATASETS = {
    "fashion-mnist": ("image", 10),
    "mnist": ("image", 10),
    "cifar10": ("image", 10),
    "rotten-tomatoes": ("text", 2),
    "sst2": ("text", 2),
    "agnews": ("text", 4),
}

#: Modality (``"image"`` or ``"text"``) of every dataset of :data:`KNN_DATASETS`.
KNN_MODALITY = {name: modality for name, (modality, _) in KNN_DATASETS.items()}

#: Modality of every encoder of ``ppaudit.models.encoders.ENCODERS`` (App. D.3: ViT-L/16 for
#: images, RoBERTa-large for text; the offline defaults EfficientNet-Lite0 and all-MiniLM-L6-v2).
#: Kept here as data so that the workflow's config checks need not import torch.
KNN_ENCODER_MODALITY = {
    "efficientnet-lite0": "image",
    "vit-l16-in21k": "image",
    "all-minilm-l6-v2": "text",
    "roberta-large": "text",
}

#: Datasets of :data:`KNN_DATASETS` with an offline copy (``source="packaged"``); the others
#: are downloaded.
KNN_PACKAGED_DATASETS = ("fashion-mnist", "mnist", "rotten-tomatoes")

#: Legend label of each Private-kNN adversary (§6), in the bar order of Fig. 5's left panel.
KNN_ADVERSARY_LABELS = {
    "nat-advq": "Nat-AdvQ",
    "pois-advq": "Pois-AdvQ",
    "pois-natq-test": "Pois-NatQ (test)",
    "pois-natq-train": "Pois-NatQ (train)",
    "pois-natq-embedding": "Pois-NatQ (embedding)",
}
