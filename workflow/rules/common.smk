# Shared by every stage: config validation (at parse time, before any job), the figure
# registry (workflow/figures.yaml), the helper functions that turn config entries into
# params, and the wildcard constraints. This file holds no rules (Snakemake's linter asks
# to keep functions and rules apart); the target rules generated from the registry are in
# the Snakefile.

import math
from pathlib import Path

import jsonschema
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from ppaudit.workflow import load_registry

# Figures computed from one synthetic histogram pair (chadha2024.synthetic.<name>).
SYNTHETIC_EXPERIMENTS = ("fig2", "fig6")

# Figure-number label of each synthetic experiment, for titles and report labels.
SYNTHETIC_FIGURE_LABELS = {"fig2": "Fig. 2", "fig6": "Fig. 6"}


def _config_key(path):
    """Dotted name of a config entry from a jsonschema path (list indices as [i])."""
    name = ""
    for part in path:
        if isinstance(part, int):
            name += f"[{part}]"
        else:
            name += f".{part}" if name else str(part)
    return name or "<top level>"


def _describe_config_error(error):
    """One clear sentence naming the offending config key and value."""
    key = _config_key(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unknown = sorted(k for k in error.instance if k not in allowed)
        where = "" if key == "<top level>" else f"{key}."
        names = ", ".join(f"'{where}{k}'" for k in unknown)
        return f"unknown config key {names}; allowed keys at {key}: {', '.join(allowed)}"
    message = f"config key '{key}' has a bad value {error.instance!r}: {error.message}"
    if error.validator == "type" and error.validator_value == "integer" and isinstance(error.instance, str):
        message += " (YAML reads 1e8 as a string: write the integer 100000000)"
    description = error.schema.get("description")
    if description and error.validator != "enum":  # an enum message lists the allowed values
        message += f". Expected: {' '.join(str(description).split())}"
    return message


def _reject_non_finite(node, path=()):
    """Raise a WorkflowError naming the first NaN or infinite number in the config."""
    if isinstance(node, float) and not math.isfinite(node):
        raise WorkflowError(
            f"Invalid configuration: config key '{_config_key(path)}' has a bad value {node!r}: "
            "numbers must be finite (no .nan or .inf)"
        )
    if isinstance(node, dict):
        for key, value in node.items():
            _reject_non_finite(value, (*path, key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            _reject_non_finite(value, (*path, i))


def validate_config(config):
    """Validate ``config`` against workflow/schemas/config.schema.yaml and fill defaults.

    Raises a WorkflowError naming the key on the first schema violation, and on checks
    the schema cannot express (the two histograms of a pair must have the same length;
    no number may be NaN or infinite — YAML's .nan/.inf pass JSON Schema's bounds).
    """
    _reject_non_finite(config)
    try:
        validate(config, schema="../schemas/config.schema.yaml")
    except WorkflowError as exc:
        # snakemake.utils.validate raises inside `except ValidationError`: keep only the point.
        error = exc.__context__
        if not isinstance(error, jsonschema.ValidationError):
            raise
        raise WorkflowError(f"Invalid configuration: {_describe_config_error(error)}") from None
    for name in SYNTHETIC_EXPERIMENTS:
        pair = config["chadha2024"]["synthetic"][name]
        if len(pair["h_s"]) != len(pair["h_s_prime"]):
            raise WorkflowError(
                f"Invalid configuration: chadha2024.synthetic.{name}.h_s has {len(pair['h_s'])} "
                f"classes but chadha2024.synthetic.{name}.h_s_prime has {len(pair['h_s_prime'])}; "
                "the two histograms of a neighbouring pair must have the same length"
            )


validate_config(config)


wildcard_constraints:
    experiment="|".join(SYNTHETIC_EXPERIMENTS),


def synthetic_settings():
    """Monte Carlo settings shared by the synthetic experiments (chadha2024.synthetic)."""
    return config["chadha2024"]["synthetic"]


def synthetic_pair(experiment):
    """The histogram pair, σ and curves of one synthetic experiment."""
    return config["chadha2024"]["synthetic"][experiment]


def _compact_number(x):
    """100000000 -> '10^8', 12345 -> '12345', 2.0 -> '2'."""
    x = float(x)
    if x >= 1000 and x == 10 ** round(math.log10(x)):
        return f"10^{round(math.log10(x))}"
    return f"{x:g}"


def synthetic_title(experiment):
    """Axes title of a synthetic figure: histograms, σ, T and the sampling mode."""
    pair, settings = synthetic_pair(experiment), synthetic_settings()
    hist = lambda h: "[" + ", ".join(f"{v:g}" for v in h) + "]"
    return (
        f"{SYNTHETIC_FIGURE_LABELS[experiment]}: noisy argmax, "
        f"$H_S$ = {hist(pair['h_s'])} vs $H_{{S'}}$ = {hist(pair['h_s_prime'])}\n"
        f"σ = {pair['sigma']:g}, T = ${_compact_number(settings['trials'])}$ trials per histogram "
        f"({settings['mode']} mode), {settings['confidence']:g} confidence"
    )


# --- Figure registry -------------------------------------------------------------------
# One row per figure/table target (workflow/figures.yaml, validated by
# ppaudit.workflow.registry). The Snakefile generates the target rules and `rule all`
# from FIGURES; producing rules take their outputs from figure_outputs().

try:
    FIGURES = load_registry(Path(workflow.basedir) / "workflow" / "figures.yaml", root=workflow.basedir)
except ValueError as exc:
    raise WorkflowError(f"Invalid figure registry: {exc}") from None


def figure_outputs(rule_name):
    """Named outputs of a figure/table rule, as listed in workflow/figures.yaml.

    Use as ``output: **figure_outputs("plot_chadha_fig2")``. Outputs of rows with a caption
    are wrapped in ``report()`` with that caption (a Jinja template that may use the rule's
    wildcards), category, subcategory and labels ``{figure|table: label, file: PDF|PNG|…}``.
    """
    try:
        specs = FIGURES.outputs_of(rule_name)
    except KeyError as exc:
        raise WorkflowError(f"workflow/figures.yaml: {exc.args[0]}") from None
    outputs = {}
    for name, spec in specs.items():
        if not spec.in_report:
            outputs[name] = spec.path
            continue
        outputs[name] = report(
            spec.path,
            caption=str(Path(workflow.basedir) / spec.caption),
            category=spec.category,
            subcategory=spec.subcategory,
            labels=dict(spec.labels),
        )
    return outputs


def figure_target_files(target_id):
    """Every file of one registry target (its outputs and those of the targets it includes)."""
    return FIGURES.files(target_id)


def check_figure_registry():
    """Stop at parse time when a registry row names a rule that is missing or does not make its files.

    Called from the Snakefile after every rule file is included.
    """
    try:
        FIGURES.check_producers(
            [r.name for r in workflow.rules],
            lambda rule, path: workflow.get_rule(rule).is_producer(path),
        )
    except ValueError as exc:
        raise WorkflowError(f"Invalid figure registry (workflow/figures.yaml): {exc}") from None
