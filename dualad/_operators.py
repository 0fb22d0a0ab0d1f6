"""Tensor methods and Python operators, attached from the op modules.

A facade module: it imports the ops and the tape, and attaches to ``Tensor`` (which holds only
data and metadata) the members that run ops, when ``dualad`` imports it. Each op module lists
``TENSOR_METHODS`` (functions that become methods of the same name) and
``INPLACE_METHODS`` (functions that also get a trailing-underscore in-place method). Operators
map to the same functions, so a method, an operator and the top-level function are one op.
"""

from __future__ import annotations

from . import _dtypes, ops
from ._backend import Device, is_writeable, xp_of
from ._dispatch import operator_method
from ._state import ACTIVE, GRAD, MUTATION_WATCH
from ._tensor import Tensor, attach_members
from .ops import astype, mutation, permute, to_device_op, unbind
from .ops._keys import _device_key, _normalize_key
from .rev.inplace import apply_inplace
from .rev.saved import before_mutation


def _inplace_method(functional, name):
    def method(self, *args, **kwargs):
        return apply_inplace(functional, self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of ``{functional.__name__}``: writes into ``self``."
    return method


def attach_methods(modules) -> None:
    for module in modules:
        for name in getattr(module, "TENSOR_METHODS", ()):
            setattr(Tensor, name, getattr(module, name))
        for name in getattr(module, "INPLACE_METHODS", ()):
            setattr(Tensor, name + "_", _inplace_method(getattr(module, name), name + "_"))


def _reflected(fn):
    def method(self, other):
        return fn(other, self)

    return method


def attach_operators() -> None:
    operators = {
        "__add__": ops.add,
        "__sub__": ops.sub,
        "__mul__": ops.mul,
        "__truediv__": ops.div,
        "__floordiv__": ops.floor_divide,
        "__mod__": ops.remainder,
        "__pow__": ops.pow,
        "__matmul__": ops.matmul,
        "__and__": ops.bitwise_and,
        "__or__": ops.bitwise_or,
        "__xor__": ops.bitwise_xor,
    }
    for name, fn in operators.items():
        setattr(Tensor, name, operator_method(fn))  # (compiled where it can be: _dispatch)
        setattr(Tensor, "__r" + name[2:], _reflected(fn))
        setattr(Tensor, "__i" + name[2:], _inplace_method(fn, "__i" + name[2:]))
    Tensor.__neg__ = operator_method(ops.neg)
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = operator_method(ops.abs)
    Tensor.__invert__ = ops.bitwise_not
    Tensor.__eq__ = ops.eq
    Tensor.__ne__ = ops.ne
    Tensor.__lt__ = ops.lt
    Tensor.__le__ = ops.le
    Tensor.__gt__ = ops.gt
    Tensor.__ge__ = ops.ge
    Tensor.__getitem__ = ops.getitem

    def __setitem__(self, key, value):
        direct = not ACTIVE or not GRAD.levels  # no level in this thread
        if direct and not _records(self, value) and _write_direct(self, key, value):
            return
        apply_inplace(mutation.index_put, self, key, value)

    Tensor.__setitem__ = __setitem__
    Tensor.zero_ = _inplace_method(mutation.zero, "zero_")
    Tensor.fill_ = _inplace_method(mutation.fill, "fill_")
    Tensor.copy_ = _inplace_method(mutation.copy_from, "copy_")
    Tensor.T = property(_full_transpose)
    Tensor.mT = property(ops.matrix_transpose)
    Tensor.H = property(lambda self: ops.conj(_full_transpose(self)))
    # torch spells these as properties (x.real, x.imag), not methods
    Tensor.real = property(ops.real)
    Tensor.imag = property(ops.imag)
    Tensor.mH = property(lambda self: ops.conj(ops.matrix_transpose(self)))


def _records(x, value) -> bool:
    """Whether ``x[key] = value`` must go through autograd (grad mode on and a tensor involved
    requires grad, counting a view whose base does)."""
    if not GRAD.enabled:
        return False
    return x.requires_grad or (isinstance(value, Tensor) and value._rg)


def _write_direct(x, key, value) -> bool:
    """Plain index assignment: write only the indexed elements (O(k), not a copy of x) and bump
    the version. Returns False to leave anything unusual (and every error) to ``index_put``.

    A value that may share memory with x is copied first (read-before-write, as ``index_put``
    and every other write path compute their result out of place before writing it)."""
    data = x._data
    if type(value) is Tensor:
        if value._fw is not None or type(value._data) is not type(data):
            return False
        value = value._data
        if xp_of(data).may_share_memory(data, value):
            # ``y[mask] = y[0]``: NumPy's boolean-mask write reads the value after writing
            # earlier elements (CuPy's writes may race), while every recorded path (index_put
            # on a snapshot) reads it first; read first here too, so values agree with grads
            value = value.copy()
    elif type(value) not in (float, int, bool, complex):
        return False
    if not is_writeable(data):
        return False
    if MUTATION_WATCH:  # allow_mutation_on_saved_tensors: copy what was saved from x first
        before_mutation(x)
    try:
        data[_device_key(xp_of(data), _normalize_key(key))] = value
    except Exception:
        return False  # the functional path raises the error with dualad's wording
    x._bump_version()
    return True


def _full_transpose(x):
    return permute(x, tuple(reversed(range(x.ndim)))) if x.ndim >= 2 else x


def _conversion(name: str, dtype):
    """A ``Tensor`` method ``name(self)``: ``self.to(dtype)``."""

    def method(self) -> Tensor:
        return self.to(dtype)

    method.__doc__ = f"""``self.to(dualad.{dtype})`` (a differentiable cast where the dtype allows).

    >>> import dualad
    >>> dualad.tensor([1.0, 0.0]).{name}().dtype
    dtype('{dtype}')
    """
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method


class _ConversionMembers:
    """``Tensor.to`` (and the casts and moves made of it) and iteration, written as they read on
    ``Tensor``: they run ops."""

    def to(self, *args, dtype=None, device=None, copy: bool = False) -> Tensor:
        """Move to a device and/or cast to a dtype: ``t.to("cuda")``, ``t.to(dualad.float32)``.

        Both are ops: the result keeps the graph (its gradient is cast or moved back).

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x.to(dualad.float32)
        >>> y.dtype, y.device
        (dtype('float32'), device(type='cpu'))
        >>> dualad.autograd.grad(y.sum(), x)
        (tensor([1., 1.]),)
        """
        for arg in args:
            if isinstance(arg, (str, Device)):
                device = arg
            elif isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            else:
                dtype = arg
        out = self
        if dtype is not None:
            dtype = _dtypes.to_dtype(dtype)
            if dtype != self.dtype or copy:
                out = astype(out, dtype)
        if device is not None and Device(device) != self.device:
            out = to_device_op(out, device=Device(device))
        return out

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(unbind(self, 0))

    def cpu(self) -> Tensor:
        """This tensor on the CPU (itself when it is there already; a differentiable move).

        >>> import dualad
        >>> x = dualad.tensor([1.0])
        >>> x.cpu() is x
        True
        """
        return self.to("cpu")

    def cuda(self, device: int | str | None = None) -> Tensor:
        """This tensor on a CUDA device (``x.cuda()``, ``x.cuda(1)``): ``x.to("cuda:N")``,
        which needs CuPy and a GPU.

        >>> import dualad
        >>> x = dualad.tensor([1.0])
        >>> x.cuda() if dualad.cuda.is_available() else x.to("cpu")  # doctest: +SKIP
        tensor([1.], device='cuda:0')
        """
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device)

    def type(self, dtype=None):
        """The dtype's name (no argument), or a cast to ``dtype`` (PyTorch's ``type``).

        >>> import dualad
        >>> x = dualad.tensor([1.5])
        >>> x.type(), x.type(dualad.int64)
        ('dualad.float64', tensor([1]))
        """
        if dtype is None:
            return f"dualad.{self.dtype}"
        return self.to(dtype)

    float = _conversion("float", _dtypes.float32)
    double = _conversion("double", _dtypes.float64)
    half = _conversion("half", _dtypes.float16)
    long = _conversion("long", _dtypes.int64)
    int = _conversion("int", _dtypes.int32)
    bool = _conversion("bool", _dtypes.bool_)
    cfloat = _conversion("cfloat", _dtypes.complex64)
    cdouble = _conversion("cdouble", _dtypes.complex128)


attach_methods(ops.MODULES)
attach_operators()
attach_members(Tensor, _ConversionMembers)
