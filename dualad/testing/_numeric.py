"""Finite differences and sample-to-tensor helpers shared by the op tests and gradcheck.

Everything here works on NumPy arrays: the function under test is evaluated as a black box
``fn(*arrays) -> array | tuple of arrays`` (see ``sample_function`` to make one from a dualad op
and a ``SampleInput``), so the numbers never pass through dualad's differentiation machinery.

Complex numbers follow PyTorch's convention: for a real loss ``L`` of a complex input ``z`` the
gradient is ``dL/dRe(z) + 1j * dL/dIm(z)``; the loss a cotangent ``ct`` defines on an output
``y`` is ``L = Re(sum(conj(ct) * y))`` (``real_inner``). Central differences perturb the real and
imaginary parts of a complex input separately.

>>> import numpy as np
>>> x = np.array([0.5, 1.0])
>>> (grad,) = numerical_vjp(np.sin, [x], (0,), np.ones(2))
>>> bool(np.allclose(grad, np.cos(x)))
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._creation import tensor
from ..rev.grad_mode import no_grad
from .device import device_under_test

__all__ = [
    "as_numpy",
    "flatten_outputs",
    "is_differentiable_dtype",
    "numerical_jvp",
    "numerical_vjp",
    "random_like",
    "real_inner",
    "replace_leaves",
    "sample_function",
    "sample_leaves",
    "sample_to_tensors",
    "to_tensor",
    "upcast",
]

_UPCAST = {"f": np.float64, "c": np.complex128}


# ---------------------------------------------------------------------------------------------
# small array helpers


def is_differentiable_dtype(dtype) -> bool:
    """Whether values of ``dtype`` can carry gradients (floating or complex)."""
    return np.dtype(dtype).kind in "fc"


def as_numpy(value) -> np.ndarray:
    """A NumPy array holding ``value`` (a dualad Tensor, CuPy or NumPy array, or a scalar).

    Tensors are detached first; device arrays are copied to the host.
    """
    data = getattr(value, "_data", None)
    if data is not None and hasattr(value, "detach"):
        value = data
    if type(value).__module__.startswith("cupy"):
        value = value.get()
    return np.asarray(value)


def flatten_outputs(value) -> list:
    """The leaves of an op's result: tensors/arrays in (possibly nested) tuples and lists.

    ``None`` and other non-array leaves (Python numbers) are kept, so positions stay stable.
    """
    if isinstance(value, (tuple, list)):
        leaves: list = []
        for item in value:
            leaves.extend(flatten_outputs(item))
        return leaves
    return [value]


def real_inner(a, b) -> float:
    """``Re(sum(conj(a) * b))``: the real loss a cotangent ``a`` defines on an output ``b``."""
    a = np.asarray(a)
    b = np.asarray(b)
    return float(np.real(np.sum(np.conj(a) * b)))


def random_like(rng: np.random.Generator, array, low: float = -1.0, high: float = 1.0):
    """Random values of ``array``'s shape and (floating/complex) dtype, uniform in [low, high).

    Complex arrays get random real and imaginary parts.
    """
    array = np.asarray(array)
    shape = array.shape
    values = rng.uniform(low, high, shape)
    if array.dtype.kind == "c":
        values = values + 1j * rng.uniform(low, high, shape)
    return np.asarray(values).astype(array.dtype)


def upcast(value):
    """``value`` with float32/float16 arrays cast to float64 and complex64 to complex128.

    Lists and tuples are converted element by element; other values (integer arrays, Python
    scalars, slices) are returned unchanged.
    """
    if isinstance(value, np.ndarray):
        target = _UPCAST.get(value.dtype.kind)
        return value.astype(target) if target is not None else value
    if isinstance(value, (list, tuple)) and not _is_namedtuple(value):
        return type(value)(upcast(v) for v in value)
    return value


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


# ---------------------------------------------------------------------------------------------
# finite differences


def _evaluate(fn: Callable, arrays: Sequence) -> list:
    return [None if o is None else as_numpy(o) for o in flatten_outputs(fn(*arrays))]


def _loss(outputs: list, cotangents: list) -> float:
    total = 0.0
    for out, ct in zip(outputs, cotangents):
        if ct is not None and out is not None:
            total += real_inner(ct, out)
    return total


def _as_cotangent_list(cotangent) -> list:
    if isinstance(cotangent, (tuple, list)):
        return list(cotangent)
    return [cotangent]


def numerical_vjp(
    fn: Callable,
    arrays: Sequence,
    diff: Sequence[int],
    cotangent,
    eps: float = 1e-6,
) -> tuple:
    """Gradients of ``L = sum_k Re(sum(conj(ct_k) * out_k))`` by central differences.

    Parameters
    ----------
    fn : callable
        ``fn(*arrays)`` returning an array or a (nested) tuple/list of arrays.
    arrays : sequence
        The arguments; ``arrays[i]`` for ``i`` in ``diff`` must be floating or complex arrays.
    diff : sequence of int
        Positions of the arguments to differentiate with respect to.
    cotangent : array or sequence
        One cotangent per (flattened) output; ``None`` entries leave an output out of ``L``.
    eps : float
        Step of the central difference.

    Returns
    -------
    tuple
        One gradient per position in ``diff``, with the argument's shape and dtype. For a complex
        argument ``z`` it is ``dL/dRe(z) + 1j * dL/dIm(z)`` (PyTorch's convention).

    >>> import numpy as np
    >>> (grad,) = numerical_vjp(lambda z: z * z, [np.array(1.0 + 2.0j)], (0,), np.array(1.0))
    >>> complex(np.round(grad, 6))  # conj(d(z**2)/dz) = conj(2z)
    (2-4j)
    """
    cotangents = _as_cotangent_list(cotangent)
    work = list(arrays)
    grads = []
    for i in diff:
        original = np.asarray(arrays[i])
        if not is_differentiable_dtype(original.dtype):
            raise TypeError(
                f"numerical_vjp: argument {i} has dtype {original.dtype}; only floating and "
                "complex arguments can be differentiated"
            )
        point = original.copy()
        work[i] = point
        flat = point.reshape(-1)  # a view: writing to it perturbs ``point``
        grad = np.zeros(original.shape, dtype=original.dtype).reshape(-1)
        steps = (eps, 1j * eps) if original.dtype.kind == "c" else (eps,)
        for k in range(flat.size):
            base = flat[k]
            for step in steps:
                flat[k] = base + step
                plus = _loss(_evaluate(fn, work), cotangents)
                flat[k] = base - step
                minus = _loss(_evaluate(fn, work), cotangents)
                flat[k] = base
                slope = (plus - minus) / (2 * eps)
                grad[k] += slope if isinstance(step, float) else 1j * slope
        work[i] = arrays[i]
        grads.append(grad.reshape(original.shape))
    return tuple(grads)


def numerical_jvp(
    fn: Callable,
    arrays: Sequence,
    tangents: Sequence,
    eps: float = 1e-6,
) -> list:
    """Directional derivative ``(fn(x + eps t) - fn(x - eps t)) / (2 eps)`` per output.

    ``tangents[i]`` is an array like ``arrays[i]`` or ``None`` (no perturbation). Complex inputs
    take complex tangents (a direction in the real plane of each element). Returns a list with
    one entry per flattened output: the tangent array, or ``None`` for non-differentiable
    (integer or boolean) outputs.

    >>> import numpy as np
    >>> [tangent] = numerical_jvp(np.exp, [np.array([0.0, 1.0])], [np.array([1.0, 2.0])])
    >>> bool(np.allclose(tangent, [1.0, 2.0 * np.e]))
    True
    """
    plus_args = []
    minus_args = []
    for array, tangent in zip(arrays, tangents):
        if tangent is None:
            plus_args.append(array)
            minus_args.append(array)
        else:
            array = np.asarray(array)
            tangent = np.asarray(tangent)
            # np.asarray: 0-d arithmetic gives NumPy scalars, which are not arrays
            plus_args.append(np.asarray(array + eps * tangent).astype(array.dtype))
            minus_args.append(np.asarray(array - eps * tangent).astype(array.dtype))
    plus = _evaluate(fn, plus_args)
    minus = _evaluate(fn, minus_args)
    result: list = []
    for p, m in zip(plus, minus):
        if p is None or not is_differentiable_dtype(p.dtype):
            result.append(None)
        else:
            result.append((p - m) / (2 * eps))
    return result


# ---------------------------------------------------------------------------------------------
# SampleInput <-> tensors
#
# A sample's differentiable "leaves" are addressed by a slot ``(key, item)``: ``key`` is a
# position in ``args`` (int) or a keyword name (str) taken from ``sample.diff``; ``item`` is None
# for a single array, or the index inside a list/tuple of arrays (``stack([a, b])``).


def sample_leaves(sample) -> tuple[list, list]:
    """The differentiable slots of ``sample`` and the arrays in them: ``(slots, arrays)``."""
    slots: list[tuple[int | str, int | None]] = []
    arrays = []
    for key in sample.diff:
        value = sample.args[key] if isinstance(key, int) else sample.kwargs[key]
        if isinstance(value, (list, tuple)):
            for j, item in enumerate(value):
                slots.append((key, j))
                arrays.append(np.asarray(item))
        else:
            slots.append((key, None))
            arrays.append(np.asarray(value))
    return slots, arrays


def replace_leaves(sample, arrays: Sequence):
    """A copy of ``sample`` with its differentiable leaves replaced by ``arrays`` (slot order)."""
    slots, _ = sample_leaves(sample)
    args = list(sample.args)
    kwargs = dict(sample.kwargs)
    for (key, item), array in zip(slots, arrays):
        container = args if isinstance(key, int) else kwargs
        if item is None:
            container[key] = array
        else:
            seq = list(container[key])
            seq[item] = array
            container[key] = type(container[key])(seq)
    return dataclasses.replace(sample, args=tuple(args), kwargs=kwargs)


def to_tensor(value, *, requires_grad: bool = False, device=None):
    """A dualad tensor copy of a NumPy array on ``device`` (the test device,
    ``dualad.testing.device.device_under_test()``, by default); ``requires_grad`` only for
    float/complex data."""
    array = np.asarray(value)
    return tensor(
        array,
        device=device or device_under_test(),
        requires_grad=requires_grad and is_differentiable_dtype(array.dtype),
    )


def _convert(value, differentiable: bool, requires_grad: bool, leaves: list, device=None):
    if isinstance(value, np.ndarray):
        converted = to_tensor(value, requires_grad=requires_grad and differentiable, device=device)
        if differentiable:
            leaves.append(converted)
        return converted
    if (
        isinstance(value, (list, tuple))
        and not _is_namedtuple(value)
        and value
        and all(isinstance(v, np.ndarray) for v in value)
        and (differentiable or any(is_differentiable_dtype(v.dtype) for v in value))
    ):
        return type(value)(
            _convert(v, differentiable, requires_grad, leaves, device) for v in value
        )
    return value


def sample_to_tensors(
    sample, *, requires_grad: bool = True, device=None
) -> tuple[tuple, dict, list]:
    """Turn a ``SampleInput``'s arrays into dualad tensors: ``(args, kwargs, leaves)``, on
    ``device`` (the test device by default).

    - a NumPy array becomes a tensor (a copy); it requires grad when its position (or keyword)
      is in ``sample.diff``, ``requires_grad`` is true and its dtype is floating/complex;
      integer and boolean arrays stay constant integer/boolean tensors;
    - a list/tuple of arrays becomes a list/tuple of tensors when its position is in ``diff`` or
      one of its arrays is floating/complex (``stack``, ``cat``); a list/tuple of integer arrays
      elsewhere is left as NumPy (an index, say);
    - anything else (Python scalars, slices, shapes, dtypes) passes unchanged.

    ``leaves`` lists the tensors at the differentiable slots, in ``sample_leaves`` order.
    """
    diff = set(sample.diff)
    leaves: list = []
    by_key: dict = {}
    args = []
    for i, value in enumerate(sample.args):
        found: list = []
        args.append(_convert(value, i in diff, requires_grad, found, device))
        by_key[i] = found
    kwargs = {}
    for name, value in sample.kwargs.items():
        found = []
        kwargs[name] = _convert(value, name in diff, requires_grad, found, device)
        by_key[name] = found
    for key in sample.diff:
        leaves.extend(by_key[key])
    return tuple(args), kwargs, leaves


def sample_function(fn: Callable, sample) -> Callable[..., Any]:
    """``f(*leaf_arrays)``: ``fn`` on ``sample`` with its differentiable leaves replaced, as NumPy.

    Runs without recording a graph and returns the flattened outputs as NumPy arrays (``None``
    kept), ready for ``numerical_vjp``/``numerical_jvp``.
    """

    def evaluate(*arrays):
        args, kwargs, _ = sample_to_tensors(replace_leaves(sample, arrays), requires_grad=False)
        with no_grad():
            out = fn(*args, **kwargs)
        return [None if o is None else as_numpy(o) for o in flatten_outputs(out)]

    return evaluate
