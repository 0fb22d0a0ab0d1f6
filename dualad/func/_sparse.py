"""``sparse_jacobian`` and ``sparse_hessian``: whole sparse derivatives from a few products.

Each call (after the first, which also detects the pattern: ``dualad.tracing.sparsity``) pushes the
colourings' seed matrices (``_colouring``) through ONE vmapped ``jvp`` (a Jacobian coloured
by columns), ``vjp`` (coloured by rows: chosen when it needs fewer colours) or ``hvp``
(forward over reverse, star colouring), and reads the entries out of the compressed product
into ``scipy.sparse`` CSR (``cupyx.scipy.sparse`` for CuPy inputs).

The compressed evaluation is compiled by ``dualad.jit`` (installed up by ``dualad.tracing``)
at its first call: later calls replay it as straight-line array code, the cached seed matrix
passed in without a copy (a replay copies an input it writes; the eager path, taken where jit
declines, copies it first).

The transformed function keeps, per input signature (shapes and dtypes), the pattern, the
colouring, the seed matrix, the read indices and the compiled evaluation; ``.pattern`` is the
latest one. A detected pattern whose trace read values into Python (``if x.sum() > 0``) or
indices computed from the inputs (``sort``) is checked on every call: when the function would
take another branch or pick other elements, the pattern is detected again (from the third
detection of a signature on, computed indices are not trusted: ``_TRUSTED_DETECTIONS``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._backend import xp_of
from .._tensor import Tensor, wrap
from .._tree import tree_map
from ..ops import cat
from ..vmap.api import vmap
from ._arrays import convert_args
from ._checks import _check_callable, _normalize_argnums
from ._colouring import (
    colour_columns,
    colour_rows,
    colour_symmetric,
    column_reads,
    row_reads,
    symmetric_reads,
)
from ._forward import _jvp
from ._jacobians import _restricted
from ._reverse import _vjp, grad

# ``dualad.tracing.sparsity.detect`` and ``dualad.jit``, installed by ``dualad.tracing`` (which
# imports this package: the detection runs on the trace level, installed up like the tape's
# recorder)
_DETECT = [None]
_JIT = [None]
# programs a plan's jitted evaluation keeps (argument signatures, guard outcomes of ``fn``)
_MAX_TRACES = 8
# detections per input signature that read indices computed from the inputs at their traced
# values (exact, guarded); later ones use the rules that hold for any values, so that a
# function whose indices change at every call does not pay a detection per call
_TRUSTED_DETECTIONS = 2


def install_detector(detect, jit) -> None:
    """Called once by ``dualad.tracing``: the detection of dependency patterns, and ``jit``
    (which compiles the compressed evaluations)."""
    _DETECT[0] = detect
    _JIT[0] = jit


class _Plan:
    """What one input signature reuses: pattern, colouring, how to read the entries."""

    __slots__ = (
        "colours",
        "detection",
        "evaluate",
        "k",
        "mode",
        "out_shape",
        "pattern",
        "reads",
        "seeds",
        "structure",
        "takes",
    )

    def __init__(self, pattern, out_shape, mode, colours, k, reads, detection) -> None:
        self.pattern = pattern
        self.out_shape = out_shape
        self.mode = mode  # "columns" (jvp), "rows" (vjp) or "symmetric" (hvp)
        self.colours = colours
        self.k = k
        self.reads = reads  # (colour, position): the compressed product's entry per nonzero
        self.detection = detection  # None for a pattern the user gave
        self.seeds = {}  # (dtype, array module) -> the (k, size) seed matrix
        self.takes = {}  # (width, array module) -> flat indices of ``reads``
        self.structure = {}  # array module -> the pattern's (indices, indptr) there
        self.evaluate = None  # the jitted compressed evaluation, made at its first use

    def csr_structure(self, xp):
        """The pattern's CSR ``(indices, indptr)`` as arrays of ``xp`` (copied to a device once
        per plan, not on every call)."""
        structure = self.structure.get(xp)
        if structure is None:
            pattern = self.pattern
            structure = self.structure[xp] = (
                xp.asarray(pattern.indices),
                xp.asarray(pattern.indptr),
            )
        return structure

    def seed_matrix(self, size: int, dtype, xp):
        """The ``(k, size)`` seed matrix (row c: the indicator of colour c), made once."""
        key = (size, dtype, xp)
        seeds = self.seeds.get(key)
        if seeds is None:
            seeds = np.zeros((self.k, size), dtype=dtype)
            seeds[self.colours, np.arange(size)] = 1
            seeds = self.seeds[key] = xp.asarray(seeds)
        return seeds

    def entries(self, compressed, xp):
        """The nonzeros' values, read from the ``(k, width)`` compressed product."""
        width = compressed.shape[1]
        key = (width, xp)
        take = self.takes.get(key)
        if take is None:
            first, second = self.reads
            take = self.takes[key] = xp.asarray(first.astype(np.int64) * width + second)
        return xp.take(compressed.reshape(-1), take)


