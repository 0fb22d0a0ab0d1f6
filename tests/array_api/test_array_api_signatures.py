"""Every name of the array API standard (2024.12; the names are array_api_strict's, the
standard's reference implementation, main namespace and its linalg and fft extensions) is in
``dualad.array_api`` with a compatible signature, or in ``NOT_IMPLEMENTED`` with the reason.
"""

from __future__ import annotations

import inspect

import array_api_strict
import pytest
from array_api_cases import MISSING, lookup

import dualad.array_api as xp

array_api_strict.set_array_api_strict_flags(api_version="2024.12")

# the reference implementation's own names, not the standard's
STRICT_ONLY = {
    "ArrayAPIStrictFlags",
    "get_array_api_strict_flags",
    "set_array_api_strict_flags",
    "reset_array_api_strict_flags",
    "__version__",
}
# the standard's names dualad.array_api lacks, each with the reason (the only such list)
NOT_IMPLEMENTED: dict[str, str] = {}


def standard_names() -> list[str]:
    names = [n for n in array_api_strict.__all__ if n not in STRICT_ONLY]
    names += [f"linalg.{n}" for n in array_api_strict.linalg.__all__]
    names += [f"fft.{n}" for n in array_api_strict.fft.__all__]
    return names


def parameters(fn):
    """(positional-only count, positional-or-keyword names, keyword-only names, *args?)."""
    params = inspect.signature(fn).parameters.values()
    kinds = inspect.Parameter
    return (
        sum(p.kind == kinds.POSITIONAL_ONLY for p in params),
        [p.name for p in params if p.kind == kinds.POSITIONAL_OR_KEYWORD],
        sorted(p.name for p in params if p.kind == kinds.KEYWORD_ONLY),
        any(p.kind == kinds.VAR_POSITIONAL for p in params),
    )


@pytest.mark.parametrize("name", standard_names())
def test_each_standard_name_is_present_or_listed(name):
    ours = lookup(xp, name)
    if name in NOT_IMPLEMENTED:
        assert ours is MISSING, f"{name} is implemented now: remove it from NOT_IMPLEMENTED"
        return
    assert ours is not MISSING, f"dualad.array_api lacks {name} (implement it or list it)"
    reference = lookup(array_api_strict, name)
    if inspect.isfunction(reference):
        assert parameters(ours) == parameters(reference), (
            f"{name}: signature {inspect.signature(ours)}, the standard's "
            f"{inspect.signature(reference)}"
        )
    elif isinstance(reference, float):  # the constants
        assert ours == reference or (ours != ours and reference != reference)


def test_the_table_names_only_standard_names():
    assert set(NOT_IMPLEMENTED) <= set(standard_names())


def test_linalg_and_main_namespace_share_functions():
    for name in ("matmul", "matrix_transpose", "tensordot", "vecdot"):
        assert getattr(xp, name) is getattr(xp.linalg, name)
