"""The Tensor: an xp array plus the metadata that reverse mode, forward mode and views need.

Invariants:
- ``_data`` is a NumPy or CuPy ndarray (never a NumPy scalar); the tensor's device is its data's.
- ``_rg`` is True iff the tensor requires grad. A non-leaf has ``_node`` (its grad_fn) and
  ``_out_nr`` (which output of that node it is); a leaf has ``_node is None``.
- ``_vc`` is the version counter, a one-element list shared by a base, its views and its
  detached aliases; ``None`` means "version 0, not shared yet" (allocated lazily, so plain
  results cost nothing).
- ``_view`` is a ``ViewInfo`` for tensors that are views of another tensor, else None.
- ``_meta`` holds what few tensors need (``.grad``, retain_grad, hooks, the cached
  AccumulateGrad); None for most tensors.
- ``_fw`` holds forward-mode tangents keyed by dual level; None when the tensor has none.

This layer holds data and metadata only, and imports nothing above ``_backend``, ``_dtypes``,
``_state`` and ``_errors``. Members that need a higher layer are attached to the class from
there with ``attach_members``: reverse mode's (``requires_grad``, ``grad_fn``, ``backward``,
hooks) by ``dualad.rev.tensor_members``; math methods, operators, ``to`` and iteration by
``dualad._operators``.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _dtypes
from ._backend import CPU, Device, device_of, to_device
from ._errors import TrackedConversionError
from ._meta import AttachedMembers, _version_box
from ._state import GRAD

_new = object.__new__


class Tensor(AttachedMembers):
    """An n-dimensional array on NumPy (cpu) or CuPy (cuda) that records gradients.

    Create tensors with :func:`dualad.tensor`, :func:`dualad.as_tensor` or the factories.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = (
        "__weakref__",
        "_data",
        "_fw",
        "_fwsig",
        "_meta",
        "_node",
        "_out_nr",
        "_rg",
        "_vc",
        "_view",
    )

    # NumPy defers to our reflected operators and ufunc protocol instead of converting us.
    __array_priority__ = 1000

    def __init__(self, data: Any = None, requires_grad: bool = False) -> None:
        # ``Tensor(array)`` wraps an ndarray without copying; user code should prefer
        # dualad.tensor / dualad.as_tensor, which also accept nested lists and dtypes.
        if data is None:
            data = np.empty((0,), dtype=_dtypes.get_default_dtype())
        elif type(data) is not np.ndarray:
            data = _to_array(data, None, None, copy=False)
        # alike wrap's slots on purpose: wrap, the hot path of every op, calls no helper
        self._data = data
        self._rg = False
        self._node = None
        self._out_nr = 0
        self._meta = None
        self._fw = None
        self._fwsig = None  # (forward mode's cached signature: fwd/compiled.py)
        self._vc = None
        self._view = None
        if requires_grad:
            self.requires_grad_(True)

    # ------------------------------------------- array attributes (LevelTensor's forward alike)
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def device(self) -> Device:
        data = self._data
        return CPU if type(data) is np.ndarray else device_of(data)

    @property
    def is_cuda(self) -> bool:
        return type(self._data) is not np.ndarray

    @property
    def is_complex_dtype(self) -> bool:
        return self._data.dtype.kind == "c"

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # ------------------------------------------------------------------ autograd attributes
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records operations on this leaf; returns ``self``.

        >>> import dualad
        >>> x = dualad.zeros(2).requires_grad_()
        >>> x.requires_grad, x.is_leaf
        (True, True)
        """
        requires_grad = bool(requires_grad)
        if self._node is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not _dtypes.is_differentiable(self._data.dtype):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients "
                f"(got dtype {self._data.dtype})"
            )
        self._rg = requires_grad
        return self

    @property
    def _backward_hooks(self):
        node = self._node
        if node is None:
            return None
        return node._tensor_hooks_of(self._out_nr)

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        raise RuntimeError("dualad: the _backward_hooks attribute cannot be deleted")

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def output_nr(self) -> int:
        return self._out_nr

    @property
    def retains_grad(self) -> bool:
        meta = self._meta
        return meta is not None and meta.retains_grad

    def detach(self) -> Tensor:
        """A new leaf sharing data and version counter with ``self``, outside the graph.

        >>> import dualad
        >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
        >>> y = (x * 2).detach()
        >>> y, y.requires_grad
        (tensor([2., 4.]), False)
        """
        out = wrap(self._data)
        out._vc = _version_box(self)
        return out

    # ------------------------------------------------------------------ data and versions
    @property
    def data(self) -> Tensor:
        """A tensor sharing storage with ``self`` but outside autograd (like ``torch``'s ``.data``).

        Writing into it does not bump the version counter.
        """
        return wrap(self._data)

    @data.setter
    def data(self, value) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"dualad: Tensor.data must be set to a Tensor, got {type(value).__name__}"
            )
        if self._rg and not _dtypes.is_differentiable(value._data.dtype):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex "
                f"dtype (got {value.dtype})"
            )
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        raise RuntimeError("dualad: the data attribute cannot be deleted")

    @property
    def _version(self) -> int:
        box = self._vc
        return 0 if box is None else box[0]

    @property
    def _base(self):
        view = self._view
        return None if view is None else view.base

    def _is_view(self) -> bool:
        return self._view is not None

    def _bump_version(self) -> None:
        box = self._vc
        if box is None:
            self._vc = [1]
        else:
            box[0] += 1

    # ------------------------------------------------------------------ conversion
    # A value that an active level differentiates (a func.grad tape, a dual level's tangent) or
    # batches (vmap) has no NumPy array or Python number that stands for it: the result would be
    # a constant to that level and the derivative silently lost. Those conversions raise
    # TrackedConversionError naming the level and the fix (until NumPy calls dispatch to dualad
    # ops). An eager tensor that merely requires grad keeps PyTorch's rules: ``.item()``,
    # ``float()`` and ``.tolist()`` work (``loss.item()``), ``numpy()`` and ``__array__`` raise
    # unless grad mode is off. Level wrappers (GradTensor, BatchedTensor) check their own level
    # and then convert their value, which checks the levels below.
    def _refuse_if_tracked(self, kind: str) -> None:
        """Raise if an active level tracks this tensor (``kind``: see ``_errors.ATTEMPTS``)."""
        for level in reversed(GRAD.levels):
            if level.tracks(self):
                raise level.conversion_error(self, kind)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array (shares memory on cpu). ``force=True`` converts a tensor
        that requires grad or is tracked by a level too, as ``detach().numpy()`` would.

        >>> import dualad
        >>> dualad.tensor([1.0, 2.0]).numpy()
        array([1., 2.])
        """
        if GRAD.levels and not force:
            self._refuse_if_tracked("numpy")
        if self._rg and GRAD.enabled and not force:
            raise TrackedConversionError(
                "Can't call numpy() on Tensor that requires grad. "
                "Use tensor.detach().numpy() instead."
            )
        data = self._data
        return data if type(data) is np.ndarray else data.get()

    def __array__(self, dtype=None, copy=None):
        if GRAD.levels:
            self._refuse_if_tracked("array")
        if self._rg and GRAD.enabled:
            raise TrackedConversionError(
                "Can't convert a Tensor that requires grad to a NumPy array (np.asarray, "
                "np.array or a NumPy function such as np.exp would drop the graph). Use "
                "tensor.detach() first, or the dualad op (dualad.exp for np.exp)."
            )
        data = self._data
        if type(data) is not np.ndarray:
            data = data.get()
        if dtype is not None and data.dtype != dtype:
            return data.astype(dtype)
        if copy:
            return data.copy()
        return data

    def item(self):
        """The value of a one-element tensor as a Python number.

        >>> import dualad
        >>> dualad.tensor([2.5]).item()
        2.5
        """
        if GRAD.levels:
            self._refuse_if_tracked("item")
        return self._item()

    def _item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def __float__(self) -> float:
        if GRAD.levels:
            self._refuse_if_tracked("float")
        value = self._item()
        return float(value.real if self.is_complex() else value)

    def __int__(self) -> int:
        if GRAD.levels:
            self._refuse_if_tracked("int")
        return int(self._item())

    def __complex__(self) -> complex:
        if GRAD.levels:
            self._refuse_if_tracked("complex")
        return complex(self._item())

    def __index__(self) -> int:
        # integer tensors carry no derivative at any level: nothing to refuse (vmap's
        # BatchedTensor, whose value differs per example, overrides this)
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._item())

    def __bool__(self) -> bool:
        # Not refused for func.grad or dual levels: Python control flow on a tracked value's
        # VALUE is legitimate define-by-run code (PyTorch allows it; seeds branch on values),
        # and a truth value is piecewise constant, so its derivative is zero almost everywhere:
        # nothing is lost. vmap's BatchedTensor refuses (it has no single value).
        if self._data.size != 1:
            amount = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(
                f"Boolean value of Tensor with {amount} is ambiguous (shape {self.shape})"
            )
        return bool(self._data.reshape(()).item())

    def __hash__(self) -> int:
        return id(self)

    # ------------------------------------------------------------------ printing and pickling
    def __repr__(self) -> str:
        data = self._data
        if type(data) is not np.ndarray:
            data = data.get()
        body = np.array2string(data, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)
        extras = []
        if self.device.type != "cpu":
            extras.append(f"device='{self.device}'")
        if data.size == 0 and data.ndim != 1:
            extras.append(f"size={tuple(data.shape)}")
        if data.dtype not in (_dtypes.get_default_dtype(), _dtypes.int64, _dtypes.bool_) and (
            data.dtype != _dtypes.default_complex_dtype()
        ):
            extras.append(f"dtype={data.dtype}")
        if self._node is not None:
            extras.append(f"grad_fn=<{self._node.name()}>")
        elif self._rg:
            extras.append("requires_grad=True")
        if self._fw:
            # forward-mode tangents, innermost level last (dualad.fwd keys them by level)
            for level, tangent in self._fw.items():
                extras.append(
                    f"tangent={tangent!r}"
                    if len(self._fw) == 1
                    else f"tangent[{level.index}]={tangent!r}"
                )
        return "tensor(" + ", ".join([body, *extras]) + ")"

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        data = self._data
        return (
            _rebuild,
            (data if type(data) is np.ndarray else data.get(), self._rg, str(self.device)),
        )

    def __deepcopy__(self, memo):
        if self._node is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment."
            )
        out = Tensor(self._data.copy())
        out._rg = self._rg
        if self._meta is not None and self._meta.grad is not None:
            out.grad = self._meta.grad.detach().clone()
        memo[id(self)] = out
        return out

    def __copy__(self):
        return self.__deepcopy__({})

    def __dir__(self):
        return sorted(
            set(super().__dir__()) | {"shape", "dtype", "device", "grad", "requires_grad"}
        )