class SparseDerivative:
    """A function computing the sparse Jacobian or Hessian of ``fn`` (see
    ``sparse_jacobian``); ``.pattern`` is the pattern of its latest call (None before)."""

    def __init__(self, fn, argnums, sparsity, hessian: bool) -> None:
        self.fn = fn
        self.argnums = argnums
        self.title = "sparse_hessian" if hessian else "sparse_jacobian"
        self.hessian = hessian
        self.user_pattern = _user_pattern(sparsity, self.title)
        self.pattern = self.user_pattern
        self._plans: dict = {}
        self._detections: dict = {}  # input signature -> how many detections it took
        functools.update_wrapper(self, fn, updated=())

    # ------------------------------------------------------------------ calling
    def __call__(self, *args):
        nums = _normalize_argnums(self.argnums, len(args), f"dualad.func.{self.title}")
        args, _ = convert_args(args, nums, {}, self.title)
        # the result is a matrix of numbers, without autograd history: the arguments' own
        # histories are not needed (and a traced function may not close over them)
        args = tree_map(_detached, args)
        diff = [args[i] for i in nums]
        for i, x in zip(nums, diff):
            if not isinstance(x, Tensor):
                raise TypeError(
                    f"dualad.func.{self.title}: argument {i} must be one tensor or array (a "
                    f"pytree of them is not supported), got {type(x).__name__}"
                )
            if x.dtype.kind != "f":
                raise TypeError(
                    f"dualad.func.{self.title}: argument {i} has dtype {x.dtype}; sparse "
                    "derivatives are computed for real floating inputs only"
                )
        restricted = _restricted(self.fn, args, nums)
        key = tuple((tuple(x.shape), x.dtype, type(x._data)) for x in diff)
        plan = self._plans.get(key)
        if (
            plan is not None
            and plan.detection is not None
            and not plan.detection.holds([x._data for x in diff])
        ):
            plan = None  # the function takes another branch: detect again
        if plan is None:
            count = self._detections[key] = self._detections.get(key, 0) + 1
            plan = self._plan(restricted, diff, trust_values=count <= _TRUSTED_DETECTIONS)
            self._plans[key] = plan
        self.pattern = plan.pattern
        if plan.k == 0:  # (no nonzero: a matrix of the inputs' array module all the same)
            xp = xp_of(diff[0]._data)
            return self._result(plan, xp.zeros(plan.pattern.nnz, dtype=diff[0].dtype), diff, xp)
        compressed = self._compressed(plan, args, nums, diff)
        if compressed.dtype.kind == "c":
            raise RuntimeError(
                f"dualad.func.{self.title}: the function's output is complex; sparse "
                "derivatives are real Jacobians of real functions"
            )
        xp = xp_of(compressed)
        return self._result(plan, plan.entries(compressed, xp), diff, xp)

    # ------------------------------------------------------------------ the plan
    def _plan(self, restricted, diff: list, trust_values: bool) -> _Plan:
        n = sum(int(x.numel()) for x in diff)
        detection = None
        if self.user_pattern is None:
            detection = _DETECT[0](
                restricted, diff, self.title, hessian=self.hessian, trust_values=trust_values
            )
            pattern = detection.hessian if self.hessian else detection.pattern
            out_shape = detection.out_shape
            if detection.replay is None:
                detection = None  # nothing to check again
        else:
            pattern = self.user_pattern
            rows = n if self.hessian else pattern.shape[0]
            if pattern.shape != (rows, n):
                expect = f"({n}, {n})" if self.hessian else f"(number of output elements, {n})"
                raise ValueError(
                    f"dualad.func.{self.title}: sparsity has shape {pattern.shape}, expected "
                    f"{expect} for inputs of shapes {[tuple(x.shape) for x in diff]}"
                )
            out_shape = None  # (checked against the output when it is computed)
        if self.hessian:
            if out_shape is not None and int(np.prod(out_shape)) != 1:
                raise RuntimeError(
                    f"dualad.func.sparse_hessian: the function must return a scalar, got an "
                    f"output of shape {out_shape}"
                )
            pattern = _canonical(pattern + pattern.T)  # (a user's pattern made symmetric)
            colours, k = colour_symmetric(pattern)
            return _Plan(
                pattern,
                (),
                "symmetric",
                colours,
                k,
                symmetric_reads(pattern, colours, k),
                detection,
            )
        by_columns = colour_columns(pattern)
        by_rows = colour_rows(pattern)
        if by_rows[1] < by_columns[1]:
            colours, k = by_rows
            reads = row_reads(pattern, colours)
            mode = "rows"
        else:
            colours, k = by_columns
            reads = column_reads(pattern, colours)
            mode = "columns"
        return _Plan(pattern, out_shape, mode, colours, k, reads, detection)

    # ------------------------------------------------------------------ evaluation
    def _compressed(self, plan: _Plan, args: tuple, nums: tuple, diff: list):
        """The compressed product as an array of shape ``(k, m)`` or ``(k, n)``: jitted (one
        trace per plan and argument signature, then straight-line array code), eager when an
        argument that is not differentiated is not something ``dualad.jit`` takes."""
        like = diff[0]
        xp = xp_of(like._data)
        size = plan.pattern.shape[0] if plan.mode == "rows" else plan.colours.size
        seeds = wrap(plan.seed_matrix(size, like.dtype, xp))
        if all(_jittable(a) for i, a in enumerate(args) if i not in nums):
            if plan.evaluate is None:
                plan.evaluate = _JIT[0](
                    functools.partial(self._evaluate, plan, nums), max_traces=_MAX_TRACES
                )
            out = plan.evaluate(seeds, *args)
        else:
            out = self._evaluate(plan, nums, seeds, *args)
        return out._data if isinstance(out, Tensor) else out

    def _evaluate(self, plan: _Plan, nums: tuple, seeds, *args):
        """The compressed product of ``self.fn`` at ``args`` as a ``(k, width)`` tensor: one
        vmapped ``vjp``, ``jvp`` or forward-over-reverse ``hvp`` of the seed rows."""
        if type(seeds) is Tensor:
            # run eagerly, not traced: an in-place op of the function on an argument writes
            # into its tangent, a view of the cached seeds (a replay copies an input it writes)
            seeds = seeds.clone()
        diff = tuple(args[i] for i in nums)
        restricted = _one_tensor(_restricted(self.fn, args, nums), self.title)
        if plan.mode == "rows":
            out, vjp_fn = _vjp(restricted, diff, False, self.title)
            _check_output(out, plan, self.title)
            columns = vmap(vjp_fn)(seeds.reshape(plan.k, *out.shape))
            return _joined(columns, plan.k)
        blocks = _split(seeds, diff, plan.k)
        if plan.mode == "symmetric":
            gradient = grad(restricted, argnums=tuple(range(len(diff))))

            def push(*tangents):
                out = _jvp(gradient, diff, tangents, False, False, self.title)[1]
                if len(out) == 1:
                    return out[0].reshape(-1)
                return cat([t.reshape(-1) for t in out])

            return vmap(push)(*blocks)

        def push(*tangents):
            out, tangent = _jvp(restricted, diff, tangents, False, False, self.title)
            _check_output(out, plan, self.title)
            return tangent.reshape(-1)

        return vmap(push)(*blocks)

    def _result(self, plan: _Plan, data, diff: list, xp):
        pattern = plan.pattern
        if xp is np:
            matrix = sp.csr_matrix(
                (np.asarray(data), pattern.indices.copy(), pattern.indptr.copy()),
                shape=pattern.shape,
            )
        else:  # CuPy: the same structure on the device
            import cupyx.scipy.sparse as cusp  # (optional dependency: CuPy inputs only)

            indices, indptr = plan.csr_structure(xp)
            matrix = cusp.csr_matrix((data, indices.copy(), indptr.copy()), shape=pattern.shape)
        if isinstance(self.argnums, int):
            return matrix
        bounds = list(itertools.pairwise(np.cumsum([0] + [int(x.numel()) for x in diff])))
        if self.hessian:
            return tuple(tuple(matrix[a:b, c:d] for c, d in bounds) for a, b in bounds)
        return tuple(matrix[:, a:b] for a, b in bounds)


