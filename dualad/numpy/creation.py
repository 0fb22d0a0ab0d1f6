"""NumPy's array creation over tensors: ``array asarray asanyarray ascontiguousarray zeros ones
full empty zeros_like ones_like full_like empty_like arange linspace logspace geomspace eye
identity tri meshgrid astype asfortranarray asarray_chkfinite require`` and the window functions
``bartlett blackman hamming hanning kaiser``.

NumPy's dtypes (float64 by default, whatever dualad's default dtype), shapes and ``like=``
(NumPy's ``np.zeros(3, like=t)`` comes here through the protocol). Values that carry a
derivative stay differentiable: ``array``/``asarray`` of tensors (or of lists holding them)
stack them with dualad ops, ``full`` broadcasts a tensor ``fill_value``, and ``linspace``,
``logspace``, ``geomspace`` and ``arange`` with tensor endpoints are computed with dualad ops;
results of plain inputs are NumPy's own numbers.

>>> import dualad
>>> import dualad.numpy as dnp
>>> t = dualad.tensor(2.0, requires_grad=True)
>>> v = dnp.array([t, t * t, 1.0])
>>> v
tensor([2., 4., 1.], grad_fn=<StackBackward0>)
>>> dnp.sum(dnp.linspace(0.0, t, 3)).backward()
>>> t.grad
tensor(1.5)
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._creation import as_tensor
from .._tensor import Tensor
from ._common import cast, check_order, check_subok, tensor_of

__all__ = [
    "array",
    "asarray",
    "asanyarray",
    "ascontiguousarray",
    "zeros",
    "ones",
    "full",
    "empty",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "arange",
    "linspace",
    "logspace",
    "geomspace",
    "eye",
    "identity",
    "tri",
    "meshgrid",
    "astype",
    "asfortranarray",
    "asarray_chkfinite",
    "require",
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
    "kaiser",
]


def _dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0, like=None):
    """``numpy.array``: a tensor of ``object`` (a copy by default; differentiable in the
    tensors it holds).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.array(x, ndmin=2)
    tensor([[1., 2., 3.]], grad_fn=<ViewBackward0>)
    """
    check_order(order, "array", ("K", "A", "C", None))
    check_subok(subok, "array")
    if ndmax:
        raise ValueError("dualad.numpy.array: ndmax= is not supported")
    t = tensor_of(object)  # (lists holding tensors are stacked: differentiable)
    dtype = _dtype(dtype)
    if copy is False and dtype is not None and t.dtype != dtype:
        raise ValueError("Unable to avoid copy while creating an array as requested.")
    shared = t is object or (isinstance(object, np.ndarray) and dtype in (None, object.dtype))
    t = cast(t, dtype)
    if copy and shared:
        t = ops.clone(t)
    if t.ndim < ndmin:
        t = ops.reshape(t, (1,) * (ndmin - t.ndim) + tuple(t.shape))
    return t


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``numpy.asarray``: ``a`` as a tensor (the same one when it already is one).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.asarray(x) is x
    True
    >>> dnp.asarray([1, 2])
    tensor([1, 2])
    """
    # copy=None: a copy only where the dtype needs one (False would refuse that cast, as NumPy)
    t = array(a, dtype, copy=copy, order=order)
    return t if device is None else t.to(device)


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """``numpy.asanyarray``: as ``asarray`` (tensors have no subclasses to keep).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.asanyarray(x) is x
    True
    """
    return asarray(a, dtype, order, device=device, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None):
    """``numpy.ascontiguousarray``: as ``asarray``, at least 1-D.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.ascontiguousarray(2.5)
    tensor([2.5])
    """
    t = asarray(a, dtype)
    return ops.reshape(t, (1,)) if t.ndim == 0 else t


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _filled(shape, value, dtype, device):
    return as_tensor(np.full(_shape(shape), value, dtype=dtype), device=device)


def zeros(shape, dtype=None, order="C", *, device=None, like=None):
    """``numpy.zeros``: a tensor of zeros (float64 by default).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.zeros(3, dtype=dnp.int64)
    tensor([0, 0, 0])
    """
    check_order(order, "zeros")
    return _filled(shape, 0, _dtype(dtype) or np.float64, device)


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    """``numpy.ones``: a tensor of ones (float64 by default).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.ones((2, 2))
    tensor([[1., 1.],
            [1., 1.]])
    """
    check_order(order, "ones")
    return _filled(shape, 1, _dtype(dtype) or np.float64, device)