def _rebuild(data, requires_grad, device):
    out = Tensor(data if device == "cpu" else to_device(data, device))
    out._rg = requires_grad
    return out


def attach_members(cls: type, source: type) -> None:
    """Copy the members written in the class body of ``source`` (methods, properties; all but
    its dunder bookkeeping) onto ``cls``: how a higher layer gives Tensor the members that need
    it (see the module docstring)."""
    bookkeeping = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"}
    for name, value in vars(source).items():
        if name in bookkeeping:
            continue
        parts = (value.fget, value.fset, value.fdel) if isinstance(value, property) else (value,)
        for function in parts:  # tracebacks and help() say ``Tensor.backward``
            if hasattr(function, "__qualname__"):
                function.__qualname__ = f"{cls.__name__}.{name}"
        setattr(cls, name, value)


def wrap(data) -> Tensor:
    """Wrap an ndarray as a fresh leaf tensor (no copy). The hot path of every op."""
    # (Tensor.__init__ sets the same slots; _dispatch's fast callers inline this body)
    out = _new(Tensor)
    out._data = data
    out._rg = False
    out._node = None
    out._out_nr = 0
    out._meta = None
    out._fw = None
    out._fwsig = None
    out._vc = None
    out._view = None
    return out


def tracking_level(t: Tensor):
    """The innermost active level that tracks ``t`` (differentiates or batches it), or that
    tracks the value a level's wrapper holds (wrappers keep it in ``_value``); None when no
    active level does, so that converting ``t`` to NumPy or a number loses nothing."""
    while isinstance(t, Tensor):
        for level in reversed(GRAD.levels):
            if level.tracks(t):
                return level
        t = getattr(t, "_value", None)
    return None