def _canonical(pattern):
    """A boolean CSR copy of ``pattern``: no stored zeros, sorted indices (what the reads of
    the colourings assume)."""
    out = sp.csr_matrix(pattern, dtype=bool, copy=True)
    out.eliminate_zeros()
    out.sum_duplicates()  # (sorts the indices too)
    return out


def _user_pattern(sparsity, title: str):
    if isinstance(sparsity, str):
        if sparsity != "auto":
            raise ValueError(
                f"dualad.func.{title}: sparsity must be 'auto' or a scipy.sparse pattern, got "
                f"{sparsity!r}"
            )
        return None
    if sp.issparse(sparsity):
        return _canonical(sparsity)
    if isinstance(sparsity, np.ndarray) and sparsity.ndim == 2:
        return _canonical(sp.csr_matrix(sparsity))
    raise TypeError(
        f"dualad.func.{title}: sparsity must be 'auto' or a scipy.sparse (or 2-d NumPy) "
        f"boolean matrix, got {type(sparsity).__name__}"
    )


def _one_tensor(fn, title: str):
    """``fn``, raising TypeError when it returns anything but one tensor (the message the
    detection gives too: ``tracing.sparsity.detect``)."""

    def checked(*args):
        out = fn(*args)
        if not isinstance(out, Tensor):
            hint = " (a NumPy array is a constant: no derivative)" if _is_array(out) else ""
            raise TypeError(
                f"dualad.func.{title}: the function must return one tensor, got "
                f"{type(out).__name__}{hint}"
            )
        return out

    return checked


