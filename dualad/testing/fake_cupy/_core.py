"""The stand-in's array type and the wrappers that run NumPy on it.

``ndarray`` holds a NumPy array (``_a``) and behaves like ``cupy.ndarray`` where it matters for
finding host/device mistakes: implicit conversion to NumPy raises CuPy's TypeError, NumPy arrays
mixed into its operators and functions raise TypeError, ``__array_ufunc__`` and
``__array_function__`` forward to the stand-in's own functions (``NotImplemented``, hence
NumPy's TypeError, where CuPy has no such function), reductions give 0-d arrays, and the only
ways between host and device are ``asarray``/``array``/``set`` (in) and ``get``/``asnumpy``
(out). Python scalars out of 0-d arrays (``float(x)``, ``x.item()``, ``bool(x)``) work, as on
CuPy, where they synchronise.

Every crossing is logged in ``TRANSFERS`` (kind, shape, where): "to_host", "to_device" (NumPy
data in), "scalar" (a Python number read from the device).
"""

from __future__ import annotations

import traceback
import weakref

import numpy as np

CONVERSION_ERROR = (
    "Implicit conversion to a NumPy array is not allowed. "
    "Please use `.get()` to construct a NumPy array explicitly."
)

# (kind, shape, short stack): appended by every crossing between host and device
TRANSFERS: list = []
# "cupy" -> the stand-in's module, set by ``_modules`` once it is built (the protocols of
# ``ndarray`` forward to its functions)
NAMESPACE: dict = {}


def log_transfer(kind: str, shape) -> None:
    """Record one host/device crossing (with the caller's frames, for a readable failure)."""
    frames = [
        f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno} {f.name}"
        for f in traceback.extract_stack(limit=12)[:-2]
        if "fake_cupy" not in f.filename
    ]
    TRANSFERS.append((kind, tuple(shape), " < ".join(reversed(frames[-5:]))))


class Device:
    """``cupy.cuda.Device``: one device (id 0), usable as a no-op context manager."""

    def __init__(self, device=None):
        self.id = int(device) if device is not None else 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def use(self) -> None:
        """Make it current (a no-op: the stand-in has one device)."""

    def synchronize(self) -> None:
        """Wait for its work (a no-op)."""

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class _Pointer:
    """``ndarray.data``: a memory pointer with ``ptr`` (the host buffer's address)."""

    def __init__(self, array: np.ndarray):
        self.ptr = array.__array_interface__["data"][0]


def _reject_host(value, what: str):
    raise TypeError(f"Unsupported type {type(value)} ({what}: a NumPy array given to CuPy)")


def unwrap(value, what: str = "argument"):
    """The NumPy array inside a stand-in array; NumPy arrays raise TypeError as on CuPy;
    lists and tuples are unwrapped item by item; other values pass unchanged."""
    kind = type(value)
    if kind is ndarray:
        return value._a
    if kind is np.ndarray:
        _reject_host(value, what)
    if kind in (list, tuple):
        return kind(unwrap(v, what) for v in value)
    return value


def wrap(value):
    """Stand-in arrays for NumPy arrays and scalars (CuPy gives 0-d arrays where NumPy gives
    scalars); tuples and lists of them item by item; anything else unchanged."""
    if isinstance(value, np.ndarray):
        return ndarray._of(value)
    if isinstance(value, np.generic):
        return ndarray._of(np.asarray(value))
    if type(value) is list:
        return [wrap(v) for v in value]
    if isinstance(value, tuple):  # NumPy's named results (SVDResult...) are plain on CuPy
        return tuple(wrap(v) for v in value)
    return value


# always stable on CuPy (NumPy's default quicksort is not)
_SORTS = frozenset({"sort", "argsort"})
# NumPy gives read-only views where CuPy's are writable
_WRITABLE_VIEWS = frozenset({"diagonal"})


def _make_writable(view: np.ndarray) -> None:
    base = view.base
    if isinstance(base, np.ndarray) and base.flags.writeable and not view.flags.writeable:
        view.flags.writeable = True


