"""The keyword arguments of ``dualad.numpy.ufunc`` calls (``out``, ``where``, ``dtype``,
``signature``, ``casting``, ``order``, ``subok``), with NumPy's semantics: see
``dualad.numpy.ufuncs`` for what each does and ``call`` for the order they are applied in.

>>> import dualad
>>> import dualad.numpy as dnp
>>> dnp.add(dualad.tensor([1, 2]), 1.5, dtype="float32")
tensor([2.5, 3.5], dtype=float32)
"""

from __future__ import annotations

import numpy as np

from .._creation import as_tensor, zeros_like
from .._state import GRAD
from .._tensor import Tensor
from .._wrapper import LevelTensor, unwrapped
from ..ops import astype
from ..ops import where as _where

_SCALARS = (bool, int, float, complex)
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_ORDERS = ("K", "A", "C", None)
_KEYWORDS = frozenset(
    ("out", "where", "dtype", "casting", "order", "subok", "signature", "axes", "axis", "keepdims")
)
_NUMERIC_KINDS = "biufc"
_BOOL = np.dtype(bool)


def call(uf, args: tuple, kwargs: dict):
    """``uf(*args, **kwargs)`` with NumPy's keyword semantics (the module docstring)."""
    name = f"dualad.numpy.{uf.__name__}"
    unknown = set(kwargs) - _KEYWORDS
    if unknown:
        raise TypeError(f"{name}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if len(args) < uf.nin or len(args) > uf.nargs:
        raise TypeError(
            f"{name}() takes from {uf.nin} to {uf.nargs} positional arguments but "
            f"{len(args)} were given"
        )
    out = kwargs.get("out")
    if len(args) > uf.nin:
        if out is not None:
            raise TypeError(
                f"{name}: cannot specify 'out' as both a positional and keyword argument"
            )
        out = args[uf.nin :]
        args = args[: uf.nin]
    outs = normalise_out(name, uf.nout, out)
    casting = check_options(name, kwargs)
    gufunc_keywords = {k: kwargs[k] for k in ("axes", "axis", "keepdims") if k in kwargs}
    if gufunc_keywords and uf._gufunc is None:
        raise TypeError(
            f"{name}: {sorted(gufunc_keywords)[0]!r} is a keyword of generalized ufuncs "
            f"(matmul, vecdot ...); {uf.__name__} is elementwise"
        )
    inputs = tuple(check_input(name, a) for a in args)
    dtype = kwargs.get("dtype")
    signature = kwargs.get("signature")
    if dtype is not None or signature is not None or casting != "same_kind":
        inputs, out_dtypes = resolve_loop(uf, inputs, dtype, signature, casting)
    else:
        out_dtypes = None
    results = uf._gufunc(*inputs, **gufunc_keywords) if gufunc_keywords else uf._fn(*inputs)
    results = results if uf.nout > 1 else (results,)
    if out_dtypes is not None:
        results = tuple(
            r if r.dtype == d else astype(r, d) for r, d in zip(results, out_dtypes, strict=True)
        )
    mask = kwargs.get("where", True)
    if mask is not True:
        results = masked(name, results, outs, mask)
    final = tuple(
        r if o is None else write_out(name, uf, r, o, casting)
        for r, o in zip(results, outs, strict=True)
    )
    return final if uf.nout > 1 else final[0]


def normalise_out(name: str, nout: int, out) -> tuple:
    """``out`` as a tuple of ``nout`` entries (None, a Tensor or a NumPy array)."""
    if out is None:
        return (None,) * nout
    if not isinstance(out, tuple):
        if nout > 1:
            raise TypeError(f"{name}: out= must be a tuple of {nout} arrays (one per output)")
        out = (out,)
    if len(out) != nout:
        raise ValueError(f"{name}: out= must have {nout} entries (one per output), got {len(out)}")
    for o in out:
        if o is not None and not isinstance(o, (Tensor, np.ndarray)):
            raise TypeError(
                f"{name}: out= must be a dualad Tensor (or a NumPy array for an untracked "
                f"result), got {type(o).__name__}"
            )
    return out


def check_options(name: str, kwargs: dict) -> str:
    """Validate ``casting``, ``order`` and ``subok``; returns ``casting``."""
    casting = kwargs.get("casting", "same_kind")
    if casting not in _CASTINGS:
        raise ValueError(
            f"{name}: casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe' "
            f"(got casting={casting!r})"
        )
    order = kwargs.get("order", "K")
    if order not in _ORDERS:
        if order in ("F", "f"):
            raise ValueError(
                f"{name}: order='F' is not supported: dualad results are laid out like their "
                "inputs (order 'K', 'A' or 'C'); call .copy() on a NumPy array for Fortran order"
            )
        raise ValueError(f"{name}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if not isinstance(kwargs.get("subok", True), (bool, np.bool_)):
        raise TypeError(f"{name}: subok must be a bool")
    return casting


def check_input(name: str, value):
    """``value`` as an op argument: Tensors and Python scalars pass, arrays/lists of numbers
    become Tensors, anything else is a TypeError naming ``name``."""
    if isinstance(value, Tensor) or type(value) in _SCALARS:
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        array = value
    elif isinstance(value, (list, tuple)):
        array = np.asarray(value)
    else:
        return as_tensor(value)  # a CuPy array or another array-like: as_tensor says
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"{name}: inputs of dtype {array.dtype} are not supported: dualad computes on bool, "
            "integer, floating and complex values (convert strings/objects first)"
        )
    return as_tensor(array)


def _dtype_key(value):
    """What ``resolve_dtypes`` takes for one input: a dtype, or the Python type of a scalar
    (weakly typed, NEP 50; a Python bool is NumPy's bool)."""
    kind = type(value)
    if kind is bool:
        return _BOOL
    return kind if kind in _SCALARS else value.dtype


def resolve_loop(uf, inputs: tuple, dtype, signature, casting):
    """The inputs cast to the dtypes of NumPy's loop for ``dtype``/``signature``/``casting``,
    and the loop's output dtypes (NumPy's errors when there is none)."""
    if dtype is not None:
        if signature is not None:
            raise TypeError(
                f"dualad.numpy.{uf.__name__}: cannot specify both 'signature' and 'dtype'"
            )
        signature = (None,) * uf.nin + (np.dtype(dtype),) * uf.nout
    elif isinstance(signature, str):
        signature = tuple(np.dtype(c) for c in signature.replace("->", ""))
    elif signature is not None:
        signature = tuple(None if s is None else np.dtype(s) for s in signature)
    keys = tuple(_dtype_key(v) for v in inputs) + (None,) * uf.nout
    # (resolved with 'unsafe' and the casting rule checked here: NumPy 2's resolve_dtypes
    # crashes on a failing 'equiv' cast of a Python scalar's type)
    options = (
        {"casting": "unsafe"}
        if signature is None
        else {"signature": signature, "casting": "unsafe"}
    )
    loop = uf._np.resolve_dtypes(keys, **options)
    for i, (v, d) in enumerate(zip(inputs, loop[: uf.nin], strict=True)):
        if type(v) in _SCALARS:
            if casting == "equiv":  # (NumPy's rule: no Python scalar under 'equiv')
                raise TypeError(
                    f"dualad.numpy.{uf.__name__}: cannot cast Python {type(v).__name__} to {d} "
                    "under the casting rule 'equiv'"
                )
        elif not np.can_cast(v.dtype, d, casting):
            raise TypeError(
                f"dualad.numpy.{uf.__name__}: Cannot cast ufunc '{uf.__name__}' input {i} from "
                f"{v.dtype!r} to {d!r} with casting rule {casting!r}"
            )
    cast = tuple(
        v if type(v) in _SCALARS or v.dtype == d else astype(v, d)
        for v, d in zip(inputs, loop[: uf.nin], strict=True)
    )
    return cast, loop[uf.nin :]


def masked(name: str, results: tuple, outs: tuple, mask) -> tuple:
    """``results`` where ``mask`` is True, else ``out``'s values (zeros without ``out``)."""
    mask = check_input(name, mask)
    if type(mask) in _SCALARS:
        mask = as_tensor(mask)
    if not np.can_cast(mask.dtype, np.bool_, "safe"):
        raise TypeError(f"{name}: where= must be a boolean mask, got dtype {mask.dtype}")
    mask = astype(mask, np.bool_) if mask.dtype != np.bool_ else mask
    kept = []
    for r, o in zip(results, outs, strict=True):
        if o is None:
            base = zeros_like(r)
        elif isinstance(o, np.ndarray):
            base = as_tensor(o.copy())  # (a copy: out is written after)
        else:
            base = o
        kept.append(_where(mask, r, base))
    return tuple(kept)


def is_tracked(result) -> bool:
    """Whether a NumPy array could not hold ``result``: it requires grad, has a tangent, is a
    level's value (func.grad's, vmap's batch) or an active level tracks it."""
    if isinstance(result, LevelTensor) or result._rg or result._fw is not None:
        return True
    return any(level.tracks(result) for level in GRAD.levels)


def write_out(name: str, uf, result, out, casting: str):
    """Write ``result`` into ``out`` (NumPy's broadcasting and casting rules); returns ``out``."""
    shape = tuple(out.shape)
    try:
        fits = np.broadcast_shapes(tuple(result.shape), shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{name}: non-broadcastable output operand with shape {shape} doesn't match the "
            f"broadcast shape {tuple(result.shape)}"
        )
    if not np.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(
            f"{name}: Cannot cast ufunc '{uf.__name__}' output from {result.dtype!r} to "
            f"{out.dtype!r} with casting rule {casting!r}"
        )
    if isinstance(out, Tensor):
        out.copy_(result)
        return out
    batched = isinstance(result, LevelTensor) and getattr(result, "batches", False)
    if batched or (uf.differentiable and is_tracked(result)):
        raise TypeError(
            f"{name}: out= is a NumPy array but the result is tracked (it requires grad, is "
            "dual, batched by vmap or inside dualad.func): an array cannot hold its derivative. "
            "Pass a dualad Tensor as out= (dualad.empty_like(...)), or use the returned tensor "
            "without out= (for an in-place operator on an array, ``a += x``, write "
            "``a = a + x``), or detach() the inputs if no derivative is wanted."
        )
    np.copyto(out, unwrapped(result).numpy(force=True), casting="unsafe")
    return out
