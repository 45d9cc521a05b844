"""Checks of the workflow config: the JSON Schema (:func:`validate_schema`) and what it cannot express (cross-key checks).

``workflow/schemas/config.schema.yaml`` validates every key on its own (type, range, enum,
default). What it cannot say — two histograms of a pair must have the same length, a panel
dataset must be one of the datasets, the Rényi orders must reach far enough for the ε floor,
an option that needs another one — is checked here, one function per stage of the workflow.
``workflow/rules/common.smk`` calls :func:`validate_schema` (which fills the schema's defaults), then
:func:`apply_audit_defaults` and :func:`check_config`
once, right after the schema validation (so defaults are filled in), and turns the ``ValueError`` into Snakemake's
``WorkflowError("Invalid configuration: ...")``: a wrong config stops the run before any job,
naming the key (CONVENTIONS item 3).

:func:`config_value` is the one generic config accessor of the workflow (``get_config(*keys)``
in common.smk, CONVENTIONS item 17): it names the missing key instead of a bare ``KeyError``.

Every check takes the whole (validated) config mapping and raises ``ValueError`` whose message
starts with the dotted config key, e.g. ``labeldp.datasets.tabular.algorithms has lp_1st_ood,
which needs image data``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

__all__ = [
    "AUDIT_DEFAULT_KEYS",
    "MIN_LARGEST_ORDER",
    "STAGE_CHECKS",
    "SYNTHETIC_EXPERIMENTS",
    "apply_audit_defaults",
    "check_config",
    "check_dataset_registry",
    "check_knn",
    "check_labeldp",
    "check_orders_reach_floor",
    "check_panel_dataset",
    "check_pate_capc",
    "check_promptpate",
    "check_synthetic",
    "check_wang2022",
    "config_value",
    "labeldp_model_grid",
    "read_yaml",
    "validate_schema",
]

#: Figures computed from one synthetic histogram pair (``chadha2024.synthetic.<name>``).
SYNTHETIC_EXPERIMENTS = ("fig2", "fig6")

#: The largest Rényi order of an audit must reach at least this: the ε of an all-zero RDP
#: curve (the floor an audit that found nothing reports, ``ppaudit.audit.epsilon_floor``)
#: is ``log(1/δ)/(α_max − 1)``, so with small orders every audit would be reported as leaking.
MIN_LARGEST_ORDER = 32

#: The audit keys shared by the per-query audits of Chadha et al. 2024 (§4, App. D), set once
#: in ``chadha2024.audit_defaults``: key → the mechanism sections that take it. A section's own
#: value overrides the shared one; ``null`` there (the schema default) means "the shared value".
AUDIT_DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "trials": ("pate_capc", "knn", "promptpate"),
    "orders": ("pate_capc", "knn", "promptpate"),
    "confidence": ("pate_capc", "knn", "promptpate"),
    "delta": ("pate_capc", "knn", "promptpate"),
    "bonferroni": ("pate_capc", "knn"),
    "exact": ("pate_capc", "knn"),
    "audit_device": ("pate_capc", "knn"),
    "candidate_selection": ("pate_capc", "knn"),
}


def read_yaml(path):
    """The data of a YAML file, read with the safe loader (``yaml.safe_load``'s result): the one
    YAML reader of the workflow's helpers (config schema, figure registry, configs).

    libyaml's ``CSafeLoader`` when PyYAML was built with it (PyPI's wheels are): the same data
    about 9× faster than the pure-Python parser, which matters where every Snakemake process
    reads the 110 KB config schema and the figure registry on each run and dry run (issue 35).

    Raises:
        yaml.YAMLError: if the text is not YAML. OSError: if the file cannot be read.
    """
    from pathlib import Path

    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 (a safe loader)


def validate_schema(config: MutableMapping[str, Any], schema_path) -> MutableMapping[str, Any]:
    """Validate ``config`` against the JSON Schema (draft 2020-12) at ``schema_path`` and fill in
    the schema's defaults, in place: what ``snakemake.utils.validate(config, schema,
    set_default=True)`` does, with the same default-filling validator (the ``properties``
    extension of jsonschema's FAQ, which Snakemake copies), without Snakemake's pure-Python
    YAML parse of the 110 KB schema (0.44 s of every run and dry run; :func:`read_yaml` takes
    0.05 s; issue 35). The schema's ``$ref`` are local (``#/$defs/…``).

    Raises:
        jsonschema.ValidationError: the first violation (its ``absolute_path`` names the key).
    """
    import jsonschema
    from jsonschema import validators

    schema = read_yaml(schema_path)
    base = jsonschema.Draft202012Validator
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(name, sub["default"])
        yield from validate_properties(validator, properties, instance, subschema)

    filling = validators.extend(base, {"properties": set_defaults})
    filling(schema).validate(config)
    return config


def config_value(config: Mapping[str, Any], *keys: str | int) -> Any:
    """The config entry at ``config[k1][k2]…`` (the generic accessor ``get_config(*keys)``).

    Args:
        config: the (validated) workflow config.
        *keys: the path of the entry, e.g. ``("chadha2024", "promptpate", "sigma")``; none
            returns the whole config.

    Returns:
        The entry (the same object, not a copy).

    Raises:
        ValueError: naming the dotted path when a key is missing or a value on the way is not
            a mapping/list.
    """
    node: Any = config
    for depth, key in enumerate(keys):
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            where = ".".join(str(k) for k in keys[: depth + 1])
            parent = ".".join(str(k) for k in keys[:depth]) or "<top level>"
            have = sorted(map(str, node)) if isinstance(node, Mapping) else type(node).__name__
            raise ValueError(f"config key '{where}' does not exist (at {parent}: {have})") from None
    return node


def apply_audit_defaults(config: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Give every mechanism section the shared audit settings it does not override, in place.

    ``chadha2024.audit_defaults`` holds the audit keys of :data:`AUDIT_DEFAULT_KEYS` once (the
    Rényi orders, confidence and δ of Chadha et al. 2024, Eq. (1) and Thm 1; the Monte Carlo
    trials T; the Bonferroni correction; the exact-RDP method of Eq. (4); the Monte Carlo
    device; the candidate selection). Each of ``chadha2024.pate_capc``, ``.knn`` and
    ``.promptpate`` may set any key it takes to its own value; where it is absent or ``null``
    (the schema's default) the shared value is copied in. ``workflow/rules/common.smk`` calls
    this once, right after the schema validation and before :func:`check_config`, so every
    consumer (``get_config``, the rules' params, the scripts) sees the merged per-mechanism
    values. Calling it again changes nothing.

    Args:
        config: the workflow config after ``snakemake.utils.validate`` filled the defaults.

    Returns:
        The same ``config`` object, updated (each copied value is a deep copy, so no two
        sections share a list).

    Raises:
        ValueError: naming the dotted key when ``chadha2024``, ``chadha2024.audit_defaults``
            or a mechanism section is missing or not a mapping, when
            ``chadha2024.audit_defaults`` holds a key that is not an audit key, when a key a
            section needs is neither set there nor in ``chadha2024.audit_defaults``, or when
            the shared orders that a section takes stop below :data:`MIN_LARGEST_ORDER` (named
            as ``chadha2024.audit_defaults.orders``, the key to fix; a section's own orders are
            checked by :func:`check_config`).
    """
    shared = config_value(config, "chadha2024", "audit_defaults")
    if not isinstance(shared, Mapping):
        raise ValueError(f"chadha2024.audit_defaults must be a mapping, got {shared!r}")
    unknown = sorted(set(shared) - set(AUDIT_DEFAULT_KEYS))
    if unknown:
        raise ValueError(f"chadha2024.audit_defaults has unknown key(s) {unknown}; the audit keys are {sorted(AUDIT_DEFAULT_KEYS)}")
    for key, sections in AUDIT_DEFAULT_KEYS.items():
        for section in sections:
            block = config_value(config, "chadha2024", section)
            if not isinstance(block, MutableMapping):
                raise ValueError(f"chadha2024.{section} must be a mapping, got {block!r}")
            if block.get(key) is not None:
                continue  # the section's own override
            if shared.get(key) is None:
                raise ValueError(f"chadha2024.{section}.{key} is not set and chadha2024.audit_defaults.{key} is missing")
            if key == "orders":
                check_orders_reach_floor(shared[key], "chadha2024.audit_defaults.orders")
            block[key] = copy.deepcopy(shared[key])
    return config


def check_orders_reach_floor(orders: Sequence[float], key: str) -> None:
    """Raise unless the largest Rényi order reaches :data:`MIN_LARGEST_ORDER`.

    Args:
        orders: the Rényi orders of one audit section.
        key: its dotted config key (for the message), e.g. ``chadha2024.promptpate.orders``.

    Raises:
        ValueError: if ``max(orders) < 32``.
    """
    largest = max(orders)
    if largest < MIN_LARGEST_ORDER:
        raise ValueError(
            f"{key} ends at {largest}; the ε of a zero RDP curve is set by the largest order, so include "
            f"orders up to at least {MIN_LARGEST_ORDER} (e.g. 256)"
        )


def check_panel_dataset(section: Mapping[str, Any], key: str) -> None:
    """Raise unless ``section["rdp_panel_dataset"]`` (when set) is one of ``section["datasets"]``.

    Args:
        section: one audit section (``chadha2024.pate_capc``, ``.knn`` or ``.promptpate``).
        key: its dotted config key, e.g. ``chadha2024.promptpate``.

    Raises:
        ValueError: naming ``<key>.rdp_panel_dataset`` and the datasets.
    """
    panel = section["rdp_panel_dataset"]
    if panel and panel not in section["datasets"]:
        raise ValueError(f"{key}.rdp_panel_dataset {panel!r} is not in {key}.datasets {list(section['datasets'])}")


def check_synthetic(config: Mapping[str, Any]) -> None:
    """The two histograms of each synthetic pair have the same number of classes (Chadha et al. 2024, §4, Figs. 2 and 6).

    Raises:
        ValueError: naming ``chadha2024.synthetic.<fig>.h_s`` and both lengths.
    """
    for name in SYNTHETIC_EXPERIMENTS:
        pair = config["chadha2024"]["synthetic"][name]
        if len(pair["h_s"]) != len(pair["h_s_prime"]):
            raise ValueError(
                f"chadha2024.synthetic.{name}.h_s has {len(pair['h_s'])} classes but "
                f"chadha2024.synthetic.{name}.h_s_prime has {len(pair['h_s_prime'])}; "
                "the two histograms of a neighbouring pair must have the same length"
            )


def check_pate_capc(config: Mapping[str, Any]) -> None:
    """PATE and CaPC (Chadha et al. 2024, §5.1–5.2, App. D.1): datasets, sources, candidates, orders.

    Raises:
        ValueError: if a dataset of ``chadha2024.pate_capc.datasets`` has no
            ``dataset_settings`` entry; ``cifar10`` is asked for with ``source: packaged`` (no
            packaged copy) or ``digits`` with ``source: download`` (packaged only);
            ``rdp_panel_dataset`` is not a dataset; an adversary's ``candidates`` exceed
            ``num_queries``; the orders stop below 32; or ``repeated_query_example``'s
            ``p_q`` / ``p_q_prime`` differ in length or do not sum to 1.
    """
    key = "chadha2024.pate_capc"
    cfg = config["chadha2024"]["pate_capc"]
    ex = cfg.get("repeated_query_example") or {}
    for name in ("p_q", "p_q_prime"):
        if name in ex and abs(sum(ex[name]) - 1.0) > 1e-9:
            raise ValueError(f"{key}.repeated_query_example.{name} = {list(ex[name])} must sum to 1 (a vote law), sums to {sum(ex[name]):.6g}")
    if "p_q" in ex and "p_q_prime" in ex and len(ex["p_q"]) != len(ex["p_q_prime"]):
        raise ValueError(f"{key}.repeated_query_example: p_q has {len(ex['p_q'])} classes and p_q_prime {len(ex['p_q_prime'])}; they must match")
    known = cfg["dataset_settings"]
    for ds in cfg["datasets"]:
        if ds not in known:
            raise ValueError(f"{key}.datasets names {ds!r}, which has no entry in {key}.dataset_settings (have {sorted(known)})")
        if cfg["source"] == "packaged" and ds == "cifar10":
            raise ValueError(f"{key}.datasets holds 'cifar10', which has no packaged copy; set {key}.source: download")
        if cfg["source"] == "download" and ds == "digits":
            raise ValueError(f"{key}.datasets holds 'digits', which is packaged only; set {key}.source: packaged")
    check_panel_dataset(cfg, key)
    for adv, n in cfg["candidates"].items():
        if n > cfg["num_queries"]:
            raise ValueError(f"{key}.candidates.{adv} = {n} exceeds {key}.num_queries = {cfg['num_queries']}")
    check_orders_reach_floor(cfg["orders"], f"{key}.orders")


def check_knn(config: Mapping[str, Any]) -> None:
    """Private-kNN (Chadha et al. 2024, §6, App. D.3): datasets, encoders, subset sizes, candidates, orders.

    The dataset and encoder modalities and the packaged datasets are those of
    ``ppaudit.experiments.chadha2024.private_knn_names`` (``KNN_MODALITY``, ``KNN_ENCODER_MODALITY``,
    ``KNN_PACKAGED_DATASETS``).

    Raises:
        ValueError: if a dataset of ``chadha2024.knn.datasets`` has no ``dataset_settings``
            entry; its encoder is of the other modality; it has no packaged copy while
            ``source: packaged``; ``num_queries`` exceeds its ``num_test``; its ``num_train · gamma``
            is below ``1.5 · k`` (the subsample must hold k points); ``rdp_panel_dataset`` is not
            a dataset; the global or a dataset's ``advq_candidates`` exceed ``num_queries``; or
            the orders stop below 32.
    """
    from ppaudit.experiments.chadha2024.private_knn_names import (
        KNN_ENCODER_MODALITY,
        KNN_MODALITY,
        KNN_PACKAGED_DATASETS,
    )

    key = "chadha2024.knn"
    cfg = config["chadha2024"]["knn"]
    known = cfg["dataset_settings"]
    for ds in cfg["datasets"]:
        if ds not in known:
            raise ValueError(f"{key}.datasets names {ds!r}, which has no entry in {key}.dataset_settings (have {sorted(known)})")
        st = known[ds]
        if KNN_ENCODER_MODALITY[st["encoder"]] != KNN_MODALITY[ds]:
            raise ValueError(
                f"{key}.dataset_settings.{ds}.encoder is {st['encoder']!r}, a {KNN_ENCODER_MODALITY[st['encoder']]} encoder, "
                f"but {ds} is a {KNN_MODALITY[ds]} dataset"
            )
        if cfg["source"] == "packaged" and ds not in KNN_PACKAGED_DATASETS:
            raise ValueError(f"{key}.datasets holds {ds!r}, which has no packaged (offline) copy; set {key}.source: download")
        if st["num_test"] is not None and cfg["num_queries"] > st["num_test"]:
            raise ValueError(f"{key}.num_queries = {cfg['num_queries']} exceeds {key}.dataset_settings.{ds}.num_test = {st['num_test']}")
        if st["num_train"] is not None and st["num_train"] * cfg["gamma"] < 1.5 * cfg["k"]:
            raise ValueError(
                f"{key}.dataset_settings.{ds}.num_train = {st['num_train']} is too small for k = {cfg['k']} and "
                f"gamma = {cfg['gamma']} (the subsample must hold k points: need num_train·gamma ≥ 1.5·k)"
            )
    check_panel_dataset(cfg, key)
    if cfg["advq_candidates"] is not None and cfg["advq_candidates"] > cfg["num_queries"]:
        raise ValueError(f"{key}.advq_candidates = {cfg['advq_candidates']} exceeds {key}.num_queries = {cfg['num_queries']}")
    for ds in cfg["datasets"]:
        n = known[ds]["advq_candidates"]
        if isinstance(n, int) and n > cfg["num_queries"]:
            raise ValueError(f"{key}.dataset_settings.{ds}.advq_candidates = {n} exceeds {key}.num_queries = {cfg['num_queries']}")
    check_orders_reach_floor(cfg["orders"], f"{key}.orders")


def check_promptpate(config: Mapping[str, Any]) -> None:
    """PromptPATE (Chadha et al. 2024, §5.3, App. E.3): panel dataset, orders, Figs. 3/4's Pois-NatQ variant.

    Raises:
        ValueError: if ``rdp_panel_dataset`` is not a dataset, the orders stop below 32, or
            ``fig4_variant`` is neither ``best`` nor one of ``natq_variants``.
    """
    key = "chadha2024.promptpate"
    cfg = config["chadha2024"]["promptpate"]
    check_panel_dataset(cfg, key)
    check_orders_reach_floor(cfg["orders"], f"{key}.orders")
    fig4 = cfg["fig4_variant"]
    if fig4 != "best" and fig4 not in cfg["natq_variants"]:
        raise ValueError(f"{key}.fig4_variant {fig4!r} is not in {key}.natq_variants {list(cfg['natq_variants'])}")


def labeldp_model_grid(settings: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The ``(algorithm, ε)`` target models of one label-DP dataset (``labeldp.datasets.<name>``):
    every algorithm at each ε of its ``algorithm_epsilons`` entry, or of ``epsilons`` where it
    has none (the observational paper's Table 2 runs the domain prior at ∞, 8 and 4 only).

    Example:
        >>> labeldp_model_grid({"algorithms": ["lp_1st", "lp_1st_prior"], "epsilons": ["inf", 1],
        ...                     "algorithm_epsilons": {"lp_1st_prior": ["inf"]}})
        [('lp_1st', 'inf'), ('lp_1st', 1), ('lp_1st_prior', 'inf')]
    """
    grid = settings.get("algorithm_epsilons") or {}
    return [(a, e) for a in settings["algorithms"] for e in grid.get(a, settings["epsilons"])]


def check_labeldp(config: Mapping[str, Any]) -> None:
    """Label-DP audits (observational paper; Malek et al. 2021): options that need another key.

    Raises:
        ValueError: if a non-image dataset lists ``lp_1st_ood`` (out-of-distribution prior
            needs image data), an ε is a string other than ``"inf"``, the tabular model has
            no ``iterations`` (CatBoost), ``source: download`` is asked for the text dataset or
            without ``model.arch`` (CIFAR-10 images need a torch network) or with a stand-in MLP as
            ``malek.model``, ``model.arch`` is set
            for a non-image dataset, ``positive_rate`` is set for anything but the packaged tabular
            stand-in, Malek's canaries exceed the target half of the image
            training pool, or the RR guess fractions miss 0.001 (Obs. Fig. 2) or 0.01 (Fig. 3).
    """
    c = config["labeldp"]
    for name, s in c["datasets"].items():
        if "lp_1st_ood" in s["algorithms"] and name != "image":
            raise ValueError(f"labeldp.datasets.{name}.algorithms has lp_1st_ood, which needs image data")
        for e in s["epsilons"]:
            if isinstance(e, str) and e != "inf":
                raise ValueError(f'labeldp.datasets.{name}.epsilons has {e!r}; use a number > 0 or "inf"')
        for algo, grid in (s.get("algorithm_epsilons") or {}).items():
            if algo not in s["algorithms"]:
                raise ValueError(f"labeldp.datasets.{name}.algorithm_epsilons has {algo}, which is not in its algorithms {list(s['algorithms'])}")
            for e in grid:
                if isinstance(e, str) and e != "inf":
                    raise ValueError(f'labeldp.datasets.{name}.algorithm_epsilons.{algo} has {e!r}; use a number > 0 or "inf"')
        if name == "tabular" and s["model"].get("iterations") is None:
            raise ValueError("labeldp.datasets.tabular.model needs iterations (CatBoost)")
        if s.get("source", "packaged") == "download" and name == "text":
            raise ValueError("labeldp.datasets.text.source: download: the text dataset is packaged only (image: CIFAR-10, tabular: Criteo)")
        if name == "image" and s.get("source", "packaged") == "download" and not s["model"].get("arch"):
            raise ValueError("labeldp.datasets.image.source: download (CIFAR-10 images) needs a torch network: set "
                             "labeldp.datasets.image.model.arch (wrn16-4, lenet5 or mlp)")
        if name == "image" and s.get("source", "packaged") == "download" and c["malek"].get("model") is not None:
            raise ValueError("labeldp.malek.model must be null with labeldp.datasets.image.source: download: the memorisation game "
                             "trains the image network (model.arch), not the stand-in MLP")
        if s.get("positive_rate") is not None and (name != "tabular" or s.get("source", "packaged") != "packaged"):
            raise ValueError(f"labeldp.datasets.{name}.positive_rate = {s['positive_rate']!r}: only the packaged tabular stand-in "
                             "(UCI Adult) is subsampled to a positive share; set it to null here")
        if s["model"].get("arch") and name != "image":
            raise ValueError(f"labeldp.datasets.{name}.model.arch = {s['model']['arch']!r}: torch networks are for image data")
    half = c["datasets"]["image"]["train_size"] // 2
    game = c["malek"].get("train_size")
    if game is not None and game > half:
        raise ValueError(f"labeldp.malek.train_size = {game} exceeds the target half ({half}) of "
                         f"labeldp.datasets.image.train_size = {c['datasets']['image']['train_size']}")
    if c["malek"]["num_canaries"] > (half if game is None else game):
        raise ValueError(
            f"labeldp.malek.num_canaries = {c['malek']['num_canaries']} exceeds "
            + (f"the target half of labeldp.datasets.image.train_size = {c['datasets']['image']['train_size']}" if game is None
               else f"labeldp.malek.train_size = {game}")
        )
    if not {0.001, 0.01} <= set(c["synthetic_rr"]["guess_fractions"]):
        raise ValueError(
            f"labeldp.synthetic_rr.guess_fractions {list(c['synthetic_rr']['guess_fractions'])} must contain "
            "0.001 (Fig. 2) and 0.01 (Fig. 3)"
        )


def check_wang2022(config: Mapping[str, Any]) -> None:
    """Wang et al. 2022 (vote-histogram leakage, §4–§5): datasets, attack budget, defence histograms.

    Raises:
        ValueError: if ``wang2022.attack.budget_sigma`` is not > 0; ``figure_datasets`` names a
            dataset that ``wang2022.datasets`` lacks, or includes ``svhn`` (no packaged copy)
            while ``histograms.data_source`` is not ``download``; a figure dataset's
            ``test_size`` is below ``3 × attack.per_level`` (the L/M/H selection draws
            ``per_level`` histograms from each consensus tertile); a ``defence.histograms``
            entry has < 2 classes or a non-positive total; ``defence.audit_histogram`` has
            < 2 classes or < 1 vote on its second class (Nat-AdvQ moves one vote from the
            second class to the top class).
    """
    w = config["wang2022"]
    if w["attack"]["budget_sigma"] <= 0:
        raise ValueError(f"wang2022.attack.budget_sigma = {w['attack']['budget_sigma']!r} must be > 0")
    for name in w["figure_datasets"]:
        if name not in w["datasets"]:
            raise ValueError(f"wang2022.figure_datasets names {name!r}, which wang2022.datasets lacks")
    if "svhn" in w["figure_datasets"] and w["histograms"]["data_source"] != "download":
        raise ValueError(
            "wang2022.figure_datasets includes svhn, which has no packaged copy: "
            "set wang2022.histograms.data_source = download (config/paper.yaml does)"
        )
    for name in w["figure_datasets"]:
        test_size = w["datasets"][name]["test_size"]
        if test_size is not None and test_size < 3 * w["attack"]["per_level"]:
            raise ValueError(
                f"wang2022.datasets.{name}.test_size = {test_size} is smaller than "
                f"3 × wang2022.attack.per_level = {3 * w['attack']['per_level']} (per_level histograms from each consensus tertile)"
            )
    for i, h in enumerate(w["defence"]["histograms"]):
        if len(h) < 2 or sum(h) <= 0:
            raise ValueError(f"wang2022.defence.histograms[{i}] = {list(h)} needs ≥ 2 classes and a positive total")
    audit = w["defence"]["audit_histogram"]
    if len(audit) < 2:
        raise ValueError(f"wang2022.defence.audit_histogram = {list(audit)} needs ≥ 2 classes")
    if sorted(audit, reverse=True)[1] < 1:
        raise ValueError(
            f"wang2022.defence.audit_histogram = {list(audit)} needs ≥ 1 vote on its second class "
            "(Nat-AdvQ moves one vote from the second class to the top class)"
        )


#: The checks :func:`check_config` runs, one per stage of the workflow.
def check_dataset_registry(config: Mapping[str, Any]) -> None:
    """``dataset_registry``, where set, is a readable registry file (ppaudit.data.read_registry)."""
    path = config.get("dataset_registry")
    if path is None:
        return
    from ..data import read_registry

    try:
        read_registry(path)
    except ValueError as exc:
        raise ValueError(f"dataset_registry: {exc}") from None


STAGE_CHECKS: tuple[Callable[[Mapping[str, Any]], None], ...] = (
    check_dataset_registry,
    check_synthetic,
    check_pate_capc,
    check_knn,
    check_promptpate,
    check_labeldp,
    check_wang2022,
)


def check_config(config: Mapping[str, Any]) -> None:
    """Run every cross-key check of :data:`STAGE_CHECKS` on a schema-validated config.

    Args:
        config: the workflow config after ``snakemake.utils.validate`` filled the defaults
            and :func:`apply_audit_defaults` gave each mechanism section its audit settings.

    Raises:
        ValueError: the first failing check's message (it starts with the config key).
    """
    for check in STAGE_CHECKS:
        check(config)
