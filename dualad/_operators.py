"""Tensor methods and Python operators, attached from the op modules.

Each op module lists ``TENSOR_METHODS`` (functions that become methods of the same name) and
``INPLACE_METHODS`` (functions that also get a trailing-underscore in-place method). Operators
map to the same functions, so a method, an operator and the top-level function are one op.
"""

from __future__ import annotations

from ._state import ACTIVE, GRAD, MUTATION_WATCH
from ._tensor import Tensor
from .rev.inplace import apply_inplace


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
    from . import ops as lib
    from .ops import mutation

    ops = {
        "__add__": lib.add,
        "__sub__": lib.sub,
        "__mul__": lib.mul,
        "__truediv__": lib.div,
        "__floordiv__": lib.floor_divide,
        "__mod__": lib.remainder,
        "__pow__": lib.pow,
        "__matmul__": lib.matmul,
        "__and__": lib.bitwise_and,
        "__or__": lib.bitwise_or,
        "__xor__": lib.bitwise_xor,
    }
    for name, fn in ops.items():
        setattr(Tensor, name, fn)
        setattr(Tensor, "__r" + name[2:], _reflected(fn))
        setattr(Tensor, "__i" + name[2:], _inplace_method(fn, "__i" + name[2:]))
    Tensor.__neg__ = lib.neg
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = lib.abs
    Tensor.__invert__ = lib.bitwise_not
    Tensor.__eq__ = lib.eq
    Tensor.__ne__ = lib.ne
    Tensor.__lt__ = lib.lt
    Tensor.__le__ = lib.le
    Tensor.__gt__ = lib.gt
    Tensor.__ge__ = lib.ge
    Tensor.__getitem__ = lib.getitem

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
    Tensor.mT = property(lib.matrix_transpose)
    Tensor.H = property(lambda self: lib.conj(_full_transpose(self)))
    # torch spells these as properties (x.real, x.imag), not methods
    Tensor.real = property(lib.real)
    Tensor.imag = property(lib.imag)
    Tensor.mH = property(lambda self: lib.conj(lib.matrix_transpose(self)))


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
    from ._backend import xp_of
    from .ops._keys import _device_key, _normalize_key

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
    if not data.flags.writeable:
        return False
    if MUTATION_WATCH:  # allow_mutation_on_saved_tensors: copy what was saved from x first
        from .rev.saved import before_mutation

        before_mutation(x)
    try:
        data[_device_key(xp_of(data), _normalize_key(key))] = value
    except Exception:
        return False  # the functional path raises the error with dualad's wording
    x._bump_version()
    return True


def _full_transpose(x):
    from .ops import permute

    return permute(x, tuple(reversed(range(x.ndim)))) if x.ndim >= 2 else x
