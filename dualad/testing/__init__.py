"""Testing helpers: gradcheck wrappers with the test-suite defaults, ``assert_close``,
``check_grads`` (VJPs and JVPs up to any order against finite differences), the op database
(``dualad.testing.opdb``) and hypothesis strategies (``dualad.testing.strategies``, needs the
``test`` extra).

``gradcheck``/``gradgradcheck`` here are ``dualad.autograd``'s with ``fast_mode=True`` and
``check_batched_grad=True`` by default (an explicit ``None`` also means the default), which is
how the ported PyTorch tests call them.

>>> import dualad
>>> x = dualad.tensor([0.5, 1.0], dtype=dualad.float64, requires_grad=True)
>>> gradcheck(dualad.exp, (x,))
True
>>> assert_close(dualad.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-9])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.gradcheck import GradcheckError
from ..autograd.gradcheck import gradcheck as _gradcheck
from ..autograd.gradcheck import gradgradcheck as _gradgradcheck
from ._check_grads import check_grads

__all__ = ["GradcheckError", "assert_close", "check_grads", "gradcheck", "gradgradcheck"]

_TEST_DEFAULTS = {"check_batched_grad": True, "fast_mode": True}


def _with_test_defaults(kwargs: dict) -> dict:
    for key, value in _TEST_DEFAULTS.items():
        if kwargs.get(key) is None:
            kwargs[key] = value
    return kwargs


def gradcheck(fn: Callable[..., Any], inputs: Tensor | Sequence[Any], **kwargs: Any) -> bool:
    """``dualad.autograd.gradcheck`` with ``fast_mode=True, check_batched_grad=True`` defaults.

    >>> import dualad
    >>> from dualad.testing import gradcheck
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> gradcheck(lambda x: (dualad.sin(x) * x).sum(), (x,))
    True
    """
    return _gradcheck(fn, inputs, **_with_test_defaults(kwargs))


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
    **kwargs: Any,
) -> bool:
    """``dualad.autograd.gradgradcheck`` with ``fast_mode=True, check_batched_grad=True``
    defaults.

    >>> import dualad
    >>> from dualad.testing import gradgradcheck
    >>> x = dualad.tensor([0.5, 1.5], requires_grad=True)
    >>> gradgradcheck(lambda x: dualad.sin(x) * x, (x,))
    True
    """
    return _gradgradcheck(fn, inputs, grad_outputs, **_with_test_defaults(kwargs))


# (rtol, atol) per dtype, as torch.testing.assert_close
_TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}


def _to_numpy(value: Any) -> np.ndarray:
    data = getattr(value, "_data", None)
    if data is not None and hasattr(value, "detach"):
        value = data
    if type(value).__module__.startswith("cupy"):
        value = value.get()
    if isinstance(value, (list, tuple)):
        value = [_to_numpy(v) for v in value]
    return np.asarray(value)


def _default_tolerances(*dtypes: np.dtype) -> tuple[float, float]:
    rtol, atol = 0.0, 0.0
    for dtype in dtypes:
        r, a = _TOLERANCES.get(np.dtype(dtype), (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _index(values: np.ndarray) -> tuple:
    flat = int(np.argmax(values))
    return tuple(int(i) for i in np.unravel_index(flat, values.shape))


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_dtype: bool = False,
    msg: str | None = None,
) -> None:
    """Assert ``|actual - expected| <= atol + rtol * |expected|`` elementwise.

    ``actual``/``expected``: dualad tensors, NumPy/CuPy arrays, Python scalars or (nested)
    lists. The shapes must match exactly. Without ``rtol``/``atol`` the tolerances follow the
    less precise dtype like ``torch.testing.assert_close`` (float64: 1e-7/1e-7, float32:
    1.3e-6/1e-5, float16: 1e-3/1e-5, integers and booleans: exact). ``check_dtype`` also
    requires equal dtypes. The message reports the number of mismatches and the greatest
    absolute and relative differences.

    >>> assert_close(1.0, 1.0 + 1e-12)
    >>> assert_close([1.0, 2.0], [1.0, 2.5])
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50.0%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-07 allowed)
    Greatest relative difference: 0.2 at index (1,) (up to 1e-07 allowed)
    """
    if (rtol is None) != (atol is None):
        raise ValueError(
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    a = _to_numpy(actual)
    e = _to_numpy(expected)
    if a.shape != e.shape:
        raise AssertionError(
            msg or f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}."
        )
    if check_dtype and a.dtype != e.dtype:
        raise AssertionError(
            msg or f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}."
        )
    if rtol is None or atol is None:  # (both, as checked above)
        rtol, atol = _default_tolerances(a.dtype, e.dtype)
    if a.dtype == np.bool_ and e.dtype == np.bool_:
        close = a == e
        a = a.astype(np.int64)
        e = e.astype(np.int64)
    else:
        dtype = np.result_type(a.dtype, e.dtype, np.float64)
        a = a.astype(dtype)
        e = e.astype(dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(np.all(close)):
        return
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        abs_diff = np.abs(a - e).astype(np.float64)
        rel_diff = abs_diff / np.abs(e)
    abs_diff = np.where(close, 0.0, np.nan_to_num(abs_diff, nan=np.inf))
    rel_diff = np.where(close, 0.0, np.nan_to_num(rel_diff, nan=np.inf))
    n_bad = int(np.size(close) - np.count_nonzero(close))
    total = int(np.size(close))
    if a.ndim == 0:
        where_abs = where_rel = ""
    else:
        where_abs = f" at index {_index(abs_diff)}"
        where_rel = f" at index {_index(rel_diff)}"
    text = (
        ("Scalars are not close!\n\n" if a.ndim == 0 else "Tensor-likes are not close!\n\n")
        + f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.1f}%)\n"
        f"Greatest absolute difference: {float(np.max(abs_diff))}{where_abs} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {float(np.max(rel_diff))}{where_rel} "
        f"(up to {rtol} allowed)"
    )
    if msg is not None:
        text = f"{msg}\n\n{text}"
    raise AssertionError(text)