def _is_array(value) -> bool:
    return isinstance(value, np.ndarray) or type(value).__module__.startswith("cupy")


def _check_output(out, plan: _Plan, title: str) -> None:
    m = int(out.numel())
    if m != plan.pattern.shape[0]:
        raise ValueError(
            f"dualad.func.{title}: sparsity has {plan.pattern.shape[0]} rows but the "
            f"function's output has {m} elements (shape {tuple(out.shape)})"
        )


def _detached(value):
    return value.detach() if type(value) is Tensor and value.requires_grad else value


def _jittable(value) -> bool:
    """Whether ``dualad.jit`` takes ``value`` as an argument (its signature's leaves), without
    falling back to an eager call: a tensor (detached), an array, a number, a string or None,
    or tuples, lists and dicts of them."""
    kind = type(value)
    if kind in (bool, int, float, complex, str, type(None)):
        return True
    if kind is Tensor:
        return True
    if kind in (tuple, list):
        return all(_jittable(v) for v in value)
    if kind is dict:
        return all(_jittable(v) for v in value.values())
    if isinstance(value, (np.ndarray, np.generic)) or kind.__module__.startswith("cupy"):
        return value.dtype.kind in "biufc"  # (an array of numbers: NumPy's or CuPy's)
    return False


def _split(seeds, diff: list, k: int) -> list:
    """The seed rows split into one ``(k, *shape)`` block per differentiated argument."""
    blocks = []
    offset = 0
    for x in diff:
        n = int(x.numel())
        blocks.append(seeds[:, offset : offset + n].reshape(k, *x.shape))
        offset += n
    return blocks