def wrap_function(func, name: str):
    """``func`` (a NumPy/SciPy function) taking and giving stand-in arrays."""

    def function(*args, **kwargs):
        if name in _SORTS:
            kwargs = _stable(kwargs, name)
        out = kwargs.get("out")
        args = unwrap(args, name)
        kwargs = {k: unwrap(v, name) for k, v in kwargs.items()}
        result = func(*args, **kwargs)
        if out is not None and type(out) is ndarray:
            return out
        if name in _WRITABLE_VIEWS:
            _make_writable(result)
        return wrap(result)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"CuPy's ``{name}`` (the stand-in runs NumPy's on the host buffer)."
    function.__wrapped_numpy__ = func
    return function


class ufunc:
    """A CuPy ufunc over a NumPy ufunc: call, ``reduce``, ``accumulate``, ``outer``, ``at``."""

    def __init__(self, np_ufunc):
        self._u = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.__call__ = wrap_function(np_ufunc, self.__name__)
        for method in ("reduce", "accumulate", "outer", "at", "reduceat"):
            setattr(self, method, wrap_function(getattr(np_ufunc, method), method))

    def __call__(self, *args, **kwargs):
        return self.__dict__["__call__"](*args, **kwargs)

    def __getattr__(self, name):  # nin, nout, nargs, identity, types
        return getattr(self._u, name)

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"


_BINARY = [
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "divmod",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
]
_UNARY = ["neg", "pos", "abs", "invert"]


def _part(name: str):
    """The getter and setter of ``real``/``imag`` (views of the host buffer)."""

    def get(self):
        return wrap(getattr(self._a, name))

    def set(self, value):
        setattr(self._a, name, unwrap(value, name))

    return get, set


class ndarray:
    """CuPy's ``ndarray`` in the stand-in: a NumPy array that refuses to be NumPy implicitly."""

    __slots__ = ("__weakref__", "_a")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        self._a = np.empty(shape, dtype=dtype, order=order)

    @classmethod
    def _of(cls, array: np.ndarray):
        out = object.__new__(cls)
        out._a = array
        if array.base is None:  # an owner: its views find this very object as their ``base``
            key = id(array)
            _OWNERS[key] = weakref.ref(out, lambda ref, key=key: _forget_owner(key, ref))
        return out

    # --- ways out ------------------------------------------------------------------------
    def __array__(self, *args, **kwargs):
        raise TypeError(CONVERSION_ERROR)

    def get(self, stream=None, order="C", out=None, blocking=True):
        """A NumPy copy on the host (a logged transfer)."""
        log_transfer("to_host", self._a.shape)
        if out is not None:
            out[...] = self._a
            return out
        return self._a.copy(order=order)

    def set(self, arr, stream=None):
        """Copy the NumPy array ``arr`` into this array (a logged transfer)."""
        log_transfer("to_device", np.shape(arr))
        self._a[...] = arr

    def tolist(self):
        log_transfer("to_host", self._a.shape)
        return self._a.tolist()

    def _scalar(self):
        log_transfer("scalar", self._a.shape)
        return self._a

    def item(self, *args):
        return self._scalar().item(*args)

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __complex__(self):
        return complex(self._scalar())

    def __bool__(self):
        return bool(self._scalar())

    # --- NumPy protocols: as CuPy, forward to the stand-in's own functions ------------------
    def __array_ufunc__(self, np_ufunc, method, *inputs, **kwargs):
        own = getattr(NAMESPACE["cupy"], np_ufunc.__name__, None)
        if own is None:
            return NotImplemented
        if method == "__call__":
            return own(*inputs, **kwargs)
        return getattr(own, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        target = NAMESPACE["cupy"]
        for part in func.__module__.split(".")[1:]:
            target = getattr(target, part, None)
        own = getattr(target, func.__name__, None) if target is not None else None
        if own is None:
            return NotImplemented
        return own(*args, **kwargs)

    # --- attributes -----------------------------------------------------------------------
    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):  # CuPy reshapes in place where strides allow (AttributeError else)
        self._a.shape = value

    @property
    def __cuda_array_interface__(self):
        interface = self._a.__array_interface__
        return {
            "shape": interface["shape"],
            "typestr": interface["typestr"],
            "data": interface["data"],
            "strides": interface["strides"],
            "version": 3,
        }

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: wrap(self._a.T))
    mT = property(lambda self: wrap(self._a.mT))
    device = property(lambda self: Device(0))
    data = property(lambda self: _Pointer(self._a))
    flat = property(lambda self: wrap(self._a.ravel()))

    @property
    def base(self):
        """The array owning the memory, the same object each time (CuPy's ``base``: dualad
        tells views by ``out.base is x``)."""
        base = self._a.base
        if not isinstance(base, np.ndarray):
            return None
        ref = _OWNERS.get(id(base))
        owner = ref() if ref is not None else None
        if owner is not None and owner._a is base:
            return owner
        return wrap(base)

    real = property(*_part("real"))
    imag = property(*_part("imag"))

    # --- indexing -------------------------------------------------------------------------
    def __getitem__(self, key):
        return wrap(self._a[_index(key)])

    def __setitem__(self, key, value):
        if type(value) is np.ndarray:  # CuPy copies host data in: a transfer
            log_transfer("to_device", value.shape)
        else:
            value = unwrap(value, "__setitem__")
        self._a[_index(key)] = value

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (wrap(row) for row in self._a)

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __copy__(self):
        return wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return wrap(self._a.copy())

    def __reduce__(self):
        return (_rebuild, (self._a,))

    def __dlpack__(self, *args, **kwargs):
        raise TypeError("the stand-in CuPy array does not export DLPack")

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        return wrap(self._a.astype(dtype, order=order, copy=copy))


