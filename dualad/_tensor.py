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

Everything else (math methods, operators) is attached from the op registry by ``dualad.ops``.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

from . import _dtypes
from ._backend import CPU, Device, device_of, to_device, xp_of
from ._errors import TrackedConversionError
from ._state import GRAD, LOCK

_new = object.__new__


class ViewInfo:
    """How a view was made from its base: the root base and the view ops that replay it.

    ``chain`` is a linked list ``(parent_chain, op, params, index)`` (None ends it; ``index``:
    which output of a multi-output view op, else None), so that making a view of a view costs
    O(1) however deep the chain; ``replay`` unrolls it into the ``(op, params, index)`` steps
    that, applied in order to the base, give the view again (used to rebase history after an
    in-place op on a view, and to derive a view's tangent from its base's).
    """

    __slots__ = (
        "base",
        "chain",
        "created_without_grad",
        "fw_derivable",
        "in_custom_function",
        "multi_output",
        "version",
    )

    def __init__(
        self,
        base,
        chain,
        version,
        created_without_grad=False,
        multi_output=False,
        in_custom_function=False,
        fw_derivable=True,
    ):
        self.base = base
        self.chain = chain
        self.version = version  # base version when this view's grad_fn was last made
        self.created_without_grad = created_without_grad
        self.multi_output = multi_output
        # an output (or a view of an output) of a custom Function: in-place on it is an error
        self.in_custom_function = in_custom_function
        # False for unpack_dual's primal (and views of it): PyTorch's forward-non-differentiable
        # view, whose tangent is never derived from its base's (see DualLevel.view_tangent)
        self.fw_derivable = fw_derivable

    @property
    def replay(self) -> tuple:
        steps = []
        link = self.chain
        while link is not None:
            link, op, params, index = link
            steps.append((op, params, index))
        steps.reverse()
        return tuple(steps)


class AutogradMeta:
    """Per-tensor autograd extras that most tensors never need."""

    __slots__ = (
        "accumulator",
        "grad",
        "leaf_hooks",
        "post_accumulate_hooks",
        "retain_key",
        "retains_grad",
    )

    def __init__(self) -> None:
        self.grad = None
        self.leaf_hooks = None  # HookDict of tensor hooks on a leaf (run before AccumulateGrad)
        self.retains_grad = False
        self.retain_key = None  # (node, output_nr) the retain-grad capture is registered on
        self.accumulator = None  # weakref to the leaf's AccumulateGrad node
        self.post_accumulate_hooks = None  # dict id -> fn


def _version_box(t: Tensor) -> list:
    """``t``'s version counter, made on first use. Made under ``LOCK`` (checked again there):
    two threads saving or viewing one shared tensor must not each make one, or a later
    in-place write would bump one while a graph checks the other."""
    box = t._vc
    if box is None:
        with LOCK:
            box = t._vc
            if box is None:
                box = t._vc = [0]
    return box


def _conversion(name: str, dtype):
    """A ``Tensor`` method ``name(self)``: ``self.to(dtype)``."""

    def method(self) -> Tensor:
        return self.to(dtype)

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    return method