def _joined(columns, k: int):
    if isinstance(columns, Tensor):
        return columns.reshape(k, -1)
    return cat([c.reshape(k, -1) for c in columns], 1)


def sparse_jacobian(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, sparsity: Any = "auto"
) -> Callable[..., Any]:
    """The Jacobian of ``fn`` as a ``scipy.sparse`` CSR matrix (``cupyx.scipy.sparse`` for CuPy
    inputs), from a few ``jvp``s or ``vjp``s instead of one per input or output.

    Returns a function like ``jacfwd``'s. Rows are the flat output elements, columns the flat
    inputs (C order); with a tuple ``argnums``, a tuple of one matrix per argument, each with
    that argument's columns. ``fn`` returns one tensor; the arguments at ``argnums`` are real
    floating tensors or arrays.

    ``sparsity="auto"``: the pattern is detected at the first call (per input shapes) from one
    traced evaluation (``docs/sparse_jacobians.md``): conservative, it may hold entries that
    are zero but never misses a nonzero; ops without a rule make their outputs depend on all
    their arguments' inputs. A pattern detected through values read into Python (``if
    x.sum() > 0``) is detected again when a later call's values take another branch.
    ``sparsity=`` a ``scipy.sparse`` (or 2-d NumPy) boolean matrix of shape ``(outputs,
    inputs)``: your pattern, used as it is (an entry outside it is silently lost: it must hold
    every nonzero). The transformed function's ``.pattern`` is the pattern of its latest call.

    The colouring (columns for forward mode, rows for reverse mode: whichever needs fewer
    colours) is computed once per pattern; each call is one vmapped batch of products.

    >>> import dualad
    >>> from dualad.func import sparse_jacobian
    >>> f = lambda x: x[1:] * x[:-1]
    >>> jac = sparse_jacobian(f)
    >>> J = jac(dualad.tensor([1.0, 2.0, 3.0, 4.0]))
    >>> J.toarray()
    array([[2., 1., 0., 0.],
           [0., 3., 2., 0.],
           [0., 0., 4., 3.]])
    >>> jac.pattern.nnz, type(J).__name__
    (6, 'csr_matrix')
    """
    _check_callable(fn, "sparse_jacobian")
    return SparseDerivative(fn, argnums, sparsity, hessian=False)


def sparse_hessian(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, sparsity: Any = "auto"
) -> Callable[..., Any]:
    """The Hessian of a scalar ``fn`` as a ``scipy.sparse`` CSR matrix, from a few
    Hessian-vector products (forward over reverse) of a star colouring.

    Like ``sparse_jacobian``: detection at the first call (the nonlinear interactions of the
    traced evaluation, ``docs/sparse_jacobians.md``), ``sparsity=`` an ``(n, n)`` pattern
    instead (made symmetric), ``.pattern`` after a call. A tuple ``argnums`` gives a tuple of
    tuples of blocks, as ``hessian`` does.

    >>> import dualad
    >>> from dualad.func import sparse_hessian
    >>> energy = lambda x: ((x[1:] - x[:-1]) ** 2).sum() + (x**4).sum()
    >>> H = sparse_hessian(energy)(dualad.tensor([1.0, 0.0, -1.0]))
    >>> H.toarray()
    array([[14., -2.,  0.],
           [-2.,  4., -2.],
           [ 0., -2., 14.]])
    """
    _check_callable(fn, "sparse_hessian")
    return SparseDerivative(fn, argnums, sparsity, hessian=True)


__all__ = ["SparseDerivative", "install_detector", "sparse_hessian", "sparse_jacobian"]