def is_tensor(obj: Any) -> bool:
    """True if ``obj`` is a dualad Tensor.

    >>> import dualad
    >>> is_tensor(dualad.zeros(2)), is_tensor([0.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


_PYTHON_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)

# ---------------------------------------------------------------------------------------------
# data -> array


def _to_array(data: Any, dtype, device, *, copy: bool):
    """An ndarray for ``data`` of ``dtype`` on ``device``; ``copy`` forces memory of its own.

    Without ``copy`` an existing array of the right dtype and device is returned as is.
    """
    dtype = _dtypes.to_dtype(dtype)
    if isinstance(data, Tensor):
        if GRAD.levels and tracking_level(data) is not None:
            data.__array__()  # raises TrackedConversionError, naming the level
        return _place(data._data, dtype, device, copy)
    if type(data) is np.ndarray or hasattr(data, "__cuda_array_interface__"):
        _check_kind(data.dtype, data)
        return _place(data, dtype, device, copy)
    if isinstance(data, np.ndarray):  # subclasses (memmap, matrix): keep the plain ndarray part
        return _to_array(np.asarray(data), dtype, device, copy=copy)
    if isinstance(data, (list, tuple)) or type(data) in _PYTHON_SCALARS:
        array = _from_python(data, dtype)
        copy = False  # freshly made
    else:  # NumPy scalars, memoryviews, objects with __array__ ...
        try:
            array = np.asarray(data)
        except Exception as exc:
            raise TypeError(
                f"dualad: cannot make a tensor from {type(data).__name__}: {exc}"
            ) from None
        _check_kind(array.dtype, data)  # (it may share memory with data: ``copy`` still holds)
    return _place(array, dtype, device, copy)


def _check_kind(dtype: np.dtype, data) -> None:
    if dtype.kind not in _dtypes.TENSOR_KINDS:
        shown = repr(data)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        raise TypeError(
            f"dualad: cannot make a tensor from {type(data).__name__} {shown} "
            f"(NumPy dtype {dtype}; tensors hold bool, integer, floating and complex values)"
        )


def _place(array, dtype, device, copy: bool):
    """``array`` cast to ``dtype`` and moved to ``device``, new memory if ``copy``."""
    if device is not None:
        moved = to_device(array, device)
        if moved is not array:
            array, copy = moved, False
    if type(array) is np.ndarray:
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array
    with array.device:  # CuPy computes on the current device: make it the array's
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array


def _from_python(data, dtype):
    """A NumPy array from Python scalars / nested sequences (which may hold tensors)."""
    if type(data) in _PYTHON_SCALARS:
        return np.asarray(data, dtype=_python_scalar_dtype(type(data)) if dtype is None else dtype)
    leaf_dtypes: set = set()
    has_tensors = _scan(data, leaf_dtypes)
    if has_tensors:
        data = _tensors_to_arrays(data)
    try:
        array = np.asarray(data) if dtype is None else np.asarray(data, dtype=dtype)
    except ValueError as exc:
        raise ValueError(f"dualad.tensor: cannot make a tensor from ragged data: {exc}") from None
    except TypeError as exc:
        raise TypeError(f"dualad.tensor: cannot make a tensor from this data: {exc}") from None
    _check_kind(array.dtype, data)
    if dtype is None:
        inferred = _leaf_dtype(leaf_dtypes)
        if inferred != array.dtype:
            array = array.astype(inferred)
    return array


def _leaf_dtype(leaf_dtypes: set) -> np.dtype:
    """The dtype of data whose leaves ``_scan`` found: one value per Python type (False, 0,
    0.0, 0j: weak scalars), the dtypes as they are; no leaves ([] or [[], []]) means an empty
    float tensor of the default dtype."""
    if not leaf_dtypes:
        return _dtypes.get_default_dtype()
    return _dtypes.result_type(
        *(kind if isinstance(kind, np.dtype) else kind() for kind in leaf_dtypes)
    )


def _python_scalar_dtype(kind: type) -> np.dtype:
    if kind is builtins.float:
        return _dtypes.get_default_dtype()
    if kind is builtins.complex:
        return _dtypes.default_complex_dtype()
    return _dtypes.int64 if kind is builtins.int else _dtypes.bool_


def _scan(data, leaf_dtypes: set) -> bool:
    """Collect the dtype each leaf of a nested sequence stands for; True if a leaf is a Tensor.

    One ``set(map(type, ...))`` per sequence keeps this near C speed for long lists of numbers.
    """
    has_tensors = False
    for kind in set(map(type, data)):
        if kind in _PYTHON_SCALARS:
            leaf_dtypes.add(kind)  # the type: Python numbers promote as weak scalars
        elif kind is list or kind is tuple:
            for item in data:
                if type(item) is kind and _scan(item, leaf_dtypes):
                    has_tensors = True
        elif issubclass(kind, Tensor):
            has_tensors = True
            leaf_dtypes.update(item._data.dtype for item in data if type(item) is kind)
        elif issubclass(kind, (np.ndarray, np.generic)):
            leaf_dtypes.update(item.dtype for item in data if type(item) is kind)
        elif issubclass(kind, (list, tuple)):  # namedtuples and other sequence subclasses
            for item in data:
                if type(item) is kind and _scan(item, leaf_dtypes):
                    has_tensors = True
    return has_tensors


def _tensors_to_arrays(data):
    if isinstance(data, Tensor):
        if GRAD.levels and tracking_level(data) is not None:
            data.__array__()  # raises TrackedConversionError (tensor() stacks such values)
        array = data._data
        return array if type(array) is np.ndarray else array.get()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_arrays(item) for item in data]
    return data