def empty(shape, dtype=None, order="C", *, device=None, like=None):
    """``numpy.empty``: a tensor of the shape (its values are not meant to be read).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.empty((2, 3)).shape
    (2, 3)
    """
    return zeros(shape, dtype, order, device=device)


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """``numpy.full``: ``fill_value`` everywhere (differentiable in a tensor ``fill_value``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.full(3, 2.5)
    tensor([2.5, 2.5, 2.5])
    """
    check_order(order, "full")
    if isinstance(fill_value, Tensor):
        filled = ops.clone(ops.broadcast_to(fill_value, _shape(shape)))
        return cast(filled, _dtype(dtype))
    value = np.asarray(fill_value)
    return _filled(shape, value, _dtype(dtype) or value.dtype, device)


def _like(a, dtype, shape, subok, order, name):
    check_order(order, name, ("K", "A", "C"))  # (subok: tensors have no subclasses to keep)
    t = tensor_of(a)
    return (
        t.shape if shape is None else _shape(shape),
        _dtype(dtype) or t.dtype,
        t.device,
    )


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.zeros_like``: zeros of ``a``'s shape and dtype (untracked).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.zeros_like(x)
    tensor([0., 0., 0.])
    """
    shape, dtype, dev = _like(a, dtype, shape, subok, order, "zeros_like")
    return _filled(shape, 0, dtype, device or dev)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.ones_like``: ones of ``a``'s shape and dtype (untracked).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.ones_like(x)
    tensor([1., 1., 1.])
    """
    shape, dtype, dev = _like(a, dtype, shape, subok, order, "ones_like")
    return _filled(shape, 1, dtype, device or dev)


