"""The rule of the paper-shape workflow tests: an override of config/paper.yaml may change only
sizes (each only shrinks from paper.yaml's value) and named machine keys."""

from __future__ import annotations


def leaves(tree, path=()):
    """``(path, value)`` of every non-mapping value of a nested mapping."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key), value


def assert_sizes_only(paper: dict, override: dict, size_keys: set, other_keys: set) -> None:
    """Every leaf of ``override`` is under a key of ``size_keys`` or ``other_keys``, and a size
    that paper.yaml sets is never larger in the override."""
    for path, value in leaves(override):
        assert set(path) & (size_keys | other_keys), path
        if set(path) & size_keys:
            node = paper
            for key in path:
                node = node.get(key) if isinstance(node, dict) else None
            assert node is None or value <= node, (path, node, value)  # a size the paper sets only shrinks