class Tensor:
    """An n-dimensional array on NumPy (cpu) or CuPy (cuda) that records gradients.

    Create tensors with :func:`dualad.tensor`, :func:`dualad.as_tensor` or the factories.

    >>> import dualad
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    __slots__ = ("__weakref__", "_data", "_fw", "_meta", "_node", "_out_nr", "_rg", "_vc", "_view")

    # NumPy defers to our reflected operators and ufunc protocol instead of converting us.
    __array_priority__ = 1000

    def __init__(self, data: Any = None, requires_grad: bool = False) -> None:
        # ``Tensor(array)`` wraps an ndarray without copying; user code should prefer
        # dualad.tensor / dualad.as_tensor, which also accept nested lists and dtypes.
        if data is None:
            data = np.empty((0,), dtype=_dtypes.get_default_dtype())
        elif type(data) is not np.ndarray:
            from ._creation import _to_array

            data = _to_array(data, None, None, copy=False)
        self._data = data
        self._rg = False
        self._node = None
        self._out_nr = 0
        self._meta = None
        self._fw = None
        self._vc = None
        self._view = None
        if requires_grad:
            self.requires_grad_(True)

    # ------------------------------------------------------------------ array attributes
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

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def size(self, dim: int | None = None):
        if dim is None:
            return self._data.shape
        try:
            return self._data.shape[dim]
        except IndexError:
            ndim = max(self._data.ndim, 1)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                f"but got {dim})"
            ) from None

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return self._data.itemsize

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    # ------------------------------------------------------------------ autograd attributes
    @property
    def requires_grad(self) -> bool:
        view = self._view
        if view is not None and not self._rg:
            # like torch, a view requires grad when its base does (the base may also have
            # gained history in place since the view was made: refresh its grad_fn)
            from .rev.views import refresh_view_node

            refresh_view_node(self)
            return self._rg or view.base._rg
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        raise RuntimeError("dualad: the requires_grad attribute cannot be deleted")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set whether autograd records operations on this leaf; returns ``self``."""
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
    def grad_fn(self):
        if self._view is not None:
            from .rev.views import refresh_view_node

            return refresh_view_node(self)
        return self._node

    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        raise RuntimeError("dualad: the _grad_fn attribute cannot be deleted")

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
    def grad(self):
        meta = self._meta
        if self._node is not None and not (meta is not None and meta.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: got {tuple(value.shape)}, "
                    f"expected {tuple(self.shape)}"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: got {value.dtype}, "
                    f"expected {self.dtype}"
                )
            if value.device != self.device:
                raise RuntimeError(
                    f"assigned grad has data located on a different device: got {value.device}, "
                    f"expected {self.device}"
                )
        meta = self._meta
        if meta is None:
            if value is None:
                return
            meta = get_meta(self)
        meta.grad = value

    @grad.deleter
    def grad(self) -> None:
        if self._meta is not None:
            self._meta.grad = None

    @property
    def retains_grad(self) -> bool:
        meta = self._meta
        return meta is not None and meta.retains_grad

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` during ``backward()`` (no-op on leaves)."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is None:
            return
        from .rev.hooks import install_retain_grad

        install_retain_grad(self)

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor | None`` run when this tensor's gradient is computed.

        Returns a handle whose ``remove()`` unregisters it.
        """
        from .rev.hooks import register_tensor_hook

        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)`` run on a leaf after its ``.grad`` was accumulated."""
        from .rev.hooks import register_post_accumulate_hook

        return register_post_accumulate_hook(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into the leaves' ``.grad`` (``dualad.autograd.backward``)."""
        _backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A new leaf sharing data and version counter with ``self``, outside the graph."""
        out = wrap(self._data)
        out._vc = _version_box(self)
        return out

    def detach_(self) -> Tensor:
        """Detach in place: ``self`` becomes a leaf that requires no grad and has no tangents.

        Nodes that saved ``self`` refuse to use it afterwards; views of ``self`` keep theirs.
        """
        if self._view is not None and self._node is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. (dualad: this tensor is a "
                "view with gradient history; detach() gives a detached alias of it.)"
            )
        meta = self._meta
        if meta is not None and meta.retains_grad:
            from .rev.hooks import drop_retain_grad

            drop_retain_grad(self)
        self._node = None
        self._out_nr = 0
        self._rg = False
        self._fw = None
        return self

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

    def tolist(self):
        if GRAD.levels:
            self._refuse_if_tracked("tolist")
        data = self._data
        return (data if type(data) is np.ndarray else data.get()).tolist()

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

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        from .ops import unbind

        return iter(unbind(self, 0))

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device: int | str | None = None) -> Tensor:
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device)

    def to(self, *args, dtype=None, device=None, copy: bool = False) -> Tensor:
        """Move to a device and/or cast to a dtype: ``t.to("cuda")``, ``t.to(dualad.float32)``."""
        for arg in args:
            if isinstance(arg, (str, Device)):
                device = arg
            elif isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            else:
                dtype = arg
        out = self
        if dtype is not None:
            from .ops import astype

            dtype = _dtypes.to_dtype(dtype)
            if dtype != self.dtype or copy:
                out = astype(out, dtype)
        if device is not None and Device(device) != self.device:
            from .ops import to_device_op

            out = to_device_op(out, device=Device(device))
        return out

    def type(self, dtype=None):
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


def wrap(data) -> Tensor:
    """Wrap an ndarray as a fresh leaf tensor (no copy). The hot path of every op."""
    out = _new(Tensor)
    out._data = data
    out._rg = False
    out._node = None
    out._out_nr = 0
    out._meta = None
    out._fw = None
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


def get_meta(t: Tensor) -> AutogradMeta:
    """``t``'s AutogradMeta, made on first use under ``LOCK`` (checked again there): threads
    running their first backward into one shared leaf must all accumulate into one ``.grad``,
    not each into a metadata object that another thread's then replaces."""
    meta = t._meta
    if meta is None:
        with LOCK:
            meta = t._meta
            if meta is None:
                meta = t._meta = AutogradMeta()
    return meta


def accumulator_of(t: Tensor):
    """The cached AccumulateGrad node of a leaf that requires grad (made on first use)."""
    meta = t._meta
    if meta is not None and meta.accumulator is not None:
        node = meta.accumulator()
        if node is not None:
            return node
    from .rev.node import AccumulateGrad

    meta = get_meta(t)
    with LOCK:  # one node per leaf, also when threads record their first use at once
        ref = meta.accumulator
        node = None if ref is None else ref()
        if node is None:
            node = AccumulateGrad(t)
            meta.accumulator = weakref.ref(node)
    return node


xp_of_tensor = lambda t: xp_of(t._data)


def _backward(*args, **kwargs) -> None:
    """``rev.engine.backward`` (bound on first use: the engine imports this module)."""
    global _backward
    from .rev.engine import backward

    _backward = backward
    backward(*args, **kwargs)