def empty_like(prototype, /, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.empty_like``: a tensor of ``prototype``'s shape and dtype.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.empty_like(a).shape
    (2, 2)
    """
    return zeros_like(prototype, dtype, order, subok, shape, device=device)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``numpy.full_like``: ``fill_value`` in ``a``'s shape and dtype (differentiable in a
    tensor ``fill_value``).

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.full_like(a, 7.0)
    tensor([[7., 7.],
            [7., 7.]])
    """
    shape, dtype, dev = _like(a, dtype, shape, subok, order, "full_like")
    if isinstance(fill_value, Tensor):
        return full(shape, fill_value, dtype)
    return _filled(shape, fill_value, dtype, device or dev)


def arange(start_or_stop, /, stop=None, step=1, *, dtype=None, device=None, like=None):
    """``numpy.arange``: evenly spaced values in ``[start, stop)``; tensor ``start``/``step``
    give ``start + step * i`` made of dualad ops (differentiable in both).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.arange(1, 7, 2)
    tensor([1, 3, 5])
    """
    start = 0 if stop is None else start_or_stop
    stop = start_or_stop if stop is None else stop
    values = [start, stop, step]
    if not any(isinstance(v, Tensor) for v in values):
        return as_tensor(np.arange(start, stop, step, dtype=_dtype(dtype)), device=device)
    plain = [_plain_number(v, "arange") for v in values]
    count = np.arange(*plain).shape[0]
    dtype = _dtype(dtype) or np.result_type(*(tensor_of(v).dtype for v in values))
    idx = as_tensor(np.arange(count), device=tensor_of(start).device)
    return cast(tensor_of(start) + tensor_of(step) * cast(idx, dtype), dtype)


def _plain_number(value, name):
    """The value of a 0-d tensor that fixes a shape (its derivative is kept elsewhere)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"dualad.numpy.{name}: expected a scalar, got shape {value.shape}")
        return value.detach().numpy(force=True)[()]
    return value


def _spaced(start, stop, num, endpoint, axis):
    """NumPy's linspace in dualad ops: ``start + i * step`` along a new ``axis``, the last
    value ``stop`` exactly."""
    start, stop = tensor_of(start), tensor_of(stop)
    dtype = np.result_type(start.dtype, stop.dtype, np.float64 if start.dtype.kind in "biu"
                           and stop.dtype.kind in "biu" else start.dtype)  # fmt: skip
    start, stop = cast(start, dtype), cast(stop, dtype)
    shape = np.broadcast_shapes(start.shape, stop.shape)
    div = num - 1 if endpoint else num
    idx = as_tensor(np.arange(num, dtype=dtype).reshape((-1,) + (1,) * len(shape)))
    if div > 0:
        y = idx * ((stop - start) / div) + start
    else:
        y = idx * (stop - start) + start
    y = ops.broadcast_to(y, (num, *shape))
    if endpoint and num > 1:
        y = ops.cat([y[:-1], ops.unsqueeze(ops.broadcast_to(stop, shape), 0)], 0)
    return ops.moveaxis(y, 0, axis) if axis != 0 else y, (stop - start) / div if div else None


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``numpy.linspace``: ``num`` evenly spaced values from ``start`` to ``stop``
    (differentiable in tensor endpoints).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.linspace(0.0, 1.0, num=5)
    tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if not (isinstance(start, Tensor) or isinstance(stop, Tensor)):
        y, step = np.linspace(start, stop, num, endpoint, True, _dtype(dtype), axis)
        y = as_tensor(y, device=device)
        return (y, step) if retstep else y
    y, step = _spaced(start, stop, num, endpoint, axis)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        y = ops.floor(y)
    y = cast(y, _dtype(dtype))
    return (y, step if step is not None else np.nan) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``numpy.logspace``: ``base ** linspace(start, stop)`` (differentiable in tensor
    ``start``, ``stop`` and ``base``).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.logspace(0.0, 2.0, num=3)
    tensor([  1.,  10., 100.])
    """
    if not any(isinstance(v, Tensor) for v in (start, stop, base)):
        return as_tensor(np.logspace(start, stop, num, endpoint, base, _dtype(dtype), axis))
    y = linspace(start, stop, num, endpoint, axis=0)
    b = tensor_of(base)
    b = ops.reshape(b, (1,) * (y.ndim - b.ndim) + tuple(b.shape))
    y = ops.pow(b, y)
    return cast(ops.moveaxis(y, 0, axis) if axis else y, _dtype(dtype))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``numpy.geomspace``: ``num`` values spaced evenly on a log scale from ``start`` to
    ``stop`` (real tensor endpoints of one sign are differentiable).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.geomspace(1.0, 100.0, num=3)
    tensor([  1.,  10., 100.])
    """
    if not (isinstance(start, Tensor) or isinstance(stop, Tensor)):
        return as_tensor(np.geomspace(start, stop, num, endpoint, _dtype(dtype), axis))
    s, e = _floating_pair(start, stop)
    if s.dtype.kind == "c":
        raise TypeError("dualad.numpy.geomspace: complex tensor endpoints are not supported")
    sign = ops.sign(s)
    logs = linspace(ops.log10(ops.abs(s)), ops.log10(ops.abs(e)), num, endpoint, axis=0)
    y = ops.pow(10.0, logs)
    if num > 0:  # the endpoints exactly, as NumPy
        row = tuple(y.shape[1:])
        ends = [_row(ops.abs(s), row), y[1:]]
        if endpoint and num > 1:
            ends = [ends[0], y[1:-1], _row(ops.abs(e), row)]
        y = ops.cat(ends, 0)
    y = y * sign
    return cast(ops.moveaxis(y, 0, axis) if axis else y, _dtype(dtype))


def _row(value, shape):
    return ops.unsqueeze(ops.broadcast_to(value, shape), 0)


def _floating_pair(a, b):
    x, y = tensor_of(a), tensor_of(b)
    dtype = np.result_type(x.dtype, y.dtype, np.float64 if x.dtype.kind in "biu" else x.dtype)
    return cast(x, dtype), cast(y, dtype)


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    """``numpy.eye``: ones on the ``k``-th diagonal of an ``N`` x ``M`` tensor.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.eye(2, 3, k=1)
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    check_order(order, "eye")
    return as_tensor(np.eye(N, M, k, dtype=dtype), device=device)


def identity(n, dtype=None, *, like=None):
    """``numpy.identity``: the ``n`` x ``n`` identity (float64 by default).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.identity(2)
    tensor([[1., 0.],
            [0., 1.]])
    """
    return eye(n, dtype=dtype or float)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    """``numpy.tri``: ones on and below the ``k``-th diagonal.

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.tri(3)
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]])
    """
    return as_tensor(np.tri(N, M, k, dtype=dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``numpy.meshgrid``: coordinate tensors of the 1-D inputs (``indexing`` 'xy' or 'ij';
    differentiable in the inputs).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.meshgrid(dualad.tensor([1.0, 2.0]), dualad.tensor([3.0, 4.0, 5.0]))
    (tensor([[1., 2.],
            [1., 2.],
            [1., 2.]]), tensor([[3., 3.],
            [4., 4.],
            [5., 5.]]))
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * n
        shape[i] = -1
        if indexing == "xy" and n > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        out.append(ops.reshape(tensor_of(x), tuple(shape)))
    if not sparse and out:
        shape = np.broadcast_shapes(*(t.shape for t in out))
        out = [ops.broadcast_to(t, shape) for t in out]
    if copy:
        out = [ops.clone(t) for t in out]
    return tuple(out)


def astype(x, dtype, /, *, copy=True, device=None):
    """``numpy.astype``: ``x`` as ``dtype`` (differentiable between floating/complex dtypes).

    >>> import dualad, dualad.numpy as dnp
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> dnp.astype(x, dnp.float32)
    tensor([1., 2., 3.], dtype=float32, grad_fn=<ToCopyBackward0>)
    """
    t = tensor_of(x)
    r = cast(t, np.dtype(dtype))
    if copy and r is t:
        r = ops.clone(t)
    return r if device is None else r.to(device)


def asfortranarray(a, dtype=None, *, like=None):
    """``numpy.asfortranarray``: as ``asarray`` (dualad keeps its own layouts), at least 1-D.

    >>> import dualad, dualad.numpy as dnp
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.asfortranarray(a)
    tensor([[1., 2.],
            [3., 4.]], requires_grad=True)
    """
    return ascontiguousarray(a, dtype)


def asarray_chkfinite(a, dtype=None, order=None):
    """``numpy.asarray_chkfinite``: ``asarray``, raising ValueError on inf or NaN (a value
    no level tracks; a tracked one cannot be checked).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.asarray_chkfinite([1.0, 2.0])
    tensor([1., 2.])
    """
    t = asarray(a, dtype, order)
    if t.dtype.kind in "fc" and not bool(ops.all(ops.isfinite(t))):
        raise ValueError("array must not contain infs or NaNs")
    return t


def require(a, dtype=None, requirements=None, *, like=None):
    """``numpy.require``: ``asarray`` with ``dtype`` (layout requirements are dualad's
    concern: 'C', 'A', 'W', 'O', 'E' are met; 'F' is refused).

    >>> import dualad, dualad.numpy as dnp
    >>> dnp.require([1, 2], dtype=dnp.float64)
    tensor([1., 2.])
    """
    wanted = {str(r).upper()[:1] for r in (requirements or ())}
    if "F" in wanted:
        raise ValueError("dualad.numpy.require: Fortran order ('F') is not supported")
    return array(a, dtype, copy="E" in wanted or "O" in wanted or None)


def _window(numpy_fn, example):
    def window(M, *args):
        return as_tensor(numpy_fn(M, *args))

    window.__name__ = window.__qualname__ = numpy_fn.__name__
    window.__doc__ = (
        f"``numpy.{numpy_fn.__name__}``: NumPy's window of ``M`` points.\n\n"
        f">>> import dualad.numpy as dnp\n>>> {example}"
    )
    return window


# (examples run as doctests: the output lines are NumPy's values)
bartlett = _window(np.bartlett, "dnp.bartlett(5)\ntensor([0. , 0.5, 1. , 0.5, 0. ])")
blackman = _window(
    np.blackman, "dnp.blackman(3)\ntensor([-1.38777878e-17,  1.00000000e+00, -1.38777878e-17])"
)
hamming = _window(np.hamming, "dnp.hamming(3)\ntensor([0.08, 1.  , 0.08])")
hanning = _window(np.hanning, "dnp.hanning(5)\ntensor([0. , 0.5, 1. , 0.5, 0. ])")
kaiser = _window(np.kaiser, "dnp.kaiser(3, 5.0)\ntensor([0.03671089, 1.        , 0.03671089])")
