"""Minimal pytrees for the transform boundaries: tuples, lists, dicts (and namedtuples) of
leaves. The transforms flatten their arguments and outputs with these; the core never sees
containers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def flatten(tree: Any) -> tuple[list, Callable[[list], Any]]:
    """Leaves of ``tree`` in order, and a function rebuilding the tree from new leaves.

    >>> leaves, rebuild = flatten({"a": 1, "b": (2, [3])})
    >>> leaves
    [1, 2, 3]
    >>> rebuild([10, 20, 30])
    {'a': 10, 'b': (20, [30])}
    """
    leaves: list = []
    spec = _flatten(tree, leaves)

    def rebuild(new_leaves: list) -> Any:
        iterator = iter(new_leaves)
        return _unflatten(spec, iterator)

    return leaves, rebuild


def _flatten(tree, leaves: list):
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return ("namedtuple", type(tree), [_flatten(item, leaves) for item in tree])
    if isinstance(tree, (tuple, list)):
        return (type(tree), [_flatten(item, leaves) for item in tree])
    if isinstance(tree, dict):
        keys = list(tree)
        return ("dict", keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return None


def _unflatten(spec, iterator):
    if spec is None:
        return next(iterator)
    if spec[0] == "namedtuple":
        return spec[1](*[_unflatten(s, iterator) for s in spec[2]])
    if spec[0] == "dict":
        return {k: _unflatten(s, iterator) for k, s in zip(spec[1], spec[2])}
    kind, children = spec
    return kind(_unflatten(s, iterator) for s in children)


def tree_map(fn: Callable, tree: Any) -> Any:
    """Apply ``fn`` to every leaf of ``tree``."""
    leaves, rebuild = flatten(tree)
    return rebuild([fn(leaf) for leaf in leaves])