# id(owning NumPy array) -> weak reference to its stand-in array
_OWNERS: dict = {}


def _forget_owner(key: int, ref) -> None:
    if _OWNERS.get(key) is ref:
        del _OWNERS[key]


def _rebuild(array):
    return ndarray._of(array)


def _index(key):
    """An index for the host buffer: stand-in arrays unwrapped, NumPy arrays copied in (CuPy
    accepts them, by a transfer)."""
    if type(key) is tuple:
        return tuple(_index(k) for k in key)
    if type(key) is ndarray:
        return key._a
    if type(key) is np.ndarray:
        log_transfer("to_device", key.shape)
    return key


def _stable(kwargs: dict, name: str) -> dict:
    """CuPy's sorts are stable and accept no other ``kind`` (nor NumPy 2's ``stable=``)."""
    if "stable" in kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument 'stable'")
    kind = kwargs.pop("kind", None)
    if kind not in (None, "stable"):
        raise ValueError("kind can only be None or 'stable'")
    return {**kwargs, "kind": "stable"}


def _method(name: str):
    def method(self, *args, **kwargs):
        if name in _SORTS:
            kwargs = _stable(kwargs, name)
        out = kwargs.get("out")
        args = unwrap(args, name)
        kwargs = {k: unwrap(v, name) for k, v in kwargs.items()}
        result = getattr(self._a, name)(*args, **kwargs)
        if name in _WRITABLE_VIEWS:
            _make_writable(result)
        return out if type(out) is ndarray else wrap(result)

    method.__name__ = name
    return method


def _operator(dunder: str):
    np_method = getattr(np.ndarray, dunder)

    def operator(self, *others):
        return wrap(np_method(self._a, *unwrap(others, dunder)))

    operator.__name__ = dunder
    return operator


def _inplace(dunder: str):
    np_method = getattr(np.ndarray, dunder)

    def operator(self, other):
        np_method(self._a, unwrap(other, dunder))
        return self

    operator.__name__ = dunder
    return operator


def install_members(names) -> None:
    """Give ``ndarray`` CuPy's public methods (``names``) that it does not define itself."""
    for name in names:
        if name not in ndarray.__dict__ and callable(getattr(np.ndarray, name, None)):
            setattr(ndarray, name, _method(name))
    for op in _BINARY:
        for dunder in (f"__{op}__", f"__r{op}__"):
            if hasattr(np.ndarray, dunder):
                setattr(ndarray, dunder, _operator(dunder))
        if hasattr(np.ndarray, f"__i{op}__"):
            setattr(ndarray, f"__i{op}__", _inplace(f"__i{op}__"))
    for op in _UNARY:
        setattr(ndarray, f"__{op}__", _operator(f"__{op}__"))


ndarray.__module__ = "cupy"
ufunc.__module__ = "cupy"
